"""``jax.numpy`` floating-point inspection and manipulation (NaN/inf tests,
sign bits, mantissa/exponent, neighbours), complex parts, and a few
elementwise special functions (``sinc``, ``i0``, ``heaviside``)."""
from __future__ import annotations

import functools
import math

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.autodiff import jvp as _jvp
from openjax._src.api.custom_derivatives import custom_jvp
from openjax._src.core import Array, eval_trace, trace_state
from openjax._src.numpy import util
from openjax._src.numpy.eager_programs import eager_program, eager_program_when
from openjax._src.numpy._ufunc_helpers import (
    _where as _jit_where, asarray, const, constant_like, full_like, is_kind, weak_scalar,
    where as _where)
from openjax._src.numpy.util import (
    ensure_arraylike, promote_args, promote_args_inexact, promote_dtypes_inexact)

__all__ = [
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "copysign",
    "nextafter", "spacing", "ldexp", "frexp", "modf", "nan_to_num", "heaviside", "sinc",
    "i0", "angle", "real", "imag", "conj", "conjugate", "iscomplex", "isreal",
]

_INT_OF_BITS = {16: np.int16, 32: np.int32, 64: np.int64}


# --------------------------------------------------------- NaN and infinity
def isnan(x, /):
  """Elementwise test for NaN."""
  x = ensure_arraylike("isnan", x)
  return lax.ne(x, x)


@eager_program_when(lambda x: type(x) is Array and x.aval.dtype.kind == "c")   # 5 operations
def isfinite(x, /):
  """Elementwise test for neither infinity nor NaN."""
  x = ensure_arraylike("isfinite", x)
  if is_kind(x, "f"):
    return lax.is_finite(x)
  if is_kind(x, "c"):
    return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
  return full_like(x, True, dtype=np.bool_)


@util.jit
def isinf(x, /):
  """Elementwise test for positive or negative infinity."""
  x = ensure_arraylike("isinf", x)
  if is_kind(x, "f"):
    return lax.eq(lax.abs(x), constant_like(x, np.inf))
  if is_kind(x, "c"):
    re, im = lax.real(x), lax.imag(x)
    return lax.bitwise_or(lax.eq(lax.abs(re), constant_like(re, np.inf)),
                          lax.eq(lax.abs(im), constant_like(im, np.inf)))
  return full_like(x, False, dtype=np.bool_)


def _isposneginf(name, infinity, x, out):
  if out is not None:
    raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
  x = ensure_arraylike(name, x)
  if is_kind(x, "f"):
    return lax.eq(x, constant_like(x, infinity))
  if is_kind(x, "c"):
    raise ValueError("isposinf/isneginf are not well defined for complex types")
  return full_like(x, False, dtype=np.bool_)


def isposinf(x, /, out=None):
  """Elementwise test for positive infinity."""
  return _isposneginf("isposinf", np.inf, x, out)


def isneginf(x, /, out=None):
  """Elementwise test for negative infinity."""
  return _isposneginf("isneginf", -np.inf, x, out)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
  """Replace NaN by ``nan`` and infinities by ``posinf``/``neginf`` (the
  largest finite values by default)."""
  if trace_state.trace is eval_trace:
    # Eagerly the replacements are static (a Python float as a traced
    # argument costs ~25k instructions a call); traced they are arguments.
    if nan is _NAN and posinf is None and neginf is None:
      return _nan_to_num_static(x)
    if not (hasattr(nan, "aval") or hasattr(posinf, "aval") or hasattr(neginf, "aval")):
      return _nan_to_num_static(x, nan=nan, posinf=posinf, neginf=neginf)
  # Only the values given (JAX's jit leaves the defaults out of the call)
  kw = {k: v for k, v, d in (("nan", nan, _NAN), ("posinf", posinf, None),
                             ("neginf", neginf, None)) if v is not d}
  return _nan_to_num_traced(x, copy=copy, **kw)


_NAN = 0.0


