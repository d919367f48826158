"""``jax.scipy.interpolate``: ``RegularGridInterpolator``, linear or
nearest-neighbour interpolation on a rectilinear grid (a pytree, so it can
be passed through ``jit`` and ``vmap``)."""
from __future__ import annotations

import itertools
from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src.numpy import util
from openjax._src.scipy import jnp
from openjax._src.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _points_array(points, ndim: int):
  """Sample points as one ``[..., ndim]`` array: a tuple of coordinate
  arrays is broadcast and stacked; a 1-d array is ``[-1, ndim]``."""
  if isinstance(points, tuple) and len(points) == 1:
    points = points[0]
  if isinstance(points, tuple):
    parts = jnp.broadcast_arrays(*points)
    return jnp.stack(util.promote_dtypes_inexact(*parts), axis=-1)
  util.check_arraylike("RegularGridInterpolator", points)
  points = jnp.asarray(points)
  return points.reshape(-1, ndim) if points.ndim == 1 else points


class RegularGridInterpolator:
  """Interpolate ``values`` (``[n_1, ..., n_d, ...]``) given on the grid
  ``points`` (``d`` ascending 1-d arrays) at arbitrary points, as
  ``scipy.interpolate.RegularGridInterpolator`` with ``method`` ``'linear'``
  or ``'nearest'``. Points outside the grid give ``fill_value`` (default
  NaN); ``fill_value=None`` extrapolates. ``bounds_error=True`` is not
  supported (it cannot raise under ``jit``)."""

  def __init__(self, points, values, method: str = "linear", bounds_error: bool = False,
               fill_value=np.nan):
    if method not in _METHODS:
      raise ValueError(f"method {method!r} is not defined")
    self.method = method
    self.bounds_error = bounds_error
    if bounds_error:
      raise NotImplementedError("RegularGridInterpolator: bounds_error=True is not supported "
                                "(an error cannot depend on traced values under jit); use "
                                "fill_value to mark points outside the grid")
    util.check_arraylike("RegularGridInterpolator", values)
    if len(points) > np.ndim(values):
      raise ValueError(f"there are {len(points)} point arrays, but values has "
                       f"{np.ndim(values)} dimensions")
    values, = util.promote_dtypes_inexact(values)
    if fill_value is not None:
      util.check_arraylike("RegularGridInterpolator", fill_value)
      fill_value = jnp.asarray(fill_value)
      if not dtypes.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
        raise ValueError("fill_value must be either 'None' or of a type compatible with values")
    self.fill_value = fill_value
    util.check_arraylike("RegularGridInterpolator", *points)
    self.grid = tuple(jnp.asarray(p) for p in points)
    self.values = values

  def __call__(self, xi, method: str | None = None):
    method = self.method if method is None else method
    if method not in _METHODS:
      raise ValueError(f"method {method!r} is not defined")
    ndim = len(self.grid)
    xi = _points_array(xi, ndim)
    if xi.shape[-1] != ndim:
      raise ValueError(f"the requested sample points xi have dimension {xi.shape[-1]}, but "
                       f"this RegularGridInterpolator has dimension {ndim}")
    return _evaluate(self, xi, method)

  def _evaluate(self, xi, method: str):
    ndim = len(self.grid)
    lead = xi.shape[:-1]
    xi = xi.reshape(-1, ndim)
    indices, fractions, outside = self._cells(xi.T)
    if method == "linear":
      result = self._linear(indices, fractions)
    else:
      result = self.values[tuple(jnp.where(f <= 0.5, i, i + 1)
                                 for i, f in zip(indices, fractions))]
    if self.fill_value is not None:
      mask = outside.reshape(outside.shape + (1,) * (result.ndim - 1))
      result = jnp.where(mask, self.fill_value, result)
    return result.reshape(lead + self.values.shape[ndim:])

  def _linear(self, indices, fractions):
    trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
    total = None
    # Each corner of the cell: index i or i + 1 per dimension, with weight
    # 1 - f or f.
    for corner in itertools.product((0, 1), repeat=len(indices)):
      weight = None
      for upper, f in zip(corner, fractions):
        w = f if upper else 1 - f
        weight = w if weight is None else weight * w
      idx = tuple(i + upper for upper, i in zip(corner, indices))
      term = self.values[idx] * weight[trailing]
      total = term if total is None else total + term
    return total

  def _cells(self, xi):
    """Per dimension, the lower grid index of each point's cell (clamped to
    the grid, so points outside extrapolate from the edge cell) and the
    point's fractional position in it; and which points lie outside."""
    indices, fractions = [], []
    outside = jnp.zeros((xi.shape[1],), dtype=bool)
    for x, g in zip(xi, self.grid):
      i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.size - 2)
      indices.append(i)
      fractions.append((x - g[i]) / (g[i + 1] - g[i]))
      outside = outside | (x < g[0]) | (x > g[-1])
    return indices, fractions, outside


register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    lambda aux, children: RegularGridInterpolator(children[0], children[1], aux[0], aux[1],
                                                  children[2]))


# The interpolation as a cached library program per signature (the
# interpolator is a pytree; ``method`` static): eagerly ~1 us a step, where op
# by op each corner's gather and product took a dispatch.
_evaluate = partial(util.jit, static_argnames=("method",))(
    lambda interp, xi, method: interp._evaluate(xi, method))
