"""StableHLO lowering rules of the elementwise math functions: exponentials,
logarithms, trigonometric and hyperbolic functions and their inverses,
logistic, cbrt, atan2.

IREE's complex versions differ from C's (which NumPy, hence the impls,
follows) at signed zeros, branch cuts and infinities, so the complex ones
are written by parts here; float32 sin/cos/tan reduce their argument in
float64 (IREE's own reduction is lost past |x| ~ 1e4).
"""
from __future__ import annotations

import decimal
import math

import numpy as np

from openjax._src import dtypes
from openjax._src.lowering.mlir_types import split_tensor_type
from openjax._src.primitives.elementwise.elementwise_lowering import (
    F32, compare, complex_abs, complex_div, compute_dtype, conj_rule, const_like, copysign,
    downcast, is_inf, is_nan, make_complex, op, operands_to_out, parts, real_atan2, select,
    shape_of, sign_bit, unary, upcast)


F64 = np.dtype(np.float64)


def keep_small(ctx, x, out, dt, odd: bool):
  """``out`` with ``x`` itself where |x| is so small that f(x) rounds to x:
  below half the square root of epsilon for the odd functions with f(x) =
  x + c x^3, |c| <= 1 (sin, tan, atan, tanh, sinh, asin, asinh, atanh),
  below the smallest normal number for expm1 and log1p. IREE's CPU runtime
  computes with subnormals flushed to zero (as XLA's does), which made these
  0 for subnormal x (and IREE's asin 0 up to ~1e-37) where NumPy, the
  interpreter and JAX give x; a select moves the bits unchanged."""
  info = dtypes.finfo(dt)
  fdt = np.dtype(dt)
  bound = 0.5 * math.sqrt(float(info.eps)) if odd else float(info.tiny)
  small = compare(ctx, op(ctx, "stablehlo.abs", [x]), const_like(ctx, x, bound, fdt), "LT", fdt)
  return select(ctx, small, x, out)


def keeping_small(rule, odd: bool = True):
  """``rule`` (a lowering of one real-or-complex operand) with
  ``keep_small`` applied to real operands."""
  def wrapped(ctx, x, **params):
    dt = ctx.avals_in[0].dtype
    out, = rule(ctx, x, **params)
    if dtypes.kind(dt) == "c":
      return [out]
    return [keep_small(ctx, x, out, dt, odd)]
  return wrapped


def part_trig(ctx, x, name: str):
  """sin or cos (``name``: "sine", "cosine") of a complex operand's real or
  imaginary part: float32 parts through ``_sin_cos_f32`` (IREE's float32
  sine is off past |x| ~ 1e4: compiled exp(1e6j) was off by 11%, sin(1e6 +
  0.5j) by 194%), float64 through IREE's."""
  if split_tensor_type(x.type)[1] == "f32":
    return _sin_cos_f32(ctx, x, name)
  return op(ctx, f"stablehlo.{name}", [x])


def complex_exp(ctx, z, dt):
  """C's cexp by parts: exp(x) (cos y + i sin y), exact 0 imaginary part at y = 0."""
  x, y = parts(ctx, z, dt)
  fdt = np.finfo(np.dtype(dt)).dtype
  a = op(ctx, "stablehlo.exponential", [x])
  im = op(ctx, "stablehlo.multiply", [a, part_trig(ctx, y, "sine")])
  y0 = compare(ctx, y, const_like(ctx, y, 0, fdt), "EQ", fdt)
  re = op(ctx, "stablehlo.multiply", [a, part_trig(ctx, y, "cosine")])
  re, im = select(ctx, y0, a, re), select(ctx, y0, y, im)
  # x = +-inf with a non-finite y: inf + i NaN and 0 + 0i.
  y_bad = op(ctx, "stablehlo.or", [is_inf(ctx, y, fdt), is_nan(ctx, y, fdt)])
  pinf = op(ctx, "stablehlo.and", [compare(ctx, x, const_like(ctx, x, np.inf, fdt), "EQ", fdt),
                                   y_bad])
  ninf = op(ctx, "stablehlo.and", [compare(ctx, x, const_like(ctx, x, -np.inf, fdt), "EQ", fdt),
                                   y_bad])
  zero = const_like(ctx, x, 0, fdt)
  re = select(ctx, pinf, x, select(ctx, ninf, zero, re))
  return make_complex(ctx, re, select(ctx, ninf, zero, im), dt)


def exp_rule(ctx, x, **params):
  dt = ctx.avals_in[0].dtype
  if dtypes.kind(dt) == "c":
    return [complex_exp(ctx, x, dt)]
  return unary("stablehlo.exponential")(ctx, x)


def exp2_rule(ctx, x, **params):
  dt = ctx.avals_in[0].dtype
  xc = upcast(ctx, x, dt)
  if dtypes.kind(dt) == "c":
    fdt = np.finfo(np.dtype(dt)).dtype
    re, im = parts(ctx, x, dt)
    ln2 = const_like(ctx, re, np.log(2.0), fdt)
    z = make_complex(ctx, op(ctx, "stablehlo.multiply", [re, ln2]),
                     op(ctx, "stablehlo.multiply", [im, ln2]), dt)
    return [complex_exp(ctx, z, dt)]
  cdt = compute_dtype(dt)
  return [downcast(ctx, _real_exp2(ctx, xc, cdt), dt)]


