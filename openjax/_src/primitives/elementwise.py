"""Elementwise primitives: unary math, binary arithmetic, comparisons, logic
and bitwise ops. The families are uniform, so each primitive is one table row;
rules that differ get their own block below the tables.

Wrappers follow ``jax.lax``: operands must already have equal dtypes (Python
scalars are weakly typed and adopt nothing here: ``lax.add(f32, 2)`` is a
TypeError, ``lax.add(f32, 2.0)`` is fine); rank-0 operands broadcast.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, array_hooks
from openjax._src.primitives._util import (
    ANY, BOOL, COMPLEX, FLOAT, INEXACT, INT, INT_OR_BOOL, NUMBER, SIGNED,
    naryop_abstract_eval, quiet, via_float32)

__all__ = []  # filled by _export below


def _export(*names):
  __all__.extend(names)


# ---------------------------------------------------------------- unary table
def _unop(name: str, impl, accepted, *, result_dtype=None, kind="differentiable") -> Primitive:
  p = Primitive(name, kind=kind)
  p.def_impl(lambda x, **params: [impl(x, **params)])
  p.def_abstract_eval(naryop_abstract_eval(name, (accepted,), result_dtype=result_dtype))
  return p


def _real_dtype(aval, **_):
  return np.dtype(np.float32) if aval.dtype == dtypes.complex64 else (
      np.dtype(np.float64) if aval.dtype == dtypes.complex128 else aval.dtype)


def _bool_dtype(*_, **__):
  return dtypes.bool_


_fl = lambda f: quiet(via_float32(f))  # noqa: E731

neg_p = _unop("neg", np.negative, NUMBER, kind="linear")
sign_p = _unop("sign", lambda x: np.sign(x), NUMBER)
floor_p = _unop("floor", _fl(np.floor), FLOAT)
ceil_p = _unop("ceil", _fl(np.ceil), FLOAT)
is_finite_p = _unop("is_finite", _fl(np.isfinite), FLOAT, result_dtype=_bool_dtype,
                    kind="nondifferentiable")
exp_p = _unop("exp", _fl(np.exp), INEXACT)
exp2_p = _unop("exp2", _fl(np.exp2), INEXACT)
log_p = _unop("log", _fl(np.log), INEXACT)
log1p_p = _unop("log1p", _fl(np.log1p), INEXACT)
expm1_p = _unop("expm1", _fl(np.expm1), INEXACT)
tanh_p = _unop("tanh", _fl(np.tanh), INEXACT)
logistic_p = _unop("logistic", _fl(lambda x: 1 / (1 + np.exp(-x))), INEXACT)
sin_p = _unop("sin", _fl(np.sin), INEXACT)
cos_p = _unop("cos", _fl(np.cos), INEXACT)
tan_p = _unop("tan", _fl(np.tan), INEXACT)
asin_p = _unop("asin", _fl(np.arcsin), INEXACT)
acos_p = _unop("acos", _fl(np.arccos), INEXACT)
atan_p = _unop("atan", _fl(np.arctan), INEXACT)
sinh_p = _unop("sinh", _fl(np.sinh), INEXACT)
cosh_p = _unop("cosh", _fl(np.cosh), INEXACT)
asinh_p = _unop("asinh", _fl(np.arcsinh), INEXACT)
acosh_p = _unop("acosh", _fl(np.arccosh), INEXACT)
atanh_p = _unop("atanh", _fl(np.arctanh), INEXACT)
sqrt_p = _unop("sqrt", _fl(np.sqrt), INEXACT)
rsqrt_p = _unop("rsqrt", _fl(lambda x: 1 / np.sqrt(x)), INEXACT)
cbrt_p = _unop("cbrt", _fl(np.cbrt), FLOAT)
abs_p = _unop("abs", lambda x: np.abs(x), NUMBER, result_dtype=_real_dtype)
real_p = _unop("real", np.real, COMPLEX, result_dtype=_real_dtype, kind="linear")
imag_p = _unop("imag", np.imag, COMPLEX, result_dtype=_real_dtype, kind="linear")
conj_p = _unop("conj", lambda x, input_dtype=None: np.conj(x), COMPLEX + FLOAT, kind="linear")
not_p = _unop("not", lambda x: np.logical_not(x) if x.dtype == np.bool_ else np.invert(x),
              INT_OR_BOOL, kind="nondifferentiable")
population_count_p = _unop(
    "population_count", lambda x: np.bitwise_count(x).astype(x.dtype), INT,
    kind="nondifferentiable")
clz_p = _unop("clz", lambda x: _clz(x), INT, kind="nondifferentiable")
square_p = _unop("square", quiet(np.square), NUMBER)


def _clz(x):
  bits = x.dtype.itemsize * 8
  u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
  out = np.full(x.shape, bits, dtype=np.int64)
  nz = u != 0
  # floor(log2) via bit length of each value
  bl = np.zeros(x.shape, dtype=np.int64)
  v = u.copy()
  for shift in (32, 16, 8, 4, 2, 1):
    m = v >= (np.uint64(1) << np.uint64(shift))
    bl = np.where(m, bl + shift, bl)
    v = np.where(m, v >> np.uint64(shift), v)
  out = np.where(nz, bits - 1 - bl, bits)
  return out.astype(x.dtype)


def _round_impl(x, *, rounding_method):
  if int(rounding_method) == 0:   # away from zero
    return np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)).astype(x.dtype)
  return np.round(x)


round_p = _unop("round", _fl(_round_impl), FLOAT)


def _integer_pow_impl(x, *, y):
  if y == 0:
    return np.ones_like(x)
  acc = None
  base = x
  n = abs(y)
  while n:
    if n & 1:
      acc = base if acc is None else acc * base
    n >>= 1
    if n:
      base = base * base
  return (1 / acc).astype(x.dtype) if y < 0 else acc


integer_pow_p = _unop("integer_pow", quiet(via_float32(_integer_pow_impl)), NUMBER)


def _make_unary_wrapper(p: Primitive, doc: str):
  def wrapper(x):
    return p.bind1(x)
  wrapper.__name__ = wrapper.__qualname__ = p.name
  wrapper.__doc__ = doc
  return wrapper


_UNARY_DOCS = {
    "neg": "Elementwise negation: -x.", "sign": "Elementwise sign.",
    "floor": "Elementwise floor.", "ceil": "Elementwise ceiling.",
    "is_finite": "Elementwise isfinite.", "exp": "Elementwise exponential: e**x.",
    "exp2": "Elementwise base-2 exponential: 2**x.", "log": "Elementwise natural logarithm.",
    "log1p": "Elementwise log(1 + x).", "expm1": "Elementwise e**x - 1.",
    "tanh": "Elementwise hyperbolic tangent.", "logistic": "Elementwise logistic (sigmoid) function.",
    "sin": "Elementwise sine.", "cos": "Elementwise cosine.", "tan": "Elementwise tangent.",
    "asin": "Elementwise arc sine.", "acos": "Elementwise arc cosine.",
    "atan": "Elementwise arc tangent.", "sinh": "Elementwise hyperbolic sine.",
    "cosh": "Elementwise hyperbolic cosine.", "asinh": "Elementwise inverse hyperbolic sine.",
    "acosh": "Elementwise inverse hyperbolic cosine.", "atanh": "Elementwise inverse hyperbolic tangent.",
    "sqrt": "Elementwise square root.", "rsqrt": "Elementwise reciprocal square root.",
    "cbrt": "Elementwise cube root.", "abs": "Elementwise absolute value.",
    "real": "Elementwise real part.", "imag": "Elementwise imaginary part.",
    "not": "Elementwise NOT (logical for bool, bitwise for integers).",
    "population_count": "Elementwise popcount.", "clz": "Elementwise count-leading-zeros.",
    "square": "Elementwise square: x**2.",
}

for _p in (neg_p, sign_p, floor_p, ceil_p, is_finite_p, exp_p, exp2_p, log_p, log1p_p,
           expm1_p, tanh_p, logistic_p, sin_p, cos_p, tan_p, asin_p, acos_p, atan_p,
           sinh_p, cosh_p, asinh_p, acosh_p, atanh_p, sqrt_p, rsqrt_p, cbrt_p, abs_p,
           real_p, imag_p, not_p, population_count_p, clz_p, square_p):
  _name = "bitwise_not" if _p.name == "not" else _p.name
  globals()[_name] = _make_unary_wrapper(_p, _UNARY_DOCS[_p.name])
  _export(_name, _p.name + "_p")
globals()["not_p"] = not_p


def conj(x):
  """Elementwise complex conjugate."""
  return conj_p.bind1(x, input_dtype=np.dtype(dtypes.dtype(x)))


def round(x, rounding_method=0):  # noqa: A001 - JAX's name
  """Elementwise round; ``rounding_method`` 0 rounds half away from zero,
  1 (``RoundingMethod.TO_NEAREST_EVEN``) half to even."""
  return round_p.bind1(x, rounding_method=int(rounding_method))


def integer_pow(x, y: int):
  """Elementwise power with a static integer exponent: x**y."""
  return integer_pow_p.bind1(x, y=int(y))


class RoundingMethod:
  AWAY_FROM_ZERO = 0
  TO_NEAREST_EVEN = 1


_export("conj", "conj_p", "round", "round_p", "integer_pow", "integer_pow_p", "RoundingMethod")


# --------------------------------------------------------------- binary table
def _binop(name: str, impl, accepted, *, result_dtype=None, kind="differentiable",
           tip=None) -> Primitive:
  p = Primitive(name, kind=kind)
  p.def_impl(lambda x, y: [impl(x, y)])
  p.def_abstract_eval(naryop_abstract_eval(name, (accepted, accepted),
                                           result_dtype=result_dtype, tip=tip))
  return p


def _int_div(x, y):
  if x.dtype.kind in "iu":
    with np.errstate(all="ignore"):
      safe = np.where(y == 0, 1, y)
      q = np.abs(x) // np.abs(safe) if x.dtype.kind == "i" else x // safe
      if x.dtype.kind == "i":
        q = np.where((x < 0) != (safe < 0), -q, q)
      # XLA: x / 0 is -1 (all bits set) for integers.
      return np.where(y == 0, np.array(-1).astype(x.dtype), q).astype(x.dtype)
  return np.true_divide(x, y).astype(np.result_type(x, y))


def _int_rem(x, y):
  if x.dtype.kind in "iu":
    with np.errstate(all="ignore"):
      safe = np.where(y == 0, 1, y)
      r = np.fmod(x, safe)
      return np.where(y == 0, x, r).astype(x.dtype)
  return np.fmod(x, y)


def _shift(kind):
  def impl(x, y):
    bits = x.dtype.itemsize * 8
    u = np.dtype(f"u{x.dtype.itemsize}")
    ys = y.astype(u) if y.dtype.kind == "i" else y
    big = (ys >= bits) if y.dtype.kind == "u" else ((y < 0) | (y >= bits))
    sh = np.where(big, 0, y).astype(x.dtype)
    if kind == "left":
      out = np.left_shift(x, sh)
      return np.where(big, np.zeros_like(x), out)
    if kind == "right_logical":
      out = np.right_shift(x.view(u), sh.astype(u)).view(x.dtype)
      return np.where(big, np.zeros_like(x), out)
    out = np.right_shift(x, sh)
    fill = np.where(x < 0, np.array(-1).astype(x.dtype), np.zeros_like(x)) if x.dtype.kind == "i" else np.zeros_like(x)
    return np.where(big, fill, out)
  return impl


def _pow_impl(x, y):
  return np.power(x, y)


def _nextafter(x, y):
  return np.nextafter(x, y)


add_p = _binop("add", quiet(np.add), NUMBER, kind="linear", tip="add")
sub_p = _binop("sub", quiet(np.subtract), NUMBER, kind="linear", tip="subtract")
mul_p = _binop("mul", quiet(np.multiply), ANY, tip="multiply")
div_p = _binop("div", quiet(_int_div), NUMBER, tip="divide")
rem_p = _binop("rem", quiet(_int_rem), NUMBER, tip="remainder")
pow_p = Primitive("pow")
pow_p.def_impl(lambda x, y: [quiet(via_float32(_pow_impl))(x, y).astype(x.dtype)])
max_p = _binop("max", quiet(np.maximum), ANY, tip="maximum")
min_p = _binop("min", quiet(np.minimum), ANY, tip="minimum")
atan2_p = _binop("atan2", quiet(via_float32(np.arctan2)), FLOAT, tip="arctan2")
nextafter_p = _binop("nextafter", via_float32(_nextafter), FLOAT, kind="nondifferentiable")
and_p = _binop("and", lambda x, y: np.bitwise_and(x, y), INT_OR_BOOL, kind="nondifferentiable",
               tip="bitwise_and")
or_p = _binop("or", lambda x, y: np.bitwise_or(x, y), INT_OR_BOOL, kind="nondifferentiable",
              tip="bitwise_or")
xor_p = _binop("xor", lambda x, y: np.bitwise_xor(x, y), INT_OR_BOOL, kind="nondifferentiable",
               tip="bitwise_xor")
shift_left_p = _binop("shift_left", _shift("left"), INT, kind="nondifferentiable",
                      tip="left_shift")
shift_right_arithmetic_p = _binop("shift_right_arithmetic", _shift("right_arithmetic"), INT,
                                  kind="nondifferentiable", tip="right_shift")
shift_right_logical_p = _binop("shift_right_logical", _shift("right_logical"), INT,
                               kind="nondifferentiable")
eq_p = _binop("eq", np.equal, ANY, result_dtype=_bool_dtype, kind="nondifferentiable", tip="equal")
ne_p = _binop("ne", np.not_equal, ANY, result_dtype=_bool_dtype, kind="nondifferentiable",
              tip="not_equal")
lt_p = _binop("lt", np.less, ANY, result_dtype=_bool_dtype, kind="nondifferentiable", tip="less")
le_p = _binop("le", np.less_equal, ANY, result_dtype=_bool_dtype, kind="nondifferentiable",
              tip="less_equal")
gt_p = _binop("gt", np.greater, ANY, result_dtype=_bool_dtype, kind="nondifferentiable",
              tip="greater")
ge_p = _binop("ge", np.greater_equal, ANY, result_dtype=_bool_dtype, kind="nondifferentiable",
              tip="greater_equal")


def _pow_abstract_eval(x, y):
  from_rule = naryop_abstract_eval("pow", (INEXACT, INEXACT + INT), require_same=False)
  if dtypes.issubdtype(y.dtype, np.inexact) and y.dtype != x.dtype:
    raise TypeError(f"lax.pow requires arguments to have the same dtypes when the "
                    f"exponent is floating, got {x.dtype.name}, {y.dtype.name}. "
                    "(Tip: jnp.power is a similar function that does automatic "
                    "type promotion on inputs).")
  (out,) = from_rule(x, y)
  return [ShapedArray(out.shape, x.dtype, x.weak_type and y.weak_type)]


pow_p.def_abstract_eval(_pow_abstract_eval)

_BINARY_DOCS = {
    "add": "Elementwise addition: x + y.", "sub": "Elementwise subtraction: x - y.",
    "mul": "Elementwise multiplication: x * y.",
    "div": "Elementwise division: x / y (integer division rounds toward zero).",
    "rem": "Elementwise remainder with the sign of the dividend (C fmod).",
    "pow": "Elementwise power: x ** y.", "max": "Elementwise maximum (NaN propagates).",
    "min": "Elementwise minimum (NaN propagates).", "atan2": "Elementwise arc tangent of x / y.",
    "nextafter": "The next representable value after x in the direction of y.",
    "and": "Elementwise AND (logical for bool, bitwise for integers).",
    "or": "Elementwise OR (logical for bool, bitwise for integers).",
    "xor": "Elementwise XOR (logical for bool, bitwise for integers).",
    "shift_left": "Elementwise left shift.",
    "shift_right_arithmetic": "Elementwise arithmetic right shift.",
    "shift_right_logical": "Elementwise logical right shift.",
    "eq": "Elementwise equals: x == y.", "ne": "Elementwise not-equals: x != y.",
    "lt": "Elementwise less-than: x < y.", "le": "Elementwise less-than-or-equals: x <= y.",
    "gt": "Elementwise greater-than: x > y.", "ge": "Elementwise greater-than-or-equals: x >= y.",
}


def _make_binary_wrapper(p: Primitive, name: str):
  def wrapper(x, y):
    return p.bind1(x, y)
  wrapper.__name__ = wrapper.__qualname__ = name
  wrapper.__doc__ = _BINARY_DOCS[p.name]
  return wrapper


for _p in (add_p, sub_p, mul_p, div_p, rem_p, pow_p, max_p, min_p, atan2_p, nextafter_p,
           and_p, or_p, xor_p, shift_left_p, shift_right_arithmetic_p,
           shift_right_logical_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
  _name = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor"}.get(_p.name, _p.name)
  globals()[_name] = _make_binary_wrapper(_p, _name)
  globals()[_p.name + "_p"] = _p
  _export(_name, _p.name + "_p")


# ----------------------------------------------------- convert_element_type
convert_element_type_p = Primitive("convert_element_type")


def _convert_impl(x, *, new_dtype, weak_type, sharding=None):
  return [convert_numpy(x, new_dtype)]


def convert_numpy(x: np.ndarray, new_dtype: np.dtype) -> np.ndarray:
  """NumPy cast with XLA's semantics: float->int saturates and NaN->0;
  complex->real drops the imaginary part; anything->bool is ``x != 0``."""
  x = np.asarray(x)
  new_dtype = np.dtype(new_dtype)
  if x.dtype == new_dtype:
    return x
  if new_dtype == np.bool_:
    return x != 0
  src_kind, dst_kind = dtypes.kind(x.dtype), dtypes.kind(new_dtype)
  with np.errstate(all="ignore"):
    if src_kind == "c" and dst_kind != "c":
      x = np.real(x)
      src_kind = "f"
    if src_kind == "f" and dst_kind in "iu":
      info = np.iinfo(new_dtype) if new_dtype not in dtypes.custom_int_dtypes else dtypes.iinfo(new_dtype)
      xf = np.asarray(x, np.float64)
      xf = np.where(np.isnan(xf), 0, np.clip(np.trunc(xf), info.min, info.max))
      # values that round up to 2**63 in float64 still fit after the clip below
      out = np.where(xf >= float(info.max), info.max, xf.astype(np.float64))
      return np.asarray(out).astype(new_dtype) if new_dtype.itemsize < 8 else _f64_to_i64(xf, new_dtype, info)
    if x.dtype in dtypes.custom_float_dtypes and new_dtype in dtypes.custom_float_dtypes:
      return x.astype(np.float32).astype(new_dtype)
    return x.astype(new_dtype)


def _f64_to_i64(xf, new_dtype, info):
  hi = xf >= 2.0 ** (new_dtype.itemsize * 8 - (1 if new_dtype.kind == "i" else 0))
  out = np.where(hi, 0, xf).astype(new_dtype)
  return np.where(hi, np.array(info.max, new_dtype), out)


def _convert_abstract_eval(x, *, new_dtype, weak_type, sharding=None):
  return [ShapedArray(x.shape, new_dtype, weak_type)]


convert_element_type_p.def_impl(_convert_impl)
convert_element_type_p.def_abstract_eval(_convert_abstract_eval)


def convert_element_type(operand, new_dtype):
  """Elementwise cast to ``new_dtype`` (x64-canonicalised), like ``lax.convert_element_type``."""
  new_dtype = dtypes.explicit_dtype(new_dtype, "convert_element_type")
  return _convert_element_type(operand, new_dtype, weak_type=False)


def _convert_element_type(operand, new_dtype=None, weak_type: bool = False):
  """Cast ``operand``; skips the primitive when nothing would change. Python
  scalars are converted here, at trace time, so they stay literals."""
  from_dtype = dtypes.dtype(operand)
  new_dtype = from_dtype if new_dtype is None else np.dtype(new_dtype)
  if type(operand) in dtypes.python_scalar_dtypes:
    return np.asarray(operand).astype(new_dtype) if not weak_type else _weak_scalar(operand, new_dtype)
  old_weak = dtypes.is_weakly_typed(operand)
  if from_dtype == new_dtype and old_weak == weak_type and hasattr(operand, "aval"):
    return operand
  return convert_element_type_p.bind1(operand, new_dtype=new_dtype, weak_type=bool(weak_type),
                                      sharding=None)


def _weak_scalar(x, dt):
  # A weakly typed constant of dtype ``dt``: a 0-d Array, which tracing turns
  # into a literal (no equation), as JAX does for Python scalars.
  arr = np.asarray(x)
  if dtypes.kind(dt) not in "fc" and isinstance(x, float):
    arr = np.trunc(arr)
  return array_hooks.make_array(convert_numpy(arr, dt), ShapedArray((), dt, True))


bitcast_convert_type_p = Primitive("bitcast_convert_type", kind="nondifferentiable")


@bitcast_convert_type_p.def_impl
def _bitcast_impl(x, *, new_dtype):
  x = np.ascontiguousarray(x)
  old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
  if old == new:
    return [x.view(new_dtype)]
  if old > new:
    return [x.view(new_dtype).reshape(x.shape + (old // new,))]
  return [x.view(new_dtype).reshape(x.shape[:-1])]


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_abstract_eval(x, *, new_dtype):
  old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
  if old == new:
    shape = x.shape
  elif old > new:
    shape = x.shape + (old // new,)
  else:
    if not x.shape or x.shape[-1] != new // old:
      raise TypeError(f"bitcast_convert_type: {x.str_short()} cannot be bitcast to "
                      f"{np.dtype(new_dtype).name}: the last dimension must be {new // old}.")
    shape = x.shape[:-1]
  return [ShapedArray(shape, new_dtype, False)]


def bitcast_convert_type(operand, new_dtype):
  """Reinterpret the bits of ``operand`` as ``new_dtype``."""
  return bitcast_convert_type_p.bind1(operand, new_dtype=dtypes.explicit_dtype(new_dtype))


_export("convert_element_type", "convert_element_type_p", "bitcast_convert_type",
        "bitcast_convert_type_p")


# -------------------------------------------------------------------- select_n
select_n_p = Primitive("select_n")


@select_n_p.def_impl
def _select_n_impl(which, *cases):
  if which.dtype == np.bool_:
    return [np.where(which, cases[1], cases[0]) if len(cases) == 2 else np.asarray(cases[0])]
  idx = np.clip(which, 0, len(cases) - 1)
  return [np.choose(idx, cases)]


@select_n_p.def_abstract_eval
def _select_n_abstract_eval(which, *cases):
  if not cases:
    raise TypeError("select_n must have at least one case")
  if any(c.shape != cases[0].shape for c in cases):
    raise TypeError("select_n cases must have the same shapes, got "
                    f"[{', '.join(str(c.shape) for c in cases)}].")
  if any(c.dtype != cases[0].dtype for c in cases):
    raise TypeError("select_n cases must have the same dtypes, got "
                    f"[{', '.join(c.dtype.name for c in cases)}].")
  if which.dtype == np.bool_:
    if len(cases) > 2:
      raise TypeError("select_n with boolean which cannot have > 2 cases, got "
                      f"{len(cases)}.")
  elif not dtypes.issubdtype(which.dtype, np.integer):
    raise TypeError(f"select_n which must be boolean or integer type, got {which.dtype.name}.")
  if which.shape and which.shape != cases[0].shape:
    raise TypeError("select_n which must be scalar or have the same shape as cases, got "
                    f"which shape {which.shape} but case shape {cases[0].shape}.")
  weak = all(c.weak_type for c in cases)
  return [ShapedArray(cases[0].shape, cases[0].dtype, weak)]


def select_n(which, *cases):
  """``cases[which]`` elementwise; ``which`` is bool (two cases) or int."""
  return select_n_p.bind1(which, *cases)


def select(pred, on_true, on_false):
  """``on_true`` where ``pred`` else ``on_false`` (``select_n(pred, on_false, on_true)``)."""
  return select_n_p.bind1(pred, on_false, on_true)


# ---------------------------------------------------------------------- clamp
clamp_p = Primitive("clamp")


@clamp_p.def_impl
def _clamp_impl(lo, x, hi):
  return [np.minimum(np.maximum(x, lo), hi).astype(x.dtype)]


@clamp_p.def_abstract_eval
def _clamp_abstract_eval(lo, x, hi):
  for name, a in (("min", lo), ("max", hi)):
    if a.shape and a.shape != x.shape:
      raise TypeError(f"clamp requires {name}.shape == operand.shape or {name}.shape == (), "
                      f"got {a.shape} and {x.shape}.")
  if lo.dtype != x.dtype or hi.dtype != x.dtype:
    raise TypeError(f"lax.clamp requires arguments to have the same dtypes, got "
                    f"{lo.dtype.name}, {x.dtype.name}, {hi.dtype.name}. (Tip: jnp.clip "
                    "is a similar function that does automatic type promotion on inputs).")
  return [ShapedArray(x.shape, x.dtype, x.weak_type)]


def clamp(min, x, max):  # noqa: A002 - JAX's parameter names
  """Elementwise ``minimum(maximum(x, min), max)``."""
  return clamp_p.bind1(min, x, max)


_export("select_n", "select_n_p", "select", "clamp", "clamp_p")
