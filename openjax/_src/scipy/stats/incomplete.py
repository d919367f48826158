"""Distributions whose CDFs are incomplete gamma or beta functions, or
differences of normal CDFs: gamma, chi-squared, beta and the truncated
normal.

Each gamma, chi-squared and beta function is a cached library program
(``util.jit``): traced once per signature, eagerly its steps run on the
eval trace's kernels (~1 us each) instead of a dispatch per operation. The
truncated normal's are jits (their compiled tier).
"""
from __future__ import annotations

import numpy as np

from openjax._src import lax
from openjax._src.api.jit import jit
from openjax._src.numpy import util
from openjax._src.numpy.util import promote_args_inexact
from openjax._src.scipy import jnp
from openjax._src.scipy.special import (betainc, betaln, gammainc, gammaincc, gammaln, logsumexp,
                                        xlog1py, xlogy)
from openjax._src.scipy.special_error import log_ndtr, ndtr
from openjax._src.scipy.stats.continuous import norm_logpdf

__all__ = [
    "gamma_logpdf", "gamma_pdf", "gamma_cdf", "gamma_logcdf", "gamma_sf", "gamma_logsf",
    "chi2_logpdf", "chi2_pdf", "chi2_cdf", "chi2_logcdf", "chi2_sf", "chi2_logsf",
    "beta_logpdf", "beta_pdf", "beta_cdf", "beta_logcdf", "beta_sf", "beta_logsf",
    "truncnorm_logpdf", "truncnorm_pdf", "truncnorm_cdf", "truncnorm_logcdf", "truncnorm_sf",
    "truncnorm_logsf",
]


# ---------------------------------------------------------------- gamma
@util.jit
def gamma_logpdf(x, a, loc=0, scale=1):
  x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
  ok = x >= loc
  y = jnp.where(ok, (x - loc) / scale, 1)
  log_probs = xlogy(a - 1, y) - y - (gammaln(a) + lax.log(scale))
  return jnp.where(ok, log_probs, -np.inf)


@util.jit
def gamma_pdf(x, a, loc=0, scale=1):
  return lax.exp(gamma_logpdf(x, a, loc, scale))


@util.jit
def gamma_cdf(x, a, loc=0, scale=1):
  x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
  return gammainc(a, jnp.clip((x - loc) / scale, 0, np.inf))


@util.jit
def gamma_logcdf(x, a, loc=0, scale=1):
  return lax.log(gamma_cdf(x, a, loc, scale))


@util.jit
def gamma_sf(x, a, loc=0, scale=1):
  x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
  y = (x - loc) / scale
  return jnp.where(y < 0, 1, gammaincc(a, y)).astype(x.dtype)


@util.jit
def gamma_logsf(x, a, loc=0, scale=1):
  return lax.log(gamma_sf(x, a, loc, scale))


# ----------------------------------------------------------------- chi2
@util.jit
def chi2_logpdf(x, df, loc=0, scale=1):
  x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
  y = (x - loc) / scale
  half_df = df / 2
  kernel = (half_df - 1) * lax.log(y) - y / 2
  log_norm = -(lax.lgamma(half_df) + np.log(2.0) * df / 2)
  return jnp.where(x < loc, -np.inf, log_norm - lax.log(scale) + kernel)


@util.jit
def chi2_pdf(x, df, loc=0, scale=1):
  return lax.exp(chi2_logpdf(x, df, loc, scale))


@util.jit
def chi2_cdf(x, df, loc=0, scale=1):
  x, df, loc, scale = promote_args_inexact("chi2.cdf", x, df, loc, scale)
  return gammainc(df / 2, jnp.clip((x - loc) / (scale * 2), 0, np.inf))


@util.jit
def chi2_logcdf(x, df, loc=0, scale=1):
  return lax.log(chi2_cdf(x, df, loc, scale))


@util.jit
def chi2_sf(x, df, loc=0, scale=1):
  x, df, loc, scale = promote_args_inexact("chi2.sf", x, df, loc, scale)
  return gammaincc(df / 2, jnp.clip((x - loc) / (scale * 2), 0, np.inf))


@util.jit
def chi2_logsf(x, df, loc=0, scale=1):
  return lax.log(chi2_sf(x, df, loc, scale))


