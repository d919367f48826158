"""Indexing in ``jax.numpy``: ``x[idx]`` (``_getitem``) and the index
functions (``take``, ``take_along_axis``, ``nonzero``, ``choose``,
``select``, the ``*_indices`` constructors, ``unravel_index``,
``ravel_multi_index``, ``ix_``, ...); ``x.at[...]`` is in ``index_update``.

Out-of-bounds indices do not raise (there is no cheap bounds check inside a
compiled program): reads clamp or fill, writes are dropped, as in JAX.
"""
from __future__ import annotations

import math
import operator
from typing import Callable, NamedTuple, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import Array, Tracer, concrete_or_error, eval_trace, get_aval, trace_state
from openjax._src.numpy import util
from openjax._src.numpy.creation import asarray, ones
from openjax._src.numpy._ufunc_helpers import _where as _where_jit
from openjax._src.numpy.eager_programs import eager_program
from openjax._src.numpy.index_plans import rewriting_take
from openjax._src.numpy.indexer import (_to_index_dtype, _wrap_negative, add_size_to_negatives,
                                         host_floor_mod, int_fits)
from openjax._src.numpy.shape_reshaping import axis_dnums, moveaxis, take_static
from openjax._src.numpy.ufuncs import remainder

__all__ = [
    "take", "take_along_axis", "nonzero", "flatnonzero", "argwhere", "extract",
    "compress", "choose", "diag_indices", "diag_indices_from", "tril_indices",
    "triu_indices", "tril_indices_from", "triu_indices_from", "mask_indices", "unravel_index",
    "ravel_multi_index", "ix_",
]


def _getitem(x, idx):
  """``x[idx]`` with NumPy's indexing rules (out-of-bounds reads clamp)."""
  return rewriting_take(x, idx)


# -------------------------------------------------------------- host helpers
def _host(x) -> bool:
  return not isinstance(x, Tracer)


def _const(value, like):
  """A scalar constant with ``like``'s dtype and weak type (a literal when traced)."""
  return lax._convert_element_type(value, dtypes.dtype(like), dtypes.is_weakly_typed(like))


def _int_array(value):
  """A host integer result as an Array of the default int dtype."""
  return asarray(np.asarray(value).astype(dtypes.default_int_dtype()))


def _where(cond, x, y):
  x, y = util.promote_dtypes(x, y)
  shape = np.broadcast_shapes(np.shape(cond), np.shape(x), np.shape(y))
  b = lambda v: util.broadcast_to_shape(v, shape)  # noqa: E731
  return lax.select(b(cond), b(x), b(y))


def _floor_divmod(x, d: int):
  """Python's ``divmod(x, d)`` for an integer array and a positive int."""
  dc = _const(d, x)
  q, r = lax.div(x, dc), lax.rem(x, dc)
  if dtypes.kind(dtypes.dtype(x)) == "u":
    return q, r
  neg = lax.lt(r, _const(0, x))
  return (lax.select(neg, lax.sub(q, _const(1, x)), q),
          lax.select(neg, lax.add(r, dc), r))


def _reshape(a, shape):
  """Reshape; host values stay on the host (so masks built from constants
  stay concrete under tracing)."""
  return np.reshape(np.asarray(a), shape) if _host(a) else lax.reshape(a, shape)


def _ravel(a):
  return lax.reshape(a, (math.prod(np.shape(a)),))


# ---------------------------------------------------------------------- take
# (axis, index rank, operand rank) -> the gather's dimension numbers, one
# object per layout (the gather's bind then knows them canonical)
_TAKE_DNUMS: dict = {}


def _take_dnums(axis: int, nidx: int, ndim: int):
  key = (axis, nidx, ndim)
  dnums = _TAKE_DNUMS.get(key)
  if dnums is None:
    dnums = _TAKE_DNUMS[key] = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(axis)) + tuple(range(axis + nidx, ndim + nidx - 1)),
        collapsed_slice_dims=(axis,), start_index_map=(axis,))
  return dnums


def take(a, indices, axis: int | None = None, out=None, mode: str | None = None,
         unique_indices: bool = False, indices_are_sorted: bool = False, fill_value=None):
  """Elements of ``a`` at ``indices`` along ``axis`` (flattened if None).
  ``mode``: 'fill' (default; out of bounds gives ``fill_value``, NaN for
  floats), 'clip' or 'wrap'."""
  util.check_arraylike("take", a, indices)
  axis = None if axis is None else operator.index(axis)
  if out is None and mode in (None, "fill", "wrap") and _many_host_indices(indices):
    taken = _take_host_indices(a, np.asarray(indices), axis, mode, unique_indices,
                               indices_are_sorted, fill_value)
    if taken is not None:
      return taken
  return _take(a, indices, axis, out, mode, unique_indices=unique_indices,
               indices_are_sorted=indices_are_sorted, fill_value=fill_value)


