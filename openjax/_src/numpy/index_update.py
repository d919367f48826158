"""``x.at[idx]``: functional indexed updates (``set``, ``add``, ``multiply``,
``min``, ``apply``, ...) lowered to one scatter, and ``get`` with an
out-of-bounds ``mode``.

Defaults follow JAX: out-of-bounds reads clamp, out-of-bounds writes are
dropped, negative indices wrap, repeated indices all apply (``add``
accumulates). Updates are cast to ``x``'s dtype.
"""
from __future__ import annotations

import math
import types
import warnings
from typing import Any, Callable

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.config import config
from openjax._src.control.trace_cache import IdentityKey
from openjax._src.core import (Array, ClosedJaxpr, ShapedArray, Tracer, eval_trace, get_aval,
                               trace_state)
from openjax._src.core.array import ShardedBuffer
from openjax._src.core.trace import eager_config
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.numpy import util
from openjax._src.numpy.creation import asarray, ones_like
from openjax._src.numpy.index_plans import gather_plan, rewriting_take
from openjax._src.numpy.ufuncs import divide as _divide, power as _power
from openjax._src.primitives.base.convert import convert_numpy
from openjax._src.primitives.index.gather_scatter import (
    scatter_add_p, scatter_apply_jaxpr, scatter_max_p, scatter_min_p, scatter_mul_p, scatter_p,
    scatter_sub_p)
from openjax._src.primitives.index.indexing_util import GatherScatterMode


def _as_update_value(x, y):
  """``y`` as an array; an in-range Python int takes ``x``'s integer dtype."""
  dt = dtypes.dtype(x)
  if (isinstance(y, int) and dtypes.issubdtype(dt, np.integer)
      and dtypes.iinfo(dt).min <= y <= dtypes.iinfo(dt).max):
    return asarray(y, dtype=dt)
  return asarray(y)


def _safe_to_cast(y, to_dtype) -> bool:
  from_dtype = dtypes.dtype(y)
  return from_dtype == to_dtype or dtypes.result_type(y, to_dtype) == to_dtype


# (x's dtype and weak type, the update's kind, x64) -> the dtype the
# general path first makes the update in (``_as_update_value``'s asarray),
# or None where it promotes ``x`` (an unsafe cast: it warns) or the kind
# has no eager form. Python scalars' kind is their type, NumPy arrays' their
# dtype, Arrays' (dtype, weak type).
_UPDATE_DTYPES: dict = {}
_SAMPLES = {bool: False, int: 0, float: 0.0, complex: 0j}
_MISSING = object()


def _update_dtype(x: Array, sample, key):
  """``_UPDATE_DTYPES``'s entry for ``key``: the general path's conversion
  decided on ``sample``, an update of the key's kind."""
  dtype = x.aval.dtype
  y = asarray(sample)
  first = None
  if _safe_to_cast(y, dtype) and dtypes.dtype(util.promote_dtypes(x, y)[0]) == dtype:
    first = dtypes.dtype(y)
  if len(_UPDATE_DTYPES) >= 4096:
    _UPDATE_DTYPES.clear()
  _UPDATE_DTYPES[key] = first
  return first


_INT_RANGES: dict = {}


def _int_range(dtype: np.dtype) -> tuple:
  """``iinfo(dtype)``'s (min, max), made once (``iinfo`` costs ~2 us)."""
  r = _INT_RANGES.get(dtype)
  if r is None:
    info = dtypes.iinfo(dtype)
    r = _INT_RANGES[dtype] = (int(info.min), int(info.max))
  return r


