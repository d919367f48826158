"""``host_blas.matmul`` over several cores runs a product in blocks (one
one-thread GEMM per core) or as NumPy's threaded GEMM, whichever its first
calls found faster for that shape: the trial alternates the two while
NumPy's BLAS has every core, keeps NumPy's only when clearly faster, and
either way gives the product's values."""
import numpy as np
import pytest

from openjax._src import blas_threads
from openjax._src.runtime import host_blas

pytestmark = pytest.mark.skipif(not host_blas.available(), reason="needs scipy-openblas32")

SHAPE = (1, 256, 400, 256)   # batch, M, K, N: 5.2e7 flops, two blocks of 2e7


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
  monkeypatch.setattr(host_blas, "_ways", {})
  monkeypatch.setattr(host_blas, "host_cores", lambda: 2)
  monkeypatch.setattr(blas_threads, "_compiling", False)


def _operands(seed=0):
  nb, m, k, n = SHAPE
  rng = np.random.default_rng(seed)
  return (rng.standard_normal((nb, m, k)).astype(np.float32),
          rng.standard_normal((nb, k, n)).astype(np.float32))


def _spy_numpy(monkeypatch):
  calls = []
  matmul = np.matmul

  def spy(*args, **kwargs):
    calls.append(1)
    return matmul(*args, **kwargs)
  monkeypatch.setattr(host_blas.np, "matmul", spy)
  return calls


def _clock(monkeypatch, blocks_s, numpy_s, numpy_calls):
  """A trial clock: a call through NumPy takes ``numpy_s``, else ``blocks_s``
  (read twice a call: at its start and at its end)."""
  state = {"now": 0.0, "numpy_calls": None}

  def clock():
    if state["numpy_calls"] is None:   # a call starts
      state["numpy_calls"] = len(numpy_calls)
      return state["now"]
    took = numpy_s if len(numpy_calls) > state["numpy_calls"] else blocks_s
    state["numpy_calls"] = None
    state["now"] += took
    return state["now"]
  monkeypatch.setattr(host_blas, "_clock", clock)


def _run(a, b):
  out = np.empty((a.shape[0], a.shape[1], b.shape[2]), a.dtype)
  host_blas.matmul(a, b, out)
  np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
  return out


@pytest.mark.parametrize("numpy_s,kept", [(0.001, "numpy"), (0.02, "blocks"), (0.0099, "blocks")])
def test_the_faster_way_is_kept(monkeypatch, numpy_s, kept):
  calls = _spy_numpy(monkeypatch)
  _clock(monkeypatch, 0.01, numpy_s, calls)
  a, b = _operands()
  for _ in range(2 * host_blas.TRIAL_CALLS):
    _run(a, b)
  assert len(calls) == host_blas.TRIAL_CALLS      # alternated
  key = (np.dtype(np.float32), *SHAPE)
  assert host_blas._ways[key] == kept             # 0.0099 is within the margin
  for _ in range(3):
    _run(a, b)
  assert len(calls) == host_blas.TRIAL_CALLS + (3 if kept == "numpy" else 0)


def test_no_trial_while_a_compile_holds_a_core(monkeypatch):
  calls = _spy_numpy(monkeypatch)
  monkeypatch.setattr(blas_threads, "_compiling", True)   # leave_a_core ran
  a, b = _operands(1)
  for _ in range(4):
    _run(a, b)
  assert not calls
  times = host_blas._ways[(np.dtype(np.float32), *SHAPE)]
  assert times == ([], [])


def test_numpy_kept_falls_back_to_blocks_while_a_compile_runs(monkeypatch):
  calls = _spy_numpy(monkeypatch)
  key = (np.dtype(np.float32), *SHAPE)
  host_blas._ways[key] = "numpy"
  a, b = _operands(2)
  _run(a, b)
  assert len(calls) == 1
  monkeypatch.setattr(blas_threads, "_compiling", True)
  _run(a, b)
  assert len(calls) == 1


def test_shapes_are_tried_apart_and_one_block_skips_the_trial(monkeypatch):
  calls = _spy_numpy(monkeypatch)
  a, b = _operands(3)
  _run(a, b)
  _run(a[:, :200], b)
  assert len(host_blas._ways) == 2
  monkeypatch.setattr(host_blas, "on_device_thread", lambda: True)   # one block: this thread
  _run(a[:, :220], b)
  assert len(host_blas._ways) == 2 and len(calls) == 0


def test_numpy_threads_follows_leave_a_core(monkeypatch):
  monkeypatch.undo()   # the real count
  n = blas_threads.numpy_threads()
  if blas_threads._numpy_openblas() is None:
    assert n is None
    return
  assert n >= 1
  before = blas_threads.leave_a_core(n) if n >= 2 else None
  try:
    assert blas_threads.numpy_threads() == (n - 1 if n >= 2 else n)
  finally:
    blas_threads.restore(before)
  assert blas_threads.numpy_threads() == n


@pytest.mark.skipif(blas_threads._numpy_openblas() is None, reason="NumPy without OpenBLAS")
def test_threaded_gemm_uses_the_cores_whatever_numpy_is_set_to(monkeypatch):
  # OPENBLAS_NUM_THREADS=1 (or threadpoolctl) limits NumPy's own products;
  # a compiled program's host kernel uses its cores and sets the count back
  get, put = blas_threads._numpy_openblas()
  before = get()
  seen = []
  matmul = np.matmul

  def spy(*args, **kwargs):
    seen.append(get())
    return matmul(*args, **kwargs)
  monkeypatch.setattr(np, "matmul", spy)
  a, b = _operands(4)
  out = np.empty((a.shape[0], a.shape[1], b.shape[2]), np.float32)
  put(1)
  try:
    assert blas_threads.threaded_gemm(a, b, out, 2)
    assert seen == [2] and get() == 1
    blas_threads.leave_a_core(2)             # a compile starts: nothing runs
    assert not blas_threads.can_thread_gemm()
    assert not blas_threads.threaded_gemm(a, b, out, 2) and seen == [2]
    blas_threads.restore(None)
    assert blas_threads.can_thread_gemm()
  finally:
    put(before)
  np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