def _real_exp2(ctx, x, dt):
  """2**x = 2**n * exp((x - n) ln 2) with n = round(x): the exponential only
  sees |x - n| <= 1/2 (exp(x ln 2) loses ~|x| ulps), and 2**n is built from
  its bits in two factors (each a normal float; n is clamped where the result
  is 0 or inf anyway)."""
  f = lambda nm, *xs: op(ctx, f"stablehlo.{nm}", list(xs))  # noqa: E731
  c = lambda v: const_like(ctx, x, v, dt)  # noqa: E731
  info = np.finfo(dt)
  bias = int(info.maxexp) - 1                  # 127 / 1023
  n = f("round_nearest_even", x)
  n = ctx.op("stablehlo.clamp", [c(-2 * (bias - 1)), n, c(2 * bias)], x.type)
  frac = select(ctx, is_inf(ctx, x, dt), c(0), f("subtract", x, n))
  e = f("exponential", f("multiply", frac, c(np.log(2.0))))
  idt = np.dtype(f"i{np.dtype(dt).itemsize}")
  n1 = f("floor", f("multiply", n, c(0.5)))

  def pow2(k):
    bits = f("shift_left", f("add", op(ctx, "stablehlo.convert", [k], idt),
                             const_like(ctx, x, bias, idt)),
             const_like(ctx, x, int(info.nmant), idt))
    return op(ctx, "stablehlo.bitcast_convert", [bits], dt)
  y = f("multiply", f("multiply", e, pow2(n1)), pow2(f("subtract", n, n1)))
  return select(ctx, is_nan(ctx, x, dt), x, y)


def real_expm1(ctx, x, dt):
  """exp(x) - 1 of real ``x``. IREE's float64 exponential_minus_one is off
  by thousands of ulps near 0 (expm1(1.3e-4): 3840), so float64 takes
  Kahan's identity (u - 1) x / log(u), u = exp(x) (x itself where u == 1)."""
  if np.dtype(dt) != F64:
    return op(ctx, "stablehlo.exponential_minus_one", [x])
  one = const_like(ctx, x, 1, dt)
  u = op(ctx, "stablehlo.exponential", [x])
  um1 = op(ctx, "stablehlo.subtract", [u, one])
  r = op(ctx, "stablehlo.multiply", [um1, op(ctx, "stablehlo.divide", [
      x, op(ctx, "stablehlo.log", [u])])])
  r = select(ctx, compare(ctx, u, one, "EQ", dt), x, r)
  r = select(ctx, compare(ctx, um1, const_like(ctx, x, -1, dt), "EQ", dt), um1, r)
  return select(ctx, is_inf(ctx, u, dt), u, r)   # x = +inf: inf / inf


def real_log1p(ctx, x, dt):
  """log(1 + x) of real ``x``. IREE's float64 log_plus_one loses all digits
  for tiny x (log1p(1e-13) is off by ~1e-3 relatively) and ~1e-10 near -1,
  so float64 takes Goldberg's identity log(u) x / (u - 1), u = 1 + x (x
  itself where u == 1)."""
  if np.dtype(dt) != F64:
    return op(ctx, "stablehlo.log_plus_one", [x])
  one = const_like(ctx, x, 1, dt)
  u = op(ctx, "stablehlo.add", [one, x])
  log_u = op(ctx, "stablehlo.log", [u])
  r = op(ctx, "stablehlo.multiply", [log_u, op(ctx, "stablehlo.divide", [
      x, op(ctx, "stablehlo.subtract", [u, one])])])
  r = select(ctx, compare(ctx, u, one, "EQ", dt), x, r)
  return select(ctx, is_inf(ctx, u, dt), log_u, r)   # x = +inf: inf / inf


def expm1_rule(ctx, x, **params):
  dt = ctx.avals_in[0].dtype
  if dtypes.kind(dt) != "c":
    return [downcast(ctx, real_expm1(ctx, upcast(ctx, x, dt), compute_dtype(dt)), dt)]
  # NumPy's formula: expm1(x) cos y - 2 sin^2(y/2) + i exp(x) sin y.
  fdt = np.finfo(np.dtype(dt)).dtype
  re, im = parts(ctx, x, dt)
  half = op(ctx, "stablehlo.multiply", [im, const_like(ctx, im, 0.5, fdt)])
  s = part_trig(ctx, half, "sine")
  r = op(ctx, "stablehlo.subtract", [
      op(ctx, "stablehlo.multiply", [op(ctx, "stablehlo.exponential_minus_one", [re]),
                                     part_trig(ctx, im, "cosine")]),
      op(ctx, "stablehlo.multiply", [const_like(ctx, s, 2, fdt),
                                     op(ctx, "stablehlo.multiply", [s, s])])])
  i = op(ctx, "stablehlo.multiply", [op(ctx, "stablehlo.exponential", [re]),
                                     part_trig(ctx, im, "sine")])
  return [make_complex(ctx, r, i, dt)]


def log_rule(ctx, x, **params):
  dt = ctx.avals_in[0].dtype
  if dtypes.kind(dt) != "c":
    return unary("stablehlo.log")(ctx, x)
  return [log_rule_complex(ctx, x, dt)]


