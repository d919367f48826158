"""StableHLO lowering rules of the elementwise and special-function primitives.

The rules reproduce the NumPy ``impl`` rules (XLA's semantics) exactly where
XLA defines them: integer division and remainder by zero, ``INT_MIN / -1``,
shifts by the bit width or more, NaN-propagating max/min (NumPy's choice
among equal signed zeros, lexicographic for complex), rounding, ``sign`` of
unsigned integers. Narrow floats (float16, bfloat16, float8) compute in
float32 and round back, as the impls do (exact for +, -, *, / and sqrt;
the transcendental functions are as accurate as float32's).

lax n-ary ops broadcast rank-0 operands and size-1 dimensions implicitly;
``operands_to_out`` broadcasts them to the result shape first.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.lowering.builder import enum_attr
from openjax._src.lowering.mlir_types import split_tensor_type
from openjax._src.primitives.base.convert import lower_convert

F32 = np.dtype(np.float32)


# ------------------------------------------------------------------ helpers
def shape_of(x) -> tuple:
  return split_tensor_type(x.type)[0]


def to_shape(ctx, x, shape):
  """``x`` broadcast to ``shape`` (from rank 0 or equal-rank size-1 dims)."""
  xs = shape_of(x)
  shape = tuple(shape)
  if xs == shape:
    return x
  return ctx.broadcast_in_dim(x, shape, () if not xs else tuple(range(len(shape))))


def operands_to_out(ctx, operands):
  shape = ctx.avals_out[0].shape
  return [to_shape(ctx, x, shape) for x in operands]


def is_narrow_float(dt) -> bool:
  dt = np.dtype(dt)
  return dt == np.float16 or dt in dtypes.custom_float_dtypes


def compute_dtype(dt):
  """The dtype an op computes in: float32 for the narrow floats."""
  return F32 if is_narrow_float(dt) else np.dtype(dt)


def ttype(ctx, x, dtype):
  """The tensor type with ``x``'s shape and ``dtype``."""
  return ctx.tensor_type(shape_of(x), dtype)


def op(ctx, name, operands, dtype=None, **attrs):
  """``name`` on ``operands``; the result has the first operand's shape and
  ``dtype`` (default: the first operand's element type)."""
  ty = operands[0].type if dtype is None else ttype(ctx, operands[0], dtype)
  return ctx.op(name, list(operands), ty, attrs=attrs or None)


def const_like(ctx, x, value, dtype):
  return ctx.full(value, shape_of(x), dtype)


def compare_type(dtype) -> str:
  k = dtypes.kind(np.dtype(dtype))
  if k in "fc" or np.dtype(dtype) in dtypes.custom_float_dtypes:
    return "FLOAT"
  return "SIGNED" if k == "i" else "UNSIGNED"


def compare(ctx, x, y, direction, dtype):
  """``x <direction> y`` as a bool tensor; complex EQ/NE compare the parts."""
  dtype = np.dtype(dtype)
  if dtypes.kind(dtype) == "c" and direction in ("EQ", "NE"):
    fdt = np.finfo(dtype).dtype
    re = [op(ctx, "stablehlo.real", [v], fdt) for v in (x, y)]
    im = [op(ctx, "stablehlo.imag", [v], fdt) for v in (x, y)]
    a, b = compare(ctx, *re, direction, fdt), compare(ctx, *im, direction, fdt)
    return op(ctx, "stablehlo.and" if direction == "EQ" else "stablehlo.or", [a, b])
  return op(ctx, "stablehlo.compare", [x, y], np.bool_,
            comparison_direction=enum_attr("comparison_direction", direction),
            compare_type=enum_attr("comparison_type", compare_type(dtype)))


def select(ctx, pred, on_true, on_false):
  return ctx.op("stablehlo.select", [pred, on_true, on_false], on_true.type)


def is_nan(ctx, x, dtype):
  return compare(ctx, x, x, "NE", dtype)


def upcast(ctx, x, dtype):
  """``x`` (of ``dtype``) in its compute dtype."""
  cdt = compute_dtype(dtype)
  return x if cdt == np.dtype(dtype) else lower_convert(ctx, x, dtype, cdt)


