"""Elementwise arithmetic: negation, sign, rounding, absolute value, complex
parts, powers with integer exponents, the four operations, remainder,
maximum and minimum, ``complex``, ``mulhi`` and ``reduce_precision``. Their
rules use ``logic``'s comparisons and selects; ``transcendental`` builds on
these.

Wrappers follow ``jax.lax``: operands must already have equal dtypes (Python
scalars are weakly typed and adopt nothing here: ``lax.add(f32, 2)`` is a
TypeError, ``lax.add(f32, 2.0)`` is fine); rank-0 operands broadcast. A result
is weakly typed exactly when every operand is.
"""
from __future__ import annotations

import builtins
import enum

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules import elementwise_rule
from openjax._src.primitives.base.ad_util import Zero, defjvp_zero, is_undefined_primal
from openjax._src.primitives.base.batch_util import defvectorized
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.base.structural import defjvp, defjvp2, deflinear
from openjax._src.primitives.base.util import broadcasting_shape
from openjax._src.primitives.elementwise.elementwise_lowering import (
    abs_rule, binary, complex_rule, conj_rule, div_rule, integer_pow_rule, minmax_rule, mul_rule,
    mulhi_rule, negate, nextafter_rule, reduce_precision_rule, rem_rule, round_rule, sign_rule,
    square_rule, unary)
from openjax._src.primitives.elementwise.elementwise_rules import (
    ABS, ANY, COMPLEX, COMPLEX_PARTS, CONJ, FLOAT, HALF_COMPARE_MIN, INT, INT_OR_FLOAT, NUM,
    check_unary, complex_dtype, fl, half_via_float32, maybe_broadcast, naryop, real_dtype,
    scalar_like, unbroadcast, unop, zeros_like)
from openjax._src.primitives.elementwise.logic import eq, ge, select
from openjax._src.primitives.shape.shape import full_like

__all__ = [
    "neg", "neg_p", "sign", "sign_p", "floor", "floor_p", "ceil", "ceil_p", "round", "round_p",
    "RoundingMethod", "abs", "abs_p", "real", "real_p", "imag", "imag_p", "conj", "conj_p",
    "square", "square_p", "integer_pow", "integer_pow_p", "reciprocal", "add", "add_p", "sub",
    "sub_p", "mul", "mul_p", "div", "div_p", "rem", "rem_p", "max", "max_p", "min", "min_p",
    "nextafter", "nextafter_p", "mulhi", "mulhi_p", "complex", "complex_p", "reduce_precision",
    "reduce_precision_p",
]


def replace_zero(x):
  """``x`` with its zeros replaced by ones (a safe divisor)."""
  return select(eq(x, scalar_like(x, 0)), full_like(x, 1), x)


# ------------------------------------------------------------------------ neg
neg_p = unop("neg", np.negative, NUM, kind="linear", lower=negate)


def neg(x):
  """Elementwise negation: -x."""
  return neg_p.bind1(x)


deflinear(neg_p, lambda ct, x: [neg(ct)])


# ----------------------------------------------------------------------- sign
# (np.sign of unsigned integers is x != 0 in their dtype, one pass: 1e6
# uint8 ~150 -> ~65 us where the compare and its cast made two)
sign_p = unop("sign", np.sign, NUM, lower=sign_rule)


def sign(x):
  """Elementwise sign: -1, 0 or 1 (x / |x| for complex)."""
  return sign_p.bind1(x)


defjvp_zero(sign_p)


# ---------------------------------------------------------------- floor, ceil
floor_p = unop("floor", fl(np.floor), FLOAT, lower=unary("stablehlo.floor"))


def floor(x):
  """Elementwise floor."""
  return floor_p.bind1(x)


defjvp_zero(floor_p)

ceil_p = unop("ceil", fl(np.ceil), FLOAT, lower=unary("stablehlo.ceil"))


def ceil(x):
  """Elementwise ceiling."""
  return ceil_p.bind1(x)


defjvp_zero(ceil_p)


