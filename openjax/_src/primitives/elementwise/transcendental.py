"""Elementwise transcendental functions: exponentials and logarithms,
trigonometric and hyperbolic functions and their inverses, roots, the
logistic function, ``atan2`` and ``pow``. Their JVPs are JAX's (lax.py),
written with ``arithmetic``; ``accuracy`` is forwarded where JAX forwards it
(the interpreter is always exact)."""
from __future__ import annotations

import dataclasses
import enum

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules import elementwise_rule
from openjax._src.primitives.base.batch_util import defbroadcasting
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.base.structural import defjvp, defjvp2
from openjax._src.primitives.base.util import broadcasting_shape
from openjax._src.primitives.elementwise.arithmetic import (add, div, integer_pow, mul, neg,
                                                            reciprocal, replace_zero, square, sub)
from openjax._src.primitives.elementwise.elementwise_lowering import pow_rule
from openjax._src.primitives.elementwise.elementwise_rules import (
    FLOAT, HALF_ATAN2_MIN, INEXACT, NUM, check_nary, fl, half_via_float32, maybe_broadcast,
    naryop, one_like, scalar_like, unop, weak, zeros_like)
from openjax._src.primitives.elementwise.logic import eq, select
from openjax._src.primitives.elementwise.math_lowering import (
    atan2_rule, atan_rule, cbrt_rule, conj_symmetric, exp2_rule, exp_rule, expm1_rule, log1p_rule,
    keeping_small, log_rule, logistic_rule, rsqrt_rule, sinh_cosh_rule, sqrt_rule, tanh_rule,
    trig_rule)
from openjax._src.primitives.shape.shape import full_like

__all__ = [
    "AccuracyMode", "Tolerance", "exp", "exp_p", "exp2", "exp2_p", "log", "log_p", "log1p",
    "log1p_p", "expm1", "expm1_p", "tanh", "tanh_p", "logistic", "logistic_p", "sin", "sin_p",
    "cos", "cos_p", "tan", "tan_p", "asin", "asin_p", "acos", "acos_p", "atan", "atan_p", "sinh",
    "sinh_p", "cosh", "cosh_p", "asinh", "asinh_p", "acosh", "acosh_p", "atanh", "atanh_p",
    "sqrt", "sqrt_p", "rsqrt", "rsqrt_p", "cbrt", "cbrt_p", "atan2", "atan2_p", "pow", "pow_p",
]


class AccuracyMode(enum.Enum):
  """Requested accuracy of a transcendental op (the interpreter is always exact)."""
  HIGHEST = 1
  DEFAULT = 2


@dataclasses.dataclass(frozen=True)
class Tolerance:
  """A requested error bound for a transcendental op."""
  atol: float = 0.0
  rtol: float = 0.0
  ulps: int = 0


def _highest(accuracy) -> bool:
  return accuracy is AccuracyMode.HIGHEST


# ------------------------------------------------------------- exp, exp2, log
exp_p = unop("exp", fl(np.exp), INEXACT, accuracy=True, lower=exp_rule)


def exp(x, *, accuracy=None):
  """Elementwise exponential: e**x."""
  return exp_p.bind1(x, accuracy=accuracy)


defjvp2(exp_p, lambda g, ans, x, accuracy: mul(g, ans))

exp2_p = unop("exp2", fl(np.exp2), INEXACT, accuracy=True, lower=exp2_rule)


def exp2(x, *, accuracy=None):
  """Elementwise base-2 exponential: 2**x."""
  return exp2_p.bind1(x, accuracy=accuracy)


defjvp2(exp2_p, lambda g, ans, x, accuracy: mul(log(scalar_like(x, 2)), mul(g, ans)))

log_p = unop("log", fl(np.log), INEXACT, accuracy=True, lower=log_rule)


def log(x, *, accuracy=None):
  """Elementwise natural logarithm."""
  return log_p.bind1(x, accuracy=accuracy)


defjvp(log_p, lambda g, x, accuracy: div(g, x))


