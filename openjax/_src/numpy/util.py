"""Helpers shared by the ``jax.numpy`` implementation: argument checks, dtype
promotion (JAX's lattice, with weak types) and NumPy-style rank promotion."""
from __future__ import annotations

import functools
import operator
import warnings
from typing import Any, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.jit import jit as api_jit
from openjax._src.config import config
from openjax._src.core import Array, Tracer, get_aval
from openjax._src.core.placement import committed_device
from openjax._src.core.trace import NUMPY_SCALAR_TYPES, SCALAR_TYPES, eager_config

AxisError = np.exceptions.AxisError



#: The decorator of the ``jnp`` functions that JAX jits (``jnp.hypot``,
#: ``jnp.var``, ...): traced, a call stages a ``jit`` equation as JAX's does
#: (``make_jaxpr`` prints it the same way); eager, the function's cached
#: jaxpr runs on the eval trace's kernels, about 1 us a primitive where
#: binding each costs several (``JitWrapped``'s ``eager``).
jit = functools.partial(api_jit, _eager=True)

def is_arraylike(x: Any) -> bool:
  return (type(x) is Array or isinstance(x, (Tracer, np.ndarray, np.generic))
          or type(x) in dtypes.python_scalar_dtypes or hasattr(x, "__jax_array__"))


def check_arraylike(fun_name: str, *args: Any, emit_warning: bool = False) -> None:
  """JAX's check that every argument is an array or a scalar (not a list)."""
  for pos, arg in enumerate(args):
    if type(arg) is not Array and not is_arraylike(arg):
      msg = f"{fun_name} requires ndarray or scalar arguments, got {type(arg)} at position {pos}."
      raise TypeError(msg)


def ensure_arraylike(fun_name: str, *args: Any):
  """``check_arraylike`` then convert NumPy/scalar inputs to operands."""
  if len(args) == 1:
    x, = args
    if type(x) is Array:   # most calls: nothing to check or convert
      return x
    check_arraylike(fun_name, x)
    return asarray_operand(x)
  check_arraylike(fun_name, *args)
  return tuple([asarray_operand(a) for a in args])


def asarray_operand(x: Any):
  """An operand for lax: Arrays and tracers pass through; Python scalars stay
  weakly typed; NumPy values are canonicalised (float64 -> float32 unless x64)."""
  if type(x) is Array or isinstance(x, Tracer):
    return x
  if hasattr(x, "__jax_array__"):
    return asarray_operand(x.__jax_array__())
  if type(x) in dtypes.python_scalar_dtypes:
    return lax._convert_element_type(x, dtypes.dtype(x), weak_type=dtypes.is_weakly_typed(x))
  arr = np.asarray(x)
  dt = dtypes.dtype(arr)
  return arr.astype(dt) if arr.dtype != dt else arr


def _weak(x) -> bool:
  return dtypes.is_weakly_typed(x)


def _convert(x: Any, dtype: np.dtype, weak: bool):
  """``lax._convert_element_type(x, dtype, weak)``, answered without a call
  for Arrays and tracers that already are (most operands of most calls)."""
  aval = getattr(x, "aval", None)
  if aval is not None and aval.dtype == dtype and aval.weak_type == weak:
    return x
  return lax._convert_element_type(x, dtype, weak)


def promote_dtypes(*args: Any) -> list:
  """Convert ``args`` to their common JAX dtype (weak when all are weak)."""
  if len(args) < 2:
    return [asarray_operand(a) for a in args]
  return _promote_dtypes(args, _same_dtype)


def promote_dtypes_inexact(*args: Any) -> list:
  """Like ``promote_dtypes``, then to an inexact dtype as JAX does (bool and
  ints up to 32 bits -> float32, 64-bit ints -> float64)."""
  return _promote_dtypes(args, to_inexact_dtype)


def promote_dtypes_numeric(*args: Any) -> list:
  """Like ``promote_dtypes``, with bool promoted to int32."""
  return _promote_dtypes(args, _to_numeric_dtype)


def promote_dtypes_complex(*args: Any) -> list:
  """Like ``promote_dtypes``, then to complex64 (complex128 from 64-bit types)."""
  return _promote_dtypes(args, _to_complex_dtype)


