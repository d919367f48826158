"""Structural primitives: shapes and layouts without arithmetic."""
from __future__ import annotations

import math
import operator
from builtins import slice as builtins_slice

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, pp_eqn
from openjax._src.primitives import ad_util
from openjax._src.primitives._util import (axes_tuple, check_number, check_same_dtypes, in_float32,
                                           quiet, reduced_shape)
from openjax._src.primitives.convert import _convert_element_type

__all__ = ["broadcast_in_dim", "broadcast_in_dim_p", "reshape", "reshape_p", "iota", "iota_p",
           "broadcast"]


def _shape_tuple(fun: str, name: str, shape) -> tuple[int, ...]:
  try:
    out = tuple(operator.index(d) for d in shape)
  except TypeError:
    raise TypeError(f"{fun}: {name} must be a tuple of integers, got {shape!r}") from None
  if any(d < 0 for d in out):
    raise TypeError(f"{fun}: {name} must have non-negative dimensions, got {out}")
  return out




# ------------------------------------------------------------ broadcast_in_dim
broadcast_in_dim_p = Primitive("broadcast_in_dim", kind="linear")


@broadcast_in_dim_p.def_impl
def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions, sharding=None):
  expanded = [1] * len(shape)
  for i, d in enumerate(broadcast_dimensions):
    expanded[d] = x.shape[i]
  return [np.broadcast_to(np.reshape(x, expanded), shape)]


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_abstract_eval(x, *, shape, broadcast_dimensions, sharding=None):
  if len(broadcast_dimensions) != x.ndim:
    raise TypeError(
        "broadcast_in_dim broadcast_dimensions must have length equal to operand "
        f"ndim; got broadcast_dimensions {broadcast_dimensions} for operand ndim "
        f"{x.ndim}.")
  if any(not 0 <= d < len(shape) for d in broadcast_dimensions):
    raise TypeError(
        "broadcast_in_dim broadcast_dimensions must be in range [0, len(shape)); "
        f"got {broadcast_dimensions} for shape {shape}.")
  if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
    raise TypeError("broadcast_in_dim broadcast_dimensions must be strictly increasing; "
                    f"got broadcast_dimensions {broadcast_dimensions}")
  for i, d in enumerate(broadcast_dimensions):
    if x.shape[i] not in (1, shape[d]):
      raise TypeError(
          "broadcast_in_dim operand dimension sizes must either be 1, or be equal to "
          "their corresponding dimensions in the target broadcast shape; got operand "
          f"of shape {x.shape}, target broadcast shape {shape}, broadcast_dimensions "
          f"{broadcast_dimensions} ")
  return [ShapedArray(shape, x.dtype, x.weak_type)]


def broadcast_in_dim(operand, shape, broadcast_dimensions, out_sharding=None):
  """Broadcast ``operand`` to ``shape``; operand dimension ``i`` becomes
  output dimension ``broadcast_dimensions[i]``."""
  shape = _shape_tuple("broadcast_in_dim", "shape", shape)
  bdims = tuple(int(d) for d in broadcast_dimensions)
  if np.ndim(operand) == len(shape) and bdims == tuple(range(len(shape))) and \
      tuple(np.shape(operand)) == shape and hasattr(operand, "aval"):
    return operand
  return broadcast_in_dim_p.bind1(operand, shape=shape, broadcast_dimensions=bdims,
                                  sharding=None)


@broadcast_in_dim_p.def_pp
def _broadcast_in_dim_pp(eqn, ctx):
  # Like JAX: the shape is implied by the binder's type; trivial dims hidden.
  params = {k: v for k, v in eqn.params.items() if k not in ("shape", "sharding")}
  if not params["broadcast_dimensions"]:
    del params["broadcast_dimensions"]
  return pp_eqn(eqn, ctx, params=dict(sorted(params.items())))


def _zeros_like_aval(aval: ShapedArray):
  zero = np.zeros((), aval.dtype)
  return zero if not aval.shape else broadcast_in_dim(zero, aval.shape, ())


ad_util.register_zeros_maker(_zeros_like_aval)


def broadcast(operand, sizes):
  """Add leading dimensions of ``sizes`` to ``operand``."""
  sizes = _shape_tuple("broadcast", "sizes", sizes)
  nd = np.ndim(operand)
  return broadcast_in_dim(operand, sizes + tuple(np.shape(operand)),
                          tuple(range(len(sizes), len(sizes) + nd)))


