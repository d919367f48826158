"""Samplers that transform uniform or normal draws: exponential, laplace,
logistic, cauchy, pareto, weibull_min, rayleigh, wald, triangular, lognormal,
maxwell, double_sided_maxwell, geometric, multivariate_normal, orthogonal
(JAX 0.10's algorithms, op for op)."""
from __future__ import annotations

from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import concrete_or_error
from openjax._src.numpy.linalg import cholesky, eigh, qr, svd
from openjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from openjax._src.random import jnp
from openjax._src.random._common import (check_all_safe_to_cast, check_broadcast_shapes,
                                         check_shape, const, float_dtype, jit, user_dtype)
from openjax._src.random.keys import canonicalize_shape, check_prng_key
from openjax._src.random.out_sharding import lays_out_result
from openjax._src.random.samplers import _split, normal, rademacher, uniform

__all__ = ["exponential", "laplace", "logistic", "cauchy", "pareto", "weibull_min",
           "rayleigh", "wald", "triangular", "lognormal", "maxwell", "double_sided_maxwell",
           "geometric", "multivariate_normal", "orthogonal"]

# ------------------------------------------------- uniform transformations
@lays_out_result
def exponential(key, shape=(), dtype=None, *, out_sharding=None):
  """Sample Exponential(1) random values with given shape and float dtype."""
  key, _ = check_prng_key("exponential", key)
  dtype = float_dtype("exponential", dtype)
  shape = canonicalize_shape(shape)
  return _exponential(key, shape, dtype)


@partial(jit, static_argnums=(1, 2))
def _exponential(key, shape, dtype):
  check_shape("exponential", shape)
  u = uniform(key, shape, dtype)
  # taking 1 - u to move the domain of log to (0, 1] instead of [0, 1)
  return lax.neg(lax.log1p(lax.neg(u)))


@lays_out_result
def laplace(key, shape=(), dtype=None, *, out_sharding=None):
  """Sample Laplace random values with given shape and float dtype."""
  key, _ = check_prng_key("laplace", key)
  dtype = float_dtype("laplace", dtype)
  shape = canonicalize_shape(shape)
  return _laplace(key, shape, dtype)


@partial(jit, static_argnums=(1, 2))
def _laplace(key, shape, dtype):
  check_shape("laplace", shape)
  u = uniform(key, shape, dtype, minval=-1. + dtypes.finfo(dtype).epsneg, maxval=1.)
  return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@lays_out_result
def logistic(key, shape=(), dtype=None, *, out_sharding=None):
  """Sample logistic random values with given shape and float dtype."""
  key, _ = check_prng_key("logistic", key)
  dtype = float_dtype("logistic", dtype)
  shape = canonicalize_shape(shape)
  return _logistic(key, shape, dtype)


@partial(jit, static_argnums=(1, 2))
def _logistic(key, shape, dtype):
  check_shape("logistic", shape)
  x = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).tiny, maxval=1.)
  return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


@lays_out_result
def cauchy(key, shape=(), dtype=None, *, out_sharding=None):
  """Sample Cauchy random values with given shape and float dtype."""
  key, _ = check_prng_key("cauchy", key)
  dtype = float_dtype("cauchy", dtype)
  shape = canonicalize_shape(shape)
  return _cauchy(key, shape, dtype)


@partial(jit, static_argnums=(1, 2))
def _cauchy(key, shape, dtype):
  check_shape("cauchy", shape)
  u = uniform(key, shape, dtype, minval=dtypes.finfo(dtype).eps, maxval=1.)
  pi = const(u, np.pi)
  return lax.tan(lax.mul(pi, lax.sub(u, const(u, 0.5))))


