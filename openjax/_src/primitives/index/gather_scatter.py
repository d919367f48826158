"""Indexing primitives ``gather`` and the scatter family (``scatter``,
``scatter-add``, ``-sub``, ``-mul``, ``-min``, ``-max``) with XLA's general
dimension-number semantics, each with its transformation rules.

Gather and scatter take a ``GatherScatterMode``: ``CLIP`` clamps each window
into range, ``FILL_OR_DROP`` fills out-of-bounds gather windows with
``fill_value`` and drops out-of-bounds scatter windows, and
``PROMISE_IN_BOUNDS`` behaves as XLA does in practice (gathers clamp,
scatters drop).
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules_ops import gather_rule, scatter_rule
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal
from openjax._src.primitives.base.batch_util import bdim_at_front
from openjax._src.primitives.base.structural import (broadcast_in_dim, defjvp, instantiate_zeros,
                                                     iota, moveaxis, reshape)
from openjax._src.primitives.base.util import check_same_dtypes
from openjax._src.primitives.elementwise.arithmetic import add, div, mul, neg, rem, sub
from openjax._src.primitives.elementwise.logic import eq, select
from openjax._src.primitives.index.indexing_util import (GatherDimensionNumbers, GatherScatterMode,
                                                         ScatterDimensionNumbers,
                                                         cast_scalar, check_batching,
                                                         check_index_dtype, default_fill_value,
                                                         dims_in_range, disjoint_dims,
                                                         gather_dnums, gather_dnums_attr,
                                                         gather_out_shape, gather_windows,
                                                         in_bounds, is_sorted,
                                                         lower_clamp_index_vectors,
                                                         lower_index_dtype, lower_unchanged,
                                                         no_duplicate_dims, replace_combine,
                                                         scatter_dnums, scatter_impl_with,
                                                         scatter_window_shape, shape_param,
                                                         static_scalar, to_output_order,
                                                         ufunc_combine, window_starts)
from openjax._src.primitives.index.gather_kernels import gather_eval_kernel
from openjax._src.primitives.index.scatter_kernels import point_scatter_kernel
from openjax._src.primitives.index.scatter_lowering import (combine_with, extreme_value,
                                                            identity_of, scatter_lowering)
from openjax._src.primitives.shape.shape import concatenate, full, full_like

__all__ = [
    "GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
    "gather", "gather_p", "scatter", "scatter_p",
    "scatter_add", "scatter_add_p", "scatter_sub", "scatter_sub_p", "scatter_mul",
    "scatter_mul_p", "scatter_min", "scatter_min_p", "scatter_max", "scatter_max_p",
    "index_take",
]

# --------------------------------------------------------------------- gather
gather_p = Primitive("gather", kind="linear")   # linear in the operand


def gather(operand, start_indices, dimension_numbers, slice_sizes, *,
           unique_indices: bool = False, indices_are_sorted: bool = False,
           mode=None, fill_value=None):
  """XLA's Gather: slices of ``operand`` of size ``slice_sizes`` starting at
  the index vectors in the last dimension of ``start_indices``. ``mode`` says
  how out-of-bounds windows behave (default: ``PROMISE_IN_BOUNDS``, which
  clamps); ``fill_value`` is used by ``'fill'``."""
  if mode is None:
    mode = GatherScatterMode.PROMISE_IN_BOUNDS
  mode = GatherScatterMode.from_any(mode)
  if mode == GatherScatterMode.FILL_OR_DROP:
    if fill_value is None:
      fill_value = default_fill_value(dtypes.dtype(operand))
    else:
      fill_value = static_scalar(fill_value, "gather fill_value")
  else:
    fill_value = None
  return gather_p.bind1(
      operand, start_indices, dimension_numbers=gather_dnums(dimension_numbers),
      slice_sizes=shape_param("gather", "slice_sizes", slice_sizes),
      unique_indices=bool(unique_indices), indices_are_sorted=bool(indices_are_sorted),
      mode=mode, fill_value=fill_value)


@gather_p.def_impl
def _gather_impl(operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                 indices_are_sorted, mode, fill_value):
  dn = dimension_numbers
  out_shape = gather_out_shape(indices.shape, dn, slice_sizes)
  if 0 in out_shape:
    return [np.zeros(out_shape, operand.dtype)]
  starts, idx = window_starts(operand.shape, indices, dn.start_index_map,
                               dn.operand_batching_dims, dn.start_indices_batching_dims)
  upper = np.array(operand.shape, np.int64) - np.array(slice_sizes, np.int64)
  ok = None
  if mode == GatherScatterMode.FILL_OR_DROP:
    ok = in_bounds(idx, dn.start_index_map, operand.shape, slice_sizes)
  starts = np.clip(starts, 0, upper)
  indexed = tuple(sorted(set(dn.start_index_map) | set(dn.operand_batching_dims)))
  win = gather_windows(operand, starts, slice_sizes, indexed)
  if ok is not None and not ok.all():
    fill = cast_scalar(0 if fill_value is None else fill_value, operand.dtype)
    win = np.where(ok.reshape((-1,) + (1,) * operand.ndim), win, fill)
  keep = [d for d in range(operand.ndim)
          if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
  batch_shape = indices.shape[:-1]
  win = np.reshape(win, batch_shape + tuple(slice_sizes[d] for d in keep))
  return [np.asarray(to_output_order(win, batch_shape, dn.offset_dims), order="C")]


gather_p.def_eval_kernel(gather_eval_kernel)


@gather_p.def_abstract_eval
def _gather_abstract_eval(operand, indices, *, dimension_numbers, slice_sizes,
                          unique_indices, indices_are_sorted, mode, fill_value):
  check_index_dtype(indices)
  dn = dimension_numbers
  if indices.ndim < 1:
    raise TypeError("Gather index leaf dimension must be within [0, rank(indices) + 1). "
                    f"rank(indices) is {indices.ndim} and gather index leaf dimension is "
                    "-1. (Tip: add a trailing dimension of size 1 to scalar indices.)")
  is_sorted(dn.offset_dims, "gather", "offset_dims")
  no_duplicate_dims(dn.offset_dims, "gather", "offset_dims")
  out_rank = len(dn.offset_dims) + indices.ndim - 1
  for i, d in enumerate(dn.offset_dims):
    if d < 0 or d >= out_rank:
      raise TypeError(f"Offset dimension {i} in gather op is out of bounds; got {d}, but "
                      f"should have been in [0, {out_rank})")
  ivd = indices.ndim - 1
  if len(dn.start_index_map) != indices.shape[ivd]:
    raise TypeError(f"Gather op has {len(dn.start_index_map)} elements in start_index_map "
                    f"and the bound of dimension index_vector_dim={ivd} of indices is "
                    f"{indices.shape[ivd]}. These two numbers must be equal.")
  for i, d in enumerate(dn.start_index_map):
    if d < 0 or d >= operand.ndim:
      raise TypeError(f"Invalid start_index_map; domain is [0, {operand.ndim}), "
                      f"got: {i}->{d}.")
  no_duplicate_dims(dn.start_index_map, "gather", "start_index_map")
  is_sorted(dn.collapsed_slice_dims, "gather", "collapsed_slice_dims")
  dims_in_range(dn.collapsed_slice_dims, operand.ndim, "gather", "collapsed_slice_dims")
  no_duplicate_dims(dn.collapsed_slice_dims, "gather", "collapsed_slice_dims")
  check_batching("gather", operand, indices, dn.operand_batching_dims,
                  dn.start_indices_batching_dims, "start_indices_batching_dims")
  disjoint_dims(dn.collapsed_slice_dims, dn.operand_batching_dims, "gather",
                 "collapsed_slice_dims", "operand_batching_dims")
  disjoint_dims(dn.start_index_map, dn.operand_batching_dims, "gather",
                 "start_index_map", "operand_batching_dims")
  if operand.ndim != len(slice_sizes):
    raise TypeError("Gather op must have one slice size for every input dimension; got: "
                    f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={operand.ndim}")
  if len(slice_sizes) != (len(dn.offset_dims) + len(dn.collapsed_slice_dims)
                          + len(dn.operand_batching_dims)):
    raise TypeError(
        "All components of the offset index in a gather op must either be a offset "
        f"dimension or explicitly collapsed/batching; got len(slice_sizes)="
        f"{len(slice_sizes)}, output_slice_sizes={dn.offset_dims}, collapsed_slice_dims="
        f"{dn.collapsed_slice_dims}, operand_batching_dims={dn.operand_batching_dims}.")
  if indices.size:
    for i, (s, d) in enumerate(zip(slice_sizes, operand.shape)):
      if not 0 <= s <= d:
        raise TypeError(f"Slice size at index {i} in gather op is out of range, must be "
                        f"within [0, {d} + 1), got {s}.")
  for i, d in enumerate(dn.collapsed_slice_dims):
    if slice_sizes[d] != 1:
      raise TypeError("Gather op can only collapse slice dims with bound 1, but bound is "
                      f"{slice_sizes[d]} for index {d} at position {i}.")
  for i, d in enumerate(dn.operand_batching_dims):
    if slice_sizes[d] > 1:
      raise TypeError("Gather op can only have operand batching dims with bound 0/1, but "
                      f"bound is {slice_sizes[d]} for index {d} at position {i}.")
  if mode == GatherScatterMode.ONE_HOT:
    raise ValueError("gather: mode ONE_HOT is only supported by jnp.take_along_axis; "
                     "use 'clip', 'fill' or 'promise_in_bounds'.")
  shape = gather_out_shape(indices.shape, dn, slice_sizes)
  return [ShapedArray(shape, operand.dtype, operand.weak_type)]


gather_p.def_sharding_rule(gather_rule)


def _gather_jvp_fn(g, operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                   indices_are_sorted, mode, fill_value):
  # Out-of-bounds windows of a FILL_OR_DROP gather are constant: tangent 0.
  return gather_p.bind1(
      g, indices, dimension_numbers=dimension_numbers, slice_sizes=slice_sizes,
      unique_indices=unique_indices, indices_are_sorted=indices_are_sorted, mode=mode,
      fill_value=0 if mode == GatherScatterMode.FILL_OR_DROP else None)


defjvp(gather_p, _gather_jvp_fn, None)


@gather_p.def_transpose
def _gather_transpose(cts, operand, indices, *, dimension_numbers, slice_sizes,
                      unique_indices, indices_are_sorted, mode, fill_value):
  ct, = cts
  if type(ct) is Zero:
    return [Zero(operand.aval), None]
  dn = dimension_numbers
  sdn = ScatterDimensionNumbers(
      update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
      scatter_dims_to_operand_dims=dn.start_index_map,
      operand_batching_dims=dn.operand_batching_dims,
      scatter_indices_batching_dims=dn.start_indices_batching_dims)
  zeros = full(operand.aval.shape, 0, get_aval(ct).dtype)
  return [scatter_add(zeros, indices, ct, sdn, indices_are_sorted=indices_are_sorted,
                      unique_indices=unique_indices, mode=mode), None]


def _plus1(dims) -> tuple[int, ...]:
  return tuple(d + 1 for d in dims)


@gather_p.def_batch
def _gather_batch(vals, dims, *, dimension_numbers, slice_sizes, unique_indices,
                  indices_are_sorted, mode, fill_value):
  operand, indices = vals
  operand_bdim, indices_bdim = dims
  dn = dimension_numbers
  params = dict(indices_are_sorted=indices_are_sorted, mode=mode, fill_value=fill_value)
  if indices_bdim is None:
    # The batch dimension becomes one more (leading) window dimension.
    operand = moveaxis(operand, operand_bdim, 0)
    new_dn = GatherDimensionNumbers(
        offset_dims=(0,) + _plus1(dn.offset_dims),
        collapsed_slice_dims=_plus1(dn.collapsed_slice_dims),
        start_index_map=_plus1(dn.start_index_map),
        operand_batching_dims=_plus1(dn.operand_batching_dims),
        start_indices_batching_dims=dn.start_indices_batching_dims)
    out = gather_p.bind1(operand, indices, dimension_numbers=new_dn,
                         slice_sizes=(get_aval(operand).shape[0],) + slice_sizes,
                         unique_indices=unique_indices, **params)
    return [out], [0]
  indices = moveaxis(indices, indices_bdim, 0)
  if operand_bdim is None:
    # A leading batch dimension of the indices is one more batch dimension of
    # the output; different examples may now gather the same window.
    new_dn = dn._replace(offset_dims=_plus1(dn.offset_dims),
                         start_indices_batching_dims=_plus1(dn.start_indices_batching_dims))
    out = gather_p.bind1(operand, indices, dimension_numbers=new_dn, slice_sizes=slice_sizes,
                         unique_indices=False, **dict(params, indices_are_sorted=False))
    return [out], [0]
  # Both batched: example b gathers from operand[b] (a batching dimension pair).
  operand = moveaxis(operand, operand_bdim, 0)
  size = get_aval(operand).shape[0]
  new_dn = GatherDimensionNumbers(
      offset_dims=_plus1(dn.offset_dims),
      collapsed_slice_dims=_plus1(dn.collapsed_slice_dims),
      start_index_map=_plus1(dn.start_index_map),
      operand_batching_dims=(0,) + _plus1(dn.operand_batching_dims),
      start_indices_batching_dims=(0,) + _plus1(dn.start_indices_batching_dims))
  out = gather_p.bind1(operand, indices, dimension_numbers=new_dn,
                       slice_sizes=(0 if size == 0 else 1,) + slice_sizes,
                       unique_indices=unique_indices, **params)
  return [out], [0]


@gather_p.def_lower
def _gather_lower(ctx, operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                  indices_are_sorted, mode, fill_value):
  # Every mode clamps the windows into range (as the impl does); FILL_OR_DROP
  # then replaces the windows whose index vectors needed clamping.
  op_aval, idx_aval = ctx.avals_in
  out = ctx.avals_out[0]
  if 0 in out.shape:
    return [ctx.full(0, out.shape, out.dtype)]
  dn = dimension_numbers
  uppers = [op_aval.shape[d] - slice_sizes[d] for d in dn.start_index_map]
  ok = None
  if uppers:
    clamped = lower_clamp_index_vectors(ctx, indices, idx_aval, uppers)
    if mode == GatherScatterMode.FILL_OR_DROP:
      ok = lower_unchanged(ctx, indices, clamped, idx_aval)
    indices = clamped
  indices = ctx.convert(indices, lower_index_dtype(*op_aval.shape), idx_aval.shape)
  attrs = {"dimension_numbers": gather_dnums_attr(dn, idx_aval.ndim - 1),
           "indices_are_sorted": bool(indices_are_sorted), "slice_sizes": tuple(slice_sizes)}
  res = ctx.op("stablehlo.gather", [operand, indices], out, attrs=attrs)
  if ok is not None:
    batch_dims = tuple(i for i in range(out.ndim) if i not in dn.offset_dims)
    mask = ctx.broadcast_in_dim(ok, out.shape, batch_dims)
    fill = cast_scalar(0 if fill_value is None else fill_value, out.dtype)
    res = ctx.op("stablehlo.select", [mask, res, ctx.full(fill, out.shape, out.dtype)], out)
  return [res]


def index_take(src, idxs, axes):
  """``src`` indexed by the integer arrays ``idxs`` along ``axes`` (indices
  wrap modulo the axis size)."""
  axes = tuple(int(a) for a in axes)
  shape = get_aval(src).shape
  cols = []
  for i, ax in zip(idxs, axes):
    i_shape = get_aval(i).shape
    col = broadcast_in_dim(i, i_shape + (1,), tuple(range(len(i_shape))))
    size = np.asarray(shape[ax]).astype(dtypes.dtype(i))
    cols.append(rem(add(rem(col, size), size), size))
  indices = (cols[0] if len(cols) == 1
             else concatenate(cols, len(get_aval(cols[0]).shape) - 1))
  slice_sizes = list(shape)
  for ax in axes:
    slice_sizes[ax] = 1
  nidx = get_aval(indices).shape[-1]
  dnums = GatherDimensionNumbers(offset_dims=tuple(range(1, len(shape) - nidx + 1)),
                                 collapsed_slice_dims=axes, start_index_map=axes)
  return gather(src, indices, dnums, tuple(slice_sizes))


def _scatter_abstract_eval(operand, indices, updates, *, dimension_numbers,
                           indices_are_sorted, unique_indices, mode, update_jaxpr,
                           update_consts):
  check_index_dtype(indices)
  check_same_dtypes("scatter", [operand, updates])
  dn = dimension_numbers
  if indices.ndim < 1:
    raise TypeError("Scatter index leaf dimension must be within [0, rank(indices) + 1). "
                    f"rank(indices) is {indices.ndim} and scatter index leaf dimension is "
                    "-1. (Tip: add a trailing dimension of size 1 to scalar indices.)")
  ivd = indices.ndim - 1
  expected_rank = ivd + len(dn.update_window_dims)
  if updates.ndim != expected_rank:
    raise TypeError(f"Updates tensor must be of rank {expected_rank}; got {updates.ndim}.")
  is_sorted(dn.update_window_dims, "scatter", "update_window_dims")
  no_duplicate_dims(dn.update_window_dims, "scatter", "update_window_dims")
  dims_in_range(dn.update_window_dims, updates.ndim, "scatter", "update_window_dims")
  is_sorted(dn.inserted_window_dims, "scatter", "inserted_window_dims")
  no_duplicate_dims(dn.inserted_window_dims, "scatter", "inserted_window_dims")
  dims_in_range(dn.inserted_window_dims, operand.ndim, "scatter", "inserted_window_dims")
  check_batching("scatter", operand, indices, dn.operand_batching_dims,
                  dn.scatter_indices_batching_dims, "scatter_indices_batching_dims")
  disjoint_dims(dn.inserted_window_dims, dn.operand_batching_dims, "scatter",
                 "inserted_window_dims", "operand_batching_dims")
  disjoint_dims(dn.scatter_dims_to_operand_dims, dn.operand_batching_dims, "scatter",
                 "scatter_dims_to_operand_dims", "operand_batching_dims")
  scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
  batch_in_updates = tuple(updates.shape[scatter_dims[i]] for i in
                           dn.scatter_indices_batching_dims)
  ob = tuple(operand.shape[i] for i in dn.operand_batching_dims)
  if ob != batch_in_updates:
    raise TypeError("Scatter op requires operand batching dimensions and updates batching "
                    f"dimensions to have the same shape, got {ob} and {batch_in_updates}.")
  window_size = (len(dn.update_window_dims) + len(dn.inserted_window_dims)
                 + len(dn.operand_batching_dims))
  if operand.ndim != window_size:
    raise TypeError(f"Scatter op has window of size {window_size}; doesn't match operand "
                    f"of rank {operand.ndim}.")
  if len(dn.scatter_dims_to_operand_dims) != indices.shape[ivd]:
    raise TypeError(f"Scatter op has {len(dn.scatter_dims_to_operand_dims)} elements in "
                    "scatter_dims_to_operand_dims and the bound of dimension "
                    f"index_vector_dim={ivd} of indices is {indices.shape[ivd]}. These two "
                    "numbers must be equal")
  for i, d in enumerate(dn.scatter_dims_to_operand_dims):
    if d < 0 or d >= operand.ndim:
      raise TypeError("Invalid scatter_dims_to_operand_dims mapping; domain is "
                      f"[0, {operand.ndim}), got: {i}->{d}.")
  no_duplicate_dims(dn.scatter_dims_to_operand_dims, "scatter",
                     "scatter_dims_to_operand_dims")
  max_sizes = [operand.shape[i] for i in range(operand.ndim)
               if i not in dn.inserted_window_dims and i not in dn.operand_batching_dims]
  for i, d in enumerate(dn.update_window_dims):
    if max_sizes[i] < updates.shape[d]:
      raise TypeError("Bounds of the window dimensions of updates must not exceed the "
                      "bounds of the corresponding dimensions of operand. For dimension "
                      f"{d}, updates bound is {updates.shape[d]}, operand bound is "
                      f"{max_sizes[i]}.")
  for i, d in enumerate(scatter_dims):
    if updates.shape[d] != indices.shape[i]:
      raise TypeError("Bounds of the scatter dimensions of updates must be the same as the "
                      "bounds of the corresponding dimensions of scatter indices. For "
                      f"scatter dimension {d}, updates bound is {updates.shape[d]}, indices "
                      f"bound is {indices.shape[i]}.")
  if mode == GatherScatterMode.ONE_HOT:
    raise ValueError("scatter: mode ONE_HOT is not supported; use 'clip', 'drop' or "
                     "'promise_in_bounds'.")
  return [ShapedArray(operand.shape, operand.dtype, operand.weak_type)]


def _scatter_primitive(name: str, kind: str, ufunc=None, bool_ufunc=None) -> Primitive:
  p = Primitive(name, kind=kind)   # replacing without a ufunc, else combining with it
  p.def_impl(scatter_impl_with(ufunc_combine(ufunc, bool_ufunc) if ufunc else replace_combine))
  p.def_eval_kernel(point_scatter_kernel(ufunc, bool_ufunc))
  p.def_abstract_eval(_scatter_abstract_eval)
  p.def_sharding_rule(scatter_rule)
  p.def_batch(_scatter_batcher(p))
  return p


def _bind_scatter(p, operand, indices, updates, dimension_numbers, indices_are_sorted,
                  unique_indices, mode, update_jaxpr=None, update_consts=()):
  return p.bind1(operand, indices, updates, dimension_numbers=scatter_dnums(dimension_numbers),
                 indices_are_sorted=bool(indices_are_sorted),
                 unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode),
                 update_jaxpr=update_jaxpr, update_consts=tuple(update_consts))


def _scatter_batcher(p: Primitive):
  """The batching rule of every scatter: the batch dimension leads operand and
  updates (materialised if they are unbatched); unbatched indices make it one
  more window dimension, batched indices a batching dimension pair."""
  def rule(vals, dims, *, dimension_numbers, **params):
    operand, indices, updates = vals
    operand_bdim, indices_bdim, updates_bdim = dims
    size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
    operand = bdim_at_front(operand, operand_bdim, size)
    updates = bdim_at_front(updates, updates_bdim, size)
    dn = dimension_numbers
    if indices_bdim is None:
      new_dn = ScatterDimensionNumbers(
          update_window_dims=(0,) + _plus1(dn.update_window_dims),
          inserted_window_dims=_plus1(dn.inserted_window_dims),
          scatter_dims_to_operand_dims=_plus1(dn.scatter_dims_to_operand_dims),
          operand_batching_dims=_plus1(dn.operand_batching_dims),
          scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
    else:
      indices = moveaxis(indices, indices_bdim, 0)
      new_dn = ScatterDimensionNumbers(
          update_window_dims=_plus1(dn.update_window_dims),
          inserted_window_dims=_plus1(dn.inserted_window_dims),
          scatter_dims_to_operand_dims=_plus1(dn.scatter_dims_to_operand_dims),
          operand_batching_dims=(0,) + _plus1(dn.operand_batching_dims),
          scatter_indices_batching_dims=(0,) + _plus1(dn.scatter_indices_batching_dims))
    return [p.bind1(operand, indices, updates, dimension_numbers=new_dn, **params)], [0]
  return rule


def _inverse_gather(dn: ScatterDimensionNumbers, operand_shape, updates_shape):
  """The gather (dimension numbers, slice sizes) reading back, as updates,
  the windows a scatter with ``dn`` writes."""
  gdn = GatherDimensionNumbers(
      offset_dims=tuple(dn.update_window_dims),
      collapsed_slice_dims=tuple(dn.inserted_window_dims),
      start_index_map=tuple(dn.scatter_dims_to_operand_dims),
      operand_batching_dims=tuple(dn.operand_batching_dims),
      start_indices_batching_dims=tuple(dn.scatter_indices_batching_dims))
  return gdn, scatter_window_shape(operand_shape, updates_shape, dn)


def _undefined_cts(operand, updates):
  return [Zero(operand.aval) if is_undefined_primal(operand) else None, None,
          Zero(updates.aval) if is_undefined_primal(updates) else None]


def _shape_of(x):
  return x.aval.shape if is_undefined_primal(x) else get_aval(x).shape


# -------------------------------------------------------------------- scatter
scatter_p = _scatter_primitive("scatter", "linear")


def scatter(operand, scatter_indices, updates, dimension_numbers, *,
            indices_are_sorted: bool = False, unique_indices: bool = False, mode=None):
  """XLA's Scatter where updates replace the values of ``operand``
  (out-of-bounds windows are dropped unless ``mode='clip'``)."""
  return _bind_scatter(scatter_p, operand, scatter_indices, updates, dimension_numbers,
                       indices_are_sorted, unique_indices, mode)


def scatter_apply_jaxpr(operand, scatter_indices, updates, dimension_numbers, update_jaxpr,
                        *, indices_are_sorted: bool = False, unique_indices: bool = False,
                        mode=None):
  """``scatter`` whose combiner is the traced ``update_jaxpr(old, update)``
  (a ClosedJaxpr); ``jnp``'s ``.at[].apply`` traces its function into one."""
  return _bind_scatter(scatter_p, operand, scatter_indices, updates, dimension_numbers,
                       indices_are_sorted, unique_indices, mode, update_jaxpr=update_jaxpr)


