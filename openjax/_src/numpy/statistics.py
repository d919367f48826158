"""Order statistics and weighted means: ``quantile``/``percentile``/``median``
(and their NaN-ignoring forms) and ``average``.

Quantiles sort along the reduced axis and interpolate between the two
neighbouring order statistics, as JAX does (``method`` picks how).
"""
from __future__ import annotations

import math

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.numpy import util
from openjax._src.numpy._ufunc_helpers import _where as _where_jit
from openjax._src.numpy.reductions import (
    _const, _convert, _expand_dims, _isnan, _ravel, _reduction_dims, _static_axes, _where,
    any as _any, cumsum, mean, sum as _sum)

__all__ = ["quantile", "nanquantile", "percentile", "nanpercentile", "median", "nanmedian",
           "average"]

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _check_quantile_args(name: str, out, overwrite_input) -> None:
  if overwrite_input or out is not None:
    raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or out != None")


@util.jit(static_argnames=('axis', 'out', 'overwrite_input', 'method', 'keepdims'))
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
  """The ``q``-th quantiles (``q`` in [0, 1]) of ``a`` along ``axis``."""
  a, q = util.ensure_arraylike("quantile", a, q)
  _check_quantile_args("quantile", out, overwrite_input)
  return _quantile(a, q, _static_axes(axis), method, keepdims, False, weights)


@util.jit(static_argnames=('axis', 'out', 'overwrite_input', 'method', 'keepdims'))
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
  """``quantile`` ignoring NaNs."""
  a, q = util.ensure_arraylike("nanquantile", a, q)
  _check_quantile_args("nanquantile", out, overwrite_input)
  return _quantile(a, q, _static_axes(axis), method, keepdims, True, weights)


@util.jit(static_argnames=('axis', 'out', 'overwrite_input', 'method', 'keepdims'))
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
  """The ``q``-th percentiles (``q`` in [0, 100]) of ``a`` along ``axis``."""
  a, q = util.ensure_arraylike("percentile", a, q)
  (q,) = util.promote_dtypes_inexact(q)
  q = lax.div(q, _const(q, 100))
  return quantile(a, q, axis=axis, out=out, overwrite_input=overwrite_input, method=method,
                  keepdims=keepdims, weights=weights)


@util.jit(static_argnames=('axis', 'out', 'overwrite_input', 'method', 'keepdims'))
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
  """``percentile`` ignoring NaNs."""
  a, q = util.ensure_arraylike("nanpercentile", a, q)
  (q,) = util.promote_dtypes_inexact(q)
  q = lax.div(q, _const(q, 100))
  return nanquantile(a, q, axis=axis, out=out, overwrite_input=overwrite_input, method=method,
                     keepdims=keepdims, weights=weights)


@util.jit(static_argnames=('axis', 'out', 'overwrite_input', 'keepdims'))
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
  """Median of ``a`` along ``axis`` (the mean of the two middle values)."""
  a = util.ensure_arraylike("median", a)
  return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                  keepdims=keepdims, method="midpoint")


@util.jit(static_argnames=('axis', 'out', 'overwrite_input', 'keepdims'))
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
  """``median`` ignoring NaNs."""
  a = util.ensure_arraylike("nanmedian", a)
  return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                     keepdims=keepdims, method="midpoint")


def _flatten_axes(a, axis: tuple[int, ...]):
  """Move the reduced ``axis`` to one trailing axis (JAX's permutation)."""
  nd = np.ndim(a)
  axis = tuple(util.canonicalize_axis(ax, nd) for ax in axis)
  if len(set(axis)) != len(axis):
    raise ValueError("repeated axis")
  keep = sorted(set(range(nd)) - set(axis))
  dimensions = list(range(nd))
  for i, s in enumerate(keep):
    dimensions[i], dimensions[s] = dimensions[s], dimensions[i]
  shape = np.shape(a)
  kept = tuple(shape[d] for d in range(nd) if d not in axis)
  touched = math.prod(shape[d] for d in axis)
  keepdim = [1 if d in axis else n for d, n in enumerate(shape)]
  return lax.reshape(a, kept + (touched,), tuple(dimensions)), keepdim