# Eager calls with more host indices than this wrap them on the host, in
# place on their canonical copy, and bind the gather (the session-19 path):
# 1e6 indices, instructions a call, the program's JAX formulation against
# this: mode="wrap" 41.9M (a remainder: an integer division, compares and a
# select, each a fresh 4 MB result) against 41.5M and ~40 against ~24 ms;
# fill 36.7M against 32.7M. Fewer indices run the program (10: ~2x faster).
_HOST_INDICES_MIN = 1 << 12


def _many_host_indices(indices) -> bool:
  """An eager call's index of host values (a NumPy array or an Array) with
  more than ``_HOST_INDICES_MIN`` entries."""
  return (trace_state.trace is eval_trace and type(indices) in (np.ndarray, Array)
          and np.size(indices) > _HOST_INDICES_MIN)


def _take_axis(a, axis) -> tuple:
  """``(a, axis)`` of a take: ``a`` flattened for axis None, else the axis
  canonicalised."""
  if axis is None:
    return _ravel(a), 0
  return a, util.canonicalize_axis(axis, np.ndim(a))


def _take_host_indices(a, v: np.ndarray, axis, mode, unique_indices, indices_are_sorted,
                       fill_value):
  """``take`` of host index values ``v``, or None (an index dtype that
  cannot hold the axis size: the program's wrapping)."""
  dt = dtypes.canonicalize_dtype(v.dtype)
  if dt.kind not in "iu":
    return None
  a = util.ensure_arraylike("take", a)
  a, axis_idx = _take_axis(a, axis)
  size = get_aval(a).shape[axis_idx]
  if not size or not int_fits(size, dt):
    return None
  if mode == "wrap":
    v, gather_mode = host_floor_mod(v.astype(dt, copy=False), size), "promise_in_bounds"
  else:
    v, gather_mode = np.array(v, dt), lax.GatherScatterMode.FILL_OR_DROP
    if dt.kind == "i":
      add_size_to_negatives(v, size)
    v.setflags(write=False)
  return _gather_taken(a, v, axis_idx, gather_mode, unique_indices, indices_are_sorted,
                       fill_value)


# A jit, as JAX's ``_take`` (make_jaxpr prints ``jit[name=_take]``); eager
# calls run it as one cached library program: ``jnp.take(x, i, axis=1)`` at
# 10 elements ~57 -> see benchmarks/README.md (session 20), where the wrapper
# and a gather bind ran per call.
@util.jit(static_argnames=("axis", "mode", "unique_indices", "indices_are_sorted",
                           "fill_value"))
def _take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
          indices_are_sorted=False, fill_value=None):
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
  a, indices = util.ensure_arraylike("take", a, indices)
  a, axis_idx = _take_axis(a, axis)
  size = get_aval(a).shape[axis_idx]
  if mode is None or mode == "fill":
    gather_mode = lax.GatherScatterMode.FILL_OR_DROP
    # gather reads no negative index: wrapped first, as JAX does (its
    # ``_where``, also for unsigned indices, where it changes nothing)
    indices = _where_jit(indices < 0, indices + size, indices)
  elif mode == "raise":
    raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
  elif mode == "wrap":
    indices = remainder(indices, _const(size, indices))
    gather_mode = lax.GatherScatterMode.PROMISE_IN_BOUNDS
  elif mode == "clip":
    gather_mode = lax.GatherScatterMode.CLIP
  else:
    raise ValueError(f"Invalid mode '{mode}' for np.take")
  return _gather_taken(a, indices, axis_idx, gather_mode, unique_indices, indices_are_sorted,
                       fill_value)


def _gather_taken(a, indices, axis_idx: int, gather_mode, unique_indices, indices_are_sorted,
                  fill_value):
  """``take``'s gather of ``a`` along ``axis_idx`` at the wrapped
  ``indices`` (traced, or host values: their index column is a view)."""
  shape = get_aval(a).shape
  idx_shape = tuple(np.shape(indices))
  if shape[axis_idx] == 0:
    if math.prod(idx_shape) != 0:
      raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    return a
  if math.prod(idx_shape) == 0:
    return lax.full_like(a, 0, shape=shape[:axis_idx] + idx_shape + shape[axis_idx + 1:])
  slice_sizes = list(shape)
  slice_sizes[axis_idx] = 1
  nidx = len(idx_shape)
  idx = (np.reshape(indices, idx_shape + (1,)) if type(indices) is np.ndarray
         else lax.expand_dims(indices, (nidx,)))
  return lax.gather(a, idx, _take_dnums(axis_idx, nidx, len(shape)), tuple(slice_sizes),
                    mode=gather_mode, unique_indices=unique_indices,
                    indices_are_sorted=indices_are_sorted, fill_value=fill_value)


