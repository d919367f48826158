"""``jax.scipy.ndimage``: ``map_coordinates`` of order 0 (nearest) and 1
(linear), with SciPy's boundary modes ``constant``, ``nearest``, ``wrap``,
``mirror`` and ``reflect``."""
from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.numpy import util
from openjax._src.scipy import jnp

__all__ = ["map_coordinates"]


def _mirror(index, size: int):
  # A triangular wave of half-period size - 1: ... 2 1 0 1 2 ... size-1 size-2 ...
  s = size - 1
  return jnp.abs((index + s) % (2 * s) - s) if s > 0 else jnp.zeros_like(index)


def _reflect(index, size: int):
  # Reflection about the pixel edges (-0.5, size - 0.5): period 2 size, the
  # second half read backwards (... 1 0 | 0 1 ... size-1 | size-1 ... 0 | 0 ...).
  r = index % (2 * size)
  return jnp.where(r >= size, 2 * size - 1 - r, r)


_INDEX_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_half_away(a):
  return a if dtypes.kind(a.dtype) in "iu" else lax.round(a)


def _nodes(coordinate, order: int):
  """``[(index, weight)]`` of the 1-d interpolation at ``coordinate``."""
  if order == 0:
    return [(_round_half_away(coordinate).astype(np.int32), None)]
  lower = jnp.floor(coordinate)
  upper_weight = coordinate - lower
  index = lower.astype(np.int32)
  return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def map_coordinates(input, coordinates, order: int, mode: str = "constant", cval=0.0):  # noqa: A002
  """Interpolate ``input`` at ``coordinates`` (one array of positions per
  dimension of ``input``, all of one shape): ``order=0`` takes the nearest
  element (halves round away from zero), ``order=1`` is multilinear. Points
  outside are handled by ``mode``; ``'constant'`` uses ``cval``."""
  input_arr = jnp.asarray(input)
  coords = [jnp.asarray(c) for c in coordinates]
  if len(coords) != input_arr.ndim:
    raise ValueError("coordinates must be a sequence of length input.ndim, but "
                     f"{len(coords)} != {input_arr.ndim}")
  fixer = _INDEX_FIXERS.get(mode)
  if fixer is None:
    raise NotImplementedError(f"jax.scipy.ndimage.map_coordinates does not yet support mode "
                              f"{mode}. Currently supported modes are {set(_INDEX_FIXERS)}.")
  if order not in (0, 1):
    raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")
  return _map_coordinates(order, mode, input_arr, cval, *coords)


# One cached program per signature: eagerly ~1 us a step, where op by op the
# corners' gathers, clips and products each took a dispatch. The coordinates
# come as separate arguments and cval as given: an eager call keys each Array
# and scalar inline, where a tuple of coordinates (a pytree) took jit's general
# path every call (~100 us at 10 points).
@functools.partial(util.jit, static_argnums=(0, 1))
def _map_coordinates(order: int, mode: str, input_arr, cval, *coords):
  cval = jnp.asarray(cval, input_arr.dtype)
  fixer = _INDEX_FIXERS[mode]
  per_axis = []
  for coordinate, size in zip(coords, input_arr.shape):
    entries = []
    for index, weight in _nodes(coordinate, order):
      if mode == "constant":
        # Out-of-range points read a clipped index and are masked to cval.
        entries.append((jnp.clip(index, 0, size - 1), (index >= 0) & (index < size), weight))
      else:
        # nearest, wrap, mirror and reflect map every index into [0, size).
        entries.append((fixer(index, size), None, weight))
    per_axis.append(entries)
  terms = []
  for corner in itertools.product(*per_axis):
    indices = tuple(i for i, _, _ in corner)
    value = input_arr[indices] if indices else input_arr
    valids = [v for _, v, _ in corner if v is not None]
    if valids:
      value = jnp.where(functools.reduce(operator.and_, valids), value, cval)
    weights = [w for _, _, w in corner if w is not None]
    if weights:
      value = functools.reduce(operator.mul, weights) * value
    terms.append(value)
  result = functools.reduce(operator.add, terms)
  if dtypes.kind(input_arr.dtype) in "iu":
    result = _round_half_away(result)
  return result.astype(input_arr.dtype)
