"""Continuous distributions with closed-form densities: the normal, Student's
t, exponential, Laplace, logistic, Cauchy, Pareto, uniform, Gumbel (left and
right skewed), generalized normal, von Mises and wrapped Cauchy distributions.

As in SciPy, ``loc`` and ``scale`` shift and stretch the standard form:
``f(x; loc, scale) = f((x - loc) / scale) / scale``. Out-of-support points get
-inf log densities; invalid shape parameters give NaN where JAX gives NaN.

Each density is a cached library program (``util.jit``): traced once per
signature, eagerly its steps run on the eval trace's kernels (~1 us each)
instead of a dispatch per operation. The normal's CDFs and quantiles are jits
with their compiled tier, as ``special_error``'s functions they call (see
there).
"""
from __future__ import annotations

import numpy as np

from openjax._src import lax
from openjax._src.api.jit import jit
from openjax._src.nn.activations import log1mexp
from openjax._src.numpy import util
from openjax._src.numpy.util import promote_args_inexact
from openjax._src.scipy import jnp
from openjax._src.scipy.special import expit, logit
from openjax._src.scipy.special_error import log_ndtr, ndtr, ndtri

__all__ = [
    "norm_logpdf", "norm_pdf", "norm_cdf", "norm_logcdf", "norm_sf", "norm_logsf", "norm_ppf",
    "norm_isf", "t_logpdf", "t_pdf", "expon_logpdf", "expon_pdf", "expon_cdf", "expon_logcdf",
    "expon_sf", "expon_logsf", "expon_ppf", "laplace_logpdf", "laplace_pdf", "laplace_cdf",
    "logistic_logpdf", "logistic_pdf", "logistic_cdf", "logistic_sf", "logistic_ppf",
    "logistic_isf", "cauchy_logpdf", "cauchy_pdf", "cauchy_cdf", "cauchy_logcdf", "cauchy_sf",
    "cauchy_logsf", "cauchy_ppf", "cauchy_isf", "pareto_logpdf", "pareto_pdf", "pareto_cdf",
    "pareto_logcdf", "pareto_sf", "pareto_logsf", "pareto_ppf", "uniform_logpdf", "uniform_pdf",
    "uniform_cdf", "uniform_ppf", "gumbel_l_logpdf", "gumbel_l_pdf", "gumbel_l_cdf",
    "gumbel_l_logcdf", "gumbel_l_sf", "gumbel_l_logsf", "gumbel_l_ppf", "gumbel_r_logpdf",
    "gumbel_r_pdf", "gumbel_r_cdf", "gumbel_r_logcdf", "gumbel_r_sf", "gumbel_r_logsf",
    "gumbel_r_ppf", "gennorm_logpdf", "gennorm_pdf", "gennorm_cdf", "vonmises_logpdf",
    "vonmises_pdf", "wrapcauchy_logpdf", "wrapcauchy_pdf",
]


def _outside_quantile_range(q):
  return jnp.isnan(q) | (q < 0) | (q > 1)


# ----------------------------------------------------------------- norm
@util.jit
def norm_logpdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
  var = lax.square(scale)
  return -(lax.log(2 * np.pi * var) + lax.square(x - loc) / var) / 2


@util.jit
def norm_pdf(x, loc=0, scale=1):
  return lax.exp(norm_logpdf(x, loc, scale))


@jit
def norm_cdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
  return ndtr((x - loc) / scale)


@jit
def norm_logcdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
  return log_ndtr((x - loc) / scale)


@jit
def norm_sf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
  return norm_cdf(-x, -loc, scale)


@jit
def norm_logsf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
  return norm_logcdf(-x, -loc, scale)


@jit
def norm_ppf(q, loc=0, scale=1):
  q, loc, scale = promote_args_inexact("norm.ppf", q, loc, scale)
  return ndtri(q) * scale + loc


