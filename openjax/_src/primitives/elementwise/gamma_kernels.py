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


# The Lanczos sums' coefficients and shifts 1..8 as columns, by dtype: the
# sums' terms as one (8, n) matrix, summed in order down its rows (the
# rounding of a term-by-term loop, in ~5 NumPy calls where it took ~25).
_LANCZOS_COLUMNS = {dt: (np.array(LANCZOS, dt)[:, None],
                         np.arange(1, len(LANCZOS) + 1, dtype=dt)[:, None]) for dt in (F32, F64)}


# Up to here the matrices (NumPy calls); past it a term at a time (the
# broadcast (8, n) operations cost more than the calls they save).
_MATRIX_MAX = 64


def _lanczos_sums(z, o):
  """(sum_k c_k / (z + k) + c_0, -sum_k c_k / (z + k)^2) for k = 1..8, each
  summed in k's order."""
  coefs, shifts = _LANCZOS_COLUMNS[o.dt]
  base = np.full_like(z, o.t(LANCZOS_BASE))
  if z.size <= _MATRIX_MAX:
    zk = z + shifts
    den = _running_sums(base, coefs / zk, np.add)[-1]
    # num - c_k / zk^2, as num + (-(c_k / zk^2)): the same rounding.
    slopes = np.negative(coefs / (zk * zk))
    return den, _running_sums(np.zeros_like(z), slopes, np.add)[-1]
  den, num = base, np.zeros_like(z)
  for i, c in enumerate(LANCZOS):
    zk = z + o.t(i + 1)
    num = num - o.t(c) / (zk * zk)
    den = den + o.t(c) / zk
  return den, num


def _lanczos_sum(z, o):
  """sum_k c_k / (z + k) + c_0 for k = 1..8, summed in k's order."""
  coefs, shifts = _LANCZOS_COLUMNS[o.dt]
  base = np.full_like(z, o.t(LANCZOS_BASE))
  if z.size <= _MATRIX_MAX:
    return _running_sums(base, coefs / (z + shifts), np.add)[-1]
  for i, c in enumerate(LANCZOS):
    base = base + o.t(c) / (z + o.t(i + 1))
  return base


def _running_sums(first, rest, ufunc):
  """``ufunc.accumulate`` down the rows of ``[first; rest]``: the sequential
  running product or sum, each step rounded as a loop's."""
  out = np.empty((rest.shape[0] + 1,) + first.shape, first.dtype)
  out[0] = first
  out[1:] = rest
  ufunc.accumulate(out, axis=0, out=out)
  return out


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
  a = _lanczos_sum(z, o)
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
  den, num = _lanczos_sums(z, o)
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
# Both loops take a block of steps at a time for every element still
# running, each element's results kept from the step at which it stops (the
# later steps of a block are computed and dropped), the stopped elements
# leaving between blocks. Every element still takes JAX's operations in its
# own order: the same bits as a step-by-step loop on the running elements
# (whose fancy indexing cost ~20 NumPy calls a step: 10 elements ~600 us).
# Series terms a block, as (terms, elements) matrices: most elements stop
# after ~20 terms; a long block of many elements costs more than its calls.
_SERIES_BLOCK = {True: 24, False: 12}   # by "up to _MATRIX_MAX elements"
_CF_BLOCK = 8        # continued-fraction steps between removals of stopped elements
_CHUNK = 1 << 13     # elements a pass through both loops


def _series(a, x, enabled, o):
  """The power series of P(a, x) / (x^a e^-x / Gamma(a+1)) and its
  a-derivative: (ans, dans). A step is r += 1, c *= x/r (ans += c) and
  dc = dc x/r - c x / r^2 (dans += dc); an element stops once |dc/dans| <=
  eps. A block of steps as (terms, elements) matrices: r, c, ans and dans
  as running sums/products down the rows; only dc's recurrence a row at a
  time (two NumPy calls a row)."""
  ans, dans = np.ones_like(a), np.zeros_like(a)
  where = np.flatnonzero(enabled)
  one = o.t(1)
  r, c, total, dc, dtotal, xs = (a[where], np.ones(where.size, o.dt), np.ones(where.size, o.dt),
                                 np.zeros(where.size, o.dt), np.zeros(where.size, o.dt),
                                 x[where])
  block = _SERIES_BLOCK[where.size <= _MATRIX_MAX]
  while where.size:
    rs = _running_sums(r, np.full((block, where.size), one), np.add)[1:]
    xr = xs / rs
    cs = _running_sums(c, xr, np.multiply)
    totals = _running_sums(total, cs[1:], np.add)[1:]
    shrink = (cs[:-1] * xs) / (rs * rs)
    dcs = np.empty_like(cs)
    dcs[0] = dc
    for k in range(block):
      np.multiply(dcs[k], xr[k], out=dcs[k + 1])
      dcs[k + 1] -= shrink[k]
    dtotals = _running_sums(dtotal, dcs[1:], np.add)[1:]
    going = np.abs(dcs[1:] / dtotals) > o.eps
    stops = ~going
    first = np.argmax(stops, axis=0)
    stopped = stops[first, np.arange(where.size)]
    done = np.flatnonzero(stopped)
    if done.size:
      at = first[done]
      ans[where[done]], dans[where[done]] = totals[at, done], dtotals[at, done]
    keep = np.flatnonzero(~stopped)
    where = where[keep]
    r, c, total, dc, dtotal, xs = (rs[-1][keep], cs[-1][keep], totals[-1][keep], dcs[-1][keep],
                                   dtotals[-1][keep], xs[keep])
  return ans, dans