def _eager_update_value(x: Array, y, x64: bool):
  """Eagerly, the update ``y`` as a NumPy value of ``x``'s dtype, the
  values the general path's asarray, ``promote_dtypes`` and conversions
  give (an in-range Python int of an integer ``x`` directly, as
  ``_as_update_value``); None where that path promotes ``x`` (it warns),
  for Arrays committed to a device or split over several (the binds place
  the result) and for other kinds of update. The conversion is decided
  once per signature (~15 us of asarray, promotion and convert binds)."""
  t = type(y)
  aval = x.aval
  dtype = aval.dtype
  if t in _SAMPLES:
    if t is int and dtype.kind in "iu":
      low, high = _int_range(dtype)
      if low <= y <= high:
        return np.array(y, dtype)
    key = (dtype, aval.weak_type, t, x64)
    first = _UPDATE_DTYPES.get(key, _MISSING)
    if first is _MISSING:
      first = _update_dtype(x, _SAMPLES[t], key)
    if first is None:
      return None
    v = lax._convert_element_type(y, first, t is not bool)._value
  elif t is np.ndarray:
    key = (dtype, aval.weak_type, y.dtype, x64)
    first = _UPDATE_DTYPES.get(key, _MISSING)
    if first is _MISSING:
      first = _update_dtype(x, y, key)
    if first is None:
      return None
    v = y if y.dtype == first else y.astype(first)
  elif t is Array:
    if y._device is not None or type(y._buffer) is ShardedBuffer:
      return None
    yaval = y.aval
    key = (dtype, aval.weak_type, yaval.dtype, yaval.weak_type, x64)
    first = _UPDATE_DTYPES.get(key, _MISSING)
    if first is _MISSING:
      first = _update_dtype(x, y, key)
    if first is None:
      return None
    v = y._value
  else:
    return None
  return v if first == dtype else convert_numpy(v, dtype)


_FILL_MAX = 4096   # elements of a broadcast update written out, not viewed


def _eager_update_view(v: np.ndarray, plan):
  """Eagerly, the update's value broadcast, squeezed and reversed into the
  scatter's layout as a read-only NumPy view (the scatter takes it as a
  NumPy operand): the same values without the broadcast/squeeze/rev binds
  (~15 us of ``x.at[i].set(7)``). None for shapes that do not broadcast
  (the general path raises JAX's error)."""
  shape = plan.slice_shape
  if v.shape != shape:
    if len(v.shape) > len(shape) or any(a not in (1, b) for a, b in zip(v.shape[::-1],
                                                                        shape[::-1])):
      return None
    if math.prod(shape) <= _FILL_MAX:
      # a small copy: ~0.3 us where np.broadcast_to's view costs ~2.7
      filled = np.empty(shape, v.dtype)
      filled[...] = v
      filled.setflags(write=False)
      v = filled
    else:
      v = np.broadcast_to(v, shape)
  else:
    v = v.view()
    v.setflags(write=False)
  if plan.newaxis_dims:
    v = np.squeeze(v, tuple(plan.newaxis_dims))
  if plan.reversed_y_dims:
    v = np.flip(v, tuple(plan.reversed_y_dims))
  return v


# the gather plan's dimension numbers -> the scatter's (made once: the
# scatter's bind then knows them canonical)
_SCATTER_DNUMS: dict = {}


def _scatter_dnums(dn) -> lax.ScatterDimensionNumbers:
  dnums = _SCATTER_DNUMS.get(dn)
  if dnums is None:
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(dn.offset_dims),
        inserted_window_dims=tuple(dn.collapsed_slice_dims),
        scatter_dims_to_operand_dims=tuple(dn.start_index_map),
        operand_batching_dims=tuple(dn.operand_batching_dims),
        scatter_indices_batching_dims=tuple(dn.start_indices_batching_dims))
    if len(_SCATTER_DNUMS) >= 4096:
      _SCATTER_DNUMS.clear()
    _SCATTER_DNUMS[dn] = dnums
  return dnums


# lax's scatter functions -> their primitives, which the eager path binds
# with the parameters ``_bind_scatter`` would give them, made once per plan
# and flags (~1.5 us of wrappers, dimension-number checks and mode parsing
# a call at 10 elements).
_SCATTER_PRIMITIVES = {lax.scatter: scatter_p, lax.scatter_add: scatter_add_p,
                       lax.scatter_sub: scatter_sub_p, lax.scatter_mul: scatter_mul_p,
                       lax.scatter_min: scatter_min_p, lax.scatter_max: scatter_max_p}
# (primitive, id of the plan's dimension numbers, sorted, unique, mode) ->
# (the dimension numbers, the bind's parameters)
_BIND_PARAMS: dict = {}