def _promote_dtypes(args: tuple, refine) -> list:
  """``args`` converted to their common dtype refined by ``refine``; for
  Arrays, tracers and Python or NumPy scalars under standard promotion
  (most calls) the dtype, weak type and which operands convert come from
  ``_DTYPE_PROMOTIONS``, where ``dtypes.result_type`` costs more than an
  eager operation."""
  key = _dtype_key(args, refine)
  hit = _DTYPE_PROMOTIONS.get(key) if key is not None else None
  if hit is None:
    dt, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    dt = refine(dt)
    if key is None:
      return [_convert(a, dt, weak) for a in args]
    hit = dt, weak, _converts(args, dt, weak)
    if len(_DTYPE_PROMOTIONS) >= 4096:
      _DTYPE_PROMOTIONS.clear()
    _DTYPE_PROMOTIONS[key] = hit
  dt, weak, converts = hit
  if converts is None:
    return list(args)
  return [lax._convert_element_type(a, dt, weak) if c else a for a, c in zip(args, converts)]


def _dtype_key(args: tuple, refine) -> tuple | None:
  """The ``_DTYPE_PROMOTIONS`` key of ``args`` (their dtypes and weak types,
  scalars' types, ``jax_enable_x64``), or None: the general path."""
  cfg = eager_config
  if not cfg.flags_ok:
    return None
  key = [refine, cfg.x64]
  for a in args:
    t = type(a)
    if t is Array or (t not in _CONSTANT_TYPES and isinstance(a, Tracer)):
      aval = a.aval
      key.append((aval.dtype, aval.weak_type))
    elif t in _CONSTANT_TYPES:
      key.append(t)
    elif t is np.ndarray:   # (a NumPy array: converted to an Array, whatever its dtype)
      key.append((np.ndarray, a.dtype))
    else:
      return None
  return tuple(key)


def to_inexact_dtype(dt: np.dtype) -> np.dtype:
  return dtypes.canonicalize_dtype(dtypes.to_inexact_dtype(dt))