@jit
def norm_isf(q, loc=0, scale=1):
  q, loc, scale = promote_args_inexact("norm.isf", q, loc, scale)
  return norm_ppf(1 - q, loc, scale)


# -------------------------------------------------------------------- t
@util.jit
def t_logpdf(x, df, loc=0, scale=1):
  x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
  z = (x - loc) / scale
  half_df = df / 2
  log_norm = (lax.lgamma(half_df) + lax.log(np.pi * scale * scale * df) / 2
              - lax.lgamma(half_df + 0.5))
  return -(log_norm + (half_df + 0.5) * lax.log1p(z * z / df))


@util.jit
def t_pdf(x, df, loc=0, scale=1):
  return lax.exp(t_logpdf(x, df, loc, scale))


# ---------------------------------------------------------------- expon
@util.jit
def expon_logpdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
  return jnp.where(x < loc, -np.inf, -((x - loc) / scale + lax.log(scale)))


@util.jit
def expon_pdf(x, loc=0, scale=1):
  return lax.exp(expon_logpdf(x, loc, scale))


@util.jit
def expon_cdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
  return jnp.where(x < loc, 0.0, -lax.expm1((loc - x) / scale)).astype(x.dtype)


@util.jit
def expon_logsf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("expon.logsf", x, loc, scale)
  return jnp.where(x < loc, 0.0, (loc - x) / scale).astype(x.dtype)


@util.jit
def expon_sf(x, loc=0, scale=1):
  return lax.exp(expon_logsf(x, loc, scale))


@util.jit
def expon_logcdf(x, loc=0, scale=1):
  return lax.log1p(-expon_sf(x, loc, scale))


@util.jit
def expon_ppf(q, loc=0, scale=1):
  q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
  return jnp.where(_outside_quantile_range(q), np.nan, loc - scale * lax.log1p(-q))


# -------------------------------------------------------------- laplace
@util.jit
def laplace_logpdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
  return -(lax.abs(x - loc) / scale + lax.log(2 * scale))


@util.jit
def laplace_pdf(x, loc=0, scale=1):
  return lax.exp(laplace_logpdf(x, loc, scale))


@util.jit
def laplace_cdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
  z = (x - loc) / scale
  return jnp.where(z <= 0, 0.5 * lax.exp(z), 1 - 0.5 * lax.exp(-z))


# ------------------------------------------------------------- logistic
@util.jit
def logistic_logpdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
  half = (x - loc) / scale / 2
  # log f(z) = -2 log(e^(z/2) + e^(-z/2)), symmetric and overflow-free.
  return -2 * jnp.logaddexp(half, -half) - lax.log(scale)


@util.jit
def logistic_pdf(x, loc=0, scale=1):
  return lax.exp(logistic_logpdf(x, loc, scale))


@util.jit
def logistic_cdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
  return expit((x - loc) / scale)


@util.jit
def logistic_sf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
  return expit((loc - x) / scale)


@util.jit
def logistic_ppf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
  return logit(x) * scale + loc


@util.jit
def logistic_isf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
  return -logit(x) * scale + loc


# --------------------------------------------------------------- cauchy
@util.jit
def cauchy_logpdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
  z = (x - loc) / scale
  return -(lax.log(np.pi * scale) + lax.log1p(z * z))


@util.jit
def cauchy_pdf(x, loc=0, scale=1):
  return lax.exp(cauchy_logpdf(x, loc, scale))


@util.jit
def cauchy_cdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
  return 0.5 + jnp.arctan((x - loc) / scale) / np.pi


@util.jit
def cauchy_logcdf(x, loc=0, scale=1):
  return lax.log(cauchy_cdf(x, loc, scale))


@util.jit
def cauchy_sf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
  return cauchy_cdf(-x, -loc, scale)


@util.jit
def cauchy_logsf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
  return cauchy_logcdf(-x, -loc, scale)


@util.jit
def cauchy_ppf(q, loc=0, scale=1):
  q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
  return lax.tan(np.pi * q - np.pi / 2) * scale + loc