# -------------------------------------------------------------------- reshape
reshape_p = Primitive("reshape", kind="linear")


@reshape_p.def_impl
def _reshape_impl(x, *, new_sizes, dimensions, sharding=None):
  if dimensions is not None:
    x = np.transpose(x, dimensions)
  return [np.reshape(x, new_sizes)]


@reshape_p.def_abstract_eval
def _reshape_abstract_eval(x, *, new_sizes, dimensions, sharding=None):
  if math.prod(new_sizes) != x.size:
    raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                    f"(of total size {math.prod(new_sizes)}) for shape "
                    f"{x.shape} (of total size {x.size}).")
  if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
    raise TypeError("reshape dimensions must be a permutation of operand dimensions, "
                    f"got dimensions {dimensions} for shape {x.shape}.")
  return [ShapedArray(new_sizes, x.dtype, x.weak_type)]


def reshape(operand, new_sizes, dimensions=None, out_sharding=None):
  """Reshape ``operand`` to ``new_sizes`` (after transposing by ``dimensions``
  if given); the total size must not change."""
  new_sizes = _shape_tuple("reshape", "new_sizes", new_sizes)
  dims = None if dimensions is None else tuple(int(d) for d in dimensions)
  if dims is not None and dims == tuple(range(np.ndim(operand))):
    dims = None
  if dims is None and tuple(np.shape(operand)) == new_sizes and hasattr(operand, "aval"):
    return operand
  return reshape_p.bind1(operand, new_sizes=new_sizes, dimensions=dims, sharding=None)


# ----------------------------------------------------------------------- iota
iota_p = Primitive("iota", kind="nondifferentiable")


@iota_p.def_impl
def _iota_impl(*, dtype, shape, dimension, sharding=None):
  n = shape[dimension]
  vals = np.arange(n).astype(dtype)
  expanded = [1] * len(shape)
  expanded[dimension] = n
  return [np.broadcast_to(vals.reshape(expanded), shape)]


@iota_p.def_abstract_eval
def _iota_abstract_eval(*, dtype, shape, dimension, sharding=None):
  if not 0 <= dimension < len(shape):
    raise ValueError(f"iota dimension must be between 0 and len(shape), got "
                     f"dimension={dimension} for shape {shape}")
  return [ShapedArray(shape, dtype, False)]


def iota(dtype, size: int):
  """``[0, 1, ..., size-1]`` of ``dtype``."""
  return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension: int, out_sharding=None):
  """An array of ``shape`` counting along ``dimension``."""
  dtype = dtypes.explicit_dtype(dtype, "iota")
  shape = _shape_tuple("broadcasted_iota", "shape", shape)
  dimension = int(dimension)
  return iota_p.bind1(dtype=dtype, shape=shape, dimension=dimension, sharding=None)


__all__ += ["broadcasted_iota"]


# ------------------------------------------------------------------ helpers
def _canonical_axis(axis, ndim: int) -> int:
  """``axis`` in ``[-ndim, ndim)`` as a non-negative int (lax's ValueError)."""
  axis = operator.index(axis)
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return axis + ndim if axis < 0 else axis


def _check_shapelike(fun: str, arg: str, obj) -> None:
  """lax's check that ``obj`` is a 1-D tuple of non-negative integers."""
  if not isinstance(obj, (tuple, list, np.ndarray)):
    raise TypeError(f"{fun} {arg} must be of type tuple/list/ndarray, got {type(obj)}.")
  if not len(obj):
    return
  try:
    vals = [operator.index(d) for d in obj]
  except TypeError:
    raise TypeError(f"{fun} {arg} must have every element be an integer type, got "
                    f"{tuple(map(type, obj))}.") from None
  if not all(d >= 0 for d in vals):
    raise TypeError(f"{fun} {arg} must have every element be nonnegative, got {tuple(obj)}.")


def _int_tuple(fun: str, arg: str, obj) -> tuple[int, ...]:
  try:
    return tuple(operator.index(d) for d in obj)
  except TypeError:
    raise TypeError(f"{fun}: {arg} must be a sequence of integers, got {obj!r}") from None


# -------------------------------------------------------------------- squeeze
squeeze_p = Primitive("squeeze", kind="linear")


@squeeze_p.def_impl
def _squeeze_impl(x, *, dimensions):
  return [np.squeeze(x, axis=dimensions) if dimensions else x]