@lays_out_result
def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
  """Sample Pareto random values with shape parameter ``b``."""
  key, _ = check_prng_key("pareto", key)
  dtype = float_dtype("pareto", dtype)
  shape = check_broadcast_shapes("pareto", shape, b)
  check_all_safe_to_cast("pareto", dtype, b)
  return _pareto(key, b, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _pareto(key, b, shape, dtype):
  b = lax.convert_element_type(b, dtype)
  e = exponential(key, shape, dtype)
  return lax.exp(e / b)


def weibull_min(key, scale, concentration, shape=(), dtype=None):
  """Sample from a Weibull distribution on [0, inf)."""
  key, _ = check_prng_key("weibull_min", key)
  dtype = float_dtype("weibull_min", dtype)
  shape = canonicalize_shape(shape)
  return _weibull_min(key, scale, concentration, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _weibull_min(key, scale, concentration, shape, dtype):
  random_uniform = uniform(key=key, shape=shape, minval=0, maxval=1, dtype=dtype)
  # inverse weibull CDF
  return jnp.power(-jnp.log1p(-random_uniform), 1.0 / concentration) * scale


@lays_out_result
def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
  """Sample Rayleigh random values with given scale."""
  key, _ = check_prng_key("rayleigh", key)
  dtype = float_dtype("rayleigh", dtype)
  shape = check_broadcast_shapes("rayleigh", shape, scale)
  check_all_safe_to_cast("rayleigh", dtype, scale)
  return _rayleigh(key, scale, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _rayleigh(key, scale, shape, dtype):
  u = uniform(key, shape, dtype)
  scale = scale.astype(dtype)
  scale = jnp.broadcast_to(scale, shape)
  log_u = lax.log(u)
  n_two = const(scale, -2)
  sqrt_u = lax.sqrt(lax.mul(log_u, n_two))
  return lax.mul(scale, sqrt_u)


@lays_out_result
def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
  """Sample triangular random values with given left, mode and right."""
  key, _ = check_prng_key("triangular", key)
  dtype = float_dtype("triangular", dtype)
  shape = check_broadcast_shapes("triangular", shape, left, mode, right)
  check_all_safe_to_cast("triangular", dtype, left, mode, right)
  return _triangular(key, left, mode, right, shape, dtype)


@partial(jit, static_argnums=(4, 5), inline=True)
def _triangular(key, left, mode, right, shape, dtype):
  # inverse-CDF sampling of the triangular distribution
  left = jnp.broadcast_to(lax.convert_element_type(left, dtype), shape)
  right = jnp.broadcast_to(lax.convert_element_type(right, dtype), shape)
  mode = jnp.broadcast_to(lax.convert_element_type(mode, dtype), shape)
  fc = (mode - left) / (right - left)
  u = uniform(key, shape, dtype)
  out1 = left + lax.sqrt(u * (right - left) * (mode - left))
  out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
  return lax.select(u < fc, out1, out2)


@lays_out_result
def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
  """Sample geometric random values (number of trials to the first success)."""
  key, _ = check_prng_key("geometric", key)
  dtype = user_dtype(dtype, int)
  if not dtypes.issubdtype(dtype, np.integer):
    raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
  shape = check_broadcast_shapes("geometric", shape, p)
  return _geometric(key, p, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _geometric(key, p, shape, dtype):
  check_arraylike("geometric", p)
  p, = promote_dtypes_inexact(p)
  u = uniform(key, shape, p.dtype)
  u = jnp.where(u == 0, 1, u)
  log_u = lax.log(u)
  log_one_minus_p = lax.log1p(-p)
  log_one_minus_p = jnp.broadcast_to(log_one_minus_p, shape)
  g = lax.floor(lax.div(log_u, log_one_minus_p)) + 1
  return g.astype(dtype)


# -------------------------------------------------- normal transformations
@lays_out_result
def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
  """Sample Wald (inverse Gaussian) random values with given mean."""
  key, _ = check_prng_key("wald", key)
  dtype = float_dtype("wald", dtype)
  shape = check_broadcast_shapes("wald", shape, mean)
  check_all_safe_to_cast("wald", dtype, mean)
  return _wald(key, mean, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _wald(key, mean, shape, dtype):
  k1, k2 = _split(key, 2)
  mean = mean.astype(dtype)
  mean = jnp.broadcast_to(mean, shape)
  v = normal(k1, shape, dtype)
  z = uniform(k2, shape, dtype)
  y = lax.integer_pow(v, 2)
  y_sq = lax.integer_pow(y, 2)
  mean_sq = lax.integer_pow(mean, 2)
  sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
  x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
  return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


@lays_out_result
def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):
  """Sample lognormal random values: ``exp(sigma * normal)``."""
  key, _ = check_prng_key("lognormal", key)
  dtype = float_dtype("lognormal", dtype, inexact=True)
  shape = check_broadcast_shapes("lognormal", shape, sigma)
  check_all_safe_to_cast("lognormal", dtype, sigma)
  return _lognormal(key, sigma, shape, dtype)


@partial(jit, static_argnums=(2, 3), inline=True)
def _lognormal(key, sigma, shape, dtype):
  sigma = lax.convert_element_type(sigma, dtype)
  scaled_norm = normal(key, shape, dtype) * sigma
  return lax.exp(scaled_norm)


def _norm_last(x):
  # jnp.linalg.norm(x, axis=-1) for real x: sqrt(sum(real(x * conj(x))))
  return jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x)), axis=-1))


