"""NumPy-style indices (``x[idx]``, ``x.at[idx]``): parsing, and lowering to
lax. Static ints and slices become ``slice``/``rev``/``squeeze``; scalar
traced ints ``dynamic_slice``; anything else (integer arrays, boolean masks,
strided slices next to arrays) one ``gather`` whose dimension numbers mirror
NumPy's rules, including where advanced-index dimensions land.

Index arithmetic on host values (Python ints, NumPy arrays, concrete Arrays)
is done with NumPy; traced index values go through lax.
"""
from __future__ import annotations

import enum
import operator
from typing import Any, NamedTuple, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src import tree_util
from openjax._src.core import Tracer, get_aval
from openjax._src.errors import NonConcreteBooleanIndexError
from openjax._src.numpy import util
from openjax._src.numpy.creation import asarray

GatherScatterMode = lax.GatherScatterMode


# -------------------------------------------------------------------- parsing
class Kind(enum.Enum):
  NONE = "none"
  ELLIPSIS = "ellipsis"
  SLICE = "slice"
  INTEGER = "integer"
  BOOLEAN = "boolean"
  ARRAY = "array"


class Parsed(NamedTuple):
  index: Any
  kind: Kind
  axes: tuple[int, ...]   # operand axes this index consumes


def _is_int_scalar(i) -> bool:
  return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _is_array(i) -> bool:
  return isinstance(i, (Tracer, np.ndarray)) or hasattr(i, "aval")


def _leaves(seq) -> list:
  out = []
  for e in seq:
    out.extend(_leaves(e) if isinstance(e, (list, tuple)) else [e])
  return out


def _classify(idx) -> Kind:
  if idx is None:
    return Kind.NONE
  if idx is Ellipsis:
    return Kind.ELLIPSIS
  if isinstance(idx, slice):
    return Kind.SLICE
  if _is_int_scalar(idx):
    return Kind.INTEGER
  if isinstance(idx, (bool, np.bool_)):
    return Kind.BOOLEAN
  if _is_array(idx):
    dt = idx.dtype
    if dt == np.bool_:
      return Kind.BOOLEAN
    if dtypes.issubdtype(dt, np.integer):
      return Kind.ARRAY
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dt}")
  if isinstance(idx, str):
    raise TypeError(f"JAX does not support string indexing; got {idx=}")
  if isinstance(idx, Sequence):
    leaves = _leaves(idx)
    if not leaves:   # an empty list indexes nothing (NumPy would call it float)
      return Kind.ARRAY
    if any(_is_array(e) and np.ndim(e) for e in leaves):
      raise TypeError("Indexing with a list that contains arrays is not supported; "
                      "use jnp.stack to build one index array first.")
    dt = dtypes.result_type(*(dtypes.dtype(e) for e in leaves))
    if dt == np.bool_:
      return Kind.BOOLEAN
    if dtypes.issubdtype(dt, np.integer):
      return Kind.ARRAY
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {dt}")
  if isinstance(idx, (float, complex, np.generic)):
    raise TypeError("Indexer must have integer or boolean type, got indexer with type "
                    f"{np.dtype(type(idx))}")
  raise IndexError("only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and "
                   f"integer or boolean arrays are valid indices. Got {idx}")


def index_tuple(idx) -> tuple:
  """``idx`` as a tuple; a bare list is refused as JAX does (ambiguous)."""
  if isinstance(idx, tuple):
    return idx
  if isinstance(idx, Sequence) and not isinstance(idx, str):
    if any(isinstance(e, (Sequence, slice)) and not isinstance(e, str) or e is None
           or e is Ellipsis or (_is_array(e) and np.ndim(e) != 0) for e in idx):
      fix = "use `arr[tuple(seq)]` instead of `arr[seq]`"
    else:
      fix = "use `arr[array(seq)]` instead of `arr[seq]`"
    raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                    f"allowed; {fix}. See https://github.com/jax-ml/jax/issues/4564 for "
                    "more information.")
  return (idx,)


