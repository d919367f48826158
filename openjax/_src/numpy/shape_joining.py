"""jax.numpy functions that join arrays or cut them apart: concatenate and
the stacks, the splits, block, append/insert/delete (static indices), roll
and trim_zeros."""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import Array, Tracer, concrete_or_error, eval_trace, trace_state
from openjax._src.numpy import util
from openjax._src.numpy.eager_programs import (eager_program_if, quiet_dtype, sequence_program,
                                              static_key, static_value)
from openjax._src.numpy.shape_reshaping import (
    as_array, atleast_1d, atleast_2d, atleast_3d, atleast_nd, expand_dims, index_tuple, moveaxis, ravel, take_static)
from openjax._src.numpy.util import (canonicalize_axis, check_arraylike, ensure_arraylike,
                                     promote_dtypes)

__all__ = [
    "concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack", "split",
    "array_split", "hsplit", "vsplit", "dsplit", "unstack", "block", "append", "insert",
    "delete", "roll", "trim_zeros",
]


def _is_single_array(x: Any) -> bool:
  # An array (rather than a list of arrays) passed where a sequence is expected.
  return hasattr(x, "aval") or isinstance(x, np.ndarray)


def _all_arrays(xs) -> bool:
  for x in xs:
    if type(x) is not Array:
      return False
  return True


def _rows(x) -> list:
  """The sub-arrays of ``x`` along axis 0 (NumPy's iteration over an array)."""
  return [lax.index_in_dim(x, i, 0, keepdims=False) for i in range(x.shape[0])]


def _arrays_in(tup, dtype=None) -> bool:
  """Whether ``tup`` is an Array or a non-empty list/tuple of Arrays: the
  eager calls a join runs as one library program. Its 2-5 binds cost ~4.5
  us each; the program ~4.5 us plus ~0.6 a step (column_stack of a vector
  and a matrix 29 -> 16 us, hstack 22 -> 12, dstack 20 -> 11)."""
  t = type(tup)
  return (t is Array or ((t is list or t is tuple) and len(tup) > 0 and _all_arrays(tup))) \
      and quiet_dtype(dtype)


def _converts(arrays) -> bool:
  """Whether Arrays ``arrays`` differ in dtype or weak type (a join of them
  casts some first)."""
  a0 = arrays[0].aval
  for a in arrays:
    aval = a.aval
    if aval.dtype != a0.dtype or aval.weak_type != a0.weak_type:
      return True
  return False


def _binds_more(arrays, axis, dtype) -> bool:
  """Whether concatenate of the Arrays ``arrays`` binds more than its one
  concatenate: a cast to ``dtype`` or to the common dtype, a reshape for
  ``axis=None``."""
  if axis is None:
    for a in arrays:
      if a.ndim != 1:
        return True
  if dtype is None:
    return _converts(arrays)
  for a in arrays:
    aval = a.aval
    if aval.dtype != dtype or aval.weak_type:
      return True
  return False


def _cast(x, dtype):
  return lax.convert_element_type(x, dtype) if dtype is not None else as_array(x)


# --------------------------------------------------------------- concatenate
def _concatenate_array(arr, axis, dtype):
  arr = _cast(ensure_arraylike("concatenate", arr), dtype)
  if arr.ndim == 0 or arr.shape[0] == 0:
    raise ValueError("Need at least one array to concatenate.")
  if axis is None:
    return as_array(lax.reshape(arr, (arr.size,)))
  if arr.ndim == 1:
    raise ValueError("Zero-dimensional arrays cannot be concatenated.")
  axis = canonicalize_axis(axis, arr.ndim - 1)
  shape = arr.shape[1:axis + 1] + (arr.shape[0] * arr.shape[axis + 1],) + arr.shape[axis + 2:]
  dims = (*range(1, axis + 1), 0, *range(axis + 1, arr.ndim))
  return as_array(lax.reshape(arr, shape, dims))


