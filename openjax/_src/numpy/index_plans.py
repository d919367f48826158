"""``x[idx]`` (``rewriting_take``) and the gather plans of ``x.at[idx]``
(``gather_plan``), with ``indexer``'s plans cached per index: static indices
(Python ints, slices, None, Ellipsis) by value, and eager indices of host
values (NumPy arrays, concrete Arrays, int lists, masks) by *structure* (a
hashable key) apart from their *values* (the index arrays): the gather is
planned once per structure and only the index values are normalised and
stacked per call (parsing and planning cost ~100 us a call, the gather itself
a few).

An index holding a tracer has no eager key and takes the general path (under
jit, vmap or grad the printed jaxprs stay as they are).
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import Array, Tracer, eval_trace, get_aval, trace_state
from openjax._src.core.trace import eager_config
from openjax._src.numpy.indexer import (
    DynamicSlice, GatherPlan, Kind, StaticSlice, _index_dtype, _static_fill_value,
    _static_index_key, add_size_to_negatives, apply_dynamic_slice, apply_static_slice,
    expand_bool_indices, expand_ellipsis, has_slice, parse, slice_block, to_dynamic_slice,
    to_gather, to_static_slice)

_INT32_MAX = np.iinfo(np.int32).max


def _host_value(e):
  """The NumPy value of a NumPy array or a concrete Array index, or None."""
  t = type(e)
  if t is np.ndarray:
    return e
  if t is Array:
    return e._value
  return None


def _flat_int_list(e) -> bool:
  return type(e) is list and bool(e) and all(type(v) is int for v in e)


def _entry_key(e, canon: list, values: list):
  """The key of one index entry, appending what replaces it in the index
  (``canon``) and its per-call values; None when it has no eager key."""
  t = type(e)
  if t is int:
    canon.append(e)
    return e
  if e is None or e is Ellipsis:
    canon.append(e)
    return (e,)
  if t is slice:
    start, stop, step = e.start, e.stop, e.step
    if not ((start is None or type(start) is int) and (stop is None or type(stop) is int)
            and (step is None or type(step) is int)):
      return None
    canon.append(e)
    return (slice, start, stop, step)
  if t is bool:
    canon.append(e)
    return (bool, e)
  if isinstance(e, np.integer):
    canon.append(e)
    return (np.integer, e.dtype, int(e))
  if _flat_int_list(e):
    # As the general path converts a list: NumPy's dtype, canonicalised.
    v = np.asarray(e)
    e = v.astype(dtypes.canonicalize_dtype(v.dtype))
    t = np.ndarray
  v = _host_value(e)
  if v is None:
    return None
  kind = v.dtype.kind
  if kind == "b":
    if v.ndim == 0:   # a scalar bool adds an axis: structure, not a value
      canon.append(bool(v))
      return (bool, bool(v))
    # The mask's True positions (as expand_bool_indices makes them): their
    # count sets the result's shape, so it is part of the key.
    positions = np.nonzero(v)
    dt = np.int32 if v.size <= _INT32_MAX else np.int64
    values.extend(p.astype(dt) for p in positions)
    canon.append(e)
    return ("mask", v.shape, len(positions[0]))
  if kind not in "iu":
    return None
  values.append(v)
  canon.append(e)
  return ("array", v.shape, v.dtype)


def eager_index_key(idx):
  """``(key, canon, values)`` for an index of host values: ``key`` holds its
  structure (ints, slices, None, Ellipsis, bools; index arrays' shapes and
  dtypes; masks' shapes and True counts), ``canon`` is the index with int
  lists made arrays, ``values`` the integer index arrays in the order the
  parsed and boolean-expanded index holds them. None for other indices."""
  canon, values = [], []
  if type(idx) is tuple:
    keys = []
    for e in idx:
      k = _entry_key(e, canon, values)
      if k is None:
        return None
      keys.append(k)
    return tuple(keys), tuple(canon), values
  if type(idx) is list:   # a bare list is refused by the general path
    return None
  k = _entry_key(idx, canon, values)
  if k is None:
    return None
  return (k,), canon[0], values


class EagerGather(NamedTuple):
  """A gather planned once per index structure: the plan (without indices
  where they hold index values: the cache keeps no call's values) and how
  each column of the index vectors is filled."""
  plan: object          # indexer.GatherPlan
  indices_shape: tuple
  index_dtype: np.dtype
  # per column: (value position or static ndarray, wrap size or None, shape
  # that broadcasts it over the batch dims)
  columns: tuple


def _index_column(v: np.ndarray, size, dtype) -> np.ndarray:
  """``v`` in the index dtype (a new array), negative entries counted from
  the end where ``size`` is given: the general path's values
  (``indexer._wrap_negative``, ``_to_index_dtype``) in one copy."""
  out = v.astype(dtype)
  if size is not None and v.dtype.kind != "u":
    add_size_to_negatives(out, size)
  return out


def gather_indices(entry: EagerGather, values: list) -> np.ndarray:
  """The gather indices of ``entry``'s structure for this call's index
  values: negative indices wrapped, cast to the index dtype and broadcast
  into their column of the index vectors, as ``indexer.to_gather`` builds
  them from host values. Read-only: the bind takes a private NumPy
  operand as it is (a writeable one is copied)."""
  dt, shape = entry.index_dtype, entry.indices_shape
  if len(entry.columns) == 1:   # one value: its column is the indices
    source, size, _ = entry.columns[0]
    w = _index_column(values[source], size, dt)
    if w.shape == shape[:-1]:
      w = w.reshape(shape)
      w.setflags(write=False)
      return w
  out = np.empty(shape, dt)
  for column, (source, size, piece_shape) in enumerate(entry.columns):
    if type(source) is int:
      source = _index_column(values[source], size, dt)
    out[..., column] = source.reshape(piece_shape)
  out.setflags(write=False)
  return out


class EagerDynamic(NamedTuple):
  """``x[idx]`` as a ``dynamic_slice``, planned once per index structure
  (scalar index arrays beside static ints and slices): the plan without the
  values' starts, and where each value goes."""
  plan: DynamicSlice
  columns: tuple              # (position in plan.starts, value position) per value
  index_dtype: np.dtype | None   # the starts' common dtype where there are several


def dynamic_slice_plan(entry: EagerDynamic, values: list) -> DynamicSlice:
  starts = list(entry.plan.starts)
  for k, pos in entry.columns:
    v = values[pos]
    starts[k] = v if entry.index_dtype is None else v.astype(entry.index_dtype)
  return entry.plan._replace(starts=starts)


# (shape, index key, normalize) -> the GatherPlan of a static index, for
# ``x.at[i].set(v)`` in loops: parsing and planning cost ~20 us, the scatter
# itself less.
_GATHER_PLANS: dict = {}


# (shape, eager index key, getitem mode or _SCATTER, normalize) -> the
# EagerGather or (``x[idx]`` only) EagerDynamic of an index of host values,
# or None where ``x[idx]`` is a static slice: ``x[i]`` and ``x.at[i]`` with
# index arrays are planned once per structure (~100 us), their values
# processed per call.
_EAGER_PLANS: dict = {}
_SCATTER = object()


def _eager_dynamic(dplan: DynamicSlice, parsed, shape) -> EagerDynamic:
  # One start per entry but None; the index values are the scalar arrays,
  # in order (masks and arrays with dims take the gather path).
  columns, k = [], 0
  for p in expand_ellipsis(parsed, len(shape)):
    if p.kind == Kind.ARRAY:
      columns.append((k, len(columns)))
    k += p.kind != Kind.NONE
  value_starts = {k for k, _ in columns}
  starts = [None if k in value_starts else s for k, s in enumerate(dplan.starts)]
  return EagerDynamic(dplan._replace(starts=starts), tuple(columns),
                      _index_dtype(shape) if len(starts) > 1 else None)


def _eager_plan(canon, values, shape, normalize: bool, mode):
  parsed = parse(canon, shape)
  if mode is not _SCATTER:
    if to_static_slice(parsed, shape, mode=mode, normalize=normalize) is not None:
      return None
    dplan = to_dynamic_slice(parsed, shape, mode=mode)
    if dplan is not None:
      return _eager_dynamic(dplan, parsed, shape)
  expanded = expand_bool_indices(parsed, shape)
  arrays = [n for n, p in enumerate(expanded) if p.kind == Kind.ARRAY]
  # Distinct objects, so that each recorded piece names one value position
  # (``x[i, i]`` passes one array twice).
  marked = [v.view() for v in values]
  for n, v in zip(arrays, marked, strict=True):
    expanded[n] = expanded[n]._replace(index=v)
  record = []
  plan = to_gather(expanded, shape, normalize=normalize, record=record)
  pieces, sources, batch_shape, index_dtype = record
  if all(src is None or all(v is not src[0] for v in marked) for src in sources):
    plan.indices.setflags(write=False)   # made from the structure alone
    return EagerGather(plan, plan.indices.shape, index_dtype, ())
  columns = []
  for (g, start), src in zip(pieces, sources):
    pos = None if src is None else next(
        (k for k, v in enumerate(marked) if v is src[0]), None)
    if pos is None:   # a piece of the structure (slices, static ints, bools)
      g = np.array(g)
      g.setflags(write=False)
      own, span, size = g.shape, g.ndim, None
    else:   # an index value, broadcast (right-aligned) over its piece's dims
      own, span, size = marked[pos].shape, len(src[2]), src[1]
    columns.append((g if pos is None else pos, size, (1,) * (start + span - len(own)) + own
                    + (1,) * (len(batch_shape) - start - span)))
  return EagerGather(plan._replace(indices=None), plan.indices.shape, index_dtype,
                     tuple(columns))


def eager_plan(idx, shape, normalize: bool, mode) -> tuple:
  """``(entry, values)``: the plan of ``idx``'s structure (made once) and
  this call's index values; entry None when ``idx`` holds tracers or other
  values without an eager key, or (``mode`` not ``_SCATTER``) when
  ``x[idx]`` is a static slice."""
  walked = eager_index_key(idx)
  if walked is None:
    return None, None
  key, canon, values = walked
  key = (shape, key, mode, normalize)
  entry = _EAGER_PLANS.get(key, _MISSING)
  if entry is _MISSING:
    entry = _eager_plan(canon, values, shape, normalize, mode)
    if len(_EAGER_PLANS) >= 4096:
      _EAGER_PLANS.clear()
    _EAGER_PLANS[key] = entry
  return entry, values


# (id of the EagerGather, ids of the index's Arrays) -> (the entry, the
# Arrays, their plan): an Array is immutable, so the gather indices of its
# values are made once while the cache holds it (``x.at[i].add(v)`` and
# ``x[i]`` in a loop with one index array: ~3 us a call of casting, wrapping
# and laying out the values). Small indices only: the cache keeps them alive.
_HELD_PLANS: dict = {}
_HELD_MAX = 64
_HELD_BYTES = 1 << 16
_STATIC_ENTRY_TYPES = (int, slice, bool, type(None), type(Ellipsis), np.integer)


def _held_arrays(idx) -> tuple | None:
  """The Arrays of an index whose other entries are static (the structure
  key holds them), when their values are small; None otherwise (NumPy
  arrays and lists may change between calls)."""
  if type(idx) is Array:
    held = (idx,)
  elif type(idx) is tuple:
    held = []
    for e in idx:
      if type(e) is Array:
        held.append(e)
      elif not isinstance(e, _STATIC_ENTRY_TYPES):   # (NumPy arrays, lists)
        return None
    if not held:
      return None
    held = tuple(held)
  else:
    return None
  for a in held:
    v = a._np
    if v is None or (v.nbytes if v.base is None else v.base.nbytes) > _HELD_BYTES:
      return None
  return held


def _same_arrays(held: tuple, idx) -> bool:
  """``idx`` holds the Arrays ``held`` (the ids of a key name them while
  held), each with its value (not deleted)."""
  if type(idx) is Array:
    return held[0] is idx and idx._np is not None
  found = [e for e in idx if type(e) is Array]
  return (len(found) == len(held)
          and all(a is b and a._np is not None for a, b in zip(found, held)))


def eager_gather_plan(entry: EagerGather, values: list, idx=None) -> GatherPlan:
  """``to_gather``'s plan for this call's index values (``idx``: the index
  they come from, to find the plan of its Arrays again)."""
  plan = entry.plan
  if not entry.columns:   # the indices are the structure's
    return plan
  held = None if idx is None else _held_arrays(idx)
  if held is not None:
    key = (id(entry), *map(id, held))
    hit = _HELD_PLANS.get(key)
    # (the ids name these objects: the entry holds them while cached)
    if hit is not None and hit[0] is entry and all(a is b for a, b in zip(hit[1], held)):
      return hit[2]
  # (``_make``: a third of ``_replace``'s cost)
  out = GatherPlan._make((plan[0], plan[1], gather_indices(entry, values)) + plan[3:])
  if held is not None:
    if len(_HELD_PLANS) >= _HELD_MAX:
      _HELD_PLANS.clear()
    _HELD_PLANS[key] = (entry, held, out)
  return out


# (the ids of an index's Arrays and its static entries) -> (the Arrays,
# shape, normalize, x64, the plan): a loop of ``x.at[i].set(v)`` or
# ``x.at[:, i].max(v)`` with the same index Arrays finds its plan without
# walking the index (~2-4 us of keys and lookups at 10 elements). Small
# indices only, as ``_HELD_PLANS`` (the cache keeps them alive).
_ARRAY_INDEX_PLANS: dict = {}


def _array_index_key(idx):
  """The key of an index Array or a tuple of index Arrays, Python ints,
  slices of ints, None and Ellipsis (Arrays by id, as 1-tuples); None for
  other indices."""
  if type(idx) is Array:
    return (id(idx),)
  if type(idx) is not tuple:
    return None
  key = []
  for e in idx:
    t = type(e)
    if t is Array:
      key.append((id(e),))
    elif t is int or e is None or e is Ellipsis:
      key.append(e)
    elif t is slice:
      start, stop, step = e.start, e.stop, e.step
      if not ((start is None or type(start) is int) and (stop is None or type(stop) is int)
              and (step is None or type(step) is int)):
        return None
      key.append((start, stop, step))
    else:
      return None
  return tuple(key)


def gather_plan(idx, shape, *, normalize: bool = True) -> GatherPlan:
  """``to_gather`` of ``idx`` on ``shape`` (booleans expanded), made once per
  static index (Python ints, slices, None, Ellipsis) and once per structure
  of an index of host values."""
  held_key = _array_index_key(idx) if eager_config.flags_ok else None
  if held_key is not None:
    hit = _ARRAY_INDEX_PLANS.get(held_key)
    if (hit is not None and hit[1] == shape and hit[2] == normalize
        and hit[3] is eager_config.x64 and _same_arrays(hit[0], idx)):
      return hit[4]
  key = _static_index_key(idx)
  if key is None:
    entry, values = eager_plan(idx, shape, normalize, _SCATTER)
    if entry is not None:
      plan = eager_gather_plan(entry, values, idx)
      if held_key is not None:
        held = _held_arrays(idx)
        if held is not None:
          if len(_ARRAY_INDEX_PLANS) >= _HELD_MAX:
            _ARRAY_INDEX_PLANS.clear()
          _ARRAY_INDEX_PLANS[held_key] = (held, shape, normalize, eager_config.x64, plan)
      return plan
    return to_gather(expand_bool_indices(parse(idx, shape), shape), shape, normalize=normalize)
  key = (shape, key, normalize)
  plan = _GATHER_PLANS.get(key)
  if plan is None:
    plan = to_gather(expand_bool_indices(parse(idx, shape), shape), shape, normalize=normalize)
    if isinstance(plan.indices, np.ndarray):
      plan.indices.setflags(write=False)   # shared by every call with this index
    if len(_GATHER_PLANS) >= 4096:
      _GATHER_PLANS.clear()
    _GATHER_PLANS[key] = plan
  return plan


def _static_slice_ops(plan: StaticSlice, shape) -> tuple:
  """``apply_static_slice``'s decisions for ``plan`` on ``shape``: (slice
  arguments or None, rev axes, squeeze axes, new axes), as tuples."""
  trivial = all(s == 1 for s in plan.strides) and all(
      a == 0 and b == d for a, b, d in zip(plan.starts, plan.limits, shape))
  slice_args = None
  if not trivial:
    strides = None if all(s == 1 for s in plan.strides) else tuple(plan.strides)
    slice_args = (tuple(plan.starts), tuple(plan.limits), strides)
  return (slice_args, tuple(plan.rev_axes), tuple(plan.squeeze_axes),
          tuple(plan.newaxis_dims))


_SIGNED_MAX = {np.dtype(t): np.iinfo(t).max for t in (np.int8, np.int16, np.int32, np.int64)}


def _host_dynamic_slice(arr, entry: EagerDynamic, values: list, normalize: bool):
  """``apply_dynamic_slice`` of an eager Array whose starts are host values
  (``x[np.int32(-1)]``, ``x[1:, i]`` with a concrete ``i``): the starts
  ``dynamic_slice`` would take, wrapped and clamped here as it does, then a
  static ``slice`` (~1.5 us where the dynamic_slice wrapper and bind cost
  ~10 us). None where a start is negative and ``normalize`` is off
  (``dynamic_slice`` raises)."""
  plan = entry.plan
  given = list(plan.starts)   # ``dynamic_slice_plan``'s starts, without its plan copy
  for k, pos in entry.columns:
    v = values[pos]
    given[k] = v if entry.index_dtype is None else v.astype(entry.index_dtype)
  starts, limits = [], []
  for s, d, z in zip(given, arr.aval.shape, plan.sizes):
    v = np.asarray(s)
    dt = dtypes.canonicalize_dtype(v.dtype)   # an int64 start is taken as int32 without x64
    i = int(v) if v.dtype == dt else int(v.astype(dt))
    if i < 0 and dt.kind == "i":
      if not normalize:
        return None
      i += d
      if i > _SIGNED_MAX[dt]:   # wrapped in the start's dtype, as dynamic_slice adds
        i = int(np.asarray(i).astype(dt))
    if i < 0:
      i = 0
    elif i > d - z:
      i = d - z
    starts.append(i)
    limits.append(i + z)
  out = arr if plan.trivial else lax.slice(arr, tuple(starts), tuple(limits))
  if plan.rev_axes:
    out = lax.rev(out, tuple(plan.rev_axes))
  if plan.squeeze_axes:
    out = lax.squeeze(out, tuple(plan.squeeze_axes))
  if plan.newaxis_dims:
    out = lax.expand_dims(out, tuple(plan.newaxis_dims))
  return out


# (shape, index key, mode, normalize) -> the static slice's lax calls
# (``_static_slice_ops``), or None when the index needs the dynamic or gather
# path: ``x[i]`` and ``x[a:b]`` in loops are parsed once.
_STATIC_PLANS: dict = {}
_MISSING = object()


# Gathers of this many index entries or more read partial slices first (one
# more op: ~5 us at 10 elements, where the index vectors cost less).
_SLICES_FIRST_MIN = 512


# id of an EagerGather -> (it, False) where its structure never reads slices
# first (the entry is held, so the id names it)
_SLICES_FIRST: dict = {}


def _static_slice(e) -> bool:
  return ((e.start is None or type(e.start) is int) and (e.stop is None or type(e.stop) is int)
          and (e.step is None or type(e.step) is int))


def _slices_first(idx: tuple, shape: tuple, entries: int) -> tuple | None:
  """For an index of Python ints, static slices and integer arrays (NumPy
  or concrete Arrays), some slice partial and some array of rank > 0: (the
  slices alone, the rest with whole slices in their place). The arrays'
  dimensions land where they would in ``x[idx]``: the slices keep their
  places between them. None for other indices, and where the block holds
  more elements than the gather's ``entries`` index entries (a few rows of
  a large array: the one gather reads less than the block's copy)."""
  block, rest = [], []
  partial = arrays = False
  size = math.prod(shape[len(idx):])
  for e, d in zip(idx, shape):
    t = type(e)
    if t is slice:
      if not _static_slice(e):
        return None
      partial = partial or not (e.start is None and e.stop is None and e.step in (None, 1))
      size *= len(range(*e.indices(d)))
      block.append(e)
      rest.append(slice(None))
    elif t is int or ((t is Array or t is np.ndarray) and e.dtype.kind in "iu"):
      # (0-d arrays alone are scalar starts: the dynamic-slice path's)
      arrays = arrays or (t is not int and e.ndim > 0)
      size *= d
      block.append(slice(None))
      rest.append(e)
    else:
      return None
  if len(idx) > len(shape) or size > entries or entries < _SLICES_FIRST_MIN:
    return None
  return (tuple(block), tuple(rest)) if partial and arrays else None


def rewriting_take(arr, idx, *, indices_are_sorted: bool = False, unique_indices: bool = False,
                   mode=None, fill_value=None, normalize_indices: bool = True):
  """``arr[idx]`` with NumPy's semantics, lowered to the cheapest lax ops."""
  shape = get_aval(arr).shape
  if type(idx) is Array and eager_config.flags_ok:
    # an index Array's gather plan, found by its id (``_ARRAY_TAKE_PLANS``)
    hit = _ARRAY_TAKE_PLANS.get(id(idx))
    if (hit is not None and hit[0] is idx and hit[1] == shape and hit[2] == normalize_indices
        and hit[3] == mode and hit[4] is eager_config.x64 and idx._np is not None):
      return _take_by_plan(arr, hit[5], indices_are_sorted, unique_indices, mode, fill_value)
  key = _static_index_key(idx)
  if key is not None:
    key = (shape, key, mode, normalize_indices)
    ops = _STATIC_PLANS.get(key, _MISSING)
    if ops is _MISSING:
      plan = to_static_slice(parse(idx, shape), shape, mode=mode, normalize=normalize_indices)
      ops = None if plan is None else _static_slice_ops(plan, shape)
      if len(_STATIC_PLANS) >= 4096:
        _STATIC_PLANS.clear()
      _STATIC_PLANS[key] = ops
    if ops is not None:   # apply_static_slice's lax calls, decided once
      slice_args, rev_axes, squeeze_axes, newaxis_dims = ops
      out = arr if slice_args is None else lax.slice(arr, *slice_args)
      if rev_axes:
        out = lax.rev(out, rev_axes)
      if squeeze_axes:
        out = lax.squeeze(out, squeeze_axes)
      if newaxis_dims:
        out = lax.expand_dims(out, newaxis_dims)
      return out
  if has_slice(idx):
    block, rest, _ = slice_block(arr, idx)
    return rewriting_take(block, rest, indices_are_sorted=indices_are_sorted,
                          unique_indices=unique_indices, mode=mode, fill_value=fill_value,
                          normalize_indices=normalize_indices)
  entry, values = eager_plan(idx, shape, normalize_indices, mode)
  if type(entry) is EagerDynamic:
    if type(arr) is Array and trace_state.trace is eval_trace:
      out = _host_dynamic_slice(arr, entry, values, normalize_indices)
      if out is not None:
        return out
    return apply_dynamic_slice(arr, dynamic_slice_plan(entry, values), normalize_indices)
  if entry is not None:
    if (type(idx) is tuple and type(arr) is Array and trace_state.trace is eval_trace
        and _SLICES_FIRST.get(id(entry), (None, True))[1]):
      split = _slices_first(idx, shape, math.prod(entry.indices_shape))
      if split is None:   # decided by the structure: not looked at again for it
        if len(_SLICES_FIRST) >= 4096:
          _SLICES_FIRST.clear()
        _SLICES_FIRST[id(entry)] = (entry, False)
      else:
        # eagerly the partial slices first (a static slice), then the
        # arrays' gather on the block with whole slices: one column per
        # array where JAX's gather also indexes the sliced dimension, an
        # index vector per output element (x[i, 1::2] at 1e5: 130 -> ~2 ms)
        block = rewriting_take(arr, split[0], normalize_indices=normalize_indices)
        return rewriting_take(block, split[1], indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode, fill_value=fill_value,
                              normalize_indices=normalize_indices)
    gplan = eager_gather_plan(entry, values, idx)
    if type(idx) is Array and eager_config.flags_ok and _held_arrays(idx) is not None:
      if len(_ARRAY_TAKE_PLANS) >= _HELD_MAX:
        _ARRAY_TAKE_PLANS.clear()
      _ARRAY_TAKE_PLANS[id(idx)] = (idx, shape, normalize_indices, mode, eager_config.x64,
                                    gplan)
  else:
    parsed = parse(idx, shape)
    plan = to_static_slice(parsed, shape, mode=mode, normalize=normalize_indices)
    if plan is not None:
      return apply_static_slice(arr, plan)
    dplan = to_dynamic_slice(parsed, shape, mode=mode)
    if dplan is not None:
      return apply_dynamic_slice(arr, dplan, normalize_indices)
    gplan = to_gather(expand_bool_indices(parsed, shape), shape, normalize=normalize_indices)
  return _take_by_plan(arr, gplan, indices_are_sorted, unique_indices, mode, fill_value)


# id of an index Array -> (it, shape, normalize, mode, x64, its gather plan):
# ``x[i]`` and ``x.at[i].get(...)`` in a loop with one index Array skip the
# index walk and plan lookups (~2 us at 10 elements). Small indices only.
_ARRAY_TAKE_PLANS: dict = {}


def _take_by_plan(arr, gplan: GatherPlan, indices_are_sorted, unique_indices, mode, fill_value):
  """``rewriting_take``'s gather of ``arr`` by ``gplan``."""
  fill_value = _static_fill_value(fill_value)
  y = arr
  if gplan.scalar_bool_dims:
    y = lax.expand_dims(y, gplan.scalar_bool_dims)
  if 0 in gplan.slice_shape:
    return lax.full_like(y, 0, shape=gplan.slice_shape)
  if np.size(gplan.indices) if not isinstance(gplan.indices, Tracer) else True:
    y = lax.gather(y, gplan.indices, gplan.dnums, gplan.gather_slice_shape,
                   unique_indices=unique_indices or gplan.unique_indices,
                   indices_are_sorted=indices_are_sorted or gplan.indices_are_sorted,
                   mode=mode, fill_value=fill_value)
  if gplan.reversed_y_dims:
    y = lax.rev(y, gplan.reversed_y_dims)
  if gplan.newaxis_dims:
    y = lax.expand_dims(y, gplan.newaxis_dims)
  return y
