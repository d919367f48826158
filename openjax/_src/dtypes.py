"""JAX's dtype system: the type promotion lattice with weak types, x64
canonicalisation, and the dtype queries (finfo, iinfo, issubdtype, ...).

A *weak* type is the type of a Python scalar (or of a value computed only from
Python scalars): it adopts the dtype of whatever it is combined with, so
``int32_array + 1.0`` is float32 and ``bfloat16_array * 2`` stays bfloat16.
"""
from __future__ import annotations

import functools
import threading
import warnings
from typing import Any

import ml_dtypes
import numpy as np

from openjax._src.config import config

# ---------------------------------------------------------------- dtype objects
bool_ = np.dtype(np.bool_)
int8, int16, int32, int64 = (np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (np.dtype(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = np.dtype(np.complex64), np.dtype(np.complex128)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
int4, uint4 = np.dtype(ml_dtypes.int4), np.dtype(ml_dtypes.uint4)
int2, uint2 = np.dtype(ml_dtypes.int2), np.dtype(ml_dtypes.uint2)
int1, uint1 = np.dtype(ml_dtypes.int1), np.dtype(ml_dtypes.uint1)
float8_e3m4 = np.dtype(ml_dtypes.float8_e3m4)
float8_e4m3 = np.dtype(ml_dtypes.float8_e4m3)
float8_e8m0fnu = np.dtype(ml_dtypes.float8_e8m0fnu)
float8_e4m3b11fnuz = np.dtype(ml_dtypes.float8_e4m3b11fnuz)
float8_e4m3fn = np.dtype(ml_dtypes.float8_e4m3fn)
float8_e4m3fnuz = np.dtype(ml_dtypes.float8_e4m3fnuz)
float8_e5m2 = np.dtype(ml_dtypes.float8_e5m2)
float8_e5m2fnuz = np.dtype(ml_dtypes.float8_e5m2fnuz)
float4_e2m1fn = np.dtype(ml_dtypes.float4_e2m1fn)
float6_e2m3fn = np.dtype(ml_dtypes.float6_e2m3fn)
float6_e3m2fn = np.dtype(ml_dtypes.float6_e3m2fn)

#: The tangent dtype of integer and boolean values (JAX's ``float0``).
float0 = np.dtype([("float0", np.void, 0)])


class extended(np.generic):
  """Scalar class of extended dtypes (``jax.dtypes.extended``): abstract, it
  exists for ``jnp.issubdtype(key.dtype, jax.dtypes.extended)``."""


class prng_key(extended):
  """Scalar class of PRNG key dtypes (``jax.dtypes.prng_key``): abstract, it
  exists for ``jnp.issubdtype(key.dtype, jax.dtypes.prng_key)``."""


def _is_extended(dt) -> bool:
  # An extended dtype object (a typed key's ``key<fry>``): no NumPy dtype,
  # a ``type`` attribute naming its scalar class.
  t = getattr(dt, "type", None)
  return not isinstance(dt, (np.dtype, type)) and isinstance(t, type) and issubclass(t, extended)

_float8_dtypes = (float8_e3m4, float8_e4m3, float8_e8m0fnu, float8_e4m3b11fnuz,
                  float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
                  float4_e2m1fn, float6_e2m3fn, float6_e3m2fn)
#: Floating dtypes NumPy does not know as floating (they come from ml_dtypes).
custom_float_dtypes = frozenset((bfloat16, *_float8_dtypes))
custom_int_dtypes = frozenset((int4, uint4, int2, uint2, int1, uint1))

_bool_types = (bool_,)
_signed_types = (int1, int2, int4, int8, int16, int32, int64)
_unsigned_types = (uint1, uint2, uint4, uint8, uint16, uint32, uint64)
_int_types = _unsigned_types + _signed_types
_float_types = (*_float8_dtypes, bfloat16, float16, float32, float64)
_complex_types = (complex64, complex128)
jax_dtypes = frozenset(_bool_types + _int_types + _float_types + _complex_types)

# Python scalar types -> the dtype they have before x64 canonicalisation.
python_scalar_dtypes = {bool: bool_, int: int64, float: float64, complex: complex128}

# --------------------------------------------------------------- canonicalising
_x32_map = {int64: int32, uint64: uint32, float64: float32, complex128: complex64}


class _X64Flag:
  """``jax_enable_x64`` for the dtype queries, which read it several times per
  operation: its global value, kept by a config listener, while no thread
  overrides it locally (``enable_x64()``); ``config.read`` otherwise."""
  __slots__ = ("value", "_overriding", "_lock")

  def __init__(self):
    self._overriding: set = set()   # ids of threads overriding the flag
    self._lock = threading.Lock()
    self.refresh("jax_enable_x64")

  def refresh(self, name: str) -> None:
    if name != "jax_enable_x64":
      return
    with self._lock:
      if name in config._local.values:   # the thread changing the flag
        self._overriding.add(threading.get_ident())
      else:
        self._overriding.discard(threading.get_ident())
      self.value = bool(config._values[name])

  def read(self) -> bool:
    if self._overriding:
      return config.read("jax_enable_x64")
    return self.value


_x64_flag = _X64Flag()
config.add_listener(_x64_flag.refresh)


def x64_enabled() -> bool:
  return _x64_flag.read()


def canonicalize_dtype(dtype) -> np.dtype:
  """The dtype JAX uses for ``dtype``: 64-bit types become 32-bit unless x64."""
  dt = dtype if type(dtype) in _dtype_classes else np.dtype(dtype)
  if _x64_flag.read():
    return dt
  return _x32_map.get(dt, dt)


# The classes of NumPy's dtype objects (np.dtype is their base class).
_dtype_classes = frozenset(type(t) for t in (*jax_dtypes, float0))


def default_int_dtype() -> np.dtype:
  return int64 if x64_enabled() else int32


def default_uint_dtype() -> np.dtype:
  return uint64 if x64_enabled() else uint32


def default_float_dtype() -> np.dtype:
  return float64 if x64_enabled() else float32


def default_complex_dtype() -> np.dtype:
  return complex128 if x64_enabled() else complex64


_default_by_kind = {"b": lambda: bool_, "i": default_int_dtype, "u": default_uint_dtype,
                    "f": default_float_dtype, "c": default_complex_dtype}


def default_dtype_of_kind(kind: str) -> np.dtype:
  return _default_by_kind[kind]()


def kind(dtype: np.dtype) -> str:
  """NumPy's kind letter, with ml_dtypes floats reported as 'f' and ints as 'i'/'u'."""
  if dtype in custom_float_dtypes:
    return "f"
  if dtype in custom_int_dtypes:
    return "u" if dtype in (uint4, uint2, uint1) else "i"
  return dtype.kind


def explicit_dtype(dtype, fun_name: str | None = None) -> np.dtype:
  """Canonicalise a dtype the user asked for explicitly, warning like JAX when a
  64-bit type is truncated because x64 is off."""
  if dtype is None:
    raise ValueError("dtype must be specified.")
  x64 = _x64_flag.read()
  try:
    hit = _EXPLICIT_DTYPES.get((dtype, x64))
  except TypeError:   # an unhashable dtype-like: the checks below
    hit = None
  if hit is not None:
    return hit
  out = _explicit_dtype(dtype, fun_name)
  if (isinstance(dtype, type) and dtype in python_scalar_dtypes) or out == np.dtype(dtype):
    try:   # (not a truncated one: its warning is given on every call)
      if len(_EXPLICIT_DTYPES) >= 1024:
        _EXPLICIT_DTYPES.clear()
      _EXPLICIT_DTYPES[(dtype, x64)] = out
    except TypeError:
      pass
  return out


# (a dtype-like, x64) -> explicit_dtype's result, for those it does not warn
# about: ``jnp.array(x, dtype=jnp.int32)`` and the like read it once
# (the checks ~1.5 us a call).
_EXPLICIT_DTYPES: dict = {}


def _explicit_dtype(dtype, fun_name: str | None = None) -> np.dtype:
  if isinstance(dtype, type) and dtype in python_scalar_dtypes:
    return default_dtype_of_kind(python_scalar_dtypes[dtype].kind) if dtype is not bool else bool_
  dt = np.dtype(dtype)
  if dt not in jax_dtypes and dt != float0:
    raise TypeError(f"JAX only supports number and bool dtypes, got dtype {dt}"
                    + (f" in {fun_name}" if fun_name else ""))
  canonical = canonicalize_dtype(dt)
  if canonical != dt:
    where = f" requested in {fun_name}" if fun_name else ""
    warnings.warn(
        f"Explicitly requested dtype {dt}{where} is not available, and will be "
        f"truncated to dtype {canonical.name}. To enable more dtypes, set the "
        "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
        "environment variable. See https://github.com/jax-ml/jax#current-gotchas "
        "for more.", UserWarning, stacklevel=4)
  return canonical


# ------------------------------------------------------------ the value -> dtype
def is_python_scalar(x: Any) -> bool:
  return type(x) in python_scalar_dtypes


#: The NumPy scalar types of JAX's dtypes (``np.float32``, ``ml_dtypes.bfloat16``, ...).
numpy_scalar_types = frozenset(np.dtype(d).type for d in jax_dtypes)


def dtype(x: Any, *, canonicalize: bool = True) -> np.dtype:
  """The dtype of a value, a scalar type or a dtype-like, canonicalised for x64
  (openjax Arrays keep the dtype they were made with)."""
  if x is None:
    raise ValueError(f"Invalid argument to dtype: {x}.")
  t = type(x)
  dt = python_scalar_dtypes.get(t)
  if t is np.ndarray or t in numpy_scalar_types:
    # A NumPy operand (an index array, a jnp argument): its dtype at once,
    # where the aval probe and _dtype_of_other's type checks took ~1 us.
    dt = x.dtype
  elif dt is None:
    aval_dtype = getattr(getattr(x, "aval", None), "dtype", None)
    if aval_dtype is not None:
      return aval_dtype   # Arrays and tracers: the common case
    dt = _dtype_of_other(x)
  if dt not in jax_dtypes and dt != float0:
    raise TypeError(f"Value {x!r} with dtype {dt} is not a valid JAX array type. "
                    "Only arrays of numeric types are supported by JAX.")
  return canonicalize_dtype(dt) if canonicalize else dt


def _dtype_of_other(x: Any) -> np.dtype:
  # dtype() of scalar types, dtype-likes and NumPy values.
  if isinstance(x, type) and x in python_scalar_dtypes:
    return python_scalar_dtypes[x]
  if isinstance(x, (str, np.dtype)) or (isinstance(x, type) and issubclass(x, np.generic)):
    return np.dtype(x)
  if hasattr(x, "dtype") and isinstance(x.dtype, np.dtype):
    return x.dtype
  try:
    return np.result_type(x)
  except TypeError as err:
    raise TypeError(f"Cannot determine dtype of {x!r}") from err


def is_weakly_typed(x: Any) -> bool:
  """True for Python int/float/complex scalars (not bool) and for values whose
  abstract value is weak."""
  if type(x) in python_scalar_dtypes:
    return type(x) is not bool
  aval = getattr(x, "aval", None)
  return bool(getattr(aval, "weak_type", False))


# ---------------------------------------------------------- the promotion lattice
class _WeakType:
  """A node of the lattice standing for a Python scalar kind (i*, f*, c*)."""
  def __init__(self, name: str, kind: str):
    self.name, self.kind = name, kind

  def __repr__(self):
    return self.name


_i_weak, _f_weak, _c_weak = _WeakType("int", "i"), _WeakType("float", "f"), _WeakType("complex", "c")
_weak_nodes = (_i_weak, _f_weak, _c_weak)


def _lattice(x64: bool) -> dict:
  b1 = bool_
  out = {
      b1: [_i_weak],
      _i_weak: [uint8, uint1, uint2, uint4, int8, int1, int2, int4],
      uint1: [], uint2: [], uint4: [], int1: [], int2: [], int4: [],
      uint8: [int16, uint16],
      uint16: [int32, uint32],
      uint32: [int64, uint64],
      uint64: [_f_weak],
      int8: [int16], int16: [int32], int32: [int64], int64: [_f_weak],
      _f_weak: [*_float8_dtypes, bfloat16, float16, _c_weak],
      **{t: [] for t in _float8_dtypes},
      bfloat16: [float32], float16: [float32],
      float32: [float64, complex64],
      float64: [complex128],
      _c_weak: [complex64],
      complex64: [complex128],
      complex128: [],
  }
  if not x64:
    # Avoid forming a 64-bit type from 32-bit inputs: u32 x i32 -> i32.
    out[uint32] = [int32, uint64]
  return out


def _upper_bounds(x64: bool) -> dict:
  lattice = _lattice(x64)
  ubs = {n: {n} for n in lattice}
  for n in lattice:
    while True:
      new = set().union(*(lattice[b] for b in ubs[n]))
      if new <= ubs[n]:
        break
      ubs[n] |= new
  return ubs


def _strict_upper_bounds() -> dict:
  # jax_numpy_dtype_promotion='strict': only weak (Python scalar) types
  # promote, to a type of their kind or higher kind; typed dtypes never mix.
  nodes = list(_lattice(True))
  ints = [n for n in nodes if not isinstance(n, _WeakType) and n != bool_ and kind(n) in "iu"]
  floats = [n for n in nodes if not isinstance(n, _WeakType) and kind(n) == "f"]
  complexes = [n for n in nodes if not isinstance(n, _WeakType) and kind(n) == "c"]
  ubs = {n: {n} for n in nodes}
  ubs[_c_weak] |= set(complexes)
  ubs[_f_weak] |= {_c_weak, *floats, *complexes}
  ubs[_i_weak] |= {_f_weak, _c_weak, *ints, *floats, *complexes}
  return ubs


# Keyed by the lattice key: x64 (standard promotion) or "strict".
_ubs = {True: _upper_bounds(True), False: _upper_bounds(False), "strict": _strict_upper_bounds()}


def _lattice_key():
  """``"strict"`` under ``jax_numpy_dtype_promotion='strict'``, else x64."""
  if config.read("jax_numpy_dtype_promotion") == "strict":
    return "strict"
  return x64_enabled()


class TypePromotionError(ValueError):
  """Raised when two dtypes have no implicit promotion."""


@functools.lru_cache(1024)
def _least_upper_bound(x64: bool, nodes: frozenset):
  ub = _ubs[x64]
  bounds = [ub[n] for n in nodes]
  cub = set.intersection(*bounds)
  lub = (cub & nodes) or {c for c in cub if cub <= ub[c]}
  if len(lub) == 1:
    return lub.pop()
  names = tuple(str(n) for n in nodes)
  if x64 == "strict":
    raise TypePromotionError(
        f"Input dtypes {names} have no available implicit dtype promotion path when "
        "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
        "output type, or set jax_numpy_dtype_promotion=standard.")
  raise TypePromotionError(
      f"Input dtypes {names} have no available implicit dtype promotion path. "
      "Try explicitly casting inputs to the desired output type.")


def _jax_node(dt: np.dtype, weak: bool):
  if not weak or dt == bool_:
    return dt
  k = kind(dt)
  return _f_weak if k == "f" else _c_weak if k == "c" else _i_weak


def _dtype_and_weak(x: Any) -> tuple[np.dtype, bool]:
  if type(x) in python_scalar_dtypes:
    return dtype(x), True
  if isinstance(x, type) and x in python_scalar_dtypes:
    return dtype(x), True
  if isinstance(x, np.dtype):
    return x, False
  aval = getattr(x, "aval", None)
  if aval is not None and hasattr(aval, "weak_type"):
    return aval.dtype, aval.weak_type
  return dtype(x), False


def _dtype_and_weak_fast(x: Any) -> tuple[np.dtype, bool]:
  aval = getattr(x, "aval", None)   # Arrays and tracers: the common case
  if aval is not None:
    return aval.dtype, aval.weak_type
  return _dtype_and_weak(x)


@functools.lru_cache(4096)
def _lattice_from_pairs(pairs: tuple, x64: bool) -> tuple:
  if len(pairs) == 1:
    return pairs[0][0], pairs[0][1] and pairs[0][0] != bool_
  dts = [p[0] for p in pairs]
  weaks = [p[1] for p in pairs]
  if all(d == dts[0] for d in dts) and not all(weaks):
    return dts[0], False
  if all(weaks):
    out = _least_upper_bound(x64, frozenset(dts))
    return out, out != bool_
  out = _least_upper_bound(x64, frozenset(_jax_node(d, w) for d, w in pairs))
  if isinstance(out, _WeakType):
    return out, True  # resolved by the caller
  return out, False


def lattice_result_type(*args: Any) -> tuple[np.dtype, bool]:
  """(dtype, weak_type) of combining ``args`` under JAX's promotion rules."""
  return _lattice_from_pairs(tuple(_dtype_and_weak_fast(a) for a in args), _lattice_key())


@functools.lru_cache(4096)
def _result_from_pairs(pairs: tuple, x64: bool) -> tuple[np.dtype, bool]:
  dt, weak = _lattice_from_pairs(pairs, x64)
  if isinstance(dt, _WeakType):
    dt = default_dtype_of_kind(dt.kind)
  elif weak:
    dt = default_dtype_of_kind(kind(dt))
  return canonicalize_dtype(dt), weak


def result_type(*args: Any, return_weak_type_flag: bool = False):
  """The dtype JAX gives a binary operation on ``args`` (values or dtypes).

  Python scalars are weakly typed: they take the dtype of the array they meet.
  """
  if not args:
    raise ValueError("at least one array or dtype is required")
  pairs = []
  for a in args:
    aval = getattr(a, "aval", None)   # Arrays and tracers: the common case
    if aval is not None:
      pairs.append((aval.dtype, aval.weak_type))
    else:
      pairs.append(_dtype_and_weak(default_float_dtype() if a is None else a))
  dt, weak = _result_from_pairs(tuple(pairs), _lattice_key())
  return (dt, weak) if return_weak_type_flag else dt


def promote_types(a, b) -> np.dtype:
  """The dtype to which a binary operation casts inputs of dtypes ``a`` and ``b``
  (``jnp.promote_types``). Python scalar types are treated as weak."""
  def node(t):
    if isinstance(t, type) and t in python_scalar_dtypes:
      return _jax_node(python_scalar_dtypes[t], True)
    return np.dtype(t)
  out = _least_upper_bound(True, frozenset((node(a), node(b))))
  if isinstance(out, _WeakType):
    out = {"i": int64, "f": float64, "c": complex128}[out.kind]
  return out


def issubdtype(a, b) -> bool:
  """``np.issubdtype`` that also knows the ml_dtypes floats and small ints."""
  if a is None or b is None:
    return False
  if _is_extended(a) or _is_extended(b):
    if _is_extended(b):
      return a == b
    return isinstance(b, type) and issubclass(a.type, b)
  if isinstance(b, type) and issubclass(b, extended):
    return isinstance(a, type) and issubclass(a, b)
  try:
    a_dt = np.dtype(a)
  except TypeError:
    return False
  if a_dt == float0:
    return b is float0 or (isinstance(b, np.dtype) and b == float0)
  if isinstance(b, type) and issubclass(b, np.generic) and b in (
      np.generic, np.number, np.inexact, np.floating, np.integer,
      np.signedinteger, np.unsignedinteger, np.complexfloating, np.bool_):
    k = kind(a_dt)
    families = {
        np.generic: True, np.number: k in "iufc", np.inexact: k in "fc",
        np.floating: k == "f", np.complexfloating: k == "c",
        np.integer: k in "iu", np.signedinteger: k == "i",
        np.unsignedinteger: k == "u", np.bool_: k == "b"}
    return families[b]
  try:
    return a_dt == np.dtype(b)
  except TypeError:
    return False


def can_cast(from_, to, casting: str = "safe") -> bool:
  """Whether a cast from dtype ``from_`` to ``to`` is allowed under ``casting``."""
  f, t = dtype(from_, canonicalize=False), np.dtype(to)
  if f in custom_float_dtypes or t in custom_float_dtypes:
    if casting in ("unsafe", "same_kind"):
      return casting == "unsafe" or kind(t) in ("f", "c") or (kind(f) == kind(t))
    if f == t:
      return True
    return promote_types(f, t) == t
  return bool(np.can_cast(f, t, casting=casting))


_dtype_to_inexact = {
    bool_: float32, int1: float32, uint1: float32, int2: float32, uint2: float32, int4: float32,
    uint4: float32,
    int8: float32, uint8: float32, int16: float32, uint16: float32,
    int32: float32, uint32: float32, int64: float64, uint64: float64}


def to_inexact_dtype(dt) -> np.dtype:
  """The inexact dtype JAX computes in for ``dt`` (int32 -> float32 even with
  x64; int64 -> float64)."""
  dt = np.dtype(dt)
  return _dtype_to_inexact.get(dt, dt)


def to_numeric_dtype(dt) -> np.dtype:
  """``dt`` with bool replaced by int32."""
  dt = np.dtype(dt)
  return int32 if dt == bool_ else dt


def to_complex_dtype(dt) -> np.dtype:
  f = to_inexact_dtype(dt)
  return complex128 if f in (float64, complex128) else complex64


def finfo(dt) -> Any:
  """Machine limits for a floating dtype (bfloat16 and float8 included)."""
  d = dtype(dt, canonicalize=False) if not isinstance(dt, np.dtype) else dt
  if kind(d) == "c":
    d = np.dtype(np.float32) if d == complex64 else np.dtype(np.float64)
  return ml_dtypes.finfo(d)


def iinfo(dt) -> Any:
  """Machine limits for an integer dtype (int4/uint4 included)."""
  d = dtype(dt, canonicalize=False) if not isinstance(dt, np.dtype) else dt
  return ml_dtypes.iinfo(d)


def short_dtype_name(dt: np.dtype) -> str:
  """``f32``, ``i8``, ``u32``, ``c64``, ``bf16``, ``bool`` as JAX prints them."""
  if dt == float0:
    return "float0"
  return (dt.name.replace("float", "f").replace("uint", "u")
          .replace("int", "i").replace("complex", "c"))


def is_float0(dt) -> bool:
  return isinstance(dt, np.dtype) and dt == float0


def supported_dtypes() -> frozenset:
  return jax_dtypes


# ------------------------------------------------ extended dtypes, bit widths
DType = np.dtype


class ExtendedDType:
  """Base of dtypes outside NumPy's (typed PRNG keys, libraries' own): an
  instance names its scalar class in ``type`` (a subclass of ``extended``) and
  may carry ``_rules`` telling transformations how to treat it."""
  _rules: Any = None

  @property
  def type(self) -> type:
    raise NotImplementedError(f"{type(self).__name__} must define its scalar `type`")


def supports_inf(dtype) -> bool:
  """Whether ``dtype`` has infinities (the ``fn``/``fnuz`` float8s do not)."""
  if np.dtype(dtype) in {np.dtype(t) for t in (float8_e4m3b11fnuz, float8_e4m3fn,
                                                float8_e4m3fnuz, float8_e5m2fnuz)}:
    return False
  return issubdtype(dtype, np.inexact)


def itemsize_bits(dtype) -> int:
  """Bits per element (sub-byte integers and floats count their real width)."""
  if dtype is None:
    raise ValueError("dtype cannot be None.")
  if np.dtype(dtype) == np.dtype(bool):
    return 8  # booleans take a byte each
  if issubdtype(dtype, np.integer):
    return iinfo(dtype).bits
  if issubdtype(dtype, np.floating):
    return finfo(dtype).bits
  if issubdtype(dtype, np.complexfloating):
    return 2 * finfo(dtype).bits
  raise ValueError(f"unexpected input: dtype={dtype!r}")


def scalar_type_of(x: Any) -> type:
  """The Python scalar type (bool, int, float, complex) of ``x``'s dtype."""
  typ = dtype(x)
  if typ in custom_float_dtypes:
    return float
  if typ in custom_int_dtypes:
    return int
  if np.issubdtype(typ, np.bool_):
    return bool
  if np.issubdtype(typ, np.integer):
    return int
  if np.issubdtype(typ, np.floating):
    return float
  if np.issubdtype(typ, np.complexfloating):
    return complex
  raise TypeError(f"Invalid scalar value {x}")