def _nan_to_num(x, copy=True, nan=_NAN, posinf=None, neginf=None):
  del copy   # arrays are immutable
  x = ensure_arraylike("nan_to_num", x)
  if not is_kind(x, "f", "c"):
    return asarray(x)
  if is_kind(x, "c"):
    kw = dict(nan=nan, posinf=posinf, neginf=neginf)
    return lax.complex(_nan_to_num(lax.real(x), **kw), _nan_to_num(lax.imag(x), **kw))
  dt = dtypes.dtype(x)
  info = dtypes.finfo(dt)
  posinf = info.max if posinf is None else posinf
  neginf = info.min if neginf is None else neginf
  # jnp.where (JAX's jit _where), as in JAX's jaxpr.
  out = _jit_where(isnan(x), _typed(nan, dt), x)
  out = _jit_where(isposinf(out), _typed(posinf, dt), out)
  return _jit_where(isneginf(out), _typed(neginf, dt), out)


_nan_to_num.__name__ = "nan_to_num"
_nan_to_num_traced = util.jit(_nan_to_num, static_argnames=('copy',))
_nan_to_num_static = util.jit(_nan_to_num, static_argnames=('copy', 'nan', 'posinf', 'neginf'))


def _typed(value, dt):
  # A replacement value cast to the array's dtype (the caller's may be traced).
  if hasattr(value, "aval"):
    return lax.convert_element_type(value, dt)
  return np.asarray(value).astype(dt)


# ------------------------------------------------------- sign and neighbours
@util.jit
def signbit(x, /):
  """Elementwise test of the sign bit (True for -0.0 and negative NaN)."""
  x, = promote_args("signbit", x)
  dt = dtypes.dtype(x)
  if is_kind(x, "i", "u"):
    return lax.lt(x, constant_like(x, 0))
  if is_kind(x, "b"):
    return full_like(x, False, dtype=np.bool_)
  if not is_kind(x, "f"):
    raise ValueError(f"jax.numpy.signbit is not well defined for {dt}")
  info = dtypes.finfo(dt)
  if info.bits not in _INT_OF_BITS:
    raise NotImplementedError("jax.numpy.signbit only supports 16, 32, and 64-bit types.")
  bits = lax.bitcast_convert_type(x, _INT_OF_BITS[info.bits])
  shift = np.array(info.nexp + info.nmant, _INT_OF_BITS[info.bits])
  return lax.convert_element_type(lax.shift_right_arithmetic(bits, shift), np.bool_)


@util.jit
def copysign(x1, x2, /):
  """Elementwise magnitude of ``x1`` with the sign of ``x2``."""
  x1, x2 = promote_args_inexact("copysign", x1, x2)
  if is_kind(x1, "c"):
    raise TypeError("copysign does not support complex-valued inputs")
  magnitude = lax.abs(x1)
  return _where(signbit(x2), lax.neg(magnitude), magnitude)


def nextafter(x1, x2, /):
  """Elementwise next representable float after ``x1`` toward ``x2``."""
  return lax.nextafter(*promote_args_inexact("nextafter", x1, x2))


# JAX does not jit spacing (6 equations, two copysign jits): eagerly one
# library program (10 elements: ~75 -> ~10 us), inline under a trace.
@eager_program()
def spacing(x, /):
  """Elementwise distance from ``x`` to the next float away from zero."""
  x, = promote_args_inexact("spacing", x)
  if is_kind(x, "c"):
    raise ValueError("jnp.spacing is not defined for complex inputs.")
  dt = dtypes.dtype(x)
  if dt == np.float16:
    return lax.sub(lax.nextafter(x, const(x, np.inf)), x)
  # Python scalars and Arrays, not NumPy constants: copysign's eager calls
  # of those are cached by type (a NumPy operand re-traced every call, ~100
  # us of ~140). The tiny constant is strong, as JAX's (the result with it).
  result = lax.sub(lax.nextafter(x, copysign(math.inf, x)), x)
  tiny = lax._convert_element_type(float(dtypes.finfo(dt).smallest_subnormal), dt, False)
  tiny = copysign(tiny, x)
  return _where(lax.eq(result, const(result, 0)), tiny, result)


# ------------------------------------------------------ mantissa, exponent
@util.jit
def frexp(x, /):
  """Split ``x`` into mantissa in [0.5, 1) and integer exponent: ``x = m * 2**e``."""
  x = ensure_arraylike("frexp", x)
  x, = promote_dtypes_inexact(x)
  if is_kind(x, "c"):
    raise TypeError("frexp does not support complex-valued inputs")
  return _frexp(x)