class _AlongAxis(NamedTuple):
  """take_along_axis's checks and gather layout for one signature."""
  axis_size: int
  out_shape: tuple
  index_dtype: np.dtype | None   # the dtype negative indices wrap in, or None
  gather_index_shape: tuple
  squeeze: tuple
  dnums: object                  # lax.GatherDimensionNumbers
  slice_sizes: tuple
  mode: object
  fill_zero: bool                # mode "one_hot": out-of-range indices give 0


# (arr shape, indices shape and dtype, axis, mode, wrap_negative_indices) ->
# _AlongAxis: the checks and the layout loop run once per signature (~25 us
# of an eager call at 10 elements).
_ALONG_AXIS_PLANS: dict = {}


def _along_axis_plan(a_shape, idx_shape, idx_dtype, axis, mode, wrap_negative_indices):
  if not dtypes.issubdtype(idx_dtype, np.integer):
    raise TypeError(f"take_along_axis indices must be of integer type, got {idx_dtype}")
  rank = len(a_shape)
  if rank != len(idx_shape):
    raise ValueError("indices and arr must have the same number of dimensions; "
                     f"{len(idx_shape)} vs. {rank}")
  axis_int = util.canonicalize_axis(axis, rank)
  axis_size = a_shape[axis_int]
  arr_shape = a_shape[:axis_int] + (1,) + a_shape[axis_int + 1:]
  out_shape = tuple(lax.broadcast_shapes(idx_shape, arr_shape))
  if wrap_negative_indices is None:
    wrap_negative_indices = mode != "promise_in_bounds"
  index_dtype = None
  if wrap_negative_indices:
    index_dtype = np.dtype(np.int64 if axis_size > np.iinfo(np.int32).max else np.int32)
  index_dims = [i for i, d in enumerate(idx_shape) if i == axis_int or d != 1]
  gather_index_shape = tuple(out_shape[i] for i in index_dims) + (1,)
  slice_sizes, offset_dims, start_map, collapsed, o_batch, i_batch, squeeze = \
      [], [], [], [], [], [], []
  new_i = j = 0
  for i in range(rank):
    if i == axis_int:
      slice_sizes.append(1)
      start_map.append(new_i)
      collapsed.append(new_i)
      new_i += 1
      j += 1
    elif idx_shape[i] == 1:
      offset_dims.append(i)
      slice_sizes.append(arr_shape[i])
      new_i += 1
    elif arr_shape[i] == 1:
      squeeze.append(i)
      j += 1
    else:
      slice_sizes.append(0 if arr_shape[i] == 0 else 1)
      o_batch.append(new_i)
      i_batch.append(j)
      new_i += 1
      j += 1
  dnums = lax.GatherDimensionNumbers(
      offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(collapsed),
      start_index_map=tuple(start_map), operand_batching_dims=tuple(o_batch),
      start_indices_batching_dims=tuple(i_batch))
  fill_zero = mode == "one_hot"   # out-of-range indices select nothing: the result is 0
  return _AlongAxis(axis_size, out_shape, index_dtype, gather_index_shape, tuple(squeeze),
                    dnums, tuple(slice_sizes), "fill" if mode is None or fill_zero else mode,
                    fill_zero)


def take_along_axis(arr, indices, axis: int | None = -1, mode=None, fill_value=None, *,
                    wrap_negative_indices: bool | None = None):
  """``arr`` indexed by ``indices`` along ``axis``, matching index and array
  positions elsewhere (``indices`` broadcasts against ``arr``)."""
  if _many_host_indices(indices):
    # many host indices: wrapped on the host in place (as ``take``'s)
    return _take_along_axis.fun(arr, indices, axis, mode, fill_value,
                                wrap_negative_indices=wrap_negative_indices)
  return _take_along_axis(arr, indices, axis, mode, fill_value,
                          wrap_negative_indices=wrap_negative_indices)