@scatter_p.def_jvp
def _scatter_jvp(primals, tangents, *, dimension_numbers, indices_are_sorted, unique_indices,
                 mode, update_jaxpr, update_consts):
  if update_jaxpr is not None:
    raise NotImplementedError("scatter_apply JVP not implemented")
  operand, indices, updates = primals
  g_operand, _, g_updates = tangents
  dn = dimension_numbers
  kw = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
  if type(g_operand) is Zero and type(g_updates) is Zero:
    out = scatter(operand, indices, updates, dn, **kw)
    return [out], [Zero.from_primal_value(out)]
  g_operand, g_updates = instantiate_zeros(g_operand), instantiate_zeros(g_updates)
  if unique_indices:   # no overlapping windows: scatter is linear in (operand, updates)
    return ([scatter(operand, indices, updates, dn, **kw)],
            [scatter(g_operand, indices, g_updates, dn, **kw)])
  # Overlapping windows: which update wins is unspecified, so tag every update
  # window with an id (1, 2, ...), scatter the ids, read them back, and keep
  # exactly the operand elements and updates that reach the output; the
  # output and its tangent are then scatter-adds of the kept values.
  upd_shape = get_aval(updates).shape
  ids_shape = tuple(1 if d in dn.update_window_dims else s for d, s in enumerate(upd_shape))
  num_ids = int(np.prod(ids_shape, dtype=np.int64))
  id_dtype = np.dtype(np.uint32 if num_ids < np.iinfo(np.uint32).max else np.uint64)
  ids = add(reshape(iota(id_dtype, num_ids), ids_shape),
            np.ones((), id_dtype))
  update_ids = broadcast_in_dim(ids, upd_shape, tuple(range(len(upd_shape))))
  op_shape = get_aval(operand).shape
  scattered_ids = scatter(full(op_shape, 0, id_dtype), indices, update_ids, dn, **kw)
  gdn, slice_sizes = _inverse_gather(dn, op_shape, upd_shape)
  gathered_ids = gather(scattered_ids, indices, gdn, slice_sizes)
  keep_operand = eq(scattered_ids, np.zeros((), id_dtype))
  keep_update = eq(update_ids, gathered_ids)

  def masked(keep, x):
    return select(keep, x, full_like(x, 0))
  out = scatter_add(masked(keep_operand, operand), indices, masked(keep_update, updates),
                    dn, **kw)
  tangent = scatter_add(masked(keep_operand, g_operand), indices,
                        masked(keep_update, g_updates), dn, **kw)
  return [out], [tangent]


