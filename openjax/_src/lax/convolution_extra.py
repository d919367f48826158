"""``lax.conv_general_dilated_patches`` (every window of the input, flattened
into the feature dimension) and ``lax.conv_general_dilated_local`` (a
convolution with a different kernel at every output position), both written
on ``conv_general_dilated`` and ``dot_general``."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.core import get_aval
from openjax._src.primitives.base.structural import transpose
from openjax._src.primitives.dot_conv.conv import conv_dimension_numbers, conv_general_dilated
from openjax._src.primitives.dot_conv.dot import Precision, canonicalize_precision, dot_general

__all__ = ["conv_general_dilated_local", "conv_general_dilated_patches"]


def _move_two_axes(x, sources: tuple[int, int], destinations: tuple[int, int]):
  ndim = len(get_aval(x).shape)
  rest = [a for a in range(ndim) if a not in sources]
  order = [None] * ndim
  for s, d in sorted(zip(sources, destinations), key=lambda p: p[1]):
    order[d] = s
  it = iter(rest)
  return transpose(x, tuple(a if a is not None else next(it) for a in order))


def conv_general_dilated_patches(lhs, filter_shape: Sequence[int], window_strides: Sequence[int],
                                 padding, lhs_dilation=None, rhs_dilation=None,
                                 dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
  """The patches (receptive fields) ``conv_general_dilated`` would see: the
  output's feature dimension holds ``C * prod(filter_shape)`` values per
  position, channel-major then the filter's spatial positions in row-major
  order. Computed as a grouped convolution with an identity kernel."""
  lhs_aval = get_aval(lhs)
  filter_shape = tuple(int(d) for d in filter_shape)
  dnums = conv_dimension_numbers(lhs_aval.shape, (1, 1) + filter_shape, dimension_numbers)
  lhs_spec, rhs_spec, _ = dnums
  spatial_size = math.prod(filter_shape)
  n_channels = lhs_aval.shape[lhs_spec[1]]
  # One output feature per (channel, filter position): a one-hot kernel.
  eye = np.eye(spatial_size, dtype=dtypes.dtype(lhs_aval.dtype))
  kernel = np.broadcast_to(eye, (n_channels, spatial_size, spatial_size)).reshape(
      (n_channels * spatial_size, 1) + filter_shape)
  kernel = np.moveaxis(kernel, (0, 1), (rhs_spec[0], rhs_spec[1]))
  return conv_general_dilated(
      lhs, kernel, window_strides, padding, lhs_dilation, rhs_dilation, dnums,
      feature_group_count=n_channels,
      precision=None if precision is None else (precision, Precision.DEFAULT),
      preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides: Sequence[int], padding,
                               filter_shape: Sequence[int], lhs_dilation=None, rhs_dilation=None,
                               dimension_numbers=None, precision=None):
  """A locally connected layer: like ``conv_general_dilated`` but with an
  unshared kernel per output position. ``rhs`` has the output's spatial shape
  in its spatial dimensions, input features ``C * prod(filter_shape)`` (as
  ``conv_general_dilated_patches`` orders them) and output features."""
  lhs_aval = get_aval(lhs)
  canonical = canonicalize_precision(precision)
  if canonical is None:
    lhs_precision = None
  elif isinstance(canonical, tuple) and len(canonical) == 2:
    lhs_precision = canonical[0]
  else:
    raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
  patches = conv_general_dilated_patches(
      lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
      dimension_numbers, precision=lhs_precision)
  _, rhs_spec, out_spec = conv_dimension_numbers(
      lhs_aval.shape, (1, 1) + tuple(filter_shape), dimension_numbers)
  # Contract the patch features with rhs's input features, batching over positions.
  lhs_batch = list(out_spec[2:])
  rhs_batch = list(rhs_spec[2:])
  rhs_batch = [rhs_batch[i] for i in sorted(range(len(rhs_batch)), key=lambda k: lhs_batch[k])]
  lhs_batch = sorted(lhs_batch)
  dnums = (([out_spec[1]], [rhs_spec[1]]), (lhs_batch, rhs_batch))
  out = dot_general(patches, rhs, dimension_numbers=dnums, precision=precision)
  ndim = len(get_aval(out).shape)
  return _move_two_axes(out, (ndim - 2, ndim - 1), (out_spec[0], out_spec[1]))