@util.jit
def cauchy_isf(q, loc=0, scale=1):
  q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
  return lax.tan(np.pi / 2 - np.pi * q) * scale + loc


# --------------------------------------------------------------- pareto
@util.jit
def pareto_logpdf(x, b, loc=0, scale=1):
  x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
  z = (x - loc) / scale
  log_probs = -(lax.log(scale / b) + (b + 1) * lax.log(z))
  return jnp.where(x < loc + scale, -np.inf, log_probs)


@util.jit
def pareto_pdf(x, b, loc=0, scale=1):
  return lax.exp(pareto_logpdf(x, b, loc, scale))


@util.jit
def pareto_cdf(x, b, loc=0, scale=1):
  x, b, loc, scale = promote_args_inexact("pareto.cdf", x, b, loc, scale)
  z = (x - loc) / scale
  return jnp.where(x < loc + scale, 0.0, 1 - lax.pow(z, -b)).astype(x.dtype)


@util.jit
def pareto_logcdf(x, b, loc=0, scale=1):
  x, b, loc, scale = promote_args_inexact("pareto.logcdf", x, b, loc, scale)
  z = (x - loc) / scale
  return jnp.where(x < loc + scale, -np.inf, lax.log1p(-lax.pow(z, -b)))


@util.jit
def pareto_logsf(x, b, loc=0, scale=1):
  x, b, loc, scale = promote_args_inexact("pareto.logsf", x, b, loc, scale)
  z = (x - loc) / scale
  return jnp.where(x < loc + scale, 0.0, -b * lax.log(z)).astype(x.dtype)


@util.jit
def pareto_sf(x, b, loc=0, scale=1):
  return lax.exp(pareto_logsf(x, b, loc, scale))


@util.jit
def pareto_ppf(q, b, loc=0, scale=1):
  q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
  return jnp.where(_outside_quantile_range(q), np.nan, loc + scale * lax.pow(1 - q, -1 / b))


# -------------------------------------------------------------- uniform
@util.jit
def uniform_logpdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
  return jnp.where((x > loc + scale) | (x < loc), -np.inf, -lax.log(scale))


@util.jit
def uniform_pdf(x, loc=0, scale=1):
  return lax.exp(uniform_logpdf(x, loc, scale))


@util.jit
def uniform_cdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
  inside = (x >= loc) & (x <= loc + scale)
  return jnp.select([x < loc, x > loc + scale, inside], [0.0, 1.0, (x - loc) / scale],
                    0.0).astype(x.dtype)


@util.jit
def uniform_ppf(q, loc=0, scale=1):
  q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
  return jnp.where(_outside_quantile_range(q), np.nan, loc + scale * q)


# ------------------------------------------------------------- gumbel_l
# -log(scale) where JAX writes xlogy(-1, scale) (the same values): JAX's form
# cannot be differentiated in scale (the integer -1 gets a float0 tangent).
def _gumbel_z(name, x, loc, scale):
  x, loc, scale = promote_args_inexact(name, x, loc, scale)
  return (x - loc) / scale, scale > 0, scale


@util.jit
def gumbel_l_logpdf(x, loc=0, scale=1):
  z, ok, scale = _gumbel_z("gumbel_l.logpdf", x, loc, scale)
  return jnp.where(ok, -lax.log(scale) + z - lax.exp(z), np.nan)


@util.jit
def gumbel_l_pdf(x, loc=0, scale=1):
  return lax.exp(gumbel_l_logpdf(x, loc, scale))


@util.jit
def gumbel_l_logcdf(x, loc=0, scale=1):
  z, ok, _ = _gumbel_z("gumbel_l.logcdf", x, loc, scale)
  return jnp.where(ok, lax.log(-lax.expm1(-lax.exp(z))), np.nan)


@util.jit
def gumbel_l_cdf(x, loc=0, scale=1):
  return lax.exp(gumbel_l_logcdf(x, loc, scale))


