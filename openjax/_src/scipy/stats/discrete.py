"""Discrete distributions: Bernoulli, binomial, beta-binomial, negative
binomial, geometric and Poisson (``loc`` shifts the support, as in SciPy).

Each density is a cached library program (``util.jit``): traced once per
signature, eagerly its steps run on the eval trace's kernels (~1 us each)
instead of a dispatch per operation.
"""
from __future__ import annotations

import numpy as np

from openjax._src import lax
from openjax._src.api.jit import jit
from openjax._src.numpy import util
from openjax._src.numpy.eager_programs import eager_program
from openjax._src.numpy.util import ensure_arraylike, promote_args_inexact, promote_dtypes_inexact
from openjax._src.scipy import jnp
from openjax._src.scipy.special import betaln, entr, gammaincc, gammaln, xlog1py, xlogy

__all__ = [
    "bernoulli_logpmf", "bernoulli_pmf", "bernoulli_cdf", "bernoulli_ppf", "binom_logpmf",
    "binom_pmf", "betabinom_logpmf", "betabinom_pmf", "nbinom_logpmf", "nbinom_pmf",
    "geom_logpmf", "geom_pmf", "poisson_logpmf", "poisson_pmf", "poisson_cdf",
    "poisson_entropy",
]


# ------------------------------------------------------------ bernoulli
@util.jit
def bernoulli_logpmf(k, p, loc=0):
  k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
  x = k - loc
  log_probs = xlogy(x, p) + xlog1py(1 - x, -p)
  return jnp.where((x < 0) | (x > 1), -np.inf, log_probs)


@util.jit
def bernoulli_pmf(k, p, loc=0):
  return jnp.exp(bernoulli_logpmf(k, p, loc))


@util.jit
def bernoulli_cdf(k, p):
  k, p = promote_args_inexact("bernoulli.cdf", k, p)
  invalid = jnp.isnan(k) | jnp.isnan(p) | (p < 0) | (p > 1)
  return jnp.select([invalid, k < 0, (k >= 0) & (k < 1), k >= 1],
                    [jnp.full_like(k, np.nan), jnp.zeros_like(k), 1 - p, jnp.ones_like(k)])


@util.jit
def bernoulli_ppf(q, p):
  q, p = promote_args_inexact("bernoulli.ppf", q, p)
  invalid = jnp.isnan(q) | jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
  return jnp.where(invalid, np.nan, jnp.where(q <= 1 - p, 0.0, 1.0)).astype(q.dtype)


# ---------------------------------------------------------------- binom
@util.jit
def binom_logpmf(k, n, p, loc=0):
  k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
  y = k - loc
  log_comb = gammaln(n + 1) - (gammaln(y + 1) + gammaln(n - y + 1))
  log_linear = xlogy(y, p) + xlog1py(n - y, -p)
  log_probs = jnp.where(((y == 0) & (n == 0)) | (log_linear == 0), 0.0, log_comb + log_linear)
  return jnp.where((k >= loc) & (k < loc + n + 1), log_probs, -np.inf)


@util.jit
def binom_pmf(k, n, p, loc=0):
  return lax.exp(binom_logpmf(k, n, p, loc))


# ------------------------------------------------------------ betabinom
# Not jitted (JAX's is): under an eager grad the jitted function's transpose
# is compiled on its own, and IREE fuses it into a dispatch with 77 bindings,
# more than its runtime takes (64); grad(jit(f)) of this body fails so.
# Eager calls still run as one cached program (eager_program: traced calls,
# grad's included, stay inline), not ~40 dispatches (10 elements: ~420 us).
@eager_program()
def betabinom_logpmf(k, n, a, b, loc=0):
  k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
  y = lax.floor(k) - loc
  log_comb = -(lax.log1p(n) + betaln(n - y + 1, y + 1))
  log_probs = log_comb + betaln(y + a, n - y + b) - betaln(a, b)
  log_probs = jnp.where((y == 0) & (n == 0), 0.0, log_probs)
  log_probs = jnp.where((y < -loc) | (y > n) | (y + a <= 0), -np.inf, log_probs)
  return jnp.where((n < 0) | (a <= 0) | (b <= 0), np.nan, log_probs)


@eager_program()
def betabinom_pmf(k, n, a, b, loc=0):
  return lax.exp(betabinom_logpmf(k, n, a, b, loc))


# --------------------------------------------------------------- nbinom
@util.jit
def nbinom_logpmf(k, n, p, loc=0):
  k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
  y = k - loc
  log_comb = gammaln(y + n) - gammaln(n) - gammaln(y + 1)
  log_probs = log_comb + xlogy(n, p) + xlogy(y, 1 - p)
  return jnp.where(k < loc, -np.inf, log_probs)


@util.jit
def nbinom_pmf(k, n, p, loc=0):
  return lax.exp(nbinom_logpmf(k, n, p, loc))


# ----------------------------------------------------------------- geom
@util.jit
def geom_logpmf(k, p, loc=0):
  k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
  x = k - loc
  return jnp.where(x <= 0, -np.inf, xlog1py(x - 1, -p) + lax.log(p))


@util.jit
def geom_pmf(k, p, loc=0):
  return jnp.exp(geom_logpmf(k, p, loc))


# -------------------------------------------------------------- poisson
@util.jit
def poisson_logpmf(k, mu, loc=0):
  k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
  x = k - loc
  log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
  return jnp.where((x < 0) | (jnp.round(k) != k), -np.inf, log_probs)


@util.jit
def poisson_pmf(k, mu, loc=0):
  return jnp.exp(poisson_logpmf(k, mu, loc))


@util.jit
def poisson_cdf(k, mu, loc=0):
  k, mu, loc = promote_args_inexact("poisson.cdf", k, mu, loc)
  x = k - loc
  return jnp.where(x < 0, 0.0, gammaincc(jnp.floor(1 + x), mu)).astype(k.dtype)


def _poisson_entropy_sum(mu, max_k: int, upper):
  """-sum_k p_k log p_k over k < min(max_k, upper(mu))."""
  k = jnp.arange(max_k, dtype=mu.dtype)[:, None]
  probs = jnp.where(k < jnp.ceil(upper)[None, :], poisson_pmf(k, mu, 0), 0.0)
  return jnp.sum(entr(probs), axis=0)


@jit
def poisson_entropy(mu, loc=0):
  """Entropy of the Poisson distribution: the sum over the support for
  mu < 100 (35 or 250 terms), the asymptotic expansion beyond."""
  mu, loc = ensure_arraylike("poisson.entropy", mu, loc)
  mu, loc = promote_dtypes_inexact(mu, loc)
  shape = jnp.broadcast_shapes(mu.shape, loc.shape)
  flat = jnp.ravel(mu)
  small = _poisson_entropy_sum(flat, 35, flat + 20)
  medium = _poisson_entropy_sum(flat, 250, flat + 10 * jnp.sqrt(flat) + 20)
  large = 0.5 * jnp.log(2 * np.pi * np.e * flat) - 1.0 / (12 * flat)
  out = jnp.where(flat == 0, 0.0, jnp.where(flat < 10, small, jnp.where(flat < 100, medium, large)))
  return jnp.broadcast_to(out.reshape(mu.shape), shape).astype(mu.dtype)