def downcast(ctx, x, dtype):
  cdt = compute_dtype(dtype)
  if cdt == np.dtype(dtype):
    return x
  if np.dtype(dtype) == dtypes.bfloat16:
    # IREE drops a bfloat16 rounding between two float32 computations (28% of
    # (x * a) * b differed from XLA's, which rounds after every op), so the
    # value is first rounded to bfloat16 in float32 (reduce_precision, which
    # IREE keeps); the convert is then exact, whatever IREE folds.
    x = reduce_precision_rule(ctx, x, exponent_bits=8, mantissa_bits=7)[0]
  return lower_convert(ctx, x, cdt, dtype)


def unsigned_dtype(dt):
  return np.dtype(f"u{np.dtype(dt).itemsize}")


# ------------------------------------------------------------ rule factories
def unary(name, *, complex_name=None):
  """A unary rule emitting ``name`` (in float32 for narrow floats; complex
  operands use ``complex_name`` when given)."""
  def rule(ctx, x, **params):
    dt = ctx.avals_in[0].dtype
    nm = complex_name if complex_name and dtypes.kind(dt) == "c" else name
    y = op(ctx, nm, [upcast(ctx, x, dt)], compute_dtype(ctx.avals_out[0].dtype))
    return [downcast(ctx, y, ctx.avals_out[0].dtype)]
  return rule


def negate(ctx, x, **params):
  """-x. Real floats multiply by -1 (the same bits, -0.0 included): IREE
  fuses ``stablehlo.negate`` after a transcendental and a reduction into a
  loop it does not vectorize (sum(-log(y)) over 10M: 144 ms vs 12 ms)."""
  dt = ctx.avals_in[0].dtype
  if dtypes.kind(dt) != "f":
    return unary("stablehlo.negate")(ctx, x)
  cdt = compute_dtype(ctx.avals_out[0].dtype)
  xc = upcast(ctx, x, dt)
  minus_one = ctx.full(-1.0, ctx.avals_out[0].shape, cdt)
  return [downcast(ctx, op(ctx, "stablehlo.multiply", [minus_one, xc], cdt),
                   ctx.avals_out[0].dtype)]


def binary(name):
  """A binary rule emitting ``name`` on operands broadcast to the result
  shape (float32 for narrow floats)."""
  def rule(ctx, x, y, **params):
    dt = ctx.avals_in[0].dtype
    x, y = (upcast(ctx, v, dt) for v in operands_to_out(ctx, [x, y]))
    return [downcast(ctx, op(ctx, name, [x, y]), ctx.avals_out[0].dtype)]
  return rule


def compare_rule(direction):
  def rule(ctx, x, y):
    dt = ctx.avals_in[0].dtype
    x, y = (upcast(ctx, v, dt) for v in operands_to_out(ctx, [x, y]))
    return [compare(ctx, x, y, direction, compute_dtype(dt))]
  return rule


# ---------------------------------------------------------- complex helpers
def parts(ctx, z, dt):
  """(real, imag) of the complex tensor ``z`` of dtype ``dt``."""
  fdt = np.finfo(np.dtype(dt)).dtype
  return op(ctx, "stablehlo.real", [z], fdt), op(ctx, "stablehlo.imag", [z], fdt)


def make_complex(ctx, re, im, dt):
  return op(ctx, "stablehlo.complex", [re, im], dt)


def complex_div(ctx, a, b, dt):
  """NumPy's complex division (Smith's algorithm; x / 0 is (inf or NaN)
  per part, where IREE's gives NaN)."""
  fdt = np.finfo(np.dtype(dt)).dtype
  (ar, ai), (br, bi) = parts(ctx, a, dt), parts(ctx, b, dt)
  f = lambda name, *xs: op(ctx, f"stablehlo.{name}", list(xs))  # noqa: E731
  abs_r, abs_i = f("abs", br), f("abs", bi)
  real_big = compare(ctx, abs_r, abs_i, "GE", fdt)
  zero = op(ctx, "stablehlo.and", [compare(ctx, abs_r, const_like(ctx, br, 0, fdt), "EQ", fdt),
                                   compare(ctx, abs_i, const_like(ctx, bi, 0, fdt), "EQ", fdt)])
  one = const_like(ctx, br, 1, fdt)
  # |br| >= |bi|: rat = bi / br, scl = 1 / (br + bi rat)
  rat1 = f("divide", bi, br)
  scl1 = f("divide", one, f("add", br, f("multiply", bi, rat1)))
  r1 = f("multiply", f("add", ar, f("multiply", ai, rat1)), scl1)
  i1 = f("multiply", f("subtract", ai, f("multiply", ar, rat1)), scl1)
  # otherwise: rat = br / bi, scl = 1 / (bi + br rat)
  rat2 = f("divide", br, bi)
  scl2 = f("divide", one, f("add", bi, f("multiply", br, rat2)))
  r2 = f("multiply", f("add", f("multiply", ar, rat2), ai), scl2)
  i2 = f("multiply", f("subtract", f("multiply", ai, rat2), ar), scl2)
  r0, i0 = f("divide", ar, abs_r), f("divide", ai, abs_r)
  re = select(ctx, zero, r0, select(ctx, real_big, r1, r2))
  im = select(ctx, zero, i0, select(ctx, real_big, i1, i2))
  return make_complex(ctx, re, im, dt)