# -------------------------------------------------------------- log1p, expm1
log1p_p = unop("log1p", fl(np.log1p), INEXACT, accuracy=True,
               lower=keeping_small(log1p_rule, odd=False))


def log1p(x, *, accuracy=None):
  """Elementwise log(1 + x), accurate for small x."""
  return log1p_p.bind1(x, accuracy=accuracy)


defjvp(log1p_p, lambda g, x, accuracy: div(g, add(x, one_like(x))))

expm1_p = unop("expm1", fl(np.expm1), INEXACT, accuracy=True,
               lower=keeping_small(expm1_rule, odd=False))


def expm1(x, *, accuracy=None):
  """Elementwise e**x - 1, accurate for small x."""
  return expm1_p.bind1(x, accuracy=accuracy)


defjvp2(expm1_p, lambda g, ans, x, accuracy: mul(g, exp(x, accuracy=accuracy))
        if _highest(accuracy) else mul(g, add(ans, one_like(ans))))


# ------------------------------------------------------------ tanh, logistic
tanh_p = unop("tanh", fl(np.tanh), INEXACT, accuracy=True, lower=keeping_small(tanh_rule))


def tanh(x, *, accuracy=None):
  """Elementwise hyperbolic tangent."""
  return tanh_p.bind1(x, accuracy=accuracy)


defjvp2(tanh_p, lambda g, ans, x, accuracy: mul(g, mul(
    scalar_like(x, 4), mul(logistic(mul(scalar_like(x, 2), x), accuracy=accuracy),
                           logistic(mul(scalar_like(x, -2), x), accuracy=accuracy))))
        if _highest(accuracy) else mul(add(g, mul(g, ans)), sub(one_like(x), ans)))


def _logistic(x):
  # Both branches avoid overflow: exp only ever sees non-positive arguments.
  # One quotient, its numerator chosen (1 or e): the values of the two
  # quotients selected, in 7 NumPy calls where those took 9. float16 runs in
  # float32 and rounds once (NumPy's float16 loops convert every element at
  # every step: 1e6 elements ~30 ms, this ~6 ms).
  if x.dtype.kind == "c":
    return 1 / (1 + np.exp(-x))
  if x.dtype == np.float16:
    return _logistic(x.astype(np.float32)).astype(np.float16)
  e = np.exp(-np.abs(x))
  return np.where(x >= 0, 1, e) / (1 + e)


logistic_p = unop("logistic", fl(_logistic), INEXACT, accuracy=True, lower=logistic_rule)


def logistic(x, *, accuracy=None):
  """Elementwise logistic (sigmoid): 1 / (1 + e**-x)."""
  return logistic_p.bind1(x, accuracy=accuracy)


defjvp2(logistic_p, lambda g, ans, x, accuracy: mul(g, mul(ans, logistic(neg(x))))
        if _highest(accuracy) else mul(g, mul(ans, sub(one_like(ans), ans))))


# ---------------------------------------------------------------- sin, cos, tan
sin_p = unop("sin", fl(np.sin), INEXACT, accuracy=True, lower=keeping_small(trig_rule("sine")))


def sin(x, *, accuracy=None):
  """Elementwise sine."""
  return sin_p.bind1(x, accuracy=accuracy)


defjvp(sin_p, lambda g, x, accuracy: mul(g, cos(x, accuracy=accuracy)))

cos_p = unop("cos", fl(np.cos), INEXACT, accuracy=True, lower=trig_rule("cosine"))


def cos(x, *, accuracy=None):
  """Elementwise cosine."""
  return cos_p.bind1(x, accuracy=accuracy)


defjvp(cos_p, lambda g, x, accuracy: neg(mul(g, sin(x, accuracy=accuracy))))

tan_p = unop("tan", fl(np.tan), INEXACT, accuracy=True, lower=keeping_small(trig_rule("tan")))


def tan(x, *, accuracy=None):
  """Elementwise tangent."""
  return tan_p.bind1(x, accuracy=accuracy)


