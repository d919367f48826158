"""Indexing primitives: ``gather`` and the scatter family, with XLA's general
dimension-number semantics (``dynamic_slice`` and ``dynamic_update_slice``
live in ``dynamic_slicing.py`` and are re-exported here).

Gather and scatter take a ``GatherScatterMode``: ``CLIP`` clamps each window
into range, ``FILL_OR_DROP`` fills out-of-bounds gather windows with
``fill_value`` and drops out-of-bounds scatter windows, and
``PROMISE_IN_BOUNDS`` behaves as XLA does in practice (gathers clamp,
scatters drop).
"""
from __future__ import annotations

import enum
import operator
from typing import NamedTuple, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.core import (ClosedJaxpr, Primitive, ShapedArray, Tracer, eval_jaxpr,
                               eval_trace, get_aval, set_current_trace)
from openjax._src.primitives import dynamic_slicing
from openjax._src.primitives import elementwise as _ew
from openjax._src.primitives import shape as _shape
from openjax._src.primitives._util import check_same_dtypes
from openjax._src.primitives.dynamic_slicing import *  # noqa: F401,F403
from openjax._src.primitives.dynamic_slicing import shape_param

__all__ = [
    *dynamic_slicing.__all__,
    "GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
    "gather", "gather_p", "scatter", "scatter_p",
    "scatter_add", "scatter_add_p", "scatter_sub", "scatter_sub_p", "scatter_mul",
    "scatter_mul_p", "scatter_min", "scatter_min_p", "scatter_max", "scatter_max_p",
    "index_take",
]


# ------------------------------------------------------------ parameter types
class GatherDimensionNumbers(NamedTuple):
  """How the dimensions of a gather's operand, indices and output relate
  (XLA's ``GatherDimensionNumbers``; the index vector is always the last
  dimension of the indices)."""
  offset_dims: tuple[int, ...]
  collapsed_slice_dims: tuple[int, ...]
  start_index_map: tuple[int, ...]
  operand_batching_dims: tuple[int, ...] = ()
  start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
  """How the dimensions of a scatter's operand, indices and updates relate
  (XLA's ``ScatterDimensionNumbers``; the index vector is always the last
  dimension of the indices)."""
  update_window_dims: Sequence[int]
  inserted_window_dims: Sequence[int]
  scatter_dims_to_operand_dims: Sequence[int]
  operand_batching_dims: Sequence[int] = ()
  scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
  """Out-of-bounds handling of gather and scatter: ``CLIP`` clamps windows into
  range; ``FILL_OR_DROP`` fills (gather) or drops (scatter) windows that are
  partly out of bounds; ``PROMISE_IN_BOUNDS`` promises indices are in bounds
  (in practice gathers clamp and scatters drop); ``ONE_HOT`` is for
  ``take_along_axis``."""
  CLIP = enum.auto()
  FILL_OR_DROP = enum.auto()
  PROMISE_IN_BOUNDS = enum.auto()
  ONE_HOT = enum.auto()

  @staticmethod
  def from_any(s) -> "GatherScatterMode":
    if isinstance(s, GatherScatterMode):
      return s
    if s == "clip":
      return GatherScatterMode.CLIP
    if s is None or s == "fill" or s == "drop":
      return GatherScatterMode.FILL_OR_DROP
    if s == "promise_in_bounds":
      return GatherScatterMode.PROMISE_IN_BOUNDS
    if s == "one_hot":
      return GatherScatterMode.ONE_HOT
    raise ValueError(f'Unknown gather mode "{s}"')


def _dims(fun: str, name: str, dims) -> tuple[int, ...]:
  try:
    return tuple(operator.index(d) for d in dims)
  except TypeError:
    raise TypeError(f"{fun}: {name} must be a sequence of integers, got {dims!r}") from None


def _gather_dnums(dnums) -> GatherDimensionNumbers:
  if not isinstance(dnums, GatherDimensionNumbers):
    raise TypeError("gather: dimension_numbers must be a lax.GatherDimensionNumbers, "
                    f"got {type(dnums).__name__}")
  return GatherDimensionNumbers(*(_dims("gather", f, v) for f, v in zip(dnums._fields, dnums)))