def _continued_fraction(a, x, enabled, o):
  """The continued fraction of Q(a, x) / (x^a e^-x / Gamma(a)) and its
  a-derivative: (ans, dans). The convergents' numerators, denominators and
  their a-derivatives (p, q, dp, dq) step as one stacked (4, n) array, in
  three buffers taking turns (steps k - 2, k - 1 and k)."""
  one = o.t(1)
  y = one - a
  z = (x + y) + one
  pkm1, qkm1 = x + one, z * x
  ans = pkm1 / qkm1
  dans = (ans * x) / qkm1
  big = one / o.eps
  where = np.flatnonzero(enabled)
  m = where.size
  bufs = [np.empty((4, m), o.dt) for _ in range(3)]
  bufs[0][0], bufs[0][1], bufs[0][2], bufs[0][3] = 1, x[where], 0, 0   # step k - 2
  bufs[1][0], bufs[1][1], bufs[1][2], bufs[1][3] = pkm1[where], qkm1[where], 0, -x[where]
  y_run, z_run = y[where], z[where]
  ans_run, dans_run = ans[where], dans[where]
  step = 1
  while m and step <= MAX_CF_TERMS:
    count = min(_CF_BLOCK, MAX_CF_TERMS + 1 - step)
    ys = _running_sums(y_run, np.full((count, m), one), np.add)[1:]
    zs = _running_sums(z_run, np.full((count, m), o.t(2)), np.add)[1:]
    ccs = np.arange(step, step + count, dtype=o.dt)
    ycs = ys * ccs[:, None]
    alive = np.ones(m, bool)
    tmp = np.empty((2, m), o.dt)
    views = [(b, b[:2], b[2:], b[0], b[1], b[2], b[3]) for b in bufs]
    for k in range(count):
      zi, yc, cc = zs[k], ycs[k], ccs[k]
      before, before_pq, before_d = views[k % 3][:3]
      now, now_pq, now_d = views[(k + 1) % 3][:3]
      new, new_pq, new_d, pk, qk, dpk, dqk = views[(k + 2) % 3]
      np.multiply(now_pq, zi, out=new_pq)
      np.multiply(before_pq, yc, out=tmp)
      new_pq -= tmp                                          # pk, qk
      np.multiply(now_d, zi, out=new_d)
      new_d -= now_pq
      np.multiply(before_d, yc, out=tmp)
      new_d -= tmp
      np.multiply(before_pq, cc, out=tmp)
      new_d += tmp                                           # dpk, dqk
      if qk.all():
        ans_i = pk / qk
        dans_i = (dpk - ans_i * dqk) / qk
        change = np.abs(dans_i - dans_run)
      else:
        nonzero = qk != 0
        ans_i = np.where(nonzero, pk / qk, ans_run)
        dans_i = np.where(nonzero, (dpk - ans_i * dqk) / qk, dans_run)
        change = np.where(nonzero, np.abs(dans_i - dans_run), one)
      large = np.abs(pk) > big
      if large.any():   # (elsewhere x 1: exact, so only then)
        scale = np.where(large, o.eps, one)
        now *= scale
        new *= scale
      ans_run, dans_run = ans_i, dans_i
      going = change > o.eps
      stop = alive > going
      if stop.any():
        ans[where[stop]], dans[where[stop]] = ans_i[stop], dans_i[stop]
        alive &= going
    step += count
    bufs = bufs[count % 3:] + bufs[:count % 3]   # (k - 2, k - 1, k) -> the first two
    if not alive.all():
      keep = np.flatnonzero(alive)
      where, m = where[keep], keep.size
      bufs = [b[:, keep] for b in bufs]
      ans_run, dans_run = ans_run[keep], dans_run[keep]
      ys, zs = ys[:, keep], zs[:, keep]
    y_run, z_run = ys[-1], zs[-1]
  if m:   # out of terms: the last values
    ans[where], dans[where] = ans_run, dans_run
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
      if ar.size <= _CHUNK:
        out_r = _gamma_derivative_valid(ar, xr, sample, o, cdt)
      else:   # (the blocks' matrices of a chunk stay in cache)
        out_r = np.concatenate([
            _gamma_derivative_valid(ar[k:k + _CHUNK], xr[k:k + _CHUNK], sample, o, cdt)
            for k in range(0, ar.size, _CHUNK)])
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