# A jit, as JAX's (make_jaxpr prints ``jit[name=take_along_axis]``); eager
# calls run it as one cached library program.
@util.jit(static_argnames=("axis", "mode", "fill_value", "wrap_negative_indices"))
def _take_along_axis(arr, indices, axis, mode, fill_value, *, wrap_negative_indices):
  a, indices = util.ensure_arraylike("take_along_axis", arr, indices)
  idx_dtype = dtypes.dtype(indices)
  idx_shape = tuple(np.shape(indices))
  if axis is None:
    if idx_dtype.kind not in "iu" and not dtypes.issubdtype(idx_dtype, np.integer):
      raise TypeError(f"take_along_axis indices must be of integer type, got {idx_dtype}")
    if len(idx_shape) != 1:
      raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape {idx_shape}")
    a, axis = _ravel(a), 0
  a_shape = tuple(np.shape(a))
  try:
    key = (a_shape, idx_shape, idx_dtype, axis, mode, wrap_negative_indices)
    plan = _ALONG_AXIS_PLANS.get(key)
  except TypeError:   # an unhashable argument: planned for this call only
    key = plan = None
  if plan is None:
    plan = _along_axis_plan(a_shape, idx_shape, idx_dtype, axis, mode, wrap_negative_indices)
    if key is not None:
      if len(_ALONG_AXIS_PLANS) >= 1024:
        _ALONG_AXIS_PLANS.clear()
      _ALONG_AXIS_PLANS[key] = plan
  if plan.axis_size == 0:
    return lax.full(plan.out_shape, 0, dtypes.dtype(a))
  dt = plan.index_dtype
  if dt is not None and _host(indices):
    # one fresh copy in the index dtype, wrapped in place (the general
    # helpers copy twice: ~2 ms at 1e6)
    indices = np.array(indices, dt)
    if dtypes.kind(dt) != "u":   # (as _wrap_negative of the converted indices)
      add_size_to_negatives(indices, plan.axis_size)
  elif dt is not None:
    indices = _wrap_negative(_to_index_dtype(indices, dt), plan.axis_size, dt)
  gather_indices = lax.reshape(indices, plan.gather_index_shape) if not _host(indices) else \
      np.reshape(np.asarray(indices), plan.gather_index_shape)
  if plan.squeeze:
    a = lax.squeeze(a, plan.squeeze)
  return lax.gather(a, gather_indices, plan.dnums, plan.slice_sizes, mode=plan.mode,
                    fill_value=0 if plan.fill_zero else fill_value)


_take_along_axis.name = "take_along_axis"   # (JAX's name, as make_jaxpr prints it)

# ------------------------------------------------------------------- nonzero
_NONZERO_SIZE_MSG = ("The size argument of jnp.nonzero must be statically specified to use "
                     "jnp.nonzero within JAX transformations.")


def _nonzero_traced(mask, shape, size: int):
  """Indices of the first ``size`` True entries of a traced mask (padded
  with index 0), via a scatter-add histogram of the running count."""
  m = lax.convert_element_type(_ravel(mask), np.int32)
  count = lax.cumsum(m, 0)
  bins = lax.full((size,), 0, np.int32)
  dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                   scatter_dims_to_operand_dims=(0,))
  hist = lax.scatter_add(bins, lax.expand_dims(count, (1,)), lax.full_like(count, 1), dn,
                         mode="drop")
  flat = lax.cumsum(hist, 0)
  dt = dtypes.default_int_dtype()
  flat = lax.convert_element_type(flat, dt)
  strides = np.cumprod((1,) + tuple(shape[::-1]))[:-1][::-1]
  return tuple(_floor_divmod(lax.div(flat, np.asarray(s, dt)), d)[1]
               for s, d in zip(strides, shape))


def _host_fills(fill_value, ndim: int) -> tuple:
  """Each column's fill where the host can write it: Python ints in the
  default int's range (they keep its dtype); else Nones (the selects')."""
  fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * ndim
  if fill_value is None or len(fills) != ndim:
    return (None,) * ndim
  high = np.iinfo(dtypes.default_int_dtype()).max
  if all(type(f) is int and -high - 1 <= f <= high for f in fills):
    return fills
  return (None,) * ndim