def copysign(ctx, mag, sgn, dt):
  """``mag`` with the sign bit of ``sgn`` (float tensors of dtype ``dt``)."""
  udt = unsigned_dtype(dt)
  m, s = (op(ctx, "stablehlo.bitcast_convert", [v], udt) for v in (mag, sgn))
  top = const_like(ctx, m, 1 << (np.dtype(udt).itemsize * 8 - 1), udt)
  low = const_like(ctx, m, (1 << (np.dtype(udt).itemsize * 8 - 1)) - 1, udt)
  bits = op(ctx, "stablehlo.or", [op(ctx, "stablehlo.and", [m, low]),
                                  op(ctx, "stablehlo.and", [s, top])])
  return op(ctx, "stablehlo.bitcast_convert", [bits], dt)


def sign_bit(ctx, x, dt):
  """Whether the sign bit of the float tensor ``x`` is set."""
  idt = np.dtype(f"i{np.dtype(dt).itemsize}")
  bits = op(ctx, "stablehlo.bitcast_convert", [x], idt)
  return compare(ctx, bits, const_like(ctx, bits, 0, idt), "LT", idt)


def is_inf(ctx, x, dt):
  return compare(ctx, op(ctx, "stablehlo.abs", [x]), const_like(ctx, x, np.inf, dt), "EQ", dt)


def real_atan2(ctx, a, b, dt):
  """``arctan2(a, b)`` (float tensors of dtype ``dt``) with C's values at
  signed zeros and infinities, where IREE's atan2 gives NaN."""
  at = op(ctx, "stablehlo.atan2", [a, b])
  b_neg = sign_bit(ctx, b, dt)
  pi, pi4 = const_like(ctx, a, np.pi, dt), const_like(ctx, a, np.pi / 4, dt)
  zeros = op(ctx, "stablehlo.and", [compare(ctx, a, const_like(ctx, a, 0, dt), "EQ", dt),
                                    op(ctx, "stablehlo.not", [is_nan(ctx, b, dt)])])
  at_zero = select(ctx, b_neg, pi, const_like(ctx, a, 0, dt))
  infs = op(ctx, "stablehlo.and", [is_inf(ctx, a, dt), is_inf(ctx, b, dt)])
  at_inf = select(ctx, b_neg, const_like(ctx, a, 3 * np.pi / 4, dt), pi4)
  a_inf = op(ctx, "stablehlo.and", [is_inf(ctx, a, dt),
                                    op(ctx, "stablehlo.not", [is_inf(ctx, b, dt)])])
  b_inf = op(ctx, "stablehlo.and", [is_inf(ctx, b, dt),
                                    op(ctx, "stablehlo.not", [is_inf(ctx, a, dt)])])
  finite_b = op(ctx, "stablehlo.not", [is_nan(ctx, b, dt)])
  a_inf = op(ctx, "stablehlo.and", [a_inf, finite_b])
  finite_a = op(ctx, "stablehlo.not", [is_nan(ctx, a, dt)])
  b_inf = op(ctx, "stablehlo.and", [b_inf, finite_a])
  mag = select(ctx, zeros, at_zero, select(ctx, infs, at_inf, at))
  mag = select(ctx, a_inf, const_like(ctx, a, np.pi / 2, dt), mag)
  mag = select(ctx, b_inf, at_zero, mag)
  special = op(ctx, "stablehlo.or", [op(ctx, "stablehlo.or", [zeros, infs]),
                                     op(ctx, "stablehlo.or", [a_inf, b_inf])])
  # The result's sign is a's (IREE's atan2(-2, -3e38) was +pi: the ratio
  # flushed to +0); copysign keeps a NaN a NaN.
  return copysign(ctx, select(ctx, special, mag, at), a, dt)