def _quantile(a, q, axis, method: str, keepdims: bool, squash_nans: bool, weights):
  if method not in _METHODS:
    raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' "
                     "or 'inverted_cdf'")
  if weights is not None:
    if dtypes.kind(util.dtype_of(weights)) == "c":
      raise ValueError("Weights cannot be complex types.")
    if method != "inverted_cdf":
      raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                "'inverted_cdf' supports weights.")
    a, weights = util.promote_dtypes_inexact(a, weights)
    a_shape, w_shape = np.shape(a), np.shape(weights)
    if w_shape != a_shape:
      if axis is None:
        raise ValueError("Weights shape must match 'a' shape when axis is None.")
      ax = _reduction_dims(a, axis)
      if w_shape != tuple(a_shape[d] for d in ax):
        raise ValueError(f"Weights shape {w_shape} must match reduction axes "
                         f"{tuple(a_shape[d] for d in ax)}")
      weights = lax.broadcast_in_dim(weights, a_shape, ax)
  else:
    (a,) = util.promote_dtypes_inexact(a)
  if dtypes.kind(util.dtype_of(a)) == "c":
    raise ValueError("quantile does not support complex input, as the operation is poorly "
                     "defined.")
  keepdim = []
  if axis is None:
    if keepdims:
      keepdim = [1] * np.ndim(a)
    a = _ravel(a)
    weights = None if weights is None else _ravel(weights)
    axis = 0
  elif isinstance(axis, tuple):
    a, keepdim = _flatten_axes(a, axis)
    weights = None if weights is None else _flatten_axes(weights, axis)[0]
    axis = np.ndim(a) - 1
  else:
    axis = util.canonicalize_axis(axis, np.ndim(a))
  q_shape = np.shape(q)
  q_ndim = len(q_shape)
  if q_ndim > 1:
    raise ValueError(f"q must be have rank <= 1, got shape {q_shape}")
  if method == "inverted_cdf":
    result = _inverted_cdf(a, q, weights, axis, keepdims, squash_nans)
  elif squash_nans:
    low_value, high_value, low_weight, high_weight, q = _nan_order_stats(a, q, axis, keepdims)
  else:
    low_value, high_value, low_weight, high_weight, q = _order_stats(a, q, axis, keepdims)
  q_dtype = util.dtype_of(q)
  if method == "inverted_cdf":
    pass
  elif method == "linear":
    result = lax.add(lax.mul(_convert(low_value, q_dtype), low_weight),
                     lax.mul(_convert(high_value, q_dtype), high_weight))
  elif method == "lower":
    result = low_value
  elif method == "higher":
    result = high_value
  elif method == "nearest":
    pred = lax.le(high_weight, _const(high_weight, 0.5))
    result = lax.select(pred, low_value, high_value)
  else:  # midpoint
    result = lax.mul(lax.add(low_value, high_value), _const(low_value, 0.5))
  if keepdims and keepdim:
    if q_ndim > 0:
      keepdim = [q_shape[0], *keepdim]
    result = lax.reshape(result, tuple(keepdim))
  return _convert(result, util.dtype_of(a))


