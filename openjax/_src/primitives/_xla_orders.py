"""XLA:CPU's summation orders for sums and vector products, in NumPy.

Floating-point addition is not associative, so the last bits of a sum depend
on its order. JAX 0.10's XLA:CPU computes (measured with inputs that reveal
the order, tests/test_xla_orders.py):

- ``reduce_sum`` of float32/float64 operands of fewer than 4096 elements
  (larger float32 ones go to YNNPACK) by its tree-reduction rewrite: a
  reduced axis longer than 32 is padded ("SAME": half the padding before)
  to whole windows of 32, each window summed in order, and again until at
  most 32 partial sums remain, which are summed in order from +0. An axis of
  one element is returned as it is (``-0.0`` stays ``-0.0``).
- a product of a vector and a float32 matrix (Eigen's GEMV) as one chain of
  fused multiply-adds per output: always when the outputs accumulate along
  the matrix's leading axis (``v @ M`` with at least 3 outputs), and when
  each output is a dot product along the matrix's last axis (``M @ v``, or
  ``v @ v``) of at most 7 terms (longer ones use 8 SIMD lanes).

Sums over several axes of length > 1, matrix products and the larger cases
keep the faster NumPy/BLAS kernels; their last bits may differ from JAX's.
The lowering side of the same orders is ``_xla_orders_lowering``.
"""
from __future__ import annotations

import numpy as np

from openjax._src.primitives._xla_numerics import fma

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

WINDOW = 32
SUM_MAX_ELEMENTS = 4096     # XLA:CPU offloads float32 reductions this large to YNNPACK
DOT_SHORT_CHAIN = 7         # dot products along a row longer than this use SIMD lanes
DOT_MIN_ROW_OUTPUTS = 3     # v @ M with fewer outputs is rewritten by XLA
# Outside these sizes the chains cost more than they are worth (each term is
# a NumPy step eagerly; compiled, a sequential loop IREE cannot vectorize).
# Compiled, an in-order sum runs one sequential loop per output, which IREE
# cannot vectorize: beyond this many outputs (a sum inside a scan's body,
# rows of a batch) the compiled code keeps IREE's reduction (scan_rnn's
# gradient: 58 ms instead of 104 ms) and may differ from JAX in the last bit.
COMPILED_SUM_MAX_OUTPUTS = 64
DOT_MAX_TERMS = 4096
DOT_MAX_PRODUCTS = 1 << 20


def sum_axis(shape, dtype, axes) -> int | None:
  """The one axis whose sum follows XLA's order, or None (not reproduced)."""
  if np.dtype(dtype) not in (F32, F64) or not axes:
    return None
  size = int(np.prod(shape))
  long_axes = [a for a in axes if shape[a] > 1]
  if len(long_axes) > 1 or size >= SUM_MAX_ELEMENTS or size == 0:
    return None
  return long_axes[0] if long_axes else axes[0]


def compiled_sum_axis(shape, dtype, axes) -> int | None:
  """``sum_axis`` for the lowering: None also beyond
  ``COMPILED_SUM_MAX_OUTPUTS`` outputs."""
  axis = sum_axis(shape, dtype, axes)
  if axis is None or int(np.prod(shape)) // shape[axis] > COMPILED_SUM_MAX_OUTPUTS:
    return None
  return axis