# ------------------------------------------------------------ unary rules
def sign_rule(ctx, x):
  dt = np.dtype(ctx.avals_in[0].dtype)
  if dtypes.kind(dt) == "u":
    nz = compare(ctx, x, const_like(ctx, x, 0, dt), "NE", dt)
    return [select(ctx, nz, const_like(ctx, x, 1, dt), const_like(ctx, x, 0, dt))]
  if dtypes.kind(dt) == "c":   # NumPy's: x / |x|, 0 at 0, +-1 or +-i at one infinite part
    fdt = np.finfo(dt).dtype
    re, im = parts(ctx, x, dt)
    mag = complex_abs(ctx, x, dt)
    zero = compare(ctx, mag, const_like(ctx, mag, 0, fdt), "EQ", fdt)
    safe = select(ctx, zero, const_like(ctx, mag, 1, fdt), mag)
    r, i = (op(ctx, "stablehlo.divide", [v, safe]) for v in (re, im))
    unit = lambda v: op(ctx, "stablehlo.sign", [v])  # noqa: E731
    zf = const_like(ctx, re, 0, fdt)
    re_inf, im_inf = is_inf(ctx, re, fdt), is_inf(ctx, im, fdt)
    r = select(ctx, re_inf, unit(re), select(ctx, im_inf, zf, r))
    i = select(ctx, re_inf, zf, select(ctx, im_inf, unit(im), i))
    both = op(ctx, "stablehlo.and", [re_inf, im_inf])
    nan = const_like(ctx, re, np.nan, fdt)
    r, i = select(ctx, both, nan, r), select(ctx, both, nan, i)
    return [select(ctx, zero, const_like(ctx, x, 0, dt), make_complex(ctx, r, i, dt))]
  return unary("stablehlo.sign")(ctx, x)


def round_rule(ctx, x, *, rounding_method):
  name = "stablehlo.round_nearest_even" if int(rounding_method) == 1 else \
      "stablehlo.round_nearest_afz"
  return unary(name)(ctx, x)


def abs_rule(ctx, x):
  dt = np.dtype(ctx.avals_in[0].dtype)
  if dtypes.kind(dt) == "c":
    return [complex_abs(ctx, x, dt)]
  return unary("stablehlo.abs")(ctx, x)


def complex_abs(ctx, x, dt):
  """hypot(re, im) scaled as XLA computes it, max * sqrt(1 + (min / max)**2):
  IREE's complex abs squares the parts and overflows (|1e30 + 0j| was inf);
  inf when a part is infinite, even beside a NaN; NaN for a NaN part."""
  fdt = np.finfo(np.dtype(dt)).dtype
  f = lambda name, *xs: op(ctx, f"stablehlo.{name}", list(xs))  # noqa: E731
  re, im = parts(ctx, x, dt)
  a, b = f("abs", re), f("abs", im)
  big, small = f("maximum", a, b), f("minimum", a, b)
  zero, one = const_like(ctx, re, 0, fdt), const_like(ctx, re, 1, fdt)
  ratio = f("divide", small, big)
  scaled = f("multiply", big, f("sqrt", f("add", one, f("multiply", ratio, ratio))))
  # big == 0: 0 (not 0/0); a NaN part: NaN (maximum/minimum propagate it).
  out = select(ctx, compare(ctx, big, zero, "EQ", fdt), zero, scaled)
  nan = op(ctx, "stablehlo.or", [is_nan(ctx, re, fdt), is_nan(ctx, im, fdt)])
  out = select(ctx, nan, const_like(ctx, re, np.nan, fdt), out)
  inf = op(ctx, "stablehlo.or", [is_inf(ctx, re, fdt), is_inf(ctx, im, fdt)])
  return select(ctx, inf, const_like(ctx, re, np.inf, fdt), out)