def _scatter_dnums(dnums) -> ScatterDimensionNumbers:
  if not isinstance(dnums, ScatterDimensionNumbers):
    raise TypeError("scatter: dimension_numbers must be a lax.ScatterDimensionNumbers, "
                    f"got {type(dnums).__name__}")
  return ScatterDimensionNumbers(*(_dims("scatter", f, v) for f, v in zip(dnums._fields, dnums)))


# ---------------------------------------------------- shared NumPy machinery
def _as_int64(idx: np.ndarray) -> np.ndarray:
  """Index values as int64; huge unsigned values saturate (they are out of
  bounds either way)."""
  if idx.dtype.kind == "u" and idx.dtype.itemsize >= 8:
    idx = np.minimum(idx, np.iinfo(np.int64).max)
  return np.asarray(idx).astype(np.int64)


def _window_starts(operand_shape, indices, index_dims, operand_batching_dims,
                   indices_batching_dims):
  """(B, R) int64 window start of every index vector, before clamping, and the
  (B, K) raw index vectors."""
  batch_shape = indices.shape[:-1]
  nbatch = int(np.prod(batch_shape, dtype=np.int64))
  idx = _as_int64(indices).reshape(nbatch, indices.shape[-1])
  starts = np.zeros((nbatch, len(operand_shape)), np.int64)
  if index_dims:
    starts[:, list(index_dims)] = idx
  if operand_batching_dims:
    coords = np.indices(batch_shape).reshape(len(batch_shape), nbatch)
    for od, idim in zip(operand_batching_dims, indices_batching_dims):
      starts[:, od] = coords[idim]
  return starts, idx


def _in_bounds(idx, index_dims, operand_shape, window_shape) -> np.ndarray:
  """(B,) mask: the whole window of each index vector lies in the operand."""
  if not index_dims:
    return np.ones(idx.shape[0], bool)
  upper = np.array([operand_shape[d] - window_shape[d] for d in index_dims], np.int64)
  return np.all((idx >= 0) & (idx <= upper), axis=1)


def _window_grids(starts, window_shape):
  """Per operand dimension, the (B, *window_shape) positions a window covers."""
  nbatch, rank = starts.shape
  grids = []
  for d in range(rank):
    offs = np.arange(window_shape[d], dtype=np.int64).reshape(
        (1,) + tuple(window_shape[d] if e == d else 1 for e in range(rank)))
    grids.append(starts[:, d].reshape((nbatch,) + (1,) * rank) + offs)
  return grids


def _gather_windows(operand, starts, window_shape, indexed_dims):
  """operand windows at ``starts`` as a (B, *window_shape) array. Dimensions
  that are not indexed start at 0 and are taken with basic slicing."""
  rank = operand.ndim
  nbatch = starts.shape[0]
  if not indexed_dims:
    win = operand[tuple(slice(0, s) for s in window_shape)]
    return np.broadcast_to(win, (nbatch,) + tuple(window_shape))
  rest = [d for d in range(rank) if d not in indexed_dims]
  moved = np.moveaxis(operand, list(indexed_dims), list(range(len(indexed_dims))))
  k = len(indexed_dims)
  adv = []
  for j, d in enumerate(indexed_dims):
    offs = np.arange(window_shape[d], dtype=np.int64).reshape(
        (1,) + tuple(window_shape[d] if i == j else 1 for i in range(k)))
    adv.append(starts[:, d].reshape((nbatch,) + (1,) * k) + offs)
  win = moved[tuple(adv) + tuple(slice(0, window_shape[d]) for d in rest)]
  # win: (B, *window[indexed], *window[rest]) -> (B, *window in operand order)
  order = list(indexed_dims) + rest
  return np.moveaxis(win, list(range(1, rank + 1)), [1 + d for d in order])


def _cast_scalar(value, dtype) -> np.ndarray:
  return _ew.convert_numpy(np.asarray(value), dtype)


# --------------------------------------------------------------------- gather
gather_p = Primitive("gather", kind="linear")   # linear in the operand


def _gather_out_shape(indices_shape, dnums, slice_sizes) -> tuple[int, ...]:
  rank = len(dnums.offset_dims) + len(indices_shape) - 1
  batch = iter(indices_shape[:-1])
  window = iter(s for i, s in enumerate(slice_sizes)
                if i not in dnums.collapsed_slice_dims and i not in dnums.operand_batching_dims)
  return tuple(next(window) if i in dnums.offset_dims else next(batch) for i in range(rank))


