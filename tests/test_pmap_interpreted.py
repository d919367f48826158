"""Small per-device programs of a compiled-executor pmap run on the
host while tiered execution is on: every device's steps by the program
evaluator in one thread, collectives in step (``run_interpreted``). Values
against NumPy and the compiled run for every collective over 1, 2, 4 and 8
devices; which runs take the host path (small values, few plain steps, no
effects, tiered on) and which stay compiled."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.control import shard_map
from tests.test_pmap import CASES, _cases, cpu_devices


@pytest.fixture
def tiered_iree():
  jax.config.update("openjax_executor", "iree")
  jax.config.update("openjax_tiered_compilation", True)
  try:
    yield
  finally:
    jax.config.update("openjax_executor", "interpreter")
    jax.config.update("openjax_tiered_compilation", False)


def _no_compiled_run(*args, **kwargs):
  raise AssertionError("the compiled lock-step run was used")


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_every_collective_on_the_host_matches_numpy_and_compiled(tiered_iree, monkeypatch, n):
  with cpu_devices(n):
    compiled = {}
    jax.config.update("openjax_tiered_compilation", False)
    for case in CASES:
      f, x, ref = _cases(n)[case]
      compiled[case] = np.asarray(jax.pmap(lambda v: f(v + v) + 1, axis_name="i")(x))
    jax.config.update("openjax_tiered_compilation", True)
    monkeypatch.setattr(shard_map, "run_lockstep", _no_compiled_run)
    for case in CASES:
      f, x, ref = _cases(n)[case]
      out = jax.pmap(lambda v: f(v + v) + 1, axis_name="i")(x)
      assert len(out.addressable_shards) == n
      np.testing.assert_allclose(np.asarray(out), ref(x + x) + 1, rtol=1e-5, atol=1e-5,
                                 err_msg=case)
      np.testing.assert_allclose(np.asarray(out), compiled[case], rtol=1e-6, atol=1e-6,
                                 err_msg=case)


def test_large_values_many_steps_and_tiered_off_stay_compiled(tiered_iree, monkeypatch):
  calls = []
  run = shard_map.run_lockstep

  def counted(*args, **kwargs):
    calls.append(1)
    return run(*args, **kwargs)
  monkeypatch.setattr(shard_map, "run_lockstep", counted)
  with cpu_devices(2):
    big = np.ones((2, 64, 128), np.float32)          # 32 KB a device
    np.testing.assert_allclose(np.asarray(jax.pmap(lambda v: lax.psum(v, "i"), "i")(big)),
                               2 * big)
    assert len(calls) == 1

    def long(v):
      for _ in range(20):                            # 40 steps
        v = jnp.sin(v) + 1
      return lax.psum(v, "i")
    x = np.ones((2, 3), np.float32)
    ref = np.ones(3, np.float32)
    for _ in range(20):
      ref = np.sin(ref) + 1
    np.testing.assert_allclose(np.asarray(jax.pmap(long, "i")(x)), np.stack([2 * ref] * 2),
                               rtol=1e-5)
    assert len(calls) == 2
    small = jax.pmap(lambda v: lax.psum(v, "i"), "i")
    small(x)
    assert len(calls) == 2                           # on the host
    jax.config.update("openjax_tiered_compilation", False)
    np.testing.assert_allclose(np.asarray(small(x)), 2 * x)
    assert len(calls) == 3
