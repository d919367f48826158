"""Shared pieces of the indexing primitives (``gather_scatter.py`` and
``dynamic_slicing.py``): the dimension-number and mode parameter types, the
NumPy machinery behind the gather/scatter ``impl`` rules, and the checks their
abstract evaluation rules share."""
from __future__ import annotations

import enum
import operator
from typing import NamedTuple, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Tracer
from openjax._src.primitives.base.convert import convert_numpy
from openjax._src.primitives.index.scatter_apply import apply_in_order, combiner


def shape_param(fun: str, name: str, shape) -> tuple[int, ...]:
  """A tuple of non-negative ints (TypeError naming ``fun`` otherwise)."""
  if type(shape) is tuple:   # most calls (plans pass tuples of ints): as it is
    for d in shape:
      if type(d) is not int or d < 0:
        break
    else:
      return shape
  try:
    out = tuple(operator.index(d) for d in shape)
  except TypeError:
    raise TypeError(f"{fun}: {name} must be a sequence of integers, got {shape!r}") from None
  if any(d < 0 for d in out):
    raise TypeError(f"{fun}: {name} must be non-negative, got {out}")
  return out


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


def dims(fun: str, name: str, dims) -> tuple[int, ...]:
  try:
    return tuple(operator.index(d) for d in dims)
  except TypeError:
    raise TypeError(f"{fun}: {name} must be a sequence of integers, got {dims!r}") from None


# id -> (dimension numbers given, their canonical form: tuples of Python
# ints), the given object kept alive here so that no other takes its id:
# a caller passing the same object again (the eager ``x.at[]`` and
# ``x[idx]`` plans, ``jnp.take``, a loop over one ``lax.scatter`` call)
# skips the per-field checks (~2.5 us a bind). Only objects of tuples are
# remembered (lists inside could change).
_CANONICAL_DNUMS: dict = {}


def _canonical_dnums(fun: str, cls, dnums):
  hit = _CANONICAL_DNUMS.get(id(dnums))
  if hit is not None and hit[0] is dnums:
    return hit[1]
  if not isinstance(dnums, cls):
    raise TypeError(f"{fun}: dimension_numbers must be a lax.{cls.__name__}, "
                    f"got {type(dnums).__name__}")
  canonical = cls(*[dims(fun, f, v) for f, v in zip(dnums._fields, dnums)])
  if len(_CANONICAL_DNUMS) >= 4096:
    _CANONICAL_DNUMS.clear()
  _CANONICAL_DNUMS[id(canonical)] = (canonical, canonical)
  if all(type(v) is tuple for v in dnums):
    _CANONICAL_DNUMS[id(dnums)] = (dnums, canonical)
  return canonical


def gather_dnums(dnums) -> GatherDimensionNumbers:
  return _canonical_dnums("gather", GatherDimensionNumbers, dnums)


def scatter_dnums(dnums) -> ScatterDimensionNumbers:
  return _canonical_dnums("scatter", ScatterDimensionNumbers, dnums)


# ---------------------------------------------------- shared NumPy machinery
def as_int64(idx: np.ndarray) -> np.ndarray:
  """Index values as int64; huge unsigned values saturate (they are out of
  bounds either way)."""
  if idx.dtype.kind == "u" and idx.dtype.itemsize >= 8:
    idx = np.minimum(idx, np.iinfo(np.int64).max)
  return np.asarray(idx).astype(np.int64)


def window_starts(operand_shape, indices, index_dims, operand_batching_dims,
                   indices_batching_dims):
  """(B, R) int64 window start of every index vector, before clamping, and the
  (B, K) raw index vectors."""
  batch_shape = indices.shape[:-1]
  nbatch = int(np.prod(batch_shape, dtype=np.int64))
  idx = as_int64(indices).reshape(nbatch, indices.shape[-1])
  starts = np.zeros((nbatch, len(operand_shape)), np.int64)
  if index_dims:
    starts[:, list(index_dims)] = idx
  if operand_batching_dims:
    coords = np.indices(batch_shape).reshape(len(batch_shape), nbatch)
    for od, idim in zip(operand_batching_dims, indices_batching_dims):
      starts[:, od] = coords[idim]
  return starts, idx