defjvp2(tan_p, lambda g, ans, x, accuracy: mul(g, add(scalar_like(x, 1), square(ans))))


# ------------------------------------------------------------ asin, acos, atan
asin_p = unop("asin", fl(np.arcsin), INEXACT, lower=keeping_small(conj_symmetric("chlo.asin")))


def asin(x):
  """Elementwise arc sine."""
  return asin_p.bind1(x)


defjvp(asin_p, lambda g, x: mul(g, rsqrt(sub(scalar_like(x, 1), square(x)))))

acos_p = unop("acos", fl(np.arccos), INEXACT, lower=conj_symmetric("chlo.acos"))


def acos(x):
  """Elementwise arc cosine."""
  return acos_p.bind1(x)


defjvp(acos_p, lambda g, x: mul(g, neg(rsqrt(sub(scalar_like(x, 1), square(x))))))

atan_p = unop("atan", fl(np.arctan), INEXACT, lower=keeping_small(atan_rule))


def atan(x):
  """Elementwise arc tangent."""
  return atan_p.bind1(x)


defjvp(atan_p, lambda g, x: div(g, add(scalar_like(x, 1), square(x))))


# --------------------------------------------------------------- sinh, cosh
sinh_p = unop("sinh", fl(np.sinh), INEXACT, lower=keeping_small(sinh_cosh_rule(True)))


def sinh(x):
  """Elementwise hyperbolic sine."""
  return sinh_p.bind1(x)


defjvp(sinh_p, lambda g, x: mul(g, cosh(x)))

cosh_p = unop("cosh", fl(np.cosh), INEXACT, lower=sinh_cosh_rule(False))


def cosh(x):
  """Elementwise hyperbolic cosine."""
  return cosh_p.bind1(x)


defjvp(cosh_p, lambda g, x: mul(g, sinh(x)))


# --------------------------------------------------------- asinh, acosh, atanh
asinh_p = unop("asinh", fl(np.arcsinh), INEXACT,
               lower=keeping_small(conj_symmetric("chlo.asinh")))


def asinh(x):
  """Elementwise inverse hyperbolic sine."""
  return asinh_p.bind1(x)


defjvp(asinh_p, lambda g, x: mul(g, rsqrt(add(square(x), one_like(x)))))

acosh_p = unop("acosh", fl(np.arccosh), INEXACT, lower=conj_symmetric("chlo.acosh"))


def acosh(x):
  """Elementwise inverse hyperbolic cosine."""
  return acosh_p.bind1(x)


defjvp(acosh_p, lambda g, x: mul(g, rsqrt(sub(square(x), one_like(x)))))

atanh_p = unop("atanh", fl(np.arctanh), INEXACT,
               lower=keeping_small(conj_symmetric("chlo.atanh")))


def atanh(x):
  """Elementwise inverse hyperbolic tangent."""
  return atanh_p.bind1(x)


defjvp(atanh_p, lambda g, x: mul(reciprocal(add(one_like(x), x)), div(g, sub(one_like(x), x))))


# --------------------------------------------------------- sqrt, rsqrt, cbrt
sqrt_p = unop("sqrt", fl(np.sqrt), INEXACT, accuracy=True, lower=sqrt_rule)


def sqrt(x, *, accuracy=None):
  """Elementwise square root."""
  return sqrt_p.bind1(x, accuracy=accuracy)


defjvp2(sqrt_p, lambda g, ans, x, accuracy: mul(g, div(scalar_like(x, 0.5), ans)))

rsqrt_p = unop("rsqrt", fl(lambda x: 1 / np.sqrt(x)), INEXACT, accuracy=True, lower=rsqrt_rule)


def rsqrt(x, *, accuracy=None):
  """Elementwise reciprocal square root: 1 / sqrt(x)."""
  return rsqrt_p.bind1(x, accuracy=accuracy)


defjvp2(rsqrt_p, lambda g, ans, x, accuracy: mul(g, mul(scalar_like(x, -0.5), div(ans, x))))