def _bind_params(primitive, plan, indices_are_sorted: bool, unique_indices: bool, mode):
  """The scatter's bind parameters for ``plan`` (cached plans keep their
  dimension numbers, so the id names them while held here), or None for a
  mode that does not hash (the wrappers' path parses and checks it)."""
  dn = plan.dnums
  try:
    key = (primitive, id(dn), plan.indices_are_sorted or indices_are_sorted,
           plan.unique_indices or unique_indices, mode)
    hit = _BIND_PARAMS.get(key)
  except TypeError:
    return None
  if hit is not None and hit[0] is dn:
    return hit[1]
  params = dict(dimension_numbers=_scatter_dnums(dn), indices_are_sorted=bool(key[2]),
                unique_indices=bool(key[3]), mode=GatherScatterMode.from_any(mode),
                update_jaxpr=None, update_consts=())
  if len(_BIND_PARAMS) >= 4096:
    _BIND_PARAMS.clear()
  _BIND_PARAMS[key] = (dn, params)
  return params


def _eager_scatter(x: Array, idx, value: np.ndarray, scatter_op: Callable,
                   indices_are_sorted: bool, unique_indices: bool, mode,
                   normalize_indices: bool):
  """``scatter_update`` of an Array with a NumPy update value: the update
  goes to the scatter as a view in its layout, and the result keeps ``x``'s
  dtype and weak type (no conversion). None where the update does not
  broadcast to the indexed shape (the general path raises)."""
  plan = gather_plan(idx, x.aval.shape, normalize=normalize_indices)
  if 0 in plan.slice_shape:
    return x
  view = _eager_update_view(value, plan)
  if view is None:
    return None
  primitive = _SCATTER_PRIMITIVES.get(scatter_op)
  if primitive is not None and not plan.scalar_bool_dims:
    params = _bind_params(primitive, plan, indices_are_sorted, unique_indices, mode)
    if params is not None:
      return primitive.bind1(x, plan.indices, view, **params)
  return _scatter_by_plan(x, plan, view, scatter_op, indices_are_sorted, unique_indices, mode)


def _scatter_by_plan(x, plan, y, scatter_op: Callable, indices_are_sorted: bool,
                     unique_indices: bool, mode):
  """``scatter_op`` of ``y`` (in the plan's update layout) into ``x`` at the
  plan's indices (a scalar boolean index adds, then drops, its dimensions)."""
  if plan.scalar_bool_dims:
    x = lax.expand_dims(x, plan.scalar_bool_dims)
  out = scatter_op(x, plan.indices, y, _scatter_dnums(plan.dnums),
                   indices_are_sorted=plan.indices_are_sorted or indices_are_sorted,
                   unique_indices=plan.unique_indices or unique_indices, mode=mode)
  if plan.scalar_bool_dims:
    out = lax.squeeze(out, plan.scalar_bool_dims)
  return out


def scatter_update(x, idx, y, scatter_op: Callable, *, indices_are_sorted: bool,
                   unique_indices: bool, mode=None, normalize_indices: bool = True):
  """The value of ``x`` after ``x[idx] op= y``, as one scatter."""
  util.check_arraylike("scatter", x)
  x = util.asarray_operand(x)
  if type(x) is Array and trace_state.trace is eval_trace and eager_config.flags_ok:
    value = _eager_update_value(x, y, eager_config.x64)
    if value is not None:
      out = _eager_scatter(x, idx, value, scatter_op, indices_are_sorted, unique_indices, mode,
                           normalize_indices)
      if out is not None:
        return out
  dtype, weak = dtypes.dtype(x), dtypes.is_weakly_typed(x)
  y = _as_update_value(x, y)
  shape = get_aval(x).shape
  plan = gather_plan(idx, shape, normalize=normalize_indices)
  if not _safe_to_cast(y, dtype):
    warnings.warn(
        "scatter inputs have incompatible types: cannot safely cast value from "
        f"dtype={dtypes.dtype(y)} to dtype={dtype} with jax_numpy_dtype_promotion="
        "standard. In future JAX releases this will result in an error.",
        FutureWarning, stacklevel=3)
  if 0 in plan.slice_shape:
    return x
  x, y = util.promote_dtypes(x, y)
  y = util.broadcast_to_shape(y, plan.slice_shape)
  if plan.newaxis_dims:
    y = lax.squeeze(y, plan.newaxis_dims)
  if plan.reversed_y_dims:
    y = lax.rev(y, plan.reversed_y_dims)
  out = _scatter_by_plan(x, plan, y, scatter_op, indices_are_sorted, unique_indices, mode)
  return lax._convert_element_type(out, dtype, weak)