@util.jit
def gumbel_l_logsf(x, loc=0, scale=1):
  z, ok, _ = _gumbel_z("gumbel_l.logsf", x, loc, scale)
  return jnp.where(ok, -lax.exp(z), np.nan)


@util.jit
def gumbel_l_sf(x, loc=0, scale=1):
  return lax.exp(gumbel_l_logsf(x, loc, scale))


@util.jit
def gumbel_l_ppf(p, loc=0, scale=1):
  p, loc, scale = promote_args_inexact("gumbel_l.ppf", p, loc, scale)
  return jnp.where((p > 0) & (p < 1), loc + scale * lax.log(-lax.log1p(-p)), np.nan)


# ------------------------------------------------------------- gumbel_r
@util.jit
def gumbel_r_logpdf(x, loc=0, scale=1):
  z, ok, scale = _gumbel_z("gumbel_r.logpdf", x, loc, scale)
  return jnp.where(ok, -lax.log(scale) - (z + lax.exp(-z)), np.nan)


@util.jit
def gumbel_r_pdf(x, loc=0, scale=1):
  return lax.exp(gumbel_r_logpdf(x, loc, scale))


@util.jit
def gumbel_r_logcdf(x, loc=0, scale=1):
  z, ok, _ = _gumbel_z("gumbel_r.logcdf", x, loc, scale)
  return jnp.where(ok, -lax.exp(-z), np.nan)


@util.jit
def gumbel_r_cdf(x, loc=0, scale=1):
  return lax.exp(gumbel_r_logcdf(x, loc, scale))


@util.jit
def gumbel_r_sf(x, loc=0, scale=1):
  z, ok, _ = _gumbel_z("gumbel_r.sf", x, loc, scale)
  return jnp.where(ok, 1 - lax.exp(-lax.exp(-z)), np.nan)


@util.jit
def gumbel_r_logsf(x, loc=0, scale=1):
  z, ok, _ = _gumbel_z("gumbel_r.logsf", x, loc, scale)
  return jnp.where(ok, log1mexp(lax.exp(-z)), np.nan)


@util.jit
def gumbel_r_ppf(p, loc=0, scale=1):
  p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
  return jnp.where((p > 0) & (p < 1), loc - scale * lax.log(-lax.log(p)), np.nan)


# -------------------------------------------------------------- gennorm
@util.jit
def gennorm_logpdf(x, beta):
  x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
  return lax.log(0.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta


@util.jit
def gennorm_pdf(x, beta):
  return lax.exp(gennorm_logpdf(x, beta))


@util.jit
def gennorm_cdf(x, beta):
  x, beta = promote_args_inexact("gennorm.cdf", x, beta)
  return 0.5 * (1 + lax.sign(x) * lax.igamma(1 / beta, lax.abs(x) ** beta))


# ------------------------------------------------------------- circular
@util.jit
def vonmises_logpdf(x, kappa):
  x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
  # log I0(kappa) = kappa + log i0e(kappa): the scaled Bessel function keeps
  # large concentrations finite.
  log_probs = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax.bessel_i0e(kappa))
  return jnp.where(kappa > 0, log_probs, np.nan)


@util.jit
def vonmises_pdf(x, kappa):
  return lax.exp(vonmises_logpdf(x, kappa))


@util.jit
def wrapcauchy_logpdf(x, c):
  x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
  log_probs = (jnp.log(1 - c * c) - jnp.log(2 * np.pi)
               - jnp.log(1 + c * c - 2 * c * jnp.cos(x)))
  in_support = jnp.where((x >= 0) & (x <= 2 * np.pi), log_probs, -np.inf)
  return jnp.where((c > 0) & (c < 1), in_support, np.nan)


@util.jit
def wrapcauchy_pdf(x, c):
  return lax.exp(wrapcauchy_logpdf(x, c))
