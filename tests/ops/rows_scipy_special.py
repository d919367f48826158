"""Op-table rows for ``jax.scipy.special``: every function on float32 samples
from its domain, against ``scipy.special`` evaluated in float64.

Where the algorithm is an approximation (series cut at float32's eps,
rational approximations of fixed degree, recurrences whose rounding error
grows), the row's rtol says so; tests/test_scipy_special.py checks the same
functions over wider grids in float32 and float64 and their error cases.
Gradient rows differentiate every float argument (to second order, forward
and reverse) in float64; ``vjp=False`` marks the functions whose derivatives
contain ``while_loop`` (reverse mode of a loop is undefined, as in JAX).
"""
import numpy as np
from scipy import special

import openjax.scipy.special as jsp
from tests.ops.harness import OpRow

F32, C64 = np.dtype(np.float32), np.dtype(np.complex64)


def _uniform(*ranges, shape=(3, 4)):
  """Independent float32 samples, one array per (low, high) range."""
  return lambda rng: tuple(rng.uniform(lo, hi, shape).astype(F32) for lo, hi in ranges)


def _away_from_integers(lo, hi, shape=(3, 4)):
  """Samples at least 0.1 from every integer (the poles of gamma and its kin)."""
  def make(rng):
    x = rng.uniform(lo, hi, shape)
    frac = x - np.round(x)
    x = np.where(np.abs(frac) < 0.1, x + 0.2, x)
    return (x.astype(F32),)
  return make


def _complex(shape=(3, 4), scale=3.0):
  def make(rng):
    z = rng.uniform(-scale, scale, shape) + 1j * rng.uniform(-scale, scale, shape)
    return (z.astype(C64),)
  return make


def _f64(ref):
  """``ref`` on float64 (complex128) copies, cast back to the inputs' dtype."""
  def wrapped(*args):
    arrays = [a for a in args if isinstance(a, np.ndarray) and a.dtype.kind in "fc"]
    dt = np.result_type(*arrays) if arrays else F32
    up = [a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
          if isinstance(a, np.ndarray) and a.dtype.kind in "fc" else a for a in args]
    out = ref(*up)

    def cast(o):
      o = np.asarray(o)
      return o.astype(np.result_type(dt, C64) if o.dtype.kind == "c" else dt)
    return tuple(cast(o) for o in out) if isinstance(out, tuple) else cast(out)
  return wrapped


def _row(name, fn, args, ref, **kw):
  return OpRow(f"scipy.special.{name}", fn, args, _f64(ref), **kw)


def _polygamma_args(rng):
  return (rng.integers(0, 4, (3, 4)).astype(np.int32), rng.uniform(0.5, 5, (3, 4)).astype(F32))


def _expn_args(rng):
  return (rng.integers(0, 6, (3, 4)).astype(np.int32), rng.uniform(0.1, 4, (3, 4)).astype(F32))


def _sph_harm_args(rng):
  n = rng.integers(0, 4, 6).astype(np.int32)
  m = (rng.integers(-3, 4, 6) % (n + 1) * np.sign(rng.standard_normal(6))).astype(np.int32)
  return n, m, rng.uniform(0, np.pi, 6).astype(F32), rng.uniform(0, 2 * np.pi, 6).astype(F32)