def _rank_promotion_check(fun_name: str, shapes) -> None:
  mode = config.read("jax_numpy_rank_promotion")
  if mode == "allow" or len({len(s) for s in shapes if s}) <= 1:
    return
  msg = (f"Following NumPy automatic rank promotion for {fun_name} on shapes "
         f"{' '.join(str(s) for s in shapes)}. Set the jax_numpy_rank_promotion config "
         "option to 'allow' to disable this message.")
  if mode == "warn":
    warnings.warn(msg, stacklevel=4)
  else:
    raise ValueError(
        f"Operands could not be broadcast together for {fun_name} on shapes "
        f"{' '.join(str(s) for s in shapes)} and with the config option "
        "jax_numpy_rank_promotion='raise'. For more information, see "
        "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def promote_shapes(fun_name: str, *args: Any) -> list:
  """NumPy rank promotion: lower-rank operands get leading size-1 axes (lax
  ops broadcast equal-rank size-1 axes themselves)."""
  if len(args) < 2:
    return list(args)
  shapes = [np.shape(a) for a in args]
  nonscalar = [s for s in shapes if s]
  if len({len(s) for s in nonscalar}) <= 1:
    return list(args)
  _rank_promotion_check(fun_name, shapes)
  result_rank = len(np.broadcast_shapes(*shapes))
  # broadcast_in_dim, as JAX stages it (printed jaxprs match).
  return [lax.broadcast_in_dim(a, (1,) * (result_rank - len(s)) + tuple(s),
                               tuple(range(result_rank - len(s), result_rank)))
          if s and len(s) < result_rank else a for a, s in zip(args, shapes)]


# ---------------------------------------------- promotion of the common case
# Every eager jnp call promotes its operands; the common case (Arrays or
# tracers of one rank, Python scalars, standard promotion, no flag overrides)
# is answered from a cache keyed by the operands' (dtype, weak type) or
# scalar type, ``jax_enable_x64`` and the dtype refinement: the promoted
# dtype and weak type, and which operands need a conversion.
_PROMOTIONS: dict = {}


def _same_dtype(dt: np.dtype) -> np.dtype:
  return dt


def _to_numeric_dtype(dt: np.dtype) -> np.dtype:
  return dtypes.to_numeric_dtype(dt)


def _to_complex_dtype(dt: np.dtype) -> np.dtype:
  return dtypes.canonicalize_dtype(dtypes.to_complex_dtype(dt))


# promote_dtypes*: (refine, x64, each operand's (dtype, weak type) or scalar
# type) -> (dtype, weak type, which operands convert or None).
_DTYPE_PROMOTIONS: dict = {}


# NumPy scalars (``np.float32(2)``; strongly typed, rank 0) promote by their
# type alone, as Python scalars do: ``x * np.float32(2)`` took the general
# path, 13 us against 2.5 us for ``x * 2.0``.
_CONSTANT_TYPES = SCALAR_TYPES | NUMPY_SCALAR_TYPES
# Operands a promotion always converts (to Arrays), whatever their dtype.
_CONVERTED_TYPES = _CONSTANT_TYPES | {np.ndarray}


def _operand_key(a, t):
  """``a``'s part of a promotion key: its (dtype, weak type), its type for a
  NumPy scalar, or None when it is none of these nor an Array or tracer
  (``t``: its type, not a Python scalar type)."""
  if t in NUMPY_SCALAR_TYPES:
    return t
  if t is np.ndarray:   # weak type None: a NumPy array, always converted to an Array
    return a.dtype, None, a.ndim
  if t is not Array and not isinstance(a, Tracer):
    return None
  aval = a.aval
  return aval.dtype, aval.weak_type, len(aval.shape)


def _promoter(refine, promote_dtypes_general, doc: str):
  """A ``promote_args`` function: checks, dtype promotion (the common dtype
  refined by ``refine``) and rank promotion for an n-ary jnp function.

  Operands of one rank (or rank 0) that are Arrays, tracers or Python
  scalars, under standard promotion and no flag overrides, are answered from
  ``_PROMOTIONS`` inline (every eager jnp call comes here); anything else
  takes the general path (``check_arraylike``, ``promote_dtypes_general``,
  ``promote_shapes``)."""
  last = [(None, None, None, None)]   # (x's aval or type, y's, x64, entry): the last call
  # The last Python scalar converted, (scalar, dtype, weak type, Array): the
  # same constant object in a loop (``x * 2.0``) is converted once.
  scalar = [(None, None, None, None)]

  def converted(a, dt, weak):
    s = scalar[0]
    if a is s[0] and s[1] is dt and s[2] is weak and s[3]._np is not None:   # not deleted
      return s[3]
    out = lax._convert_element_type(a, dt, weak)
    if type(a) in _CONSTANT_TYPES:
      scalar[0] = (a, dt, weak, out)
    return out

  def promote(fun_name: str, *args: Any) -> list:
    cfg = eager_config
    if cfg.flags_ok:
      key = None
      if len(args) == 2:   # most calls: no loop
        x, y = args
        # The last call's operands again (same aval objects or scalar types)?
        tx, ty = type(x), type(y)
        entry = last[0]
        if ((x.aval if tx is Array else tx) is entry[0]
            and (y.aval if ty is Array else ty) is entry[1] and entry[2] is cfg.x64):
          dt, weak, converts = entry[3]
          if converts is None:
            return [x, y]
          if tx is Array and ty is Array:
            committed_device(args, fun_name)
          cx, cy = converts
          return [converted(x, dt, weak) if cx else x, converted(y, dt, weak) if cy else y]
        t = type(x)
        if t is Array:
          aval = x.aval
          kx = aval.dtype, aval.weak_type, len(aval.shape)
        else:
          kx = t if t in SCALAR_TYPES else _operand_key(x, t)
        t = type(y)
        if t is Array:
          aval = y.aval
          ky = aval.dtype, aval.weak_type, len(aval.shape)
        else:
          ky = t if t in SCALAR_TYPES else _operand_key(y, t)
        if kx is not None and ky is not None:
          key = (refine, cfg.x64, kx, ky)
      elif len(args) == 1:
        x, = args
        t = type(x)
        if t is Array:
          aval = x.aval
          entry = last[0]
          if aval is entry[0] and entry[1] is None and entry[2] is cfg.x64:
            dt, weak, converts = entry[3]
            return [x] if converts is None else [lax._convert_element_type(x, dt, weak)]
          key = (refine, cfg.x64, (aval.dtype, aval.weak_type, len(aval.shape)))
        else:
          k = t if t in SCALAR_TYPES else _operand_key(x, t)
          if k is not None:
            key = (refine, cfg.x64, k)
      else:
        key = [refine, cfg.x64]
        for a in args:
          t = type(a)
          k = t if t in SCALAR_TYPES else _operand_key(a, t)
          if k is None:
            key = None
            break
          key.append(k)
        else:
          key = tuple(key)
      if key is not None:
        hit = _PROMOTIONS.get(key)
        if hit is None:
          hit = _PROMOTIONS[key] = _promotion(args, key, refine)
        if hit is not False:
          if len(args) == 2 and (type(args[0]) is Array or type(args[0]) in _CONSTANT_TYPES) \
              and (type(args[1]) is Array or type(args[1]) in _CONSTANT_TYPES):
            x, y = args
            last[0] = (x.aval if type(x) is Array else type(x),
                       y.aval if type(y) is Array else type(y), cfg.x64, hit)
          elif len(args) == 1 and type(args[0]) is Array:
            last[0] = (args[0].aval, None, cfg.x64, hit)
          dt, weak, converts = hit
          if converts is None:
            return list(args)
          # Committed operands on two devices: the error names them as
          # passed, before a conversion changes one's dtype (JAX's message).
          committed_device(args, fun_name)
          return [lax._convert_element_type(a, dt, weak) if c else a
                  for a, c in zip(args, converts)]
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_general(*args))
  promote.__doc__ = doc
  return promote