@scatter_p.def_transpose
def _scatter_transpose(cts, operand, indices, updates, *, dimension_numbers,
                       indices_are_sorted, unique_indices, mode, update_jaxpr, update_consts):
  if not unique_indices:
    raise NotImplementedError("scatter transpose is only implemented where "
                              "unique_indices=True")
  ct, = cts
  if type(ct) is Zero:
    return _undefined_cts(operand, updates)
  dn = dimension_numbers
  upd_shape = _shape_of(updates)
  ct_dtype = get_aval(ct).dtype
  operand_t = update_t = None
  if is_undefined_primal(operand):   # the overwritten elements get no cotangent
    operand_t = scatter(ct, indices, full(upd_shape, 0, ct_dtype), dn,
                        indices_are_sorted=indices_are_sorted, unique_indices=True, mode=mode)
  if is_undefined_primal(updates):
    gdn, slice_sizes = _inverse_gather(dn, get_aval(ct).shape, upd_shape)
    update_t = gather(ct, indices, gdn, slice_sizes, mode=mode, fill_value=0)
  return [operand_t, None, update_t]


scatter_p.def_lower(scatter_lowering(lambda ctx, old, new, scalar: new))


# ----------------------------------------------------- scatter-add, scatter-sub
# Both are linear in operand and updates; their rules differ in one sign.
def _scatter_addsub_jvp(p: Primitive):
  def rule(primals, tangents, **params):
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    out = p.bind1(operand, indices, updates, **params)
    if type(g_operand) is Zero and type(g_updates) is Zero:
      return [out], [Zero.from_primal_value(out)]
    return [out], [p.bind1(instantiate_zeros(g_operand), indices,
                           instantiate_zeros(g_updates), **params)]
  return rule