def concatenate(arrays, axis: int | None = 0, dtype=None):
  """Join ``arrays`` along an existing ``axis`` (flattening each first when
  ``axis`` is None), promoting them to a common dtype."""
  return _concatenate(arrays, axis, dtype, True)


def _concatenate(arrays, axis, dtype, as_program: bool):
  # ``as_program``: eager calls may run as ``_concatenate_program`` (not
  # when they are that program's body, which jit's debugging fallbacks run
  # eagerly).
  if dtype is not None:
    dtype = dtypes.explicit_dtype(dtype, "concatenate")
  t = type(arrays)
  if (t is list or t is tuple) and arrays and _all_arrays(arrays):
    # Arrays (most calls): what the checks below decide comes from their
    # ranks alone (~1 us where the general path's per-array checks took
    # 5-10 us); the same lax calls follow. Eagerly, a join of more than its
    # one concatenate (casts, the reshapes of axis=None) runs as one library
    # program: ~4.5 us a bind against ~0.6 a step (concatenate_promote 14 ->
    # 10 us, with dtype= 33 -> 14, axis=None 25 -> 10).
    eager = as_program and trace_state.trace is eval_trace
    if eager and _binds_more(arrays, axis, dtype):
      return _concatenate_program(arrays, axis=axis, dtype=dtype)
    if axis is None:   # ravel each (math.prod: an aval's size costs ~5 us)
      arrays = [a if a.ndim == 1 else lax.reshape(a, (math.prod(a.shape),)) for a in arrays]
      axis = 0
    ndim = arrays[0].ndim
    if type(axis) is int and -ndim <= axis < ndim:
      if not eager:   # (eager: nothing to cast, ``_binds_more`` saw)
        arrays = promote_dtypes(*arrays) if dtype is None else [
            lax._convert_element_type(a, dtype) for a in arrays]
      return lax.concatenate(arrays, axis % ndim)
  if _is_single_array(arrays):
    if as_program and type(arrays) is Array and trace_state.trace is eval_trace:
      return _concatenate_program(arrays, axis=axis, dtype=dtype)   # a reshape or two
    return _concatenate_array(arrays, axis, dtype)
  check_arraylike("concatenate", *arrays)
  arrays = [ensure_arraylike("concatenate", a) for a in arrays]
  if not arrays:
    raise ValueError("Need at least one array to concatenate.")
  if axis is None:
    return concatenate([ravel(a) for a in arrays], axis=0, dtype=dtype)
  if np.ndim(arrays[0]) == 0:
    raise ValueError("Zero-dimensional arrays cannot be concatenated.")
  axis = canonicalize_axis(concrete_or_error(operator.index, axis, "'axis' argument of "
                                             "jnp.concatenate"), np.ndim(arrays[0]))
  arrays = promote_dtypes(*arrays) if dtype is None else [_cast(a, dtype) for a in arrays]
  return as_array(lax.concatenate(arrays, axis))


_concatenate_program = sequence_program(
    lambda arrays, axis, dtype: _concatenate(arrays, axis, dtype, False), ("axis", "dtype"))


def concat(arrays, /, *, axis: int | None = 0):
  """Join ``arrays`` along ``axis`` (the array API's concatenate)."""
  check_arraylike("concat", *arrays)
  return concatenate(arrays, axis=axis)


def stack(arrays, axis: int = 0, out=None, dtype=None):
  """Join same-shaped ``arrays`` along a new ``axis``."""
  return _stack(arrays, axis, out, dtype, True)