# ---------------------------------------------------------------------- round
class RoundingMethod(enum.IntEnum):
  """How ``lax.round`` breaks ties: away from zero (0) or to nearest even (1)."""
  AWAY_FROM_ZERO = 0
  TO_NEAREST_EVEN = 1


def _round(x, *, rounding_method):
  if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
    return np.round(x)
  # On the magnitude: |x| - trunc(|x|) is exact, so ties are found exactly;
  # copysign puts back x's sign (-0.0 and NaNs' included). Six passes where
  # selecting trunc(x) + sign(x) took seven and a select (1e6: 15 -> 5 ms).
  m = np.abs(x)
  r = np.trunc(m)
  r += (m - r) >= 0.5
  return np.copysign(r, x, out=r) if type(r) is np.ndarray else np.copysign(r, x)   # 0-d: a scalar


round_p = unop("round", fl(_round), FLOAT, lower=round_rule)


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001 - JAX's name
  """Elementwise round to integral values; ties go away from zero unless
  ``rounding_method`` is ``RoundingMethod.TO_NEAREST_EVEN``."""
  return round_p.bind1(x, rounding_method=RoundingMethod(rounding_method))


@round_p.def_eval_kernel
def _round_eval_kernel(x, *, rounding_method):
  # A lean kernel for either method (unop's takes none with a parameter:
  # jnp.floor_divide's and jnp.rint's round ran the impl, ~2 us more).
  if x.dtype in dtypes.custom_float_dtypes:   # float32 and back: the impl
    return None
  if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
    return np.rint   # np.round's ufunc (half to even)

  def round_away_from_zero(v):
    return _round(v, rounding_method=rounding_method)
  return round_away_from_zero


defjvp_zero(round_p)


# ------------------------------------------------------------------------ abs
abs_p = unop("abs", np.abs, ABS, result_dtype=real_dtype, lower=abs_rule)


def abs(x):  # noqa: A001 - JAX's name
  """Elementwise absolute value (the magnitude for complex)."""
  return abs_p.bind1(x)


def _abs_of_bits(x):
  return np.bitwise_and(x.view(np.uint16), np.uint16(0x7FFF)).view(x.dtype)


@abs_p.def_eval_kernel
def _abs_eval_kernel(x):
  # bfloat16's |x| clears the sign bit (NaNs keep their payload), as
  # ml_dtypes' loop does per element through float: one integer pass
  # (1e6 ~1.4 -> 0.1 ms)
  if x.dtype == dtypes.bfloat16:
    return _abs_of_bits
  return np.abs


def _abs_jvp(g, ans, x):
  if dtypes.kind(get_aval(x).dtype) == "c":   # Re(g conj(x) / |x|), 0 at x = 0
    x_dtype = get_aval(x).dtype
    return real(mul(g, div(conj(x), replace_zero(convert_element_type(ans, x_dtype)))))
  return select(ge(x, full_like(x, 0, shape=())), g, neg(g))


defjvp2(abs_p, _abs_jvp)


# --------------------------------------------------------- real, imag, conj
# real, imag, conj and complex (below) are linear; real's transpose puts the
# cotangent in the real part, imag's in the (negated) imaginary part.
real_p = unop("real", np.real, COMPLEX, result_dtype=real_dtype, kind="linear",
              lower=unary("stablehlo.real"))


def real(x):
  """Elementwise real part of a complex array."""
  return real_p.bind1(x)


deflinear(real_p, lambda ct, x: [complex(ct, np.zeros((), get_aval(ct).dtype))])

imag_p = unop("imag", np.imag, COMPLEX, result_dtype=real_dtype, kind="linear",
              lower=unary("stablehlo.imag"))


def imag(x):
  """Elementwise imaginary part of a complex array."""
  return imag_p.bind1(x)


deflinear(imag_p, lambda ct, x: [complex(np.zeros((), get_aval(ct).dtype), neg(ct))])

conj_p = unop("conj", lambda x, input_dtype: np.conj(x), CONJ, result_dtype=complex_dtype,
              kind="linear", lower=conj_rule)