def parse(idx, shape: tuple[int, ...]) -> list[Parsed]:
  """Classify each index and assign the operand axes it consumes."""
  indices = index_tuple(idx)
  kinds = [_classify(i) for i in indices]
  consumed = [0 if k in (Kind.NONE, Kind.ELLIPSIS) else
              np.ndim(i) if k == Kind.BOOLEAN else 1 for i, k in zip(indices, kinds)]
  ellipses = [n for n, k in enumerate(kinds) if k == Kind.ELLIPSIS]
  if len(ellipses) > 1:
    raise IndexError("an index can only have a single ellipsis ('...')")
  total = sum(consumed)
  if total > len(shape):
    raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but {total} "
                     "were indexed")
  if ellipses:
    consumed[ellipses[0]] = len(shape) - total
  out, axis = [], 0
  for i, k, n in zip(indices, kinds, consumed):
    out.append(Parsed(i, k, tuple(range(axis, axis + n))))
    axis += n
  return out


def expand_ellipsis(parsed: list[Parsed], ndim: int) -> list[Parsed]:
  """Ellipsis and the implicit trailing axes become explicit ``slice(None)``."""
  out, used = [], 0
  for p in parsed:
    used += len(p.axes)
    if p.kind == Kind.ELLIPSIS:
      out.extend(Parsed(slice(None), Kind.SLICE, (a,)) for a in p.axes)
    else:
      out.append(p)
  out.extend(Parsed(slice(None), Kind.SLICE, (a,)) for a in range(used, ndim))
  return out


def _is_static(v) -> bool:
  return v is None or not isinstance(v, Tracer) or v.to_concrete_value() is not None


def _check_static_slices(parsed: list[Parsed]) -> None:
  for pos, p in enumerate(parsed):
    if p.kind == Kind.SLICE and not all(
        _is_static(v) for v in (p.index.start, p.index.stop, p.index.step)):
      raise IndexError(
          "Array slice indices must have static start/stop/step to be used with NumPy "
          f"indexing syntax. Got {p.index} at position {pos}. To index an array at a "
          "dynamic position with a static slice size, use lax.dynamic_slice/"
          "dynamic_update_slice instead (JAX does not support dynamically sized "
          "arrays within traced functions).")


def _slice_range(s: slice, size: int) -> range:
  return range(*slice(*(None if v is None else operator.index(v)
                        for v in (s.start, s.stop, s.step))).indices(size))


def _index_dtype(shape) -> np.dtype:
  return np.dtype(np.int64) if any(d > np.iinfo(np.int32).max for d in shape) \
      else np.dtype(np.int32)


def mode_of(mode) -> GatherScatterMode:
  return GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else GatherScatterMode.from_any(mode)


# --------------------------------------------------------------- static slice
class StaticSlice(NamedTuple):
  starts: list
  limits: list
  strides: list
  rev_axes: list
  squeeze_axes: list
  newaxis_dims: list


def to_static_slice(parsed, shape, *, mode, normalize: bool) -> StaticSlice | None:
  """The ``slice``/``rev``/``squeeze`` plan for static ints and slices, or None."""
  if mode_of(mode) not in (GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP):
    return None
  clip = mode_of(mode) == GatherScatterMode.CLIP
  starts, limits, strides, rev_axes, squeeze_axes, newaxis = [], [], [], [], [], []
  for p in expand_ellipsis(parsed, len(shape)):
    if p.kind == Kind.NONE:
      newaxis.append(len(starts) - len(squeeze_axes) + len(newaxis))
    elif p.kind == Kind.INTEGER:
      (axis,) = p.axes
      size = shape[axis]
      i = operator.index(p.index)
      i = i + size if normalize and i < 0 else i
      if size == 0 or (not clip and not 0 <= i < size):
        return None   # out of bounds: the dynamic path clamps it
      i = min(max(i, 0), size - 1)
      starts.append(i)
      limits.append(i + 1)
      strides.append(1)
      squeeze_axes.append(axis)
    elif p.kind == Kind.SLICE:
      if not all(_is_static(v) for v in (p.index.start, p.index.stop, p.index.step)):
        return None
      (axis,) = p.axes
      r = _slice_range(p.index, shape[axis])
      if r.step < 0:
        lo = r[-1] if len(r) else 0
        starts.append(lo)
        limits.append(r[0] + 1 if len(r) else 0)
        strides.append(-r.step)
        rev_axes.append(axis)
      else:
        starts.append(r.start if len(r) else 0)
        limits.append(r.start + (len(r) - 1) * r.step + 1 if len(r) else 0)
        strides.append(r.step)
    else:
      return None
  return StaticSlice(starts, limits, strides, rev_axes, squeeze_axes, newaxis)


