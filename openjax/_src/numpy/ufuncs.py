"""``jax.numpy`` elementwise functions: arithmetic, division and remainders,
powers, exponentials and logarithms, trigonometry, rounding and extrema.

Each follows NumPy's semantics with JAX's dtype promotion (weak Python scalars
adopt the array's dtype) and is written with lax wrappers only. Bitwise and
logical functions live in ``ufuncs_bitwise``, floating-point inspection and
complex parts in ``ufuncs_float``.
"""
from __future__ import annotations

import functools
import math
import operator

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.custom_derivatives import custom_jvp
from openjax._src.core import Array, is_concrete
from openjax._src.numpy import util
from openjax._src.numpy.eager_programs import eager_program, eager_program_when
from openjax._src.numpy._ufunc_helpers import (
    _where as _jit_where, asarray, broadcast_arrays, const, constant_like, full_like, is_kind,
    weak_scalar, where as _where)
from openjax._src.numpy.util import (
    check_arraylike, ensure_arraylike, promote_args, promote_args_inexact,
    promote_args_numeric, promote_dtypes_inexact, promote_dtypes_numeric, promote_shapes)

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "remainder",
    "mod", "fmod", "divmod", "power", "pow", "float_power", "negative", "positive", "abs",
    "absolute", "fabs", "sign", "sqrt", "cbrt", "square", "reciprocal", "exp", "exp2",
    "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2", "sin", "cos", "tan",
    "arcsin", "arccos", "arctan", "arctan2", "asin", "acos", "atan", "atan2", "sinh", "cosh",
    "tanh", "arcsinh", "arccosh", "arctanh", "asinh", "acosh", "atanh", "deg2rad",
    "rad2deg", "degrees", "radians", "hypot", "floor", "ceil", "trunc", "rint", "maximum",
    "minimum", "fmax", "fmin", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal",
]


_BOOL = np.dtype(bool)


_INEXACT = frozenset(map(np.dtype, (np.float16, dtypes.bfloat16, np.float32, np.float64,
                                    np.complex64, np.complex128)))


def _converting_program(fun):
  """``fun(x1, x2)`` as one eager library program (``eager_program``) when
  its promotion converts (each convert a bind of ~2-3 us); Arrays of one
  inexact dtype call ``fun`` itself: ``logaddexp``'s custom function runs
  as its own cached program, ``float_power``'s one ``pow`` is one bind."""
  program = eager_program()(fun)

  @functools.wraps(fun)
  def call(x1, x2, /):
    if type(x1) is Array and type(x2) is Array and x1.dtype == x2.dtype and x1.dtype in _INEXACT:
      return fun(x1, x2)
    return program(x1, x2)
  return call


# ------------------------------------------------------------- arithmetic
def add(x, y, /):
  """Elementwise ``x + y`` (logical or for booleans)."""
  x, y = promote_args("add", x, y)
  return lax.bitwise_or(x, y) if x.aval.dtype == _BOOL else lax.add(x, y)


def subtract(x, y, /):
  """Elementwise ``x - y``."""
  return lax.sub(*promote_args("subtract", x, y))


def multiply(x, y, /):
  """Elementwise ``x * y`` (logical and for booleans)."""
  x, y = promote_args("multiply", x, y)
  return lax.bitwise_and(x, y) if x.aval.dtype == _BOOL else lax.mul(x, y)


def negative(x, /):
  """Elementwise ``-x``."""
  return lax.neg(*promote_args("negative", x))


def positive(x, /):
  """Elementwise ``+x`` (a copy of ``x``)."""
  return asarray(*promote_args("positive", x))


def absolute(x, /):
  """Elementwise absolute value (the magnitude of complex numbers)."""
  x = ensure_arraylike("absolute", x)
  return asarray(x) if is_kind(x, "b", "u") else lax.abs(x)


def abs(x, /):  # noqa: A001 - NumPy's name
  """Elementwise absolute value; alias of ``absolute``."""
  return absolute(x)