def _order_stats(a, q, axis: int, keepdims: bool):
  a_shape = np.shape(a)
  # A NaN anywhere in a slice makes every quantile of that slice NaN.
  # (jnp.where's jit, JAX's ``_where``, and n - 1 staged at each use, as JAX's jaxpr)
  a = _where_jit(_any(_isnan(a), axis=axis, keepdims=True), np.nan, a)
  a = lax.sort(a, dimension=axis)
  n = _const(q, a_shape[axis])
  qn = lax.mul(q, lax.sub(n, _const(q, 1)))
  low, high = lax.floor(qn), lax.ceil(qn)
  high_weight = lax.sub(qn, low)
  low_weight = lax.sub(_const(high_weight, 1), high_weight)
  low = lax.clamp(_const(low, 0), low, lax.sub(n, _const(q, 1)))
  high = lax.clamp(_const(high, 0), high, lax.sub(n, _const(q, 1)))
  int_dtype = dtypes.default_int_dtype()
  low, high = _convert(low, int_dtype), _convert(high, int_dtype)
  q_ndim = np.ndim(q)
  nd = len(a_shape)
  slice_sizes = list(a_shape)
  slice_sizes[axis] = 1
  dnums = lax.GatherDimensionNumbers(
      offset_dims=tuple(range(q_ndim, nd + q_ndim if keepdims else nd + q_ndim - 1)),
      collapsed_slice_dims=() if keepdims else (axis,), start_index_map=(axis,))
  values = []
  for idx in (low, high):
    idx = lax.broadcast_in_dim(idx, np.shape(idx) + (1,), tuple(range(q_ndim)))
    values.append(lax.gather(a, idx, dnums, tuple(slice_sizes)))
  low_value, high_value = values
  if q_ndim == 1:
    shape = np.shape(low_value)
    low_weight = lax.broadcast_in_dim(low_weight, shape, (0,))
    high_weight = lax.broadcast_in_dim(high_weight, shape, (0,))
  return low_value, high_value, low_weight, high_weight, q


def _nan_order_stats(a, q, axis: int, keepdims: bool):
  a = lax.sort(a, dimension=axis)  # NaNs sort to the end of each slice
  q_dtype = util.dtype_of(q)
  counts = _sum(lax.bitwise_not(_isnan(a)), axis=axis, dtype=q_dtype,
                    keepdims=keepdims)
  reduced_shape = np.shape(counts)
  q_ndim = np.ndim(q)
  q = _expand_dims(q, tuple(range(q_ndim, len(reduced_shape) + q_ndim)))
  counts = _expand_dims(counts, tuple(range(q_ndim)))
  qn = lax.mul(q, lax.sub(counts, _const(counts, 1)))
  low, high = lax.floor(qn), lax.ceil(qn)
  high_weight = lax.sub(qn, low)
  low_weight = lax.sub(_const(high_weight, 1), high_weight)
  last = lax.sub(counts, _const(counts, 1))
  low = lax.max(_const(low, 0), lax.min(low, last))
  high = lax.max(_const(high, 0), lax.min(high, last))
  int_dtype = dtypes.default_int_dtype()
  low, high = _convert(low, int_dtype), _convert(high, int_dtype)
  values = [_take_per_slice(a, idx, axis, q_ndim, keepdims) for idx in (low, high)]
  return values[0], values[1], low_weight, high_weight, q


def _take_per_slice(a, idx, axis: int, q_ndim: int, keepdims: bool):
  """``a`` indexed along ``axis`` by ``idx`` (shape q_shape + reduced shape),
  one index per slice: a gather batched over every other axis of ``a``."""
  nd = np.ndim(a)
  if keepdims:
    idx = lax.reshape(idx, tuple(d for i, d in enumerate(np.shape(idx)) if i != q_ndim + axis))
  idx_shape = np.shape(idx)
  idx = lax.broadcast_in_dim(idx, idx_shape + (1,), tuple(range(len(idx_shape))))
  other = tuple(d for d in range(nd) if d != axis)
  if q_ndim:
    # The q axis is not shared with ``a``: broadcast ``a`` along it so every
    # gather batch dimension pairs with an operand dimension.
    a = lax.broadcast_in_dim(a, idx_shape[:q_ndim] + np.shape(a), tuple(range(1, nd + 1)))
    axis, nd = axis + 1, nd + 1
    other = tuple(d for d in range(nd) if d != axis)
  dnums = lax.GatherDimensionNumbers(
      offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
      operand_batching_dims=other, start_indices_batching_dims=tuple(range(len(other))))
  out = lax.gather(a, idx, dnums, (1,) * nd)
  if keepdims:
    out = _expand_dims(out, (axis,))
  return out