def apply_static_slice(arr, plan: StaticSlice):
  shape = get_aval(arr).shape
  out = arr
  trivial = all(s == 1 for s in plan.strides) and all(
      a == 0 and b == d for a, b, d in zip(plan.starts, plan.limits, shape))
  if not trivial:
    strides = None if all(s == 1 for s in plan.strides) else tuple(plan.strides)
    out = lax.slice(out, tuple(plan.starts), tuple(plan.limits), strides)
  if plan.rev_axes:
    out = lax.rev(out, plan.rev_axes)
  if plan.squeeze_axes:
    out = lax.squeeze(out, plan.squeeze_axes)
  if plan.newaxis_dims:
    out = lax.expand_dims(out, plan.newaxis_dims)
  return out


# -------------------------------------------------------------- dynamic slice
class DynamicSlice(NamedTuple):
  starts: list
  sizes: list
  rev_axes: list
  squeeze_axes: list
  newaxis_dims: list
  trivial: bool


def to_dynamic_slice(parsed, shape, *, mode) -> DynamicSlice | None:
  """The ``dynamic_slice`` plan when the only non-static indices are scalar
  integers (traced or out of bounds), or None."""
  if mode is not None and mode_of(mode) not in (GatherScatterMode.PROMISE_IN_BOUNDS,
                                                GatherScatterMode.CLIP):
    return None
  starts, sizes, rev_axes, squeeze_axes, newaxis = [], [], [], [], []
  trivial = True
  for p in expand_ellipsis(parsed, len(shape)):
    if p.kind == Kind.NONE:
      newaxis.append(len(starts) - len(squeeze_axes) + len(newaxis))
    elif p.kind == Kind.INTEGER or (p.kind == Kind.ARRAY and _is_array(p.index)
                                    and np.ndim(p.index) == 0):
      (axis,) = p.axes
      if shape[axis] == 0:
        return None
      trivial = False
      i = p.index
      starts.append(np.asarray(i, dtypes.dtype(i)) if not _is_array(i) else i)
      sizes.append(1)
      squeeze_axes.append(axis)
    elif p.kind == Kind.SLICE:
      if not all(_is_static(v) for v in (p.index.start, p.index.stop, p.index.step)):
        return None
      if p.index.step is not None and operator.index(p.index.step) not in (1, -1):
        return None
      trivial = trivial and p.index == slice(None)
      (axis,) = p.axes
      r = _slice_range(p.index, shape[axis])
      lo = (r[-1] if r.step < 0 else r[0]) if len(r) else 0
      starts.append(np.asarray(lo, np.int32))
      sizes.append(len(r))
      if r.step < 0:
        rev_axes.append(axis)
    else:
      return None
  if len(starts) > 1:   # dynamic_slice needs one index dtype
    dt = _index_dtype(shape)
    starts = [lax.convert_element_type(s, dt) if isinstance(s, Tracer)
              else np.asarray(s).astype(dt) for s in starts]
  return DynamicSlice(starts, sizes, rev_axes, squeeze_axes, newaxis, trivial)


def apply_dynamic_slice(arr, plan: DynamicSlice, normalize: bool):
  out = arr
  if not plan.trivial:
    out = lax.dynamic_slice(out, plan.starts, plan.sizes, allow_negative_indices=normalize)
  if plan.rev_axes:
    out = lax.rev(out, plan.rev_axes)
  if plan.squeeze_axes:
    out = lax.squeeze(out, plan.squeeze_axes)
  if plan.newaxis_dims:
    out = lax.expand_dims(out, plan.newaxis_dims)
  return out


# --------------------------------------------------------------------- gather
class GatherPlan(NamedTuple):
  slice_shape: tuple          # shape of x[idx]
  gather_slice_shape: tuple   # slice_sizes of the gather
  indices: Any                # gather indices (host ndarray or traced)
  dnums: Any                  # GatherDimensionNumbers
  unique_indices: bool
  indices_are_sorted: bool
  reversed_y_dims: tuple      # dims reversed after the gather (negative steps)
  newaxis_dims: tuple         # dims of None indices, inserted after the gather
  scalar_bool_dims: tuple     # size-1 axes inserted into x for scalar bool indices


