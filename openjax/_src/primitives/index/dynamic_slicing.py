"""``dynamic_slice`` and ``dynamic_update_slice``: slices at possibly traced
start indices. Starts are clamped so the slice fits in the operand, as XLA
does; negative starts count from the end unless ``allow_negative_indices`` is
False."""
from __future__ import annotations

import operator

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Array, Primitive, ShapedArray, Tracer, eval_trace, get_aval, trace_state
from openjax._src.core.array import ShardedBuffer
from openjax._src.core.sharding_rules_ops import dynamic_update_slice_rule, varying_shape_rule
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal
from openjax._src.primitives.base.batch_util import bdim_at_front
from openjax._src.primitives.base.structural import (broadcast_in_dim, instantiate_zeros, moveaxis,
                                                     squeeze)
from openjax._src.primitives.base.util import check_same_dtypes
from openjax._src.primitives.elementwise.arithmetic import add
from openjax._src.primitives.elementwise.logic import lt, select
from openjax._src.primitives.index.gather_scatter import gather_p, scatter
from openjax._src.primitives.index.indexing_util import (GatherDimensionNumbers, GatherScatterMode,
                                                         ScatterDimensionNumbers,
                                                         lower_clamp_scalar, lower_index_dtype,
                                                         shape_param)
from openjax._src.primitives.shape.shape import concatenate, full, slice_p

__all__ = [
    "dynamic_slice", "dynamic_slice_p", "dynamic_update_slice", "dynamic_update_slice_p",
    "dynamic_slice_in_dim", "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
    "dynamic_update_index_in_dim",
]


# -------------------------------------------------------------- dynamic_slice
dynamic_slice_p = Primitive("dynamic_slice", kind="linear")   # linear in the operand


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
  """The slice of ``operand`` of shape ``slice_sizes`` starting at
  ``start_indices`` (possibly traced). Starts are clamped so the slice fits;
  negative starts count from the end when ``allow_negative_indices``."""
  sizes = shape_param("dynamic_slice", "slice_sizes", slice_sizes)
  starts = _eager_starts(operand, start_indices, sizes, allow_negative_indices)
  if starts is not None:
    # Eager, concrete starts: the clamped window as one static slice (the
    # same values; lax.dynamic_slice at 10 elements ~37 -> ~10 us).
    return slice_p.bind1(operand, start_indices=starts,
                         limit_indices=tuple([s + z for s, z in zip(starts, sizes)]),
                         strides=None)
  starts = _dynamic_slice_indices(operand, start_indices, allow_negative_indices)
  return dynamic_slice_p.bind1(operand, *starts, slice_sizes=sizes)


def _clamped_starts(shape, starts, sizes) -> list[int]:
  return [int(min(max(int(s), 0), d - z)) for s, d, z in zip(starts, shape, sizes)]


@dynamic_slice_p.def_impl
def _dynamic_slice_impl(operand, *start_indices, slice_sizes):
  starts = _clamped_starts(operand.shape, start_indices, slice_sizes)
  return [operand[tuple(slice(s, s + z) for s, z in zip(starts, slice_sizes))].copy()]


def _check_start_indices(name: str, operand, start_indices) -> None:
  if len(start_indices) != operand.ndim:
    raise TypeError(f"{name}: got {len(start_indices)} start indices for operand "
                    f"{operand.str_short()}; pass one scalar start index per dimension.")
  if any(idx.ndim != 0 for idx in start_indices):
    raise TypeError(f"start_indices arguments to {name} must be scalars, "
                    f" got indices {[i.str_short() for i in start_indices]}")
  if any(i.dtype != start_indices[0].dtype or not dtypes.issubdtype(i.dtype, np.integer)
         for i in start_indices):
    sep = ": " if name == "dynamic_slice" else " "
    raise TypeError(f"index arguments to {name} must be integers of the same type, "
                    f"got{sep}{', '.join(i.dtype.name for i in start_indices)}")


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_abstract_eval(operand, *start_indices, slice_sizes):
  if len(slice_sizes) != operand.ndim:
    raise TypeError(f"dynamic_slice: slice_sizes {slice_sizes} must have one entry per "
                    f"dimension of operand {operand.str_short()}.")
  if not all(d >= s for d, s in zip(operand.shape, slice_sizes)):
    raise TypeError("slice slice_sizes must be less than or equal to operand shape, "
                    f"got slice_sizes {slice_sizes} for operand shape {operand.shape}.")
  if not all(s >= 0 for s in slice_sizes):
    raise TypeError("slice slice_sizes must be greater than or equal to zero, "
                    f"got slice_sizes of {slice_sizes}.")
  _check_start_indices("dynamic_slice", operand, start_indices)
  return [ShapedArray(slice_sizes, operand.dtype, operand.weak_type)]