def _scatter_addsub_transpose(p: Primitive):
  def rule(cts, operand, indices, updates, *, dimension_numbers, mode, **params):
    ct, = cts
    if type(ct) is Zero:
      return _undefined_cts(operand, updates)
    operand_t = ct if is_undefined_primal(operand) else None
    update_t = None
    if is_undefined_primal(updates):
      gdn, slice_sizes = _inverse_gather(dimension_numbers, get_aval(ct).shape,
                                         updates.aval.shape)
      update_t = gather(ct, indices, gdn, slice_sizes, mode=mode, fill_value=0)
      if p is scatter_sub_p:
        update_t = neg(update_t)
    return [operand_t, None, update_t]
  return rule


scatter_add_p = _scatter_primitive("scatter-add", "linear", np.add, np.logical_or)


def scatter_add(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False, mode=None):
  """XLA's Scatter combining with addition: repeated indices all apply;
  out-of-bounds windows are dropped unless ``mode='clip'``."""
  return _bind_scatter(scatter_add_p, operand, scatter_indices, updates, dimension_numbers,
                       indices_are_sorted, unique_indices, mode)


scatter_add_p.def_jvp(_scatter_addsub_jvp(scatter_add_p))
scatter_add_p.def_transpose(_scatter_addsub_transpose(scatter_add_p))
scatter_add_p.def_lower(scatter_lowering(combine_with("add", "or"), identity_of(-0.0, False),
                                          widen=True))