def fabs(x, /):
  """Elementwise absolute value as a float."""
  x = ensure_arraylike("fabs", x)
  if is_kind(x, "c"):
    raise TypeError("ufunc 'fabs' does not support complex dtypes")
  return lax.abs(*promote_args_inexact("fabs", x))


def sign(x, /):
  """Elementwise sign: -1, 0 or 1 (``x / |x|`` for complex)."""
  return lax.sign(*promote_args("sign", x))


@eager_program_when(lambda x: type(x) is Array and x.aval.dtype == _BOOL)   # cast + square
def square(x, /):
  """Elementwise ``x * x``."""
  x = ensure_arraylike("square", x)
  x, = promote_dtypes_numeric(x)
  return lax.square(x)


def reciprocal(x, /):
  """Elementwise ``1 / x`` (integers become floats)."""
  x = ensure_arraylike("reciprocal", x)
  x, = promote_dtypes_inexact(x)
  return lax.integer_pow(x, -1)


# -------------------------------------------------- division and remainders
def true_divide(x1, x2, /):
  """Elementwise true division ``x1 / x2``; integers divide as floats."""
  return lax.div(*promote_args_inexact("true_divide", x1, x2))


def divide(x1, x2, /):
  """Elementwise true division; alias of ``true_divide``."""
  return true_divide(x1, x2)


@util.jit
def floor_divide(x1, x2, /):
  """Elementwise ``x1 // x2``, rounding toward negative infinity."""
  x1, x2 = promote_args_numeric("floor_divide", x1, x2)
  if is_kind(x1, "u"):
    return lax.div(x1, x2)
  if is_kind(x1, "i"):
    quotient = lax.div(x1, x2)
    # lax.div truncates: step down where the signs differ and it was inexact.
    inexact = lax.bitwise_and(lax.ne(lax.sign(x1), lax.sign(x2)),
                              lax.ne(lax.rem(x1, x2), const(x1, 0)))
    return _where(inexact, lax.sub(quotient, weak_scalar(quotient, 1)), quotient)
  if is_kind(x1, "c"):
    raise TypeError("floor_divide does not support complex-valued inputs")
  return _float_divmod(x1, x2)[0]


@util.jit
def remainder(x1, x2, /):
  """Elementwise remainder with the sign of the divisor (Python's ``%``)."""
  x1, x2 = promote_args_numeric("remainder", x1, x2)
  zero = constant_like(x1, 0)
  if is_kind(x2, "i", "u"):   # XLA leaves x % 0 undefined; NumPy gives 0
    x2 = _where(lax.eq(x2, const(x2, 0)), full_like(x2, 1), x2)
  trunc_mod = lax.rem(x1, x2)
  fix = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)),
                        lax.ne(trunc_mod, zero))
  return lax.select(fix, lax.add(trunc_mod, x2), trunc_mod)


def mod(x1, x2, /):
  """Elementwise remainder with the sign of the divisor; alias of ``remainder``."""
  return remainder(x1, x2)


@util.jit
def fmod(x1, x2, /):
  """Elementwise remainder with the sign of the dividend (C's ``fmod``)."""
  x1, x2 = ensure_arraylike("fmod", x1, x2)
  if dtypes.issubdtype(dtypes.result_type(x1, x2), np.integer):
    x2 = _where(lax.eq(x2, const(x2, 0)), full_like(x2, 1), x2)
  return lax.rem(*promote_args_numeric("fmod", x1, x2))


@util.jit
def divmod(x1, x2, /):  # noqa: A001 - NumPy's name
  """``(floor_divide(x1, x2), remainder(x1, x2))`` computed together."""
  x1, x2 = promote_args_numeric("divmod", x1, x2)
  if is_kind(x1, "i", "u"):
    return floor_divide(x1, x2), remainder(x1, x2)
  return _float_divmod(x1, x2)