dynamic_slice_p.def_sharding_rule(varying_shape_rule("dynamic_slice"))


@dynamic_slice_p.def_jvp
def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
  operand, *starts = primals
  out = dynamic_slice_p.bind1(operand, *starts, slice_sizes=slice_sizes)
  if type(tangents[0]) is Zero:
    return [out], [Zero.from_primal_value(out)]
  return [out], [dynamic_slice_p.bind1(tangents[0], *starts, slice_sizes=slice_sizes)]


@dynamic_slice_p.def_transpose
def _dynamic_slice_transpose(cts, operand, *starts, slice_sizes):
  ct, = cts
  rest = [None] * len(starts)
  if type(ct) is Zero:
    return [Zero(operand.aval)] + rest
  zeros = full(operand.aval.shape, 0, get_aval(ct).dtype)
  return [dynamic_update_slice_p.bind1(zeros, ct, *starts)] + rest


def _batched_start_indices(starts, dims, size: int):
  """The scalar start indices of a batch as one (size, n) index array."""
  cols = [broadcast_in_dim(s, (size, 1), () if d is None else (0,))
          for s, d in zip(starts, dims)]
  return cols[0] if len(cols) == 1 else concatenate(cols, 1)


def _front_zero(starts):
  """A zero start index for a new leading (batch) dimension."""
  return np.zeros((), dtypes.dtype(starts[0]) if starts else np.int32)


@dynamic_slice_p.def_batch
def _dynamic_slice_batch(vals, dims, *, slice_sizes):
  operand, *starts = vals
  operand_bdim, *start_bdims = dims
  if all(d is None for d in start_bdims):
    # Only the operand is batched: slice all of the (leading) batch dimension.
    operand = moveaxis(operand, operand_bdim, 0)
    size = get_aval(operand).shape[0]
    out = dynamic_slice_p.bind1(operand, _front_zero(starts), *starts,
                                slice_sizes=(size,) + tuple(slice_sizes))
    return [out], [0]
  # Batched starts: a gather of one clamped window per example.
  size = next(get_aval(s).shape[d] for s, d in zip(starts, start_bdims) if d is not None)
  index = _batched_start_indices(starts, start_bdims, size)
  n = len(starts)
  dnums = GatherDimensionNumbers(offset_dims=tuple(range(n)), collapsed_slice_dims=(),
                                 start_index_map=tuple(range(n)))
  return gather_p.rule("batch")(
      [operand, index], [operand_bdim, 0], dimension_numbers=dnums,
      slice_sizes=tuple(slice_sizes), unique_indices=True, indices_are_sorted=True,
      mode=GatherScatterMode.CLIP, fill_value=None)


def _lower_starts(ctx, starts, shape, sizes):
  """Start indices clamped so the window fits (in their own dtype, so huge
  unsigned starts clamp high), as i32 (i64 for huge operands)."""
  itype = lower_index_dtype(*shape)
  return [lower_clamp_scalar(ctx, s, aval, d - z, itype)
          for s, aval, d, z in zip(starts, ctx.avals_in[-len(starts):], shape, sizes)]


@dynamic_slice_p.def_lower
def _dynamic_slice_lower(ctx, operand, *starts, slice_sizes):
  out = ctx.avals_out[0]
  if 0 in out.shape:
    return [ctx.full(0, out.shape, out.dtype)]
  starts = _lower_starts(ctx, starts, ctx.avals_in[0].shape, slice_sizes)
  return [ctx.op("stablehlo.dynamic_slice", [operand, *starts], out,
                 attrs={"slice_sizes": tuple(slice_sizes)})]


# NumPy's own integer dtypes: integers without ``issubdtype``'s general
# check (~1.5 us a start index; the ml_dtypes ints take it)
_NUMPY_INTEGERS = frozenset(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64,
                                                  np.uint8, np.uint16, np.uint32, np.uint64))