def nonzero(a, *, size: int | None = None, fill_value=None):
  """The indices of the nonzero elements of ``a``, one array per dimension.
  ``size`` (static) pads or truncates the result so it can be traced."""
  arr = util.ensure_arraylike("nonzero", a)
  shape = tuple(np.shape(arr))
  if not shape:
    raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                     "jnp.atleast_1d(scalar).nonzero() instead.")
  if _host(arr):
    mask = concrete = np.asarray(arr)
    if mask.dtype != np.bool_:
      mask = concrete = mask != 0
  else:
    mask = arr if dtypes.dtype(arr) == np.bool_ else lax.ne(arr, _const(0, arr))
    concrete = mask.to_concrete_value()
  if size is None:
    if concrete is None:
      concrete_or_error(None, mask, _NONZERO_SIZE_MSG)
    return tuple(_int_array(i) for i in np.nonzero(np.asarray(concrete)))
  size = concrete_or_error(operator.index, size, _NONZERO_SIZE_MSG)
  if math.prod(shape) == 0 or size == 0:
    return tuple(_int_array(np.zeros(size)) for _ in shape)
  if concrete is not None:
    found = np.nonzero(np.asarray(concrete))
    n = min(size, found[0].size)
    fills = _host_fills(fill_value, len(shape))
    cols = [np.full(size, 0 if fill is None else fill, dtypes.default_int_dtype())
            for fill in fills]
    for col, f in zip(cols, found):
      col[:n] = f[:n]
    out = tuple([asarray(col) for col in cols])
    if fills[0] is not None:
      return out   # the fills written on the host: what the selects below give
    count = int(found[0].size)
  else:
    out = _nonzero_traced(mask, shape, size)
    count = lax.reduce_sum(lax.convert_element_type(mask, np.int32), tuple(range(len(shape))))
  if fill_value is not None:
    fills = fill_value if isinstance(fill_value, tuple) else (fill_value,) * len(shape)
    if len(fills) != len(shape) or any(np.shape(v) != () for v in fills):
      raise ValueError(f"fill_value must be a scalar or a tuple of length {len(shape)}; "
                       f"got {fill_value}")
    pad = lax.ge(lax.iota(np.int32, size), lax.convert_element_type(count, np.int32)) \
        if isinstance(count, Tracer) else np.arange(size) >= count
    out = tuple(_where(pad, f, o) for f, o in zip(fills, out))
  return out


def flatnonzero(a, *, size: int | None = None, fill_value=None):
  """Indices of the nonzero elements of the flattened ``a`` (eager: flattened on the host)."""
  a = a._value if type(a) is Array else util.ensure_arraylike("flatnonzero", a)
  a = a.reshape(-1) if type(a) is np.ndarray else _reshape(a, (int(np.prod(np.shape(a))),))
  return nonzero(a, size=size, fill_value=fill_value)[0]


def argwhere(a, *, size: int | None = None, fill_value=None):
  """The indices of nonzero elements as a ``(N, a.ndim)`` array."""
  a = util.ensure_arraylike("argwhere", a)
  nd = np.ndim(a)
  cols = nonzero(_reshape(a, (1,)) if nd == 0 else a, size=size, fill_value=fill_value)
  n = np.shape(cols[0])[0]
  if nd == 0:
    return lax.full((n, 0), 0, dtypes.dtype(cols[0]))
  return lax.concatenate([lax.expand_dims(c, (1,)) for c in cols], 1)


def compress(condition, a, axis: int | None = None, *, size: int | None = None,
             fill_value=0, out=None):
  """The slices of ``a`` along ``axis`` where ``condition`` is True.
  ``size`` (static) pads with ``fill_value`` so it can be traced."""
  condition, arr, fill_value = util.ensure_arraylike("compress", condition, a, fill_value)
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
  if np.ndim(condition) != 1:
    raise ValueError("condition must be a 1D array")
  condition = lax.convert_element_type(condition, np.bool_) if not _host(condition) else \
      np.asarray(condition).astype(bool)
  if (size is None and isinstance(condition, np.ndarray)
      and (type(arr) is Array or type(arr) is np.ndarray) and trace_state.trace is eval_trace):
    # Eagerly, the host condition's positions by one static take (~5 binds less)
    a, ax = (arr, util.canonicalize_axis(axis, arr.ndim)) if axis is not None else \
        (arr if arr.ndim == 1 else _ravel(arr), 0)
    n = a.shape[ax]
    if condition[n:].any():
      raise ValueError("condition contains entries that are out of bounds")
    return take_static(a, np.flatnonzero(condition[:n]), ax)
  if axis is None:
    axis, arr = 0, _ravel(arr)
  else:
    axis = util.canonicalize_axis(axis, np.ndim(arr))
    arr = moveaxis(arr, axis, 0)
  n = np.shape(arr)[0]
  extra = condition[n:]
  condition = condition[:n]
  arr = arr[:np.shape(condition)[0]]
  if size is None:
    msg = ("The size argument of jnp.compress must be specified in order to use "
           "jnp.compress within JAX transformations like jax.jit, jax.vmap, and jax.grad. "
           "For more information, refer to the jnp.compress documentation.")
    cond_c = np.asarray(concrete_or_error(None, condition, msg))
    if np.asarray(concrete_or_error(None, extra, msg)).any():
      raise ValueError("condition contains entries that are out of bounds")
    result = arr[cond_c]
  elif not 0 <= size <= np.shape(arr)[0]:
    raise ValueError("size must be positive and not greater than the size of the array "
                     f"axis; got {size=} for a.shape[axis]={np.shape(arr)[0]}")
  elif size == 0:
    result = arr[:0]
  elif (isinstance(condition, np.ndarray) and type(arr) is Array and np.ndim(fill_value) == 0
        and trace_state.trace is eval_trace):
    result = _compress_host(condition, arr, fill_value, size)
  else:
    result = _compress_size(condition, arr, fill_value, size)
  return moveaxis(result, 0, axis)


