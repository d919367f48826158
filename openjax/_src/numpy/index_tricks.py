"""Index tricks of ``jax.numpy``: ``mgrid``/``ogrid`` (grids from slice
notation), ``r_``/``c_`` (concatenation from slice notation) and NumPy's own
``s_``/``index_exp`` (plain index-tuple builders, as JAX re-exports them).
Slices must be static; ``start:stop:Nj`` means ``N`` points, ends included."""
from __future__ import annotations

import operator

import numpy as np

from openjax._src import dtypes
from openjax._src.numpy import util
from openjax._src.numpy.creation import array, asarray
from openjax._src.numpy.ranges import arange, linspace, meshgrid
from openjax._src.numpy.shape_joining import concatenate, stack
from openjax._src.numpy.shape_reshaping import moveaxis

__all__ = ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp"]

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