def _dynamic_slice_indices(operand, start_indices, allow_negative_indices) -> list:
  """One scalar start index per dimension, negative ones wrapped (static ones
  on the host, traced ones with ``select``)."""
  shape = get_aval(operand).shape
  if not isinstance(start_indices, (list, tuple)):
    if np.ndim(start_indices) != 1:
      raise ValueError(f"Slice indices must be a 1D sequence, got {np.shape(start_indices)}")
    start_indices = list(start_indices)
  if len(start_indices) != len(shape):
    raise ValueError("Length of slice indices must match number of operand dimensions "
                     f"({len(start_indices)} vs {shape})")
  if isinstance(allow_negative_indices, bool):
    allow_negative_indices = [allow_negative_indices] * len(shape)
  out = []
  for i, d, allow_neg in zip(start_indices, shape, allow_negative_indices):
    dt = dtypes.dtype(i)
    if dt not in _NUMPY_INTEGERS and not dtypes.issubdtype(dt, np.integer):
      out.append(i)   # abstract eval reports the bad dtype
      continue
    if isinstance(i, Tracer):
      if allow_neg and dtypes.kind(dt) == "i":
        zero = np.zeros((), dt)
        d_arr = np.asarray(d).astype(dt)
        i = select(lt(i, zero), add(i, d_arr), i)
      out.append(i)
      continue
    # Static index (Python/NumPy scalar or a concrete Array): wrap on the host.
    v = np.asarray(i).astype(dt)
    if v.ndim == 0 and dtypes.kind(dt) == "i" and int(v) < 0:
      if not allow_neg:
        raise ValueError(f"Index {int(v)} is out of bounds for dimension {d} if "
                         "allow_negative_indices=False")
      v = np.asarray(int(v) + d).astype(dt)
    out.append(v)
  return out


# ------------------------------------------------------- dynamic_update_slice
dynamic_update_slice_p = Primitive("dynamic_update_slice", kind="linear")


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
  """``operand`` with ``update`` written at ``start_indices`` (possibly
  traced); starts are clamped so the update fits."""
  u_aval = getattr(update, "aval", None)
  if u_aval is not None and not (u_aval.weak_type and getattr(operand, "aval", u_aval).weak_type):
    # (Python int starts are weak: with a weak operand and update the result
    # would be weak, which the general path's int32 starts do not give.)
    starts = _eager_starts(operand, start_indices, u_aval.shape, allow_negative_indices)
    if starts is not None and len(u_aval.shape) == len(starts):
      # Eager, concrete starts: wrapped and clamped on the host, bound as
      # Python ints (dynamic_update_slice_in_dim's; ~36 -> ~12 us at 10).
      return dynamic_update_slice_p.bind1(operand, update, *starts)
  starts = _dynamic_slice_indices(operand, start_indices, allow_negative_indices)
  return dynamic_update_slice_p.bind1(operand, update, *starts)


@dynamic_update_slice_p.def_impl
def _dynamic_update_slice_impl(operand, update, *start_indices):
  starts = _clamped_starts(operand.shape, start_indices, update.shape)
  out = operand.copy()
  out[tuple(slice(s, s + z) for s, z in zip(starts, update.shape))] = update
  return [out]


@dynamic_update_slice_p.def_abstract_eval
def _dynamic_update_slice_abstract_eval(operand, update, *start_indices):
  if operand.ndim != update.ndim:
    raise TypeError("dynamic_update_slice update must have the same rank as operand, "
                    f"got update shape {update.shape} for operand shape {operand.shape}.")
  if operand.ndim != len(start_indices):
    raise TypeError("dynamic_update_slice start_indices must have length equal to the "
                    f"rank of operand, got indices {[i.str_short() for i in start_indices]} "
                    f"for operand shape {operand.shape}.")
  if not all(d >= u for d, u in zip(operand.shape, update.shape)):
    raise TypeError("dynamic_update_slice update shape must be smaller than operand "
                    f"shape, got update shape {update.shape} for operand shape "
                    f"{operand.shape}.")
  check_same_dtypes("dynamic_update_slice", [operand, update])
  _check_start_indices("dynamic_update_slice", operand, start_indices)
  weak = operand.weak_type and update.weak_type and all(i.weak_type for i in start_indices)
  return [ShapedArray(operand.shape, operand.dtype, weak)]


dynamic_update_slice_p.def_sharding_rule(dynamic_update_slice_rule)


@dynamic_update_slice_p.def_jvp
def _dynamic_update_slice_jvp(primals, tangents):
  operand, update, *starts = primals
  g_operand, g_update = tangents[:2]
  out = dynamic_update_slice_p.bind1(operand, update, *starts)
  if type(g_operand) is Zero and type(g_update) is Zero:
    return [out], [Zero.from_primal_value(out)]
  return [out], [dynamic_update_slice_p.bind1(instantiate_zeros(g_operand),
                                               instantiate_zeros(g_update), *starts)]


