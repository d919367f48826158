"""Sorting primitives: variadic ``sort`` and ``top_k``.

The order is JAX's: for floats ``-inf < ... < inf < NaN`` with every NaN equal
and ``-0.0 == 0.0`` (equal keys keep their input order when the sort is
stable); complex numbers sort lexicographically by (real, imag).
"""
from __future__ import annotations

import functools

import operator
from typing import Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Array, Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules import unsharded_axis_rule
from openjax._src.core.sharding_rules_ops import top_k_rule
from openjax._src.primitives.base import structural
from openjax._src.primitives.base.ad_util import Zero
from openjax._src.primitives.base.structural import (broadcast_in_dim, broadcasted_iota,
                                                     canonicalize_axis, moveaxis)
from openjax._src.primitives.index.gather_scatter import gather
from openjax._src.primitives.index.indexing_util import GatherDimensionNumbers, GatherScatterMode
from openjax._src.primitives.sort import sort_kernels
from openjax._src.primitives.sort.sort_fused import numpy_sort_keys, permutation
from openjax._src.primitives.sort.sort_lowering import (from_rows, smallest_permutation, sort_keys,
                                                        sort_permutation, take_rows, to_rows)

__all__ = ["sort", "sort_p", "sort_key_val", "top_k", "top_k_p", "sort_arrays", "top_k_arrays"]


# JAX's sort keys as NumPy arrays (approx_top_k's too; the reference of the kernels' tests).
_sort_keys = numpy_sort_keys

# ------------------------------------------------------------------- sort
sort_p = Primitive("sort", multiple_results=True)


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
  """Sort ``operand`` along ``dimension``; a sequence of operands sorts
  lexicographically by the first ``num_keys`` and permutes the rest alike.

  NaNs sort to the end and ``-0.0 == 0.0``; complex numbers sort by (real, imag).
  """
  num_keys = operator.index(num_keys)
  if type(operand) is Array:   # the common eager call, without Sequence's ABC check
    if num_keys != 1:
      raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    dimension = canonicalize_axis(dimension, operand.ndim)
    return sort_p.bind(operand, dimension=dimension, is_stable=bool(is_stable), num_keys=1)[0]
  if isinstance(operand, Sequence):
    operands = tuple(operand)
    if not operands:
      raise TypeError("Sort requires at least one operand")
    if not 1 <= num_keys <= len(operands):
      raise ValueError(f"num_keys={num_keys} must be between 1 and "
                       f"len(operand)={len(operands)}")
    dimension = canonicalize_axis(dimension, len(np.shape(operands[0])))
    return tuple(sort_p.bind(*operands, dimension=dimension, is_stable=bool(is_stable),
                             num_keys=num_keys))
  if num_keys != 1:
    raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
  dimension = canonicalize_axis(dimension, len(np.shape(operand)))
  return sort_p.bind(operand, dimension=dimension, is_stable=bool(is_stable), num_keys=1)[0]


def _sort_lexsort(*operands, dimension, is_stable, num_keys):
  """The general path: a stable ``np.lexsort`` of ``numpy_sort_keys`` (every key
  dtype, any number of keys); the reference of the faster kernels."""
  # np.lexsort is stable, takes its primary key last and sorts along any
  # axis; the takes index with cached index arrays of the other axes.
  perm = np.lexsort([k for o in operands[:num_keys] for k in numpy_sort_keys(o)][::-1],
                    axis=dimension)
  return sort_kernels.take_sorted(operands, perm, dimension)


@sort_p.def_impl
def _sort_impl(*operands, dimension, is_stable, num_keys):
  return sort_arrays(*operands, dimension=dimension, num_keys=num_keys)


def sort_arrays(*operands, dimension: int, num_keys: int) -> list:
  """The impl's sort of NumPy ``operands`` by the first ``num_keys`` along
  ``dimension`` (stable, JAX's total order); compiled programs' host kernel
  for long sorts calls it too (``control/sort_host_lowering.py``)."""
  key = operands[0]
  if len(operands) == 1 and sort_kernels.is_numpy_key(key.dtype):
    return [sort_kernels.sort_one(key, dimension)]
  # One key of a NumPy dtype (argsort's iota, sort_key_val): a stable
  # argsort, then a take per operand; several keys: a radix sort key by key
  # or np.lexsort (``permutation``).
  return sort_kernels.take_sorted(operands, permutation(operands[:num_keys], dimension),
                                  dimension)


@sort_p.def_eval_kernel
def _sort_eval_kernel(*operands, dimension, is_stable, num_keys):
  # One operand of a NumPy dtype: its sort kernel, without the impl's dispatch.
  if len(operands) != 1 or not sort_kernels.is_numpy_key(operands[0].dtype):
    return None
  return functools.partial(sort_kernels.sort_one, axis=dimension)