@squeeze_p.def_abstract_eval
def _squeeze_abstract_eval(x, *, dimensions):
  if len(set(dimensions)) != len(dimensions):
    raise ValueError(f"dimensions are not unique: {dimensions}")
  if not all(0 <= d < x.ndim for d in dimensions):
    raise ValueError(f"dimensions outside range [0, ndim): {dimensions}")
  if any(x.shape[d] != 1 for d in dimensions):
    raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                     f"one, got shape={x.shape} and dimensions={dimensions}")
  shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
  return [ShapedArray(shape, x.dtype, x.weak_type)]


def squeeze(array, dimensions):
  """Remove the size-1 ``dimensions`` from ``array``."""
  ndim = np.ndim(array)
  dims = tuple(sorted(_canonical_axis(d, ndim) for d in dimensions))
  if not dims and hasattr(array, "aval"):
    return array
  return squeeze_p.bind1(array, dimensions=dims)


def expand_dims(array, dimensions):
  """Insert size-1 dimensions at ``dimensions`` (positions in the result)."""
  dimensions = tuple(dimensions)
  if len(set(dimensions)) != len(dimensions):
    raise ValueError(f"repeated axis in lax.expand_dims: {dimensions}")
  ndim_out = np.ndim(array) + len(dimensions)
  dims = [_canonical_axis(d, ndim_out) for d in dimensions]
  if len(set(dims)) != len(dims):  # -1 and ndim_out-1 name the same axis
    raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
  shape = list(np.shape(array))
  for d in sorted(dims):
    shape.insert(d, 1)
  kept = tuple(i for i in range(ndim_out) if i not in set(dims))
  return broadcast_in_dim(array, shape, kept)


# ------------------------------------------------------------------ transpose
transpose_p = Primitive("transpose", kind="linear")


@transpose_p.def_impl
def _transpose_impl(x, *, permutation):
  return [np.transpose(x, permutation)]


@transpose_p.def_abstract_eval
def _transpose_abstract_eval(x, *, permutation):
  if tuple(sorted(permutation)) != tuple(range(x.ndim)):
    raise TypeError("transpose permutation isn't a permutation of operand dimensions, "
                    f"got permutation {permutation} for operand shape {x.shape}.")
  return [ShapedArray(tuple(x.shape[i] for i in permutation), x.dtype, x.weak_type)]


def transpose(operand, permutation):
  """Permute the dimensions of ``operand``: result dimension ``i`` is operand
  dimension ``permutation[i]``."""
  if not isinstance(permutation, (tuple, list, np.ndarray)):
    raise TypeError(f"transpose permutation must be a tuple/list/ndarray, got "
                    f"{type(permutation)}.")
  perm = _int_tuple("transpose", "permutation", permutation)
  if perm == tuple(range(np.ndim(operand))) and hasattr(operand, "aval"):
    return operand
  return transpose_p.bind1(operand, permutation=perm)


# ------------------------------------------------------------------------ rev
rev_p = Primitive("rev", kind="linear")


@rev_p.def_impl
def _rev_impl(x, *, dimensions):
  return [np.flip(x, axis=dimensions) if dimensions else x]


@rev_p.def_abstract_eval
def _rev_abstract_eval(x, *, dimensions):
  _check_shapelike("rev", "dimensions", dimensions)
  if len(set(dimensions)) != len(dimensions):
    raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
  if dimensions and not max(dimensions) < x.ndim:
    raise TypeError("rev dimensions must all be less than operand ndim, got dimensions "
                    f"{dimensions} for operand ndim {x.ndim}.")
  return [ShapedArray(x.shape, x.dtype, x.weak_type)]


def rev(operand, dimensions):
  """Reverse ``operand`` along each of ``dimensions``."""
  return rev_p.bind1(operand, dimensions=_int_tuple("rev", "dimensions", dimensions))


# ------------------------------------------------------------------------ pad
pad_p = Primitive("pad", kind="linear")