scatter_sub_p = _scatter_primitive("scatter-sub", "linear", np.subtract)


def scatter_sub(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False, mode=None):
  """XLA's Scatter combining with subtraction: repeated indices all apply;
  out-of-bounds windows are dropped unless ``mode='clip'``."""
  return _bind_scatter(scatter_sub_p, operand, scatter_indices, updates, dimension_numbers,
                       indices_are_sorted, unique_indices, mode)


scatter_sub_p.def_jvp(_scatter_addsub_jvp(scatter_sub_p))
scatter_sub_p.def_transpose(_scatter_addsub_transpose(scatter_sub_p))
scatter_sub_p.def_lower(scatter_lowering(combine_with("subtract"), identity_of(0), widen=True))


# ---------------------------------------------------------------- scatter-mul
scatter_mul_p = _scatter_primitive("scatter-mul", "differentiable", np.multiply, np.logical_and)


def scatter_mul(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False, mode=None):
  """XLA's Scatter combining with multiplication: repeated indices all apply;
  out-of-bounds windows are dropped unless ``mode='clip'``."""
  return _bind_scatter(scatter_mul_p, operand, scatter_indices, updates, dimension_numbers,
                       indices_are_sorted, unique_indices, mode)


def _scatter_mul_unique_only(unique_indices: bool) -> None:
  if not unique_indices:
    raise NotImplementedError(
        "scatter_mul gradients are only implemented if `unique_indices=True`")


