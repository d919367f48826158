"""Samplers built on rejection loops: gamma and its relatives (loggamma,
beta, dirichlet, chisquare, f, t, generalized_normal, ball), poisson,
binomial and multinomial (JAX 0.10's algorithms, op for op; the loops are
the primitives of ``control/random_loops.py``)."""
from __future__ import annotations

from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.custom_derivatives import custom_jvp
from openjax._src.random._common import jit
from openjax._src.core import concrete_or_error
from openjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from openjax._src.control.random_loops import (random_binomial_btrs_p,
                                                  random_binomial_inversion_p, random_gamma,
                                                  random_poisson_knuth_p,
                                                  random_poisson_rejection_p)
from openjax._src.random import jnp
from openjax._src.random._common import (check_all_safe_to_cast, check_broadcast_shapes,
                                         check_shape, const, float_dtype, isnan, user_dtype)
from openjax._src.random.keys import canonicalize_shape, check_prng_key, split
from openjax._src.random.samplers import _split, normal, rademacher
from openjax._src.random.samplers_continuous import exponential

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "chisquare", "f", "t",
           "generalized_normal", "ball", "poisson", "binomial", "multinomial"]


# ------------------------------------------------------------------- gamma
def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
  """Sample Gamma(a) random values (unit scale) with given shape and dtype."""
  key, _ = check_prng_key("gamma", key)
  dtype = float_dtype("gamma", dtype)
  if shape is not None:
    shape = canonicalize_shape(shape)
  return _gamma(key, a, shape=shape, dtype=dtype)


def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
  """Sample log-gamma random values: ``log(gamma(...))`` computed in log space,
  accurate for small ``a``."""
  key, _ = check_prng_key("loggamma", key)
  dtype = user_dtype(dtype)
  if not dtypes.issubdtype(dtype, np.floating):
    raise ValueError(f"dtype argument to `gamma` must be a float dtype, got {dtype}")
  if shape is not None:
    shape = canonicalize_shape(shape)
  return _gamma(key, a, shape=shape, dtype=dtype, log_space=True)


@partial(jit, static_argnames=("shape", "dtype", "log_space"))
def _gamma(key, a, shape, dtype, log_space=False):
  if shape is None:
    shape = np.shape(a)
  else:
    check_shape("gamma", shape, np.shape(a))
  a = lax.convert_element_type(a, dtype)
  if np.shape(a) != shape:
    a = jnp.broadcast_to(a, shape)
  return random_gamma(key, a, log_space=log_space)