def log_rule_complex(ctx, x, dt):
  """C's clog by parts: log|z| + i atan2(y, x)."""
  fdt = np.finfo(np.dtype(dt)).dtype
  re, im = parts(ctx, x, dt)
  mag = complex_abs(ctx, x, dt)
  return make_complex(ctx, op(ctx, "stablehlo.log", [mag]), real_atan2(ctx, im, re, fdt), dt)


def sinh_cosh_rule(is_sinh):
  """Real operands: chlo; complex ones by parts (exact 0 imaginary part at y = 0)."""
  def rule(ctx, x):
    dt = ctx.avals_in[0].dtype
    if dtypes.kind(dt) != "c":
      return unary("chlo.sinh" if is_sinh else "chlo.cosh")(ctx, x)
    fdt = np.finfo(np.dtype(dt)).dtype
    re, im = parts(ctx, x, dt)
    sh, ch = op(ctx, "chlo.sinh", [re]), op(ctx, "chlo.cosh", [re])
    c, s = part_trig(ctx, im, "cosine"), part_trig(ctx, im, "sine")
    r = op(ctx, "stablehlo.multiply", [sh if is_sinh else ch, c])
    i = op(ctx, "stablehlo.multiply", [ch if is_sinh else sh, s])
    y0 = compare(ctx, im, const_like(ctx, im, 0, fdt), "EQ", fdt)
    x0 = compare(ctx, re, const_like(ctx, re, 0, fdt), "EQ", fdt)
    r, i = select(ctx, y0, sh if is_sinh else ch, r), select(ctx, y0, im, i)
    # C's values at x = 0 (sinh: real part 0; cosh: imaginary part 0) and at
    # x = +-inf with a non-finite y (+-inf + i NaN).
    zero = const_like(ctx, re, 0, fdt)
    if is_sinh:
      r = select(ctx, x0, re, r)
    else:
      i = select(ctx, op(ctx, "stablehlo.and", [x0, op(ctx, "stablehlo.not", [y0])]), zero, i)
    y_bad = op(ctx, "stablehlo.or", [is_inf(ctx, im, fdt), is_nan(ctx, im, fdt)])
    big = op(ctx, "stablehlo.and", [is_inf(ctx, re, fdt), y_bad])
    r = select(ctx, big, re if is_sinh else op(ctx, "stablehlo.abs", [re]), r)
    return [make_complex(ctx, r, i, dt)]
  return rule


def atan_rule(ctx, x):
  dt = ctx.avals_in[0].dtype
  if dtypes.kind(dt) != "c":
    return unary("chlo.atan")(ctx, x)
  # By parts (IREE's is wrong on the branch cuts and at +-i):
  # re = atan2(2x, (1 - y)(1 + y) - x^2) / 2, im = log1p(4y / (x^2 + (1 - y)^2)) / 4.
  fdt = np.finfo(np.dtype(dt)).dtype
  f = lambda name, *xs: op(ctx, f"stablehlo.{name}", list(xs))  # noqa: E731
  c = lambda v: const_like(ctx, re, v, fdt)  # noqa: E731
  re, im = parts(ctx, x, dt)
  xx = f("multiply", re, re)
  one_m, one_p = f("subtract", c(1), im), f("add", c(1), im)
  # atan2's arguments divided by s = max(1, |x|, |y|) (its value is the
  # same): 2x and x^2 overflow for |x| > ~1e19 (float32), which turned
  # atan(3e38 - 1.2j) into 3 pi / 8 instead of pi / 2.
  s = f("maximum", c(1), f("maximum", f("abs", re), f("abs", im)))
  re_s = f("divide", re, s)
  r = f("multiply", c(0.5), real_atan2(
      ctx, f("multiply", c(2), re_s),
      f("subtract", f("multiply", f("divide", one_m, s), one_p), f("multiply", re_s, re)), fdt))
  i = f("multiply", c(0.25), f("log_plus_one", f("divide", f("multiply", c(4), im),
                                                   f("add", xx, f("multiply", one_m, one_m)))))
  big = op(ctx, "stablehlo.or", [is_inf(ctx, re, fdt), is_inf(ctx, im, fdt)])
  # C's catan(NaN + i inf) = NaN + 0i: the real part stays NaN.
  r = select(ctx, op(ctx, "stablehlo.and", [big, op(ctx, "stablehlo.not", [is_nan(ctx, re, fdt)])]),
             copysign(ctx, c(np.pi / 2), re, fdt), r)
  i = select(ctx, big, copysign(ctx, c(0), im, fdt), i)
  return [make_complex(ctx, r, i, dt)]


def cbrt_rule(ctx, x, **params):
  dt = ctx.avals_in[0].dtype
  xc = upcast(ctx, x, dt)
  cdt = compute_dtype(dt)
  y = _real_cbrt(ctx, xc, cdt)
  # IREE's cbrt(+-inf) is NaN; 0 keeps its sign.
  special = op(ctx, "stablehlo.or", [is_inf(ctx, xc, cdt),
                                     compare(ctx, xc, const_like(ctx, xc, 0, cdt), "EQ", cdt)])
  y = select(ctx, special, xc, y)
  return [downcast(ctx, select(ctx, _is_subnormal(ctx, xc, cdt), _subnormal_cbrt(ctx, xc, cdt), y),
                   dt)]