def _scatter_mul_jvp_updates(g, x, i, y, *, dimension_numbers, indices_are_sorted,
                             unique_indices, mode, **params):
  _scatter_mul_unique_only(unique_indices)
  return mul(x, scatter_add(full_like(x, 0), i, g, dimension_numbers,
                            indices_are_sorted=indices_are_sorted,
                            unique_indices=unique_indices, mode=mode))


defjvp(scatter_mul_p, lambda g, x, i, y, **params: scatter_mul_p.bind1(g, i, y, **params),
       None, _scatter_mul_jvp_updates)


@scatter_mul_p.def_transpose
def _scatter_mul_transpose(cts, operand, indices, updates, *, dimension_numbers,
                           indices_are_sorted, unique_indices, mode, **params):
  ct, = cts
  if type(ct) is Zero:
    return _undefined_cts(operand, updates)
  operand_t = update_t = None
  if is_undefined_primal(operand):   # linear in the operand for known updates
    operand_t = scatter_mul(ct, indices, updates, dimension_numbers,
                            indices_are_sorted=indices_are_sorted,
                            unique_indices=unique_indices, mode=mode)
  if is_undefined_primal(updates):   # ... and in unique updates for a known operand
    _scatter_mul_unique_only(unique_indices)
    gdn, slice_sizes = _inverse_gather(dimension_numbers, get_aval(ct).shape,
                                       updates.aval.shape)
    update_t = gather(mul(ct, operand), indices, gdn, slice_sizes, mode=mode,
                      fill_value=0)
  return [operand_t, None, update_t]


