"""Large host results reuse the memory of earlier results nothing holds
(``core/memory.py``: ``aligned_empty``'s kept buffers): never the memory of
a value still alive."""
import gc
import threading

import numpy as np

import openjax as jax
import openjax.numpy as jnp
from openjax._src.core import memory

N = memory.RECYCLE_MIN_BYTES // 4 + 1000   # float32 elements of a kept result


def _data(a) -> int:
  return np.asarray(a).ctypes.data


def test_a_freed_result_is_reused_and_a_held_one_never():
  memory.release_recycled()
  a = memory.aligned_empty((N,), np.float32)
  where = a.ctypes.data
  del a
  b = memory.aligned_empty((N,), np.float32)
  assert b.ctypes.data == where          # the freed buffer, again
  view = b[10:20]
  del b
  c = memory.aligned_empty((N,), np.float32)
  assert c.ctypes.data != where          # a view of it is alive
  del view, c
  assert memory.aligned_empty((N,), np.float32).ctypes.data == where
  # other sizes, and small results, are never taken from it
  assert memory.aligned_empty((N + 16,), np.float32).ctypes.data != where
  small = memory.aligned_empty((1000,), np.float32)
  assert all(r.nbytes > 1 << 20 for r in memory._recycle) and small.size == 1000


def test_arrays_keep_their_values_while_later_results_are_made():
  memory.release_recycled()
  x = jnp.asarray(np.arange(N, dtype=np.float32))
  kept = [x + float(i) for i in range(12)]     # each a large ufunc result
  for _ in range(3):
    for i in range(12):
      y = jnp.sin(x) * 2.0 + float(i)        # temporaries come and go
      del y
  gc.collect()
  for i, k in enumerate(kept):
    np.testing.assert_array_equal(np.asarray(k[::99991]),
                                  np.arange(N, dtype=np.float32)[::99991] + i)
  addresses = {_data(k) for k in kept}
  assert len(addresses) == len(kept)


def test_results_read_by_compiled_calls_and_threads_stay_intact():
  memory.release_recycled()
  x = jnp.asarray(np.linspace(0, 1, N, dtype=np.float32))
  f = jax.jit(lambda a: a * 3.0)
  outs, errors = [], []

  def work(seed):
    try:
      for i in range(6):
        a = x + float(seed * 10 + i)          # an eager result fed to a compiled call
        outs.append((seed * 10 + i, f(a)))
        del a
    except Exception as e:  # noqa: BLE001 - reported below
      errors.append(e)
  threads = [threading.Thread(target=work, args=(s,)) for s in range(3)]
  for t in threads:
    t.start()
  for t in threads:
    t.join()
  assert not errors
  base = np.linspace(0, 1, N, dtype=np.float32)
  for k, out in outs:
    np.testing.assert_allclose(np.asarray(out)[::77777], (base[::77777] + k) * 3.0,
                               rtol=1e-6)


def test_the_kept_buffers_are_bounded_and_released():
  memory.release_recycled()
  held = [memory.aligned_empty((N + 64 * i,), np.float32) for i in range(12)]
  assert len(memory._recycle) <= memory.RECYCLE_MAX_BUFFERS
  assert sum(r.nbytes for r in memory._recycle) <= memory.RECYCLE_MAX_BYTES
  del held
  jax.clear_caches()
  assert not memory._recycle
