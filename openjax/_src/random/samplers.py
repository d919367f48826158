"""The core samplers of ``jax.random``: uniform, normal, randint, bernoulli,
truncated_normal, gumbel, categorical, permutation, choice, rademacher.

Each follows JAX 0.10's algorithm op for op (and its ``jit`` nesting), so the
same key gives the same bits and values.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import concrete_or_error
from openjax._src.numpy.util import canonicalize_axis, check_arraylike, promote_dtypes_inexact
from openjax._src.primitives.random_bits.random_bits import random_bits, random_split
from openjax._src.random import jnp
from openjax._src.random._common import (UINT_DTYPES, check_shape, const, float_dtype, jit,
                                         user_dtype)
from openjax._src.random.keys import canonicalize_shape, check_prng_key
from openjax._src.random.out_sharding import lays_out_result
__all__ = ["uniform", "normal", "randint", "bernoulli", "truncated_normal", "gumbel",
           "categorical", "permutation", "choice", "rademacher"]


def _split(key, num=2):
  """Split raw key data inside samplers (``num`` may be a shape)."""
  shape = tuple(num) if isinstance(num, Sequence) else (num,)
  return random_split(key, shape)


# ----------------------------------------------------------------- uniform
@lays_out_result
def uniform(key, shape=(), dtype=None, minval=0., maxval=1., *, out_sharding=None):
  """Sample uniform random values in [minval, maxval) with given shape/dtype."""
  key, _ = check_prng_key("uniform", key)
  dtype = user_dtype(dtype)
  shape = canonicalize_shape(shape)
  if not dtypes.issubdtype(dtype, np.floating):
    raise ValueError(f"dtype argument to `uniform` must be a float dtype, got {dtype}")
  return _uniform(key, minval, maxval, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _uniform(key, minval, maxval, shape, dtype):
  check_shape("uniform", shape)
  if not dtypes.issubdtype(dtype, np.floating):
    raise TypeError("uniform only accepts floating point dtypes.")
  minval = lax.convert_element_type(minval, dtype)
  maxval = lax.convert_element_type(maxval, dtype)
  minval = lax.broadcast_to_rank(minval, len(shape))
  maxval = lax.broadcast_to_rank(maxval, len(shape))
  finfo = dtypes.finfo(dtype)
  nbits, nmant = finfo.bits, finfo.nmant
  if nbits not in (8, 16, 32, 64):
    raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
  rng_bits = 8 if nmant < 8 else nbits
  bits = random_bits(key, rng_bits, shape)
  uint_dtype = UINT_DTYPES[nbits]
  if rng_bits != nbits:
    bits = lax.convert_element_type(bits, uint_dtype)
  # Random mantissa bits under the exponent of 1.0, then shift and scale.
  float_bits = lax.shift_right_logical(bits, jnp.array(rng_bits - nmant, uint_dtype))
  float_bits = lax.bitwise_or(
      float_bits, jnp.asarray(np.array(1.0, dtype).view(uint_dtype), dtype=uint_dtype))
  floats = lax.bitcast_convert_type(float_bits, dtype) - jnp.array(1., dtype)
  return lax.max(minval, lax.reshape(floats * (maxval - minval) + minval, shape))


# ------------------------------------------------------------------ normal
@lays_out_result
def normal(key, shape=(), dtype=None, *, out_sharding=None):
  """Sample standard normal random values with given shape and float dtype."""
  key, _ = check_prng_key("normal", key)
  shape = canonicalize_shape(shape)
  dtype = float_dtype("normal", dtype, inexact=True)
  return _normal(key, shape, dtype)


@partial(jit, static_argnums=(1, 2))
def _normal(key, shape, dtype):
  if dtypes.issubdtype(dtype, np.complexfloating):
    sqrt2 = np.array(np.sqrt(2), dtype)
    key_re, key_im = _split(key)
    real_dtype = np.array(0, dtype).real.dtype
    re = _normal_real(key_re, shape, real_dtype).astype(dtype)
    im = _normal_real(key_im, shape, real_dtype).astype(dtype)
    return (re + 1j * im) / sqrt2
  return _normal_real(key, shape, dtype)


@partial(jit, static_argnums=(1, 2))
def _normal_real(key, shape, dtype):
  check_shape("normal", shape)
  lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)
  hi = np.array(1., dtype)
  u = uniform(key, shape, dtype, lo, hi)
  return lax.mul(np.array(np.sqrt(2), dtype), lax.erf_inv(u))


# ----------------------------------------------------------------- randint
def _convert_and_clip_integer(val, dtype):
  """``val`` converted to the integer ``dtype``, clipped to its range."""
  val_dtype = val.dtype
  if not (dtypes.issubdtype(dtype, np.integer) and dtypes.issubdtype(val_dtype, np.integer)):
    raise TypeError("_convert_and_clip_integer only accepts integer dtypes.")
  min_val = const(val, max(dtypes.iinfo(dtype).min, dtypes.iinfo(val_dtype).min))
  max_val = const(val, min(dtypes.iinfo(dtype).max, dtypes.iinfo(val_dtype).max))
  return jnp.clip(val, min_val, max_val).astype(dtype)


@lays_out_result
def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
  """Sample uniform random integers in [minval, maxval) with given shape/dtype."""
  key, _ = check_prng_key("randint", key)
  dtype = user_dtype(dtype, int)
  shape = canonicalize_shape(shape)
  if not dtypes.issubdtype(dtype, np.integer):
    raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
  info = dtypes.iinfo(dtype)
  dtype_for_sampling = dtype
  if info.bits < 32:
    # Sample in 32 bits to avoid biased results.
    dtype_for_sampling = np.dtype("int32")
    minval = jnp.asarray(minval).astype("int32").clip(int(info.min), int(info.max))
    maxval = jnp.asarray(maxval).astype("int32").clip(int(info.min), int(info.max) + 1)
  return _randint(key, minval, maxval, shape, dtype_for_sampling).astype(dtype)


@partial(jit, static_argnums=(3, 4))
def _randint(key, minval, maxval, shape, dtype):
  check_shape("randint", shape, np.shape(minval), np.shape(maxval))
  if not dtypes.issubdtype(dtype, np.integer):
    raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
  check_arraylike("randint", minval, maxval)
  minval = jnp.asarray(minval)
  maxval = jnp.asarray(maxval)
  if not dtypes.issubdtype(minval.dtype, np.integer):
    minval = minval.astype(int)
  if not dtypes.issubdtype(maxval.dtype, np.integer):
    maxval = maxval.astype(int)
  # maxval above the dtype's range (e.g. randint(key, shape, 0, 256, 'uint8')).
  maxval_out_of_range = lax.gt(
      maxval, _convert_and_clip_integer(jnp.array(dtypes.iinfo(dtype).max, dtype),
                                        maxval.dtype))
  minval = _convert_and_clip_integer(minval, dtype)
  maxval = _convert_and_clip_integer(maxval, dtype)
  minval = lax.broadcast_to_rank(minval, len(shape))
  maxval = lax.broadcast_to_rank(maxval, len(shape))
  nbits = dtypes.iinfo(dtype).bits
  if nbits not in (8, 16, 32, 64):
    raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
  # Twice the dtype's bits per value, reduced modulo the span.
  k1, k2 = _split(key)
  higher_bits = random_bits(k1, nbits, shape)
  lower_bits = random_bits(k2, nbits, shape)
  unsigned_dtype = UINT_DTYPES[nbits]
  span = lax.convert_element_type(maxval - minval, unsigned_dtype)
  span = lax.select(maxval <= minval, lax.full_like(span, 1), span)
  span = lax.select(maxval_out_of_range & (maxval > minval),
                    lax.add(span, const(span, 1)), span)
  multiplier = lax.rem(const(span, 2 ** (nbits // 2)), span)
  multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
  random_offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier),
                          lax.rem(lower_bits, span))
  random_offset = lax.rem(random_offset, span)
  return lax.add(minval, lax.convert_element_type(random_offset, dtype))


# --------------------------------------------------------------- bernoulli
@lays_out_result
def bernoulli(key, p=0.5, shape=None, mode: str = "low", *, out_sharding=None):
  """Sample Bernoulli random values (booleans) with given shape and mean."""
  if shape is not None:
    shape = canonicalize_shape(shape)
  if mode not in ["high", "low"]:
    raise ValueError(f"got {mode=}, expected 'high' or 'low'")
  key, _ = check_prng_key("bernoulli", key)
  dtype = dtypes.dtype(p)
  if not dtypes.issubdtype(dtype, np.floating):
    raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
  p = lax.convert_element_type(p, dtype)
  return _bernoulli(key, p, shape=shape, mode=mode)


@partial(jit, static_argnames=("shape", "mode"))
def _bernoulli(key, p, shape, mode):
  if shape is None:
    shape = np.shape(p)
  else:
    check_shape("bernoulli", shape, np.shape(p))
  dtype = p.dtype
  if mode == "high":
    u1, u2 = uniform(key, (2, *shape), dtype)
    u2 *= 2 ** (-dtypes.finfo(dtype).nmant)
    return u2 < p - u1
  return uniform(key, shape, dtype) < p


# -------------------------------------------------------- truncated_normal
@lays_out_result
def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
  """Sample truncated standard normal values in the open interval (lower, upper)."""
  if shape is not None:
    shape = canonicalize_shape(shape)
  key, _ = check_prng_key("truncated_normal", key)
  dtype = float_dtype("truncated_normal", dtype)
  return _truncated_normal(key, lower, upper, shape, dtype)


@partial(jit, static_argnums=(3, 4))
def _truncated_normal(key, lower, upper, shape, dtype):
  if shape is None:
    shape = lax.broadcast_shapes(np.shape(lower), np.shape(upper))
  else:
    check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
  sqrt2 = np.array(np.sqrt(2), dtype)
  lower = lax.convert_element_type(lower, dtype)
  upper = lax.convert_element_type(upper, dtype)
  a = lax.erf(lower / sqrt2)
  b = lax.erf(upper / sqrt2)
  if not dtypes.issubdtype(dtype, np.floating):
    raise TypeError("truncated_normal only accepts floating point dtypes.")
  u = uniform(key, shape, dtype, minval=a, maxval=b)
  out = sqrt2 * lax.erf_inv(u)
  # Clamp to the open interval: rounding can land on the bounds.
  return jnp.clip(out,
                  lax.nextafter(lax.stop_gradient(lower), np.array(np.inf, dtype=dtype)),
                  lax.nextafter(lax.stop_gradient(upper), np.array(-np.inf, dtype=dtype)))


# ------------------------------------------------------------------ gumbel
@lays_out_result
def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
  """Sample Gumbel random values with given shape and float dtype."""
  key, _ = check_prng_key("gumbel", key)
  dtype = float_dtype("gumbel", dtype)
  shape = canonicalize_shape(shape)
  if mode is None:
    mode = "low"
  if mode not in ("highest", "high", "low"):
    raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
  return _gumbel(key, shape, dtype, mode)


def _safe_int_to_float(bits, dtype):
  """Pairs of uint32 words as float32 in (0, 1) with full dynamic range."""
  if bits.dtype != np.uint32 or dtype != np.float32:
    raise RuntimeError("_safe_int_to_float only works for u32 -> f32")
  finfo = dtypes.finfo(dtype)
  hiclz, loclz = lax.clz(bits)
  hi, lo = bits
  mantissa = lax.bitwise_or(
      lax.shift_left(hi, hiclz),
      jnp.where(hiclz == 32, lax.shift_left(lo, loclz),
                lax.shift_right_logical(lo, finfo.bits - hiclz)))
  mantissa = lax.shift_right_logical(
      mantissa, np.array(finfo.bits - finfo.nmant - 1, dtype=np.uint32))
  mantissa = lax.bitwise_and(mantissa, np.array((1 << finfo.nmant) - 1, dtype=np.uint32))
  exp = lax.shift_left(-finfo.minexp - jnp.where(hiclz == 32, 32 + loclz, hiclz),
                       np.array(finfo.nmant, dtype=np.uint32))
  exp = lax.bitwise_and(exp, np.array((1 << (finfo.bits - 2)) - (1 << (finfo.nmant - 1)),
                                      dtype=np.uint32))
  return lax.bitcast_convert_type(lax.bitwise_or(exp, mantissa), dtype)


@partial(jit, static_argnums=(1, 2, 3))
def _gumbel(key, shape, dtype, mode):
  check_shape("gumbel", shape)
  info = dtypes.finfo(dtype)
  if dtype == np.float32 and mode == "highest":
    bits = random_bits(key, info.bits, (2,) + shape)
    neg = lax.bitwise_not(bits)
    lo_bits = neg[1]
    neg = neg + jnp.array([lo_bits == np.array((1 << info.bits) - 1, dtype=np.uint32),
                           jnp.ones_like(lo_bits)], dtype=np.uint32)
    flip_mask = bits[0] < np.array(1 << (info.bits - 1), dtype=np.uint32)
    x = _safe_int_to_float(jnp.where(flip_mask, bits, neg), dtype=np.float32)
    return jnp.where(flip_mask, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))
  if mode in ("high", "highest"):
    high, low = _uniform(key, 0.0, 1.0, (2,) + shape, dtype)
    x = jnp.where(high >= 0.5, high, high + 2 ** (-info.nmant) * low + info.tiny)
    return -jnp.log(-jnp.log1p(-x))
  return -jnp.log(-jnp.log(_uniform(key, info.tiny, 1., shape, dtype)))


# ------------------------------------------------------------- categorical
@lays_out_result
def categorical(key, logits, axis: int = -1, shape=None, replace: bool = True, mode=None,
                *, out_sharding=None):
  """Sample categories with the given (unnormalised) log-probabilities."""
  key, _ = check_prng_key("categorical", key)
  check_arraylike("categorical", logits)
  logits_arr = jnp.asarray(logits)
  batch_shape = tuple(np.delete(logits_arr.shape, axis))
  if shape is None:
    shape = batch_shape
  else:
    shape = canonicalize_shape(shape)
    check_shape("categorical", shape, batch_shape)
  shape_prefix = shape[:len(shape) - len(batch_shape)]
  if replace:
    if axis >= 0:
      axis -= len(logits_arr.shape)
    logits_shape = list(shape[len(shape) - len(batch_shape):])
    logits_shape.insert(axis % len(logits_arr.shape), logits_arr.shape[axis])
    return jnp.argmax(
        gumbel(key, (*shape_prefix, *logits_shape), logits_arr.dtype, mode=mode)
        + lax.expand_dims(logits_arr, tuple(range(len(shape_prefix)))),
        axis=axis)
  logits_arr = logits_arr + gumbel(key, logits_arr.shape, logits_arr.dtype, mode=mode)
  k = math.prod(shape_prefix)
  if k > logits_arr.shape[axis]:
    raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                     f"of categories ({logits_arr.shape[axis]}).")
  _, indices = lax.top_k(jnp.moveaxis(logits_arr, axis, -1), k)
  dimensions = (indices.ndim - 1, *range(indices.ndim - 1))
  return lax.reshape(indices, shape, dimensions)


# ----------------------------------------------------- permutation, choice
@lays_out_result
def permutation(key, x, axis: int = 0, independent: bool = False, *, out_sharding=None):
  """A random permutation of ``arange(x)`` or of an array along ``axis``."""
  key, _ = check_prng_key("permutation", key)
  check_arraylike("permutation", x)
  axis = canonicalize_axis(axis, np.ndim(x) or 1)
  if not np.ndim(x):
    if not dtypes.issubdtype(dtypes.dtype(x), np.integer):
      raise TypeError("x must be an integer or at least 1-dimensional")
    r = concrete_or_error(int, x, "argument x of jax.random.permutation()")
    return _shuffle(key, jnp.arange(r), axis)
  if independent or np.ndim(x) == 1:
    return _shuffle(key, x, axis)
  ind = _shuffle(key, jnp.arange(x.shape[axis]), 0)
  return jnp.take(x, ind, axis, unique_indices=True)


@partial(jit, static_argnums=(2,))
def _shuffle(key, x, axis):
  # Repeated sorts by fresh 32-bit keys; the number of rounds makes key
  # collisions unlikely (tjablin@'s heuristic, as in JAX and TensorFlow).
  exponent = 3
  uint32max = dtypes.iinfo(np.uint32).max
  num_rounds = int(np.ceil(exponent * np.log(max(1, x.size)) / np.log(uint32max)))
  for _ in range(num_rounds):
    key, subkey = _split(key)
    sort_keys = random_bits(subkey, 32, x.shape)
    _, x = lax.sort_key_val(sort_keys, x, axis)
  return x


def choice(key, a, shape=(), replace: bool = True, p=None, axis: int = 0, mode=None):
  """A random sample from ``a`` (or ``arange(a)``), optionally weighted by ``p``."""
  key, _ = check_prng_key("choice", key)
  if not isinstance(shape, Sequence):
    raise TypeError("shape argument of jax.random.choice must be a sequence, "
                    f"got {shape}")
  check_arraylike("choice", a)
  arr = jnp.asarray(a)
  if arr.ndim == 0:
    n_inputs = concrete_or_error(int, a, "The error occurred in jax.random.choice()")
  else:
    axis = canonicalize_axis(axis, arr.ndim)
    n_inputs = arr.shape[axis]
  n_draws = math.prod(shape)
  if n_draws == 0:
    return jnp.zeros(shape, dtype=arr.dtype)
  if n_inputs <= 0:
    raise ValueError("a must be greater than 0 unless no samples are taken")
  if not replace and n_draws > n_inputs:
    raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                     f"(size {n_inputs}) when 'replace=False'")
  if p is None:
    if replace:
      ind = randint(key, shape, 0, n_inputs)
      result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    else:
      slices = (slice(None),) * axis + (slice(n_draws),)
      result = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)[slices]
  else:
    check_arraylike("choice", p)
    p_arr, = promote_dtypes_inexact(p)
    if p_arr.shape != (n_inputs,):
      raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                       f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.")
    if replace:
      p_cuml = jnp.cumsum(p_arr)
      r = p_cuml[-1] * (1 - uniform(key, shape, dtype=p_cuml.dtype))
      ind = jnp.searchsorted(p_cuml, r).astype(int)
    else:
      # Gumbel top-k trick.
      g = gumbel(key, (n_inputs,), dtype=p_arr.dtype, mode=mode) + jnp.log(p_arr)
      ind = lax.top_k(g, k=n_draws)[1].astype(int)
    result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
  return result.reshape(shape if arr.ndim == 0 else
                        arr.shape[0:axis] + tuple(shape) + arr.shape[axis + 1:])


# -------------------------------------------------------------- rademacher
@lays_out_result
def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
  """Sample from a Rademacher distribution: -1 or 1 with equal probability."""
  key, _ = check_prng_key("rademacher", key)
  dtype = user_dtype(dtype, int)
  shape = canonicalize_shape(shape)
  return _rademacher(key, shape, dtype)


@partial(jit, static_argnums=(1, 2))
def _rademacher(key, shape, dtype):
  bernoulli_samples = bernoulli(key=key, p=0.5, shape=shape).astype(dtype)
  return (2 * bernoulli_samples - 1).astype(dtype)

