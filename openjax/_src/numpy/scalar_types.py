"""JAX's scalar types (``jnp.float32``, ``jnp.int8``, ``jnp.bfloat16``, ...)
and the array API metadata (``__array_api_version__``,
``__array_namespace_info__``).

JAX has no scalar objects: calling a scalar type returns a strongly typed
Array (``jnp.float32(1.5)`` is a 0-d float32 Array, ``jnp.int32([1, 2])`` a
1-D one). The types still work wherever NumPy wants a dtype
(``np.dtype(jnp.float32)``, ``x.astype(jnp.bfloat16)``), compare equal to the
NumPy scalar types, and ``isinstance(v, jnp.float32)`` tests the NumPy type.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from openjax._src import dtypes
from openjax._src.numpy.creation import asarray
from openjax._src.core.devices import devices

__all__ = [
    "bool_", "bool", "int1", "int2", "int4", "int8", "int16", "int32", "int64",
    "uint1", "uint2", "uint4", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "bfloat16", "complex64", "complex128",
    "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3",
    "float8_e4m3b11fnuz", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
    "single", "double", "csingle", "cdouble", "int_", "uint", "float_", "complex_",
    "__array_api_version__", "__array_namespace_info__",
]


class _ScalarMeta(type):
  """The metaclass of the scalar types: calling one builds an Array."""
  dtype: np.dtype

  @property
  def __numpy_dtype__(cls) -> np.dtype:  # NumPy >= 2.4's dtype protocol
    return cls.dtype

  def __hash__(cls) -> int:
    return hash(cls.dtype.type)

  def __eq__(cls, other: Any) -> bool:
    return cls is other or cls.dtype.type == other

  def __ne__(cls, other: Any) -> bool:
    return not cls == other

  def __call__(cls, x: Any):
    return asarray(x, dtype=cls.dtype)

  def __instancecheck__(cls, instance: Any) -> bool:
    return isinstance(instance, cls.dtype.type)


def _scalar_type(dt: np.dtype) -> _ScalarMeta:
  name = dt.type.__name__
  doc = (f"A JAX scalar constructor of type {name}: calling it returns a "
         "zero-dimensional (or, given a sequence, N-dimensional) Array.")
  t = _ScalarMeta(name, (object,), {"dtype": dt, "__doc__": doc})
  t.__module__ = "openjax.numpy"
  return t


bool_ = _scalar_type(dtypes.bool_)
int1 = _scalar_type(dtypes.int1)
int2 = _scalar_type(dtypes.int2)
int4 = _scalar_type(dtypes.int4)
int8 = _scalar_type(dtypes.int8)
int16 = _scalar_type(dtypes.int16)
int32 = _scalar_type(dtypes.int32)
int64 = _scalar_type(dtypes.int64)
uint1 = _scalar_type(dtypes.uint1)
uint2 = _scalar_type(dtypes.uint2)
uint4 = _scalar_type(dtypes.uint4)
uint8 = _scalar_type(dtypes.uint8)
uint16 = _scalar_type(dtypes.uint16)
uint32 = _scalar_type(dtypes.uint32)
uint64 = _scalar_type(dtypes.uint64)
float4_e2m1fn = _scalar_type(dtypes.float4_e2m1fn)
float6_e2m3fn = _scalar_type(dtypes.float6_e2m3fn)
float6_e3m2fn = _scalar_type(dtypes.float6_e3m2fn)
float8_e3m4 = _scalar_type(dtypes.float8_e3m4)
float8_e4m3 = _scalar_type(dtypes.float8_e4m3)
float8_e8m0fnu = _scalar_type(dtypes.float8_e8m0fnu)
float8_e4m3fn = _scalar_type(dtypes.float8_e4m3fn)
float8_e4m3fnuz = _scalar_type(dtypes.float8_e4m3fnuz)
float8_e5m2 = _scalar_type(dtypes.float8_e5m2)
float8_e5m2fnuz = _scalar_type(dtypes.float8_e5m2fnuz)
float8_e4m3b11fnuz = _scalar_type(dtypes.float8_e4m3b11fnuz)
bfloat16 = _scalar_type(dtypes.bfloat16)
float16 = _scalar_type(dtypes.float16)
float32 = single = _scalar_type(dtypes.float32)
float64 = double = _scalar_type(dtypes.float64)
complex64 = csingle = _scalar_type(dtypes.complex64)
complex128 = cdouble = _scalar_type(dtypes.complex128)

int_ = int64
uint = uint64
float_ = float64
complex_ = complex128


# ------------------------------------------------------------ array API
__array_api_version__ = "2024.12"

_API_KINDS = {
    "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
    "real floating": "f", "complex floating": "c", "numeric": "iufc",
}


class ArrayNamespaceInfo:
  """What the array API namespace supports (``__array_namespace_info__()``)."""
  _capabilities = {
      "boolean indexing": False,  # not inside transformations
      "data-dependent shapes": False,  # not inside transformations
      "max dimensions": 64,
  }

  def capabilities(self) -> dict:
    return self._capabilities

  def default_device(self):
    # Arrays are uncommitted by default: None lets the runtime place them.
    return None

  def devices(self) -> list:
    return [None, *devices()]

  def default_dtypes(self, *, device: Any = None) -> dict:
    return {
        "real floating": dtypes.default_float_dtype(),
        "complex floating": dtypes.default_complex_dtype(),
        "integral": dtypes.default_int_dtype(),
        "indexing": dtypes.default_int_dtype(),
    }

  def dtypes(self, *, device: Any = None, kind: Any = None) -> dict:
    names = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float32",
             "complex64"]
    if dtypes.x64_enabled():
      names += ["int64", "uint64", "float64", "complex128"]
    available = [np.dtype(n) for n in names]
    kinds = (None,) if kind is None else kind if isinstance(kind, tuple) else (kind,)
    out = {}
    for k in kinds:
      if k is not None and k not in _API_KINDS:
        raise ValueError(f"Unrecognized kind={k!r}; expected one of {list(_API_KINDS)}.")
      letters = "biufc" if k is None else _API_KINDS[k]
      out.update({dt.name: dt for dt in available if dt.kind in letters})
    return out


def __array_namespace_info__() -> ArrayNamespaceInfo:
  """The array API inspection object of ``openjax.numpy``."""
  return ArrayNamespaceInfo()


bool = bool_  # noqa: A001 - the array API's name for the bool dtype