def _stack(arrays, axis, out, dtype, as_program: bool):
  # ``as_program``: as ``_concatenate``'s.
  if not len(arrays):
    raise ValueError("Need at least one array to stack.")
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
  eager = as_program and trace_state.trace is eval_trace
  if _is_single_array(arrays):
    if eager and type(arrays) is Array and quiet_dtype(dtype):   # expand_dims, concatenate
      return _stack_program(arrays, axis=axis, dtype=dtype)
    arrays = ensure_arraylike("stack", arrays)
    axis = canonicalize_axis(axis, arrays.ndim)
    return concatenate(expand_dims(arrays, axis + 1), axis=axis, dtype=dtype)
  t = type(arrays)
  if (t is list or t is tuple) and _all_arrays(arrays):   # most calls: nothing to check
    if eager and (dtype is not None or _converts(arrays)) and quiet_dtype(dtype):
      return _stack_program(arrays, axis=axis, dtype=dtype)   # casts and the stack: one program
    shapes = [a.shape for a in arrays]
  else:
    check_arraylike("stack", *arrays)
    arrays = [ensure_arraylike("stack", a) for a in arrays]
    shapes = [np.shape(a) for a in arrays]
  shape0 = shapes[0]
  axis = canonicalize_axis(axis, len(shape0) + 1)
  for s in shapes:
    if s != shape0:
      raise ValueError("All input arrays must have the same shape.")
  # lax.stack, as JAX: its sharding rule sees the operands' own shardings.
  arrays = [_cast(a, dtype) for a in arrays] if dtype is not None else promote_dtypes(*arrays)
  return lax.stack(arrays, axis=axis)


_stack_program = sequence_program(
    lambda arrays, axis, dtype: _stack(arrays, axis, None, dtype, False), ("axis", "dtype"))


def _as_list(fun: str, tup) -> list:
  t = type(tup)
  if (t is list or t is tuple) and _all_arrays(tup):   # most calls: nothing to check
    return tup
  if _is_single_array(tup):
    return _rows(ensure_arraylike(fun, tup))
  check_arraylike(fun, *tup)
  return [ensure_arraylike(fun, t) for t in tup]


def _rows_at_least(fun: str, x, ndim: int):
  """``atleast_{ndim}d`` of every row of the array ``x``, as one array with
  the rows along axis 0 (JAX maps atleast_*d over the rows with vmap): new
  size-1 axes by one expand_dims, not a slice per row (~8 us a row eager)."""
  x = ensure_arraylike(fun, x)
  r = x.ndim - 1
  if r >= ndim:
    return x
  # The positions numpy's atleast_*d gives a row's axes, shifted past axis 0.
  new = {0: {1: (0,), 2: (0, 1), 3: (0, 1, 2)}, 1: {2: (0,), 3: (0, 2)},
         2: {3: (2,)}}[r][ndim]
  return as_array(lax.expand_dims(x, tuple(d + 1 for d in new)))


@eager_program_if(_arrays_in, static_argnames=("dtype",))
def vstack(tup, dtype=None):
  """Stack ``tup`` row-wise: 1-D inputs become rows, then join along axis 0."""
  if _is_single_array(tup):
    return concatenate(_rows_at_least("vstack", tup, 2), axis=0, dtype=dtype)
  return concatenate([atleast_2d(m) for m in _as_list("vstack", tup)], axis=0, dtype=dtype)


@eager_program_if(_arrays_in, static_argnames=("dtype",))
def hstack(tup, dtype=None):
  """Stack ``tup`` column-wise: join along axis 1 (axis 0 for 1-D inputs)."""
  if _is_single_array(tup):
    arrs = _rows_at_least("hstack", tup, 1)
    return concatenate(arrs, axis=0 if arrs.ndim == 2 else 1, dtype=dtype)
  arrs = [atleast_1d(m) for m in _as_list("hstack", tup)]
  ndim0 = arrs[0].ndim if arrs else 1
  return concatenate(arrs, axis=0 if ndim0 == 1 else 1, dtype=dtype)


@eager_program_if(_arrays_in, static_argnames=("dtype",))
def dstack(tup, dtype=None):
  """Stack ``tup`` depth-wise: inputs become at least 3-D, joined on axis 2."""
  if _is_single_array(tup):
    return concatenate(_rows_at_least("dstack", tup, 3), axis=2, dtype=dtype)
  return concatenate([atleast_3d(m) for m in _as_list("dstack", tup)], axis=2, dtype=dtype)