ROWS = [
    _row("gammaln", jsp.gammaln, _away_from_integers(-4, 6), special.gammaln, grad=True,
         rtol=1e-5),
    _row("gammasgn", jsp.gammasgn, _away_from_integers(-4, 6), special.gammasgn),
    _row("gamma", jsp.gamma, _away_from_integers(-4, 6), special.gamma, grad=True, rtol=1e-5),
    _row("gamma_complex", jsp.gamma, _complex(scale=2.0), special.gamma, rtol=1e-4),
    _row("loggamma", jsp.loggamma, _uniform((0.1, 8)), special.loggamma, rtol=1e-5),
    # Lanczos' approximation plus the shift recurrence: a few float32 ulp per step.
    _row("loggamma_complex", jsp.loggamma, _complex(), special.loggamma, rtol=1e-4, atol=1e-5),
    _row("betaln", jsp.betaln, _uniform((0.2, 12), (0.2, 12)), special.betaln, grad=True,
         rtol=1e-5),
    _row("beta", jsp.beta, _uniform((0.2, 5), (0.2, 5)), special.beta, grad=True, rtol=1e-5),
    _row("factorial", jsp.factorial, _uniform((-2, 10)), special.factorial, rtol=1e-5),
    _row("comb", jsp.comb, lambda rng: (np.full((3, 4), 12.0, F32),
                                        rng.integers(0, 13, (3, 4)).astype(F32)),
         lambda n, k: special.comb(n, k), rtol=1e-5),
    _row("comb_repetition", lambda n, k: jsp.comb(n, k, repetition=True),
         lambda rng: (np.full((3, 4), 5.0, F32), rng.integers(0, 6, (3, 4)).astype(F32)),
         lambda n, k: special.comb(n, k, repetition=True), rtol=1e-5),
    # betainc's continued fraction converges to float32 eps only relative to 1.
    _row("betainc", jsp.betainc, _uniform((0.5, 5), (0.5, 5), (0.01, 0.99)), special.betainc,
         rtol=1e-4, atol=1e-6),
    _row("digamma", jsp.digamma, _away_from_integers(-3, 6), special.digamma, grad=True,
         rtol=1e-5, atol=1e-6),
    _row("gammainc", jsp.gammainc, _uniform((0.5, 5), (0.1, 8)), special.gammainc, rtol=1e-5,
         atol=1e-6),
    _row("gammaincc", jsp.gammaincc, _uniform((0.5, 5), (0.1, 8)), special.gammaincc,
         rtol=1e-5, atol=1e-6),
    _row("erf", jsp.erf, _uniform((-3, 3)), special.erf, grad=True),
    _row("erfc", jsp.erfc, _uniform((-3, 3)), special.erfc, grad=True),
    _row("erfinv", jsp.erfinv, _uniform((-0.99, 0.99)), special.erfinv, grad=True, rtol=1e-5),
    _row("erfcx", jsp.erfcx, _uniform((-3, 30)), special.erfcx, grad=True, rtol=1e-5),
    _row("erfcx_complex", jsp.erfcx, _complex(), special.erfcx, rtol=1e-4, atol=1e-6),
    # Weideman's 32-term rational expansion: ~1e-13 relative in float64, float32's
    # rounding of the 32 Horner steps in float32.
    _row("wofz", jsp.wofz, _complex(), special.wofz, rtol=1e-4, atol=1e-6),
    _row("dawsn", jsp.dawsn, _uniform((-10, 10)), special.dawsn, grad=True, rtol=1e-5),
    _row("logit", jsp.logit, _uniform((0.05, 0.95)), special.logit, grad=True),
    _row("expit", jsp.expit, _uniform((-8, 8)), special.expit, grad=True),
    _row("logsumexp", jsp.logsumexp, _uniform((-5, 5)), special.logsumexp, grad=True),
    _row("logsumexp_b", lambda a, b: jsp.logsumexp(a, axis=1, b=b),
         _uniform((-5, 5), (0.1, 2)), lambda a, b: special.logsumexp(a, axis=1, b=b),
         grad=True),
    _row("logsumexp_sign", lambda a, b: jsp.logsumexp(a, axis=0, b=b, return_sign=True),
         _uniform((-5, 5), (-2, 2)),
         lambda a, b: special.logsumexp(a, axis=0, b=b, return_sign=True)),
    _row("xlogy", jsp.xlogy, _uniform((-2, 2), (0.1, 5)), special.xlogy, grad=True),
    _row("xlog1py", jsp.xlog1py, _uniform((-2, 2), (-0.9, 5)), special.xlog1py, grad=True),
    _row("entr", jsp.entr, _uniform((0.01, 5)), special.entr, grad=True),
    _row("rel_entr", jsp.rel_entr, _uniform((0.01, 5), (0.01, 5)), special.rel_entr, grad=True),
    _row("kl_div", jsp.kl_div, _uniform((0.01, 5), (0.01, 5)), special.kl_div, grad=True),
    _row("boxcox", jsp.boxcox, _uniform((0.1, 5), (-2, 2)), special.boxcox, grad=True,
         rtol=1e-5),
    _row("boxcox1p", jsp.boxcox1p, _uniform((-0.9, 5), (-2, 2)), special.boxcox1p, grad=True,
         rtol=1e-5),
    _row("multigammaln", lambda a: jsp.multigammaln(a, 3), _uniform((1.5, 8)),
         lambda a: special.multigammaln(a, 3), grad=True, rtol=1e-5),
    _row("zeta", jsp.zeta, _uniform((1.5, 6), (0.5, 4)), special.zeta, grad=True, rtol=1e-5),
    _row("polygamma", jsp.polygamma, _polygamma_args, special.polygamma, rtol=1e-5),
    _row("ndtr", jsp.ndtr, _uniform((-8, 8)), special.ndtr, grad=True, rtol=1e-5, atol=1e-7),
    _row("ndtri", jsp.ndtri, _uniform((0.02, 0.98)), special.ndtri, grad=True, rtol=1e-5),
    _row("log_ndtr", jsp.log_ndtr, _uniform((-30, 10)), special.log_ndtr, grad=True,
         rtol=1e-5, atol=1e-7),
    _row("i0", jsp.i0, _uniform((-10, 10)), special.i0, grad=True, rtol=1e-5),
    _row("i0e", jsp.i0e, _uniform((-10, 10)), special.i0e, grad=True, rtol=1e-5),
    _row("i1", jsp.i1, _uniform((-10, 10)), special.i1, grad=True, rtol=1e-5),
    _row("i1e", jsp.i1e, _uniform((-10, 10)), special.i1e, grad=True, rtol=1e-5),
    _row("poch", jsp.poch, _uniform((0.5, 4), (-0.4, 3)), special.poch, grad=True, rtol=1e-5),
    # 13-point Gauss-Legendre quadrature: exact to ~1e-7 relative.
    _row("owens_t", jsp.owens_t, _uniform((-3, 3), (-3, 3)), special.owens_t, grad=True,
         rtol=1e-5, atol=1e-7),
    _row("softmax", jsp.softmax, _uniform((-5, 5)), special.softmax, grad=True),
    _row("softmax_axis", lambda x: jsp.softmax(x, axis=1), _uniform((-5, 5)),
         lambda x: special.softmax(x, axis=1), grad=True),
    _row("log_softmax", jsp.log_softmax, _uniform((-5, 5)), special.log_softmax, grad=True),
    # Miller's recurrence from 1e-16 at k = 50: fine in float32 for z > 3.5
    # (smaller z overflows the float32 recurrence to NaN, in JAX 0.10.2 too).
    _row("bessel_jn", lambda z: jsp.bessel_jn(z, v=3), _uniform((3.5, 20), shape=(5,)),
         lambda z: np.stack([special.jv(v, z) for v in range(4)]), rtol=1e-4, atol=1e-5),
    _row("sph_harm_y", lambda n, m, t, p: jsp.sph_harm_y(n, m, t, p, n_max=3),
         _sph_harm_args, special.sph_harm_y, rtol=1e-5, atol=1e-6, vmap=False),
    _row("expi", jsp.expi, _uniform((-40, 60)), special.expi, grad=True, rtol=1e-5),
    # exp1's second derivative needs E_{-1}, NaN in JAX's expn: the first
    # derivatives are checked in tests/test_scipy_special.py.
    _row("exp1", jsp.exp1, _uniform((0.05, 20)), special.exp1, rtol=1e-5),
    _row("expn", jsp.expn, _expn_args, special.expn, rtol=1e-5),
    _row("sici", jsp.sici, _uniform((-30, 30)), special.sici, grad=True, rtol=1e-5, atol=1e-6),
    _row("fresnel", jsp.fresnel, _uniform((-8, 8)), special.fresnel, grad=True, rtol=1e-5,
         atol=1e-6),
    _row("spence", jsp.spence, _uniform((0.01, 6)), special.spence, rtol=1e-5, atol=1e-7),
    _row("hyp1f1", jsp.hyp1f1, _uniform((0.2, 3), (0.5, 4), (0, 5)), special.hyp1f1,
         grad=True, vjp=False, rtol=1e-5),
    _row("hyp2f1", jsp.hyp2f1, _uniform((0.2, 2), (0.2, 2), (2.5, 5), (-0.8, 0.8)),
         special.hyp2f1, grad=True, vjp=False, rtol=1e-5),
]