def _to_index_array(i):
  """A list/scalar index as an array (host NumPy when no tracers inside)."""
  if _is_array(i):
    return i
  if isinstance(i, Sequence) and any(isinstance(e, Tracer) for e in _leaves(i)):
    return asarray(i)
  arr = np.asarray(i)
  if arr.size == 0 and arr.dtype.kind not in "biu":
    arr = arr.astype(np.int32)
  return arr.astype(dtypes.canonicalize_dtype(arr.dtype))


def expand_bool_indices(parsed: list[Parsed], shape) -> list[Parsed]:
  """Boolean masks become the integer arrays of their True positions (they
  must be concrete); scalar booleans stay (they add an axis)."""
  out = []
  for pos, p in enumerate(parsed):
    if p.kind != Kind.BOOLEAN:
      out.append(p)
      continue
    mask = p.index
    if isinstance(mask, Tracer):
      value = mask.to_concrete_value()
      if value is None:
        raise NonConcreteBooleanIndexError(mask)
      mask = value
    mask = np.asarray(mask)
    if mask.ndim == 0:
      out.append(Parsed(bool(mask), Kind.BOOLEAN, ()))
      continue
    expected = [shape[a] for a in p.axes]
    if not all(s in (0, e) for s, e in zip(mask.shape, expected)):
      raise IndexError("boolean index did not match shape of indexed array in index "
                       f"{pos}: got {mask.shape}, expected {expected}")
    out.extend(Parsed(i.astype(np.int32 if mask.size <= np.iinfo(np.int32).max else np.int64),
                      Kind.ARRAY, (a,)) for i, a in zip(np.nonzero(mask), p.axes))
  return out


def _wrap_negative(i, size: int, index_dtype):
  """Negative indices count from the end (``i + size`` where ``i < 0``)."""
  dt = dtypes.dtype(i)
  if dtypes.kind(dt) == "u":
    return i
  if isinstance(i, Tracer):
    i = lax.convert_element_type(i, index_dtype) if dt != index_dtype else i
    size_c = np.asarray(size, index_dtype)
    return lax.select(lax.lt(i, np.zeros((), index_dtype)), lax.add(i, size_c), i)
  return add_size_to_negatives(np.asarray(i).astype(index_dtype), size)


# Index arrays up to this size are wrapped in Python (~0.5 us at a few
# elements without negatives, ~2 us with, where the mask's three ufunc calls
# took ~3-6).
SMALL_INDEX = 32


def add_size_to_negatives(v: np.ndarray, size: int) -> np.ndarray:
  """``v`` (a signed integer array, changed in place) with ``size`` added
  to its negative entries, through the sign bit's mask: ~1 ms at 1e6 where
  a select and its copies take ~6."""
  if v.size <= SMALL_INDEX:
    values = v.ravel().tolist()
    if values and min(values) < 0:
      v.flat = [i + size if i < 0 else i for i in values]
    return v
  mask = v >> (8 * v.itemsize - 1)   # -1 where negative, else 0
  mask &= size
  v += mask
  return v


_NUMPY_INTS = frozenset(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8,
                                               np.uint16, np.uint32, np.uint64))


def int_fits(d: int, dtype) -> bool:
  """``d`` is a value of ``dtype``, a NumPy integer dtype."""
  return dtype in _NUMPY_INTS and d <= np.iinfo(dtype).max


def host_floor_mod(v: np.ndarray, size: int) -> np.ndarray:
  """``v mod size`` (floor, in ``v``'s dtype) as a new read-only array (the
  gather's bind takes it as it is). Values in ``[-size, 2 * size)``, most
  indices, by two sign-mask passes (1e6 int32: ~1.5 ms where NumPy's
  integer mod costs ~10); others by np.mod."""
  dt = v.dtype
  if dt.kind == "i" and v.size > 64 and 2 * size <= np.iinfo(dt).max:
    lo, hi = v.min(), v.max()
    if lo >= -size and hi < 2 * size:
      bits = 8 * dt.itemsize - 1
      r = v >> bits   # -1 where negative
      r &= size
      r += v          # in [0, 2 * size)
      over = (size - 1) - r   # negative where r >= size
      over >>= bits
      over &= size
      r -= over
      r.setflags(write=False)
      return r
  r = np.mod(v, dt.type(size))
  if type(r) is np.ndarray:
    r.setflags(write=False)
  return r