def conj(x):
  """Elementwise complex conjugate (a real input becomes complex)."""
  return conj_p.bind1(x, input_dtype=np.dtype(dtypes.dtype(x)))


def _real_to_complex(dt: np.dtype):
  def conj_of_real(x):
    return x.astype(dt)
  return conj_of_real


@conj_p.def_eval_kernel
def _conj_eval_kernel(x, *, input_dtype):
  # A real operand's conjugate is itself made complex: one cast where the
  # impl copied it first (np.conj) then cast (1e6 float32 ~2.8 -> ~0.35 ms)
  if x.dtype.kind == "c":
    return np.conj
  return _real_to_complex(np.dtype(complex_dtype(x.dtype)))


deflinear(conj_p, lambda ct, x, *, input_dtype: [
    conj(ct) if dtypes.kind(np.dtype(input_dtype)) == "c" else real(ct)])


# --------------------------------------------------------------------- square
square_p = unop("square", np.square, NUM, lower=square_rule)


def square(x):
  """Elementwise square: x * x."""
  return square_p.bind1(x)


defjvp2(square_p, lambda g, ans, x: mul(g, mul(scalar_like(x, 2), x)))


# ---------------------------------------------------------------- integer_pow
def _integer_pow(x, *, y):
  if y == 0:
    return np.ones_like(x)
  acc, base, n = None, x, -y if y < 0 else y
  # Products after the first write into the buffers this call made (the
  # same products, one fresh array instead of two or more: x**3 of 1e6
  # float32 in custom_root's Newton steps); NumPy scalars (0-d) as before.
  inplace = type(x) is np.ndarray and x.ndim > 0
  while n:                          # square-and-multiply, like XLA's expansion
    if n & 1:
      if acc is None:
        acc = base
      elif inplace and base is not x and not n >> 1:   # base's last use
        acc = np.multiply(acc, base, out=base)
      elif inplace and acc is not x and acc is not base:
        acc = np.multiply(acc, base, out=acc)
      else:
        acc = acc * base
    n >>= 1
    if n:
      base = np.multiply(base, base, out=base) if (
          inplace and base is not x and base is not acc) else base * base
  return np.asarray(1, x.dtype) / acc if y < 0 else acc


integer_pow_p = unop("integer_pow", fl(_integer_pow), NUM, lower=integer_pow_rule)


def integer_pow(x, y: int):
  """Elementwise power with a static integer exponent: x**y."""
  return integer_pow_p.bind1(x, y=int(y))


def reciprocal(x):
  """Elementwise reciprocal: 1 / x."""
  return integer_pow(x, -1)


@integer_pow_p.def_eval_kernel
def _integer_pow_eval_kernel(x, *, y):
  # The impl's square-and-multiply without its three wrappers (the eval
  # trace casts the result and silences warnings): jnp.power(i32[1e3], 4)
  # ~15 -> ~11 us. ml_dtypes floats keep the impl's float32 round trip, 0-d
  # operands its warnings off (NumPy warns of integer scalars' overflow).
  if x.dtype in dtypes.custom_float_dtypes or not x.shape:
    return None
  return lambda v: _integer_pow(v, y=y)


integer_pow_p.def_sharding_rule(elementwise_rule("integer_pow"))


@integer_pow_p.def_abstract_eval
def _integer_pow_abstract_eval(x, *, y):
  check_unary("integer_pow", x, NUM)
  if y < 0 and dtypes.issubdtype(x.dtype, np.integer):
    raise TypeError(f"Integers cannot be raised to negative powers, got "
                    f"integer_pow({x.str_short(short_dtypes=False)}, {y})")
  return [ShapedArray(x.shape, x.dtype, x.weak_type)]


def _integer_pow_jvp(g, x, *, y):
  if y == 0:
    return zeros_like(g)
  if y == 1:
    return g
  if y == 2:
    return mul(g, mul(scalar_like(x, 2), x))
  return mul(g, mul(scalar_like(x, y), integer_pow(x, y - 1)))


defjvp(integer_pow_p, _integer_pow_jvp)