cbrt_p = unop("cbrt", fl(np.cbrt), FLOAT, accuracy=True, lower=cbrt_rule)


def cbrt(x, *, accuracy=None):
  """Elementwise cube root."""
  return cbrt_p.bind1(x, accuracy=accuracy)


defjvp2(cbrt_p, lambda g, ans, x, accuracy: mul(g, mul(scalar_like(x, 1 / 3),
                                                       integer_pow(ans, -2))))


# ---------------------------------------------------------------------- atan2
def _complex_atan2_formula(x, y):
  # JAX's complex extension: -i log((y + i x) / sqrt(x^2 + y^2)).
  return -1j * np.log((y + 1j * x) / np.sqrt(x * x + y * y))


# NumPy's complex64 sqrt, log and division are scalar C loops (1e6 elements:
# ~80 ms each); on the real parts it is ~20 real passes (~40 us at 1e3, 3x
# faster), slower than the three complex calls below this size.
_ATAN2_BY_PARTS_MIN_SIZE = 256


def _complex_atan2_by_parts(x, y):
  """The formula as arg(w) - i log|w| of w = q / sqrt(s), q = y + i x,
  s = x^2 + y^2: arg q - arg(s) / 2 brought back into (-pi, pi], and
  log|q| - log|s| / 2 from squared magnitudes (in float64 for complex64, so
  they neither overflow nor underflow; hypot for complex128). Elements with
  a non-finite result (s = 0: NaN; infinite operands), a zero part of q or
  an angle at the branch cut take the formula."""
  a, b, c, d = x.real, x.imag, y.real, y.imag
  ft = a.dtype.type
  # Zero imaginary parts (complex casts of reals): b and d drop out, si is
  # a zero (arg(s) = 0: the angle needs no turn back) and qr, qi are c, a
  # up to zero signs, whose elements take the formula below; the same
  # values in ~20 fewer passes (1e3: ~122 -> ~70 us).
  real = not (b != 0).any() and not (d != 0).any()
  if real:
    sr = a * a
    sr += c * c
    si, qr, qi = None, c, a
    ang = np.arctan2(qi, qr)
  else:
    sr = a * a
    sr -= b * b
    sr += c * c
    sr -= d * d
    si = a * b
    si += c * d
    si += si
    qr, qi = c - b, d + a
    ang = np.arctan2(qi, qr)
    ang -= ft(0.5) * np.arctan2(si, sr)
    ang -= ft(2 * np.pi) * (ang > ft(np.pi))
    ang += ft(2 * np.pi) * (ang <= ft(-np.pi))
  if ft is np.float32:
    s2 = np.square(sr, dtype=np.float64)
    if si is not None:
      s2 += np.square(si, dtype=np.float64)
    q2 = np.square(qr, dtype=np.float64)
    q2 += np.square(qi, dtype=np.float64)
    mag = np.log(s2 / (q2 * q2))
    mag *= 0.25
  else:
    mag = np.log(np.abs(sr) if si is None else np.hypot(sr, si))
    mag *= 0.5
    mag -= np.log(np.hypot(qr, qi))
  out = np.empty(ang.shape, x.dtype)
  out.real = ang
  out.imag = mag
  # A zero part of q: on the branch cut the sign of a zero decides +-pi,
  # and the formula's zeros come from its own complex products. An angle
  # within rounding of +-pi: the two halves' rounding decides its side of
  # the cut, the formula's w its own.
  bad = ~np.isfinite(out)
  bad |= qr == 0
  bad |= qi == 0
  bad |= np.abs(ang) > ft(np.pi * (1 - 16 * np.finfo(ft).eps))
  if bad.any():
    out[bad] = _complex_atan2_formula(x[bad], y[bad])
  return out


def _atan2(x, y):
  if x.dtype.kind == "c":
    if x.size >= _ATAN2_BY_PARTS_MIN_SIZE and x.shape == y.shape:
      return _complex_atan2_by_parts(x, y)
    return _complex_atan2_formula(x, y)
  return np.arctan2(x, y)


