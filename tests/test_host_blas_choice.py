"""``host_blas.matmul`` over several cores: on hosts without AVX-512 a
product under ``THREADED_GEMM_MAX_FLOPS`` runs as NumPy's threaded GEMM on
the program's cores (whatever NumPy's own thread count); larger ones,
other hosts and every product while a background compile holds a core run
in blocks (one one-thread GEMM per core); one block (a device's own thread)
is one GEMM on that thread. Every way gives the product's values."""
import numpy as np
import pytest

from openjax._src import blas_threads
from openjax._src.runtime import host_blas

pytestmark = pytest.mark.skipif(not host_blas.available(), reason="needs scipy-openblas32")

SHAPE = (1, 256, 400, 256)   # batch, M, K, N: 5.2e7 flops, two blocks of 2e7
numpy_openblas = pytest.mark.skipif(blas_threads._numpy_openblas() is None,
                                    reason="NumPy without OpenBLAS")


@pytest.fixture(autouse=True)
def _two_cores(monkeypatch):
  monkeypatch.setattr(host_blas, "host_cores", lambda: 2)
  monkeypatch.setattr(blas_threads, "_compiling", False)


def _operands(seed=0):
  nb, m, k, n = SHAPE
  rng = np.random.default_rng(seed)
  return (rng.standard_normal((nb, m, k)).astype(np.float32),
          rng.standard_normal((nb, k, n)).astype(np.float32))


def _spies(monkeypatch):
  """(threads NumPy's GEMM ran on, per call; blocks run) as the calls go."""
  get = blas_threads._numpy_openblas()[0] if blas_threads._numpy_openblas() else (lambda: 0)
  numpy_calls, blocks = [], []
  matmul, gemm_block = np.matmul, host_blas._gemm_block

  def numpy_spy(*args, **kwargs):
    numpy_calls.append(get())
    return matmul(*args, **kwargs)

  def block_spy(blas, a, b, out):
    blocks.append(out.shape)
    gemm_block(blas, a, b, out)
  monkeypatch.setattr(np, "matmul", numpy_spy)
  monkeypatch.setattr(host_blas, "_gemm_block", block_spy)
  return numpy_calls, blocks


def _run(a, b):
  out = np.full((a.shape[0], a.shape[1], b.shape[2]), np.nan, a.dtype)
  host_blas.matmul(a, b, out)
  np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@numpy_openblas
def test_narrow_vector_hosts_use_numpy_threaded_gemm(monkeypatch):
  monkeypatch.setattr(host_blas, "native_vector_bytes", lambda: 32)
  numpy_calls, blocks = _spies(monkeypatch)
  get, put = blas_threads._numpy_openblas()
  before = get()
  put(1)                      # as OPENBLAS_NUM_THREADS=1 leaves it
  try:
    _run(*_operands())
    assert numpy_calls == [2] and not blocks   # on the program's two cores
    assert get() == 1                          # NumPy's own count set back
  finally:
    put(before)


def test_avx512_hosts_use_blocks(monkeypatch):
  monkeypatch.setattr(host_blas, "native_vector_bytes", lambda: 64)
  numpy_calls, blocks = _spies(monkeypatch)
  _run(*_operands(1))
  assert not numpy_calls and len(blocks) == 2


def test_large_products_use_blocks(monkeypatch):
  monkeypatch.setattr(host_blas, "native_vector_bytes", lambda: 32)
  monkeypatch.setattr(host_blas, "THREADED_GEMM_MAX_FLOPS", 5e7)   # SHAPE: 5.2e7 flops
  numpy_calls, blocks = _spies(monkeypatch)
  _run(*_operands(5))
  assert not numpy_calls and len(blocks) == 2


def test_blocks_while_a_compile_holds_a_core(monkeypatch):
  monkeypatch.setattr(host_blas, "native_vector_bytes", lambda: 32)
  numpy_calls, blocks = _spies(monkeypatch)
  monkeypatch.setattr(blas_threads, "_compiling", True)   # leave_a_core ran
  _run(*_operands(2))
  assert not numpy_calls and len(blocks) == 2


def test_one_block_on_a_device_thread(monkeypatch):
  monkeypatch.setattr(host_blas, "native_vector_bytes", lambda: 32)
  numpy_calls, blocks = _spies(monkeypatch)
  monkeypatch.setattr(host_blas, "on_device_thread", lambda: True)
  a, b = _operands(3)
  _run(a, b)
  assert not numpy_calls and blocks == [(1, 256, 256)]


@numpy_openblas
def test_threaded_gemm_is_refused_while_compiling():
  a, b = _operands(4)
  out = np.empty((1, 256, 256), np.float32)
  blas_threads.leave_a_core(2)             # a compile starts
  try:
    assert blas_threads._compiling
    assert not blas_threads.threaded_gemm(a, b, out, 2)
  finally:
    blas_threads.restore(None)
  assert not blas_threads._compiling
  assert blas_threads.threaded_gemm(a, b, out, 2)
  np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


@numpy_openblas
def test_leave_a_core_and_restore_set_numpy_threads(monkeypatch):
  get = blas_threads._numpy_openblas()[0]
  n = get()
  assert n >= 1
  before = blas_threads.leave_a_core(n) if n >= 2 else None
  try:
    assert get() == (n - 1 if n >= 2 else n)
  finally:
    blas_threads.restore(before)
  assert get() == n