def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
  """Sample Beta(a, b) random values with given shape and float dtype."""
  key, _ = check_prng_key("beta", key)
  dtype = float_dtype("beta", dtype)
  check_all_safe_to_cast("beta", dtype, a, b)
  shape = check_broadcast_shapes("beta", shape, a, b)
  return _beta(key, a, b, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _beta(key, a, b, shape, dtype):
  if shape is None:
    shape = lax.broadcast_shapes(np.shape(a), np.shape(b))
  else:
    check_shape("beta", shape, np.shape(a), np.shape(b))
  a = lax.convert_element_type(a, dtype)
  b = lax.convert_element_type(b, dtype)
  key_a, key_b = _split(key)
  a = jnp.broadcast_to(a, shape)
  b = jnp.broadcast_to(b, shape)
  log_gamma_a = loggamma(key_a, a, shape, dtype)
  log_gamma_b = loggamma(key_b, b, shape, dtype)
  # Compute gamma_a / (gamma_a + gamma_b) without losing precision.
  log_max = lax.max(log_gamma_a, log_gamma_b)
  gamma_a_scaled = jnp.exp(log_gamma_a - log_max)
  gamma_b_scaled = jnp.exp(log_gamma_b - log_max)
  return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


@partial(custom_jvp, nondiff_argnums=(1,))
def _softmax(x, axis):
  # jax.nn.softmax (its custom-JVP form, JAX's default)
  x_max = jnp.max(x, axis, keepdims=True)
  unnormalized = jnp.exp(x - x_max)
  return unnormalized / jnp.sum(unnormalized, axis, keepdims=True)


@_softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
  (x,), (x_dot,) = primals, tangents
  y = _softmax(x, axis)
  return y, y * (x_dot - (y * x_dot).sum(axis, keepdims=True))


def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
  """Sample Dirichlet random values with concentration ``alpha`` (last axis)."""
  key, _ = check_prng_key("dirichlet", key)
  dtype = float_dtype("dirichlet", dtype)
  if shape is not None:
    shape = canonicalize_shape(shape)
  return _dirichlet(key, alpha, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _dirichlet(key, alpha, shape, dtype):
  if not np.ndim(alpha) >= 1:
    raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                     f"{np.ndim(alpha)}")
  if shape is None:
    shape = np.shape(alpha)[:-1]
  else:
    check_shape("dirichlet", shape, np.shape(alpha)[:-1])
  alpha = lax.convert_element_type(alpha, dtype)
  # Sample log-gamma variates and normalise in log space (stable for small alpha).
  log_gamma_samples = loggamma(key, alpha, shape + np.shape(alpha)[-1:], dtype)
  return _softmax(log_gamma_samples, -1)


def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
  """Sample chi-square random values with ``df`` degrees of freedom."""
  key, _ = check_prng_key("chisquare", key)
  dtype = float_dtype("chisquare", dtype)
  shape = check_broadcast_shapes("chisquare", shape, df)
  check_all_safe_to_cast("chisquare", dtype, df)
  return _chisquare(key, df, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _chisquare(key, df, shape, dtype):
  df = lax.convert_element_type(df, dtype)
  two = const(df, 2)
  half_df = lax.div(df, two)
  log_g = loggamma(key, a=half_df, shape=shape, dtype=dtype)
  return lax.mul(jnp.exp(log_g), two)


def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
  """Sample F-distribution random values with the given degrees of freedom."""
  key, _ = check_prng_key("f", key)
  dtype = float_dtype("f", dtype)
  shape = check_broadcast_shapes("f", shape, dfnum, dfden)
  check_all_safe_to_cast("f", dtype, dfnum, dfden)
  return _f(key, dfnum, dfden, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _f(key, dfnum, dfden, shape, dtype):
  dfden = lax.convert_element_type(dfden, dtype)
  dfnum = lax.convert_element_type(dfnum, dtype)
  key_dfd, key_dfn = _split(key)
  chi2_dfn = chisquare(key_dfn, dfnum, shape, dtype)
  chi2_dfd = chisquare(key_dfd, dfden, shape, dtype)
  num = lax.div(chi2_dfn, dfnum)
  den = lax.div(chi2_dfd, dfden)
  return lax.div(num, den)


def t(key, df, shape=None, dtype=None, *, out_sharding=None):
  """Sample Student's t random values with ``df`` degrees of freedom."""
  key, _ = check_prng_key("t", key)
  dtype = float_dtype("t", dtype)
  shape = check_broadcast_shapes("t", shape, df)
  check_all_safe_to_cast("t", dtype, df)
  return _t(key, df, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _t(key, df, shape, dtype):
  if shape is None:
    shape = np.shape(df)
  else:
    check_shape("t", shape, np.shape(df))
  df = lax.convert_element_type(df, dtype)
  key_n, key_g = _split(key)
  n = normal(key_n, shape, dtype)
  two = const(n, 2)
  half_df = lax.div(df, two)
  g = gamma(key_g, half_df, shape, dtype)
  return n * jnp.sqrt(half_df / g)


def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
  """Sample from the generalized normal distribution with shape parameter ``p``."""
  shape = canonicalize_shape(shape)
  key, _ = check_prng_key("generalized_normal", key)
  dtype = user_dtype(dtype)
  check_shape("generalized_normal", shape)
  return _generalized_normal(key, p, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _generalized_normal(key, p, shape, dtype):
  keys = split(key)
  g = gamma(keys[0], 1 / p, shape, dtype)
  r = rademacher(keys[1], shape, dtype)
  return r * g ** (1 / p)


def ball(key, d: int, p: float = 2, shape=(), dtype=None, *, out_sharding=None):
  """Sample uniformly from the unit L^p ball of dimension ``d``."""
  shape = canonicalize_shape(shape)
  key, _ = check_prng_key("ball", key)
  dtype = user_dtype(dtype)
  check_shape("ball", shape)
  d = concrete_or_error(int, d, "The error occurred in jax.random.ball()")
  return _ball(key, p, d, shape, dtype)


@partial(jit, static_argnums=(2, 3, 4))
def _ball(key, p, d, shape, dtype):
  k1, k2 = split(key)
  g = generalized_normal(k1, p, (*shape, d), dtype)
  e = exponential(k2, shape, dtype)
  return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


# ----------------------------------------------------------------- poisson
def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
  """Sample Poisson random values with rate ``lam`` and integer dtype."""
  key, _ = check_prng_key("poisson", key)
  dtype = user_dtype(dtype, int)
  if shape is not None:
    shape = canonicalize_shape(shape)
  else:
    shape = np.shape(lam)
  lam = jnp.broadcast_to(lam, shape)
  lam = lax.convert_element_type(lam, np.float32)
  return _poisson(key, lam, shape, dtype)


@partial(jit, static_argnums=(2, 3))
def _poisson(key, lam, shape, dtype):
  # Knuth's algorithm for lam < 10, Hormann's transformed rejection above
  # (as TensorFlow and NumPy).
  use_knuth = isnan(lam) | (lam < 10)
  lam_knuth = lax.select(use_knuth, lam, lax.full_like(lam, 0.0))
  # The rejection sampler's acceptance rate maxes out near 89%: any large
  # value serves where Knuth is used.
  lam_rejection = lax.select(use_knuth, lax.full_like(lam, 1e5), lam)
  result = lax.select(
      use_knuth,
      random_poisson_knuth_p.bind1(key, lam_knuth, dtype=dtype),
      random_poisson_rejection_p.bind1(key, lam_rejection, dtype=dtype))
  return lax.select(lam == 0, jnp.zeros_like(result), result)


# ---------------------------------------------------------------- binomial
def binomial(key, n, p, shape=None, dtype=None):
  """Sample binomial random values (successes in ``n`` trials of probability ``p``)."""
  key, _ = check_prng_key("binomial", key)
  check_arraylike("binomial", n, p)
  dtype = float_dtype("binomial", dtype)
  if shape is not None:
    shape = canonicalize_shape(shape)
  return _binomial(key, n, p, shape, dtype)


@partial(jit, static_argnums=(3, 4), inline=True)
def _binomial(key, count, prob, shape, dtype):
  if shape is None:
    shape = jnp.broadcast_shapes(np.shape(count), np.shape(prob))
  else:
    check_shape("binomial", shape, np.shape(count), np.shape(prob))
  (prob,) = promote_dtypes_inexact(prob)
  count = lax.convert_element_type(count, prob.dtype)
  count = jnp.broadcast_to(count, shape)
  prob = jnp.broadcast_to(prob, shape)
  p_lt_half = prob < 0.5
  q = lax.select(p_lt_half, prob, 1.0 - prob)
  count_nan_or_neg = isnan(count) | (count < 0.0)
  count_inf = jnp.isinf(count)
  q_is_nan = isnan(q)
  q_l_0 = q < 0.0
  q = lax.select(q_is_nan | q_l_0, lax.full_like(q, 0.01), q)
  use_inversion = count_nan_or_neg | (count * q <= 10.0)
  # consistent with np.random.binomial behavior for float count input
  count = jnp.floor(count)
  count_inv = lax.select(use_inversion, count, lax.full_like(count, 0.0))
  count_btrs = lax.select(use_inversion, lax.full_like(count, 1e4), count)
  q_btrs = lax.select(use_inversion, lax.full_like(q, 0.5), q)
  samples = lax.select(
      use_inversion,
      random_binomial_inversion_p.bind1(key, count_inv, q, dtype=dtype),
      random_binomial_btrs_p.bind1(key, count_btrs, q_btrs, dtype=dtype))
  # invalid arguments give NaN; an infinite count gives inf
  invalid = q_l_0 | q_is_nan | count_nan_or_neg
  samples = lax.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
  samples = lax.select(count_inf & (~invalid), jnp.full_like(samples, np.inf, dtype), samples)
  return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf,
                    samples, count.astype(dtype) - samples)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
  """Sample multinomial counts: ``n`` trials over outcomes with probabilities
  ``p`` (outcomes on the last axis)."""
  key, _ = check_prng_key("multinomial", key)
  check_arraylike("multinomial", n, p)
  n, p = promote_dtypes_inexact(n, p)
  if shape is None:
    shape = p.shape
  n = jnp.broadcast_to(n, shape[:-1])
  p = jnp.broadcast_to(p, shape)
  p = jnp.moveaxis(p, -1, 0)
  remaining_probs = lax.cumsum(p, 0, reverse=True)
  ratios = p / jnp.where(remaining_probs == 0, 1, remaining_probs)
  keys = split(key, ratios.shape[0])
  # JAX scans over the outcomes; the loop below is that scan unrolled.
  remainder, counts = n, []
  for i in range(ratios.shape[0]):
    count = binomial(keys[i], remainder, ratios[i].clip(0, 1), dtype=remainder.dtype)
    remainder = remainder - count
    counts.append(count)
  counts = jnp.stack(counts)
  return jnp.moveaxis(counts, 0, -1).astype(dtype)