# ------------------------------------------------------------------- add, sub
def _additive_transpose(negate_y: bool):
  def rule(cts, x, y):
    ct, = cts
    outs = []
    for v, negated in ((x, False), (y, negate_y)):
      if not is_undefined_primal(v):
        outs.append(None)
      elif type(ct) is Zero:
        outs.append(Zero(v.aval))
      else:
        outs.append(unbroadcast(v.aval, neg(ct) if negated else ct))
    return outs
  return rule


add_p = naryop("add", np.add, NUM, kind="linear", lower=binary("stablehlo.add"))


def add(x, y):
  """Elementwise addition: x + y."""
  return add_p.bind1(x, y)


@add_p.def_jvp
def _add_jvp(primals, tangents):
  x, y = primals
  xdot, ydot = tangents
  out = add(x, y)
  if type(xdot) is Zero and type(ydot) is Zero:
    return [out], [Zero.from_primal_value(out)]
  if type(xdot) is Zero:
    return [out], [maybe_broadcast(get_aval(out).shape, ydot)]
  if type(ydot) is Zero:
    return [out], [maybe_broadcast(get_aval(out).shape, xdot)]
  return [out], [add(xdot, ydot)]


add_p.def_transpose(_additive_transpose(False))

sub_p = naryop("sub", np.subtract, NUM, kind="linear", lower=binary("stablehlo.subtract"))


def sub(x, y):
  """Elementwise subtraction: x - y."""
  return sub_p.bind1(x, y)


@sub_p.def_jvp
def _sub_jvp(primals, tangents):
  x, y = primals
  xdot, ydot = tangents
  out = sub(x, y)
  if type(xdot) is Zero and type(ydot) is Zero:
    return [out], [Zero.from_primal_value(out)]
  if type(xdot) is Zero:
    return [out], [maybe_broadcast(get_aval(out).shape, neg(ydot))]
  if type(ydot) is Zero:
    return [out], [maybe_broadcast(get_aval(out).shape, xdot)]
  return [out], [sub(xdot, ydot)]


sub_p.def_transpose(_additive_transpose(True))


# ------------------------------------------------------------------------ mul
mul_p = naryop("mul", np.multiply, NUM, out_dtype_param=True, lower=mul_rule)


def mul(x, y, *, out_dtype=None):
  """Elementwise multiplication: x * y (in ``out_dtype`` when given)."""
  if out_dtype is not None:
    out_dtype = dtypes.canonicalize_dtype(out_dtype)
  return mul_p.bind1(x, y, out_dtype=out_dtype)


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
  g = unbroadcast(lin.aval, g)
  return [g, None] if lin is x else [None, g]


# ------------------------------------------------------------------------ div
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


div_p = naryop("div", _div, NUM, lower=div_rule)


def div(x, y):
  """Elementwise division: x / y (integer division rounds toward zero)."""
  return div_p.bind1(x, y)


# Integers of up to 32 bits divide in floating point: the quotient of two
# such integers rounds to within |q| 2**-p of x / y (p = 53 for float64, 24
# for float32), closer than the 1 / |y| that separates a non-integer x / y
# from the next integer because |q y| <= |x| < 2**(p-1), so truncating the
# rounded quotient gives C's. NumPy's integer division is a slower loop
# (int32 at 1e6: ~9 ms; this ~2.5 ms, and ~2 us at 10 elements where
# ``_div``'s selects took ~10 us). x / 0 and INT_MIN / -1 take ``_div``.
def _div_by_float(dt: np.dtype):
  lowest = np.iinfo(dt).min if dt.kind == "i" else None
  quotient = np.float32 if dt.itemsize <= 2 else np.float64

  def div_ints(x, y):
    if np.count_nonzero(y) != y.size or (
        lowest is not None and np.count_nonzero(x == lowest)):
      return _div(x, y)
    q = np.divide(x, y, dtype=quotient)
    return np.trunc(q, out=q).astype(dt)
  return div_ints


