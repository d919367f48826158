"""Matrix helpers written with lax wrappers, shared by the linear-algebra
primitives' JVP rules and by their StableHLO lowerings (``control/linalg_lowering.py``):
transposes, triangles, identity matrices and batched matrix products over
``[..., m, n]`` operands."""
from __future__ import annotations

import math

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, get_aval
from openjax._src.primitives.base.batch_util import axis_size, bdim_at_front
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.base.structural import (broadcast_in_dim, broadcasted_iota, reduce_sum,
                                                     reshape, transpose)
from openjax._src.primitives.dot_conv.dot import Precision, dot_general
from openjax._src.primitives.elementwise import arithmetic
from openjax._src.primitives.elementwise.arithmetic import add, div, mul
from openjax._src.primitives.elementwise.logic import eq, ge, select
from openjax._src.primitives.shape.shape import full, full_like, slice


def batch_at_front(prim: Primitive) -> None:
  """Give ``prim`` the batching rule of a primitive batched over leading
  dimensions: batch dimensions moved to the front, results batched at 0."""
  def rule(vals, dims, **params):
    size = axis_size(vals, dims)
    outs = prim.bind(*(bdim_at_front(v, d, size) for v, d in zip(vals, dims)), **params)
    return outs, [0] * len(outs)
  prim.def_batch(rule)


def lapack_dtype(x: np.ndarray) -> np.ndarray:
  """``x`` in a dtype NumPy's LAPACK takes: float32/64 and complex64/128 as
  they are, narrower floats as float32 (callers cast results back)."""
  if x.dtype.kind == "c" or x.dtype in (np.float32, np.float64):
    return x
  return x.astype(np.float32)


def is_complex(x) -> bool:
  return dtypes.kind(get_aval(x).dtype) == "c"


def const(x, value):
  """``value`` as a rank-0 constant of ``x``'s dtype."""
  return np.array(value, get_aval(x).dtype)


def real_dtype(dtype) -> np.dtype:
  dtype = np.dtype(dtype)
  return np.finfo(dtype).dtype if dtype.kind == "c" else dtype


def T(x):
  """Swap the last two dimensions."""
  nd = get_aval(x).ndim
  return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def conj(x):
  return arithmetic.conj(x) if is_complex(x) else x


def H(x):
  """The conjugate transpose of the last two dimensions."""
  return conj(T(x))


def mm(a, b):
  """``a @ b`` over equal leading (batch) dimensions, at full precision."""
  na, nb = get_aval(a).ndim, get_aval(b).ndim
  batch = tuple(range(na - 2))
  return dot_general(a, b, (((na - 1,), (nb - 2,)), (batch, batch)),
                     precision=(Precision.HIGHEST, Precision.HIGHEST))


def mv(a, v):
  """``a @ v`` for a batch of matrices ``[..., m, n]`` and vectors ``[..., n]``."""
  na = get_aval(a).ndim
  batch = tuple(range(na - 2))
  return dot_general(a, v, (((na - 1,), (na - 2,)), (batch, batch)),
                     precision=(Precision.HIGHEST, Precision.HIGHEST))


def tri_mask(n: int, m: int, k: int = 0):
  """``bool[n, m]``: True on and below the ``k``-th diagonal."""
  # JAX's order of equations: the shifted row index, then the column index.
  rows = add(broadcasted_iota(np.int32, (n, m), 0), np.array(k, np.int32))
  cols = broadcasted_iota(np.int32, (n, m), 1)
  return ge(rows, cols)


def _broadcast_mask(mask, shape):
  return broadcast_in_dim(mask, shape, (len(shape) - 2, len(shape) - 1))


def tril(x, k: int = 0):
  shape = get_aval(x).shape
  mask = _broadcast_mask(tri_mask(shape[-2], shape[-1], k), shape)
  return select(mask, x, full_like(x, 0))


def triu(x, k: int = 0):
  shape = get_aval(x).shape
  mask = _broadcast_mask(tri_mask(shape[-2], shape[-1], k - 1), shape)
  return select(mask, full_like(x, 0), x)


def eye(dtype, n: int, m: int | None = None):
  m = n if m is None else m
  rows = broadcasted_iota(np.int32, (n, m), 0)
  cols = broadcasted_iota(np.int32, (n, m), 1)
  return convert_element_type(eq(rows, cols), dtype)


def eye_like(x):
  """The identity broadcast to ``x``'s (square) shape."""
  aval = get_aval(x)
  return _broadcast_mask(eye(aval.dtype, aval.shape[-2], aval.shape[-1]), aval.shape)


def diagonal(x):
  """``x[..., i, i]`` for ``i < min(m, n)``, as a masked sum (no gather)."""
  aval = get_aval(x)
  m, n = aval.shape[-2:]
  k = min(m, n)
  sq = slice(x, (0,) * aval.ndim, (*aval.shape[:-2], k, k))
  masked = mul(sq, eye_like(sq))
  return reduce_sum(masked, (aval.ndim - 1,))


def diag_matrix(d):
  """The diagonal matrices ``[..., n, n]`` with diagonals ``d`` ``[..., n]``."""
  aval = get_aval(d)
  n = aval.shape[-1]
  shape = (*aval.shape, n)
  spread = broadcast_in_dim(d, shape, tuple(range(aval.ndim)))
  return mul(spread, _broadcast_mask(eye(aval.dtype, n), shape))


def symmetrize(x):
  return div(add(x, H(x)), const(x, 2))


def flatten_batch(x, core: int = 2):
  """``x`` as ``[b, *core_dims]`` and its batch shape."""
  shape = get_aval(x).shape
  batch = shape[:len(shape) - core]
  return reshape(x, (math.prod(batch), *shape[len(shape) - core:])), batch


def unflatten_batch(x, batch):
  return reshape(x, (*batch, *get_aval(x).shape[1:]))


def onehot(idx, size: int, dtype):
  """``[b, size]`` one-hot rows of the int32 indices ``idx`` ``[b, k]``."""
  b, k = get_aval(idx).shape
  grid = broadcasted_iota(np.dtype(np.int32), (b, k, size), 2)
  hit = eq(broadcast_in_dim(idx, (b, k, size), (0, 1)), grid)
  # A select, not a convert of the booleans: IREE folds a bool->float
  # convert into a contraction as an i1 operand and then fails to compile it.
  return select(hit, full((b, k, size), 1, dtype),
                full((b, k, size), 0, dtype))


def permute_rows(x, perm):
  """``x[..., perm[..., i], :]`` as a product with a permutation matrix (linear
  in ``x``, so it also serves JVPs and their transposes)."""
  xf, batch = flatten_batch(x)
  pf, _ = flatten_batch(perm, 1)
  m = get_aval(xf).shape[1]
  p = onehot(pf, m, get_aval(x).dtype)          # p[b, i, r] = (perm[b, i] == r)
  return unflatten_batch(mm(p, xf), batch)


def check_batch(name: str, avals, ranks) -> tuple[int, ...]:
  """JAX's shape checks of the lax.linalg routines with several operands:
  minimum ranks, then the same batch shape on every operand (returned)."""
  for i, (aval, rank) in enumerate(zip(avals, ranks)):
    if aval.ndim < rank:
      raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got "
                      f"shape={aval.shape}")
  batches = [a.shape[:a.ndim - r] for a, r in zip(avals, ranks)]
  if any(b != batches[0] for b in batches):
    raise ValueError(f"{name}: all inputs must have the same batch dimensions; got shapes "
                     f"{[a.shape for a in avals]}")
  return batches[0]
