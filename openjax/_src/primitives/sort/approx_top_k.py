"""``approx_top_k_p``: ``lax.approx_max_k`` / ``approx_min_k``.

On TPUs XLA approximates; everywhere else (CPU here, as in JAX) it sorts and
slices, so the result is exact: the ``k`` largest (or smallest) values along
``reduction_dimension`` in order, ties in index order, with int32 indices.
With ``aggregate_to_topk=False`` the reduction keeps XLA's approximate output
size (``approx_top_k_output_size``) of sorted values instead of ``k``.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray
from openjax._src.core.sharding_rules import replicated_rule
from openjax._src.primitives.base.ad_util import Zero
from openjax._src.primitives.sort import sort_kernels
from openjax._src.primitives.sort.sort import _sort_keys, _take_along
from openjax._src.primitives.sort.sort_lowering import (
    from_rows, smallest_permutation, sort_keys, take_rows, to_rows)

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k_output_size", "approx_top_k_p",
           "approx_top_k_arrays"]


def approx_top_k_output_size(input_size: int, rank: int, k: int, recall_target: float,
                             aggregate_to_topk: bool, input_size_override: int = -1) -> int:
  """The reduced dimension's size (XLA's ApproxTopKReductionOutputSize): ``k``
  when aggregating, else the input split in TPU tiles and halved as often as
  the recall target allows."""
  if aggregate_to_topk:
    return k
  tiling = 1024 if rank == 1 else 128
  if input_size <= tiling:
    return input_size
  if k == 1:
    return tiling
  logical_size = input_size_override if input_size_override >= 0 else input_size
  if recall_target >= 1.0:
    return input_size
  # Sorted windows needed for the recall target: (1 - k) / log(recall).
  windows = max((1.0 - k) / math.log(recall_target), tiling)
  log2_reduction = int(math.floor(math.log2(logical_size / windows))) if (
      logical_size > windows) else 0
  if log2_reduction <= 0:
    return input_size
  log2_reduction = min(log2_reduction, int(math.log2(input_size / tiling)))
  tiles = -(-input_size // tiling)
  return -(-tiles // (1 << log2_reduction)) * tiling


approx_top_k_p = Primitive("approx_top_k", multiple_results=True)


def approx_max_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
  """The ``k`` largest values along ``reduction_dimension`` and their indices."""
  return approx_top_k_p.bind(
      operand, k=operator.index(k), reduction_dimension=reduction_dimension,
      recall_target=float(recall_target), is_max_k=True,
      reduction_input_size_override=reduction_input_size_override,
      aggregate_to_topk=bool(aggregate_to_topk))


def approx_min_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
  """The ``k`` smallest values along ``reduction_dimension`` and their indices."""
  return approx_top_k_p.bind(
      operand, k=operator.index(k), reduction_dimension=reduction_dimension,
      recall_target=float(recall_target), is_max_k=False,
      reduction_input_size_override=reduction_input_size_override,
      aggregate_to_topk=bool(aggregate_to_topk))


def _out_size(shape, *, k, reduction_dimension, recall_target, reduction_input_size_override,
              aggregate_to_topk):
  return approx_top_k_output_size(shape[reduction_dimension % len(shape)], len(shape), k,
                                   recall_target, aggregate_to_topk,
                                   reduction_input_size_override)


@approx_top_k_p.def_impl
def _approx_top_k_impl(x, *, k, reduction_dimension, recall_target, is_max_k,
                       reduction_input_size_override, aggregate_to_topk):
  return approx_top_k_arrays(x, k=k, reduction_dimension=reduction_dimension,
                             recall_target=recall_target, is_max_k=is_max_k,
                             reduction_input_size_override=reduction_input_size_override,
                             aggregate_to_topk=aggregate_to_topk)


def approx_top_k_arrays(x, *, k, reduction_dimension, recall_target, is_max_k,
                        reduction_input_size_override, aggregate_to_topk) -> list:
  """The impl's (values, int32 indices) of NumPy ``x``; compiled programs'
  host kernel calls it too (``control/sort_host_lowering.py``)."""
  axis = reduction_dimension % x.ndim
  size = _out_size(x.shape, k=k, reduction_dimension=reduction_dimension,
                   recall_target=recall_target, aggregate_to_topk=aggregate_to_topk,
                   reduction_input_size_override=reduction_input_size_override)
  # The k largest (smallest) in order by one partition and a sort of those k
  # (NumPy dtypes of up to 32 bits): k=100 of 1e6 float32, max 303 -> 9.4 ms,
  # min 274 -> 14 ms.
  fast = sort_kernels.top_k(x, size, axis, descending=is_max_k)
  if fast is not None:
    return list(fast)
  return _approx_top_k_argsort(x, size, axis, is_max_k)


def _approx_top_k_argsort(x, size: int, axis: int, is_max_k: bool) -> list:
  """The general path of the impl (every dtype), and the reference of its
  kernel: a stable argsort of the whole rows."""
  n = x.shape[axis]
  key = np.moveaxis(_sort_keys(x)[0], axis, -1)
  if is_max_k:
    # Descending and stable: an ascending stable argsort of the reversed keys.
    idx = (n - 1 - np.flip(np.argsort(np.flip(key, -1), axis=-1, kind="stable"), -1))
  else:
    idx = np.argsort(key, axis=-1, kind="stable")
  idx = idx[..., :size]
  values = np.take_along_axis(np.moveaxis(x, axis, -1), idx, axis=-1)
  return [np.moveaxis(values, -1, axis), np.moveaxis(idx.astype(np.int32), -1, axis)]


@approx_top_k_p.def_abstract_eval
def _approx_top_k_abstract_eval(x, *, k, reduction_dimension, recall_target, is_max_k,
                                reduction_input_size_override, aggregate_to_topk):
  if k <= 0:
    raise ValueError(f"k must be positive, got {k}")
  if not x.shape:
    raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {x.shape}")
  if not -x.ndim <= reduction_dimension < x.ndim:
    raise ValueError(f"approx_top_k: reduction_dimension {reduction_dimension} is out of range "
                     f"for {x.str_short()}")
  shape = list(x.shape)
  if shape[reduction_dimension] < k:
    raise ValueError(f"k must be smaller than the size of reduction_dim "
                     f"{shape[reduction_dimension]}, got {k}")
  if not dtypes.issubdtype(x.dtype, np.floating):
    raise ValueError(f"approx_top_k: operand must be a floating type, got {x.str_short()}")
  shape[reduction_dimension] = _out_size(
      x.shape, k=k, reduction_dimension=reduction_dimension, recall_target=recall_target,
      aggregate_to_topk=aggregate_to_topk,
      reduction_input_size_override=reduction_input_size_override)
  return [ShapedArray(tuple(shape), x.dtype, x.weak_type),
          ShapedArray(tuple(shape), np.dtype(np.int32), False)]


approx_top_k_p.def_sharding_rule(replicated_rule)   # results whole, as gather's


@approx_top_k_p.def_jvp
def _approx_top_k_jvp(primals, tangents, **params):
  (x,), (t,) = primals, tangents
  values, indices = approx_top_k_p.bind(x, **params)
  if type(t) is Zero:
    return [values, indices], [Zero.from_primal_value(values), Zero.from_primal_value(indices)]
  axis = params["reduction_dimension"] % len(np.shape(x))
  return [values, indices], [_take_along(t, indices, axis, reshape=True),
                             Zero.from_primal_value(indices)]


@approx_top_k_p.def_batch
def _approx_top_k_batch(vals, dims, *, reduction_dimension, **params):
  (x,), (d,) = vals, dims
  ndim = len(np.shape(x)) - 1
  axis = reduction_dimension % ndim
  outs = approx_top_k_p.bind(x, reduction_dimension=axis + (d <= axis), **params)
  return outs, [d, d]


@approx_top_k_p.def_lower
def _approx_top_k_lower(ctx, x, *, k, reduction_dimension, recall_target, is_max_k,
                        reduction_input_size_override, aggregate_to_topk):
  aval = ctx.avals_in[0]
  values_aval, _ = ctx.avals_out
  axis = reduction_dimension % aval.ndim
  n = aval.shape[axis]
  size = values_aval.shape[axis]
  if 0 in values_aval.shape:
    return [ctx.constant(np.zeros(values_aval.shape, aval.dtype)),
            ctx.constant(np.zeros(values_aval.shape, np.int32))]
  rows, moved, p = to_rows(ctx, x, axis, aval.dtype)
  b = aval.size // n
  if n == 1:
    perm = ctx.full(0, (b, 1), np.int32)
  else:
    keys = sort_keys(ctx, rows, aval.dtype, descending=is_max_k)
    perm = smallest_permutation(ctx, keys, (b, n), size)
  values = take_rows(ctx, rows, perm, aval.dtype)
  idx = ctx.convert(perm, np.int32, (b, size))
  return [from_rows(ctx, values, moved, p, aval.dtype),
          from_rows(ctx, idx, moved, p, np.int32)]
