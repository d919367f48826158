"""Structural primitives: shapes and layouts without arithmetic."""
from __future__ import annotations

import operator

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray

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
  if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
    raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                    f"(of total size {int(np.prod(new_sizes, dtype=np.int64))}) for shape "
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