def _to_index_dtype(i, index_dtype):
  if isinstance(i, Tracer):
    return lax.convert_element_type(i, index_dtype)
  return np.asarray(i).astype(index_dtype)


def _broadcast_index_arrays(arrays):
  shapes = [tuple(np.shape(a)) for a in arrays]
  try:
    shape = np.broadcast_shapes(*shapes)
  except ValueError:
    raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None
  return [util.broadcast_to_shape(a, shape) if isinstance(a, Tracer)
          else np.broadcast_to(a, shape) for a in arrays], shape


def _stack_index_pieces(pieces, batch_shape, index_dtype):
  """Broadcast each (array, first_dim) piece into ``batch_shape`` and stack
  them along a new trailing index-vector dimension."""
  if not pieces:
    return np.zeros((0,), index_dtype)
  if len(pieces) == 1:
    g, _ = pieces[0]
    return lax.expand_dims(g, (np.ndim(g),)) if isinstance(g, Tracer) \
        else np.expand_dims(g, np.ndim(g))
  full = tuple(batch_shape) + (1,)
  if not any(isinstance(g, Tracer) for g, _ in pieces):
    cols = []
    for g, start in pieces:
      g = np.asarray(g)
      cols.append(np.broadcast_to(g.reshape((1,) * start + g.shape + (1,) * (
          len(full) - start - g.ndim)), full))
    return np.concatenate(cols, axis=-1)
  cols = [lax.broadcast_in_dim(g, full, tuple(range(start, start + np.ndim(g))))
          for g, start in pieces]
  return lax.concatenate(cols, len(full) - 1)