def _inverted_cdf(a, q, weights, axis: int, keepdims: bool, squash_nans: bool):
  """The smallest order statistic whose cumulative weight reaches ``q`` of the
  total; NaN where a weight is negative or NaN (or, without ``squash_nans``,
  where the slice holds a NaN)."""
  n = np.shape(a)[axis]
  if not squash_nans:
    a = _where(_any(_isnan(a), axis=axis, keepdims=True), np.nan, a)
  if weights is None:
    weights = lax.full(np.shape(a), 1.0, util.dtype_of(a))
    a = lax.sort(a, dimension=axis)
  else:
    a, weights = lax.sort_key_val(a, weights, dimension=axis)
  q_ndim = np.ndim(q)
  zeros = _const(weights, 0)
  bad_weights = lax.bitwise_or(lax.lt(weights, zeros), _isnan(weights))
  nan_data = _isnan(a)
  clean = _where(lax.bitwise_or(bad_weights, nan_data), zeros, weights)
  cum = cumsum(clean, axis=axis)
  total = lax.index_in_dim(cum, n - 1, axis=axis, keepdims=keepdims)
  q_b = lax.reshape(q, np.shape(q) + (1,) * np.ndim(total))
  q_b, total_b = util.promote_dtypes(q_b, _expand_dims(total, tuple(range(q_ndim))))
  target = lax.mul(q_b, total_b)
  if not keepdims:
    target = _expand_dims(target, (axis + q_ndim,))
  cum_b = _expand_dims(cum, tuple(range(q_ndim)))
  int_dtype = dtypes.default_int_dtype()
  is_less = lax.lt(_convert(cum_b, util.dtype_of(target)), target)
  idx = _sum(_convert(is_less, int_dtype), axis=axis + q_ndim, keepdims=keepdims)
  q_dtype = util.dtype_of(q)
  if squash_nans:
    valid = _sum(lax.bitwise_not(nan_data), axis=axis, dtype=q_dtype, keepdims=keepdims)
  else:
    valid = lax.full(np.shape(total), n, q_dtype)
  last = _convert(lax.sub(valid, _const(valid, 1)), int_dtype)
  last = _expand_dims(last, tuple(range(q_ndim)))
  idx = lax.max(_const(idx, 0), lax.min(idx, last))
  result = _take_per_slice(a, idx, axis, q_ndim, keepdims)
  if squash_nans:
    force_nan = lax.bitwise_or(_any(bad_weights, axis=axis, keepdims=keepdims),
                               lax.eq(valid, _const(valid, 0)))
  else:
    force_nan = _any(lax.bitwise_or(bad_weights, nan_data), axis=axis, keepdims=keepdims)
  force_nan = _expand_dims(force_nan, tuple(range(q_ndim)))
  return _where(force_nan, _const(result, np.nan), result)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
  """Weighted average over ``axis``; ``returned`` also gives the sum of weights."""
  axis = _static_axes(axis)
  axis_tuple = _reduction_dims(a, axis)
  if weights is None:
    a = util.ensure_arraylike("average", a)
    (a,) = util.promote_dtypes_inexact(a)
    avg = mean(a, axis=axis, keepdims=keepdims)
    count = np.size(a) if axis is None else math.prod(np.shape(a)[d] for d in axis_tuple)
    weights_sum = _const(avg, count)
  else:
    a, weights = util.ensure_arraylike("average", a, weights)
    a, weights = util.promote_dtypes_inexact(a, weights)
    a_shape, w_shape = np.shape(a), np.shape(weights)
    if a_shape != w_shape:
      if axis is None:
        raise ValueError("Axis must be specified when shapes of a and weights differ.")
      if w_shape != tuple(a_shape[ax] for ax in axis_tuple):
        raise ValueError("Shape of weights must be consistent with shape of a along specified "
                         "axis.")
      new_shape = tuple(d if i in axis_tuple else 1 for i, d in enumerate(a_shape))
      weights = lax.reshape(weights, new_shape, tuple(int(i) for i in np.argsort(axis_tuple)))
    weights_sum = _sum(weights, axis=axis, keepdims=keepdims)
    avg = lax.div(_sum(lax.mul(a, weights), axis=axis, keepdims=keepdims), weights_sum)
  if returned:
    if np.shape(avg) != np.shape(weights_sum):
      weights_sum = util.broadcast_to_shape(weights_sum, np.shape(avg))
    return avg, weights_sum
  return avg