@eager_program_if(_arrays_in)
def column_stack(tup):
  """Stack 1-D inputs as columns of a 2-D array (2-D inputs join on axis 1)."""
  if _is_single_array(tup) and np.ndim(tup) >= 3:
    return concatenate(tup, axis=1)
  if _is_single_array(tup):
    # Each row as a column, ``atleast_2d(row).T``: (m,) -> (m, 1), () -> (1, 1).
    x = ensure_arraylike("column_stack", tup)
    return concatenate(lax.expand_dims(x, (1, 2) if x.ndim == 1 else (2,)), axis=1)
  arrs = [lax.transpose(atleast_2d(a), (1, 0)) if a.ndim < 2 else a
          for a in _as_list("column_stack", tup)]
  return concatenate(arrs, axis=1)


# -------------------------------------------------------------------- splits
def _split(op: str, ary, indices_or_sections, axis: int = 0) -> list:
  ary = ensure_arraylike(op, ary)
  axis = concrete_or_error(operator.index, axis, f"in jax.numpy.{op} argument `axis`")
  size = ary.shape[axis]
  ios = indices_or_sections
  if isinstance(ios, (tuple, list)) or (hasattr(ios, "ndim") and hasattr(ios, "shape")
                                        and np.ndim(ios) > 0):
    ios = concrete_or_error(np.asarray, ios, f"in jax.numpy.{op} argument 1")
    bounds = [0] + [operator.index(i) for i in np.asarray(ios).tolist()] + [size]
    sizes = tuple([b - a for a, b in zip(bounds[:-1], bounds[1:])])
  else:
    sections = concrete_or_error(operator.index, ios, f"in jax.numpy.{op} argument 1")
    part, r = divmod(size, sections)
    if r == 0:
      sizes = (part,) * sections
    elif op == "array_split":
      sizes = (part + 1,) * r + (part,) * (sections - r)
    else:
      raise ValueError(f"array split does not result in an equal division: rest is {r}")
  return [as_array(p) for p in lax.split(ary, sizes, axis=axis)]


def split(ary, indices_or_sections, axis: int = 0) -> list:
  """Split ``ary`` into equal sections (an int, which must divide the axis)
  or at the given indices."""
  return _split("split", ary, indices_or_sections, axis)


def array_split(ary, indices_or_sections, axis: int = 0) -> list:
  """Like ``split``, but an int number of sections need not divide the axis."""
  return _split("array_split", ary, indices_or_sections, axis)


def vsplit(ary, indices_or_sections) -> list:
  """``split`` along axis 0."""
  return _split("vsplit", ary, indices_or_sections, 0)


def hsplit(ary, indices_or_sections) -> list:
  """``split`` along axis 1 (axis 0 for 1-D arrays)."""
  a = ensure_arraylike("hsplit", ary)
  return _split("hsplit", a, indices_or_sections, 0 if a.ndim == 1 else 1)


def dsplit(ary, indices_or_sections) -> list:
  """``split`` along axis 2."""
  return _split("dsplit", ary, indices_or_sections, 2)


def unstack(x, /, *, axis: int = 0) -> tuple:
  """The slices of ``x`` along ``axis``, as a tuple."""
  x = ensure_arraylike("unstack", x)
  if x.ndim == 0:
    raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was passed.")
  # One unstack primitive, as JAX's jaxpr has it (a split and a squeeze per
  # slice cost ~8 us a slice eager).
  # (lax.unstack's results are Arrays or tracers already: no per-slice
  # ``as_array``, ~0.4 us a slice: 1732 slices 2.1 -> 1.4 ms)
  return lax.unstack(x, canonicalize_axis(axis, x.ndim))


# --------------------------------------------------------------------- block
def _block(xs):
  if isinstance(xs, tuple):
    raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
  if isinstance(xs, list):
    if not xs:
      raise ValueError("jax.numpy.block does not allow empty list arguments")
    parts = [_block(x) for x in xs]
    depths = [d for _, d in parts]
    if any(d != depths[0] for d in depths[1:]):
      raise ValueError("Mismatched list depths in jax.numpy.block")
    arrs = [a for a, _ in parts]
    rank = max(depths[0], max(np.ndim(a) for a in arrs))
    return concatenate([atleast_nd(a, rank) for a in arrs], axis=-depths[0]), depths[0] + 1
  return as_array(ensure_arraylike("block", xs)), 1