def _promotion(args: tuple, key: tuple, refine):
  """The cache entry of ``_promote_common``: ``(dtype, weak type, which
  operands convert or None)``, or False for operands of different ranks
  (rank promotion and its config check: the general path)."""
  if len({k[2] for k in key[2:] if type(k) is tuple and k[2]}) > 1:
    return False
  if refine is _same_dtype and len(args) == 1:   # promote_dtypes of one operand: as it is
    a, = args
    if type(a) in _CONVERTED_TYPES:
      return dtypes.dtype(a), dtypes.is_weakly_typed(a), (True,)
    return a.aval.dtype, a.aval.weak_type, None
  dt, weak = dtypes.result_type(*args, return_weak_type_flag=True)
  dt = refine(dt)
  if len(_PROMOTIONS) >= 4096:
    _PROMOTIONS.clear()
  return dt, weak, _converts(args, dt, weak)


def _converts(args: tuple, dt, weak: bool) -> tuple | None:
  """Which of ``args`` a promotion to ``(dt, weak)`` converts (scalars and
  NumPy arrays always; Arrays and tracers of another type), or None when
  none does."""
  converts = tuple([type(a) in _CONVERTED_TYPES or a.aval.dtype != dt
                    or a.aval.weak_type != weak for a in args])
  return converts if any(converts) else None


promote_args = _promoter(
    _same_dtype, promote_dtypes,
    "Checks, dtype promotion and rank promotion for an n-ary jnp function.")
promote_args_inexact = _promoter(
    to_inexact_dtype, promote_dtypes_inexact,
    "``promote_args`` to an inexact dtype (``promote_dtypes_inexact``).")
promote_args_numeric = _promoter(
    _to_numeric_dtype, promote_dtypes_numeric,
    "``promote_args`` with bool promoted to int32 (``promote_dtypes_numeric``).")


def canonicalize_axis(axis: Any, ndim: int) -> int:
  """A non-negative axis index; numpy's AxisError when out of range."""
  try:
    axis = operator.index(axis)
  except TypeError:
    raise TypeError(f"axis must be an integer, got {axis!r}") from None
  if not -ndim <= axis < ndim:
    raise AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return axis % ndim if ndim else axis


def canonicalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
  """A sorted tuple of distinct non-negative axes (None means all)."""
  if axis is None:
    return tuple(range(ndim))
  if isinstance(axis, (tuple, list)):
    axes = tuple(canonicalize_axis(a, ndim) for a in axis)
    if len(set(axes)) != len(axes):
      raise ValueError(f"repeated axis in {axis}")
    return axes
  return (canonicalize_axis(axis, ndim),)


def shape_of(x: Any) -> tuple[int, ...]:
  aval = getattr(x, "aval", None)   # Arrays and tracers (the common case)
  if aval is not None:
    return aval.shape
  return tuple(get_aval(x).shape) if not isinstance(x, (list, tuple)) else np.shape(x)


def dtype_of(x: Any) -> np.dtype:
  return dtypes.dtype(x)


def broadcast_to_shape(x: Any, shape: Sequence[int]):
  """Broadcast ``x`` to ``shape`` with NumPy's rules (used by many functions)."""
  shape = tuple(shape)
  xs = tuple(np.shape(x))
  if xs == shape:
    return x
  if len(xs) > len(shape) or any(a not in (1, b) for a, b in zip(xs[::-1], shape[::-1])):
    raise ValueError(f"Incompatible shapes for broadcasting: {xs} and requested shape {shape}")
  nlead = len(shape) - len(xs)
  keep = [i for i, d in enumerate(xs) if d == shape[nlead + i]]
  if len(keep) != len(xs):
    x = lax.reshape(x, tuple(xs[i] for i in keep))
  return lax.broadcast_in_dim(x, shape, tuple(nlead + i for i in keep))