def _to_output_order(win, batch_shape, offset_dims):
  """(batch..., offsets...) -> output order, offsets at ``offset_dims``."""
  nb, no = len(batch_shape), win.ndim - len(batch_shape)
  perm, bi, oi = [], 0, 0
  for i in range(nb + no):
    if i in offset_dims:
      perm.append(nb + oi)
      oi += 1
    else:
      perm.append(bi)
      bi += 1
  return np.transpose(win, perm)


@gather_p.def_impl
def _gather_impl(operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                 indices_are_sorted, mode, fill_value):
  dn = dimension_numbers
  out_shape = _gather_out_shape(indices.shape, dn, slice_sizes)
  if 0 in out_shape:
    return [np.zeros(out_shape, operand.dtype)]
  starts, idx = _window_starts(operand.shape, indices, dn.start_index_map,
                               dn.operand_batching_dims, dn.start_indices_batching_dims)
  upper = np.array(operand.shape, np.int64) - np.array(slice_sizes, np.int64)
  ok = None
  if mode == GatherScatterMode.FILL_OR_DROP:
    ok = _in_bounds(idx, dn.start_index_map, operand.shape, slice_sizes)
  starts = np.clip(starts, 0, upper)
  indexed = tuple(sorted(set(dn.start_index_map) | set(dn.operand_batching_dims)))
  win = _gather_windows(operand, starts, slice_sizes, indexed)
  if ok is not None and not ok.all():
    fill = _cast_scalar(0 if fill_value is None else fill_value, operand.dtype)
    win = np.where(ok.reshape((-1,) + (1,) * operand.ndim), win, fill)
  keep = [d for d in range(operand.ndim)
          if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
  batch_shape = indices.shape[:-1]
  win = np.reshape(win, batch_shape + tuple(slice_sizes[d] for d in keep))
  return [np.asarray(_to_output_order(win, batch_shape, dn.offset_dims), order="C")]


def _is_sorted(dims, op, name):
  if any(dims[i] < dims[i - 1] for i in range(1, len(dims))):
    raise TypeError(f"{name} in {op} op must be sorted; got {dims}")


def _dims_in_range(dims, rank, op, name):
  for d in dims:
    if d < 0 or d >= rank:
      raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); got: {d}.")


def _no_duplicate_dims(dims, op, name):
  if len(set(dims)) != len(dims):
    raise TypeError(f"{name} in {op} op must not repeat; got: {dims}.")


def _disjoint_dims(dims1, dims2, op, name1, name2):
  if not set(dims1).isdisjoint(dims2):
    raise TypeError(f"{name1} and {name2} in {op} op must be disjoint; "
                    f"got: {dims1} and {dims2}.")


def _check_index_dtype(indices):
  if not dtypes.issubdtype(indices.dtype, np.integer):
    raise ValueError("indices must have an integer type")


def _check_batching(op, operand, indices, operand_batching_dims, indices_batching_dims,
                    indices_name):
  _no_duplicate_dims(operand_batching_dims, op, "operand_batching_dims")
  _is_sorted(operand_batching_dims, op, "operand_batching_dims")
  _dims_in_range(operand_batching_dims, operand.ndim, op, "operand_batching_dims")
  _no_duplicate_dims(indices_batching_dims, op, indices_name)
  _dims_in_range(indices_batching_dims, indices.ndim, op, indices_name)
  if indices.ndim - 1 in indices_batching_dims:
    raise TypeError(f"{op.capitalize()} op cannot have the index vector dimension as a "
                    f"batching dimension; got {indices_batching_dims}.")
  if len(operand_batching_dims) != len(indices_batching_dims):
    raise TypeError(f"{op.capitalize()} op requires equal numbers of operand_batching_dims "
                    f"and {indices_name}, got {operand_batching_dims} and "
                    f"{indices_batching_dims}.")
  ob = tuple(operand.shape[i] for i in operand_batching_dims)
  ib = tuple(indices.shape[i] for i in indices_batching_dims)
  if ob != ib:
    raise TypeError(f"{op.capitalize()} op requires operand batching dimensions and indices "
                    f"batching dimensions to have the same shape, got {ob} and {ib}.")


