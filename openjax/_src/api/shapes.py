"""``ShapeDtypeStruct`` and turning arguments into abstract values."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Array, ShapedArray, Tracer
from openjax._src.core.sharding import aval_sharding
from openjax._src.core.trace import python_int_dtype


class ShapeDtypeStruct:
  """A stand-in for an array with only a shape and a dtype (and weak type):
  pass it to ``jit(f).trace``/``lower``, ``eval_shape`` or ``make_jaxpr``."""
  __slots__ = ("shape", "dtype", "sharding", "weak_type")

  def __init__(self, shape, dtype, *, sharding=None, weak_type: bool = False):
    self.shape = tuple(int(d) for d in shape)
    if dtype is None:
      raise ValueError("ShapeDtypeStruct: dtype must be specified.")
    self.dtype = np.dtype(dtype)
    self.sharding = sharding
    self.weak_type = bool(weak_type)

  @property
  def ndim(self) -> int:
    return len(self.shape)

  @property
  def size(self) -> int:
    return math.prod(self.shape)

  @classmethod
  def like(cls, x) -> "ShapeDtypeStruct":
    """The shape, dtype and weak type of an array-like ``x``."""
    aval = abstractify(x)
    return cls(aval.shape, aval.dtype, weak_type=aval.weak_type)

  def update(self, shape=None, dtype=None, sharding=None, weak_type=None):
    return ShapeDtypeStruct(self.shape if shape is None else shape,
                            self.dtype if dtype is None else dtype,
                            sharding=self.sharding if sharding is None else sharding,
                            weak_type=self.weak_type if weak_type is None else weak_type)

  def __repr__(self):
    wt = ", weak_type=True" if self.weak_type else ""
    sh = f", sharding={self.sharding}" if self.sharding is not None else ""
    return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sh}{wt})"

  def __eq__(self, other):
    return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
            and self.dtype == other.dtype and self.weak_type == other.weak_type
            and self.sharding == other.sharding)

  def __hash__(self):
    return hash((self.shape, self.dtype, self.weak_type))

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]


def abstractify(x: Any, what: str = "argument") -> ShapedArray:
  """The abstract value of a function argument, with JAX's TypeError for
  values that are not arrays."""
  t = type(x)
  if t is Array or isinstance(x, Tracer):
    return x.aval
  if t in dtypes.python_scalar_dtypes:
    dt = python_int_dtype(x) if t is int else dtypes.dtype(x)   # as an eager operand's
    return ShapedArray((), dt, weak_type=t is not bool)
  if t is ShapeDtypeStruct:
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), x.weak_type,
                       aval_sharding(x.sharding, x.shape))
  if isinstance(x, (np.ndarray, np.generic)):
    try:
      dt = dtypes.dtype(x)
    except TypeError:
      raise TypeError(f"{what} of type {type(x)} with dtype {x.dtype} is not a valid "
                      "JAX type") from None
    return ShapedArray(x.shape, dt, False)
  if hasattr(x, "__jax_array__"):
    return abstractify(x.__jax_array__(), what)
  if hasattr(x, "shape") and hasattr(x, "dtype") and not callable(x):
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), bool(getattr(x, "weak_type", False)))
  raise TypeError(f"{what} of type {type(x)} is not a valid JAX type")


def to_shape_dtype_struct(aval: ShapedArray) -> ShapeDtypeStruct:
  return ShapeDtypeStruct(aval.shape, aval.dtype, weak_type=aval.weak_type)