_atan2_impl = fl(_atan2)
atan2_p = naryop("atan2", _atan2_impl, INEXACT, lower=atan2_rule)


def atan2(x, y):
  """Elementwise arc tangent of x / y, in the quadrant of (y, x)."""
  return atan2_p.bind1(x, y)


atan2_p.def_eval_kernel(half_via_float32(
    np.arctan2, HALF_ATAN2_MIN,
    lambda dt: _atan2_impl if dt in dtypes.custom_float_dtypes else _atan2))


defjvp(atan2_p, lambda g, x, y: mul(g, div(y, add(square(x), square(y)))),
       lambda g, x, y: mul(g, div(neg(x), add(square(x), square(y)))))


# ------------------------------------------------------------------------ pow
pow_p = Primitive("pow")


def pow(x, y):  # noqa: A001 - JAX's name
  """Elementwise power x**y; ``x`` inexact, ``y`` integer or of ``x``'s dtype."""
  return pow_p.bind1(x, y)


@pow_p.def_impl
def _pow_impl(x, y):
  with np.errstate(all="ignore"):
    if x.dtype in dtypes.custom_float_dtypes:
      return [np.power(x.astype(np.float32), y).astype(x.dtype)]
    return [np.asarray(np.power(x, y)).astype(x.dtype, copy=False)]


# jnp.ldexp's formulation (JAX's) raises 2 to integral float powers; NumPy's
# pow takes a slow path where such results overflow or are subnormal (1e6
# float32: 2 ms in range, 90 ms overflowing, 186 ms subnormal) where
# np.ldexp does not, and 2**k is exact both ways (the same bits: tested).
# The ldexp path costs ~6 us more than pow's fast one: from 16384 elements it
# wins on any exponents; from 256, after a look at their range (~3 us).
_LDEXP_MIN_SIZE = 256
_LDEXP_ALWAYS_SIZE = 16384


def _power_real(a, b):
  """np.power of real floats of one dtype; a power of the constant 2 to
  integral exponents as np.ldexp."""
  n = b.size
  if (n >= _LDEXP_MIN_SIZE and (a.ndim == 0 or (a.shape == b.shape and not any(a.strides)))
      and a[(0,) * a.ndim] == 2):
    info = np.finfo(b.dtype)
    if n < _LDEXP_ALWAYS_SIZE and b.min() >= info.minexp and b.max() < info.maxexp:
      return np.power(a, b)   # normal results: pow's fast path (NaN fails the test)
    k = np.rint(b)
    if (k == b).all():   # NaN is not integral: pow's path
      # +-2048 is past every float's exponent range (inf stays inf or 0).
      return np.ldexp(b.dtype.type(1), np.clip(k, -2048, 2048, out=k).astype(np.int32))
  return np.power(a, b)


@pow_p.def_eval_kernel
def _pow_eval_kernel(x, y):
  # The impl's NumPy call without its wrapper (jnp.power, float_power and
  # ldexp's 2**e: ~4 -> ~1 us at 10 elements); an integer exponent promotes
  # to float64 in NumPy and rounds back, as in the impl.
  dt = x.dtype
  if dt in dtypes.custom_float_dtypes:
    if y.dtype != dt:
      return None

    def power_via_float32(a, b):   # the impl's float32 computation, rounded once
      return _power_real(a.astype(np.float32), b.astype(np.float32)).astype(dt)
    return power_via_float32
  if dt == y.dtype:
    return _power_real if dtypes.kind(dt) == "f" else np.power

  small = dt in (np.float16, np.float32)

  def power_rounded(a, b):
    if small and b.size <= _FEW_EXPONENTS and a.size >= _FEW_EXPONENTS:
      out = _small_int_powers(a, b, dt)
      if out is not None:
        return out
    return np.power(a, b).astype(dt, copy=False)
  return power_rounded


