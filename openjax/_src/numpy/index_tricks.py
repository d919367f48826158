"""Index tricks of ``jax.numpy``: ``mgrid``/``ogrid`` (grids from slice
notation), ``r_``/``c_`` (concatenation from slice notation) and NumPy's own
``s_``/``index_exp`` (plain index-tuple builders, as JAX re-exports them).
Slices must be static; ``start:stop:Nj`` means ``N`` points, ends included."""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src.numpy import util
from openjax._src.numpy.creation import array, asarray
from openjax._src.numpy.misc import where
from openjax._src.numpy.ranges import arange, linspace, meshgrid
from openjax._src.numpy.reductions import cumsum
from openjax._src.numpy.shape_joining import concatenate, stack
from openjax._src.numpy.shape_reshaping import broadcast_to, moveaxis, ravel

__all__ = ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp", "fill_diagonal", "put", "place",
           "put_along_axis"]

s_ = np.s_
index_exp = np.index_exp


def _range_from_slice(name: str, s: slice):
  """The 1-D array a static slice stands for (``arange``, or ``linspace``
  for an imaginary step)."""
  start = 0 if s.start is None else s.start
  step = 1 if s.step is None else s.step
  stop = s.stop
  for v in (start, stop, step):
    if not isinstance(v, (int, float, complex, np.number)):
      raise TypeError(f"jnp.{name}: slice bounds must be static Python numbers; got {s!r}.")
  if isinstance(step, complex) or np.iscomplexobj(step):
    return linspace(start, stop, int(abs(step)), endpoint=True)
  return arange(start, stop, step)


class _Grid:
  """``mgrid`` (``sparse=False``: one dense stacked array) or ``ogrid``
  (``sparse=True``: a list of broadcastable open arrays)."""

  def __init__(self, sparse: bool, name: str):
    self.sparse = sparse
    self.name = name

  def __getitem__(self, key):
    if isinstance(key, slice):
      return _range_from_slice(self.name, key)
    ranges = [_range_from_slice(self.name, k) for k in key]
    if not ranges:
      return [] if self.sparse else arange(0)
    dt = dtypes.result_type(*ranges)
    ranges = [r.astype(dt) for r in ranges]
    if self.sparse:
      return list(meshgrid(*ranges, indexing="ij", sparse=True))
    return stack(meshgrid(*ranges, indexing="ij"), axis=0)

  def __repr__(self):
    return f"jnp.{self.name}"


mgrid = _Grid(False, "mgrid")
ogrid = _Grid(True, "ogrid")


class _Concatenator:
  """``r_`` (join along the first axis) and ``c_`` (along the last, with 1-D
  pieces promoted to columns). A leading string ``"axis[,ndmin[,trans1d]]"``,
  ``"r"`` or ``"c"`` sets the axis, the minimum rank and where 1-D pieces go."""

  def __init__(self, axis: int, ndmin: int, trans1d: int, name: str):
    self.axis, self.ndmin, self.trans1d, self.name = axis, ndmin, trans1d, name

  def __getitem__(self, key):
    if not isinstance(key, tuple):
      key = (key,)
    axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, None
    pieces = []
    for i, item in enumerate(key):
      if isinstance(item, str):
        if i != 0:
          raise ValueError("string directive must be placed at the beginning")
        if item in ("r", "c"):
          matrix = item
          continue
        parts = item.split(",")
        try:
          vals = [int(p) for p in parts]
        except ValueError:
          raise ValueError(f"could not understand directive {item!r}") from None
        axis = vals[0]
        if len(vals) > 1:
          ndmin = vals[1]
        if len(vals) > 2:
          trans1d = vals[2]
        if len(vals) > 3:
          raise ValueError(f"too many directives in {item!r}")
        continue
      if isinstance(item, slice):
        arr = _range_from_slice(self.name, item)
      else:
        arr = asarray(item) if util.is_arraylike(item) else array(item)
      pieces.append(_promote_rank(arr, ndmin, trans1d))
    if not pieces:
      return array([])
    out = concatenate(pieces, axis=axis)
    if matrix is not None:
      if out.ndim != 1:
        raise ValueError(f"jnp.{self.name}: the 'r'/'c' directive needs 1-D pieces")
      out = out.reshape(1, -1) if matrix == "r" else out.reshape(-1, 1)
    return out

  def __len__(self):
    return 0

  def __repr__(self):
    return f"jnp.{self.name}"


def _promote_rank(arr, ndmin: int, trans1d: int):
  """NumPy's rule: pad ``arr`` to ``ndmin`` dims with ones in front, then move
  the original dims so they start at ``trans1d`` (-1: keep them last)."""
  if arr.ndim >= ndmin:
    return arr
  orig = arr.ndim
  arr = arr.reshape((1,) * (ndmin - orig) + arr.shape)
  if trans1d != -1 and orig > 0:
    trans1d = operator.index(trans1d) % ndmin
    src = list(range(ndmin - orig, ndmin))
    arr = moveaxis(arr, src, list(range(trans1d, trans1d + orig)))
  return arr