@gather_p.def_abstract_eval
def _gather_abstract_eval(operand, indices, *, dimension_numbers, slice_sizes,
                          unique_indices, indices_are_sorted, mode, fill_value):
  _check_index_dtype(indices)
  dn = dimension_numbers
  if indices.ndim < 1:
    raise TypeError("Gather index leaf dimension must be within [0, rank(indices) + 1). "
                    f"rank(indices) is {indices.ndim} and gather index leaf dimension is "
                    "-1. (Tip: add a trailing dimension of size 1 to scalar indices.)")
  _is_sorted(dn.offset_dims, "gather", "offset_dims")
  _no_duplicate_dims(dn.offset_dims, "gather", "offset_dims")
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
  _no_duplicate_dims(dn.start_index_map, "gather", "start_index_map")
  _is_sorted(dn.collapsed_slice_dims, "gather", "collapsed_slice_dims")
  _dims_in_range(dn.collapsed_slice_dims, operand.ndim, "gather", "collapsed_slice_dims")
  _no_duplicate_dims(dn.collapsed_slice_dims, "gather", "collapsed_slice_dims")
  _check_batching("gather", operand, indices, dn.operand_batching_dims,
                  dn.start_indices_batching_dims, "start_indices_batching_dims")
  _disjoint_dims(dn.collapsed_slice_dims, dn.operand_batching_dims, "gather",
                 "collapsed_slice_dims", "operand_batching_dims")
  _disjoint_dims(dn.start_index_map, dn.operand_batching_dims, "gather",
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
  shape = _gather_out_shape(indices.shape, dn, slice_sizes)
  return [ShapedArray(shape, operand.dtype, operand.weak_type)]


def default_fill_value(dtype):
  """The fill of out-of-bounds gathers: NaN for inexact dtypes, the most
  negative value for signed ints, the largest for unsigned, True for bool."""
  dtype = np.dtype(dtype)
  if dtypes.issubdtype(dtype, np.inexact):
    return np.nan
  if dtypes.issubdtype(dtype, np.signedinteger):
    return int(dtypes.iinfo(dtype).min)
  if dtypes.issubdtype(dtype, np.unsignedinteger):
    return int(dtypes.iinfo(dtype).max)
  if dtype == dtypes.bool_:
    return True
  raise ValueError(f"Unsupported dtype for gather fill_value {dtype}")


def _static_scalar(value, what: str):
  """A hashable Python scalar from a concrete scalar (parameters must be static)."""
  if isinstance(value, Tracer):
    c = value.to_concrete_value()
    if c is None:
      raise TypeError(f"{what} must be a static scalar, got a traced value "
                      f"{value.aval.str_short()}; pass a Python or NumPy scalar.")
    value = c
  arr = np.asarray(value)
  if arr.ndim != 0:
    raise ValueError(f"{what} must be a scalar, got shape {arr.shape}")
  return arr.item() if not isinstance(value, (bool, int, float, complex)) else value


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
      fill_value = _static_scalar(fill_value, "gather fill_value")
  else:
    fill_value = None
  return gather_p.bind1(
      operand, start_indices, dimension_numbers=_gather_dnums(dimension_numbers),
      slice_sizes=shape_param("gather", "slice_sizes", slice_sizes),
      unique_indices=bool(unique_indices), indices_are_sorted=bool(indices_are_sorted),
      mode=mode, fill_value=fill_value)


def index_take(src, idxs, axes):
  """``src`` indexed by the integer arrays ``idxs`` along ``axes`` (indices
  wrap modulo the axis size)."""
  axes = tuple(int(a) for a in axes)
  shape = get_aval(src).shape
  cols = []
  for i, ax in zip(idxs, axes):
    i_shape = get_aval(i).shape
    col = _shape.broadcast_in_dim(i, i_shape + (1,), tuple(range(len(i_shape))))
    size = np.asarray(shape[ax]).astype(dtypes.dtype(i))
    cols.append(_ew.rem(_ew.add(_ew.rem(col, size), size), size))
  indices = cols[0] if len(cols) == 1 else _shape.concatenate(cols, len(get_aval(cols[0]).shape) - 1)
  slice_sizes = list(shape)
  for ax in axes:
    slice_sizes[ax] = 1
  nidx = get_aval(indices).shape[-1]
  dnums = GatherDimensionNumbers(offset_dims=tuple(range(1, len(shape) - nidx + 1)),
                                 collapsed_slice_dims=axes, start_index_map=axes)
  return gather(src, indices, dnums, tuple(slice_sizes))


# -------------------------------------------------------------------- scatter
def _scatter_window_shape(operand_shape, updates_shape, dn) -> tuple[int, ...]:
  out, pos = [], 0
  for d in range(len(operand_shape)):
    if d in dn.inserted_window_dims or d in dn.operand_batching_dims:
      out.append(1)
    else:
      out.append(updates_shape[dn.update_window_dims[pos]])
      pos += 1
  return tuple(out)


def _ufunc_combine(ufunc, bool_ufunc=None):
  def combine(flat, lin, vals):
    if flat.dtype == np.bool_ and bool_ufunc is not None:
      bool_ufunc.at(flat, lin, vals)
    elif flat.dtype in dtypes.custom_float_dtypes or flat.dtype in dtypes.custom_int_dtypes:
      # ml_dtypes have no ufunc.at loops: accumulate in a wider type.
      wide = np.float32 if flat.dtype in dtypes.custom_float_dtypes else np.int32
      acc = flat.astype(wide)
      ufunc.at(acc, lin, vals.astype(wide))
      flat[...] = acc.astype(flat.dtype)
    else:
      with np.errstate(all="ignore"):
        ufunc.at(flat, lin, vals)
  return combine


def _replace_combine(flat, lin, vals):
  flat[lin] = vals


def _jaxpr_combine(update_jaxpr, update_consts):
  """Apply ``update_jaxpr(old, update)`` at each index; repeated indices apply
  it repeatedly, in order of occurrence."""
  if isinstance(update_jaxpr, ClosedJaxpr):
    jaxpr, consts = update_jaxpr.jaxpr, list(update_jaxpr.consts)
  else:
    jaxpr, consts = update_jaxpr, list(update_consts)

  def apply(old, upd):
    try:   # elementwise computations evaluate on whole vectors at once
      with set_current_trace(eval_trace):
        (out,) = eval_jaxpr(jaxpr, consts, old, upd)
      out = np.asarray(out)
      if out.shape == old.shape:
        return out
    except (TypeError, ValueError):
      pass
    with set_current_trace(eval_trace):
      return np.array([np.asarray(eval_jaxpr(jaxpr, consts, o, u)[0])
                       for o, u in zip(old, upd)], old.dtype).reshape(old.shape)

  def combine(flat, lin, vals):
    order = np.argsort(lin, kind="stable")
    sorted_lin = lin[order]
    first = np.r_[True, sorted_lin[1:] != sorted_lin[:-1]]
    group_start = np.maximum.accumulate(np.where(first, np.arange(lin.size), 0))
    rank = np.empty_like(order)
    rank[order] = np.arange(lin.size) - group_start
    for r in range(int(rank.max()) + 1 if lin.size else 0):
      sel = rank == r
      pos = lin[sel]
      flat[pos] = _cast_scalar(apply(flat[pos], vals[sel]), flat.dtype)
  return combine


def _scatter_impl_with(combine):
  def impl(operand, indices, updates, *, dimension_numbers, indices_are_sorted,
           unique_indices, mode, update_jaxpr, update_consts):
    dn = dimension_numbers
    out = np.array(operand, copy=True)
    if out.size == 0 or updates.size == 0:
      return [out]
    wshape = _scatter_window_shape(operand.shape, updates.shape, dn)
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    starts, idx = _window_starts(operand.shape, indices, dn.scatter_dims_to_operand_dims,
                                 dn.operand_batching_dims, dn.scatter_indices_batching_dims)
    upd = np.transpose(updates, scatter_dims + list(dn.update_window_dims))
    upd = upd.reshape((starts.shape[0],) + wshape)
    if mode == GatherScatterMode.CLIP:
      upper = np.array(operand.shape, np.int64) - np.array(wshape, np.int64)
      starts = np.clip(starts, 0, upper)
    else:   # FILL_OR_DROP and PROMISE_IN_BOUNDS drop windows not wholly in bounds
      ok = _in_bounds(idx, dn.scatter_dims_to_operand_dims, operand.shape, wshape)
      if not ok.all():
        starts, upd = starts[ok], upd[ok]
    lin = np.ravel_multi_index(_window_grids(starts, wshape), operand.shape).ravel()
    c = combine if update_jaxpr is None or combine is not _replace_combine else \
        _jaxpr_combine(update_jaxpr, update_consts)
    c(out.reshape(-1), lin, np.ascontiguousarray(upd).reshape(-1))
    return [out]
  return impl


def _scatter_abstract_eval(operand, indices, updates, *, dimension_numbers,
                           indices_are_sorted, unique_indices, mode, update_jaxpr,
                           update_consts):
  _check_index_dtype(indices)
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
  _is_sorted(dn.update_window_dims, "scatter", "update_window_dims")
  _no_duplicate_dims(dn.update_window_dims, "scatter", "update_window_dims")
  _dims_in_range(dn.update_window_dims, updates.ndim, "scatter", "update_window_dims")
  _is_sorted(dn.inserted_window_dims, "scatter", "inserted_window_dims")
  _no_duplicate_dims(dn.inserted_window_dims, "scatter", "inserted_window_dims")
  _dims_in_range(dn.inserted_window_dims, operand.ndim, "scatter", "inserted_window_dims")
  _check_batching("scatter", operand, indices, dn.operand_batching_dims,
                  dn.scatter_indices_batching_dims, "scatter_indices_batching_dims")
  _disjoint_dims(dn.inserted_window_dims, dn.operand_batching_dims, "scatter",
                 "inserted_window_dims", "operand_batching_dims")
  _disjoint_dims(dn.scatter_dims_to_operand_dims, dn.operand_batching_dims, "scatter",
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
  _no_duplicate_dims(dn.scatter_dims_to_operand_dims, "scatter",
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


def _scatter_primitive(name: str, combine, kind: str) -> Primitive:
  p = Primitive(name, kind=kind)
  p.def_impl(_scatter_impl_with(combine))
  p.def_abstract_eval(_scatter_abstract_eval)
  return p


scatter_p = _scatter_primitive("scatter", _replace_combine, "linear")
scatter_add_p = _scatter_primitive("scatter-add", _ufunc_combine(np.add, np.logical_or),
                                   "linear")
scatter_sub_p = _scatter_primitive("scatter-sub", _ufunc_combine(np.subtract), "linear")
scatter_mul_p = _scatter_primitive("scatter-mul",
                                   _ufunc_combine(np.multiply, np.logical_and),
                                   "differentiable")
scatter_min_p = _scatter_primitive("scatter-min", _ufunc_combine(np.minimum),
                                   "differentiable")
scatter_max_p = _scatter_primitive("scatter-max", _ufunc_combine(np.maximum),
                                   "differentiable")


def _bind_scatter(p, operand, indices, updates, dimension_numbers, indices_are_sorted,
                  unique_indices, mode, update_jaxpr=None, update_consts=()):
  return p.bind1(operand, indices, updates, dimension_numbers=_scatter_dnums(dimension_numbers),
                 indices_are_sorted=bool(indices_are_sorted),
                 unique_indices=bool(unique_indices), mode=GatherScatterMode.from_any(mode),
                 update_jaxpr=update_jaxpr, update_consts=tuple(update_consts))


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


def _make_scatter_wrapper(p: Primitive, name: str, what: str):
  def wrapper(operand, scatter_indices, updates, dimension_numbers, *,
              indices_are_sorted: bool = False, unique_indices: bool = False, mode=None):
    return _bind_scatter(p, operand, scatter_indices, updates, dimension_numbers,
                         indices_are_sorted, unique_indices, mode)
  wrapper.__name__ = wrapper.__qualname__ = name
  wrapper.__doc__ = (f"XLA's Scatter combining with {what}: repeated indices all "
                     "apply; out-of-bounds windows are dropped unless ``mode='clip'``.")
  return wrapper


scatter_add = _make_scatter_wrapper(scatter_add_p, "scatter_add", "addition")
scatter_sub = _make_scatter_wrapper(scatter_sub_p, "scatter_sub", "subtraction")
scatter_mul = _make_scatter_wrapper(scatter_mul_p, "scatter_mul", "multiplication")
scatter_min = _make_scatter_wrapper(scatter_min_p, "scatter_min", "minimum")
scatter_max = _make_scatter_wrapper(scatter_max_p, "scatter_max", "maximum")