def _float_divmod(x1, x2):
  mod = lax.rem(x1, x2)
  x1_exact = _where(lax.eq(x2, const(x2, 0)), x1, lax.sub(x1, mod))
  div = lax.div(x1_exact, x2)
  fix = lax.bitwise_and(lax.ne(mod, const(mod, 0)), lax.ne(lax.sign(x2), lax.sign(mod)))
  mod = lax.select(fix, lax.add(mod, x2), mod)
  div = lax.select(fix, lax.sub(div, weak_scalar(div, 1)), div)
  return lax.round(div), mod


# ------------------------------------------------------------------ powers
def power(x1, x2, /):
  """Elementwise ``x1 ** x2``. A concrete integer exponent uses repeated
  multiplication (``lax.integer_pow``); integer bases stay integers."""
  check_arraylike("power", x1, x2)
  if hasattr(x1, "__jax_array__"):
    x1 = x1.__jax_array__()
  if hasattr(x2, "__jax_array__"):
    x2 = x2.__jax_array__()
  # Only a rank-0 exponent can be an index (an array's failed __index__ costs
  # ~10 us of a ~50 us eager integer power).
  if is_concrete(x2) and np.ndim(x2) == 0:
    try:
      exponent = operator.index(x2)
    except TypeError:
      pass
    else:
      x1, = promote_dtypes_numeric(x1)
      return lax.integer_pow(x1, exponent)
  return _power(x1, x2)


def pow(x1, x2, /):  # noqa: A001 - NumPy's name
  """Elementwise ``x1 ** x2``; alias of ``power``."""
  return power(x1, x2)


def _power(x1, x2):
  x1, x2 = promote_shapes("power", x1, x2)
  x1_, x2_ = promote_args_numeric("power", x1, x2)
  if is_kind(x1_, "i", "u", "b"):
    return _pow_int_int(x1_, x2_)
  if is_kind(x1, "f", "c") and is_kind(x2, "i", "u"):
    return lax.pow(x1, x2)
  return lax.pow(x1_, x2_)