def block(arrays):
  """Assemble an array from nested lists of blocks (the innermost lists join
  along the last axis)."""
  if type(arrays) is list and trace_state.trace is eval_trace:
    leaves: list = []
    structure = _block_structure(arrays, leaves)
    if structure is not None:
      # Eager nested lists of Arrays: the blocks as separate arguments of
      # one program, the nesting static (a nested list argument is keyed
      # by jit's general path on every call: block([[a, b], [b, a]]) 55 ->
      # 12 us).
      return _block_program(*leaves, structure=structure)
  return _block_jit(arrays)


def _block_fun(arrays):
  out, _ = _block(arrays)
  return out


_block_fun.__name__ = _block_fun.__qualname__ = "block"   # (traced: ``jit[name=block]``)
_block_jit = util.jit(_block_fun)


def _block_structure(xs, leaves: list):
  """The nesting of the lists ``xs`` with each Array replaced by its
  position in ``leaves`` (appended), or None when something else (a tuple,
  an empty list, a non-Array) is in it."""
  if type(xs) is list:
    if not xs:
      return None
    parts = []
    for x in xs:
      part = _block_structure(x, leaves)
      if part is None:
        return None
      parts.append(part)
    return tuple(parts)
  if type(xs) is Array:
    leaves.append(xs)
    return len(leaves) - 1
  return None


def _block_rebuild(structure, leaves):
  if type(structure) is tuple:
    return [_block_rebuild(s, leaves) for s in structure]
  return leaves[structure]


_block_program = util.jit(lambda *leaves, structure: _block(_block_rebuild(structure, leaves))[0],
                          static_argnames=("structure",))


# ----------------------------------------------------- append/insert/delete
@util.jit(static_argnames=('axis',))
def append(arr, values, axis: int | None = None):
  """``values`` joined to the end of ``arr`` (both flattened when ``axis`` is None)."""
  if axis is None:
    return concatenate([ravel(arr), ravel(values)], 0)
  return concatenate([arr, values], axis=axis)


def _static_indices(obj, n: int, fun: str) -> np.ndarray:
  # The concrete integer positions named by an int, slice, sequence or array.
  if isinstance(obj, slice):
    return np.arange(n)[obj]
  val = concrete_or_error(
      np.asarray, obj,
      f"The 'obj' argument of jnp.{fun}() must be static (a Python int, slice or a "
      "concrete array); openjax does not support traced indices here.")
  return np.asarray(val)


def _static_call(arr, axis) -> bool:
  """Whether an eager delete/insert of the Array ``arr`` may run as one
  library program: its slices, gathers, casts and concatenate cost ~4.5 us
  a bind against ~0.6 a step (delete 59 -> 10 us, insert 167 -> 12)."""
  return (type(arr) is Array and (axis is None or type(axis) is int)
          and trace_state.trace is eval_trace)


def delete(arr, obj, axis: int | None = None, *, assume_unique_indices: bool = False):
  """``arr`` without the entries at static index/indices/slice/mask ``obj``
  along ``axis`` (the flattened array when None)."""
  if _static_call(arr, axis) and type(assume_unique_indices) is bool:
    key = static_key(obj)
    if key is not None:
      return _delete_program(arr, key, axis, assume_unique_indices)
  return _delete(arr, obj, axis, assume_unique_indices)


