"""The task device reuses freed buffers of the same size (an IREE caching
allocator bounded by ``OPENJAX_DEVICE_BUFFER_CACHE``) instead of returning
them to ``malloc``: large buffers would otherwise come from fresh ``mmap``
pages each call. What it keeps, what ``jax.clear_caches()`` returns, the bound
from the environment, and values of host kernels whose outputs are reused."""
import os
import subprocess
import sys

import numpy as np
import pytest

import openjax as jax
from openjax import lax
from openjax._src.control import conv_host_lowering
from openjax._src.runtime import host_blas, iree_device
from openjax._src.runtime.host_calls import _DEVICE_MEMORY, _USAGE

BIG = 40 << 20


def _held_bytes(allocator):
  """Bytes the underlying heap allocator has handed out and not had back
  (live buffers and those the cache keeps)."""
  stats = allocator.statistics
  return stats["device_bytes_allocated"] - stats["device_bytes_freed"]


def test_freed_buffers_are_kept_for_reuse_until_clear_caches():
  assert iree_device.buffer_cache_bytes() >= BIG   # the default bound keeps such a buffer
  allocator = iree_device._task_hal()[0].allocator
  jax.clear_caches()
  before = _held_bytes(allocator)
  buf = allocator.allocate_buffer(_DEVICE_MEMORY, _USAGE, BIG)
  assert _held_bytes(allocator) - before == BIG
  del buf
  assert _held_bytes(allocator) - before == BIG     # kept, not freed
  again = allocator.allocate_buffer(_DEVICE_MEMORY, _USAGE, BIG)
  assert _held_bytes(allocator) - before == BIG     # the kept one, not a second
  del again
  jax.clear_caches()
  assert _held_bytes(allocator) - before == 0       # returned to the system


# Two buffers of BIG bytes freed in turn: the first while the other is still
# out (over a bound of BIG / 2: freed), the second then (kept: a bound
# counts the other buffers out and kept, not the one being freed).
_CHILD = """
from openjax._src.runtime import iree_device
from openjax._src.runtime.host_calls import _DEVICE_MEMORY, _USAGE
from tests.test_device_buffer_cache import BIG, _held_bytes
print(iree_device.buffer_cache_bytes())
allocator = iree_device._task_hal()[0].allocator
a = allocator.allocate_buffer(_DEVICE_MEMORY, _USAGE, BIG)
b = allocator.allocate_buffer(_DEVICE_MEMORY, _USAGE, BIG)
del a
print(_held_bytes(allocator) // BIG)
del b
print(_held_bytes(allocator) // BIG)
"""


def _child(value):
  """``_CHILD`` run with the variable set to ``value`` (None: unset)."""
  env = {k: v for k, v in os.environ.items() if k != "OPENJAX_DEVICE_BUFFER_CACHE"}
  if value is not None:
    env["OPENJAX_DEVICE_BUFFER_CACHE"] = value
  return subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True,
                        timeout=120, cwd=os.path.dirname(os.path.dirname(__file__)))


def test_zero_turns_reuse_off():
  out = _child("0")
  assert out.returncode == 0, out.stderr
  assert out.stdout.split() == ["0", "1", "0"]


def test_the_bound_counts_the_buffers_out_and_kept():
  bound = str(BIG // 2)
  out = _child(bound)
  assert out.returncode == 0, out.stderr
  assert out.stdout.split() == [bound, "1", "1"]


def test_the_default_bound_keeps_both():
  out = _child(None)
  assert out.returncode == 0, out.stderr
  assert out.stdout.split()[1:] == ["2", "2"]


def test_a_bad_value_names_the_variable():
  out = _child("lots")
  assert out.returncode != 0
  assert "OPENJAX_DEVICE_BUFFER_CACHE='lots'" in out.stderr
  assert "number of bytes" in out.stderr


@pytest.mark.skipif(not host_blas.available(), reason="no host BLAS wheel")
def test_host_kernel_outputs_reused_across_calls_keep_their_values(monkeypatch):
  # A host convolution writes into a new device buffer each call; with reuse
  # it is the previous call's freed one. Live results must never be handed
  # out again, and each call's values are its own.
  monkeypatch.setattr(conv_host_lowering, "native_vector_bytes", lambda: 32)
  monkeypatch.setattr(conv_host_lowering, "CONV_MIN_FLOPS", 1e5)
  dn = ("NHWC", "HWIO", "NHWC")
  f = jax.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn))
  rng = np.random.default_rng(0)
  w = rng.standard_normal((3, 3, 16, 32)).astype(np.float32)
  xs = [rng.standard_normal((4, 12, 12, 16)).astype(np.float32) for _ in range(4)]
  want = [np.asarray(lax.conv_general_dilated(x.astype(np.float64), w.astype(np.float64),
                                              (1, 1), "SAME", dimension_numbers=dn))
          for x in xs]
  kept = f(xs[0], w)
  for x, expect in zip(xs[1:], want[1:]):
    out = f(x, w)
    del out                                   # freed: the next call may reuse it
    np.testing.assert_allclose(np.asarray(f(x, w)), expect, rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(np.asarray(kept), want[0], rtol=1e-4, atol=1e-4)
