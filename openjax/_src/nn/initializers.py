"""``jax.nn.initializers``: weight initializers in the Keras/Sonnet
conventions, built on ``jax.random`` so that a key gives JAX's values.

An initializer is called as ``init(key, shape, dtype=None, out_sharding=None)``;
builders such as ``glorot_uniform()`` return one. ``orthogonal`` and
``delta_orthogonal`` are not provided: they need a QR decomposition
(``jax.numpy.linalg.qr``), which openjax does not have yet.
"""
from __future__ import annotations

import math
import typing
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from openjax._src import dtypes
from openjax._src.nn import jnp
from openjax._src.random.keys import canonicalize_shape, split
from openjax._src.random.samplers import normal as _normal
from openjax._src.random.samplers import truncated_normal as _truncated_normal
from openjax._src.random.samplers import uniform as _uniform

__all__ = ["Initializer", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "xavier_uniform", "glorot_normal",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "kaiming_uniform",
           "he_normal", "kaiming_normal"]


@typing.runtime_checkable
class Initializer(Protocol):
  """What the builders in ``jax.nn.initializers`` return: a callable
  ``(key, shape, dtype=None, out_sharding=None) -> Array``."""

  def __call__(self, key, shape, dtype=None, out_sharding=None):
    raise NotImplementedError


def _dtype_or_default(dtype):
  return dtypes.default_float_dtype() if dtype is None else dtype


def zeros(key, shape, dtype=None, out_sharding=None):
  """An initializer returning zeros of ``shape`` (the key is ignored)."""
  return jnp.zeros(shape, _dtype_or_default(dtype), out_sharding=out_sharding)


def ones(key, shape, dtype=None, out_sharding=None):
  """An initializer returning ones of ``shape`` (the key is ignored)."""
  return jnp.ones(shape, _dtype_or_default(dtype), out_sharding=out_sharding)


def constant(value, dtype=None) -> Initializer:
  """Build an initializer returning arrays filled with ``value``; ``dtype``
  is its default dtype."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    return jnp.full(shape, value, dtype=_dtype_or_default(dtype))
  return init


def uniform(scale=1e-2, dtype=None) -> Initializer:
  """Build an initializer drawing uniformly from ``[0, scale)``."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    dtype = _dtype_or_default(dtype)
    return _uniform(key, shape, dtype, out_sharding=out_sharding) * jnp.array(scale, dtype)
  return init