@div_p.def_eval_kernel
def _div_eval_kernel(x, y, *, out_dtype=None):
  if out_dtype is not None:
    return None
  # (0-d operands give NumPy scalars, which ``out=`` cannot take.)
  if x.dtype.kind in "iu" and x.dtype.itemsize <= 4 and broadcasting_shape("div", (x, y)):
    return _div_by_float(x.dtype)
  if x.dtype.kind in "fc":   # ``_div``'s float case, the ufunc itself (~0.3 us less a call)
    return np.true_divide
  return _div


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
  return [unbroadcast(x.aval, div(ct, y)), None]


# ------------------------------------------------------------------------ rem
# Integer remainders by one divisor of at least this many elements first
# check whether every |x| < |y| (two reductions, ~0.2 ms at 1e6 int32): then
# the remainder is x itself, where NumPy's integer fmod takes ~3.3 ms
# (jnp.take(mode="wrap")'s indices, most already in range).
_REM_RANGE_MIN = 1 << 12


def _rem(x, y):
  if x.dtype.kind not in "iu":
    return np.fmod(x, y)
  if y.ndim == 0 and x.size >= _REM_RANGE_MIN:
    d = int(y)
    d = -d if d < 0 else d   # (this module's ``abs`` is lax's)
    if d and -d < int(x.min()) and int(x.max()) < d:
      return x.copy()
  if np.count_nonzero(y) == y.size:   # no zero divisor: one call (cheaper than the selects)
    return np.fmod(x, y)
  zero = y == 0   # XLA: x % 0 == x
  # ``y | zero`` puts 1 where y is 0 (``np.where(zero, 1, y)`` resolves the
  # Python 1's dtype on every call: ~4 us of gcd's ~6 us trip at 4 elements).
  return np.where(zero, x, np.fmod(x, y | zero))


rem_p = naryop("rem", _rem, INT_OR_FLOAT, lower=rem_rule)


def rem(x, y):
  """Elementwise remainder with the sign of the dividend (C's fmod)."""
  return rem_p.bind1(x, y)


defjvp(rem_p, lambda g, x, y: maybe_broadcast(broadcasting_shape("rem", (
           get_aval(x), get_aval(y))), g),
       lambda g, x, y: mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y))))))


# ------------------------------------------------------------------- max, min
def _balanced_eq(x, z, y):
  # 1 where x attains the extremum z, halved where y attains it too (a tie).
  return div(select(eq(x, z), full_like(z, 1), full_like(z, 0)),
             select(eq(y, z), full_like(z, 2), full_like(z, 1)))


# np.maximum/np.minimum of a large float array and a 0-d operand run a
# slow loop (1e6 float32 ~1.3 ms, ~0.43 against a whole array): np.clip's
# loop where its bits are the same (below), else the operand filled into
# the result's buffer first, every element computed by the array loop
# (ties: the second operand; a NaN operand's own bits), ~0.7 ms.
_FILL_FLOATS = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
_FILL_MIN_SIZE = 1 << 14


def _minmax_rule(ufunc):
  half = half_via_float32(ufunc, HALF_COMPARE_MIN)

  is_max = ufunc is np.maximum

  def clipped(x, s):
    return np.clip(x, s, np.inf) if is_max else np.clip(x, -np.inf, s)

  # np.clip's loop (one pass, 1e6 float32 ~0.4 ms) is max(s, x) / min(s, x)
  # bit for bit where the bound s is not NaN: a tie gives x, the second
  # operand, and a NaN x stays itself; with s second a tie gives s, the
  # same bits unless s is a zero (tested both ways on +-0)
  def scalar_first(a, b):
    if a == a:
      return clipped(b, a)
    out = np.full(b.shape, a, b.dtype)
    return ufunc(out, b, out=out)

  def scalar_second(a, b):
    if b == b and b != 0:
      return clipped(a, b)
    out = np.full(a.shape, b, a.dtype)
    return ufunc(a, out, out=out)

  def rule(x, y, out_dtype=None):
    if (out_dtype is None and x.dtype in _FILL_FLOATS and bool(x.shape) != bool(y.shape)
        and builtins.max(x.size, y.size) >= _FILL_MIN_SIZE):
      return scalar_second if x.shape else scalar_first
    return half(x, y, out_dtype=out_dtype)
  return rule