def conj_rule(ctx, x, *, input_dtype):
  out = ctx.avals_out[0].dtype
  fdt = np.finfo(out).dtype
  if dtypes.kind(ctx.avals_in[0].dtype) != "c":
    re = lower_convert(ctx, x, ctx.avals_in[0].dtype, fdt)
    return [op(ctx, "stablehlo.complex", [re, const_like(ctx, re, 0, fdt)], out)]
  re = op(ctx, "stablehlo.real", [x], fdt)
  im = op(ctx, "stablehlo.negate", [op(ctx, "stablehlo.imag", [x], fdt)])
  return [op(ctx, "stablehlo.complex", [re, im], out)]


def square_rule(ctx, x):
  dt = ctx.avals_in[0].dtype
  xc = upcast(ctx, x, dt)
  return [downcast(ctx, op(ctx, "stablehlo.multiply", [xc, xc]), dt)]


def integer_pow_rule(ctx, x, *, y):
  dt = ctx.avals_in[0].dtype
  xc = upcast(ctx, x, dt)
  cdt = compute_dtype(dt)
  if y == 0:
    return [const_like(ctx, x, 1, dt)]
  acc, base, n = None, xc, -y if y < 0 else y
  while n:                           # square-and-multiply, as the impl
    if n & 1:
      acc = base if acc is None else op(ctx, "stablehlo.multiply", [acc, base])
    n >>= 1
    if n:
      base = op(ctx, "stablehlo.multiply", [base, base])
  if y < 0 and dtypes.kind(cdt) == "c":
    acc = complex_div(ctx, const_like(ctx, acc, 1, cdt), acc, cdt)
  elif y < 0:
    acc = op(ctx, "stablehlo.divide", [const_like(ctx, acc, 1, cdt), acc])
  return [downcast(ctx, acc, dt)]


def not_rule(ctx, x):
  return [op(ctx, "stablehlo.not", [x])]


# ------------------------------------------------------------ binary rules
def mul_rule(ctx, x, y, *, out_dtype=None):
  if out_dtype is not None:
    x, y = (lower_convert(ctx, v, a.dtype, out_dtype) for v, a in zip((x, y), ctx.avals_in))
  dt = ctx.avals_out[0].dtype
  x, y = (upcast(ctx, v, dt) for v in operands_to_out(ctx, [x, y]))
  return [downcast(ctx, op(ctx, "stablehlo.multiply", [x, y]), dt)]


def _int_div_guard(ctx, x, y, dt):
  """(y == 0, y with 0 and the -1 of ``INT_MIN / -1`` replaced by 1)."""
  zero = compare(ctx, y, const_like(ctx, y, 0, dt), "EQ", dt)
  bad = zero
  if dtypes.kind(dt) == "i":
    ovf = op(ctx, "stablehlo.and", [
        compare(ctx, x, const_like(ctx, x, dtypes.iinfo(dt).min, dt), "EQ", dt),
        compare(ctx, y, const_like(ctx, y, -1, dt), "EQ", dt)])
    bad = op(ctx, "stablehlo.or", [zero, ovf])
  return zero, select(ctx, bad, const_like(ctx, y, 1, dt), y)


def div_rule(ctx, x, y):
  dt = np.dtype(ctx.avals_in[0].dtype)
  if dtypes.kind(dt) == "c":
    return [complex_div(ctx, *operands_to_out(ctx, [x, y]), dt)]
  if dtypes.kind(dt) not in "iu":
    return binary("stablehlo.divide")(ctx, x, y)
  x, y = operands_to_out(ctx, [x, y])
  zero, safe = _int_div_guard(ctx, x, y, dt)
  q = op(ctx, "stablehlo.divide", [x, safe])   # INT_MIN / 1 == INT_MIN, as the impl
  return [select(ctx, zero, const_like(ctx, x, np.array(-1).astype(dt), dt), q)]


def rem_rule(ctx, x, y):
  dt = np.dtype(ctx.avals_in[0].dtype)
  if dtypes.kind(dt) not in "iu":
    return binary("stablehlo.remainder")(ctx, x, y)
  x, y = operands_to_out(ctx, [x, y])
  zero, safe = _int_div_guard(ctx, x, y, dt)
  return [select(ctx, zero, x, op(ctx, "stablehlo.remainder", [x, safe]))]


