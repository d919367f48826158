"""MLIR spellings of JAX types and values: element types, tensor types and
dense elements attributes (``dense<...>``) in the forms the MLIR parser
accepts for every dtype JAX has (bool, signed and unsigned ints, bf16, f16,
the float8 family, complex)."""
from __future__ import annotations

import re

import numpy as np

from openjax._src import dtypes

# numpy dtype -> MLIR element type. float0 (the tangent type of integer
# values) has no storage; like JAX we lower it as a boolean tensor.
_ELEMENT_TYPES: dict[np.dtype, str] = {
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8", np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32", np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8", np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32", np.dtype(np.uint64): "ui64",
    dtypes.int4: "i4", dtypes.uint4: "ui4",
    np.dtype(np.float16): "f16", dtypes.bfloat16: "bf16",
    np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "complex<f32>", np.dtype(np.complex128): "complex<f64>",
    dtypes.float8_e4m3fn: "f8E4M3FN", dtypes.float8_e5m2: "f8E5M2",
    dtypes.float8_e4m3fnuz: "f8E4M3FNUZ", dtypes.float8_e5m2fnuz: "f8E5M2FNUZ",
    dtypes.float8_e4m3b11fnuz: "f8E4M3B11FNUZ", dtypes.float8_e3m4: "f8E3M4",
    dtypes.float8_e4m3: "f8E4M3", dtypes.float8_e8m0fnu: "f8E8M0FNU",
    dtypes.float4_e2m1fn: "f4E2M1FN",
    dtypes.float0: "i1",
}

# Sub-byte types are one byte per element in NumPy (ml_dtypes) but packed in
# MLIR's raw buffers, so their constants are written element by element.
_NO_HEX_BLOB = frozenset((np.dtype(np.bool_), dtypes.int4, dtypes.uint4,
                          dtypes.float4_e2m1fn, dtypes.float0))


def element_type(dtype) -> str:
  """The MLIR element type of a NumPy/JAX dtype (``float32`` -> ``f32``)."""
  dt = np.dtype(dtype)
  try:
    return _ELEMENT_TYPES[dt]
  except KeyError:
    raise NotImplementedError(
        f"lowering: dtype {dt.name} has no StableHLO element type; convert the "
        "value to a supported dtype before jit") from None


def tensor_type(shape, dtype) -> str:
  """``tensor<2x3xf32>`` (``tensor<f32>`` for a scalar)."""
  key = (tuple(shape), dtype)
  ty = _TENSOR_TYPES.get(key)
  if ty is None:
    dims = "".join(f"{int(d)}x" for d in shape)
    ty = f"tensor<{dims}{element_type(dtype)}>"
    if len(_TENSOR_TYPES) > 4096:
      _TENSOR_TYPES.clear()
    _TENSOR_TYPES[key] = ty
  return ty


# Lowering asks for the same few types thousands of times.
_TENSOR_TYPES: dict = {}
_SPLIT_TYPES: dict = {}


def aval_type(aval) -> str:
  """The tensor type of a ``ShapedArray`` (weak types do not matter here)."""
  return tensor_type(aval.shape, aval.dtype)


_DIMS = re.compile(r"^((?:\d+x)*)(.*)$")


def split_tensor_type(ty: str) -> tuple[tuple[int, ...], str]:
  """``"tensor<2x3xf32>"`` -> ``((2, 3), "f32")``."""
  hit = _SPLIT_TYPES.get(ty)
  if hit is not None:
    return hit
  if not (ty.startswith("tensor<") and ty.endswith(">")):
    raise ValueError(f"not a ranked tensor type: {ty!r}")
  m = _DIMS.match(ty[7:-1])
  dims = tuple(int(d) for d in m.group(1).split("x") if d)
  if len(_SPLIT_TYPES) > 4096:
    _SPLIT_TYPES.clear()
  _SPLIT_TYPES[ty] = hit = (dims, m.group(2))
  return hit