def to_gather(parsed: list[Parsed], shape, *, normalize: bool = True,
              record: list | None = None) -> GatherPlan:
  """The ``gather`` computing ``x[idx]`` (booleans already expanded). With
  ``record``, appends the index pieces and, per piece, where its value came
  from (``(index object, wrap size, shape)``, None for a structural piece)
  for ``eager_gather``."""
  _check_static_slices(parsed)
  parsed = [Parsed(_to_index_array(p.index), p.kind, p.axes)
            if p.kind in (Kind.ARRAY, Kind.BOOLEAN) and not isinstance(p.index, bool)
            else p for p in parsed]
  parsed = expand_ellipsis(parsed, len(shape))
  # A scalar bool adds a size-1 axis to x, indexed by arange(0 or 1).
  shape = list(shape)
  scalar_bool_dims, axis, fixed = [], 0, []
  for p in parsed:
    if p.kind == Kind.BOOLEAN:
      scalar_bool_dims.append(axis)
      shape.insert(axis, 1)
      fixed.append(Parsed(np.arange(int(p.index), dtype=np.int32), Kind.ARRAY, (axis,)))
      axis += 1
    else:
      fixed.append(Parsed(p.index, p.kind, tuple(range(axis, axis + len(p.axes)))))
      axis += len(p.axes)
  parsed, shape = fixed, tuple(shape)
  index_dtype = _index_dtype(shape)

  def is_adv(p):
    return p.kind in (Kind.ARRAY, Kind.INTEGER)
  advanced = any(p.kind == Kind.ARRAY and np.ndim(p.index) > 0 for p in parsed)
  adv_pos = [n for n, p in enumerate(parsed) if advanced and is_adv(p)]
  contiguous = all(b - a == 1 for a, b in zip(adv_pos, adv_pos[1:]))
  if advanced:
    arrs = []
    for n in adv_pos:
      p = parsed[n]
      i = _wrap_negative(p.index, shape[p.axes[0]], index_dtype) if normalize else p.index
      arrs.append(_to_index_dtype(i, index_dtype))
    adv_arrays, adv_shape = _broadcast_index_arrays(arrs)
  x_axis = y_axis = cy_axis = 0
  offset_dims, collapsed, start_map, pieces, sources = [], [], [], [], []
  batch_shape, slice_shape, newaxis_dims, reversed_dims, gslice = [], [], [], [], []
  for n, p in enumerate(parsed):
    if advanced and n == (adv_pos[0] if contiguous else 0):
      start = len(batch_shape)
      pieces.extend((a, start) for a in adv_arrays)
      sources.extend((parsed[m].index, shape[parsed[m].axes[0]] if normalize else None,
                      adv_shape) for m in adv_pos)
      batch_shape.extend(adv_shape)
      x_adv = [parsed[m].axes[0] for m in adv_pos]
      start_map.extend(x_adv)
      collapsed.extend(x_adv)
      slice_shape.extend(adv_shape)
      y_axis += len(adv_shape)
      cy_axis += len(adv_shape)
    if n in adv_pos:
      x_axis += 1
      gslice.append(1)
      continue
    if p.kind in (Kind.INTEGER, Kind.ARRAY):   # a scalar, with no arrays around
      if shape[x_axis] == 0:
        raise IndexError(f"index is out of bounds for axis {x_axis} with size 0")
      i = _wrap_negative(p.index, shape[x_axis], index_dtype) if normalize else p.index
      pieces.append((_to_index_dtype(i, index_dtype), len(batch_shape)))
      sources.append((p.index, shape[x_axis] if normalize else None, ()))
      collapsed.append(x_axis)
      gslice.append(1)
      start_map.append(x_axis)
      x_axis += 1
    elif p.kind == Kind.NONE:
      slice_shape.append(1)
      newaxis_dims.append(y_axis)
      y_axis += 1
    elif p.kind == Kind.SLICE:
      r = _slice_range(p.index, shape[x_axis])
      size = len(r)
      slice_shape.append(size)
      if r.step == 1:
        if size != shape[x_axis]:
          pieces.append((np.asarray(r.start, index_dtype), len(batch_shape)))
          sources.append(None)
          start_map.append(x_axis)
        gslice.append(size)
        offset_dims.append(cy_axis)
      else:
        # Gather the strided positions in increasing order, then reverse.
        positions = np.asarray(r, index_dtype)
        if r.step < 0:
          reversed_dims.append(cy_axis)
          positions = positions[::-1].copy()
        gslice.append(1)
        pieces.append((positions, len(batch_shape)))
        sources.append(None)
        start_map.append(x_axis)
        batch_shape.append(size)
        collapsed.append(x_axis)
      cy_axis += 1
      y_axis += 1
      x_axis += 1
    else:
      raise IndexError(f"Got unsupported indexer at position {n}: {p.index!r}")
  dnums = lax.GatherDimensionNumbers(offset_dims=tuple(offset_dims),
                                     collapsed_slice_dims=tuple(sorted(collapsed)),
                                     start_index_map=tuple(start_map))
  if record is not None:
    record.extend((pieces, sources, tuple(batch_shape), index_dtype))
  return GatherPlan(tuple(slice_shape), tuple(gslice),
                    _stack_index_pieces(pieces, batch_shape, index_dtype), dnums,
                    not advanced, not advanced, tuple(reversed_dims), tuple(newaxis_dims),
                    tuple(scalar_bool_dims))


# ---------------------------------------------------------------------- x[idx]
def _static_fill_value(fill_value):
  if fill_value is None:
    return None
  if isinstance(fill_value, Tracer) and fill_value.to_concrete_value() is None:
    raise TypeError("fill_value argument to indexed get() must be static; got "
                    f"{fill_value.aval.str_short()}")
  value = np.asarray(fill_value if not isinstance(fill_value, Tracer)
                     else fill_value.to_concrete_value())
  if value.ndim != 0:
    raise ValueError("fill_value argument to indexed get() must be a scalar")
  return value.item()


def _static_index_key(idx):
  """A hashable key for an index made of Python ints, slices of Python ints
  (or None), None and Ellipsis, alone or in a tuple; None for other indices
  (arrays, NumPy scalars, bools, lists: parsed every time)."""
  t = type(idx)
  if t is int:
    return idx
  if t is slice:
    start, stop, step = idx.start, idx.stop, idx.step
    if ((start is None or type(start) is int) and (stop is None or type(stop) is int)
        and (step is None or type(step) is int)):
      return (slice, start, stop, step)
    return None
  if idx is None or idx is Ellipsis:
    return (idx,)
  if t is tuple:
    keys = []
    for i in idx:
      k = _static_index_key(i) if type(i) is not tuple else None
      if k is None:
        return None
      keys.append(k)
    return (tuple, *keys)
  return None


