"""Multivariate distributions: the multivariate normal (through a Cholesky
factor), the Dirichlet and the multinomial.

Each density is a cached library program (``util.jit``): traced once per
signature, eagerly its steps run on the eval trace's kernels (~1 us each)
instead of a dispatch per operation.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.numpy import util
from openjax._src.numpy.util import promote_args_inexact, promote_args_numeric, promote_dtypes_inexact
from openjax._src.scipy import jnp
from openjax._src.scipy.special import gammaln, xlogy

__all__ = ["multivariate_normal_logpdf", "multivariate_normal_pdf", "dirichlet_logpdf",
           "dirichlet_pdf", "multinomial_logpmf", "multinomial_pmf"]


def _solve_lower(chol, y):
  """L^-1 y for a (batch of) lower-triangular L and vectors y (``...n``),
  broadcast against each other."""
  n = y.shape[-1]
  batch = jnp.broadcast_shapes(chol.shape[:-2], y.shape[:-1])
  chol = jnp.broadcast_to(chol, batch + (n, n))
  y = jnp.broadcast_to(y, batch + (n,))[..., None]
  return lax.linalg.triangular_solve(chol, y, left_side=True, lower=True)[..., 0]


@util.jit
def multivariate_normal_logpdf(x, mean, cov, allow_singular=None):
  """Log density of N(mean, cov); ``cov`` may be a scalar (isotropic) or a
  (batch of) positive-definite matrices."""
  if allow_singular is not None:
    raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
  x, mean, cov = promote_dtypes_inexact(x, mean, cov)
  if not mean.shape:
    return -0.5 * jnp.square(x - mean) / cov - 0.5 * (np.log(2 * np.pi) + jnp.log(cov))
  n = mean.shape[-1]
  if not np.shape(cov):
    y = x - mean
    return (-0.5 * jnp.einsum("...i,...i->...", y, y) / cov
            - n / 2 * (np.log(2 * np.pi) + jnp.log(cov)))
  if cov.ndim < 2 or cov.shape[-2:] != (n, n):
    raise ValueError(f"multivariate_normal.logpdf got incompatible shapes: mean "
                     f"{mean.shape}, cov {cov.shape}; cov must end in ({n}, {n}).")
  chol = lax.linalg.cholesky(cov)
  y = _solve_lower(chol, x - mean)
  return (-0.5 * jnp.einsum("...i,...i->...", y, y) - n / 2 * np.log(2 * np.pi)
          - jnp.log(jnp.diagonal(chol, axis1=-1, axis2=-2)).sum(-1))


@util.jit
def multivariate_normal_pdf(x, mean, cov):
  return lax.exp(multivariate_normal_logpdf(x, mean, cov))


@util.jit
def dirichlet_logpdf(x, alpha):
  """Log density of the Dirichlet distribution; ``x`` holds the components on
  axis 0 (all of them, or all but the last, which is then 1 - sum)."""
  x, alpha = promote_dtypes_inexact(x, alpha)
  if alpha.ndim != 1:
    raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
  if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
    raise ValueError("`x` must have either the same number of entries as `alpha` or one entry "
                     f"fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
  if x.shape[0] != alpha.shape[0]:
    x = jnp.concatenate([x, 1 - x.sum(0, keepdims=True)], axis=0)
  log_norm = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
  if x.ndim > 1:
    alpha = alpha.reshape(alpha.shape + (1,) * (x.ndim - 1))
  log_probs = jnp.sum(xlogy(alpha - 1, x), axis=0) - log_norm
  on_simplex = jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-6)
  return jnp.where(on_simplex, log_probs, -np.inf)


@util.jit
def dirichlet_pdf(x, alpha):
  return lax.exp(dirichlet_logpdf(x, alpha))


@util.jit
def multinomial_logpmf(x, n, p):
  """Log pmf of the multinomial distribution; ``x`` and ``n`` are integers."""
  p, = promote_args_inexact("multinomial.logpmf", p)
  x, n = promote_args_numeric("multinomial.logpmf", x, n)
  if not dtypes.issubdtype(x.dtype, np.integer):
    raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, "
                     f"n.dtype={n.dtype}")
  x = x.astype(p.dtype)
  n = n.astype(p.dtype)
  log_probs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
  return jnp.where(jnp.sum(x) == n, log_probs, -np.inf)


@util.jit
def multinomial_pmf(x, n, p):
  return lax.exp(multinomial_logpmf(x, n, p))