@custom_jvp
def _frexp(x):
  dt = dtypes.dtype(x)
  info = dtypes.finfo(dt)
  int_t = _INT_OF_BITS[info.bits]
  mask = (1 << info.nexp) - 1
  bias = 1 - info.minexp
  # A subnormal is m 2**(minexp - nmant) with the integer m of its mantissa
  # bits, which converts exactly: take frexp of +-m and shift the exponent.
  # Decided on the bits: compiled CPU code treats subnormal operands of
  # float arithmetic and compares as 0 (x * 2**nmant gave 0).
  bits0 = lax.bitcast_convert_type(x, int_t)
  mant_bits = lax.bitwise_and(bits0, np.array((1 << info.nmant) - 1, int_t))
  exp_bits = lax.bitwise_and(bits0, np.array(mask << info.nmant, int_t))
  zero_i = np.array(0, int_t)
  subnormal = lax.bitwise_and(lax.eq(exp_bits, zero_i), lax.ne(mant_bits, zero_i))
  m = lax.convert_element_type(mant_bits, dt)
  x1 = _where(subnormal, _where(lax.lt(bits0, zero_i), lax.neg(m), m), x)
  e = _where(subnormal, np.array(info.minexp - info.nmant, int_t), zero_i)
  bits = lax.bitcast_convert_type(x1, int_t)
  biased = lax.bitwise_and(lax.shift_right_arithmetic(bits, np.array(info.nmant, int_t)),
                           np.array(mask, int_t))
  e = lax.add(e, lax.add(lax.sub(biased, np.array(bias, int_t)), np.array(1, int_t)))
  bits = lax.bitwise_and(bits, np.array(~(mask << info.nmant), int_t))
  bits = lax.bitwise_or(bits, np.array((bias - 1) << info.nmant, int_t))
  mantissa = lax.bitcast_convert_type(bits, dt)
  is_zero = lax.bitwise_and(lax.eq(exp_bits, zero_i), lax.eq(mant_bits, zero_i))
  special = lax.bitwise_or(lax.bitwise_or(isinf(x), isnan(x)), is_zero)
  e = _where(special, np.zeros((), int_t), e)
  return _where(special, x, mantissa), lax.convert_element_type(e, np.int32)


@_frexp.defjvp
def _frexp_jvp(primals, tangents):
  # The mantissa is x * 2**-e with e piecewise constant (as JAX's rule).
  x, = primals
  t, = tangents
  m, e = _frexp(x)
  mdot = lax.mul(t, lax.exp2(lax.neg(lax.convert_element_type(e, dtypes.dtype(t)))))
  return (m, e), (mdot, np.zeros(np.shape(e), dtypes.float0))


@util.jit
def ldexp(x1, x2, /):
  """Elementwise ``x1 * 2**x2`` for integer ``x2``."""
  x1, x2 = ensure_arraylike("ldexp", x1, x2)
  d1, d2 = dtypes.dtype(x1), dtypes.dtype(x2)
  if dtypes.kind(d1) == "c" or dtypes.kind(d2) in "fc":
    raise ValueError(f"ldexp not supported for input types {(d1, d2)}")
  x1, = promote_args_inexact("ldexp", x1)
  dt = dtypes.dtype(x1)
  x2 = lax.convert_element_type(x2, dt)
  m, e = frexp(x1)
  e = lax.add(lax.convert_element_type(e, dt), x2)
  # Move one factor of 2 into the mantissa so 2**e cannot overflow early.
  positive = lax.gt(e, const(e, 0))
  m = _where(positive, lax.mul(m, weak_scalar(m, 2)), m)
  e = _where(positive, lax.sub(e, weak_scalar(e, 1)), e)
  x = lax.mul(m, lax.pow(const(e, 2), e))
  return _where(lax.bitwise_or(isinf(x1), lax.eq(x1, const(x1, 0))), x1, x)


@util.jit(static_argnames=('out',))
def modf(x, /, out=None):
  """Split ``x`` into fractional and integral parts, both with ``x``'s sign."""
  x = ensure_arraylike("modf", x)
  x, = promote_dtypes_inexact(x)
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
  whole = _where(lax.ge(x, const(x, 0)), lax.floor(x), lax.ceil(x))
  return lax.sub(x, whole), whole


# ------------------------------------------------------------ complex parts
def real(val, /):
  """Elementwise real part (the input itself when it is real)."""
  val = ensure_arraylike("real", val)
  return lax.real(val) if is_kind(val, "c") else asarray(val)