def _minmax(ctx, x, y, dt, is_max):
  """NumPy's maximum/minimum: NaN propagates (the first NaN), ties pick x."""
  dt = np.dtype(dt)
  k = dtypes.kind(dt)
  if dt == np.bool_:
    return op(ctx, "stablehlo.or" if is_max else "stablehlo.and", [x, y])
  if k in "iu":
    return op(ctx, "stablehlo.maximum" if is_max else "stablehlo.minimum", [x, y])
  d = "GE" if is_max else "LE"
  if k == "c":   # lexicographic; NumPy's CGE/CLE with its NaN handling
    fdt = np.finfo(dt).dtype
    xr, xi, yr, yi = (op(ctx, f"stablehlo.{p}", [v], fdt) for v in (x, y) for p in ("real", "imag"))
    strict = "GT" if is_max else "LT"
    both_ok = op(ctx, "stablehlo.not", [op(ctx, "stablehlo.or", [is_nan(ctx, xi, fdt),
                                                                 is_nan(ctx, yi, fdt)])])
    c1 = op(ctx, "stablehlo.and", [compare(ctx, xr, yr, strict, fdt), both_ok])
    c2 = op(ctx, "stablehlo.and", [compare(ctx, xr, yr, "EQ", fdt), compare(ctx, xi, yi, d, fdt)])
    x_nan = op(ctx, "stablehlo.or", [is_nan(ctx, xr, fdt), is_nan(ctx, xi, fdt)])
    pick_x = op(ctx, "stablehlo.or", [x_nan, op(ctx, "stablehlo.or", [c1, c2])])
    return select(ctx, pick_x, x, y)
  pick_x = op(ctx, "stablehlo.or", [compare(ctx, x, y, d, dt), is_nan(ctx, x, dt)])
  return select(ctx, pick_x, x, y)


def minmax_rule(is_max):
  def rule(ctx, x, y):
    dt = ctx.avals_in[0].dtype
    x, y = (upcast(ctx, v, dt) for v in operands_to_out(ctx, [x, y]))
    return [downcast(ctx, _minmax(ctx, x, y, compute_dtype(dt), is_max), dt)]
  return rule


def _shift_big(ctx, y, dt):
  """(y read as unsigned >= the bit width, y with those amounts set to 0)."""
  bits = np.dtype(dt).itemsize * 8
  udt = unsigned_dtype(dt)
  yu = y if udt == np.dtype(dt) else op(ctx, "stablehlo.bitcast_convert", [y], udt)
  big = compare(ctx, yu, const_like(ctx, yu, bits, udt), "GE", udt)
  return big, select(ctx, big, const_like(ctx, y, 0, dt), y)


def shift_rule(kind):
  def rule(ctx, x, y):
    dt = np.dtype(ctx.avals_in[0].dtype)
    x, y = operands_to_out(ctx, [x, y])
    big, amount = _shift_big(ctx, y, dt)
    zero = const_like(ctx, x, 0, dt)
    if kind == "left":
      return [select(ctx, big, zero, op(ctx, "stablehlo.shift_left", [x, amount]))]
    if kind == "logical" or dtypes.kind(dt) == "u":
      return [select(ctx, big, zero, op(ctx, "stablehlo.shift_right_logical", [x, amount]))]
    fill = select(ctx, compare(ctx, x, zero, "LT", dt), const_like(ctx, x, -1, dt), zero)
    return [select(ctx, big, fill, op(ctx, "stablehlo.shift_right_arithmetic", [x, amount]))]
  return rule


def complex_rule(ctx, x, y):
  x, y = operands_to_out(ctx, [x, y])
  return [op(ctx, "stablehlo.complex", [x, y], ctx.avals_out[0].dtype)]