# A float16/32 base to a few integer exponents (jnp.vander's pow f32, i32:
# the exponents a row, the base a column) as float64 products: x**2 is exact
# there and x**3, x**4 one correctly rounded product each, so the float64
# values are those of a correctly rounded float64 pow, rounded once to the
# dtype as before (vander of 1e6 floats, N=4: ~165 -> ~8 ms; np.power
# promotes to float64's pow, ~30 ns an element).
_FEW_EXPONENTS = 16
_MAX_PRODUCT_EXPONENT = 4


def _small_int_powers(a, b, dt):
  """``np.power(a, b).astype(dt)`` for exponents ``b`` in [0, 4] that vary
  only along axes where ``a`` has size 1; None for any other case."""
  ks = b.ravel().tolist()
  if min(ks) < 0 or max(ks) > _MAX_PRODUCT_EXPONENT:
    return None
  nd = max(a.ndim, b.ndim)
  a = a.reshape((1,) * (nd - a.ndim) + a.shape)
  b = b.reshape((1,) * (nd - b.ndim) + b.shape)
  varying = [d for d in range(nd) if b.shape[d] > 1]
  if any(a.shape[d] != 1 for d in varying):
    return None
  shape = tuple(max(p, q) for p, q in zip(a.shape, b.shape))
  a64 = a.astype(np.float64)
  sq = a64 * a64 if max(ks) > 1 else None
  tables = {}

  def table(k):
    if k not in tables:
      tables[k] = (np.ones(a.shape, dt) if k == 0 else a if k == 1 else
                   (sq if k == 2 else sq * a64 if k == 3 else sq * sq).astype(dt))
    return tables[k]
  out = np.empty(shape, dt)
  for pos in np.ndindex(*[b.shape[d] for d in varying]):
    where = [slice(None)] * nd
    at = [0] * nd
    for d, i in zip(varying, pos):
      where[d], at[d] = slice(i, i + 1), i
    out[tuple(where)] = table(int(b[tuple(at)]))
  return out


pow_p.def_sharding_rule(elementwise_rule("pow"))


@pow_p.def_abstract_eval
def _pow_abstract_eval(x, y):
  check_nary("pow", (x, y), (INEXACT, NUM), require_same=False)
  if not (dtypes.issubdtype(y.dtype, np.integer) or x.dtype == y.dtype):
    raise TypeError(
        "the first argument to pow must have an inexact dtype (float or complex), and "
        "the second argument must have an inexact or integer dtype, and two inexact "
        f"dtypes must match, but got {x.dtype.name} and {y.dtype.name} respectively.")
  return [ShapedArray(broadcasting_shape("pow", (x, y)), x.dtype, weak(x, y))]


def _pow_jvp_lhs(g, ans, x, y):
  y_is_int = dtypes.issubdtype(get_aval(y).dtype, np.integer)
  dt = get_aval(x).dtype                # both operands in x's dtype, strongly typed
  x, y = convert_element_type(x, dt), convert_element_type(y, dt)
  if y_is_int:
    # d/dx x**n = n x**(n-1), exactly 0 for n = 0 (even at x = 0).
    shape = get_aval(ans).shape
    x, y = maybe_broadcast(shape, x), maybe_broadcast(shape, y)
    jac = select(eq(y, scalar_like(y, 0)), zeros_like(y),
                 mul(replace_zero(y), pow(x, sub(y, full_like(y, 1)))))
  else:
    jac = mul(y, pow(x, sub(y, full_like(y, 1))))
  return mul(g, jac)


def _pow_jvp_rhs(g, ans, x, y):
  # d/dy x**y = log(x) x**y, taken as 0 at x = 0 (as JAX does).
  return convert_element_type(mul(g, mul(log(replace_zero(x)), ans)), get_aval(y).dtype)


defjvp2(pow_p, _pow_jvp_lhs, _pow_jvp_rhs)
defbroadcasting(pow_p)
pow_p.def_lower(pow_rule)
