"""The derivatives of the incomplete gamma function by JAX's algorithm:
``igamma_grad_a`` (dP(a, x)/da) and ``random_gamma_grad`` (the derivative of
a Gamma(a) sample x with respect to a, -dP/da / density).

JAX computes both in the operands' precision (float16/bfloat16 in float32)
with a power series for x <= max(1, a) and a continued fraction above, each
carrying its a-derivative along and stopping per element once that
derivative's last change is below the dtype's epsilon (the fraction after
2000 terms at most), and with the Lanczos ``lgamma``/``digamma`` of the CHLO
decomposition. The loops here step only the elements still running; the
lowering (``gamma_lowering``) runs the same algorithm.
"""
from __future__ import annotations

import math

import numpy as np

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

# Lanczos (g = 7, n = 9) coefficients, as XLA's CHLO decomposition has them.
LANCZOS_G = 7.0
LANCZOS_BASE = 0.99999999999980993227684700473478
LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
           771.3234287776530788486528258894, -176.61502916214059906584551354,
           12.507343278686904814458936853, -0.13857109526572011689554707,
           9.984369578019570859563e-6, 1.50563273514931155834e-7)
MAX_CF_TERMS = 2000


class _Ops:
  """The computation dtype: its scalar type and epsilon."""

  def __init__(self, dtype):
    self.dt = np.dtype(dtype)
    self.t = self.dt.type
    self.eps = self.t(np.finfo(self.dt).eps)


_OPS = {F32: _Ops(F32), F64: _Ops(F64)}


def _lanczos_z(x, o):
  """(z, reflect): z = -x where x < 1/2 (reflected), x - 1 elsewhere."""
  reflect = x < o.t(0.5)
  return np.where(reflect, -x, x + o.t(-1)), reflect


def _log_t(z, o):
  # log(g + 1/2 + z) = log(g + 1/2) + log1p(z / (g + 1/2))
  return o.t(math.log(LANCZOS_G + 0.5)) + np.log1p(z / o.t(LANCZOS_G + 0.5))


def lgamma(x, o):
  """CHLO's Lanczos log-gamma in ``o``'s precision."""
  z, reflect = _lanczos_z(x, o)
  a = np.full_like(x, o.t(LANCZOS_BASE))
  for i, c in enumerate(LANCZOS):
    a = a + o.t(c) / (z + o.t(i + 1))
  t = o.t(LANCZOS_G + 0.5) + z
  log_t = _log_t(z, o)
  r = ((z + o.t(0.5)) - t / log_t)
  out = (r * log_t + o.t((math.log(2) + math.log(math.pi)) / 2)) + np.log(a)
  if reflect.any():
    ax = np.abs(x)
    frac = ax - np.floor(ax)
    frac = np.where(o.t(0.5) < frac, o.t(1) - frac, frac)
    denom = np.log(np.sin(o.t(math.pi) * frac))
    refl = np.where(np.isfinite(denom), (o.t(math.log(math.pi)) - denom) - out, -denom)
    out = np.where(reflect, refl, out)
  return np.where(np.isinf(x), o.t(np.inf), out)


def digamma(x, o, x_minus_one=None):
  """CHLO's Lanczos digamma in ``o``'s precision (NaN at the poles 0, -1,
  -2, ...). For ``x = a + 1``, ``x - 1`` is ``a`` exactly: pass that as
  ``x_minus_one``."""
  z, reflect = _lanczos_z(x, o)
  if x_minus_one is not None:
    z = np.where(reflect, z, x_minus_one)
  num = np.zeros_like(x)
  den = np.full_like(x, o.t(LANCZOS_BASE))
  for i, c in enumerate(LANCZOS):
    zk = z + o.t(i + 1)
    num = num - o.t(c) / (zk * zk)
    den = den + o.t(c) / zk
  t = o.t(LANCZOS_G + 0.5) + z
  out = (_log_t(z, o) + num / den) - o.t(LANCZOS_G) / t
  if reflect.any():
    reduced = x + np.abs(np.floor(x + o.t(0.5)))
    arg = o.t(math.pi) * reduced
    refl = out - (np.cos(arg) * o.t(math.pi)) / np.sin(arg)
    out = np.where(reflect, refl, out)
  pole = (x <= 0) & (x == np.floor(x))
  return np.where(pole, o.t(np.nan), out)


# ------------------------------------------------------------------ the loops
def _series(a, x, enabled, o):
  """The power series of P(a, x) / (x^a e^-x / Gamma(a+1)) and its
  a-derivative: (ans, dans)."""
  r, c, ans = a.copy(), np.ones_like(a), np.ones_like(a)
  dc, dans = np.zeros_like(a), np.zeros_like(a)
  idx = np.nonzero(enabled)[0]
  while idx.size:
    rr = r[idx] + o.t(1)
    xi, ci = x[idx], c[idx]
    xr = xi / rr
    dcn = dc[idx] * xr - (ci * xi) / (rr * rr)
    dansn = dans[idx] + dcn
    r[idx], dc[idx], dans[idx] = rr, dcn, dansn
    ans[idx] = ci * xr + ans[idx]
    c[idx] = ci * xr
    idx = idx[np.abs(dcn / dansn) > o.eps]
  return ans, dans