def nextafter_rule(ctx, x, y):
  """On the bits, in the operands' own dtype (float32 would round away the step)."""
  dt = np.dtype(ctx.avals_in[0].dtype)
  x, y = operands_to_out(ctx, [x, y])
  cdt = compute_dtype(dt)
  xc, yc = upcast(ctx, x, dt), upcast(ctx, y, dt)
  idt = np.dtype(f"i{dt.itemsize}")
  bits = op(ctx, "stablehlo.bitcast_convert", [x], idt)
  one = const_like(ctx, bits, 1, idt)
  zero_i = const_like(ctx, bits, 0, idt)
  # Away from zero when (x < y) == (x > 0); the magnitude's bits move by one.
  x_pos = compare(ctx, bits, zero_i, "GE", idt)          # sign bit clear
  up = compare(ctx, xc, yc, "LT", cdt)
  away = compare(ctx, up, x_pos, "EQ", np.bool_)
  stepped = select(ctx, away, op(ctx, "stablehlo.add", [bits, one]),
                   op(ctx, "stablehlo.subtract", [bits, one]))
  # x == 0: the smallest subnormal with y's sign.
  ybits = op(ctx, "stablehlo.bitcast_convert", [y], idt)
  sign_mask = const_like(ctx, bits, dtypes.iinfo(idt).min, idt)
  tiny = op(ctx, "stablehlo.or", [op(ctx, "stablehlo.and", [ybits, sign_mask]), one])
  if dt in dtypes.custom_float_dtypes and dt != dtypes.bfloat16:
    raise NotImplementedError(f"nextafter lowering for {dt.name}")
  x_zero = compare(ctx, xc, const_like(ctx, xc, 0, cdt), "EQ", cdt)
  out = op(ctx, "stablehlo.bitcast_convert", [select(ctx, x_zero, tiny, stepped)], dt)
  eq = compare(ctx, xc, yc, "EQ", cdt)
  out = select(ctx, eq, y, out)                            # x == y: y
  nan = op(ctx, "stablehlo.or", [is_nan(ctx, xc, cdt), is_nan(ctx, yc, cdt)])
  return [select(ctx, nan, const_like(ctx, x, np.nan, dt), out)]


def mulhi_rule(ctx, x, y):
  dt = np.dtype(ctx.avals_in[0].dtype)
  x, y = operands_to_out(ctx, [x, y])
  bits = dt.itemsize * 8
  signed = dtypes.kind(dt) == "i"
  if bits < 64:
    wide = np.dtype(np.int64 if signed else np.uint64)
    xw, yw = (op(ctx, "stablehlo.convert", [v], wide) for v in (x, y))
    p = op(ctx, "stablehlo.multiply", [xw, yw])
    sh = "stablehlo.shift_right_arithmetic" if signed else "stablehlo.shift_right_logical"
    return [op(ctx, "stablehlo.convert", [op(ctx, sh, [p, const_like(ctx, p, bits, wide)])], dt)]
  u = np.dtype(np.uint64)
  xu, yu = (op(ctx, "stablehlo.bitcast_convert", [v], u) if signed else v for v in (x, y))
  c32, mask = const_like(ctx, xu, 32, u), const_like(ctx, xu, 0xFFFFFFFF, u)
  lo = lambda v: op(ctx, "stablehlo.and", [v, mask])  # noqa: E731
  hi = lambda v: op(ctx, "stablehlo.shift_right_logical", [v, c32])  # noqa: E731
  mul = lambda a, b: op(ctx, "stablehlo.multiply", [a, b])  # noqa: E731
  add = lambda a, b: op(ctx, "stablehlo.add", [a, b])  # noqa: E731
  x0, x1, y0, y1 = lo(xu), hi(xu), lo(yu), hi(yu)
  ll, hl, lh, hh = mul(x0, y0), mul(x1, y0), mul(x0, y1), mul(x1, y1)
  cross = add(add(hi(ll), lo(hl)), lh)
  out = add(add(hi(hl), hi(cross)), hh)
  if signed:   # signed high half = unsigned high half - (x < 0 ? y : 0) - (y < 0 ? x : 0)
    zero = const_like(ctx, x, 0, dt)
    zu = const_like(ctx, xu, 0, u)
    out = op(ctx, "stablehlo.subtract", [out, select(ctx, compare(ctx, x, zero, "LT", dt), yu, zu)])
    out = op(ctx, "stablehlo.subtract", [out, select(ctx, compare(ctx, y, zero, "LT", dt), xu, zu)])
    out = op(ctx, "stablehlo.bitcast_convert", [out], dt)
  return [out]


# ------------------------------------------------------------ other rules
def select_n_rule(ctx, which, *cases):
  if len(cases) == 1:
    return [cases[0]]
  shape = ctx.avals_out[0].shape
  which = to_shape(ctx, which, shape)
  wdt = np.dtype(ctx.avals_in[0].dtype)
  if wdt == np.bool_:
    return [select(ctx, which, cases[1], cases[0])]
  out = cases[-1]
  for i in range(len(cases) - 2, -1, -1):   # out-of-range indices pick an end case
    le = compare(ctx, which, const_like(ctx, which, i, wdt), "LE", wdt)
    out = select(ctx, le, cases[i], out)
  return [out]