def _delete(arr, obj, axis, assume_unique_indices):
  a = ensure_arraylike("delete", arr)
  if axis is None:
    a, axis = ravel(a), 0
  axis = canonicalize_axis(axis, a.ndim)
  n = a.shape[axis]
  if not isinstance(obj, (slice, int, np.integer)):
    check_arraylike("delete", a, obj)
  idx = _static_indices(obj, n, "delete")
  if idx.ndim == 0 and idx.dtype.kind in "iu":
    i = canonicalize_axis(int(idx), n)
    return concatenate([lax.slice_in_dim(a, 0, i, axis=axis),
                        lax.slice_in_dim(a, i + 1, None, axis=axis)], axis=axis)
  if idx.dtype == np.bool_:
    if idx.shape != (n,):
      raise ValueError("np.delete(arr, obj): for boolean indices, obj must be one-dimensional "
                       "with length matching specified axis.")
    keep = ~idx
  elif idx.dtype.kind in "iu" or idx.size == 0:
    keep = np.ones(n, dtype=bool)
    keep[idx.astype(np.int64)] = False
  else:
    raise ValueError(f"np.delete(arr, obj): got obj.dtype={idx.dtype}; must be integer or bool.")
  return take_static(a, np.flatnonzero(keep), axis)


_delete_program = util.jit(
    lambda arr, key, axis, unique: _delete(arr, static_value(key), axis, unique),
    static_argnums=(1, 2, 3))


def insert(arr, obj, values, axis: int | None = None):
  """``arr`` with ``values`` inserted before the static index/indices/slice
  ``obj`` along ``axis`` (the flattened array when None)."""
  if _static_call(arr, axis):
    key = static_key(obj)
    if key is not None:
      if type(values) is Array:
        return _insert_program(arr, key, values, axis)
      value_key = static_key(values)   # a Python scalar or a NumPy value: by its bits
      if value_key is not None:
        return _insert_value_program(arr, key, value_key, axis)
  return _insert(arr, obj, values, axis)


def _insert(arr, obj, values, axis):
  check_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
  a = ensure_arraylike("insert", arr)
  if axis is None:
    a, axis = ravel(a), 0
  axis = canonicalize_axis(concrete_or_error(operator.index, axis,
                                             "axis argument of jnp.insert()"), a.ndim)
  n = a.shape[axis]
  if isinstance(obj, slice):
    idx = np.arange(*obj.indices(n))
  else:
    idx = _static_indices(obj, n, "insert")
  if idx.ndim > 1:
    raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                     f"scalar; got {obj}")
  if idx.dtype.kind not in "iu":
    if idx.size == 0 and not hasattr(obj, "aval"):
      idx = idx.astype(np.int64)
    else:
      raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
  # Inserted values take a's dtype and weak type (they are written into a's buffer).
  vals = atleast_nd(lax._convert_element_type(ensure_arraylike("insert", values), a.dtype,
                                              dtypes.is_weakly_typed(a)), a.ndim)
  if idx.size == 1:
    if idx.ndim == 0:
      vals = moveaxis(vals, 0, axis)
    idx = np.full(vals.shape[axis], idx.ravel()[0])
  n_insert = np.broadcast_shapes(idx.shape, (vals.shape[axis],))[0]
  slot_shape = list(a.shape)
  slot_shape[axis] = n_insert
  if any(v not in (1, s) for v, s in zip(vals.shape, slot_shape)):
    raise ValueError(f"jnp.insert(): could not broadcast values of shape "
                     f"{tuple(vals.shape)} into shape {tuple(slot_shape)}")
  if tuple(vals.shape) != tuple(slot_shape):
    vals = lax.broadcast_in_dim(vals, slot_shape, tuple(range(a.ndim)))
  idx = np.clip(np.where(idx < 0, idx + n, idx), 0, n)
  idx = np.broadcast_to(idx, (n_insert,))
  order = np.argsort(idx, kind="stable")
  pieces, prev = [], 0
  for k in order:
    pos = int(idx[k])
    if pos > prev:
      pieces.append(lax.slice_in_dim(a, prev, pos, axis=axis))
    pieces.append(lax.slice_in_dim(vals, int(k), int(k) + 1, axis=axis))
    prev = pos
  pieces.append(lax.slice_in_dim(a, prev, n, axis=axis))
  return as_array(lax.concatenate(pieces, axis))