def _real_cbrt(ctx, x, dt):
  if np.dtype(dt) == F64:
    return _cbrt_f64(ctx, x)
  # IREE's float32 cbrt is off by up to ~12 ulps: one Newton step.
  y = op(ctx, "stablehlo.cbrt", [x])
  step = op(ctx, "stablehlo.subtract", [y, op(ctx, "stablehlo.divide", [
      x, op(ctx, "stablehlo.multiply", [y, y])])])
  return op(ctx, "stablehlo.subtract", [y, op(ctx, "stablehlo.multiply", [
      step, const_like(ctx, y, 1 / 3, dt)])])


def _is_subnormal(ctx, x, dt):
  """Whether ``x`` is subnormal, from its bits (a zero exponent field and a
  nonzero mantissa): float compares of a subnormal against 0 may see 0."""
  fdt = np.dtype(dt)
  idt = np.dtype(np.int32 if fdt == F32 else np.int64)
  nmant = int(np.finfo(fdt).nmant)
  bits = op(ctx, "stablehlo.bitcast_convert", [x], idt)
  exp_mask = int(np.iinfo(idt).max) ^ ((1 << nmant) - 1)   # the exponent field
  exp = op(ctx, "stablehlo.and", [bits, const_like(ctx, bits, exp_mask, idt)])
  mant = op(ctx, "stablehlo.and", [bits, const_like(ctx, bits, (1 << nmant) - 1, idt)])
  zero = const_like(ctx, bits, 0, idt)
  return op(ctx, "stablehlo.and", [compare(ctx, exp, zero, "EQ", idt),
                                   compare(ctx, mant, zero, "NE", idt)])


def _subnormal_cbrt(ctx, x, dt):
  """cbrt of subnormal ``x`` from its bits: |x| = m 2^-149 (float32) or
  m 2^-1074 (float64) with an integer m that converts exactly, so cbrt|x| =
  cbrt(2m) 2^-50 or cbrt(m) 2^-358. IREE's CPU code treats a subnormal
  operand as 0 (cbrt gave NaN); the integer bits are never flushed."""
  fdt = np.dtype(dt)
  idt = np.dtype(np.int32 if fdt == F32 else np.int64)
  bits = op(ctx, "stablehlo.bitcast_convert", [x], idt)
  mask = const_like(ctx, bits, int(np.iinfo(idt).max), idt)
  m = op(ctx, "stablehlo.convert", [op(ctx, "stablehlo.and", [bits, mask])], fdt)
  scale, factor = (2.0, 2.0 ** -50) if fdt == F32 else (1.0, 2.0 ** -358)
  m = op(ctx, "stablehlo.multiply", [m, const_like(ctx, x, scale, fdt)])
  r = op(ctx, "stablehlo.multiply", [_real_cbrt(ctx, m, fdt), const_like(ctx, x, factor, fdt)])
  return copysign(ctx, r, x, fdt)


def _cbrt_f64(ctx, x):
  """IREE cannot compile float64 math.cbrt: |x|**(1/3) with the sign, then a
  Newton step y -= (y - x / y**2) / 3."""
  f64 = np.dtype(np.float64)
  f = lambda nm, *xs: op(ctx, f"stablehlo.{nm}", list(xs))  # noqa: E731
  y = f("power", f("abs", x), const_like(ctx, x, 1 / 3, f64))
  y = copysign(ctx, y, x, f64)
  step = f("divide", f("subtract", y, f("divide", x, f("multiply", y, y))),
           const_like(ctx, x, 3, f64))
  return f("subtract", y, step)


def logistic_rule(ctx, x, **params):
  dt = ctx.avals_in[0].dtype
  xc = upcast(ctx, x, dt)
  cdt = compute_dtype(dt)
  one = const_like(ctx, xc, 1, cdt)
  if dtypes.kind(cdt) == "c":
    e = complex_exp(ctx, op(ctx, "stablehlo.negate", [xc]), cdt)
    return [complex_div(ctx, one, op(ctx, "stablehlo.add", [one, e]), cdt)]
  # exp only ever sees -|x|: no overflow (the impl's formula).
  e = op(ctx, "stablehlo.exponential",
         [op(ctx, "stablehlo.negate", [op(ctx, "stablehlo.abs", [xc])])])
  den = op(ctx, "stablehlo.add", [one, e])
  pos = compare(ctx, xc, const_like(ctx, xc, 0, cdt), "GE", cdt)
  y = select(ctx, pos, op(ctx, "stablehlo.divide", [one, den]),
             op(ctx, "stablehlo.divide", [e, den]))
  return [downcast(ctx, y, dt)]


def atan2_rule(ctx, x, y):
  dt = np.dtype(ctx.avals_in[0].dtype)
  if dtypes.kind(dt) != "c":
    x, y = (upcast(ctx, v, dt) for v in operands_to_out(ctx, [x, y]))
    return [downcast(ctx, real_atan2(ctx, x, y, compute_dtype(dt)), dt)]
  # -i log(z / sqrt(z conj(z))) with z = y + i x, the impl's extension.
  x, y = operands_to_out(ctx, [x, y])
  i = const_like(ctx, x, 1j, dt)
  z = op(ctx, "stablehlo.add", [y, op(ctx, "stablehlo.multiply", [i, x])])
  zc = conj_rule(ctx, z, input_dtype=dt)[0]
  r = op(ctx, "stablehlo.sqrt", [op(ctx, "stablehlo.multiply", [z, zc])])
  lg = log_rule_complex(ctx, complex_div(ctx, z, r, dt), dt)
  return [op(ctx, "stablehlo.multiply", [const_like(ctx, x, -1j, dt), lg])]