scatter_mul_p.def_lower(scatter_lowering(combine_with("multiply", "and"), identity_of(1, True),
                                          widen=True))


# ------------------------------------------------------ scatter-min, scatter-max
def _scatter_extremal_jvp(p: Primitive):
  """As JAX: where several values tie for the extremum (updates, and the
  operand element if it is kept) the tangent is their average."""
  def rule(primals, tangents, *, dimension_numbers, indices_are_sorted, unique_indices, mode,
           **params):
    operand, indices, updates = primals
    g_operand, _, g_updates = tangents
    dn = dimension_numbers
    kw = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
    out = p.bind1(operand, indices, updates, dimension_numbers=dn, **kw, **params)
    if type(g_operand) is Zero and type(g_updates) is Zero:
      return [out], [Zero.from_primal_value(out)]
    g_operand, g_updates = instantiate_zeros(g_operand), instantiate_zeros(g_updates)
    gdn, slice_sizes = _inverse_gather(dn, get_aval(operand).shape, get_aval(updates).shape)
    initial = gather(operand, indices, gdn, slice_sizes)
    target = gather(out, indices, gdn, slice_sizes)
    successful = eq(updates, target)
    retained = eq(initial, target)
    zeros_op, zeros_upd = full_like(operand, 0), full_like(updates, 0)
    ones_upd = full_like(updates, 1)
    num_updates = gather(scatter_add(zeros_op, indices, select(successful, ones_upd,
                                                               zeros_upd), dn),
                         indices, gdn, slice_sizes)
    num_refs = gather(scatter_add(zeros_op, indices, ones_upd, dn), indices, gdn, slice_sizes)
    one = np.ones((), get_aval(updates).dtype)
    updates_normalizer = select(retained, div(one, add(num_updates, one)),
                                div(one, num_updates))
    updates_coef = select(successful, updates_normalizer, zeros_upd)
    operand_normalizer = select(retained, div(one, add(num_updates, one)),
                                zeros_upd)
    operand_coef = div(sub(operand_normalizer, one), num_refs)
    target_tangents = gather(g_operand, indices, gdn, slice_sizes)
    tangent_updates = add(mul(target_tangents, operand_coef),
                          mul(g_updates, updates_coef))
    return [out], [scatter_add(g_operand, indices, tangent_updates, dn, **kw)]
  return rule