def imag(val, /):
  """Elementwise imaginary part (zeros when the input is real)."""
  val = ensure_arraylike("imag", val)
  return lax.imag(val) if is_kind(val, "c") else full_like(val, 0)


def conjugate(x, /):
  """Elementwise complex conjugate (the input itself when it is real)."""
  x = ensure_arraylike("conjugate", x)
  return lax.conj(x) if is_kind(x, "c") else asarray(x)


def conj(x, /):
  """Elementwise complex conjugate; alias of ``conjugate``."""
  return conjugate(x)


@util.jit(static_argnames=('deg',))
def angle(z, deg=False):
  """Elementwise argument of complex numbers, in radians (degrees if ``deg``)."""
  z = ensure_arraylike("angle", z)
  re, im = real(z), imag(z)
  if not is_kind(re, "f", "c") or (is_kind(z, "f") and np.ndim(z) == 0):
    dt = dtypes.default_float_dtype()
    re, im = lax.convert_element_type(re, dt), lax.convert_element_type(im, dt)
  result = lax.atan2(im, re)
  return lax.mul(result, const(result, 180 / np.pi)) if deg else result


@util.jit
def iscomplex(x, /):
  """Elementwise test for a non-zero imaginary part."""
  i = imag(x)
  return lax.ne(i, const(i, 0))


@util.jit
def isreal(x, /):
  """Elementwise test for a zero imaginary part."""
  i = imag(x)
  return lax.eq(i, const(i, 0))


# -------------------------------------------------------- special functions
@util.jit
def heaviside(x1, x2, /):
  """Elementwise step function: 0 below zero, 1 above, ``x2`` at zero."""
  x1, x2 = ensure_arraylike("heaviside", x1, x2)
  x1, x2 = promote_dtypes_inexact(x1, x2)
  zero = const(x1, 0)
  return _where(lax.lt(x1, zero), zero,
                _where(lax.gt(x1, zero), const(x1, 1), _where(isnan(x1), x1, x2)))


@util.jit
def sinc(x, /):
  """Elementwise normalised sinc: ``sin(pi x) / (pi x)``, 1 at 0."""
  x = ensure_arraylike("sinc", x)
  x, = promote_dtypes_inexact(x)
  eq_zero = lax.eq(x, const(x, 0))
  if is_kind(x, "c"):
    re = lax.real(x)
    eq_inf = lax.bitwise_and(lax.eq(lax.abs(re), const(re, np.inf)),
                             lax.is_finite(lax.imag(x)))
  else:
    eq_inf = lax.eq(lax.abs(x), const(x, np.inf))
  pi_x = lax.mul(const(x, np.pi), x)
  safe_pi_x = _where(lax.bitwise_or(eq_zero, eq_inf), const(x, 1), pi_x)
  result = _where(eq_zero, _sinc_maclaurin(0, pi_x), lax.div(lax.sin(safe_pi_x), safe_pi_x))
  return _where(eq_inf, const(x, 0), result)


@functools.partial(custom_jvp, nondiff_argnums=(0,))
def _sinc_maclaurin(k, x):
  # The k-th derivative of sin(x)/x at 0 (as JAX's): the JVP of term k is
  # term k + 1, so every order of derivative at 0 is exact.
  if k % 2:
    return lax.mul(x, const(x, 0))
  return lax.add(lax.mul(x, const(x, 0)), const(x, (-1) ** (k // 2) / (k + 1)))


@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(k, primals, tangents):
  (x,), (t,) = primals, tangents
  return _sinc_maclaurin(k, x), lax.mul(_sinc_maclaurin(k + 1, x), t)


@util.jit
def i0(x):
  """Elementwise modified Bessel function of the first kind, order 0."""
  x, = promote_args_inexact("i0", x)
  if not is_kind(x, "f"):
    raise ValueError(f"Unsupported input type to jax.numpy.i0: {dtypes.dtype(x)}")
  return _i0(x)


@custom_jvp
def _i0(x):
  abs_x = lax.abs(x)
  return lax.mul(lax.exp(abs_x), lax.bessel_i0e(abs_x))


@_i0.defjvp
def _i0_jvp(primals, tangents):
  # abs's kink would give 1 at x = 0, where i0 is flat (as JAX's rule).
  primal_out, tangent_out = _jvp(_i0.fun, primals, tangents)
  x, = primals
  return primal_out, _where(lax.eq(x, const(x, 0)), const(tangent_out, 0), tangent_out)
