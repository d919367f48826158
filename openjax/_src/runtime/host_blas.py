"""Matrix products on the host's BLAS, for compiled programs' host kernels
(``control/dot_lowering.py``).

The BLAS is OpenBLAS from the ``scipy-openblas32`` wheel, a library of its
own (its symbols are prefixed ``scipy_``; ``openjax/_src/openblas.py`` loads
it), kept on one thread: openjax cuts a product into blocks, one per core,
computed by the calling thread and a small pool. NumPy's OpenBLAS is not
used because its threading cannot be set per call without changing NumPy's:
``openblas_set_num_threads_local(1)`` in any thread left every later
``np.matmul`` of the process on one thread (2048^2: 57 -> 107 ms, OpenBLAS
0.3.31), and two threads calling it at once slowed both (512^2: 1.0 -> 18-40
ms). Threads of one OpenBLAS meet at barriers inside every GEMM, and where
other work holds a core each meeting waits for a time slice (256^2 with one
busy core: 24 ms instead of 0.28 ms; 32 products of 128^2: 490 ms instead of
1.1 ms); blocks meet once, at the end. Measured on 2 cores (median ms,
NumPy's threaded GEMM -> blocks here): 512^2 1.10 -> 1.17, 1024^2 10.6 ->
10.4, 2048^2 75.7 -> 60.9.
"""
from __future__ import annotations

import concurrent.futures
import ctypes
import threading

import numpy as np

from openjax._src import blas_threads, openblas
from openjax._src.runtime.compiler import native_vector_bytes
from openjax._src.runtime.executable import on_device_thread
from openjax._src.runtime.iree_device import host_cores

#: A block of a product split over cores has at least this many flops
#: (~0.15 ms on one core: the hand-off to a pool thread costs ~20-50 us).
FLOPS_PER_BLOCK = 2e7

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_F32, _F64, _C64, _C128 = (np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                                  np.complex128))
DTYPES = frozenset((_F32, _F64, _C64, _C128))


class _Blas:
  """The loaded library's GEMMs, by element type."""

  def __init__(self, lib: ctypes.CDLL):
    ints = [ctypes.c_int] * 6
    ptr = ctypes.c_void_p
    self.gemm = {}
    for dtype, name, scalar in ((_F32, "sgemm", ctypes.c_float), (_F64, "dgemm", ctypes.c_double),
                                (_C64, "cgemm", ptr), (_C128, "zgemm", ptr)):
      fn = getattr(lib, f"scipy_cblas_{name}")
      fn.argtypes = ints + [scalar, ptr, ctypes.c_int, ptr, ctypes.c_int, scalar, ptr,
                            ctypes.c_int]
      fn.restype = None
      self.gemm[dtype] = fn
    # complex alpha = 1 and beta = 0 are passed by address
    self._one = {d: np.ones((), d) for d in (_C64, _C128)}
    self._zero = {d: np.zeros((), d) for d in (_C64, _C128)}

  def scalars(self, dtype):
    if dtype.kind == "c":
      return self._one[dtype].ctypes.data, self._zero[dtype].ctypes.data
    return 1.0, 0.0


_blas: _Blas | None = None
_loaded = False
_load_lock = threading.Lock()


def _library() -> _Blas | None:
  global _blas, _loaded
  if not _loaded:
    with _load_lock:
      if not _loaded:
        lib = openblas.library()
        try:
          _blas = None if lib is None else _Blas(lib)
        except AttributeError:
          _blas = None
        _loaded = True
  return _blas


def available() -> bool:
  """Whether the host BLAS loads (the ``scipy-openblas32`` wheel)."""
  return _library() is not None


def _layout(x: np.ndarray):
  """(CBLAS transpose flag, leading dimension) of a 2-D view, or None when
  neither its rows nor its columns are contiguous."""
  item = x.itemsize
  s0, s1 = x.strides
  rows, cols = x.shape
  if s1 == item and s0 % item == 0 and s0 >= max(1, cols) * item:
    return _NO_TRANS, s0 // item
  if s0 == item and s1 % item == 0 and s1 >= max(1, rows) * item:
    return _TRANS, s1 // item
  return None