def log1p_rule(ctx, x, **params):
  dt = ctx.avals_in[0].dtype
  if dtypes.kind(dt) != "c":
    return [downcast(ctx, real_log1p(ctx, upcast(ctx, x, dt), compute_dtype(dt)), dt)]
  fdt = np.finfo(np.dtype(dt)).dtype   # NumPy's: log(1 + z) by parts
  re, im = parts(ctx, x, dt)
  z = make_complex(ctx, op(ctx, "stablehlo.add", [re, const_like(ctx, re, 1, fdt)]), im, dt)
  return [log_rule_complex(ctx, z, dt)]


def complex_sqrt(ctx, x, dt):
  """IREE's sqrt with the imaginary part's sign taken from y (C's csqrt on
  the branch cut: sqrt(-1 - 0i) = -i)."""
  fdt = np.finfo(np.dtype(dt)).dtype
  out = op(ctx, "stablehlo.sqrt", [x])
  r, i = parts(ctx, out, dt)
  _, y = parts(ctx, x, dt)
  i = select(ctx, is_nan(ctx, y, fdt), i, copysign(ctx, op(ctx, "stablehlo.abs", [i]), y, fdt))
  return make_complex(ctx, r, i, dt)


def sqrt_rule(ctx, x, **params):
  dt = ctx.avals_in[0].dtype
  if dtypes.kind(dt) != "c":
    return unary("stablehlo.sqrt")(ctx, x)
  return [complex_sqrt(ctx, x, dt)]


def rsqrt_rule(ctx, x, **params):
  dt = ctx.avals_in[0].dtype
  if dtypes.kind(dt) != "c":
    return unary("stablehlo.rsqrt")(ctx, x)
  return [complex_div(ctx, const_like(ctx, x, 1, dt), complex_sqrt(ctx, x, dt), dt)]


def trig_rule(name):
  """sin/cos/tan; complex operands by parts with C's values where a part is
  zero (IREE's give NaN where C gives 0 or inf)."""
  def rule(ctx, x, **params):
    dt = ctx.avals_in[0].dtype
    if dtypes.kind(dt) != "c":
      if compute_dtype(dt) == F32:
        return [downcast(ctx, reduced_trig(ctx, upcast(ctx, x, dt), name), dt)]
      return unary(f"stablehlo.{name}")(ctx, x)
    fdt = np.finfo(np.dtype(dt)).dtype
    f = lambda nm, *xs: op(ctx, f"stablehlo.{nm}", list(xs))  # noqa: E731
    re, im = parts(ctx, x, dt)
    zero = const_like(ctx, re, 0, fdt)
    x0, y0 = (compare(ctx, v, zero, "EQ", fdt) for v in (re, im))
    if name == "tan":
      out = op(ctx, "stablehlo.tan", [x])
      r, i = parts(ctx, out, dt)
      r = select(ctx, y0, f("tan", re), r)
      i = select(ctx, y0, im, i)
      return [make_complex(ctx, r, i, dt)]
    sx, cx = part_trig(ctx, re, "sine"), part_trig(ctx, re, "cosine")
    shy, chy = op(ctx, "chlo.sinh", [im]), op(ctx, "chlo.cosh", [im])
    if name == "sine":     # sin x cosh y + i cos x sinh y
      r, i = f("multiply", sx, chy), f("multiply", cx, shy)
      r, i = select(ctx, x0, re, r), select(ctx, y0, im, i)
    else:                  # cos x cosh y - i sin x sinh y
      r, i = f("multiply", cx, chy), f("negate", f("multiply", sx, shy))
      i = select(ctx, op(ctx, "stablehlo.or", [x0, y0]), zero, i)
      r = select(ctx, x0, chy, r)
    return [make_complex(ctx, r, i, dt)]
  return rule


def tanh_rule(ctx, x, **params):
  dt = ctx.avals_in[0].dtype
  out = unary("stablehlo.tanh")(ctx, x)[0]
  if dtypes.kind(dt) != "c":
    return [out]
  fdt = np.finfo(np.dtype(dt)).dtype    # C's ctanh(+-0 + iy) = +-0 + i tan(y)
  re, im = parts(ctx, x, dt)
  r, i = parts(ctx, out, dt)
  x0 = compare(ctx, re, const_like(ctx, re, 0, fdt), "EQ", fdt)
  return [make_complex(ctx, select(ctx, x0, re, r), i, dt)]