scatter_min_p = _scatter_primitive("scatter-min", "differentiable", np.minimum)


def scatter_min(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False, mode=None):
  """XLA's Scatter combining with minimum: repeated indices all apply;
  out-of-bounds windows are dropped unless ``mode='clip'``."""
  return _bind_scatter(scatter_min_p, operand, scatter_indices, updates, dimension_numbers,
                       indices_are_sorted, unique_indices, mode)


scatter_min_p.def_jvp(_scatter_extremal_jvp(scatter_min_p))
scatter_min_p.def_lower(scatter_lowering(combine_with("minimum", "and"),
                                          lambda dt: extreme_value(dt, largest=True)))

scatter_max_p = _scatter_primitive("scatter-max", "differentiable", np.maximum)


def scatter_max(operand, scatter_indices, updates, dimension_numbers, *,
                indices_are_sorted: bool = False, unique_indices: bool = False, mode=None):
  """XLA's Scatter combining with maximum: repeated indices all apply;
  out-of-bounds windows are dropped unless ``mode='clip'``."""
  return _bind_scatter(scatter_max_p, operand, scatter_indices, updates, dimension_numbers,
                       indices_are_sorted, unique_indices, mode)


scatter_max_p.def_jvp(_scatter_extremal_jvp(scatter_max_p))
scatter_max_p.def_lower(scatter_lowering(combine_with("maximum", "or"),
                                          lambda dt: extreme_value(dt, largest=False)))