# ------------------------------------------------------- jax.ds (dslice)
class Slice:
  """``size`` elements from ``start`` (static or traced) every ``stride``:
  the index ``jax.ds(start, size, stride)`` makes (``x[jax.ds(i, 2)]`` is
  ``x[i:i + 2]`` with a traced ``i``). A traced start is clamped so the
  slice stays in bounds, as ``lax.dynamic_slice`` does."""
  __slots__ = ("start", "size", "stride")

  def __init__(self, start, size, stride: int = 1):
    if stride < 0:
      raise ValueError("`stride` must be >= 0.")
    self.start, self.size, self.stride = start, size, stride

  def __repr__(self):
    return f"Slice(start={self.start}, size={self.size}, stride={self.stride})"

  def __eq__(self, other):
    return (type(other) is Slice and
            (self.start, self.size, self.stride) == (other.start, other.size, other.stride))

  __hash__ = None


def _slice_flatten(s: Slice):
  # A static start or size is tree structure; a traced one is a leaf.
  start_static = not isinstance(s.start, (Tracer, np.ndarray)) and np.ndim(s.start) == 0 \
      and not hasattr(s.start, "aval")
  size_static = not isinstance(s.size, Tracer) and not hasattr(s.size, "aval")
  children = (None if start_static else s.start, None if size_static else s.size)
  aux = (s.start if start_static else None, s.size if size_static else None, s.stride)
  return children, aux


def _slice_unflatten(aux, children) -> Slice:
  start, size = (c if c is not None else a for c, a in zip(children, aux[:2]))
  return Slice(start, size, aux[2])


tree_util.register_pytree_node(Slice, _slice_flatten, _slice_unflatten)


def dslice(start, size=None, stride: int | None = None):
  """A ``Slice`` index: ``dslice(None)`` is ``:``, ``dslice(j)`` is ``:j``,
  ``dslice(i, j)`` is ``i:i+j`` and ``dslice(i, j, s)`` is ``i:i+j:s``, where
  ``i`` may be traced (``jax.ds``)."""
  if start is None:
    return slice(None)
  stride = 1 if stride is None else stride
  if not isinstance(stride, int):
    raise ValueError("Non-static stride in `dslice`")
  if size is None:
    start, size = 0, start
  return Slice(start, size, stride)


def has_slice(idx) -> bool:
  """Whether the index holds a ``Slice`` (``jax.ds``)."""
  return type(idx) is Slice or (type(idx) is tuple and any(type(i) is Slice for i in idx))


def slice_block(x, idx):
  """Cut the ``Slice`` entries of ``idx`` out of ``x`` with one
  ``dynamic_slice``: ``(block, rest, starts)``, where ``block[rest]`` is
  ``x[idx]`` and ``starts`` puts an updated block back
  (``lax.dynamic_update_slice(x, block, starts)``)."""
  idx = index_tuple(idx)
  shape = get_aval(x).shape
  ndim = len(shape)

  def width(e):   # how many axes of x an entry indexes
    if e is None or e is Ellipsis:
      return 0
    return np.ndim(e) if _is_array(e) and dtypes.dtype(e) == np.bool_ else 1
  axis, starts, sizes, rest = 0, [0] * ndim, list(shape), []
  for e in idx:
    if e is Ellipsis:
      axis += ndim - sum(width(i) for i in idx)
    elif type(e) is Slice:
      if not isinstance(e.size, int):
        raise TypeError(f"jax.ds: the size of a slice must be static, got {e.size!r}; pass a "
                        "Python int (mark it static under jit).")
      starts[axis] = e.start
      sizes[axis] = (e.size - 1) * e.stride + 1 if e.size else 0
      rest.append(slice(None, None, e.stride) if e.stride != 1 else slice(None))
      axis += 1
      continue
    rest.append(e)
    axis += width(e)
  return lax.dynamic_slice(x, starts, sizes), tuple(rest), starts