def conj_symmetric(name):
  """A unary chlo op; complex operands are evaluated at (x, |y|) and
  conjugated back for a negative y, so both signed zeros of a branch cut get
  C's values (f(conj z) = conj f(z) for asin, acos, asinh, acosh, atanh)."""
  def rule(ctx, x, **params):
    dt = ctx.avals_in[0].dtype
    if dtypes.kind(dt) != "c":
      return unary(name)(ctx, x)
    fdt = np.finfo(np.dtype(dt)).dtype
    re, im = parts(ctx, x, dt)
    absolute = lambda v: op(ctx, "stablehlo.abs", [v])  # noqa: E731
    negate = lambda v: op(ctx, "stablehlo.negate", [v])  # noqa: E731
    neg_sign = lambda v: op(ctx, "stablehlo.and", [  # noqa: E731
        sign_bit(ctx, v, fdt), op(ctx, "stablehlo.not", [is_nan(ctx, v, fdt)])])
    # asinh's cuts lie on the imaginary axis: it is odd as well, so x is made
    # non-negative too (asinh(-conj z) = -conj asinh(z)).
    odd = name == "chlo.asinh"
    w = op(ctx, name, [make_complex(ctx, absolute(re) if odd else re, absolute(im), dt)])
    wr, wi = parts(ctx, w, dt)
    wi = select(ctx, neg_sign(im), negate(wi), wi)
    if odd:
      wr = select(ctx, neg_sign(re), negate(wr), wr)
    wi = select(ctx, is_nan(ctx, im, fdt), im, wi)   # a NaN imaginary part stays NaN
    if name == "chlo.atanh":   # atanh(+-1 + 0i) = +-inf + 0i (IREE: NaN imaginary part)
      one = op(ctx, "stablehlo.and", [
          compare(ctx, absolute(re), const_like(ctx, re, 1, fdt), "EQ", fdt),
          compare(ctx, im, const_like(ctx, im, 0, fdt), "EQ", fdt)])
      wr = select(ctx, one, copysign(ctx, const_like(ctx, re, np.inf, fdt), re, fdt), wr)
      wi = select(ctx, one, im, wi)
    return [make_complex(ctx, wr, wi, dt)]
  return rule


# fdlibm's pi/2 in 33-bit pieces: n * piece is exact for |n| < 2**20.
_PIO2 = (1.57079632673412561417e+00, 6.07710050630396597660e-11, 2.02226624871116645580e-21,
         8.47842766036889956997e-32)


_SIN_TAYLOR = tuple((-1) ** i / math.factorial(2 * i + 1) for i in range(9))
_COS_TAYLOR = tuple((-1) ** i / math.factorial(2 * i) for i in range(10))


def _inv_two_pi_pieces() -> tuple[float, ...]:
  """``1 / (2 pi)`` in 29-bit pieces: piece k holds its bits of weight
  2**-(29k+1) .. 2**-(29k+29). 174 bits in all: the bits past them, times
  |x| < 2**128, add less than 2**-46 turns (pi to 90 digits by Machin's
  formula in decimal arithmetic, in a local context: the caller's decimal
  settings are untouched)."""
  one = decimal.Decimal(1)

  def atan_inv(n: int) -> decimal.Decimal:
    total, term, k, sign = 0 * one, one / n, 1, 1
    while term > one.scaleb(-90):
      total += sign * term / k
      term /= n * n
      k, sign = k + 2, -sign
    return total
  with decimal.localcontext() as context:
    context.prec = 95
    rest = one / (2 * (16 * atan_inv(5) - 4 * atan_inv(239)))
    pieces = []
    for k in range(6):
      scale = 2 ** (29 * (k + 1))
      bits = int(rest * scale)          # < 2**29: the piece is exact in float64
      pieces.append(bits / scale)
      rest -= decimal.Decimal(bits) / scale
    return tuple(pieces)


_INV_TWO_PI_PIECES = _inv_two_pi_pieces()


def _reduce_huge(ctx, x, xd):
  """``xd`` (float32 ``x`` in float64), with each |x| >= 2**23 replaced by a
  value congruent to it modulo 2 pi in [0, 2 pi) (NaN for infinities). The
  turns x / (2 pi) modulo 1 are the sum of frac(x p_k) over the 29-bit pieces
  p_k of 1 / (2 pi) (Payne-Hanek): x has a 24-bit significand, so each
  product (53 bits) and its fraction (x - floor(x), of either sign) are exact
  in float64; the pieces whose product is an integer add nothing. The
  reduction after it then stays accurate (it was lost past ~1e18: compiled
  sin(3e38) gave -1 for 0.8749). Elementwise arithmetic only: a table lookup
  (a gather) here doubled the compile time of modules with a few sines; 27
  float64 operations an element, half of a float32 sine's time."""
  f64 = np.dtype(np.float64)
  f = lambda nm, *xs: op(ctx, f"stablehlo.{nm}", list(xs))  # noqa: E731
  c64 = lambda v: const_like(ctx, xd, v, f64)  # noqa: E731
  frac = lambda v: f("subtract", v, f("floor", v))  # noqa: E731
  turns = None
  for k, piece in enumerate(_INV_TWO_PI_PIECES):
    part = f("multiply", xd, c64(piece))
    if 29 * k < 128:   # past that, |x| p_k < 1 already
      part = frac(part)
    turns = part if turns is None else f("add", turns, part)
  t = f("multiply", frac(turns), c64(2 * np.pi))
  huge = compare(ctx, f("abs", xd), c64(2.0 ** 23), "GE", f64)
  return select(ctx, huge, t, xd)