@util.jit
def _pow_int_int(x1, x2):
  # Square-and-multiply over the low 6 bits of the exponent: larger exponents
  # overflow every base but 0 and +-1, whose powers depend only on parity.
  zero, one = constant_like(x2, 0), constant_like(x2, 1)
  acc = _where(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
  for _ in range(6):
    acc = _where(lax.bitwise_and(x2, one), lax.mul(acc, x1), acc)
    x1 = lax.mul(x1, x1)
    x2 = lax.shift_right_logical(x2, one)
  return acc


@_converting_program
def float_power(x, y, /):
  """Elementwise ``x ** y`` computed in floating point."""
  return lax.pow(*promote_args_inexact("float_power", x, y))


# ------------------------------------------------- exponentials and logs
def _inexact_unary(name, lax_fn, doc):
  def fn(x, /):
    return lax_fn(*promote_args_inexact(name, x))
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = doc
  return fn


sqrt = _inexact_unary("sqrt", lax.sqrt, "Elementwise non-negative square root.")
cbrt = _inexact_unary("cbrt", lax.cbrt, "Elementwise cube root.")
exp = _inexact_unary("exp", lax.exp, "Elementwise exponential ``e**x``.")
exp2 = _inexact_unary("exp2", lax.exp2, "Elementwise base-2 exponential ``2**x``.")
expm1 = _inexact_unary("expm1", lax.expm1, "Elementwise ``e**x - 1``, accurate near 0.")
log = _inexact_unary("log", lax.log, "Elementwise natural logarithm.")
log1p = _inexact_unary("log1p", lax.log1p, "Elementwise ``log(1 + x)``, accurate near 0.")
sin = _inexact_unary("sin", lax.sin, "Elementwise sine.")
cos = _inexact_unary("cos", lax.cos, "Elementwise cosine.")
tan = _inexact_unary("tan", lax.tan, "Elementwise tangent.")
arcsin = _inexact_unary("arcsin", lax.asin, "Elementwise inverse sine.")
arccos = _inexact_unary("arccos", lax.acos, "Elementwise inverse cosine.")
arctan = _inexact_unary("arctan", lax.atan, "Elementwise inverse tangent.")
sinh = _inexact_unary("sinh", lax.sinh, "Elementwise hyperbolic sine.")
cosh = _inexact_unary("cosh", lax.cosh, "Elementwise hyperbolic cosine.")
tanh = _inexact_unary("tanh", lax.tanh, "Elementwise hyperbolic tangent.")
arcsinh = _inexact_unary("arcsinh", lax.asinh, "Elementwise inverse hyperbolic sine.")
arctanh = _inexact_unary("arctanh", lax.atanh, "Elementwise inverse hyperbolic tangent.")


@util.jit
def arccosh(x, /):
  """Elementwise inverse hyperbolic cosine (principal branch for complex)."""
  result = lax.acosh(*promote_args_inexact("arccosh", x))
  if is_kind(result, "c"):   # pick NumPy's branch: non-negative real part
    result = _where(lax.lt(lax.real(result), const(lax.real(result), 0)),
                    lax.neg(result), result)
  return result


# log2, log10, logaddexp(2) and float_power: JAX does not jit them (2-7
# equations with the promotion's converts); eagerly each runs as one cached
# library program (log2 of 10 complex64: ~23 -> ~10 us), inline when traced.
@eager_program()
def log2(x, /):
  """Elementwise base-2 logarithm."""
  x, = promote_args_inexact("log2", x)
  if is_kind(x, "c"):
    r = lax.log(x)
    re, im = lax.real(r), lax.imag(r)
    ln2 = lax.log(constant_like(re, 2))
    return lax.complex(lax.div(re, ln2), lax.div(im, ln2))
  return lax.div(lax.log(x), lax.log(constant_like(x, 2)))


@eager_program()
def log10(x, /):
  """Elementwise base-10 logarithm."""
  x, = promote_args_inexact("log10", x)
  inv_ln10 = np.array(0.4342944819032518, dtypes.finfo(dtypes.dtype(x)).dtype)
  if is_kind(x, "c"):
    r = lax.log(x)
    return lax.complex(lax.mul(lax.real(r), inv_ln10), lax.mul(lax.imag(r), inv_ln10))
  return lax.mul(lax.log(x), inv_ln10)


@_converting_program
def logaddexp(x1, x2, /):
  """Elementwise ``log(exp(x1) + exp(x2))`` without overflow."""
  x1, x2 = promote_args_inexact("logaddexp", x1, x2)
  return _logaddexp_e(x1, x2)


@_converting_program
def logaddexp2(x1, x2, /):
  """Elementwise ``log2(2**x1 + 2**x2)`` without overflow."""
  x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
  return _logaddexp_2(x1, x2)


def _custom_logaddexp(name, exp_fn, scale, period):
  # As in JAX, a custom JVP: the tangent weights are exp(x_i - out), well
  # defined at ties (1/2 each) and at infinities (which _replace_inf zeroes).
  def fn(x1, x2):
    return _logaddexp(x1, x2, exp_fn, scale, period)
  fn.__name__ = fn.__qualname__ = name
  fn = custom_jvp(fn)

  def jvp(primals, tangents):
    x1, x2 = primals
    t1, t2 = tangents
    out = fn(x1, x2)
    return out, lax.add(lax.mul(t1, exp_fn(lax.sub(_replace_inf(x1), _replace_inf(out)))),
                        lax.mul(t2, exp_fn(lax.sub(_replace_inf(x2), _replace_inf(out)))))
  jvp.__name__ = jvp.__qualname__ = f"_{name}_jvp"
  fn.defjvp(jvp)
  return fn


def _replace_inf(x):
  re = lax.real(x) if is_kind(x, "c") else x
  return lax.select(lax.eq(re, const(re, np.inf)), full_like(x, 0), x)


def _logaddexp(x1, x2, exp_fn, scale, period):
  amax = lax.max(x1, x2)
  if is_kind(x1, "f"):
    delta = lax.sub(x1, x2)
    # delta is NaN for infinities of one sign (or NaN inputs): x1 + x2 is right.
    is_nan, both = lax.ne(delta, delta), lax.add(x1, x2)
    tail = lax.log1p(exp_fn(lax.neg(lax.abs(delta))))
    if scale != 1.0:
      tail = lax.mul(const(amax, scale), tail)
    return lax.select(is_nan, both, lax.add(amax, tail))
  delta = lax.sub(lax.add(x1, x2), lax.mul(amax, const(amax, 2)))
  tail = lax.log1p(exp_fn(delta))
  if scale != 1.0:
    tail = lax.mul(const(amax, scale), tail)
  out = lax.add(amax, tail)
  return lax.complex(lax.real(out), _wrap_between(lax.imag(out), period))


_logaddexp_e = _custom_logaddexp("logaddexp", lax.exp, 1.0, np.pi)
_logaddexp_2 = _custom_logaddexp("logaddexp2", lax.exp2, 1 / np.log(2), np.pi / np.log(2))


def _wrap_between(x, half_period):
  # Map x into [-half_period, half_period).
  a, two_a, zero = const(x, half_period), const(x, 2 * half_period), const(x, 0)
  rem = lax.rem(lax.add(x, a), two_a)
  rem = lax.select(lax.lt(rem, zero), lax.add(rem, two_a), rem)
  return lax.sub(rem, a)


# -------------------------------------------------------------- trigonometry
def arctan2(x1, x2, /):
  """Elementwise arc tangent of ``x1 / x2`` in the quadrant of ``(x2, x1)``."""
  return lax.atan2(*promote_args_inexact("arctan2", x1, x2))


@util.jit
def hypot(x1, x2, /):
  """Elementwise ``sqrt(x1**2 + x2**2)`` without overflow or underflow."""
  x1, x2 = promote_args_inexact("hypot", x1, x2)
  if is_kind(x1, "c"):
    raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                     "convert to real values first, such as by using abs(x)")
  x1, x2 = lax.abs(x1), lax.abs(x2)
  inf = constant_like(x1, np.inf)
  any_inf = lax.bitwise_or(lax.eq(x1, inf), lax.eq(x2, inf))
  big, small = lax.max(x1, x2), lax.min(x1, x2)
  # jnp.where (JAX's jit _where) and the zero test made twice, as JAX's jaxpr.
  is_zero = lax.eq(big, const(big, 0))
  ratio = lax.div(small, _jit_where(lax.eq(big, const(big, 0)), full_like(big, 1), big))
  x = _jit_where(is_zero, big,
                 lax.mul(big, lax.sqrt(lax.add(weak_scalar(ratio, 1), lax.square(ratio)))))
  return _jit_where(any_inf, const(x, np.inf), x)