def clamp_rule(ctx, lo, x, hi):
  dt = ctx.avals_in[1].dtype
  shape = ctx.avals_out[0].shape
  lo, x, hi = (upcast(ctx, to_shape(ctx, v, shape), dt) for v in (lo, x, hi))
  cdt = compute_dtype(dt)
  return [downcast(ctx, _minmax(ctx, _minmax(ctx, x, lo, cdt, True), hi, cdt, False), dt)]


def reduce_precision_rule(ctx, x, *, exponent_bits, mantissa_bits):
  return [ctx.op("stablehlo.reduce_precision", [x], x.type,
                 attrs={"exponent_bits": f"{int(exponent_bits)} : i32",
                        "mantissa_bits": f"{int(mantissa_bits)} : i32"})]


def bitcast_convert_rule(ctx, x, *, new_dtype):
  return [ctx.op("stablehlo.bitcast_convert", [x], ctx.avals_out[0])]


def pow_rule(ctx, x, y):
  dt = np.dtype(ctx.avals_in[0].dtype)
  ydt = np.dtype(ctx.avals_in[1].dtype)
  cdt = compute_dtype(dt)
  x, y = operands_to_out(ctx, [x, y])
  xc = upcast(ctx, x, dt)
  yc = lower_convert(ctx, y, ydt, cdt)
  if dtypes.kind(cdt) == "c":
    return [op(ctx, "stablehlo.power", [xc, yc])]
  return [downcast(ctx, real_pow(ctx, xc, yc, cdt), dt)]


def real_pow(ctx, x, y, dt):
  """C's pow: IREE's is right for x >= 0 only, so take |x| and set the sign
  (negative x: odd integer y -> negative, non-integer y -> NaN). IREE's
  float32 power is exp(y log x) in float32 (measured: up to 108 ulps off
  for x in (0, 1), y in (1, 20)), so float32 powers are taken in float64 and
  rounded once."""
  f = lambda name, *xs: op(ctx, f"stablehlo.{name}", list(xs))  # noqa: E731
  c = lambda v: const_like(ctx, x, v, dt)  # noqa: E731
  if np.dtype(dt) == F32:
    f64 = np.dtype(np.float64)
    wide = f("power", lower_convert(ctx, f("abs", x), dt, f64), lower_convert(ctx, y, dt, f64))
    mag = lower_convert(ctx, wide, f64, dt)
  else:
    mag = f("power", f("abs", x), y)
  y_int = compare(ctx, f("floor", y), y, "EQ", dt)
  y_odd = op(ctx, "stablehlo.and", [y_int, compare(ctx, f("abs", f("remainder", y, c(2))), c(1),
                                                   "EQ", dt)])
  neg = sign_bit(ctx, x, dt)
  out = select(ctx, op(ctx, "stablehlo.and", [neg, y_odd]), f("negate", mag), mag)
  x_finite_neg = op(ctx, "stablehlo.and", [compare(ctx, x, c(0), "LT", dt),
                                           op(ctx, "stablehlo.not", [is_inf(ctx, x, dt)])])
  bad = op(ctx, "stablehlo.and", [x_finite_neg, op(ctx, "stablehlo.not", [y_int])])
  bad = op(ctx, "stablehlo.and", [bad, op(ctx, "stablehlo.not", [is_inf(ctx, y, dt)])])
  out = select(ctx, bad, c(np.nan), out)
  # pow(x, 0) = 1 and pow(1, y) = 1, even for NaN; pow(-1, +-inf) = 1.
  one = op(ctx, "stablehlo.or", [compare(ctx, y, c(0), "EQ", dt), compare(ctx, x, c(1), "EQ", dt)])
  one = op(ctx, "stablehlo.or", [one, op(ctx, "stablehlo.and", [
      compare(ctx, x, c(-1), "EQ", dt), is_inf(ctx, y, dt)])])
  return select(ctx, one, c(1), out)


def chlo(name):
  """A ``chlo`` op on operands broadcast to the result shape (float32 for
  narrow floats)."""
  def rule(ctx, *args, **params):
    dt = ctx.avals_in[0].dtype
    args = [upcast(ctx, v, dt) for v in operands_to_out(ctx, args)]
    return [downcast(ctx, op(ctx, name, args), ctx.avals_out[0].dtype)]
  return rule
