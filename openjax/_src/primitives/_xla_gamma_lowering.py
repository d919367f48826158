"""StableHLO lowerings of ``igamma_grad_a`` and ``random_gamma_grad``:
``_xla_gamma``'s algorithm (JAX's, in the operands' precision) op for op,
its loops as ``stablehlo.while`` over all elements with a per-element
running mask."""
from __future__ import annotations

import math

import numpy as np

from openjax._src.primitives import _elementwise_lowering as L
from openjax._src.primitives import _xla_gamma as G
from openjax._src.primitives import _xla_lowering as XL
from openjax._src.primitives._xla_lowering import V, fma, fresh, where

F32, F64 = XL.F32, XL.F64


def _log(x):
  return XL.log_f32(x) if x.dtype == F32 else x.un("log")


def _trig(x, name):
  # float32 sine and cosine in float64, rounded (as the impl computes them)
  if x.dtype == F64:
    return x.un(name)
  wide = x.convert(F64).un(name)
  return wide.convert(F32)


def _lanczos_z(x):
  reflect = x.cmp(0.5, "LT")
  return where(reflect, -x, x + -1.0), reflect


def _log_t(z):
  return z.c(math.log(G.LANCZOS_G + 0.5)) + XL.log1p(z * (1 / (G.LANCZOS_G + 0.5)))


def lgamma(x):
  """``_xla_gamma.lgamma``."""
  z, reflect = _lanczos_z(x)
  a = x.c(G.LANCZOS_BASE)
  for i, c in enumerate(G.LANCZOS):
    a = a + x.c(c) / (z + float(i + 1))
  t = x.c(G.LANCZOS_G + 0.5) + z
  log_t = _log_t(z)
  r = (z + 0.5) - t / log_t
  out = fma(r, log_t, (math.log(2) + math.log(math.pi)) / 2) + _log(a)
  ax = x.un("abs")
  frac = ax - ax.un("floor")
  frac = where(x.c(0.5).cmp(frac, "LT"), x.c(1.0) - frac, frac)
  denom = _log(_trig(x.c(math.pi) * frac, "sine"))
  finite = denom.un("abs").cmp(np.inf, "LT")
  refl = where(finite, (x.c(math.log(math.pi)) - denom) - out, -denom)
  out = where(reflect, refl, out)
  return where(x.un("abs").cmp(np.inf, "EQ"), np.inf, out)


def digamma(x, x_minus_one=None):
  """``_xla_gamma.digamma``."""
  z, reflect = _lanczos_z(x)
  if x_minus_one is not None:
    z = where(reflect, z, x_minus_one)
  num, den = x.c(0.0), x.c(G.LANCZOS_BASE)
  for i, c in enumerate(G.LANCZOS):
    zk = z + float(i + 1)
    num = num - x.c(c) / (zk * zk)
    den = den + x.c(c) / zk
  t = x.c(G.LANCZOS_G + 0.5) + z
  out = (_log_t(z) + num / den) - x.c(G.LANCZOS_G) / t
  arg = (x + (x + 0.5).un("floor").un("abs")) * math.pi
  refl = out - (_trig(arg, "cosine") * math.pi) / _trig(arg, "sine")
  out = where(reflect, refl, out)
  pole = x.cmp(0.0, "LE") & x.cmp(x.un("floor"), "EQ")
  return where(pole, np.nan, out)


def _series(a, x, enabled):
  """``_xla_gamma._series``: (ans, dans)."""
  ctx = a.ctx
  one, zero = a.c(1.0), a.c(0.0)
  eps = float(np.finfo(a.dtype).eps)

  def cond(act, *_):
    return XL.any_true(act)

  def body(act, r, c, ans, dc, dans):
    rr = r + 1.0
    xr = x / rr
    dcn = fma(dc, xr, -((c * x) / (rr * rr)))
    dansn = dans + dcn
    ansn = fma(c, fresh(xr), ans)
    new = [rr, c * xr, ansn, dcn, dansn]
    old = [r, c, ans, dc, dans]
    go = act & (dcn / dansn).un("abs").cmp(eps, "GT")
    return [go] + [where(act, n, o) for n, o in zip(new, old)]
  out = XL.while_loop(ctx, cond, body, [enabled, a, one, one, zero, zero])
  return out[3], out[5]