# ----------------------------------------------------------------- beta
@util.jit
def beta_logpdf(x, a, b, loc=0, scale=1):
  x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
  y = (x - loc) / scale
  log_probs = -betaln(a, b) + xlogy(a - 1, y) + xlog1py(b - 1, -y) - lax.log(scale)
  log_probs = jnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
  return jnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, log_probs)


@util.jit
def beta_pdf(x, a, b, loc=0, scale=1):
  return lax.exp(beta_logpdf(x, a, b, loc, scale))


@util.jit
def beta_cdf(x, a, b, loc=0, scale=1):
  x, a, b, loc, scale = promote_args_inexact("beta.cdf", x, a, b, loc, scale)
  return betainc(a, b, jnp.clip((x - loc) / scale, 0, 1))


@util.jit
def beta_logcdf(x, a, b, loc=0, scale=1):
  return lax.log(beta_cdf(x, a, b, loc, scale))


@util.jit
def beta_sf(x, a, b, loc=0, scale=1):
  x, a, b, loc, scale = promote_args_inexact("beta.sf", x, a, b, loc, scale)
  return betainc(b, a, 1 - jnp.clip((x - loc) / scale, 0, 1))


@util.jit
def beta_logsf(x, a, b, loc=0, scale=1):
  return lax.log(beta_sf(x, a, b, loc, scale))


# ------------------------------------------------------------ truncnorm
# Every truncnorm function is a jit with its compiled tier: pdf, cdf and sf
# hold the log functions' jits, which a library program would inline and
# interpret (~20 special-function kernels: cdf of 1e3 elements 1.5 ms
# interpreted, ~60 us compiled).
def _log_diff(log_x, log_y):
  """log(x - y) from log x and log y."""
  return logsumexp(jnp.stack([log_x, log_y]),
                   b=jnp.stack([jnp.ones_like(log_x), -jnp.ones_like(log_y)]), axis=0)


def _log_gauss_mass(a, b):
  """log(Phi(b) - Phi(a)) for a <= b: in the tails as a difference of log
  CDFs (mirrored into the left tail), in the centre as log1p of the two tail
  masses, as SciPy computes it."""
  a, b = jnp.broadcast_arrays(jnp.asarray(a), jnp.asarray(b))
  left = b <= 0
  right = a > 0
  central = ~(left | right)
  a_tail = jnp.where(right, -b, a)
  b_tail = jnp.where(right, -a, b)
  tail = _log_diff(log_ndtr(b_tail), log_ndtr(a_tail))
  return jnp.where(central, jnp.log1p(-ndtr(a) - ndtr(-b)), tail)


@jit
def truncnorm_logpdf(x, a, b, loc=0, scale=1):
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
  out = norm_logpdf(x, loc, scale) - _log_gauss_mass(a, b)
  z = (x - loc) / scale
  out = jnp.where((z < a) | (z > b), -np.inf, out)
  return jnp.where(a >= b, np.nan, out)


@jit
def truncnorm_pdf(x, a, b, loc=0, scale=1):
  return lax.exp(truncnorm_logpdf(x, a, b, loc, scale))


@jit
def truncnorm_logcdf(x, a, b, loc=0, scale=1):
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
  x, a, b = jnp.broadcast_arrays(x, a, b)
  z = (x - loc) / scale
  log_mass = _log_gauss_mass(a, b)
  log_cdf = _log_gauss_mass(a, z) - log_mass
  log_sf = _log_gauss_mass(z, b) - log_mass
  # Near 1 the complement is the accurate one.
  out = jnp.select([z >= b, z <= a, log_cdf > -0.1, z > a],
                   [0.0, -np.inf, jnp.log1p(-jnp.exp(log_sf)), log_cdf])
  return jnp.where(a >= b, np.nan, out).astype(x.dtype)


@jit
def truncnorm_cdf(x, a, b, loc=0, scale=1):
  return lax.exp(truncnorm_logcdf(x, a, b, loc, scale))


@jit
def truncnorm_logsf(x, a, b, loc=0, scale=1):
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
  return truncnorm_logcdf(-x, -b, -a, -loc, scale)


@jit
def truncnorm_sf(x, a, b, loc=0, scale=1):
  return lax.exp(truncnorm_logsf(x, a, b, loc, scale))