@sort_p.def_abstract_eval
def _sort_abstract_eval(*avals, dimension, is_stable, num_keys):
  if any(a.shape != avals[0].shape for a in avals[1:]):
    shapes = " ".join(str(a.shape) for a in avals)
    raise TypeError(f"Arguments to sort must have equal shapes, got: {shapes}")
  if not 0 <= dimension < max(avals[0].ndim, 1):
    raise ValueError(f"sort: dimension {dimension} is out of bounds for operand "
                     f"{avals[0].str_short()}; use a dimension in [0, {avals[0].ndim}).")
  return list(avals)


sort_p.def_sharding_rule(unsharded_axis_rule(
    "Arguments to sort must be unsharded over the sorting dimension. Got arg sharding="
    "{sharding} and sorting dimension={axis}", "dimension"))


def _take_along(t, idx, axis: int, *, reshape: bool = False):
  """``t`` permuted along ``axis`` by the integer array ``idx`` (same shape):
  a gather batched over every other dimension, as JAX's sort/top_k JVPs do
  (sort appends the index dimension with broadcast_in_dim, top_k reshapes)."""
  rank = get_aval(idx).ndim
  others = tuple(i for i in range(rank) if i != axis)
  dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                 start_index_map=(axis,), operand_batching_dims=others,
                                 start_indices_batching_dims=others)
  idx_shape = get_aval(idx).shape + (1,)
  idx = (structural.reshape(idx, idx_shape) if reshape
         else broadcast_in_dim(idx, idx_shape, tuple(range(rank))))
  return gather(t, idx, dnums, (1,) * rank, mode=GatherScatterMode.PROMISE_IN_BOUNDS)


@sort_p.def_jvp
def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
  # Sort an iota along with the operands; tangents follow that permutation.
  shape = get_aval(primals[0]).shape
  index_dtype = np.dtype(np.uint32 if max(shape, default=0) <= np.iinfo(np.uint32).max
                         else np.uint64)
  iota = broadcasted_iota(index_dtype, shape, dimension)
  *outs, perm = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                            num_keys=num_keys)
  tangents_out = [t if type(t) is Zero else _take_along(t, perm, dimension) for t in tangents]
  return outs, tangents_out


@sort_p.def_batch
def _sort_batch(vals, dims, *, dimension, is_stable, num_keys):
  # Every operand gets the batch dim of the first batched one; the sorted
  # dimension shifts past it.
  proto, bdim = next((v, d) for v, d in zip(vals, dims) if d is not None)
  shape = get_aval(proto).shape
  args = []
  for v, d in zip(vals, dims):
    if d is None:
      kept = tuple(i for i in range(len(shape)) if i != bdim)
      args.append(broadcast_in_dim(v, shape, kept))
    else:
      args.append(moveaxis(v, d, bdim))
  outs = sort_p.bind(*args, dimension=dimension + (bdim <= dimension), is_stable=is_stable,
                     num_keys=num_keys)
  return outs, [bdim] * len(outs)


@sort_p.def_lower
def _sort_lower(ctx, *operands, dimension, is_stable, num_keys):
  # Stable whatever is_stable says (the index is the last key), as the impl.
  avals = ctx.avals_in
  shape = avals[0].shape
  if not shape or shape[dimension] <= 1 or 0 in shape:
    return list(operands)
  # An operand passed twice is laid out and permuted once, and is a key
  # once: a repeated key never changes the order (and IREE miscompiles some
  # sorts that read one complex operand as two keys).
  rows, sorted_rows, keys, seen_keys = {}, {}, [], set()
  for i, (x, a) in enumerate(zip(operands, avals)):
    if x.name not in rows:
      rows[x.name] = to_rows(ctx, x, dimension, a.dtype)
    if i < num_keys and x.name not in seen_keys:
      seen_keys.add(x.name)
      keys.extend(sort_keys(ctx, rows[x.name][0], a.dtype))
  b, n = avals[0].size // shape[dimension], shape[dimension]
  perm = sort_permutation(ctx, keys, (b, n))
  outs = []
  for x, a in zip(operands, avals):
    if x.name not in sorted_rows:
      r, moved, p = rows[x.name]
      sorted_rows[x.name] = from_rows(ctx, take_rows(ctx, r, perm, a.dtype), moved, p,
                                      a.dtype)
    outs.append(sorted_rows[x.name])
  return outs


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
  """Sort ``keys`` along ``dimension`` and apply the same permutation to ``values``."""
  dimension = canonicalize_axis(dimension, len(np.shape(keys)))
  k, v = sort_p.bind(keys, values, dimension=dimension, is_stable=bool(is_stable), num_keys=1)
  return k, v


# ------------------------------------------------------------------ top_k
top_k_p = Primitive("top_k", multiple_results=True)