def in_bounds(idx, index_dims, operand_shape, window_shape) -> np.ndarray:
  """(B,) mask: the whole window of each index vector lies in the operand."""
  if not index_dims:
    return np.ones(idx.shape[0], bool)
  upper = np.array([operand_shape[d] - window_shape[d] for d in index_dims], np.int64)
  return np.all((idx >= 0) & (idx <= upper), axis=1)


def window_grids(starts, window_shape):
  """Per operand dimension, the (B, *window_shape) positions a window covers."""
  nbatch, rank = starts.shape
  grids = []
  for d in range(rank):
    offs = np.arange(window_shape[d], dtype=np.int64).reshape(
        (1,) + tuple(window_shape[d] if e == d else 1 for e in range(rank)))
    grids.append(starts[:, d].reshape((nbatch,) + (1,) * rank) + offs)
  return grids


def gather_windows(operand, starts, window_shape, indexed_dims):
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


def cast_scalar(value, dtype) -> np.ndarray:
  return convert_numpy(np.asarray(value), dtype)


# ------------------------------------------------------------ gather helpers
def gather_out_shape(indices_shape, dnums, slice_sizes) -> tuple[int, ...]:
  rank = len(dnums.offset_dims) + len(indices_shape) - 1
  batch = iter(indices_shape[:-1])
  window = iter(s for i, s in enumerate(slice_sizes)
                if i not in dnums.collapsed_slice_dims and i not in dnums.operand_batching_dims)
  return tuple(next(window) if i in dnums.offset_dims else next(batch) for i in range(rank))


def output_perm(batch: int, rest: int, offset_dims) -> tuple | None:
  """The transpose from (batch..., rest...) to a gather's output order (the
  rest dimensions at ``offset_dims``), or None when it is the same."""
  perm, b, r = [], 0, 0
  for pos in range(batch + rest):
    if pos in offset_dims:
      perm.append(batch + r)
      r += 1
    else:
      perm.append(b)
      b += 1
  return None if perm == list(range(batch + rest)) else tuple(perm)


def to_output_order(win, batch_shape, offset_dims):
  """(batch..., offsets...) -> output order, offsets at ``offset_dims``."""
  perm = output_perm(len(batch_shape), win.ndim - len(batch_shape), offset_dims)
  return win if perm is None else np.transpose(win, perm)


def is_sorted(dims, op, name):
  if any(dims[i] < dims[i - 1] for i in range(1, len(dims))):
    raise TypeError(f"{name} in {op} op must be sorted; got {dims}")


def dims_in_range(dims, rank, op, name):
  for d in dims:
    if d < 0 or d >= rank:
      raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); got: {d}.")


def no_duplicate_dims(dims, op, name):
  if len(set(dims)) != len(dims):
    raise TypeError(f"{name} in {op} op must not repeat; got: {dims}.")


def disjoint_dims(dims1, dims2, op, name1, name2):
  if not set(dims1).isdisjoint(dims2):
    raise TypeError(f"{name1} and {name2} in {op} op must be disjoint; "
                    f"got: {dims1} and {dims2}.")


def check_index_dtype(indices):
  if not dtypes.issubdtype(indices.dtype, np.integer):
    raise ValueError("indices must have an integer type")


def check_batching(op, operand, indices, operand_batching_dims, indices_batching_dims,
                    indices_name):
  no_duplicate_dims(operand_batching_dims, op, "operand_batching_dims")
  is_sorted(operand_batching_dims, op, "operand_batching_dims")
  dims_in_range(operand_batching_dims, operand.ndim, op, "operand_batching_dims")
  no_duplicate_dims(indices_batching_dims, op, indices_name)
  dims_in_range(indices_batching_dims, indices.ndim, op, indices_name)
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



_DEFAULT_FILLS: dict = {}


