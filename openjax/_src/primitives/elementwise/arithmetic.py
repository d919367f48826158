"""Elementwise primitives: unary math, binary arithmetic, comparisons, logic
and bitwise ops, casts, select and clamp. The unary and binary families are
uniform, so each of their primitives is one table row; rules that differ get
their own block below the tables.

Wrappers follow ``jax.lax``: operands must already have equal dtypes (Python
scalars are weakly typed and adopt nothing here: ``lax.add(f32, 2)`` is a
TypeError, ``lax.add(f32, 2.0)`` is fine); rank-0 operands broadcast. A result
is weakly typed exactly when every operand is.
"""
from __future__ import annotations

import builtins
import dataclasses
import enum

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.primitives.elementwise import elementwise_lowering as L
from openjax._src.primitives.elementwise import math_lowering as M
from openjax._src.primitives.elementwise.elementwise_rules import (
    ABS, ANY, COMPLEX, COMPLEX_PARTS, CONJ, FLOAT, INEXACT, INT, INT_OR_BOOL, INT_OR_FLOAT, NUM,
    ORDERED, WITH_ACCURACY, bool_dtype, check_same_dtypes, check_unary, complex_dtype, fl, naryop,
    real_dtype, unop, weak)
from openjax._src.primitives.base.util import broadcasting_shape
from openjax._src.primitives.base.ad_util import Zero, defjvp_zero, is_undefined_primal
from openjax._src.primitives.base.structural import defjvp, defjvp2, deflinear, moveaxis
from openjax._src.primitives.base.batch_util import (axis_size, bdim_at_front, defbroadcasting,
                                                     defvectorized)
from openjax._src.primitives.base.convert import (  # noqa: F401 - part of lax
    _convert_element_type, convert_element_type, convert_element_type_p, convert_numpy)
from openjax._src.primitives.shape.shape import broadcast_in_dim, full_like, reduce_sum, reshape

__all__ = []  # filled by _export below


def _export(*names):
  __all__.extend(names)


# ------------------------------------------------ helpers of the rules below
_SCALAR_TYPE = {"f": float, "c": complex, "i": int, "u": int, "b": bool}


def _const(x, val):
  """``val`` as a constant of ``x``'s dtype: a weak Python scalar beside a weak
  scalar ``x`` (as JAX's), else a 0-d NumPy array."""
  aval = get_aval(x)
  if aval.weak_type and aval.ndim == 0:
    py = _SCALAR_TYPE[dtypes.kind(aval.dtype)](val)
    if dtypes.dtype(py) == aval.dtype:
      return py
  return np.array(val, aval.dtype)


def _zeros(x):
  return full_like(x, 0)


def _replace_zero(x):
  return select(eq(x, _const(x, 0)), full_like(x, 1), x)


def _shape(x) -> tuple:
  return get_aval(x).shape


def _maybe_broadcast(shape, x):
  """``x`` broadcast to ``shape`` (from rank 0 or size-1 dims of equal rank)."""
  xs = _shape(x)
  if xs == tuple(shape):
    return x
  dims = () if not xs else tuple(range(len(shape)))
  return broadcast_in_dim(x, shape, dims)


def _unbroadcast(aval, x):
  """Sum ``x`` back to ``aval``'s shape: the transpose of lax's implicit
  broadcasting (rank-0 operands, equal-rank size-1 dims)."""
  xs = _shape(x)
  if xs == aval.shape:
    return x
  if not aval.shape:
    return reduce_sum(x, tuple(range(len(xs))))
  dims = tuple(i for i, (a, b) in enumerate(zip(xs, aval.shape)) if a != b)
  return reshape(reduce_sum(x, dims), aval.shape)


def _sign(x):
  if x.dtype.kind == "u":
    return (x != 0).astype(x.dtype)
  return np.sign(x)


def _unsigned(x):
  # Same-width signed -> unsigned astype keeps the bits (two's complement).
  return np.asarray(x).astype(np.dtype(f"u{x.dtype.itemsize}"))


def _population_count(x):
  # NumPy counts the bits of |x| for signed ints; XLA counts the raw bits.
  return np.bitwise_count(_unsigned(x))


def _clz(x):
  bits = x.dtype.itemsize * 8
  v = _unsigned(x).astype(np.uint64)
  length = np.zeros(x.shape, np.int64)   # bit length, by binary search
  for shift in (32, 16, 8, 4, 2, 1):
    big = v >= (np.uint64(1) << np.uint64(shift))
    length = np.where(big, length + shift, length)
    v = np.where(big, v >> np.uint64(shift), v)
  length = np.where(v > 0, length + 1, length)
  return bits - length


def _not(x):
  return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


def _logistic(x):
  # Both branches avoid overflow: exp only ever sees non-positive arguments.
  if x.dtype.kind == "c":
    return 1 / (1 + np.exp(-x))
  e = np.exp(-np.abs(x))
  return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


def _round(x, *, rounding_method):
  if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
    return np.round(x)
  t = np.trunc(x)                  # x - trunc(x) is exact, so ties are found exactly
  return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def _integer_pow(x, *, y):
  if y == 0:
    return np.ones_like(x)
  acc, base, n = None, x, -y if y < 0 else y
  while n:                          # square-and-multiply, like XLA's expansion
    if n & 1:
      acc = base if acc is None else acc * base
    n >>= 1
    if n:
      base = base * base
  return np.asarray(1, x.dtype) / acc if y < 0 else acc


neg_p = unop("neg", np.negative, NUM, kind="linear", lower=L.negate)
sign_p = unop("sign", _sign, NUM, lower=L.sign_rule)
floor_p = unop("floor", fl(np.floor), FLOAT, lower=L.unary("stablehlo.floor"))
ceil_p = unop("ceil", fl(np.ceil), FLOAT, lower=L.unary("stablehlo.ceil"))
round_p = unop("round", fl(_round), FLOAT, lower=L.round_rule)
is_finite_p = unop("is_finite", np.isfinite, FLOAT, result_dtype=bool_dtype,
                    kind="nondifferentiable", lower=L.unary("stablehlo.is_finite"))
exp_p = unop("exp", fl(np.exp), INEXACT, accuracy=True, lower=M.exp_rule)
exp2_p = unop("exp2", fl(np.exp2), INEXACT, accuracy=True, lower=M.exp2_rule)
log_p = unop("log", fl(np.log), INEXACT, accuracy=True, lower=M.log_rule)
log1p_p = unop("log1p", fl(np.log1p), INEXACT, accuracy=True,
               lower=M.log1p_rule)
expm1_p = unop("expm1", fl(np.expm1), INEXACT, accuracy=True,
               lower=M.expm1_rule)
tanh_p = unop("tanh", fl(np.tanh), INEXACT, accuracy=True, lower=M.tanh_rule)
logistic_p = unop("logistic", fl(_logistic), INEXACT, accuracy=True, lower=M.logistic_rule)
sin_p = unop("sin", fl(np.sin), INEXACT, accuracy=True, lower=M.trig_rule("sine"))
cos_p = unop("cos", fl(np.cos), INEXACT, accuracy=True, lower=M.trig_rule("cosine"))
tan_p = unop("tan", fl(np.tan), INEXACT, accuracy=True, lower=M.trig_rule("tan"))
asin_p = unop("asin", fl(np.arcsin), INEXACT, lower=M.conj_symmetric("chlo.asin"))
acos_p = unop("acos", fl(np.arccos), INEXACT, lower=M.conj_symmetric("chlo.acos"))
atan_p = unop("atan", fl(np.arctan), INEXACT, lower=M.atan_rule)
sinh_p = unop("sinh", fl(np.sinh), INEXACT, lower=M.sinh_cosh_rule(True))
cosh_p = unop("cosh", fl(np.cosh), INEXACT, lower=M.sinh_cosh_rule(False))
asinh_p = unop("asinh", fl(np.arcsinh), INEXACT, lower=M.conj_symmetric("chlo.asinh"))
acosh_p = unop("acosh", fl(np.arccosh), INEXACT, lower=M.conj_symmetric("chlo.acosh"))
atanh_p = unop("atanh", fl(np.arctanh), INEXACT, lower=M.conj_symmetric("chlo.atanh"))
sqrt_p = unop("sqrt", fl(np.sqrt), INEXACT, accuracy=True, lower=M.sqrt_rule)
rsqrt_p = unop("rsqrt", fl(lambda x: 1 / np.sqrt(x)), INEXACT, accuracy=True,
               lower=M.rsqrt_rule)
cbrt_p = unop("cbrt", fl(np.cbrt), FLOAT, accuracy=True, lower=M.cbrt_rule)
abs_p = unop("abs", np.abs, ABS, result_dtype=real_dtype, lower=L.abs_rule)
real_p = unop("real", np.real, COMPLEX, result_dtype=real_dtype, kind="linear",
              lower=L.unary("stablehlo.real"))
imag_p = unop("imag", np.imag, COMPLEX, result_dtype=real_dtype, kind="linear",
              lower=L.unary("stablehlo.imag"))
conj_p = unop("conj", lambda x, input_dtype: np.conj(x), CONJ, result_dtype=complex_dtype,
               kind="linear", lower=L.conj_rule)
not_p = unop("not", _not, INT_OR_BOOL, kind="nondifferentiable", lower=L.not_rule)
population_count_p = unop("population_count", _population_count, INT,
                           kind="nondifferentiable", lower=L.unary("stablehlo.popcnt"))
clz_p = unop("clz", _clz, INT, kind="nondifferentiable",
             lower=L.unary("stablehlo.count_leading_zeros"))
square_p = unop("square", np.square, NUM, lower=L.square_rule)
integer_pow_p = unop("integer_pow", fl(_integer_pow), NUM, lower=L.integer_pow_rule)


@integer_pow_p.def_abstract_eval
def _integer_pow_abstract_eval(x, *, y):
  check_unary("integer_pow", x, NUM)
  if y < 0 and dtypes.issubdtype(x.dtype, np.integer):
    raise TypeError(f"Integers cannot be raised to negative powers, got "
                    f"integer_pow({x.str_short(short_dtypes=False)}, {y})")
  return [ShapedArray(x.shape, x.dtype, x.weak_type)]


class RoundingMethod(enum.IntEnum):
  """How ``lax.round`` breaks ties: away from zero (0) or to nearest even (1)."""
  AWAY_FROM_ZERO = 0
  TO_NEAREST_EVEN = 1


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


def _make_unary(p: Primitive, name: str, doc: str, accuracy: bool):
  if accuracy:
    def wrapper(x, *, accuracy=None):
      return p.bind1(x, accuracy=accuracy)
  else:
    def wrapper(x):
      return p.bind1(x)
  wrapper.__name__ = wrapper.__qualname__ = name
  wrapper.__doc__ = doc
  return wrapper


# primitive -> (wrapper name, docstring); accuracy-carrying ones are marked.
_UNARY = {
    neg_p: ("neg", "Elementwise negation: -x."),
    sign_p: ("sign", "Elementwise sign: -1, 0 or 1 (x / |x| for complex)."),
    floor_p: ("floor", "Elementwise floor."),
    ceil_p: ("ceil", "Elementwise ceiling."),
    is_finite_p: ("is_finite", "Elementwise test for neither infinite nor NaN."),
    exp_p: ("exp", "Elementwise exponential: e**x."),
    exp2_p: ("exp2", "Elementwise base-2 exponential: 2**x."),
    log_p: ("log", "Elementwise natural logarithm."),
    log1p_p: ("log1p", "Elementwise log(1 + x), accurate for small x."),
    expm1_p: ("expm1", "Elementwise e**x - 1, accurate for small x."),
    tanh_p: ("tanh", "Elementwise hyperbolic tangent."),
    logistic_p: ("logistic", "Elementwise logistic (sigmoid): 1 / (1 + e**-x)."),
    sin_p: ("sin", "Elementwise sine."),
    cos_p: ("cos", "Elementwise cosine."),
    tan_p: ("tan", "Elementwise tangent."),
    asin_p: ("asin", "Elementwise arc sine."),
    acos_p: ("acos", "Elementwise arc cosine."),
    atan_p: ("atan", "Elementwise arc tangent."),
    sinh_p: ("sinh", "Elementwise hyperbolic sine."),
    cosh_p: ("cosh", "Elementwise hyperbolic cosine."),
    asinh_p: ("asinh", "Elementwise inverse hyperbolic sine."),
    acosh_p: ("acosh", "Elementwise inverse hyperbolic cosine."),
    atanh_p: ("atanh", "Elementwise inverse hyperbolic tangent."),
    sqrt_p: ("sqrt", "Elementwise square root."),
    rsqrt_p: ("rsqrt", "Elementwise reciprocal square root: 1 / sqrt(x)."),
    cbrt_p: ("cbrt", "Elementwise cube root."),
    abs_p: ("abs", "Elementwise absolute value (the magnitude for complex)."),
    real_p: ("real", "Elementwise real part of a complex array."),
    imag_p: ("imag", "Elementwise imaginary part of a complex array."),
    not_p: ("bitwise_not", "Elementwise NOT (logical for bool, bitwise for integers)."),
    population_count_p: ("population_count", "Elementwise count of set bits."),
    clz_p: ("clz", "Elementwise count of leading zero bits."),
    square_p: ("square", "Elementwise square: x * x."),
}

for _p, (_name, _doc) in _UNARY.items():
  globals()[_name] = _make_unary(_p, _name, _doc, _p in WITH_ACCURACY)
  globals()[_p.name + "_p"] = _p
  _export(_name, _p.name + "_p")


def conj(x):
  """Elementwise complex conjugate (a real input becomes complex)."""
  return conj_p.bind1(x, input_dtype=np.dtype(dtypes.dtype(x)))


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 - JAX's name
  """Elementwise round to integral values; ties go away from zero unless
  ``rounding_method`` is ``RoundingMethod.TO_NEAREST_EVEN``."""
  return round_p.bind1(x, rounding_method=RoundingMethod(rounding_method))


def integer_pow(x, y: int):
  """Elementwise power with a static integer exponent: x**y."""
  return integer_pow_p.bind1(x, y=int(y))


def reciprocal(x):
  """Elementwise reciprocal: 1 / x."""
  return integer_pow(x, -1)


_export("conj", "conj_p", "round", "round_p", "integer_pow", "integer_pow_p", "reciprocal",
        "RoundingMethod", "AccuracyMode", "Tolerance")


# ------------------------------------------------ rules of the unary table
# JVPs are JAX's (lax.py); ``accuracy`` is forwarded where JAX forwards it.
def _one(x):
  return full_like(x, 1, shape=())     # a rank-0 literal, weak when x is


def _highest(accuracy) -> bool:
  return accuracy is AccuracyMode.HIGHEST


defjvp_zero(sign_p)
defjvp_zero(floor_p)
defjvp_zero(ceil_p)
defjvp_zero(round_p)
deflinear(neg_p, lambda ct, x: [neg(ct)])
defjvp2(exp_p, lambda g, ans, x, accuracy: mul(g, ans))
defjvp2(exp2_p, lambda g, ans, x, accuracy: mul(log(_const(x, 2)), mul(g, ans)))
defjvp(log_p, lambda g, x, accuracy: div(g, x))
defjvp2(expm1_p, lambda g, ans, x, accuracy: mul(g, exp(x, accuracy=accuracy))
        if _highest(accuracy) else mul(g, add(ans, _one(ans))))
defjvp(log1p_p, lambda g, x, accuracy: div(g, add(x, _one(x))))
defjvp2(tanh_p, lambda g, ans, x, accuracy: mul(g, mul(
    _const(x, 4), mul(logistic(mul(_const(x, 2), x), accuracy=accuracy),
                      logistic(mul(_const(x, -2), x), accuracy=accuracy))))
        if _highest(accuracy) else mul(add(g, mul(g, ans)), sub(_one(x), ans)))
defjvp2(logistic_p, lambda g, ans, x, accuracy: mul(g, mul(ans, logistic(neg(x))))
        if _highest(accuracy) else mul(g, mul(ans, sub(_one(ans), ans))))
defjvp(sin_p, lambda g, x, accuracy: mul(g, cos(x, accuracy=accuracy)))
defjvp(cos_p, lambda g, x, accuracy: neg(mul(g, sin(x, accuracy=accuracy))))
defjvp2(tan_p, lambda g, ans, x, accuracy: mul(g, add(_const(x, 1), square(ans))))
defjvp(asin_p, lambda g, x: mul(g, rsqrt(sub(_const(x, 1), square(x)))))
defjvp(acos_p, lambda g, x: mul(g, neg(rsqrt(sub(_const(x, 1), square(x))))))
defjvp(atan_p, lambda g, x: div(g, add(_const(x, 1), square(x))))
defjvp(sinh_p, lambda g, x: mul(g, cosh(x)))
defjvp(cosh_p, lambda g, x: mul(g, sinh(x)))
defjvp(asinh_p, lambda g, x: mul(g, rsqrt(add(square(x), _one(x)))))
defjvp(acosh_p, lambda g, x: mul(g, rsqrt(sub(square(x), _one(x)))))
defjvp(atanh_p, lambda g, x: mul(reciprocal(add(_one(x), x)), div(g, sub(_one(x), x))))
defjvp2(sqrt_p, lambda g, ans, x, accuracy: mul(g, div(_const(x, 0.5), ans)))
defjvp2(rsqrt_p, lambda g, ans, x, accuracy: mul(g, mul(_const(x, -0.5), div(ans, x))))
defjvp2(cbrt_p, lambda g, ans, x, accuracy: mul(g, mul(_const(x, 1 / 3), integer_pow(ans, -2))))
defjvp2(square_p, lambda g, ans, x: mul(g, mul(_const(x, 2), x)))


def _abs_jvp(g, ans, x):
  if dtypes.kind(get_aval(x).dtype) == "c":   # Re(g conj(x) / |x|), 0 at x = 0
    x_dtype = get_aval(x).dtype
    return real(mul(g, div(conj(x), _replace_zero(convert_element_type(ans, x_dtype)))))
  return select(ge(x, full_like(x, 0, shape=())), g, neg(g))


defjvp2(abs_p, _abs_jvp)


def _integer_pow_jvp(g, x, *, y):
  if y == 0:
    return _zeros(g)
  if y == 1:
    return g
  if y == 2:
    return mul(g, mul(_const(x, 2), x))
  return mul(g, mul(_const(x, y), integer_pow(x, y - 1)))


defjvp(integer_pow_p, _integer_pow_jvp)
# real, imag, conj and complex (below) are linear; real's transpose puts the
# cotangent in the real part, imag's in the (negated) imaginary part.
deflinear(real_p, lambda ct, x: [complex(ct, np.zeros((), get_aval(ct).dtype))])
deflinear(imag_p, lambda ct, x: [complex(np.zeros((), get_aval(ct).dtype), neg(ct))])
deflinear(conj_p, lambda ct, x, *, input_dtype: [
    conj(ct) if dtypes.kind(np.dtype(input_dtype)) == "c" else real(ct)])
defvectorized(*_UNARY, conj_p, round_p, integer_pow_p)


# --------------------------------------------------------------- binary table
def _div(x, y):
  if x.dtype.kind not in "iu":
    return np.true_divide(x, y)
  bad = y == 0
  if x.dtype.kind == "i":   # INT_MIN / -1 overflows: XLA gives INT_MIN (= x / 1)
    bad = bad | ((x == np.iinfo(x.dtype).min) & (y == -1))
  safe = np.where(bad, np.ones_like(y), y)
  # C division truncates toward zero: x - fmod(x, y) is an exact multiple of y.
  q = (x - np.fmod(x, safe)) // safe
  # XLA defines x / 0 as -1 (all bits set) for integers.
  return np.where(y == 0, np.array(-1).astype(x.dtype), q)


def _rem(x, y):
  if x.dtype.kind not in "iu":
    return np.fmod(x, y)
  safe = np.where(y == 0, np.ones_like(y), y)
  return np.where(y == 0, x, np.fmod(x, safe))   # XLA: x % 0 == x


def _shift(direction: str):
  def impl(x, y):
    bits = x.dtype.itemsize * 8
    # XLA reads the shift amount as unsigned: negative amounts are too big.
    big = _unsigned(y) >= bits
    amount = np.where(big, 0, y).astype(x.dtype)
    if direction == "left":
      return np.where(big, 0, np.left_shift(x, amount)).astype(x.dtype)
    if direction == "right_logical":
      out = np.right_shift(_unsigned(x), _unsigned(amount)).astype(x.dtype)
      return np.where(big, 0, out).astype(x.dtype)
    fill = np.where(x < 0, -1, 0) if x.dtype.kind == "i" else 0
    return np.where(big, fill, np.right_shift(x, amount)).astype(x.dtype)
  return impl


def _atan2(x, y):
  if x.dtype.kind == "c":   # -i log((y + i x) / |y + i x|), the complex extension
    z = y + 1j * x
    return -1j * np.log(z / np.sqrt(z * z.conj()))
  return np.arctan2(x, y)


def _mulhi(x, y):
  bits = x.dtype.itemsize * 8
  if bits < 64:
    wide = np.int64 if x.dtype.kind == "i" else np.uint64
    return (x.astype(wide) * y.astype(wide)) >> bits
  # 64-bit: schoolbook product of 32-bit halves, exact in Python ints.
  prod = np.frompyfunc(lambda a, b: (int(a) * int(b)) >> 64, 2, 1)(x, y)
  return prod.astype(x.dtype)


add_p = naryop("add", np.add, NUM, kind="linear", lower=L.binary("stablehlo.add"))
sub_p = naryop("sub", np.subtract, NUM, kind="linear", lower=L.binary("stablehlo.subtract"))
mul_p = naryop("mul", np.multiply, NUM, out_dtype_param=True, lower=L.mul_rule)
div_p = naryop("div", _div, NUM, lower=L.div_rule)
rem_p = naryop("rem", _rem, INT_OR_FLOAT, lower=L.rem_rule)
max_p = naryop("max", np.maximum, ANY, lower=L.minmax_rule(True))
min_p = naryop("min", np.minimum, ANY, lower=L.minmax_rule(False))
atan2_p = naryop("atan2", fl(_atan2), INEXACT, lower=M.atan2_rule)
nextafter_p = naryop("nextafter", np.nextafter, FLOAT, kind="nondifferentiable",
                     lower=L.nextafter_rule)
mulhi_p = naryop("mulhi", _mulhi, INT, kind="nondifferentiable", lower=L.mulhi_rule)
and_p = naryop("and", np.bitwise_and, INT_OR_BOOL, kind="nondifferentiable",
               lower=L.binary("stablehlo.and"))
or_p = naryop("or", np.bitwise_or, INT_OR_BOOL, kind="nondifferentiable",
              lower=L.binary("stablehlo.or"))
xor_p = naryop("xor", np.bitwise_xor, INT_OR_BOOL, kind="nondifferentiable",
               lower=L.binary("stablehlo.xor"))
shift_left_p = naryop("shift_left", _shift("left"), INT, kind="nondifferentiable",
                      lower=L.shift_rule("left"))
shift_right_arithmetic_p = naryop("shift_right_arithmetic", _shift("right_arithmetic"), INT,
                                  kind="nondifferentiable", lower=L.shift_rule("arithmetic"))
shift_right_logical_p = naryop("shift_right_logical", _shift("right_logical"), INT,
                               kind="nondifferentiable", lower=L.shift_rule("logical"))
eq_p = naryop("eq", np.equal, ANY, result_dtype=bool_dtype, kind="nondifferentiable",
              lower=L.compare_rule("EQ"))
ne_p = naryop("ne", np.not_equal, ANY, result_dtype=bool_dtype, kind="nondifferentiable",
              lower=L.compare_rule("NE"))
lt_p = naryop("lt", np.less, ORDERED, result_dtype=bool_dtype, kind="nondifferentiable",
              lower=L.compare_rule("LT"))
le_p = naryop("le", np.less_equal, ORDERED, result_dtype=bool_dtype, kind="nondifferentiable",
              lower=L.compare_rule("LE"))
gt_p = naryop("gt", np.greater, ORDERED, result_dtype=bool_dtype, kind="nondifferentiable",
              lower=L.compare_rule("GT"))
ge_p = naryop("ge", np.greater_equal, ORDERED, result_dtype=bool_dtype,
              kind="nondifferentiable", lower=L.compare_rule("GE"))
def _complex(x, y):
  # By parts: x + 1j * y would turn complex(1, nan) into nan + nanj.
  x, y = np.broadcast_arrays(x, y)
  out = np.empty(x.shape, complex_dtype(x.dtype))
  out.real, out.imag = x, y
  return out


complex_p = naryop("complex", _complex, COMPLEX_PARTS, result_dtype=complex_dtype, kind="linear",
                   lower=L.complex_rule)

_BINARY = {
    add_p: ("add", "Elementwise addition: x + y."),
    sub_p: ("sub", "Elementwise subtraction: x - y."),
    div_p: ("div", "Elementwise division: x / y (integer division rounds toward zero)."),
    rem_p: ("rem", "Elementwise remainder with the sign of the dividend (C's fmod)."),
    max_p: ("max", "Elementwise maximum (NaN propagates)."),
    min_p: ("min", "Elementwise minimum (NaN propagates)."),
    atan2_p: ("atan2", "Elementwise arc tangent of x / y, in the quadrant of (y, x)."),
    nextafter_p: ("nextafter", "The next representable value after x in the direction of y."),
    mulhi_p: ("mulhi", "The high half of the double-width integer product x * y."),
    and_p: ("bitwise_and", "Elementwise AND (logical for bool, bitwise for integers)."),
    or_p: ("bitwise_or", "Elementwise OR (logical for bool, bitwise for integers)."),
    xor_p: ("bitwise_xor", "Elementwise XOR (logical for bool, bitwise for integers)."),
    shift_left_p: ("shift_left", "Elementwise left shift (0 when y >= the bit width)."),
    shift_right_arithmetic_p: ("shift_right_arithmetic",
                               "Elementwise sign-filling right shift."),
    shift_right_logical_p: ("shift_right_logical", "Elementwise zero-filling right shift."),
    eq_p: ("eq", "Elementwise equals: x == y."),
    ne_p: ("ne", "Elementwise not-equals: x != y."),
    lt_p: ("lt", "Elementwise less-than: x < y."),
    le_p: ("le", "Elementwise less-than-or-equals: x <= y."),
    gt_p: ("gt", "Elementwise greater-than: x > y."),
    ge_p: ("ge", "Elementwise greater-than-or-equals: x >= y."),
    complex_p: ("complex", "Elementwise complex number x + i*y from real parts."),
}


def _make_binary(p: Primitive, name: str, doc: str):
  def wrapper(x, y):
    return p.bind1(x, y)
  wrapper.__name__ = wrapper.__qualname__ = name
  wrapper.__doc__ = doc
  return wrapper


for _p, (_name, _doc) in _BINARY.items():
  globals()[_name] = _make_binary(_p, _name, _doc)
  globals()[_p.name + "_p"] = _p
  _export(_name, _p.name + "_p")


def mul(x, y, *, out_dtype=None):
  """Elementwise multiplication: x * y (in ``out_dtype`` when given)."""
  if out_dtype is not None:
    out_dtype = dtypes.canonicalize_dtype(out_dtype)
  return mul_p.bind1(x, y, out_dtype=out_dtype)


_export("mul", "mul_p")


# ----------------------------------------------- rules of the binary table
def _add_jvp(primals, tangents):
  x, y = primals
  xdot, ydot = tangents
  out = add(x, y)
  if type(xdot) is Zero and type(ydot) is Zero:
    return [out], [Zero.from_primal_value(out)]
  if type(xdot) is Zero:
    return [out], [_maybe_broadcast(_shape(out), ydot)]
  if type(ydot) is Zero:
    return [out], [_maybe_broadcast(_shape(out), xdot)]
  return [out], [add(xdot, ydot)]


def _sub_jvp(primals, tangents):
  x, y = primals
  xdot, ydot = tangents
  out = sub(x, y)
  if type(xdot) is Zero and type(ydot) is Zero:
    return [out], [Zero.from_primal_value(out)]
  if type(xdot) is Zero:
    return [out], [_maybe_broadcast(_shape(out), neg(ydot))]
  if type(ydot) is Zero:
    return [out], [_maybe_broadcast(_shape(out), xdot)]
  return [out], [sub(xdot, ydot)]


def _additive_transpose(negate_y: bool):
  def rule(cts, x, y):
    ct, = cts
    outs = []
    for v, sign in ((x, False), (y, negate_y)):
      if not is_undefined_primal(v):
        outs.append(None)
      elif type(ct) is Zero:
        outs.append(Zero(v.aval))
      else:
        outs.append(_unbroadcast(v.aval, neg(ct) if sign else ct))
    return outs
  return rule


add_p.def_jvp(_add_jvp)
add_p.def_transpose(_additive_transpose(False))
sub_p.def_jvp(_sub_jvp)
sub_p.def_transpose(_additive_transpose(True))

defjvp(mul_p, lambda xdot, x, y, *, out_dtype: mul(xdot, y, out_dtype=out_dtype),
       lambda ydot, x, y, *, out_dtype: mul(x, ydot, out_dtype=out_dtype))


@mul_p.def_transpose
def _mul_transpose(cts, x, y, *, out_dtype):
  ct, = cts
  if is_undefined_primal(x) and is_undefined_primal(y):
    raise NotImplementedError("mul: transpose of a product of two linear operands "
                              "(the function is not linear)")
  lin = x if is_undefined_primal(x) else y
  if type(ct) is Zero:
    return [Zero(lin.aval) if v is lin else None for v in (x, y)]
  dt = None if out_dtype is None else lin.aval.dtype
  g = mul(ct, y, out_dtype=dt) if lin is x else mul(x, ct, out_dtype=dt)
  g = _unbroadcast(lin.aval, g)
  return [g, None] if lin is x else [None, g]


defjvp(div_p, lambda g, x, y: div(g, y),
       lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2)))


@div_p.def_transpose
def _div_transpose(cts, x, y):
  ct, = cts
  if is_undefined_primal(y):
    raise NotImplementedError("div: transpose with a linear denominator (the function "
                              "is not linear)")
  if type(ct) is Zero:
    return [Zero(x.aval), None]
  return [_unbroadcast(x.aval, div(ct, y)), None]


defjvp(rem_p, lambda g, x, y: _maybe_broadcast(broadcasting_shape("rem", (
           get_aval(x), get_aval(y))), g),
       lambda g, x, y: mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y))))))


def _balanced_eq(x, z, y):
  # 1 where x attains the extremum z, halved where y attains it too (a tie).
  return div(select(eq(x, z), full_like(z, 1), full_like(z, 0)),
             select(eq(y, z), full_like(z, 2), full_like(z, 1)))