@pad_p.def_impl
def _pad_impl(x, padding_value, *, padding_config):
  # Source element j of an axis lands at lo + j * (interior + 1); positions
  # outside the result (negative lo/hi) are dropped. One strided copy does it.
  shape = tuple(lo + hi + (d + (d - 1) * i if d else 0)
                for (lo, hi, i), d in zip(padding_config, x.shape))
  out = np.full(shape, np.asarray(padding_value, dtype=x.dtype), dtype=x.dtype)
  src, dst = [], []
  for (lo, hi, i), d, n in zip(padding_config, x.shape, shape):
    step = i + 1
    first = -(lo // step) if lo < 0 else 0          # ceil(-lo / step)
    last = min(d - 1, (n - 1 - lo) // step)
    if last < first:
      return [out]
    src.append(builtins_slice(first, last + 1))
    dst.append(builtins_slice(lo + first * step, lo + last * step + 1, step))
  out[tuple(dst)] = x[tuple(src)]
  return [out]


@pad_p.def_abstract_eval
def _pad_abstract_eval(x, padding_value, *, padding_config):
  if padding_value.ndim != 0:
    raise ValueError(f"padding_value must be a scalar; got "
                     f"np.shape(padding_value)={padding_value.shape}")
  if len(padding_config) != x.ndim:
    raise ValueError("length of padding_config must equal the number of axes of operand, "
                     f"got padding_config {padding_config} for operand shape {x.shape}")
  if not all(i >= 0 for _, _, i in padding_config):
    raise ValueError("interior padding in padding_config must be nonnegative, got "
                     f"padding_config {padding_config}")
  shape = tuple(lo + hi + (d + (d - 1) * i if d else 0)
                for (lo, hi, i), d in zip(padding_config, x.shape))
  if not all(d >= 0 for d in shape):
    raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                     f"{shape}, for padding_config {padding_config} and operand shape "
                     f"{x.shape}")
  if x.dtype != padding_value.dtype:
    raise TypeError(f"pad operand and padding_value must be same dtype: got "
                    f"{x.dtype.name} and {padding_value.dtype.name}.")
  return [ShapedArray(shape, x.dtype, x.weak_type and padding_value.weak_type)]


def pad(operand, padding_value, padding_config):
  """Pad ``operand`` with ``padding_value``: ``padding_config`` holds one
  ``(low, high, interior)`` triple per dimension; negative low/high cut."""
  try:
    config = tuple((operator.index(lo), operator.index(hi), operator.index(i))
                   for lo, hi, i in padding_config)
  except (TypeError, ValueError):
    raise TypeError("pad: padding_config must be a sequence of (low, high, interior) "
                    f"integer triples, got {padding_config!r}") from None
  return pad_p.bind1(operand, padding_value, padding_config=config)


# ---------------------------------------------------------------- concatenate
concatenate_p = Primitive("concatenate", kind="linear")


@concatenate_p.def_impl
def _concatenate_impl(*xs, dimension):
  return [np.concatenate(xs, axis=dimension)]


@concatenate_p.def_abstract_eval
def _concatenate_abstract_eval(*xs, dimension):
  if not xs:
    raise TypeError("concatenate expects at least one operand, got 0.")
  shapes = ", ".join(str(x.shape) for x in xs)
  if len({x.ndim for x in xs}) != 1:
    raise TypeError(f"Cannot concatenate arrays with different numbers of dimensions: "
                    f"got {shapes}.")
  if not 0 <= dimension < xs[0].ndim:
    raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for "
                    f"shapes {shapes}.")
  others = {x.shape[:dimension] + x.shape[dimension + 1:] for x in xs}
  if len(others) != 1:
    raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other "
                    f"than the one being concatenated: concatenating along dimension "
                    f"{dimension} for shapes {shapes}.")
  check_same_dtypes("concatenate", xs, "concatenate")
  shape = list(xs[0].shape)
  shape[dimension] = sum(x.shape[dimension] for x in xs)
  return [ShapedArray(shape, xs[0].dtype, all(x.weak_type for x in xs))]


def concatenate(operands, dimension: int):
  """Join ``operands`` (same dtype, same shape but along ``dimension``)."""
  operands = list(operands)
  if not operands:
    raise ValueError("concatenate requires a non-empty sequences of arrays")
  if len(operands) == 1 and hasattr(operands[0], "aval"):
    return operands[0]
  return concatenate_p.bind1(*operands, dimension=operator.index(dimension))


# ---------------------------------------------------------------------- split
split_p = Primitive("split", multiple_results=True, kind="linear")


@split_p.def_impl
def _split_impl(x, *, sizes, axis):
  if not sizes:   # np.split would still return the (empty) operand
    return []
  return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


@split_p.def_abstract_eval
def _split_abstract_eval(x, *, sizes, axis):
  if any(s < 0 for s in sizes):
    raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
  if x.shape[axis] != sum(sizes):
    raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the "
                     f"operand shape {list(x.shape)}")
  outs = []
  for s in sizes:
    shape = list(x.shape)
    shape[axis] = s
    outs.append(ShapedArray(shape, x.dtype, x.weak_type))
  return outs