def normal(stddev=1e-2, dtype=None) -> Initializer:
  """Build an initializer drawing from a normal distribution with mean 0 and
  standard deviation ``stddev``."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    dtype = _dtype_or_default(dtype)
    return _normal(key, shape, dtype, out_sharding=out_sharding) * jnp.array(stddev, dtype)
  return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0) -> Initializer:
  r"""Build an initializer drawing from a standard normal truncated to
  ``(lower, upper)``, then scaled by ``stddev`` (no variance correction: the
  result's standard deviation is below ``stddev``)."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    dtype = _dtype_or_default(dtype)
    return _truncated_normal(key, lower, upper, shape, dtype,
                             out_sharding=out_sharding) * jnp.array(stddev, dtype)
  return init


def _axes_size(shape, axes) -> int:
  if isinstance(axes, int):
    return shape[axes]
  return math.prod(shape[i] for i in axes)


def _compute_fans(shape: Sequence[int], in_axis=-2, out_axis=-1, batch_axis=()):
  """Effective input and output sizes of a dense or convolution kernel: the
  axes outside ``in_axis``/``out_axis``/``batch_axis`` form the receptive
  field, whose size multiplies both."""
  if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
    raise ValueError(
        f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor "
        "with default in_axis. Must be at least 2D or specify in_axis explicitly.")
  in_size = _axes_size(shape, in_axis)
  out_size = _axes_size(shape, out_axis)
  batch_size = _axes_size(shape, batch_axis)
  receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
  return in_size * receptive_field_size, out_size * receptive_field_size


def _real_dtype(dtype) -> np.dtype:
  return np.array(0, dtype).real.dtype


def _complex_uniform(key, shape, dtype):
  """Uniform samples on the unit-variance disk of the complex plane."""
  key_r, key_theta = split(key)
  real_dtype = _real_dtype(dtype)
  dtype = dtypes.to_complex_dtype(real_dtype)
  r = jnp.sqrt(2 * _uniform(key_r, shape, real_dtype)).astype(dtype)
  theta = 2 * np.pi * _uniform(key_theta, shape, real_dtype).astype(dtype)
  return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
  """Samples of a centred complex normal (variance 1 before truncation)
  whose modulus is truncated to ``upper``."""
  key_r, key_theta = split(key)
  real_dtype = _real_dtype(dtype)
  dtype = dtypes.to_complex_dtype(real_dtype)
  t = ((1 - jnp.exp(jnp.array(-(upper ** 2), dtype)))
       * _uniform(key_r, shape, real_dtype).astype(dtype))
  r = jnp.sqrt(-jnp.log(1 - t))
  theta = 2 * np.pi * _uniform(key_theta, shape, real_dtype).astype(dtype)
  return r * jnp.exp(1j * theta)


# Standard deviation of a standard normal truncated to (-2, 2), and of the
# complex normal truncated to modulus 2: dividing by it restores the variance.
_TRUNCATED_STDDEV = .87962566103423978
_COMPLEX_TRUNCATED_STDDEV = .95311164380491208


def variance_scaling(scale, mode: str, distribution: str, in_axis: int | Sequence[int] = -2,
                     out_axis: int | Sequence[int] = -1,
                     batch_axis: int | Sequence[int] = (), dtype=None) -> Initializer:
  r"""Build an initializer whose variance adapts to the kernel's shape:
  ``scale / n`` with ``n`` the fan-in (``mode="fan_in"``), the fan-out
  (``"fan_out"``), their mean (``"fan_avg"``) or geometric mean
  (``"fan_geo_avg"``).

  ``distribution`` is ``"truncated_normal"`` (a normal truncated at two
  standard deviations, rescaled to the target variance), ``"normal"`` or
  ``"uniform"``; complex dtypes draw from the disk / complex normal with the
  same variance. ``in_axis``, ``out_axis`` and ``batch_axis`` name the kernel
  axes (the others form the receptive field).
  """
  def init(key, shape, dtype=dtype, out_sharding=None):
    shape = canonicalize_shape(shape)
    dtype = _dtype_or_default(dtype)
    fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
    if mode == "fan_in":
      denominator = fan_in
    elif mode == "fan_out":
      denominator = fan_out
    elif mode == "fan_avg":
      denominator = (fan_in + fan_out) / 2
    elif mode == "fan_geo_avg":
      denominator = (fan_in * fan_out) ** 0.5
    else:
      raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    variance = jnp.array(scale / denominator, dtype=dtype)
    if distribution == "truncated_normal":
      if dtypes.issubdtype(dtype, np.floating):
        stddev = jnp.sqrt(variance) / jnp.array(_TRUNCATED_STDDEV, dtype)
        return _truncated_normal(key, -2, 2, shape, dtype, out_sharding=out_sharding) * stddev
      stddev = jnp.sqrt(variance) / jnp.array(_COMPLEX_TRUNCATED_STDDEV, dtype)
      return _complex_truncated_normal(key, 2, shape, dtype) * stddev
    if distribution == "normal":
      return _normal(key, shape, dtype, out_sharding=out_sharding) * jnp.sqrt(variance)
    if distribution == "uniform":
      if dtypes.issubdtype(dtype, np.floating):
        # uniform on [-1, 1) has variance 1/3
        return _uniform(key, shape, dtype, -1, out_sharding=out_sharding) * jnp.sqrt(3 * variance)
      return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
    raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")
  return init


def _specialisation(scale: float, mode: str, distribution: str, name: str, doc: str):
  def builder(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
              batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
    return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)
  builder.__name__ = builder.__qualname__ = name
  builder.__doc__ = (f"Build a {doc} initializer: ``variance_scaling({scale}, {mode!r}, "
                     f"{distribution!r})`` with the given axes and dtype.")
  return builder


glorot_uniform = _specialisation(1.0, "fan_avg", "uniform", "glorot_uniform",
                                 "Glorot (Xavier) uniform")
glorot_normal = _specialisation(1.0, "fan_avg", "truncated_normal", "glorot_normal",
                                "Glorot (Xavier) normal")
lecun_uniform = _specialisation(1.0, "fan_in", "uniform", "lecun_uniform", "LeCun uniform")
lecun_normal = _specialisation(1.0, "fan_in", "truncated_normal", "lecun_normal",
                               "LeCun normal")
he_uniform = _specialisation(2.0, "fan_in", "uniform", "he_uniform", "He (Kaiming) uniform")
he_normal = _specialisation(2.0, "fan_in", "truncated_normal", "he_normal",
                            "He (Kaiming) normal")
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal
