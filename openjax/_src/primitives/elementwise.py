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
from openjax._src.core import Primitive, ShapedArray, array_hooks
from openjax._src.primitives._elementwise_rules import (
    ABS, ANY, COMPLEX, COMPLEX_PARTS, CONJ, FLOAT, INEXACT, INT, INT_OR_BOOL, INT_OR_FLOAT,
    NUM, ORDERED, WITH_ACCURACY, bool_dtype, check_nary, check_same_dtypes, check_unary,
    complex_dtype, fl, naryop, pp_hide_none, real_dtype, unop, weak)
from openjax._src.primitives._util import broadcasting_shape
from openjax._src.primitives.convert import (  # noqa: F401 - part of lax
    _convert_element_type, bitcast_convert_type, bitcast_convert_type_p, convert_element_type,
    convert_element_type_p, convert_numpy)

__all__ = []  # filled by _export below


def _export(*names):
  __all__.extend(names)


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


neg_p = unop("neg", np.negative, NUM, kind="linear")
sign_p = unop("sign", _sign, NUM)
floor_p = unop("floor", fl(np.floor), FLOAT)
ceil_p = unop("ceil", fl(np.ceil), FLOAT)
round_p = unop("round", fl(_round), FLOAT)
is_finite_p = unop("is_finite", np.isfinite, FLOAT, result_dtype=bool_dtype,
                    kind="nondifferentiable")
exp_p = unop("exp", fl(np.exp), INEXACT, accuracy=True)
exp2_p = unop("exp2", fl(np.exp2), INEXACT, accuracy=True)
log_p = unop("log", fl(np.log), INEXACT, accuracy=True)
log1p_p = unop("log1p", fl(np.log1p), INEXACT, accuracy=True)
expm1_p = unop("expm1", fl(np.expm1), INEXACT, accuracy=True)
tanh_p = unop("tanh", fl(np.tanh), INEXACT, accuracy=True)
logistic_p = unop("logistic", fl(_logistic), INEXACT, accuracy=True)
sin_p = unop("sin", fl(np.sin), INEXACT, accuracy=True)
cos_p = unop("cos", fl(np.cos), INEXACT, accuracy=True)
tan_p = unop("tan", fl(np.tan), INEXACT, accuracy=True)
asin_p = unop("asin", fl(np.arcsin), INEXACT)
acos_p = unop("acos", fl(np.arccos), INEXACT)
atan_p = unop("atan", fl(np.arctan), INEXACT)
sinh_p = unop("sinh", fl(np.sinh), INEXACT)
cosh_p = unop("cosh", fl(np.cosh), INEXACT)
asinh_p = unop("asinh", fl(np.arcsinh), INEXACT)
acosh_p = unop("acosh", fl(np.arccosh), INEXACT)
atanh_p = unop("atanh", fl(np.arctanh), INEXACT)
sqrt_p = unop("sqrt", fl(np.sqrt), INEXACT, accuracy=True)
rsqrt_p = unop("rsqrt", fl(lambda x: 1 / np.sqrt(x)), INEXACT, accuracy=True)
cbrt_p = unop("cbrt", fl(np.cbrt), FLOAT, accuracy=True)
abs_p = unop("abs", np.abs, ABS, result_dtype=real_dtype)
real_p = unop("real", np.real, COMPLEX, result_dtype=real_dtype, kind="linear")
imag_p = unop("imag", np.imag, COMPLEX, result_dtype=real_dtype, kind="linear")
conj_p = unop("conj", lambda x, input_dtype: np.conj(x), CONJ, result_dtype=complex_dtype,
               kind="linear")
not_p = unop("not", _not, INT_OR_BOOL, kind="nondifferentiable")
population_count_p = unop("population_count", _population_count, INT,
                           kind="nondifferentiable")
clz_p = unop("clz", _clz, INT, kind="nondifferentiable")
square_p = unop("square", np.square, NUM)
integer_pow_p = unop("integer_pow", fl(_integer_pow), NUM)


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


# --------------------------------------------------------------- binary table
def _div(x, y):
  if x.dtype.kind not in "iu":
    return np.true_divide(x, y)
  safe = np.where(y == 0, np.ones_like(y), y)
  if x.dtype.kind == "u":
    q = x // safe
  else:    # C division truncates toward zero (|INT_MIN| wraps back to INT_MIN)
    q = np.abs(x) // np.abs(safe)
    q = np.where((x < 0) != (safe < 0), -q, q)
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


add_p = naryop("add", np.add, NUM, kind="linear")
sub_p = naryop("sub", np.subtract, NUM, kind="linear")
mul_p = naryop("mul", np.multiply, NUM, out_dtype_param=True)
div_p = naryop("div", _div, NUM)
rem_p = naryop("rem", _rem, INT_OR_FLOAT)
max_p = naryop("max", np.maximum, ANY)
min_p = naryop("min", np.minimum, ANY)
atan2_p = naryop("atan2", fl(_atan2), INEXACT)
nextafter_p = naryop("nextafter", np.nextafter, FLOAT, kind="nondifferentiable")
mulhi_p = naryop("mulhi", _mulhi, INT, kind="nondifferentiable")
and_p = naryop("and", np.bitwise_and, INT_OR_BOOL, kind="nondifferentiable")
or_p = naryop("or", np.bitwise_or, INT_OR_BOOL, kind="nondifferentiable")
xor_p = naryop("xor", np.bitwise_xor, INT_OR_BOOL, kind="nondifferentiable")
shift_left_p = naryop("shift_left", _shift("left"), INT, kind="nondifferentiable")
shift_right_arithmetic_p = naryop("shift_right_arithmetic", _shift("right_arithmetic"), INT,
                                  kind="nondifferentiable")
shift_right_logical_p = naryop("shift_right_logical", _shift("right_logical"), INT,
                               kind="nondifferentiable")
eq_p = naryop("eq", np.equal, ANY, result_dtype=bool_dtype, kind="nondifferentiable")
ne_p = naryop("ne", np.not_equal, ANY, result_dtype=bool_dtype, kind="nondifferentiable")
lt_p = naryop("lt", np.less, ORDERED, result_dtype=bool_dtype, kind="nondifferentiable")
le_p = naryop("le", np.less_equal, ORDERED, result_dtype=bool_dtype, kind="nondifferentiable")
gt_p = naryop("gt", np.greater, ORDERED, result_dtype=bool_dtype, kind="nondifferentiable")
ge_p = naryop("ge", np.greater_equal, ORDERED, result_dtype=bool_dtype,
              kind="nondifferentiable")
complex_p = naryop("complex", lambda x, y: x + 1j * y.astype(complex_dtype(y.dtype)),
                   COMPLEX_PARTS, result_dtype=complex_dtype, kind="linear")

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

# --------------------------------------------------------------------- pow
pow_p = Primitive("pow")


@pow_p.def_impl
def _pow_impl(x, y):
  with np.errstate(all="ignore"):
    if x.dtype in dtypes.custom_float_dtypes:
      return [np.power(x.astype(np.float32), y).astype(x.dtype)]
    return [np.asarray(np.power(x, y)).astype(x.dtype, copy=False)]


@pow_p.def_abstract_eval
def _pow_abstract_eval(x, y):
  check_nary("pow", (x, y), (INEXACT, NUM), require_same=False)
  if not (dtypes.issubdtype(y.dtype, np.integer) or x.dtype == y.dtype):
    raise TypeError(
        "the first argument to pow must have an inexact dtype (float or complex), and "
        "the second argument must have an inexact or integer dtype, and two inexact "
        f"dtypes must match, but got {x.dtype.name} and {y.dtype.name} respectively.")
  return [ShapedArray(broadcasting_shape("pow", (x, y)), x.dtype, weak(x, y))]


def pow(x, y):  # noqa: A001 - JAX's name
  """Elementwise power x**y; ``x`` inexact, ``y`` integer or of ``x``'s dtype."""
  return pow_p.bind1(x, y)


_export("pow", "pow_p")


# ------------------------------------------------------------ reduce_precision
reduce_precision_p = Primitive("reduce_precision")


@reduce_precision_p.def_impl
def _reduce_precision_impl(x, *, exponent_bits, mantissa_bits):
  info = dtypes.finfo(x.dtype)
  nmant, nexp = int(info.nmant), int(info.nexp)
  udt = np.dtype(f"u{x.dtype.itemsize}")
  bits = np.ascontiguousarray(x).view(udt).astype(np.uint64)
  sign = np.uint64(1 << (x.dtype.itemsize * 8 - 1))
  exp_mask = np.uint64(((1 << nexp) - 1) << nmant)
  if mantissa_bits < nmant:     # round the mantissa to nearest, ties to even
    shift = np.uint64(nmant - mantissa_bits)
    last = (bits >> shift) & np.uint64(1)
    half = np.uint64((1 << (nmant - mantissa_bits - 1)) - 1)
    bits = (bits + half + last) & ~np.uint64((1 << (nmant - mantissa_bits)) - 1)
  if exponent_bits < nexp:      # overflow to inf, flush the reduced denormal range to 0
    src_bias, red_bias = (1 << (nexp - 1)) - 1, (1 << (exponent_bits - 1)) - 1
    e = (bits & exp_mask) >> np.uint64(nmant)
    bits = np.where(e > src_bias + red_bias, (bits & sign) | exp_mask, bits)
    bits = np.where(e <= src_bias - red_bias, bits & sign, bits)
  out = bits.astype(udt).view(x.dtype).reshape(x.shape)
  return [np.where(np.isnan(x), x, out)]


@reduce_precision_p.def_abstract_eval
def _reduce_precision_abstract_eval(x, *, exponent_bits, mantissa_bits):
  check_unary("reduce_precision", x, FLOAT)
  if exponent_bits < 1 or mantissa_bits < 0:
    raise ValueError("reduce_precision: exponent_bits must be >= 1 and mantissa_bits "
                     f">= 0, got {exponent_bits} and {mantissa_bits}.")
  return [ShapedArray(x.shape, x.dtype, x.weak_type)]


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
  """Round ``operand`` as if cast to a float with the given exponent and
  mantissa widths and back (``reduce_precision(x, 8, 7)`` mimics bfloat16)."""
  return reduce_precision_p.bind1(operand, exponent_bits=int(exponent_bits),
                                  mantissa_bits=int(mantissa_bits))


_export("reduce_precision", "reduce_precision_p")




# -------------------------------------------------------------------- select_n
select_n_p = Primitive("select_n")


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


# ---------------------------------------------------------------------- clamp
clamp_p = Primitive("clamp")


@clamp_p.def_impl
def _clamp_impl(lo, x, hi):
  with np.errstate(all="ignore"):
    return [np.minimum(np.maximum(x, lo), hi).astype(x.dtype, copy=False)]


@clamp_p.def_abstract_eval
def _clamp_abstract_eval(lo, x, hi):
  for name, a in (("min", lo), ("max", hi)):
    if a.shape and a.shape != x.shape:
      raise TypeError(f"clamp requires {name}.shape == operand.shape or {name}.shape == (), "
                      f"got {name}.shape={a.shape}, operand.shape={x.shape}.")
  check_nary("clamp", (lo, x, hi), (ANY, ANY, ANY))
  return [ShapedArray(x.shape, x.dtype, weak(lo, x, hi))]


def clamp(min, x, max):  # noqa: A002 - JAX's parameter names
  """Elementwise ``minimum(maximum(x, min), max)``."""
  return clamp_p.bind1(min, x, max)


_export("select_n", "select_n_p", "select", "clamp", "clamp_p")