_insert_program = util.jit(
    lambda arr, key, values, axis: _insert(arr, static_value(key), values, axis),
    static_argnums=(1, 3))
_insert_value_program = util.jit(
    lambda arr, key, value_key, axis: _insert(arr, static_value(key), static_value(value_key),
                                              axis),
    static_argnums=(1, 2, 3))


# ---------------------------------------------------------------------- roll
# One library program, as JAX stages it (``jit[name=_roll_static]``): eager,
# its slices and concatenations run as kernel steps (~1 us each, where
# binding each one costs ~7 us).
@util.jit(static_argnames=('shift', 'axis'))
def _roll_static(a, shift: Sequence[int], axis: Sequence[int]):
  for ax, s in zip(*np.broadcast_arrays(axis, shift)):
    n = a.shape[ax]
    if n == 0:
      continue
    i = int(-s % n)
    a = lax.concatenate([lax.slice_in_dim(a, i, n, axis=int(ax)),
                         lax.slice_in_dim(a, 0, i, axis=int(ax))], int(ax))
  return as_array(a)


def _roll_dynamic(a, shift, axis: Sequence[int]):
  b_shape = lax.broadcast_shapes(tuple(shift.shape), np.shape(axis))
  if len(b_shape) != 1:
    raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
  shifts = lax.broadcast_in_dim(shift, b_shape, () if shift.ndim == 0 else (0,))
  for k, i in enumerate(np.broadcast_to(axis, b_shape)):
    i = int(i)
    n = a.shape[i]
    x = lax.convert_element_type(lax.index_in_dim(shifts, k, keepdims=False), np.int32)
    size = lax.full((), max(n, 1), np.int32)
    r = lax.rem(x, size)
    r = lax.select(lax.lt(r, lax.full((), 0, np.int32)), lax.add(r, size), r)
    doubled = lax.concatenate([a, a], i)
    a = lax.dynamic_slice_in_dim(doubled, lax.sub(lax.full((), n, np.int32), r), n, axis=i)
  return as_array(a)


def roll(a, shift, axis=None):
  """Shift the elements of ``a`` cyclically by ``shift`` along ``axis`` (the
  flattened array when None)."""
  arr = ensure_arraylike("roll", a)
  if axis is None:
    return as_array(lax.reshape(roll(ravel(arr), shift, 0), arr.shape))
  axis = tuple(canonicalize_axis(ax, arr.ndim) for ax in index_tuple(axis))
  if type(shift) is not int:   # (an int shift, most calls, is static as it is)
    if isinstance(shift, Tracer) and shift.to_concrete_value() is None:
      return _roll_dynamic(arr, shift, axis)
    if hasattr(shift, "aval"):
      shift = np.asarray(shift)
  return _roll_static(arr, index_tuple(shift), axis)


# ---------------------------------------------------------------- trim_zeros
def trim_zeros(filt, trim: str = "fb", axis=None):
  """``filt`` without its leading ('f') and/or trailing ('b') all-zero
  slices along ``axis`` (every axis when None); needs a concrete array."""
  filt = ensure_arraylike("trim_zeros", filt)
  val = concrete_or_error(np.asarray, filt,
                          "Error arose in the `filt` argument of trim_zeros()")
  val = np.asarray(val)
  axes = set(range(val.ndim)) if axis is None else {
      canonicalize_axis(ax, val.ndim) for ax in index_tuple(axis)}
  t = trim.lower()
  if not axes or ("f" not in t and "b" not in t):
    return as_array(filt)
  starts, limits = [0] * val.ndim, list(val.shape)
  for ax in axes:
    mask = val.any(axis=tuple(i for i in range(val.ndim) if i != ax))
    if not mask.any():
      limits[ax] = 0
      continue
    if "f" in t:
      starts[ax] = int(mask.argmax())
    if "b" in t:
      limits[ax] = val.shape[ax] - int(mask[::-1].argmax())
  return as_array(lax.slice(filt, starts, limits))