def _continued_fraction(a, x, enabled, o):
  """The continued fraction of Q(a, x) / (x^a e^-x / Gamma(a)) and its
  a-derivative: (ans, dans)."""
  one = o.t(1)
  y = one - a
  z = (x + y) + one
  pkm2, qkm2 = np.ones_like(a), x.copy()
  pkm1, qkm1 = x + one, z * x
  ans = pkm1 / qkm1
  dpkm2, dqkm2, dpkm1 = np.zeros_like(a), np.zeros_like(a), np.zeros_like(a)
  dqkm1 = -x
  dans = (ans * x) / qkm1
  big = one / o.eps
  idx = np.nonzero(enabled)[0]
  for step in range(1, MAX_CF_TERMS + 1):
    if not idx.size:
      break
    cc = o.t(step)
    y[idx] += one
    z[idx] += o.t(2)
    yi, zi = y[idx], z[idx]
    yc = yi * cc
    p1, q1, p2, q2 = pkm1[idx], qkm1[idx], pkm2[idx], qkm2[idx]
    dp1, dq1, dp2, dq2 = dpkm1[idx], dqkm1[idx], dpkm2[idx], dqkm2[idx]
    pk = p1 * zi - p2 * yc
    qk = q1 * zi - q2 * yc
    nonzero = qk != 0
    ans_i = np.where(nonzero, pk / qk, ans[idx])
    dpk = ((dp1 * zi - p1) - dp2 * yc) + p2 * cc
    dqk = ((dq1 * zi - q1) - dq2 * yc) + q2 * cc
    dans_old = dans[idx]
    dans_i = np.where(nonzero, (dpk - ans_i * dqk) / qk, dans_old)
    change = np.where(nonzero, np.abs(dans_i - dans_old), one)
    scale = np.where(np.abs(pk) > big, o.eps, one)
    pkm2[idx], pkm1[idx] = p1 * scale, pk * scale
    qkm2[idx], qkm1[idx] = q1 * scale, qk * scale
    dpkm2[idx], dpkm1[idx] = dp1 * scale, dpk * scale
    dqkm2[idx], dqkm1[idx] = dq1 * scale, dqk * scale
    ans[idx], dans[idx] = ans_i, dans_i
    idx = idx[change > o.eps]
  return ans, dans


def _gamma_derivative(a, x, sample: bool):
  """dP(a, x)/da (``sample`` False) or the Gamma(a) sample derivative."""
  a, x = np.broadcast_arrays(np.asarray(a), np.asarray(x))
  shape, dtype = a.shape, a.dtype
  cdt = F64 if dtype == F64 else F32
  o = _OPS[cdt]
  a, x = a.reshape(-1).astype(cdt), x.reshape(-1).astype(cdt)
  with np.errstate(all="ignore"):
    is_nan = np.isnan(a) | np.isnan(x)
    x_is_zero = x == 0
    domain_error = (x < 0) | (a <= 0)
    decided = x_is_zero | domain_error | is_nan
    out = np.where(domain_error | is_nan, o.t(np.nan), o.t(0))   # then x = 0: 0
    # The other elements only: an x = 0 or a domain error decides its own
    # (a batch of zeros: ~170 -> ~10 us at 3 elements), and each element
    # takes the digamma of its own method (the series' or the fraction's).
    rest = np.flatnonzero(~decided)
    if rest.size:
      whole = rest.size == a.size
      ar, xr = (a, x) if whole else (a[rest], x[rest])
      out_r = _gamma_derivative_valid(ar, xr, sample, o, cdt)
      if whole:
        out = out_r
      else:
        out[rest] = out_r
  return out.astype(dtype).reshape(shape)


def _gamma_derivative_valid(a, x, sample: bool, o, cdt):
  """``_gamma_derivative`` of 1-d operands with x != 0, x >= 0, a > 0, no NaN."""
  use_cf = (x > 1) & (x > a)
  log_x = np.log(x)
  lax_ = (a * log_x - x) - lgamma(a, o)
  underflow = lax_ < -o.t(np.log(np.finfo(cdt).max))
  enabled = ~underflow
  s_ans, s_dans = _series(a, x, enabled & ~use_cf, o)
  c_ans, c_dans = _continued_fraction(a, x, enabled & use_cf, o)
  s_idx, c_idx = np.flatnonzero(~use_cf), np.flatnonzero(use_cf)
  out = np.empty_like(a)
  if s_idx.size:
    a_s, x_s, s_ans, s_dans = a[s_idx], x[s_idx], s_ans[s_idx], s_dans[s_idx]
    s_sum = s_ans * (log_x[s_idx] - digamma(a_s + o.t(1), o, x_minus_one=a_s)) + s_dans
    out[s_idx] = (((-s_sum) * x_s) / a_s if sample
                  else (np.exp(lax_[s_idx]) * s_sum) / a_s)
  if c_idx.size:
    c_ans, c_dans = c_ans[c_idx], c_dans[c_idx]
    c_sum = c_ans * (log_x[c_idx] - digamma(a[c_idx], o)) + c_dans
    out[c_idx] = c_sum * x[c_idx] if sample else -(np.exp(lax_[c_idx]) * c_sum)
  return out


def random_gamma_grad(a, x):
  """The derivative of a Gamma(a, 1) sample ``x`` with respect to ``a``."""
  return _gamma_derivative(a, x, sample=True)


def igamma_grad_a(a, x):
  """The derivative of the regularized incomplete gamma function P(a, x)
  with respect to ``a``."""
  return _gamma_derivative(a, x, sample=False)