def _compress_host(condition: np.ndarray, arr: Array, fill_value, size: int):
  """Eagerly, with a host condition: its first ``size`` positions found on
  the host and read by one gather whose rows past the count are out of
  bounds, so they give ``fill_value`` (what ``_compress_size``'s nonzero,
  max, gather and select give: ~6 binds, or a compiled scan at 1e6)."""
  shape = arr.aval.shape
  n = shape[0]
  found = np.flatnonzero(condition)[:size]
  idx = np.full((size, 1), n, np.int32 if n < 2**31 - 1 else np.int64)
  idx[:found.size, 0] = found
  return lax.gather(arr, idx, axis_dnums(len(shape), 0), (1,) + shape[1:],
                    mode=lax.GatherScatterMode.FILL_OR_DROP, fill_value=fill_value)


def _compress_size(condition, arr, fill_value, size: int):
  """The first ``size`` slices of ``arr`` where ``condition`` is True, the
  rest ``fill_value`` (staged: nonzero's scan and scatter, the gather and
  the select)."""
  (pos,) = nonzero(condition, size=size, fill_value=-1)
  valid = lax.ge(pos, _const(0, pos))
  taken = arr[lax.max(pos, _const(0, pos))]
  valid = util.broadcast_to_shape(
      lax.reshape(valid, (size,) + (1,) * (np.ndim(taken) - 1)), np.shape(taken))
  fill = lax._convert_element_type(fill_value, dtypes.dtype(taken))
  return lax.select(valid, taken, util.broadcast_to_shape(fill, np.shape(taken)))


def _method_compress(self, condition, axis=None, *, size=None, fill_value=0, out=None):
  """``x.compress(condition, axis)``: ``compress(condition, x, axis)``."""
  return compress(condition, self, axis, size=size, fill_value=fill_value, out=out)


def extract(condition, arr, *, size: int | None = None, fill_value=0):
  """The elements of ``arr`` where ``condition`` is True (both flattened)."""
  util.check_arraylike("extract", condition, arr, fill_value)
  condition = util.asarray_operand(condition)
  return compress(_reshape(condition, (int(np.prod(np.shape(condition))),)),
                  _ravel(util.asarray_operand(arr)), size=size, fill_value=fill_value)


# ------------------------------------------------------------- choose/select
def choose(a, choices, out=None, mode: str = "raise"):
  """``choices[a[i]][i]`` elementwise (all broadcast together); ``mode``
  handles out-of-range ``a``: 'raise' (needs concrete ``a``), 'wrap', 'clip'."""
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
  if type(choices) is Array and choices.ndim and trace_state.trace is eval_trace:
    # Eagerly, an array of choices as its rows in one unstack (iterating it
    # reads each row by a slice and a squeeze, twice: 26 rows ~400 us);
    # traced, row by row as JAX stages it.
    choices = lax.unstack(choices, 0)
  util.check_arraylike("choose", a, *choices)
  a = util.asarray_operand(a)
  choices = [util.asarray_operand(c) for c in choices]
  if not dtypes.issubdtype(dtypes.dtype(a), np.integer):
    raise ValueError("`a` array must be integer typed")
  n = len(choices)
  if mode == "raise":
    c = np.asarray(concrete_or_error(
        None, a, "The error occurred because jnp.choose was jit-compiled with "
        "mode='raise'. Use mode='wrap' or mode='clip' instead."))
    if ((c < 0) | (c >= n)).any():
      raise ValueError("invalid entry in choice array")
  elif mode == "wrap":
    a = _floor_divmod(a, n)[1]
  elif mode == "clip":
    a = lax.clamp(_const(0, a), a, _const(n - 1, a))
  else:
    raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
  which = lax.convert_element_type(a, np.int32) if not _host(a) else \
      np.asarray(a).astype(np.int32)
  cases = util.promote_dtypes(*choices)
  shape = np.broadcast_shapes(np.shape(which), *(np.shape(c) for c in cases))
  return lax.select_n(util.broadcast_to_shape(which, shape),
                      *(util.broadcast_to_shape(c, shape) for c in cases))