def window_levels(n: int) -> list[tuple[int, int, int]]:
  """``(windows, padding before, padding after)`` of each tree level that
  reduces an axis of length ``n`` to at most 32 partial sums."""
  levels = []
  while n > WINDOW:
    windows = -(-n // WINDOW)
    pad = windows * WINDOW - n
    levels.append((windows, pad // 2, pad - pad // 2))
    n = windows
  return levels


def _sum_last_in_order(x: np.ndarray) -> np.ndarray:
  acc = np.zeros(x.shape[:-1], x.dtype)
  for i in range(x.shape[-1]):
    acc += x[..., i]
  return acc


def ordered_sum(x: np.ndarray, axes, axis: int) -> np.ndarray:
  """``x`` summed over ``axes`` in XLA's order; ``axis`` is the long one
  (``sum_axis``)."""
  out_shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
  x = np.moveaxis(x, axis, -1)
  x = x.reshape(out_shape + x.shape[-1:])
  if x.shape[-1] == 1:
    return x[..., 0].copy()
  with np.errstate(over="ignore", invalid="ignore"):
    for windows, low, high in window_levels(x.shape[-1]):
      padded = np.zeros(out_shape + (windows * WINDOW,), x.dtype)
      padded[..., low:low + x.shape[-1]] = x
      x = _sum_last_in_order(padded.reshape(out_shape + (windows, WINDOW)))
    return _sum_last_in_order(x)


def dot_chain(lhs_shape, rhs_shape, dtype, dimension_numbers) -> tuple[int, int] | None:
  """``(vector side, matrix's contracting axis)`` when XLA computes this
  ``dot_general`` as chains of fused multiply-adds (vector side 0 or 1; the
  axis -1 for a vector-vector product), else None."""
  (lc, rc), (lb, rb) = dimension_numbers
  if np.dtype(dtype) != F32 or lb or len(lc) != 1:
    return None
  ranks = (len(lhs_shape), len(rhs_shape))
  if ranks == (1, 1):
    return (0, -1) if lhs_shape[0] <= DOT_SHORT_CHAIN else None
  if ranks == (1, 2):
    side, matrix, axis = 0, rhs_shape, rc[0]
  elif ranks == (2, 1):
    side, matrix, axis = 1, lhs_shape, lc[0]
  else:
    return None
  k, outputs = matrix[axis], matrix[1 - axis]
  if k > DOT_MAX_TERMS or k * outputs > DOT_MAX_PRODUCTS:
    return None
  if axis == 1:
    return (side, 1) if k <= DOT_SHORT_CHAIN else None
  return (side, 0) if outputs >= DOT_MIN_ROW_OUTPUTS else None


def ordered_dot(lhs: np.ndarray, rhs: np.ndarray, chain: tuple[int, int]) -> np.ndarray:
  """The vector product ``dot_chain`` described, one fused multiply-add per
  term, in order from +0."""
  side, axis = chain
  vector, matrix = (lhs, rhs) if side == 0 else (rhs, lhs)
  if axis == -1:
    matrix = matrix[:, None]
  elif axis == 1:
    matrix = matrix.T
  acc = np.zeros(matrix.shape[1:], F32)
  with np.errstate(over="ignore", invalid="ignore"):
    for i in range(vector.shape[0]):
      acc = fma(vector[i], matrix[i], acc)
  return acc.reshape(()) if axis == -1 else acc


def fma_sum_axis(shape, dtype, axes) -> int | None:
  """The axis of a sum XLA fuses with the product it sums (a chain of fused
  multiply-adds): an ordered sum without windows (at most 32 terms)."""
  axis = sum_axis(shape, dtype, axes)
  if axis is None or not 1 < shape[axis] <= WINDOW:
    return None
  return axis


def ordered_fma_sum(a: np.ndarray, b: np.ndarray, axes) -> np.ndarray:
  """``sum(a * b, axes)`` as XLA's fused reduction computes it: one fused
  multiply-add per term, in order from +0."""
  a, b = np.broadcast_arrays(a, b)
  axis = fma_sum_axis(a.shape, a.dtype, axes)
  out_shape = tuple(d for i, d in enumerate(a.shape) if i not in axes)
  a = np.moveaxis(a, axis, -1).reshape(out_shape + (a.shape[axis],))
  b = np.moveaxis(b, axis, -1).reshape(a.shape)
  acc = np.zeros(out_shape, a.dtype)
  with np.errstate(over="ignore", invalid="ignore"):
    for i in range(a.shape[-1]):
      acc = fma(a[..., i], b[..., i], acc)
  return np.asarray(acc, a.dtype)