@lays_out_result
def maxwell(key, shape=(), dtype=None, *, out_sharding=None):
  """Sample from a one-sided Maxwell distribution (the norm of a 3-d normal)."""
  key, _ = check_prng_key("maxwell", key)
  dtype = float_dtype("maxwell", dtype)
  shape = canonicalize_shape(shape)
  return _maxwell(key, shape, dtype)


@partial(jit, static_argnums=(1, 2))
def _maxwell(key, shape, dtype):
  shape = shape + (3,)
  norm_rvs = normal(key=key, shape=shape, dtype=dtype)
  return _norm_last(norm_rvs)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
  """Sample from a double-sided Maxwell distribution with given loc and scale."""
  key, _ = check_prng_key("double_sided_maxwell", key)
  dtype = float_dtype("double_sided_maxwell", dtype)
  shape = canonicalize_shape(shape)
  return _double_sided_maxwell(key, loc, scale, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _double_sided_maxwell(key, loc, scale, shape, dtype):
  params_shapes = lax.broadcast_shapes(np.shape(loc), np.shape(scale))
  if not shape:
    shape = params_shapes
  shape = shape + params_shapes
  maxwell_key, rademacher_key = _split(key)
  maxwell_rvs = maxwell(maxwell_key, shape=shape, dtype=dtype)
  random_sign = rademacher(rademacher_key, shape=shape, dtype=dtype)
  return random_sign * maxwell_rvs * scale + loc


# ------------------------------------------------------- linear algebra
@lays_out_result
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method: str = "cholesky", *,
                        out_sharding=None):
  """Sample multivariate normal values with given mean and covariance."""
  key, _ = check_prng_key("multivariate_normal", key)
  mean, cov = promote_dtypes_inexact(mean, cov)
  if method not in {"svd", "eigh", "cholesky"}:
    raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
  if dtype is None:
    dtype = mean.dtype
  else:
    dtype = user_dtype(dtype)
  if not dtypes.issubdtype(dtype, np.floating):
    raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, "
                     f"got {dtype}")
  if shape is not None:
    shape = canonicalize_shape(shape)
  return _multivariate_normal(key, mean, cov, shape, np.dtype(dtype), method)


# Run op by op outside transformations, so eager calls decompose with LAPACK
# (as JAX does) rather than openjax's compiled loops.
@partial(jit, static_argnums=(3, 4, 5), _eager=True)
def _multivariate_normal(key, mean, cov, shape, dtype, method):
  if not np.ndim(mean) >= 1:
    raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                     f"{np.ndim(mean)}")
  if not np.ndim(cov) >= 2:
    raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                     f"{np.ndim(cov)}")
  n = mean.shape[-1]
  if np.shape(cov)[-2:] != (n, n):
    raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                     f"but got cov.shape == {np.shape(cov)}.")
  if shape is None:
    shape = lax.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
  else:
    check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
  if method == "svd":
    u, s, _ = svd(cov)
    factor = u * jnp.sqrt(s[..., None, :])
  elif method == "eigh":
    w, v = eigh(cov)
    factor = v * jnp.sqrt(w[..., None, :])
  else:  # 'cholesky'
    factor = cholesky(cov)
  normal_samples = normal(key, shape + mean.shape[-1:], dtype)
  return mean + jnp.einsum("...ij,...j->...i", factor, normal_samples)


@lays_out_result
def orthogonal(key, n: int, shape=(), dtype=None, m: int | None = None, *,
               out_sharding=None):
  """Sample uniformly from the orthogonal group O(n) (or n x m semi-orthogonal
  matrices)."""
  _m = n if m is None else m
  shape = canonicalize_shape(shape)
  key, _ = check_prng_key("orthogonal", key)
  dtype = user_dtype(dtype)
  check_shape("orthogonal", shape)
  n = concrete_or_error(int, n, "The error occurred in jax.random.orthogonal()")
  _m = concrete_or_error(int, _m, "The error occurred in jax.random.orthogonal()")
  return _orthogonal(key, n, _m, shape, dtype)


@partial(jit, static_argnums=(1, 2, 3, 4), _eager=True)
def _orthogonal(key, n, _m, shape, dtype):
  z = normal(key, (*shape, max(n, _m), min(n, _m)), dtype)
  q, r = qr(z)
  d = jnp.diagonal(r, 0, -2, -1)
  x = q * jnp.expand_dims(jnp.sign(d), -2)
  if n < _m:
    return jnp.matrix_transpose(x)
  return x