def _function_key(func: Callable):
  """What ``func``'s trace depends on besides the flags and the dtype: a
  Python function's code, globals, defaults and closure contents (so a
  lambda written in a loop body, made anew on every trip, keys as the one
  before it: it traces the same), any other callable itself. None where a
  closure cell is still empty."""
  if type(func) is not types.FunctionType:
    return IdentityKey(func)
  cells = func.__closure__ or ()
  try:
    contents = tuple([IdentityKey(c.cell_contents) for c in cells])
  except ValueError:
    return None
  return (func.__code__, IdentityKey(func.__globals__), IdentityKey(func.__defaults__),
          IdentityKey(func.__kwdefaults__), contents)


# (function key, dtype, flags) -> the scatter op of its traced combiner: one
# trace (~100 us) per function, and the same ClosedJaxpr on every call, so
# the scatter's eager plan (made for that jaxpr) is found again.
_APPLY_OPS: dict = {}


def _apply_scatter_op(func: Callable, dtype) -> Callable:
  """A scatter op whose combiner is ``func(old)`` (traced to a jaxpr once
  per function, dtype and flags)."""
  fkey = _function_key(func)
  key = None if fkey is None else (fkey, dtype, config.state_key())
  op = None if key is None else _APPLY_OPS.get(key)
  if op is not None:
    return op
  aval = ShapedArray((), dtype)
  jaxpr, consts = trace_to_jaxpr(lambda old, _: [func(old)], [aval, aval])
  if any(isinstance(c, Tracer) for c in consts):
    raise NotImplementedError(
        ".at[].apply: the function closes over a traced value; pass it as an argument "
        "of the jitted function by other means (e.g. apply it with jnp.where).")
  (out_aval,) = jaxpr.out_avals
  if out_aval.shape != ():
    raise TypeError(f".at[].apply: the function must map a scalar to a scalar, got "
                    f"{out_aval.str_short()} for input {aval.str_short()}.")
  closed = ClosedJaxpr(jaxpr, consts)

  def op(x, indices, y, dnums, **kw):
    return scatter_apply_jaxpr(x, indices, y, dnums, closed, **kw)
  if key is not None:
    if len(_APPLY_OPS) >= 256:
      _APPLY_OPS.clear()
    _APPLY_OPS[key] = op
  return op


# ``.at[].power`` computes the power only at the indexed positions from this
# many elements (below, the power of the whole array costs less than the
# two gathers and the scatter more).
_POWER_WHERE_INDEXED_MIN = 1024


def _power_where_indexed(x) -> bool:
  """``.at[].power`` of an eager Array whose power of 1 is exact (real
  floats and ints: the untouched elements stay the same bits)."""
  if type(x) is not Array or trace_state.trace is not eval_trace or not eager_config.flags_ok:
    return False
  aval = x.aval
  return (aval.size >= _POWER_WHERE_INDEXED_MIN and not aval.weak_type
          and (dtypes.issubdtype(aval.dtype, np.floating)
               or dtypes.issubdtype(aval.dtype, np.integer)))