def _horner(ctx, coefs, z, dt):
  """sum(coefs[i] z**i) by Horner's rule, in element type ``dt`` (``z``'s)."""
  acc = const_like(ctx, z, coefs[-1], dt)
  for c in reversed(coefs[:-1]):
    acc = op(ctx, "stablehlo.add", [op(ctx, "stablehlo.multiply", [acc, z]),
                                    const_like(ctx, z, c, dt)])
  return acc


def _pio2_reduced(ctx, x, pieces: int, huge: bool = True):
  """(k, r) in float64 with x = k pi/2 + r, |r| <= pi/4 (and a little), of
  float32 ``x``: huge arguments reduced exactly first (``_reduce_huge``;
  ``huge=False``: x has none), k
  by floor(t + 1/2), not round_nearest_even (any integer next to t serves,
  and IREE's float64 round_nearest_even costs ~0.35 ns an element more),
  r by ``pieces`` pieces of pi/2 (exact products while |k| < 2**20)."""
  f64 = np.dtype(np.float64)
  f = lambda nm, *xs: op(ctx, f"stablehlo.{nm}", list(xs))  # noqa: E731
  xd = op(ctx, "stablehlo.convert", [x], f64)
  if huge:
    xd = _reduce_huge(ctx, x, xd)
  k = f("floor", f("add", f("multiply", xd, const_like(ctx, xd, 2 / np.pi, f64)),
                   const_like(ctx, xd, 0.5, f64)))
  r = xd
  for piece in _PIO2[:pieces]:
    r = f("subtract", r, f("multiply", k, const_like(ctx, xd, piece, f64)))
  return k, r


# Minimax polynomials of float32 sin r / r - 1 and cos r - 1 + r^2 / 2 on
# |r| <= pi/4 in r^2 (Cephes' sinf/cosf coefficients).
_SIN_TAIL_F32 = (-1.6666654611e-1, 8.3321608736e-3, -1.9515295891e-4)
_COS_TAIL_F32 = (4.166664568298827e-2, -1.388731625493765e-3, 2.443315711809948e-5)


#: Operands with at least this many elements reduce huge arguments (|x| >=
#: 2**23) in a branch taken only when one is there (``_sin_cos_f32``).
#: Compiled sin(x) * 2, process CPU us a call without / with the branch:
#: 4096 elements 53 / 57, 8192 54-93 / 47-95, 16384 97 / 76, 65536 334 / 229.
HUGE_BRANCH_MIN_ELEMENTS = 1 << 14


def _sin_cos_f32(ctx, x, name):
  """float32 sin or cos of float32 ``x`` (``_sin_cos_f32_lanes``), huge
  arguments reduced only when there are some (``_huge_branch``)."""
  return _huge_branch(ctx, x, lambda huge: _sin_cos_f32_lanes(ctx, x, name, huge))


