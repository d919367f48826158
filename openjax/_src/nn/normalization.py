"""``jax.nn.standardize`` (zero mean, unit variance) and ``jax.nn.one_hot``."""
from __future__ import annotations

import operator
import warnings
from functools import partial

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.jit import jit
from openjax._src.core import concrete_or_error
from openjax._src.nn import jnp
from openjax._src.numpy.util import canonicalize_axis, check_arraylike

__all__ = ["standardize", "one_hot"]


@partial(jit, static_argnames=("axis", "algorithm"))
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm: str = "fast"):
  r"""Standardise ``x`` to zero mean and unit variance along ``axis``:
  ``(x - mean) / sqrt(variance + epsilon)``.

  Args:
    x: input array.
    axis: axis or tuple of axes (None: all) of the statistics. Default -1.
    mean: the mean to use; default ``x.mean(axis, where=where)``.
    variance: the variance to use; default computed by ``algorithm``.
    epsilon: added to the variance to avoid dividing by zero (default 1e-5).
    where: boolean mask of the elements the statistics are computed from.
    algorithm: ``"fast"`` (default) computes ``mean(x**2) - mean(x)**2``,
      clipped at 0 (one pass; it may lose digits to cancellation);
      ``"stable"`` computes ``mean((x - mean)**2)`` (two passes).
  """
  check_arraylike("standardize", x)
  for name, arg in (("mean", mean), ("variance", variance), ("where", where)):
    if arg is not None:
      check_arraylike(f"standardize argument {name!r}", arg)
  if mean is None:
    mean = jnp.mean(x, axis, keepdims=True, where=where)
  if variance is None:
    if algorithm == "stable":
      variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True, where=where)
    elif algorithm == "fast":
      variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean)
      # Cancellation can make the one-pass variance slightly negative, and
      # rsqrt of a negative number is NaN.
      variance = jnp.clip(variance, 0)
    else:
      raise ValueError(f"standardize: unknown algorithm {algorithm!r}. Expected 'fast' or "
                       "'stable'.")
  return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


def one_hot(x, num_classes: int, *, dtype=None, axis=-1):
  r"""One-hot encode the indices ``x``: a new axis of length ``num_classes``
  (at ``axis``) holds 1 at each index and 0 elsewhere; indices outside
  ``[0, num_classes)`` encode as all zeros.

  Args:
    x: array of (integer) indices.
    num_classes: the length of the one-hot axis (static).
    dtype: the result dtype (default: the default float dtype).
    axis: where the new axis goes, or the name of a mapped axis (``vmap``'s
      ``axis_name``): each member then compares ``x`` with its axis index.
  """
  num_classes = concrete_or_error(
      operator.index, num_classes,
      "The error arose in jax.nn.one_hot argument `num_classes`.")
  x_arr = jnp.asarray(x)
  if dtypes.kind(x_arr.dtype) not in "iu":
    warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={x_arr.dtype}",
                  DeprecationWarning, stacklevel=2)
  dtype = dtypes.default_float_dtype() if dtype is None else dtype
  return _one_hot(x_arr, num_classes, dtype=dtype, axis=axis)


@partial(jit, static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x, num_classes: int, *, dtype, axis):
  try:
    out_axis = canonicalize_axis(axis, x.ndim + 1)
  except TypeError:
    # Not an integer: the name of a mapped axis.
    axis_size = lax.axis_size(axis)
    if num_classes != axis_size:
      raise ValueError(f"Expected num_classes to match the size of axis {axis}, "
                       f"but {num_classes} != {axis_size}") from None
    return jnp.asarray(x == lax.axis_index(axis), dtype=dtype)
  lhs = lax.expand_dims(x, (out_axis,))
  rhs_shape = [1] * x.ndim
  rhs_shape.insert(out_axis, num_classes)
  rhs = lax.broadcasted_iota(x.dtype, rhs_shape, out_axis)
  return (lhs == rhs).astype(dtype)