def deg2rad(x, /):
  """Convert angles from degrees to radians."""
  x, = promote_args_inexact("deg2rad", x)
  return lax.mul(x, const(x, np.pi / 180))


@eager_program_when(lambda x: type(x) is Array and x.aval.dtype.kind in "biu")   # cast + mul
def rad2deg(x, /):
  """Convert angles from radians to degrees."""
  x, = promote_args_inexact("rad2deg", x)
  return lax.mul(x, const(x, 180 / np.pi))


def degrees(x, /):
  """Convert angles from radians to degrees; alias of ``rad2deg``."""
  return rad2deg(x)


def radians(x, /):
  """Convert angles from degrees to radians; alias of ``deg2rad``."""
  return deg2rad(x)


def _alias(name, target):
  def fn(x, /):
    return target(*promote_args(name, x))
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = f"Alias of ``{target.__name__}`` (the array API name)."
  return fn


acos, acosh, asin = _alias("acos", arccos), _alias("acosh", arccosh), _alias("asin", arcsin)
asinh, atan, atanh = _alias("asinh", arcsinh), _alias("atan", arctan), _alias("atanh", arctanh)


def atan2(x1, x2, /):
  """Alias of ``arctan2`` (the array API name)."""
  return arctan2(*promote_args("atan2", x1, x2))