def default_fill_value(dtype):
  """The fill of out-of-bounds gathers: NaN for inexact dtypes, the most
  negative value for signed ints, the largest for unsigned, True for bool
  (found once per dtype: ~4 us of dtype tests a ``jnp.take`` call)."""
  fill = _DEFAULT_FILLS.get(dtype)
  if fill is None:
    fill = _DEFAULT_FILLS[dtype] = _default_fill_value(np.dtype(dtype))
  return fill


def _default_fill_value(dtype: np.dtype):
  if dtypes.issubdtype(dtype, np.inexact):
    return np.nan
  if dtypes.issubdtype(dtype, np.signedinteger):
    return int(dtypes.iinfo(dtype).min)
  if dtypes.issubdtype(dtype, np.unsignedinteger):
    return int(dtypes.iinfo(dtype).max)
  if dtype == dtypes.bool_:
    return True
  raise ValueError(f"Unsupported dtype for gather fill_value {dtype}")


def static_scalar(value, what: str):
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


# ----------------------------------------------------------- scatter helpers
def scatter_window_shape(operand_shape, updates_shape, dn) -> tuple[int, ...]:
  out, pos = [], 0
  for d in range(len(operand_shape)):
    if d in dn.inserted_window_dims or d in dn.operand_batching_dims:
      out.append(1)
    else:
      out.append(updates_shape[dn.update_window_dims[pos]])
      pos += 1
  return tuple(out)


def ufunc_combine(ufunc, bool_ufunc=None):
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


def replace_combine(flat, lin, vals):
  flat[lin] = vals


def jaxpr_combine(update_jaxpr, update_consts):
  """Apply ``update_jaxpr(old, update)`` at each index; repeated indices apply
  it repeatedly, in order of occurrence (``scatter_apply.apply_in_order``)."""
  c = combiner(update_jaxpr, update_consts)

  def combine(flat, lin, vals):
    apply_in_order(c, flat, lin, vals)
  return combine


def scatter_impl_with(combine):
  def impl(operand, indices, updates, *, dimension_numbers, indices_are_sorted,
           unique_indices, mode, update_jaxpr, update_consts):
    dn = dimension_numbers
    out = np.array(operand, copy=True, order="C")   # reshape(-1) must be a view
    if out.size == 0 or updates.size == 0:
      return [out]
    wshape = scatter_window_shape(operand.shape, updates.shape, dn)
    scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    starts, idx = window_starts(operand.shape, indices, dn.scatter_dims_to_operand_dims,
                                 dn.operand_batching_dims, dn.scatter_indices_batching_dims)
    upd = np.transpose(updates, scatter_dims + list(dn.update_window_dims))
    upd = upd.reshape((starts.shape[0],) + wshape)
    if mode == GatherScatterMode.CLIP:
      upper = np.array(operand.shape, np.int64) - np.array(wshape, np.int64)
      starts = np.clip(starts, 0, upper)
    else:   # FILL_OR_DROP and PROMISE_IN_BOUNDS drop windows not wholly in bounds
      ok = in_bounds(idx, dn.scatter_dims_to_operand_dims, operand.shape, wshape)
      if not ok.all():
        starts, upd = starts[ok], upd[ok]
    lin = np.ravel_multi_index(window_grids(starts, wshape), operand.shape).ravel()
    c = combine if update_jaxpr is None or combine is not replace_combine else \
        jaxpr_combine(update_jaxpr, update_consts)
    c(out.reshape(-1), lin, np.ascontiguousarray(upd).reshape(-1))
    return [out]
  return impl



# ------------------------------------------------------------ lowering helpers
# The lowering rules never rely on the backend's handling of out-of-bounds
# indices (IREE's scatter writes out of bounds instead of dropping, and
# reinterprets narrow unsigned indices as signed): indices are clamped in
# their own dtype, masks are explicit, and the indices the ops see are i32
# (i64 for huge operands).
def lower_index_dtype(*sizes) -> np.dtype:
  """The index type of lowered gathers/scatters/dynamic slices: i32 unless
  an operand dimension needs i64."""
  return np.dtype(np.int32 if max(sizes, default=0) <= np.iinfo(np.int32).max else np.int64)


def _compare_type(dtype) -> str:
  kind = "UNSIGNED" if dtypes.kind(np.dtype(dtype)) in "ub" else "SIGNED"
  return f"#stablehlo<comparison_type {kind}>"