def split(operand, sizes, axis: int = 0):
  """Split ``operand`` along ``axis`` into pieces of the given ``sizes``."""
  sizes = _int_tuple("split", "sizes", sizes)
  return split_p.bind(operand, sizes=sizes, axis=_canonical_axis(axis, np.ndim(operand)))


# ----------------------------------------------------------------------- tile
tile_p = Primitive("tile", kind="linear")


@tile_p.def_impl
def _tile_impl(x, *, reps):
  return [np.tile(x, reps) if x.ndim else x]


@tile_p.def_abstract_eval
def _tile_abstract_eval(x, *, reps):
  if x.ndim != len(reps):
    raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} "
                    f"and x.ndim={x.ndim}.")
  if any(r < 0 for r in reps):
    raise ValueError(f"tile: reps must be nonnegative, got {reps}")
  return [ShapedArray(tuple(d * r for d, r in zip(x.shape, reps)), x.dtype, x.weak_type)]


def tile(operand, reps):
  """Repeat ``operand`` ``reps[i]`` times along each dimension ``i``."""
  return tile_p.bind1(operand, reps=_int_tuple("tile", "reps", reps))


# ---------------------------------------------------------------------- slice
slice_p = Primitive("slice", kind="linear")


@slice_p.def_impl
def _slice_impl(x, *, start_indices, limit_indices, strides):
  strides = strides or (1,) * x.ndim
  return [x[tuple(builtins_slice(s, l, st)
                  for s, l, st in zip(start_indices, limit_indices, strides))]]


@slice_p.def_abstract_eval
def _slice_abstract_eval(x, *, start_indices, limit_indices, strides):
  _check_shapelike("slice", "start_indices", start_indices)
  _check_shapelike("slice", "limit_indices", limit_indices)
  if x.ndim != len(start_indices):
    raise TypeError("slice start_indices must have length equal to the number of "
                    f"dimensions of the operand, got indices {start_indices} for operand "
                    f"shape {x.shape}.")
  if len(start_indices) != len(limit_indices):
    raise TypeError("slice limit_indices must have the same length as start_indices, got "
                    f"start_indices {start_indices} and limit_indices {limit_indices}.")
  if not all(d >= l for d, l in zip(x.shape, limit_indices)):
    raise TypeError("slice limit_indices must be less than or equal to operand shape, got "
                    f"limit_indices {limit_indices} for operand shape {x.shape}.")
  if not all(l >= s for s, l in zip(start_indices, limit_indices)):
    raise TypeError("slice limit_indices must be greater than or equal to start_indices, "
                    f"got start_indices {start_indices} and limit_indices {limit_indices}.")
  diff = tuple(l - s for s, l in zip(start_indices, limit_indices))
  if strides is not None and tuple(strides) != (1,) * x.ndim:
    _check_shapelike("slice", "strides", strides)
    if len(strides) != x.ndim:
      raise TypeError("slice strides must have length equal to the number of dimensions "
                      f"of the operand, got strides {strides} for operand shape {x.shape}.")
    if not all(s > 0 for s in strides):
      raise TypeError(f"slice strides must be positive, got {strides}")
    diff = tuple(0 if d == 0 else (d - 1) // s + 1 for d, s in zip(diff, strides))
  return [ShapedArray(diff, x.dtype, x.weak_type)]


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 - JAX's name
  """The static slice ``operand[start:limit:stride]`` in every dimension."""
  return slice_p.bind1(
      operand, start_indices=_int_tuple("slice", "start_indices", start_indices),
      limit_indices=_int_tuple("slice", "limit_indices", limit_indices),
      strides=None if strides is None else _int_tuple("slice", "strides", strides))


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
  """``operand[start:limit:stride]`` along ``axis`` only; None and negative
  indices count as in Python."""
  shape = np.shape(operand)
  axis = int(axis)
  n = shape[axis]
  start = 0 if start_index is None else operator.index(start_index)
  limit = n if limit_index is None else operator.index(limit_index)
  start = start + n if start < 0 else start
  limit = limit + n if limit < 0 else limit
  starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
  starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
  return slice(operand, starts, limits, strides)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
  """``operand[index]`` along ``axis`` (the axis is kept unless
  ``keepdims=False``); IndexError when out of bounds."""
  index, axis = operator.index(index), int(axis)
  n = np.shape(operand)[axis]
  wrapped = index + n if index < 0 else index
  if not 0 <= wrapped < n:
    raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
  out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
  return out if keepdims else squeeze(out, (axis,))


# ------------------------------------------------- convenience wrappers
def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
  """Merge dimensions ``[start_dimension, stop_dimension)`` into one."""
  shape = tuple(np.shape(operand))
  lo, hi, _ = builtins_slice(start_dimension, stop_dimension).indices(len(shape))
  if hi < lo:
    raise ValueError(f"Invalid dimension range passed to collapse: {shape}"
                     f"[{start_dimension}:{stop_dimension}]")
  size = math.prod(shape[lo:hi])
  return reshape(operand, shape[:lo] + (size,) + shape[hi:])


def full(shape, fill_value, dtype=None, *, sharding=None):
  """An array of ``shape`` filled with the scalar ``fill_value`` (cast to
  ``dtype`` if given; weakly typed when ``fill_value`` is a Python scalar)."""
  shape = (shape,) if isinstance(shape, int) else shape
  shape = _shape_tuple("full", "shape", shape)
  if np.shape(fill_value):
    raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                    f"{np.shape(fill_value)}.")
  if dtype is None:
    weak, dt = dtypes.is_weakly_typed(fill_value), dtypes.dtype(fill_value)
  else:
    weak, dt = False, dtypes.explicit_dtype(dtype, "full")
  return broadcast(_convert_element_type(fill_value, dt, weak), shape)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
  """An array like ``x`` (its shape and dtype unless given) filled with
  ``fill_value``."""
  fill_shape = np.shape(x) if shape is None else shape
  weak = dtype is None and dtypes.is_weakly_typed(x)
  dt = dtypes.dtype(x if dtype is None else dtype)
  return full(fill_shape, _convert_element_type(fill_value, dt, weak))


