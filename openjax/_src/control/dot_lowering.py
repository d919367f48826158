"""``dot_general``'s lowering: large products on the CPU call the host's BLAS.

IREE's CPU matrix kernels reach ~85-90% of the GEMM speed of OpenBLAS on the
same cores (f32 2048^2 on 2 AVX-512 cores: 64 ms vs 56 ms; XLA, which calls
its own library GEMM, 61 ms). A compiled CPU program therefore computes a
product large enough to repay a host call (~0.1 ms on the ``local-task``
device) as a host kernel (``runtime/host_calls.register_kernel``) that runs
``runtime/host_blas.matmul`` on views of the program's buffers, writing into
the result buffer: no copies. Smaller products, thin or shallow ones (bound
by memory traffic, which IREE fuses with their neighbours), other element
types (integers, 16-bit floats, mixed types) and modules lowered for reading
(``Lowered.as_text``; ``ModuleBuilder.host_kernels`` off) keep
``stablehlo.dot_general``, as does a process without the BLAS wheel.
"""
from __future__ import annotations

import math

import numpy as np

from openjax._src.primitives.dot_conv.dot import dot_general_p, dot_general_stablehlo
from openjax._src.runtime import host_blas, host_calls
from openjax._src.runtime.compiler import native_vector_bytes

#: Products of at least this many flops (2 * batch * M * N * K) use BLAS on
#: hosts with AVX-512 (``NARROW_VECTOR_BLAS_MIN_FLOPS`` on others).
#: Below it IREE's kernels, fused with their neighbours, are as fast (median
#: ms, IREE -> BLAS, 2 cores: 512^2 1.30-1.48 -> 1.30-1.87, 128x784 @ 784x512
#: 0.93-1.0 -> 0.71-0.95; on one core per device, the pmap MLP step at batch
#: 128 took 8.1 ms with IREE's products and 9.2-9.5 ms with BLAS's).
BLAS_MIN_FLOPS = 3e8
#: ... and at least this many per matrix (one GEMM call per matrix of a
#: batch, ~5 us each: 32 products of 128^2 took 2.3 ms vs IREE's 1.2 ms).
BLAS_MIN_FLOPS_PER_MATRIX = 3e7
#: ... and no dimension (rows, columns, contracted) below this: a shallow or
#: thin product is bound by reading or writing memory, which IREE fuses with
#: its neighbours (1000x30 @ 30x10000: IREE 7 ms, BLAS 8-9.6 ms).
BLAS_MIN_DIM = 64
#: On hosts without AVX-512 products use BLAS from this many flops, where
#: OpenBLAS's kernels are faster than IREE's from there. On one thread (a
#: device's program of an SPMD step on a core of its own, or every program
#: with ``OPENJAX_CPU_THREADS=1``; AVX2 znver3, one worker, interleaved A/B):
#: the MLP gradient at batch 128, products of 0.7-1e8 flops, 12.4-12.8 ->
#: 10.6-10.8 ms; the pmap MLP step over 2 devices 21-25 -> 17-19 ms. On the
#: task executor's 2 workers, these products on NumPy's threaded GEMM
#: (``host_blas.matmul``; median ms, IREE -> BLAS, interleaved in one
#: process): 256x512 @ 512x512 4.4 -> 1.9, 512^3 7.4 -> 3.5, relu(128x784 @
#: 784x512 + b) 2.3 -> 1.7, relu(64x1024 @ 1024^2 + b) 4.8 -> 2.3; jaxbench's
#: MLP train step 18.4 -> 11.4 and (``OPENBLAS_NUM_THREADS=1``) 17.2 ->
#: 11.6. On AVX-512
#: IREE's kernels were the faster ones below ``BLAS_MIN_FLOPS`` (pmap MLP
#: step 8.1 vs 9.2-9.5 ms).
NARROW_VECTOR_BLAS_MIN_FLOPS = 5e7


class _BlasProduct:
  """How a ``dot_general`` maps onto GEMMs of (B, M, K) x (B, K, N): the
  operands' axis permutations and the merged sizes; calling it is the host
  kernel."""
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
    least = NARROW_VECTOR_BLAS_MIN_FLOPS if native_vector_bytes() < 64 else BLAS_MIN_FLOPS
    return (self.flops >= least and per_matrix >= BLAS_MIN_FLOPS_PER_MATRIX
            and min(self.m, self.n, self.k) >= BLAS_MIN_DIM)

  def _operand(self, x: np.ndarray, perm, rows: int, cols: int) -> np.ndarray:
    # A view where the axes allow it (GEMM reads transposed matrices in place).
    return x.transpose(perm).reshape((self.b, rows, cols))

  def __call__(self, lhs: np.ndarray, rhs: np.ndarray, out: np.ndarray) -> None:
    host_blas.matmul(self._operand(lhs, self.lhs_perm, self.m, self.k),
                     self._operand(rhs, self.rhs_perm, self.k, self.n),
                     out.reshape((self.b, self.m, self.n)))


def _uses_blas(ctx, product: _BlasProduct) -> bool:
  lhs, rhs = ctx.avals_in
  out, = ctx.avals_out
  return (lhs.dtype == rhs.dtype == out.dtype and out.dtype in host_blas.DTYPES
          and product.worth_blas() and host_blas.available())


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


__all__ = ["BLAS_MIN_FLOPS", "BLAS_MIN_FLOPS_PER_MATRIX", "BLAS_MIN_DIM",
           "NARROW_VECTOR_BLAS_MIN_FLOPS"]