# ---------------------------------------------------------- index generators
def diag_indices(n: int, ndim: int = 2):
  """Indices of the main diagonal of an ``n``-sized, ``ndim``-dimensional array."""
  n = concrete_or_error(operator.index, n, "'n' argument of jnp.diag_indices()")
  ndim = concrete_or_error(operator.index, ndim, "'ndim' argument of jnp.diag_indices()")
  if n < 0:
    raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
  if ndim < 0:
    raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
  dt = np.dtype(np.int64) if n > np.iinfo(np.int32).max else dtypes.default_int_dtype()
  return (lax.iota(dt, n),) * ndim


def diag_indices_from(arr):
  """``diag_indices`` for the (square, at least 2-d) ``arr``."""
  arr = util.ensure_arraylike("diag_indices_from", arr)
  s = np.shape(arr)
  if len(s) < 2:
    raise ValueError("input array must be at least 2-d")
  if len(set(s)) != 1:
    raise ValueError("All dimensions of input must be of equal length")
  return diag_indices(s[0], ndim=len(s))


def _tri_args(n, k, m, name):
  n = concrete_or_error(operator.index, n, f"n argument of jnp.{name}")
  k = concrete_or_error(operator.index, k, f"k argument of jnp.{name}")
  m = n if m is None else concrete_or_error(operator.index, m, f"m argument of jnp.{name}")
  return n, k, m


def triu_indices(n: int, k: int = 0, m: int | None = None):
  """Row and column indices of the upper triangle of an ``(n, m)`` array."""
  n, k, m = _tri_args(n, k, m, "triu_indices")
  return tuple(_int_array(i) for i in np.triu_indices(n, k, m))


def tril_indices(n: int, k: int = 0, m: int | None = None):
  """Row and column indices of the lower triangle of an ``(n, m)`` array."""
  n, k, m = _tri_args(n, k, m, "tril_indices")
  return tuple(_int_array(i) for i in np.tril_indices(n, k, m))


def _shape_2d(arr, name):
  shape = tuple(arr.shape) if hasattr(arr, "shape") else np.shape(
      util.ensure_arraylike(name, arr))
  if len(shape) != 2:
    raise ValueError("Only 2-D inputs are accepted")
  return shape


def triu_indices_from(arr, k: int = 0):
  """``triu_indices`` for the shape of the 2-d ``arr``."""
  n, m = _shape_2d(arr, "triu_indices_from")
  return triu_indices(n, k=k, m=m)


def tril_indices_from(arr, k: int = 0):
  """``tril_indices`` for the shape of the 2-d ``arr``."""
  n, m = _shape_2d(arr, "tril_indices_from")
  return tril_indices(n, k=k, m=m)


def mask_indices(n: int, mask_func: Callable, k: int = 0, *, size: int | None = None):
  """Indices where ``mask_func(ones((n, n)), k)`` is nonzero."""
  i, j = nonzero(mask_func(ones((n, n)), k), size=size)
  return i, j


# ------------------------------------------------------- flat <-> multi index
def unravel_index(indices, shape):
  """Flat ``indices`` into a tuple of coordinate arrays for ``shape``;
  out-of-range indices clamp (-1 wraps to the last element)."""
  idx = util.ensure_arraylike("unravel_index", indices)
  try:
    shape = list(shape)
  except TypeError:
    shape = [shape]
  if any(np.ndim(s) != 0 for s in shape):
    raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
  if not dtypes.issubdtype(dtypes.dtype(idx), np.integer):
    raise TypeError(f"unravel_index: indices must be integers, got {dtypes.dtype(idx)}")
  shape = tuple([concrete_or_error(operator.index, s, "in `shape` argument of unravel_index()")
                 for s in shape])
  return _unravel_index(idx, shape)


@eager_program(static_argnames=("shape",))
def _unravel_index(idx, shape: tuple):
  """``unravel_index``'s arithmetic: eagerly one library program. Where the
  size fits the indices' dtype: the flat index clamped to [-size, size - 1]
  and wrapped (what the floor divmods and selects below give: past the end
  the last element, before -size the first), then a rem and a div per
  dimension (~3 + 2 x rank operations where the general form takes ~12 x
  rank)."""
  size = math.prod(shape)
  dt = dtypes.dtype(idx)
  if size and size <= dtypes.iinfo(dt).max:
    unsigned = dtypes.kind(dt) == "u"
    flat = lax.min(idx, _const(size - 1, idx)) if unsigned else \
        lax.clamp(_const(-size, idx), idx, _const(size - 1, idx))
    if not unsigned:
      flat = lax.select(lax.lt(flat, _const(0, idx)), lax.add(flat, _const(size, idx)), flat)
    coords = [None] * len(shape)
    for i in range(len(shape) - 1, -1, -1):
      d = _const(shape[i], idx)
      coords[i] = lax.rem(flat, d)
      if i:
        flat = lax.div(flat, d)
    return tuple(coords)
  out = [None] * len(shape)
  rest = idx
  for i in range(len(shape) - 1, -1, -1):
    rest, out[i] = _floor_divmod(rest, shape[i]) if shape[i] else (rest, rest)
  oob_pos = lax.gt(rest, _const(0, rest))
  unsigned = dtypes.kind(dtypes.dtype(idx)) == "u"
  oob_neg = None if unsigned else lax.lt(rest, _const(-1, rest))
  results = []
  for s, o in zip(shape, out):
    v = o if oob_neg is None else lax.select(oob_neg, lax.full_like(o, 0), o)
    results.append(lax.select(oob_pos, lax.full_like(o, s - 1), v))
  return tuple(results)