r_ = _Concatenator(0, 1, -1, "r_")
c_ = _Concatenator(-1, 2, 0, "c_")


# ------------------------------------------------- functional in-place updates
# NumPy's put/place/fill_diagonal/put_along_axis modify their argument; JAX
# arrays are immutable, so these return the updated array and require
# inplace=False, raising JAX's errors otherwise.
def _immutable_error(name: str) -> ValueError:
  return ValueError(f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays are "
                    "immutable. Pass inplace=False to instead return an updated array.")


def _cycled(values, n: int):
  """The flattened ``values`` repeated cyclically to length ``n``."""
  flat = ravel(values)
  if flat.shape[0] == n:
    return flat
  return flat[arange(n) % flat.shape[0]]


# A cached library program per signature (eagerly ~1 us a step; op by op its
# index arithmetic and scatter took ~30 dispatches). JAX does not jit it.
@partial(util.jit, static_argnames=("wrap", "inplace"))
def fill_diagonal(a, val, wrap=False, *, inplace=True):
  """``a`` with its main diagonal set to ``val`` (repeated cyclically); needs
  ``inplace=False``. ``wrap`` is not supported (as in JAX)."""
  if inplace:
    raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
  if wrap:
    raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
  a, val = util.ensure_arraylike("fill_diagonal", a, val)
  if a.ndim < 2:
    raise ValueError("array must be at least 2-d")
  if a.ndim > 2 and len(set(a.shape)) != 1:
    raise ValueError("All dimensions of input must be of equal length")
  n = min(a.shape)
  idx = arange(n)
  if val.size == 0:
    return a
  return asarray(a).at[(idx,) * a.ndim].set(_cycled(val, n))


def put(a, ind, v, mode=None, *, inplace=True):
  """The flattened ``a`` with ``v`` (repeated cyclically) written at ``ind``,
  reshaped back; needs ``inplace=False``. ``mode``: None drops out-of-range
  indices, ``'clip'`` clips them, ``'wrap'`` wraps them around."""
  if inplace:
    raise _immutable_error("put")
  a, ind, v = util.ensure_arraylike("put", a, ind, v)
  flat = ravel(a)
  ind = ravel(ind)
  if ind.size == 0 or v.size == 0 or flat.size == 0:
    return a
  vals = _cycled(v, ind.shape[0])
  size = flat.shape[0]
  if mode is None:
    scatter_mode = "drop"
  elif mode == "clip":
    ind, scatter_mode = ind.clip(0, size - 1), "promise_in_bounds"
  elif mode == "wrap":
    ind, scatter_mode = ind % size, "promise_in_bounds"
  else:
    raise ValueError(f"jnp.put: mode={mode!r} is not supported; use None, 'clip' or 'wrap'.")
  return asarray(flat).at[ind].set(vals, mode=scatter_mode).reshape(a.shape)


def place(arr, mask, vals, *, inplace=True):
  """``arr`` with the positions where ``mask`` is true filled, in order, by
  ``vals`` (repeated cyclically); needs ``inplace=False``."""
  if inplace:
    raise _immutable_error("place")
  arr, mask, vals = util.ensure_arraylike("place", arr, mask, vals)
  flat, flat_mask, flat_vals = ravel(arr), ravel(mask).astype(bool), ravel(vals)
  if flat_vals.size == 0:
    return arr
  pos = (cumsum(flat_mask, dtype=np.int32) - 1) % flat_vals.shape[0]
  fill = flat_vals[pos].astype(flat.dtype)
  return where(flat_mask, fill, flat).reshape(arr.shape)


# A cached library program per signature, as fill_diagonal.
@partial(util.jit, static_argnames=("axis", "inplace", "mode"))
def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
  """``arr`` with ``values`` written at ``indices`` along ``axis`` (the
  counterpart of ``take_along_axis``); needs ``inplace=False``.
  Out-of-range indices are dropped unless ``mode`` says otherwise."""
  if inplace:
    raise _immutable_error("put_along_axis")
  arr, indices = util.ensure_arraylike("put_along_axis", arr, indices)
  if axis is None:
    if indices.ndim != 1:
      raise ValueError("when axis=None, `indices` must have a single dimension.")
    arr_shape = arr.shape
    return put_along_axis(ravel(arr), indices, values, 0, inplace=False,
                          mode=mode).reshape(arr_shape)
  axis = util.canonicalize_axis(axis, arr.ndim)
  if indices.ndim != arr.ndim:
    raise ValueError("indices and arr must have the same number of dimensions; "
                     f"got {indices.ndim} vs {arr.ndim}")
  idx = []
  bshape = np.broadcast_shapes(indices.shape, tuple(
      1 if d == axis else arr.shape[d] for d in range(arr.ndim)))
  for d in range(arr.ndim):
    if d == axis:
      idx.append(indices)
    else:
      grid_shape = [1] * arr.ndim
      grid_shape[d] = arr.shape[d]
      idx.append(arange(arr.shape[d]).reshape(grid_shape))
  idx = tuple(broadcast_to(i, bshape) for i in idx)
  return asarray(arr).at[idx].set(values, mode="drop" if mode is None else mode)