def _continued_fraction(a, x, enabled):
  """``_xla_gamma._continued_fraction``: (ans, dans)."""
  ctx = a.ctx
  dt = a.dtype
  eps = float(np.finfo(dt).eps)
  y = a.c(1.0) - a
  z = (x + y) + 1.0
  pkm1, qkm1 = x + 1.0, z * x
  ans = pkm1 / qkm1
  zero = a.c(0.0)
  dans = (ans * x) / qkm1
  step0 = XL.scalar(ctx, 0.0, dt)

  def cond(step, act, *_):
    return step.cmp(float(G.MAX_CF_TERMS), "LT") & XL.any_true(act)

  def body(step, act, y, z, ans, dans, pkm1, qkm1, pkm2, qkm2, dpkm1, dqkm1, dpkm2, dqkm2):
    step = step + 1.0
    cc = XL.broadcast(step, a)
    y1, z1 = y + 1.0, z + 2.0
    yc = y1 * cc
    pk = pkm1 * z1 - pkm2 * yc
    qk = qkm1 * z1 - qkm2 * yc
    nonzero = qk.cmp(0.0, "NE")
    ans1 = where(nonzero, pk / qk, ans)
    dpk = ((dpkm1 * z1 - pkm1) - dpkm2 * yc) + pkm2 * cc
    dqk = ((dqkm1 * z1 - qkm1) - dqkm2 * yc) + qkm2 * cc
    dans1 = where(nonzero, (dpk - ans1 * dqk) / qk, dans)
    change = where(nonzero, (dans1 - dans).un("abs"), 1.0)
    scale = where(pk.un("abs").cmp(1 / eps, "GT"), pk.c(eps), pk.c(1.0))
    new = [y1, z1, ans1, dans1, pk * scale, qk * scale, pkm1 * scale, qkm1 * scale,
           dpk * scale, dqk * scale, dpkm1 * scale, dqkm1 * scale]
    old = [y, z, ans, dans, pkm1, qkm1, pkm2, qkm2, dpkm1, dqkm1, dpkm2, dqkm2]
    go = act & change.cmp(eps, "GT")
    return [step, go] + [where(act, n, o) for n, o in zip(new, old)]
  out = XL.while_loop(ctx, cond, body, [step0, enabled, y, z, ans, dans, pkm1, qkm1,
                                          a.c(1.0), x, zero, -x, zero, zero])
  return out[4], out[5]


def _gamma_derivative(a, x, sample: bool):
  is_nan = a.cmp(a, "NE") | x.cmp(x, "NE")
  x_is_zero = x.cmp(0.0, "EQ")
  domain_error = x.cmp(0.0, "LT") | a.cmp(0.0, "LE")
  use_cf = x.cmp(1.0, "GT") & x.cmp(a, "GT")
  log_x = _log(x)
  lax_ = fma(a, log_x, -x) - lgamma(a)
  underflow = lax_.cmp(-float(np.log(np.finfo(a.dtype).max)), "LT")
  enabled = ~(x_is_zero | domain_error | underflow | is_nan)
  s_ans, s_dans = _series(a, x, enabled & ~use_cf)
  c_ans, c_dans = _continued_fraction(a, x, enabled & use_cf)
  s_sum = fma(s_ans, log_x - digamma(a + 1.0, x_minus_one=a), s_dans)
  c_sum = fma(c_ans, log_x - digamma(a), c_dans)
  if sample:
    out = where(use_cf, c_sum * x, (-s_sum * x) / a)
  else:
    ax = XL.exp_f32(lax_) if a.dtype == F32 else lax_.un("exponential")
    out = where(use_cf, -(ax * c_sum), (ax * s_sum) / a)
  out = where(x_is_zero, 0.0, XL.flush_denormals(out))
  return where(domain_error | is_nan, np.nan, out)


def _rule(sample: bool):
  def lower(ctx, a, x, **params):
    dt = np.dtype(ctx.avals_out[0].dtype)
    cdt = F64 if dt == F64 else F32
    a, x = (V(ctx, L.upcast(ctx, v, dt), cdt) for v in L.operands_to_out(ctx, [a, x]))
    return [L.downcast(ctx, _gamma_derivative(a, x, sample).v, dt)]
  return lower


random_gamma_grad_rule = _rule(sample=True)
igamma_grad_a_rule = _rule(sample=False)
