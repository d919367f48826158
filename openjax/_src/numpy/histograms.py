"""``jnp.histogramdd`` and ``jnp.histogram2d``: counts of samples in the
cells of a grid of bins, one scatter-add (``bincount``) over flat cell
indices, as JAX computes them."""
from __future__ import annotations

import builtins

import numpy as np

from openjax._src.numpy import util
from openjax._src.numpy.creation import asarray
from openjax._src.numpy.indexing import ravel_multi_index
from openjax._src.numpy.misc import where
from openjax._src.numpy.reductions import sum as _sum
from openjax._src.numpy.searching import bincount, histogram_bin_edges, searchsorted
from openjax._src.numpy.shape_joining import stack
from openjax._src.numpy.shape_reshaping import reshape

__all__ = ["histogramdd", "histogram2d"]


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
  """Multidimensional histogram of ``sample`` (N points of D coordinates,
  shape ``(N, D)``): returns the counts (shape of the bins) and the list of
  bin edges per dimension, as ``numpy.histogramdd``."""
  if weights is None:
    sample = util.ensure_arraylike("histogramdd", sample)
  else:
    sample, weights = util.ensure_arraylike("histogramdd", sample, weights)
    if np.shape(weights) != np.shape(sample)[:1]:
      raise ValueError("should have one weight for each sample.")
  sample, = util.promote_dtypes_inexact(sample)
  if np.ndim(sample) != 2:
    raise ValueError(f"histogramdd: sample must be a 2-D array of N points in D dimensions, "
                     f"got shape {np.shape(sample)}; reshape it to (N, D).")
  n_dims = np.shape(sample)[1]
  if range is not None and (len(range) != n_dims
                            or not all(r is None or len(r) == 2 for r in range)):
    raise ValueError(f"histogramdd: range={range!r} must have one entry for each dimension "
                     f"of the sample ({n_dims}), each None or a (min, max) pair.")
  try:
    bins_per_dim = list(bins) if not isinstance(bins, int) else None
  except TypeError:
    bins_per_dim = None
  if bins_per_dim is None:
    bins_per_dim = [bins] * n_dims
  elif len(bins_per_dim) != n_dims:
    raise ValueError("should be a bin for each dimension.")
  edges, indices, n_bins = [], [], []
  for i in builtins.range(n_dims):
    column = sample[:, i]
    lim = None if range is None else range[i]
    e = histogram_bin_edges(column, bins_per_dim[i], lim, weights)
    idx = searchsorted(e, column, side="right")
    # The last edge closes the last bin.
    idx = where(column == e[-1], idx - 1, idx)
    edges.append(e)
    indices.append(idx)
    n_bins.append(np.shape(e)[0] + 1)
  flat = ravel_multi_index(tuple(indices), tuple(n_bins), mode="clip")
  hist = bincount(flat, weights, length=int(np.prod(n_bins)))
  hist = reshape(hist, tuple(n_bins))
  hist = hist[tuple(slice(1, -1) for _ in builtins.range(n_dims))]
  if density:
    hist = hist / _sum(hist)
    for i in builtins.range(n_dims):
      shape = [1] * n_dims
      shape[i] = n_bins[i] - 2
      hist = hist / reshape(edges[i][1:] - edges[i][:-1], tuple(shape))
  return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
  """Two-dimensional histogram of the points ``(x[i], y[i])``: returns the
  counts and the x and y bin edges, as ``numpy.histogram2d``."""
  x, y = util.ensure_arraylike("histogram2d", x, y)
  try:
    n = len(bins)
  except TypeError:
    n = 1
  if n != 1 and n != 2:
    edges = asarray(bins)
    bins = [edges, edges]
  sample = stack([x, y]).T
  hist, edges = histogramdd(sample, bins, range, weights, density)
  return hist, edges[0], edges[1]