def _clamp_bounds(dtype, uppers) -> np.ndarray:
  """``uppers`` (non-negative) saturated to ``dtype``'s largest value."""
  top = int(dtypes.iinfo(dtype).max)
  return np.array([min(int(u), top) for u in uppers], dtype)


def lower_clamp_index_vectors(ctx, indices, idx_aval, uppers):
  """``indices`` (..., K) with component k clamped into ``[0, uppers[k]]``,
  computed in the indices' own dtype."""
  dt = np.dtype(idx_aval.dtype)
  shape = idx_aval.shape
  hi = ctx.broadcast_in_dim(ctx.constant(_clamp_bounds(dt, uppers)), shape, (len(shape) - 1,))
  lo = ctx.full(0, shape, dt)
  return ctx.op("stablehlo.clamp", [lo, indices, hi], ctx.tensor_type(shape, dt))


def lower_clamp_scalar(ctx, x, aval, upper, index_dtype):
  """A scalar start index clamped into ``[0, upper]`` and converted to
  ``index_dtype``."""
  dt = np.dtype(aval.dtype)
  t = ctx.tensor_type((), dt)
  x = ctx.op("stablehlo.clamp", [ctx.constant(np.zeros((), dt)), x,
                                 ctx.constant(_clamp_bounds(dt, [upper])[0])], t)
  return ctx.convert(x, index_dtype, ())


def lower_unchanged(ctx, raw, clamped, idx_aval):
  """A boolean of shape ``indices.shape[:-1]``: whether clamping left the
  whole index vector unchanged (its window is in bounds)."""
  shape = idx_aval.shape
  bool_t = ctx.tensor_type(shape, np.bool_)
  eq = ctx.op("stablehlo.compare", [raw, clamped], bool_t,
              attrs={"comparison_direction": "#stablehlo<comparison_direction EQ>",
                     "compare_type": _compare_type(idx_aval.dtype)})
  out_t = ctx.tensor_type(shape[:-1], np.bool_)
  if shape[-1] == 1:
    return ctx.op("stablehlo.reshape", [eq], out_t)
  scalar = ctx.tensor_type((), np.bool_)
  with ctx.region([scalar, scalar]) as body:
    a, b = body.args
    ctx.ret([ctx.op("stablehlo.and", [a, b], scalar)])
  return ctx.op("stablehlo.reduce", [eq, ctx.constant(np.array(True))], out_t,
                attrs={"dimensions": (len(shape) - 1,)}, regions=[body])


def _dims_list(dims) -> str:
  return "[" + ", ".join(str(int(d)) for d in dims) + "]"


def _dnums_attr(kind: str, fields, index_vector_dim: int) -> str:
  parts = [f"{name} = {_dims_list(v)}" for name, v in fields if len(v)]
  parts.append(f"index_vector_dim = {int(index_vector_dim)}")
  return f"#stablehlo.{kind}<" + ", ".join(parts) + ">"


def gather_dnums_attr(dn: GatherDimensionNumbers, index_vector_dim: int) -> str:
  """``#stablehlo.gather<...>`` for ``dn`` (empty fields omitted)."""
  return _dnums_attr("gather", [
      ("offset_dims", dn.offset_dims), ("collapsed_slice_dims", dn.collapsed_slice_dims),
      ("operand_batching_dims", dn.operand_batching_dims),
      ("start_indices_batching_dims", dn.start_indices_batching_dims),
      ("start_index_map", dn.start_index_map)], index_vector_dim)


def scatter_dnums_attr(dn: ScatterDimensionNumbers, index_vector_dim: int) -> str:
  """``#stablehlo.scatter<...>`` for ``dn`` (empty fields omitted)."""
  return _dnums_attr("scatter", [
      ("update_window_dims", dn.update_window_dims),
      ("inserted_window_dims", dn.inserted_window_dims),
      ("input_batching_dims", dn.operand_batching_dims),
      ("scatter_indices_batching_dims", dn.scatter_indices_batching_dims),
      ("scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims)], index_vector_dim)