# ------------------------------------------------------------- constants
def _bits_hex(v: np.generic) -> str:
  """The bit pattern of one float as MLIR's hex float literal (``0x7FC00000``)."""
  raw = np.asarray(v).tobytes()
  return "0x" + raw[::-1].hex().upper()   # bytes are little-endian


def _float_literal(v: np.generic) -> str:
  """One float element: a short decimal when it reads back exactly, else hex
  bits (NaN, infinities, values a decimal would round)."""
  f = float(v)
  if not np.isfinite(f):
    return _bits_hex(v)
  try:   # the shortest decimal that reads back as this value in its own type
    if f == 0 or 1e-4 <= abs(f) < 1e16:
      s = np.format_float_positional(v, unique=True, trim="0")
    else:
      s = np.format_float_scientific(v, unique=True, trim="0")
  except TypeError:   # a dtype NumPy's formatter does not know
    s = repr(f)
  if "e" in s and "." not in s.split("e")[0]:
    # MLIR's float literal needs a decimal point before the exponent.
    mant, exp = s.split("e")
    s = f"{mant}.0e{exp}"
  try:
    back = np.asarray(float(s)).astype(v.dtype)
  except (OverflowError, ValueError):
    return _bits_hex(v)
  if back.tobytes() != np.asarray(v).tobytes():
    return _bits_hex(v)
  return s


def _element_literal(v: np.generic, dt: np.dtype) -> str:
  kind = dtypes.kind(dt) if dt != dtypes.float0 else "b"
  if dt == dtypes.float0:
    return "false"
  if kind == "b":
    return "true" if bool(v) else "false"
  if kind in "iu":
    return str(int(v))
  if kind == "c":
    return f"({_float_literal(v.real)}, {_float_literal(v.imag)})"
  return _float_literal(v)


def _nested(arr: np.ndarray, dt: np.dtype) -> str:
  if arr.ndim == 0:
    return _element_literal(arr[()], dt)
  return "[" + ", ".join(_nested(a, dt) for a in arr) + "]"


def dense_attr(value, dtype=None) -> str:
  """A dense elements attribute with its type, e.g.
  ``dense<2.0> : tensor<f32>`` or ``dense<"0x0000803F..."> : tensor<2xf32>``.

  A splat (all elements equal) is written once; other constants use MLIR's
  raw hex blob (exact and compact), or nested lists for sub-byte types.
  """
  arr = np.asarray(value)
  dt = np.dtype(dtype) if dtype is not None else arr.dtype
  if dt == dtypes.float0:
    arr = np.zeros(arr.shape, np.bool_)
  elif arr.dtype != dt:
    arr = arr.astype(dt)
  ty = tensor_type(arr.shape, dt)
  if arr.size == 0:
    return f"dense<> : {ty}"
  flat = arr.reshape(-1)
  first = flat[0]
  if arr.size == 1 or _is_splat(flat):
    return f"dense<{_element_literal(first, dt)}> : {ty}"
  if dt in _NO_HEX_BLOB:
    return f"dense<{_nested(arr, dt)}> : {ty}"
  data = np.ascontiguousarray(arr)
  if data.dtype.byteorder == ">":
    data = data.astype(data.dtype.newbyteorder("<"))
  return f'dense<"0x{data.tobytes().hex().upper()}"> : {ty}'


def _is_splat(flat: np.ndarray) -> bool:
  # Compare bit patterns, so NaNs with equal payloads count as equal
  # (contiguous first: broadcast views have zero strides and cannot be viewed).
  flat = np.ascontiguousarray(flat)
  raw = flat.view(np.uint8).reshape(flat.size, -1) if flat.dtype.itemsize else None
  if raw is None:
    return True
  return bool((raw == raw[0]).all())


__all__ = ["element_type", "tensor_type", "aval_type", "dense_attr", "split_tensor_type"]