# ----------------------------------------------------------------- rounding
def floor(x, /):
  """Elementwise largest integer not greater than ``x``."""
  x = ensure_arraylike("floor", x)
  if is_kind(x, "b", "i", "u"):
    return asarray(x)
  return lax.floor(*promote_args_inexact("floor", x))


def ceil(x, /):
  """Elementwise smallest integer not less than ``x``."""
  x = ensure_arraylike("ceil", x)
  if is_kind(x, "b", "i", "u"):
    return asarray(x)
  return lax.ceil(*promote_args_inexact("ceil", x))


@util.jit
def trunc(x, /):
  """Elementwise rounding toward zero."""
  x = ensure_arraylike("trunc", x)
  if is_kind(x, "b", "i", "u"):
    return asarray(x)
  return _where(lax.lt(x, const(x, 0)), ceil(x), floor(x))


@util.jit
def rint(x, /):
  """Elementwise rounding to the nearest integer, ties to even."""
  x = ensure_arraylike("rint", x)
  if is_kind(x, "b", "i", "u"):
    return lax.convert_element_type(x, dtypes.default_float_dtype())
  if is_kind(x, "c"):
    return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
  return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


# ------------------------------------------------------ extrema, comparisons
def maximum(x, y, /):
  """Elementwise maximum; NaN wins."""
  return lax.max(*promote_args("maximum", x, y))


def minimum(x, y, /):
  """Elementwise minimum; NaN wins."""
  return lax.min(*promote_args("minimum", x, y))


@util.jit
def fmax(x1, x2, /):
  """Elementwise maximum that ignores NaN (NaN only where both are NaN)."""
  x1, x2 = broadcast_arrays(*promote_args("fmax", x1, x2))
  return _where(lax.bitwise_or(greater(x1, x2), _isnan(x2)), x1, x2)


@util.jit
def fmin(x1, x2, /):
  """Elementwise minimum that ignores NaN (NaN only where both are NaN)."""
  x1, x2 = broadcast_arrays(*promote_args("fmin", x1, x2))
  return _where(lax.bitwise_or(less(x1, x2), _isnan(x2)), x1, x2)


def _isnan(x):
  x = ensure_arraylike("isnan", x)
  return lax.ne(x, x)


def equal(x, y, /):
  """Elementwise ``x == y``."""
  return lax.eq(*promote_args("equal", x, y))


def not_equal(x, y, /):
  """Elementwise ``x != y``."""
  return lax.ne(*promote_args("not_equal", x, y))


_ORDERS = {"less": lax.lt, "less_equal": lax.le, "greater": lax.gt, "greater_equal": lax.ge}


def _lexicographic_of(name):
  lax_op = _ORDERS[name]

  # JAX does not jit these: its 10 equations, staged inline under a trace;
  # eagerly one library program (10 elements: ~20 us op by op, ~9 us), one
  # per comparison called positionally (a static keyword built a key per call).
  @eager_program()
  def lexicographic(x, y):
    return lax.select(lax.eq(lax.real(x), lax.real(y)), lax_op(lax.imag(x), lax.imag(y)),
                      lax_op(lax.real(x), lax.real(y)))
  lexicographic.__name__ = lexicographic.__qualname__ = f"_lexicographic_{name}"
  return lexicographic


_LEXICOGRAPHIC = {name: _lexicographic_of(name) for name in _ORDERS}


def _ordered(name, lax_op, doc):
  lexicographic = _LEXICOGRAPHIC[name]

  def fn(x, y, /):
    x, y = promote_args(name, x, y)
    if is_kind(x, "c"):   # lexicographic on (real, imag), like NumPy
      return lexicographic(x, y)
    return lax_op(x, y)
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = doc
  return fn