def top_k(operand, k: int, *, axis: int = -1):
  """The ``k`` largest entries along ``axis`` (descending; ties keep input
  order; NaN counts as largest) and their int32 indices."""
  k = operator.index(k)
  if k < 0:
    raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
  axis = canonicalize_axis(axis, len(np.shape(operand)))
  values, indices = top_k_p.bind(operand, k=k, axis=axis)
  return values, indices


@top_k_p.def_impl
def _top_k_impl(x, *, k, axis):
  return top_k_arrays(x, k=k, axis=axis)


def top_k_arrays(x, *, k: int, axis: int) -> list:
  """The impl's ``top_k`` of NumPy ``x`` (values, int32 indices); compiled
  programs' host kernel calls it too (``control/sort_host_lowering.py``)."""
  fast = sort_kernels.top_k(x, k, axis)
  if fast is not None:
    return list(fast)
  return _top_k_argsort(x, k=k, axis=axis)


def _top_k_argsort(x, *, k, axis):
  """The general path of top_k's impl, and the reference of its kernel."""
  last = x.ndim - 1
  if axis != last:   # the axis last and back (swapaxes: np.moveaxis costs ~5 us a call)
    values, idx = _top_k_argsort(np.swapaxes(x, axis, last), k=k, axis=last)
    return [np.swapaxes(values, axis, last), np.swapaxes(idx, axis, last)]
  # Descending and stable (lowest index first among equals), NaN largest:
  # an ascending stable argsort of the reversed array, read backwards.
  n = x.shape[-1]
  idx_rev = numpy_sort_keys(x)[0][..., ::-1].argsort(axis=-1, kind="stable")
  idx = np.subtract(n - 1, idx_rev[..., ::-1][..., :k], dtype=np.int32)
  # A fancy index with cached index arrays of the other axes (np.take_along_axis
  # costs ~4 us in argument handling: a third of a 15-element top_k).
  values = x[idx] if x.ndim == 1 else x[sort_kernels.other_axes_index(idx.shape, last) + (idx,)]
  return [values, idx]


@top_k_p.def_abstract_eval
def _top_k_abstract_eval(x, *, k, axis):
  if dtypes.kind(x.dtype) == "c":
    raise ValueError("top_k is not compatible with complex inputs.")
  if k < 0:
    raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
  if not x.shape:
    raise TypeError(f"top_k operand must have >= 1 dimension, got {x.shape}")
  if not 0 <= axis < x.ndim:
    raise ValueError(f"axis argument out of range: axis={axis} for operand.shape={x.shape}")
  shape = list(x.shape)
  if shape[axis] < k:
    raise ValueError("k argument to top_k must be no larger than size along axis;"
                     f" got k={k} with shape={tuple(shape)} and axis={axis}")
  shape[axis] = k
  # JAX derives both results from the operand's aval, weak type included.
  return [ShapedArray(shape, x.dtype, x.weak_type),
          ShapedArray(shape, np.dtype(np.int32), x.weak_type)]


top_k_p.def_sharding_rule(top_k_rule)


@top_k_p.def_jvp
def _top_k_jvp(primals, tangents, *, k, axis):
  (x,), (t,) = primals, tangents
  values, indices = top_k_p.bind(x, k=k, axis=axis)
  return [values, indices], [_take_along(t, indices, axis, reshape=True),
                             Zero.from_primal_value(indices)]


@top_k_p.def_batch
def _top_k_batch(vals, dims, *, k, axis):
  (x,), (d,) = vals, dims
  outs = top_k_p.bind(x, k=k, axis=axis + (d <= axis))
  return outs, [d, d]


@top_k_p.def_lower
def _top_k_lower(ctx, x, *, k, axis):
  # A stable ascending sort of the reversed keys: descending values, NaN
  # first, ties in index order; then the first k.
  aval = ctx.avals_in[0]
  values_aval, idx_aval = ctx.avals_out
  n = aval.shape[axis]
  if 0 in values_aval.shape:
    return [ctx.constant(np.zeros(values_aval.shape, aval.dtype)),
            ctx.constant(np.zeros(idx_aval.shape, np.int32))]
  rows, moved, p = to_rows(ctx, x, axis, aval.dtype)
  b = aval.size // n
  if n == 1:
    perm = ctx.full(0, (b, 1), np.int32)
  else:
    keys = sort_keys(ctx, rows, aval.dtype, descending=True)
    perm = smallest_permutation(ctx, keys, (b, n), k)
  values = take_rows(ctx, rows, perm, aval.dtype)
  idx = ctx.convert(perm, np.int32, (b, k))
  return [from_rows(ctx, values, moved, p, aval.dtype),
          from_rows(ctx, idx, moved, p, np.int32)]