max_p = naryop("max", np.maximum, ANY, lower=minmax_rule(True))


def max(x, y):  # noqa: A001 - JAX's name
  """Elementwise maximum (NaN propagates)."""
  return max_p.bind1(x, y)


max_p.def_eval_kernel(_minmax_rule(np.maximum))


defjvp2(max_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
        lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))

min_p = naryop("min", np.minimum, ANY, lower=minmax_rule(False))


def min(x, y):  # noqa: A001 - JAX's name
  """Elementwise minimum (NaN propagates)."""
  return min_p.bind1(x, y)


min_p.def_eval_kernel(_minmax_rule(np.minimum))


defjvp2(min_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
        lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))


# ------------------------------------------------------------------ nextafter
nextafter_p = naryop("nextafter", np.nextafter, FLOAT, kind="nondifferentiable",
                     lower=nextafter_rule)


def nextafter(x, y):
  """The next representable value after x in the direction of y."""
  return nextafter_p.bind1(x, y)


# ---------------------------------------------------------------------- mulhi
def _mulhi(x, y):
  bits = x.dtype.itemsize * 8
  if bits < 64:
    wide = np.int64 if x.dtype.kind == "i" else np.uint64
    return (x.astype(wide) * y.astype(wide)) >> bits
  # 64-bit: schoolbook product of 32-bit halves, exact in Python ints.
  prod = np.frompyfunc(lambda a, b: (int(a) * int(b)) >> 64, 2, 1)(x, y)
  return prod.astype(x.dtype)


mulhi_p = naryop("mulhi", _mulhi, INT, kind="nondifferentiable", lower=mulhi_rule)


def mulhi(x, y):
  """The high half of the double-width integer product x * y."""
  return mulhi_p.bind1(x, y)


# -------------------------------------------------------------------- complex
def _complex(x, y):
  # By parts: x + 1j * y would turn complex(1, nan) into nan + nanj.
  x, y = np.broadcast_arrays(x, y)
  out = np.empty(x.shape, complex_dtype(x.dtype))
  out.real, out.imag = x, y
  return out


complex_p = naryop("complex", _complex, COMPLEX_PARTS, result_dtype=complex_dtype, kind="linear",
                   lower=complex_rule)


def complex(x, y):  # noqa: A001 - JAX's name
  """Elementwise complex number x + i*y from real parts."""
  return complex_p.bind1(x, y)


def _complex_transpose(ct, x, y):
  return [unbroadcast(x.aval, real(ct)) if is_undefined_primal(x) else None,
          unbroadcast(y.aval, imag(neg(ct))) if is_undefined_primal(y) else None]


deflinear(complex_p, _complex_transpose)


# ----------------------------------------------------------- reduce_precision
reduce_precision_p = Primitive("reduce_precision", kind="linear")


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
  """Round ``operand`` as if cast to a float with the given exponent and
  mantissa widths and back (``reduce_precision(x, 8, 7)`` mimics bfloat16)."""
  return reduce_precision_p.bind1(operand, exponent_bits=int(exponent_bits),
                                  mantissa_bits=int(mantissa_bits))