less = _ordered("less", lax.lt, "Elementwise ``x < y``.")
less_equal = _ordered("less_equal", lax.le, "Elementwise ``x <= y``.")
greater = _ordered("greater", lax.gt, "Elementwise ``x > y``.")
greater_equal = _ordered("greater_equal", lax.ge, "Elementwise ``x >= y``.")


# ----------------------------------------------------------- gcd and lcm
@util.jit
def gcd(x1, x2, /):
  """Elementwise greatest common divisor of integers (non-negative)."""
  x1, x2 = ensure_arraylike("gcd", x1, x2)
  x1, x2 = util.promote_dtypes(x1, x2)
  if not is_kind(x1, "i", "u"):
    raise ValueError("Arguments to jax.numpy.gcd must be integers.")
  a, b = broadcast_arrays(absolute(x1), absolute(x2))
  if not is_kind(a, "i"):
    return _euclid(a, b)
  # Euclid's pairs as unsigned magnitudes: abs(INT_MIN) is INT_MIN, whose
  # signed remainders are negative ((5, INT_MIN) and gcd(int8(-128),
  # int8(-14)) looped forever, found by tests/fuzz_jnp.py); unsigned it is
  # 2**(bits-1), and the gcd 2**(bits-1) casts back to INT_MIN's bits.
  dt = dtypes.dtype(a)
  # JAX's loop keeps a weak type only for scalars (its body's zeros of an
  # array's shape are strong).
  weak = dtypes.is_weakly_typed(a) and dtypes.is_weakly_typed(b) and np.ndim(a) == 0
  unsigned = np.dtype(f"uint{8 * dt.itemsize}")
  a, b = lax.bitcast_convert_type(a, unsigned), lax.bitcast_convert_type(b, unsigned)
  d = lax.bitcast_convert_type(_euclid(a, b), dt)
  return lax._convert_element_type(d, dt, weak_type=True) if weak else d


def _euclid(a, b):
  """The gcd of non-negative ``a`` and ``b`` (one shape) by Euclid's loop,
  over their values flattened: compiled, a loop over at most 16 values of
  one axis runs in one dispatch (control/loop_dispatch.py), where the
  predicate's reduction over two axes kept a [3, 4] loop per trip (~80 us
  against ~11 us at 12 elements)."""
  shape = np.shape(a)
  if len(shape) < 2:
    return lax.while_loop(_euclid_running, _euclid_step, (a, b))[0]
  flat = (math.prod(shape),)
  a, b = lax.reshape(a, flat), lax.reshape(b, flat)
  return lax.reshape(lax.while_loop(_euclid_running, _euclid_step, (a, b))[0], shape)


def _euclid_running(pair):
  b = pair[1]
  return lax.reduce_or(lax.ne(b, const(b, 0)), tuple(range(np.ndim(b))))


def _euclid_step(pair):
  # (a, b) -> (b, a % b), the larger first. Where b is 0 the remainder is a
  # (lax.rem's x % 0 is x), so sorting (0, a) keeps the finished pair
  # (a, 0): four steps a trip where selecting by ``b != 0`` took thirteen.
  a, b = pair
  r = lax.rem(a, b)
  return lax.max(b, r), lax.min(b, r)


@util.jit
def lcm(x1, x2, /):
  """Elementwise least common multiple of integers (non-negative)."""
  x1, x2 = ensure_arraylike("lcm", x1, x2)
  x1, x2 = util.promote_dtypes(x1, x2)
  x1, x2 = absolute(x1), absolute(x2)
  if not is_kind(x1, "i", "u"):
    raise ValueError("Arguments to jax.numpy.lcm must be integers.")
  d = gcd(x1, x2)
  zero = lax.eq(d, const(d, 0))
  # d divides x2 exactly, so truncating division is floor division (one
  # step where floor_divide takes nine); d == 0 only where x2 == 0.
  quotient = lax.div(x2, _where(zero, full_like(d, 1), d))
  return _where(zero, const(d, 0), multiply(x1, quotient))


__all__ += ["gcd", "lcm"]
