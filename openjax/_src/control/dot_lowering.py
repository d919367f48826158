"""``dot_general``'s lowering: large products on the CPU call the host's BLAS.

IREE's CPU matrix kernels reach ~85-90% of the GEMM speed OpenBLAS (NumPy's
BLAS) reaches on the same cores (f32 2048^2 on 2 AVX-512 cores: 64 ms vs
56 ms; XLA, which calls its own library GEMM, 61 ms). A compiled CPU program
therefore computes a product large enough to repay a host call (~0.1 ms on
the ``local-task`` device) as a host kernel (``runtime/host_calls``) that
runs ``np.matmul`` on views of the program's buffers, writing into the result
buffer: no copies. Smaller products, other element types (integers, 16-bit
floats, mixed types) and modules lowered for reading (``Lowered.as_text``,
``ModuleBuilder.host_kernels`` off) keep ``stablehlo.dot_general``.

Measured (jit of one product, median ms, IREE kernel -> BLAS kernel):
1024^2 8.8 -> 7.3, 512^2 2.1 -> 1.1, 256^2 0.42 -> 0.34, 128^2 0.063 ->
0.089 (the host call costs more than the product there).
"""
from __future__ import annotations

import ctypes
import functools
import glob
import math
import os

import numpy as np

from openjax._src.primitives.dot_conv.dot import dot_general_p, dot_general_stablehlo
from openjax._src.runtime import host_calls
from openjax._src.runtime.executable import on_device_thread

#: Products of at least this many flops (2 * batch * M * N * K) use BLAS.
BLAS_MIN_FLOPS = 1.6e7
#: ... and at least this many per matrix (NumPy loops over batches in
#: Python-free C, but calls GEMM once per matrix: tiny matrices stay in IREE).
BLAS_MIN_FLOPS_PER_MATRIX = 2e6
#: ... and no dimension below this (a K=1 outer product or a 2-row product is
#: memory-bound; IREE fuses it with its neighbours instead).
BLAS_MIN_DIM = 8

#: Products below this many flops run BLAS on one thread: OpenBLAS's threads
#: meet at barriers, and on a machine whose other cores are busy each meeting
#: waits for a time slice (f32 256^2 with a busy core: 24 ms on two threads,
#: 0.28 ms on one; one thread is as fast as IREE's two workers up to ~256^2).
BLAS_ONE_THREAD_MAX_FLOPS = 4e7

_BLAS_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                               np.complex128))


class _BlasProduct:
  """How a ``dot_general`` maps onto ``np.matmul`` of (B, M, K) x (B, K, N):
  the operands' axis permutations and the merged sizes."""
  __slots__ = ("lhs_perm", "rhs_perm", "b", "m", "k", "n")

  def __init__(self, lhs_shape, rhs_shape, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    lf = [d for d in range(len(lhs_shape)) if d not in lc and d not in lb]
    rf = [d for d in range(len(rhs_shape)) if d not in rc and d not in rb]
    self.lhs_perm = (*lb, *lf, *lc)
    self.rhs_perm = (*rb, *rc, *rf)
    self.b = math.prod(lhs_shape[d] for d in lb)
    self.m = math.prod(lhs_shape[d] for d in lf)
    self.k = math.prod(lhs_shape[d] for d in lc)
    self.n = math.prod(rhs_shape[d] for d in rf)

  @property
  def flops(self) -> int:
    return 2 * self.b * self.m * self.n * self.k

  def worth_blas(self) -> bool:
    per_matrix = 2 * self.m * self.n * self.k
    return (self.flops >= BLAS_MIN_FLOPS and per_matrix >= BLAS_MIN_FLOPS_PER_MATRIX
            and min(self.m, self.n, self.k) >= BLAS_MIN_DIM)

  def _operand(self, x: np.ndarray, perm, rows: int, cols: int) -> np.ndarray:
    x = x.transpose(perm).reshape((self.b, rows, cols) if self.b > 1 else (rows, cols))
    # GEMM reads a matrix whose rows or columns are contiguous; any other
    # view would take NumPy's loop without BLAS (~50x slower).
    item = x.dtype.itemsize
    if x.strides[-1] != item and x.strides[-2] != item:
      x = np.ascontiguousarray(x)
    return x

  def __call__(self, lhs: np.ndarray, rhs: np.ndarray, out: np.ndarray) -> None:
    a = self._operand(lhs, self.lhs_perm, self.m, self.k)
    b = self._operand(rhs, self.rhs_perm, self.k, self.n)
    out = out.reshape((self.b, self.m, self.n) if self.b > 1 else (self.m, self.n))
    set_threads = _set_local_threads()
    if set_threads is None or (self.flops >= BLAS_ONE_THREAD_MAX_FLOPS
                               and not on_device_thread()):
      np.matmul(a, b, out=out)
      return
    # One device of an SPMD step already has a core of its own.
    previous = set_threads(1)
    try:
      np.matmul(a, b, out=out)
    finally:
      set_threads(previous)


@functools.cache
def _set_local_threads():
  """OpenBLAS's ``openblas_set_num_threads_local`` (the BLAS threads of the
  calling thread only; OpenBLAS >= 0.3.27) from the library NumPy loaded,
  or None (another BLAS: its own thread policy is kept)."""
  libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
  for path in sorted(glob.glob(os.path.join(libs, "*openblas*"))):
    try:
      fn = ctypes.CDLL(path).openblas_set_num_threads_local
    except (OSError, AttributeError):
      continue
    fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
    return fn
  return None


def _uses_blas(ctx, product: _BlasProduct) -> bool:
  lhs, rhs = ctx.avals_in
  out, = ctx.avals_out
  return (ctx.module.host_kernels and lhs.dtype == rhs.dtype == out.dtype
          and out.dtype in _BLAS_DTYPES and product.worth_blas())


@dot_general_p.def_lower
def _dot_general_lower(ctx, lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                       out_sharding=None):
  if ctx.module.host_kernels:
    lhs_aval, rhs_aval = ctx.avals_in
    product = _BlasProduct(lhs_aval.shape, rhs_aval.shape, dimension_numbers)
    if _uses_blas(ctx, product):
      (lc, rc), (lb, rb) = dimension_numbers
      kernel = host_calls.register_kernel(
          product, ctx.avals_in, ctx.avals_out,
          key=("dot_general", tuple(lc), tuple(rc), tuple(lb), tuple(rb)))
      return ctx.call_import(kernel.symbol, [lhs, rhs], ctx.avals_out)
  return dot_general_stablehlo(ctx, lhs, rhs, dimension_numbers=dimension_numbers,
                               precision=precision,
                               preferred_element_type=preferred_element_type,
                               out_sharding=out_sharding)


__all__ = ["BLAS_MIN_FLOPS", "BLAS_MIN_FLOPS_PER_MATRIX", "BLAS_MIN_DIM"]