@reduce_precision_p.def_impl
def _reduce_precision_impl(x, *, exponent_bits, mantissa_bits):
  # In the operand's own unsigned width: arithmetic modulo 2**bits keeps the
  # low bits a wider sum would (a carry past the top only comes from a NaN,
  # which the last select restores), at half the memory of uint64 for float32
  # (1e6 elements: ~4.4 -> ~1.5 ms).
  info = dtypes.finfo(x.dtype)
  nmant, nexp = int(info.nmant), int(info.nexp)
  udt = np.dtype(f"u{x.dtype.itemsize}").type
  bits = np.ascontiguousarray(x).view(udt)
  sign = udt(1 << (x.dtype.itemsize * 8 - 1))
  exp_mask = udt(((1 << nexp) - 1) << nmant)
  if mantissa_bits < nmant:     # round the mantissa to nearest, ties to even
    shift = udt(nmant - mantissa_bits)
    last = (bits >> shift) & udt(1)
    last += udt((1 << (nmant - mantissa_bits - 1)) - 1)
    bits = bits + last
    bits &= udt(~((1 << (nmant - mantissa_bits)) - 1) & ((1 << (8 * x.dtype.itemsize)) - 1))
  if exponent_bits < nexp:      # overflow to inf, flush the reduced denormal range to 0
    src_bias, red_bias = (1 << (nexp - 1)) - 1, (1 << (exponent_bits - 1)) - 1
    e = (bits & exp_mask) >> udt(nmant)
    bits = np.where(e > src_bias + red_bias, (bits & sign) | exp_mask, bits)
    bits = np.where(e <= src_bias - red_bias, bits & sign, bits)
  out = bits.view(x.dtype).reshape(x.shape)
  return [np.where(np.isnan(x), x, out)]


def _round_float32_to_bfloat16(x):
  """``reduce_precision(x, 8, 7)`` of float32 (the bfloat16 rounding, JAX's
  most common use): ml_dtypes' cast rounds to nearest even, overflows to inf
  and keeps bfloat16's subnormals, the bits above; NaNs are the operand's
  own, as above. 2 casts and a masked copy (10 elements ~1.7 us, the bit
  arithmetic ~17)."""
  if x.size >= _BITS_ROUND_MIN_SIZE:
    out = _round_bits_to_bfloat16(x)
  else:
    out = np.asarray(x.astype(dtypes.bfloat16).astype(np.float32))   # 0-d: a NumPy scalar
  # NaNs only where the sum of squares is NaN (BLAS's dot, 1e6 ~0.1 ms):
  # no boolean array nor masked copy otherwise
  total = np.vdot(x, x)
  if total != total:
    np.copyto(out, x, where=np.isnan(x))
  return out


# From this size the rounding is integer arithmetic on the bits, one fresh
# buffer and four in-place passes, where ml_dtypes' cast to bfloat16 and
# back (two buffers) took ~1.2 ms at 1e6 (the kernel at 1e6 ~2.2 -> ~1.2 ms, NumPy's two casts ~1.2-1.6)
_BITS_ROUND_MIN_SIZE = 1 << 14


def _round_bits_to_bfloat16(x):
  """float32 -> nearest bfloat16 (ties to even) -> float32 on the bits: add
  0x7fff plus the kept mantissa's last bit, drop the low half. A carry
  reaches the exponent exactly where the cast rounds up a binade or
  overflows to inf; subnormals round the same way. NaNs (whose bits may
  wrap) are the caller's to restore."""
  u = np.ascontiguousarray(x).view(np.uint32)
  t = np.right_shift(u, 16)
  t &= 1
  t += 0x7FFF
  t += u
  t &= 0xFFFF0000
  return t.view(np.float32).reshape(x.shape)


@reduce_precision_p.def_eval_kernel
def _reduce_precision_eval_kernel(x, *, exponent_bits, mantissa_bits):
  if x.dtype == np.float32 and (exponent_bits, mantissa_bits) == (8, 7):
    return _round_float32_to_bfloat16
  return None


reduce_precision_p.def_sharding_rule(elementwise_rule("reduce_precision"))


@reduce_precision_p.def_abstract_eval
def _reduce_precision_abstract_eval(x, *, exponent_bits, mantissa_bits):
  check_unary("reduce_precision", x, FLOAT)
  if exponent_bits < 1 or mantissa_bits < 0:
    raise ValueError("reduce_precision: exponent_bits must be >= 1 and mantissa_bits "
                     f">= 0, got {exponent_bits} and {mantissa_bits}.")
  return [ShapedArray(x.shape, x.dtype, x.weak_type)]


deflinear(reduce_precision_p, lambda ct, x, **params: [reduce_precision_p.bind1(ct, **params)])
defvectorized(reduce_precision_p)
reduce_precision_p.def_lower(reduce_precision_rule)