def broadcast_shapes(*shapes):
  """The NumPy broadcast of ``shapes`` (ValueError when incompatible)."""
  if not shapes:
    raise TypeError("broadcast_shapes: At least one shape is required.")
  shapes = [tuple(s) for s in shapes]
  for s in shapes:
    checked = _int_tuple("broadcast_shapes", "shape", s)
    if not all(d >= 0 for d in checked):
      raise TypeError("Only non-negative indices are allowed when broadcasting static "
                      f"shapes, but got shape {s!r}.")
  ndim = max(len(s) for s in shapes)
  out = []
  for ds in zip(*((1,) * (ndim - len(s)) + s for s in shapes)):
    non1 = {d for d in ds if d != 1}
    if len(non1) > 1:
      raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}")
    out.append(non1.pop() if non1 else 1)
  return tuple(out)


def broadcast_to_rank(x, rank: int):
  """Add leading size-1 dimensions to give ``x`` rank ``rank``."""
  ndim = np.ndim(x)
  return x if ndim == rank else broadcast(x, (1,) * (rank - ndim))


__all__ += ["squeeze", "squeeze_p", "expand_dims", "transpose", "transpose_p", "rev",
            "rev_p", "pad", "pad_p", "concatenate", "concatenate_p", "split", "split_p",
            "tile", "tile_p", "slice", "slice_p", "slice_in_dim", "index_in_dim",
            "collapse", "full", "full_like", "broadcast_shapes", "broadcast_to_rank"]


# ------------------------------------------------------------ reduce_sum
reduce_sum_p = Primitive("reduce_sum", kind="linear")


@reduce_sum_p.def_impl
@quiet
def _reduce_sum_impl(x, *, axes, out_sharding=None):
  xc, dt = in_float32(x)
  return [np.asarray(np.sum(xc, axis=axes, dtype=xc.dtype)).astype(dt)]


@reduce_sum_p.def_abstract_eval
def _reduce_sum_abstract_eval(x, *, axes, out_sharding=None):
  check_number("reduce_sum", x)
  return [ShapedArray(reduced_shape(x, axes), x.dtype, x.weak_type)]


def reduce_sum(operand, axes, *, out_sharding=None):
  """Sum of ``operand`` over ``axes`` (no upcast of narrow dtypes)."""
  return reduce_sum_p.bind1(operand, axes=axes_tuple("reduce_sum", axes), out_sharding=None)


__all__ += ["reduce_sum", "reduce_sum_p"]