def _huge_branch(ctx, x, lanes):
  """``lanes(huge)`` (float32 values of float32 ``x``; ``huge=False``: no
  exact reduction of huge arguments, |x| >= 2**23). Large operands compute
  that reduction (``_reduce_huge``, ~35% of a sine's time: vector lanes
  compute both sides of a select) only when one is there: the elementwise
  values are computed without it, and a ``stablehlo.if`` on max |x| >=
  2**23 (one pass over x) gives the exact values (else ``x`` itself,
  unread) that a select takes for the huge elements; the values stay fused
  with their consumers. Process CPU of 10M float32s, interleaved, min of 15
  (without / with the branch / with no huge-argument reduction at all):
  sum(sin(x)) 50 / 33 / 32 ms, jaxbench's sum(x * 2 + sin(x) * cos(y) -
  exp(-x * x)) 88 / 66 / 59 ms."""
  shape = shape_of(x)
  if math.prod(shape) < HUGE_BRANCH_MIN_ELEMENTS:
    return lanes(True)
  f32, i32 = F32, np.dtype(np.int32)
  # The largest |x| by its bits (x & 0x7fffffff ordered as integers; NaN
  # counts as huge), in rows so that the workers share the pass (IREE runs a
  # whole-array reduction as one workgroup). Not stablehlo.abs: IREE would
  # share it with keep_small's |x| and write it out.
  n = math.prod(shape)
  rows = next(r for r in (64, 32, 16, 8, 4, 2, 1) if n % r == 0)
  flat = ctx.op("stablehlo.reshape", [x], ctx.tensor_type((rows, n // rows), f32))
  bits = ctx.op("stablehlo.bitcast_convert", [flat], ctx.tensor_type((rows, n // rows), i32))
  mag = ctx.op("stablehlo.and", [bits, ctx.full(0x7FFFFFFF, (rows, n // rows), i32)], bits.type)
  scalar = ctx.tensor_type((), i32)
  largest = ctx.constant(np.array(0, i32))
  for dims, out in (((1,), ctx.tensor_type((rows,), i32)), ((0,), scalar)):
    with ctx.region([scalar, scalar]) as body:
      a, b = body.args
      ctx.ret([ctx.op("stablehlo.maximum", [a, b], scalar)])
    mag = ctx.op("stablehlo.reduce", [mag, largest], out, attrs={"dimensions": dims},
                 regions=[body])
  limit = ctx.constant(np.array(0x4B000000, i32))    # the bits of 2**23
  any_huge = compare(ctx, mag, limit, "GE", i32)
  with ctx.region([]) as exact:
    ctx.ret([lanes(True)])
  with ctx.region([]) as none:
    ctx.ret([x])
  exact_values = ctx.op("stablehlo.if", [any_huge], x.type, regions=[exact, none])
  fast = lanes(False)
  is_huge = compare(ctx, op(ctx, "stablehlo.abs", [x]), const_like(ctx, x, 2.0 ** 23, f32),
                    "GE", f32)
  return select(ctx, is_huge, exact_values, fast)


def _sin_cos_f32_lanes(ctx, x, name, huge: bool):
  """float32 sin or cos of float32 ``x``: x = k pi/2 + r reduced in float64
  (exact, as ``reduced_trig``), then sin r = r + r^3 p(r^2) and
  cos r = (1 - r^2/2) + r^4 q(r^2) with the small tails p, q in float32 and
  the leading terms in float64, rounded once to float32: within 0.83 ulp of
  the true value at every magnitude (JAX's: 0.56). The float64 Taylor series
  of ``reduced_trig`` (degree 17 after a reduction by pi) took ~2x the time:
  sum(sin(x)) over 10M floats 16.3 -> 11.0 ms, sum(x * 2 + sin(x) * cos(y) -
  exp(-x * x)) 28.9 -> 19.8 ms on 2 cores (JAX: 110 ms). Quadrants are
  counted in float32: IREE's float64 -> int32 conversion is scalar (100 ms
  for 10M)."""
  f64, f32 = np.dtype(np.float64), F32
  f = lambda nm, *xs: op(ctx, f"stablehlo.{nm}", list(xs))  # noqa: E731
  c64 = lambda v: const_like(ctx, x, v, f64)  # noqa: E731
  c32 = lambda v: const_like(ctx, x, v, f32)  # noqa: E731
  k, r = _pio2_reduced(ctx, x, 3, huge)
  narrow = lambda v: op(ctx, "stablehlo.convert", [v], f32)  # noqa: E731
  rf = narrow(r)
  z = f("multiply", rf, rf)

  tail = lambda coefs: _horner(ctx, coefs, z, f32)  # noqa: E731
  # quadrant q = k mod 4 in float32 (|k| < 2**23 * 2 / pi + 1 < 2**24:
  # exact): cos x = sin(x + pi/2); an odd q takes the other function, q >= 2
  # negates
  q = narrow(k)
  if name == "cosine":
    q = f("add", q, c32(1.0))
  q = f("subtract", q, f("multiply", c32(4.0), f("floor", f("multiply", q, c32(0.25)))))
  half = f("floor", f("multiply", q, c32(0.5)))
  odd = compare(ctx, f("subtract", q, f("multiply", c32(2.0), half)), c32(1.0), "EQ", f32)
  cos_lead = f("subtract", c64(1.0), f("multiply", c64(0.5), f("multiply", r, r)))
  lead = select(ctx, odd, cos_lead, r)
  small = select(ctx, odd, f("multiply", f("multiply", z, z), tail(_COS_TAIL_F32)),
                 f("multiply", f("multiply", rf, z), tail(_SIN_TAIL_F32)))
  v = narrow(f("add", lead, op(ctx, "stablehlo.convert", [small], f64)))
  out = select(ctx, compare(ctx, half, c32(1.0), "EQ", f32), f("negate", v), v)
  # Infinities and NaN give NaN (k is not finite there).
  return select(ctx, is_inf(ctx, x, f32), c32(np.nan), out)


def reduced_trig(ctx, x, name):
  """float32 sin/cos/tan: sin and cos by ``_sin_cos_f32``; tan evaluated in
  float64 (IREE's float32 ones lose all accuracy past |x| ~ 1e4 and are off
  by up to 60% near some zeros): x = n pi/2 + r, tan x = tan r or -1/tan r,
  sin r and cos r Taylor polynomials (|r| <= pi/4, error < 1e-13)."""
  if name != "tan":
    return _sin_cos_f32(ctx, x, name)
  return _huge_branch(ctx, x, lambda huge: _tan_f32_lanes(ctx, x, huge))


def _tan_f32_lanes(ctx, x, huge: bool):
  f64 = np.dtype(np.float64)
  f = lambda nm, *xs: op(ctx, f"stablehlo.{nm}", list(xs))  # noqa: E731
  c64 = lambda v: const_like(ctx, x, v, f64)  # noqa: E731
  n, r = _pio2_reduced(ctx, x, len(_PIO2), huge)
  lim = c64(np.pi / 4)                           # the reduction is lost past ~1e18
  r = ctx.op("stablehlo.clamp", [f("negate", lim), r, lim], r.type)
  r2 = f("multiply", r, r)

  poly = lambda coefs: _horner(ctx, coefs, r2, f64)  # noqa: E731
  sr = f("multiply", r, poly(_SIN_TAYLOR))
  cr = poly(_COS_TAYLOR)
  half_n = f("floor", f("multiply", n, c64(0.5)))
  odd = compare(ctx, f("subtract", n, f("multiply", c64(2), half_n)), c64(1), "EQ", f64)
  out = select(ctx, odd, f("negate", f("divide", cr, sr)), f("divide", sr, cr))
  out = op(ctx, "stablehlo.convert", [out], F32)
  # Infinities and NaN give NaN (n is not finite there).
  return select(ctx, is_inf(ctx, x, F32), const_like(ctx, x, np.nan, F32), out)