for _p in (max_p, min_p):
  defjvp2(_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
          lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
defjvp(atan2_p, lambda g, x, y: mul(g, div(y, add(square(x), square(y)))),
       lambda g, x, y: mul(g, div(neg(x), add(square(x), square(y)))))


def _complex_transpose(ct, x, y):
  return [_unbroadcast(x.aval, real(ct)) if is_undefined_primal(x) else None,
          _unbroadcast(y.aval, imag(neg(ct))) if is_undefined_primal(y) else None]


deflinear(complex_p, _complex_transpose)
defbroadcasting(*_BINARY, mul_p)
# -------------------------------------------------------------------- select_n
select_n_p = Primitive("select_n")
select_n_p.def_lower(L.select_n_rule)


@select_n_p.def_impl
def _select_n_impl(which, *cases):
  if len(cases) == 1:
    return [np.asarray(cases[0])]
  if which.dtype == np.bool_:
    return [np.where(which, cases[1], cases[0])]
  out = cases[-1]
  for i in range(len(cases) - 2, -1, -1):   # out-of-range indices pick an end case
    out = np.where(which <= i, cases[i], out)
  return [np.asarray(out)]


@select_n_p.def_abstract_eval
def _select_n_abstract_eval(which, *cases):
  if not cases:
    raise TypeError("select must have at least one case")
  if builtins.any(c.shape != cases[0].shape for c in cases[1:]):
    raise TypeError("select cases must have the same shapes, got "
                    f"[{', '.join(str(c.shape) for c in cases)}].")
  if which.shape and which.shape != cases[0].shape:
    raise TypeError("select `which` must be scalar or have the same shape as cases, got "
                    f"`which` shape {which.shape} but case shape {cases[0].shape}.")
  check_same_dtypes("select", cases)
  if not (which.dtype == np.bool_ or dtypes.issubdtype(which.dtype, np.integer)):
    raise TypeError(f"select `which` must be boolean or integer type, got {which.dtype.name}.")
  if which.dtype == np.bool_ and len(cases) > 2:
    raise TypeError("select with boolean `which` cannot have > 2 cases.")
  return [ShapedArray(cases[0].shape, cases[0].dtype, weak(*cases))]


def select_n(which, *cases):
  """``cases[which]`` elementwise; ``which`` is bool (two cases) or int."""
  if not cases:
    raise ValueError("select_n() must have at least one case")
  return select_n_p.bind1(which, *cases)


def select(pred, on_true, on_false):
  """``on_true`` where ``pred`` else ``on_false`` (``select_n(pred, on_false, on_true)``)."""
  return select_n_p.bind1(pred, on_false, on_true)


_export("select_n", "select_n_p", "select")


@select_n_p.def_jvp
def _select_n_jvp(primals, tangents):
  which, *cases = primals
  case_tangents = tangents[1:]              # the predicate is not differentiable
  out = select_n_p.bind1(which, *cases)
  nonzero = [t for t in case_tangents if type(t) is not Zero]
  if not nonzero:
    return [out], [Zero.from_primal_value(out)]
  z = _zeros(nonzero[0])
  return [out], [select_n_p.bind1(which, *(z if type(t) is Zero else t
                                           for t in case_tangents))]


@select_n_p.def_transpose
def _select_n_transpose(cts, which, *cases):
  ct, = cts
  if is_undefined_primal(which):
    raise NotImplementedError("select_n: the predicate cannot be a linear input")
  if type(ct) is Zero:
    return [None] + [Zero(c.aval) if is_undefined_primal(c) else None for c in cases]
  zeros = _zeros(ct)
  if get_aval(which).dtype == np.bool_:
    pick = lambda i: select(which, zeros, ct) if i == 0 else select(which, ct, zeros)  # noqa: E731
  else:
    pick = lambda i: select(eq(which, _const(which, i)), ct, zeros)  # noqa: E731
  if len(cases) == 1:
    pick = lambda i: ct  # noqa: E731
  return [None] + [pick(i) if is_undefined_primal(c) else None for i, c in enumerate(cases)]


@select_n_p.def_batch
def _select_n_batch(vals, dims):
  which, *cases = vals
  which_d, *case_ds = dims
  size = axis_size(vals, dims)
  if builtins.all(which_d == d for d in case_ds):
    if _shape(which) == _shape(cases[0]):
      return [select_n_p.bind1(which, *cases)], [which_d]
    # A scalar predicate batched beside batched cases: spread it along them.
    which = broadcast_in_dim(which, _shape(cases[0]), (which_d,))
    return [select_n_p.bind1(which, *cases)], [which_d]
  if not _shape(which) and builtins.all(d is not None for d in case_ds):
    # An unbatched scalar predicate: the cases keep (or share) their batch dim.
    d0 = case_ds[0]
    cases = [moveaxis(c, d, d0) for c, d in zip(cases, case_ds)]
    return [select_n_p.bind1(which, *cases)], [d0]
  if _shape(which):
    which = bdim_at_front(which, which_d, size)
  if not builtins.all(_shape(c) == () for c in cases):
    cases = [bdim_at_front(c, d, size) for c, d in zip(cases, case_ds)]
  case_shape = _shape(cases[0])
  if 0 < len(_shape(which)) < len(case_shape):
    which = broadcast_in_dim(which, case_shape, (0,))   # a batched scalar predicate
  if len(_shape(which)) > len(case_shape):
    cases = [broadcast_in_dim(c, _shape(which), ()) for c in cases]
  return [select_n_p.bind1(which, *cases)], [0]


# pow, reduce_precision, clamp and bitcast_convert_type live in a sibling
# module (they use the wrappers above); re-exported as part of this family.
from openjax._src.primitives.elementwise.transcendental import *  # noqa: E402,F401,F403
from openjax._src.primitives.elementwise.transcendental import __all__ as _extra_all  # noqa: E402

_export(*_extra_all)