def ravel_multi_index(multi_index: Sequence, dims: Sequence[int], mode: str = "raise",
                      order: str = "C", *, dtype=None):
  """Coordinate arrays ``multi_index`` into flat indices for shape ``dims``.
  ``mode``: 'raise' (needs concrete indices), 'wrap', 'clip' or 'ignore'."""
  if len(multi_index) != len(dims):
    raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
  dims = tuple(concrete_or_error(operator.index, d,
                                 "in `dims` argument of ravel_multi_index().") for d in dims)
  util.check_arraylike("ravel_multi_index", *multi_index)
  idx = [util.asarray_operand(i) for i in multi_index]
  dtype = dtypes.result_type(int, *idx) if dtype is None else \
      dtypes.explicit_dtype(dtype, "ravel_multi_index")
  if not dtypes.issubdtype(dtype, np.integer):
    raise ValueError(f"{dtype=} is not an integer type.")
  if int(np.prod(dims)) - 1 > dtypes.iinfo(dtype).max:
    raise ValueError(f"jnp.ravel_multi_index: {dtype=} not large enough to hold flattened "
                     f"index for {dims=}. Use the dtype argument to pass a suitable dtype "
                     "(e.g. dtype=np.min_scalar_type(prod(dims))).")
  for i in idx:
    if mode == "raise":
      concrete_or_error(None, i, "The error occurred because ravel_multi_index was "
                        "jit-compiled with mode='raise'. Use mode='wrap' or mode='clip' "
                        "instead.")
    if not dtypes.issubdtype(dtypes.dtype(i), np.integer):
      raise TypeError("only int indices permitted")
  if mode == "raise":
    if any(((v < 0) | (v >= d)).any() for v, d in zip(
        (np.asarray(concrete_or_error(None, i)) for i in idx), dims)):
      raise ValueError("invalid entry in coordinates array")
  elif mode not in ("clip", "wrap", "ignore"):
    raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
  if order not in ("C", "F"):
    raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
  return _ravel_multi_index(tuple(idx), dims, mode, order, dtype)


@eager_program(static_argnames=("dims", "mode", "order", "dtype"))
def _ravel_multi_index(idx: tuple, dims: tuple, mode: str, order: str, dtype):
  """``ravel_multi_index``'s arithmetic (the indices checked): eagerly one
  library program (a floor divmod or clamp per index, the strided sum)."""
  if mode == "clip":
    idx = [lax.clamp(_const(0, i), i, _const(d - 1, i)) for i, d in zip(idx, dims)]
  elif mode == "wrap":
    idx = [_floor_divmod(i, d)[1] for i, d in zip(idx, dims)]
  if order == "F":
    strides = np.cumprod((1,) + dims[:-1])
  else:
    strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
  shape = np.broadcast_shapes(*(np.shape(i) for i in idx))
  result = np.zeros(shape, dtype)
  for i, s in zip(idx, strides):
    term = lax.mul(lax.convert_element_type(i, dtype), np.asarray(int(s), dtype))
    result = lax.add(util.broadcast_to_shape(result, shape), util.broadcast_to_shape(term, shape))
  return result if hasattr(result, "aval") else asarray(result)


def ix_(*args):
  """Open-mesh index arrays from 1-d sequences (``x[ix_(rows, cols)]``)."""
  util.check_arraylike("ix", *args)
  n = len(args)
  out = []
  for i, a in enumerate(args):
    a = util.asarray_operand(a)
    shape_a = np.shape(a)
    if len(shape_a) != 1:
      raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {shape_a}")
    if dtypes.dtype(a) == np.bool_:
      raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
    shape = [1] * n
    shape[i] = shape_a[0]
    if shape_a[0] == 0:
      out.append(lax.full(shape, 0, dtypes.default_int_dtype()))
    else:
      out.append(lax.broadcast_in_dim(a, shape, (i,)))
  return tuple(out)