@dynamic_update_slice_p.def_transpose
def _dynamic_update_slice_transpose(cts, operand, update, *starts):
  ct, = cts
  rest = [None] * len(starts)
  if type(ct) is Zero:
    return [Zero(x.aval) if is_undefined_primal(x) else None for x in (operand, update)] + rest
  upd_shape = update.aval.shape if is_undefined_primal(update) else get_aval(update).shape
  operand_t = update_t = None
  if is_undefined_primal(operand):   # the overwritten window gets no cotangent
    zeros = full(upd_shape, 0, get_aval(ct).dtype)
    operand_t = dynamic_update_slice_p.bind1(ct, zeros, *starts)
  if is_undefined_primal(update):
    update_t = dynamic_slice_p.bind1(ct, *starts, slice_sizes=upd_shape)
  return [operand_t, update_t] + rest


@dynamic_update_slice_p.def_batch
def _dynamic_update_slice_batch(vals, dims):
  operand, update, *starts = vals
  operand_bdim, update_bdim, *start_bdims = dims
  size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
  operand = bdim_at_front(operand, operand_bdim, size)
  update = bdim_at_front(update, update_bdim, size)
  if all(d is None for d in start_bdims):
    return [dynamic_update_slice_p.bind1(operand, update, _front_zero(starts), *starts)], [0]
  # Batched starts: a scatter of one clamped window per example.
  index = _batched_start_indices(starts, start_bdims, size)
  window = tuple(range(1, len(starts) + 1))
  dnums = ScatterDimensionNumbers(update_window_dims=window, inserted_window_dims=(),
                                  scatter_dims_to_operand_dims=window,
                                  operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
  return [scatter(operand, index, update, dnums, indices_are_sorted=True, unique_indices=True,
                  mode=GatherScatterMode.CLIP)], [0]


@dynamic_update_slice_p.def_lower
def _dynamic_update_slice_lower(ctx, operand, update, *starts):
  op_aval, upd_aval = ctx.avals_in[:2]
  if 0 in upd_aval.shape:
    return [operand]
  starts = _lower_starts(ctx, starts, op_aval.shape, upd_aval.shape)
  # IREE writes the update into the operand's buffer in place and reads an
  # update that is a view of that buffer while writing it (a column set from
  # a row of the same matrix came out overwritten); the barrier makes the
  # update a value of its own.
  update = ctx.op("stablehlo.optimization_barrier", [update], update.type)
  return [ctx.op("stablehlo.dynamic_update_slice", [operand, update, *starts],
                 ctx.avals_out[0])]


def _scalar_zero_like(index):
  return np.zeros((), dtypes.dtype(index) if dtypes.issubdtype(
      dtypes.dtype(index), np.integer) else dtypes.default_int_dtype())


_INT32_RANGE = range(-2**31, 2**31)


def _host_start(index, dim: int, size: int, allow_negative: bool, device=None,
                check_device: bool = False):
  """(dtype, start) of one concrete scalar integer ``index`` (a Python int, a
  NumPy integer or 0-d array, an Array) along an axis of ``dim`` elements
  for a window of ``size``: the general path's wrap of a negative index, in
  the index's dtype, and its clamp, worked out on the host; None for every
  other case (with ``check_device``, also an Array committed to a device
  other than ``device``: the general path raises)."""
  t = type(index)
  if t is int:
    if index not in _INT32_RANGE:
      return None
    dt, v = dtypes.default_int_dtype(), index
    if v < 0:
      if not allow_negative:
        return None
      v += dim   # within int32: -2**31 <= v < 0 and dim < 2**31
  else:
    if t is Array:
      value = index._np
      if (value is None or type(index._buffer) is ShardedBuffer
          or (check_device and index._device not in (None, device))):
        return None
    elif t is np.ndarray or isinstance(index, np.integer):
      value = index
    else:
      return None
    dt = value.dtype
    if value.ndim or dt not in _NUMPY_INTEGERS:
      return None
    v = int(value)
    if v < 0:
      if not allow_negative:
        return None
      v = int(np.asarray(v + dim).astype(dt))   # the general path's wrap, in dt
  return dt, min(max(v, 0), dim - size)


def _eager_start(operand, index, axis, size, allow_negative):
  """Eagerly, for an Array ``operand`` and a concrete scalar integer
  ``index``: the start ``dynamic_slice`` takes along ``axis``
  (``_host_start``); None for every other case (the general path decides
  and raises)."""
  if (trace_state.trace is not eval_trace or type(operand) is not Array
      or type(operand._buffer) is ShardedBuffer or type(axis) is not int):
    return None
  shape = operand.aval.shape
  if not 0 <= axis < len(shape) or type(size) is not int or not 0 <= size <= shape[axis]:
    return None
  got = _host_start(index, shape[axis], size, allow_negative)
  return None if got is None else got[1]


def _eager_starts(operand, start_indices, sizes, allow_negative) -> tuple | None:
  """``_eager_start`` of every axis (``start_indices`` a list or tuple of
  concrete scalar integers of one dtype, as abstract evaluation requires;
  Python ints count as the default int), or None (the general path)."""
  if (trace_state.trace is not eval_trace or type(operand) is not Array
      or type(start_indices) not in (list, tuple) or type(sizes) is not tuple):
    return None
  n = len(operand.aval.shape)
  if len(start_indices) != n or len(sizes) != n:
    return None
  if type(allow_negative) is bool:
    allow_negative = (allow_negative,) * n
  elif type(allow_negative) not in (list, tuple) or len(allow_negative) != n:
    return None
  # (``_host_start`` per axis, the operand's checks made once)
  if type(operand._buffer) is ShardedBuffer:
    return None
  shape = operand.aval.shape
  first = None
  starts = []
  for axis in range(n):
    size, dim = sizes[axis], shape[axis]
    if type(size) is not int or not 0 <= size <= dim:
      return None
    got = _host_start(start_indices[axis], dim, size, allow_negative[axis],
                      operand._device, check_device=True)
    if got is None:
      return None
    dt, start = got
    if first is None:
      first = dt
    elif dt != first:
      return None   # abstract evaluation raises
    starts.append(start)
  return tuple(starts)


def _static_slice(operand, start: int, size: int, axis: int):
  """``operand[..., start:start + size, ...]`` as one static ``slice``."""
  shape = operand.aval.shape
  starts = [0] * len(shape)
  starts[axis] = start
  limits = list(shape)
  limits[axis] = start + size
  return slice_p.bind1(operand, start_indices=tuple(starts), limit_indices=tuple(limits),
                       strides=None)


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True):
  """``dynamic_slice`` along one axis: ``operand[..., start:start + size, ...]``.
  Eagerly, a concrete scalar start makes it a static slice (the same
  values, ~1.5 us where the dynamic slice's start handling and bind take
  ~10); traced, a ``dynamic_slice`` as JAX stages it."""
  start = _eager_start(operand, start_index, axis, slice_size, allow_negative_indices)
  if start is not None:
    return _static_slice(operand, start, slice_size, axis)
  shape = get_aval(operand).shape
  axis = int(axis)
  starts = [_scalar_zero_like(start_index)] * len(shape)
  starts[axis] = start_index
  sizes = list(shape)
  sizes[axis] = operator.index(slice_size)
  allow = [False] * len(shape)
  allow[axis] = allow_negative_indices
  return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True):
  """``operand[..., index, ...]`` along ``axis`` with a possibly traced index."""
  start = _eager_start(operand, index, axis, 1, allow_negative_indices)
  if start is not None:
    out = _static_slice(operand, start, 1, axis)
    return out if keepdims else squeeze(out, (axis,))
  out = dynamic_slice_in_dim(operand, index, 1, axis,
                             allow_negative_indices=allow_negative_indices)
  return out if keepdims else squeeze(out, (int(axis),))


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *,
                                allow_negative_indices: bool = True):
  """``dynamic_update_slice`` along one axis (eagerly, a concrete scalar
  start is wrapped and clamped on the host and bound as a Python int)."""
  u_aval = getattr(update, "aval", None)
  if type(axis) is int and u_aval is not None and 0 <= axis < len(u_aval.shape):
    start = _eager_start(operand, start_index, axis, u_aval.shape[axis], allow_negative_indices)
    if start is not None and len(u_aval.shape) == len(operand.aval.shape):
      starts = [0] * len(u_aval.shape)
      starts[axis] = start
      return dynamic_update_slice_p.bind1(operand, update, *starts)
  ndim = len(get_aval(operand).shape)
  axis = int(axis)
  starts = [_scalar_zero_like(start_index)] * ndim
  starts[axis] = start_index
  allow = [False] * ndim
  allow[axis] = allow_negative_indices
  return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand, update, index, axis: int, *,
                                allow_negative_indices: bool = True):
  """Write ``update`` (rank of operand, or one less) at ``index`` along ``axis``."""
  axis = int(axis)
  u_shape = get_aval(update).shape
  ndim = len(get_aval(operand).shape)
  if len(u_shape) != ndim:
    if len(u_shape) + 1 != ndim:
      raise TypeError(f"dynamic_update_index_in_dim: update {get_aval(update).str_short()} "
                      f"must have rank {ndim} or {ndim - 1}.")
    new_shape = u_shape[:axis] + (1,) + u_shape[axis:]
    update = broadcast_in_dim(update, new_shape,
                              tuple(i for i in range(ndim) if i != axis))
  return dynamic_update_slice_in_dim(operand, update, index, axis,
                                     allow_negative_indices=allow_negative_indices)