def _gemm_block(blas: _Blas, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
  """``out[i] = a[i] @ b[i]`` for each matrix of a batch, on this thread."""
  fn = blas.gemm[out.dtype]
  alpha, beta = blas.scalars(out.dtype)
  _, m, k = a.shape
  n = b.shape[2]
  for i in range(a.shape[0]):
    ai, bi, oi = a[i], b[i], out[i]
    la, lb = _layout(ai), _layout(bi)
    if la is None:
      ai = np.ascontiguousarray(ai)
      la = (_NO_TRANS, k)
    if lb is None:
      bi = np.ascontiguousarray(bi)
      lb = (_NO_TRANS, n)
    lo = _layout(oi)
    target = oi if lo is not None and lo[0] == _NO_TRANS else np.empty((m, n), out.dtype)
    fn(_ROW_MAJOR, la[0], lb[0], m, n, k, alpha, ai.ctypes.data, la[1], bi.ctypes.data, lb[1],
       beta, target.ctypes.data, target.strides[0] // target.itemsize)
    if target is not oi:
      oi[...] = target


_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _block_pool() -> concurrent.futures.ThreadPoolExecutor:
  """The threads computing a product's other blocks (cores - 1 of them)."""
  global _pool
  if _pool is None:
    with _pool_lock:
      if _pool is None:
        _pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=max(1, host_cores() - 1), thread_name_prefix="openjax-blas")
  return _pool


def gemm(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
  """``out = a @ b`` of 2-D arrays on this thread (``out`` writable; a copy
  is made of an operand with neither contiguous rows nor columns, and the
  result goes through a temporary when ``out``'s rows are not contiguous);
  call only when ``available()``."""
  _gemm_block(_library(), a[None], b[None], out[None])


def block_count(work: float, per_block: float = FLOPS_PER_BLOCK) -> int:
  """How many blocks of ``work`` in all (flops, or another measure with its
  ``per_block``) to run at once: one per core, each of at least
  ``per_block``, one on a device's own thread."""
  if on_device_thread():
    return 1
  return max(1, min(host_cores(), int(work // per_block)))


def run_blocks(work, count: int) -> None:
  """``work(i)`` for ``i`` in ``range(count)``: block 0 on this thread, the
  others on the pool; returns when all are done (re-raising an error)."""
  if count <= 1:
    work(0)
    return
  pool = _block_pool()
  futures = [pool.submit(work, i) for i in range(1, count)]
  try:
    work(0)
  finally:
    for f in futures:
      f.result()


#: On hosts without AVX-512, products over several cores below this many
#: flops run as NumPy's threaded GEMM (``matmul``).
THREADED_GEMM_MAX_FLOPS = 3e8


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
  """``out = a @ b`` for batches of matrices ``a[B, M, K]``, ``b[B, K, N]``
  and ``out[B, M, N]`` (one dtype of ``DTYPES``; ``out`` C-contiguous), over
  the cores; call only when ``available()``.

  Over several cores a product runs in blocks here (one one-thread GEMM per
  core), or, on hosts without AVX-512 and under ``THREADED_GEMM_MAX_FLOPS``,
  as NumPy's threaded GEMM on as many threads (``blas_threads.
  threaded_gemm``; not while a background compile holds a core). Measured
  on the 2-vCPU AVX2 VM, each way in a process of its own (min / median
  ms, blocks -> NumPy's): the MLP train step's products of 0.7-2e8 flops,
  handed to the block thread in ~0.1-0.5 ms each, where NumPy's threads,
  spinning after each product, take the next at once: step 11.3-11.5 /
  12.2-13.6 -> 8.5 / 8.8-9.0. Larger ones in blocks: NumPy's spinning
  threads slowed the program's next dispatches (scan_rnn/grad 63-77 /
  68-83 -> 80-91 / 98-110, matmul/1024 16.1-17.0 / 16.5-17.5 -> 19.5-21.5 /
  21.6-21.7); alone the two ways took the same time (1024^2 17.4-23.9 vs
  20.6-21.4, 6400x256 @ 256x256 9.0-10.0 vs 9.0-9.2)."""
  blas = _library()
  nb, m, k = a.shape
  n = b.shape[2]
  flops = 2.0 * nb * m * n * k
  blocks = block_count(flops)
  if blocks <= 1:
    _gemm_block(blas, a, b, out)
    return
  if (flops < THREADED_GEMM_MAX_FLOPS and native_vector_bytes() < 64
      and blas_threads.threaded_gemm(a, b, out, blocks)):
    return
  _in_blocks(blas, a, b, out, blocks)


def _in_blocks(blas: _Blas, a: np.ndarray, b: np.ndarray, out: np.ndarray,
               blocks: int) -> None:
  """``matmul`` in ``blocks`` blocks, one per core."""
  nb, m = a.shape[:2]
  n = b.shape[2]
  # Cut along the largest of batch, rows and columns (each block whole GEMMs);
  # rows over columns of the same size, as each block then writes one
  # contiguous part of the output (2 blocks, ms: 1024^3 6.7 vs 7.0, 768^3
  # 2.92 vs 3.01, 512^3 1.02 vs 1.05).
  axis = max((nb, 0, 0), (m, 2, 1), (n, 1, 2))[2]
  size = out.shape[axis]
  blocks = min(blocks, size)
  bounds = [size * i // blocks for i in range(blocks + 1)]
  parts = []
  for lo, hi in zip(bounds[:-1], bounds[1:]):
    if axis == 0:
      parts.append((a[lo:hi], b[lo:hi], out[lo:hi]))
    elif axis == 1:
      parts.append((a[:, lo:hi], b, out[:, lo:hi]))
    else:
      parts.append((a, b[:, :, lo:hi], out[:, :, lo:hi]))
  run_blocks(lambda i: _gemm_block(blas, *parts[i]), len(parts))


__all__ = ["available", "block_count", "gemm", "matmul", "run_blocks", "DTYPES",
           "FLOPS_PER_BLOCK", "THREADED_GEMM_MAX_FLOPS"]