class _IndexUpdateRef:
  """``x.at[idx]``: methods return an updated copy of ``x`` (nothing is
  modified in place)."""
  __slots__ = ("array", "index")

  def __init__(self, array, index):
    self.array = array
    self.index = index

  def __repr__(self):
    return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

  def _update(self, values, op, indices_are_sorted, unique_indices, mode,
              wrap_negative_indices):
    return scatter_update(self.array, self.index, values, op,
                          indices_are_sorted=indices_are_sorted,
                          unique_indices=unique_indices, mode=mode,
                          normalize_indices=wrap_negative_indices)

  def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
          fill_value=None, out_sharding=None, wrap_negative_indices=True):
    """``x[idx]``; ``mode='fill'`` returns ``fill_value`` out of bounds."""
    return rewriting_take(self.array, self.index, indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode,
                              fill_value=fill_value, normalize_indices=wrap_negative_indices)

  def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          out_sharding=None, wrap_negative_indices=True):
    """``x[idx] = values``."""
    return self._update(values, lax.scatter, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices)

  def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          out_sharding=None, wrap_negative_indices=True):
    """``x[idx] += values`` (repeated indices accumulate)."""
    return self._update(values, lax.scatter_add, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices)

  def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               out_sharding=None, wrap_negative_indices=True):
    """``x[idx] -= values``."""
    return self._update(values, lax.scatter_sub, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices)

  def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               out_sharding=None, wrap_negative_indices=True):
    """``x[idx] *= values``."""
    return self._update(values, lax.scatter_mul, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices)

  mul = multiply

  def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
             out_sharding=None, wrap_negative_indices=True):
    """``x[idx] /= values``."""
    ones = scatter_update(ones_like(self.array), self.index, values,
                          lax.scatter_mul, indices_are_sorted=indices_are_sorted,
                          unique_indices=unique_indices, mode=mode,
                          normalize_indices=wrap_negative_indices)
    return _divide(self.array, ones)

  def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):
    """``x[idx] **= values``."""
    x = self.array
    ones = scatter_update(ones_like(x), self.index, values,
                          lax.scatter_mul, indices_are_sorted=indices_are_sorted,
                          unique_indices=unique_indices, mode=mode,
                          normalize_indices=wrap_negative_indices)
    if _power_where_indexed(x):
      # x ** 1 is x: the power only where indexed (NumPy's pow of a negative
      # float32 base costs ~0.1 us an element: 1e6 elements, one indexed,
      # 40 ms -> 1 ms). Repeated indices read one exponent, the product.
      take = dict(indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                  mode=mode, normalize_indices=wrap_negative_indices)
      bases = rewriting_take(x, self.index, **take)
      exponents = rewriting_take(ones, self.index, **take)
      # flat, as the whole arrays were: a rank-0 exponent would take
      # integer_pow, with other values (negative powers of integers)
      powers = lax.reshape(_power(lax.reshape(bases, (bases.size,)),
                                  lax.reshape(exponents, (exponents.size,))),
                           bases.shape)
      return scatter_update(x, self.index, powers, lax.scatter,
                            indices_are_sorted=indices_are_sorted,
                            unique_indices=unique_indices, mode=mode,
                            normalize_indices=wrap_negative_indices)
    return _power(x, ones)

  def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          out_sharding=None, wrap_negative_indices=True):
    """``x[idx] = minimum(x[idx], values)``."""
    return self._update(values, lax.scatter_min, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices)

  def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          out_sharding=None, wrap_negative_indices=True):
    """``x[idx] = maximum(x[idx], values)``."""
    return self._update(values, lax.scatter_max, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices)

  def apply(self, func: Callable, *, indices_are_sorted=False, unique_indices=False,
            mode=None, wrap_negative_indices=True):
    """``func.at(x, idx)`` for a unary elementwise ``func``; repeated indices
    apply it repeatedly."""
    zero = lax._convert_element_type(0, dtypes.dtype(self.array),
                                     dtypes.is_weakly_typed(self.array))
    op = _apply_scatter_op(func, dtypes.dtype(self.array))
    return self._update(zero, op, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices)


class _IndexUpdateHelper:
  """``x.at``: pure equivalents of in-place updates (``x.at[idx].set(y)`` for
  ``x[idx] = y``, ``.add``, ``.subtract``, ``.multiply``, ``.divide``,
  ``.power``, ``.min``, ``.max``, ``.apply``, ``.get``). Keyword arguments:
  ``mode`` ('promise_in_bounds' (default), 'clip', 'drop', 'fill'),
  ``fill_value`` (``get``), ``indices_are_sorted``, ``unique_indices``,
  ``wrap_negative_indices``."""
  __slots__ = ("array",)

  def __init__(self, array):
    self.array = array

  def __getitem__(self, index: Any) -> _IndexUpdateRef:
    return _IndexUpdateRef(self.array, index)

  def __repr__(self):
    return f"_IndexUpdateHelper({self.array!r})"
