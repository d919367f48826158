"""The eager kernel of ``gather`` for *point* layouts: each index vector
picks one position along the dimensions it addresses (collapsed from the
result), the other operand dimensions are taken whole, and batching
dimension pairs (``take_along_axis``) pick the position of their own batch
index. ``x[i]``, ``x[i, j]``, ``x[:, i, j]``, ``take(x, i, axis)``,
``take_along_axis`` are then NumPy's item read, ``np.take`` or one advanced
index on the clamped columns (~1-3 us at 10 elements), where the general
impl builds window grids (~30-60 us; ~57% of a ``take_along_axis`` call).

*Slice* layouts are the same reads with some indexed dimensions kept as
windows of size 1 (``jnp.median(x, axis=1, keepdims=True)``'s gathers,
``lax.dynamic_slice``-like ``gather`` calls): the point kernel of the layout
without them, its result given size-1 axes where the output keeps them.

Out-of-bounds positions clamp (``CLIP``, ``PROMISE_IN_BOUNDS``) or give
``fill_value`` (``FILL_OR_DROP``), as the impl does. The kernels read every
size from the values (the eval trace checks a kernel on operands of size 1
when they are large), only the layout from the avals.
"""
from __future__ import annotations

import math

import numpy as np

from openjax._src.primitives.index.indexing_util import GatherScatterMode, cast_scalar, output_perm


def _point_read(points):
  """One index vector, no fill: NumPy's item read at the clamped position."""
  def kernel(x, idx):
    where = [slice(None)] * x.ndim
    for d, i in zip(points, idx.tolist()):
      where[d] = min(max(i, 0), x.shape[d] - 1)
    return np.array(x[tuple(where)])
  return kernel


def _clamped(c: np.ndarray, high: int) -> np.ndarray:
  """``c`` clamped into ``[0, high]`` (a new array; ``high`` at most the
  index dtype's largest value: the plan's ``top``)."""
  c = np.maximum(c, 0)
  return np.minimum(c, high, out=c) if c.ndim else np.minimum(c, high)   # 0-d: a scalar


_UNSIGNED_OF = {np.dtype(t): np.dtype(u) for t, u in ((np.int8, np.uint8), (np.int16, np.uint16),
                                                      (np.int32, np.uint32), (np.int64, np.uint64))}


_SMALL = 32


def _in_bounds(c: np.ndarray, high: int) -> bool:
  """Whether every index of ``c`` is in ``[0, high]`` (``high`` at most the
  index dtype's largest value, the plan's ``top``): the largest read as
  unsigned (a negative index reads above any such bound), one reduction
  where two compares, their ``&`` and ``all`` took ~9 us at 10 elements (~3)."""
  if c.size <= _SMALL:   # Python's min and max of a few values: ~0.5 us where max costs ~2
    values = c.ravel().tolist()
    return not values or (min(values) >= 0 and max(values) <= high)
  u = _UNSIGNED_OF.get(c.dtype)
  return int((c if u is None else c.view(u)).max()) <= high


def _axis_take(axis: int, ndim: int, fill, top: int):
  """``jnp.take``'s layout along one axis (the index's batch dimensions
  stand where the axis was: ``x[:, i]``, ``take(x, i, axis=1)``): np.take
  clamping the index column itself (``mode="clip"``: negatives to 0, the
  rest to the last position; one call where clamping first costs two more,
  ~3 -> 1.5 us at 10 elements, ~40% less at 1e6)."""
  def kernel(x, idx):
    col = idx[..., 0]
    out = np.take(x, col, axis=axis, mode="clip")
    if fill is not None:
      high = min(x.shape[axis] - 1, top)
      if not _in_bounds(col, high):
        ok = (col >= 0) & (col <= high)
        out = np.where(ok.reshape((1,) * axis + ok.shape + (1,) * (ndim - axis - 1)), out, fill)
    return out
  return kernel


def _advanced_take(ndim: int, points, batching, nrest: int, perm, fill, top: int):
  """Every other point layout: the operand's indexed dimensions moved to
  the front and read by one advanced index of the clamped columns (and an
  arange per batching pair), then the rest dimensions moved to their
  output places."""
  moved = tuple(points) + tuple(od for od, _ in batching)
  # np.moveaxis(x, moved, front) as one transpose (moveaxis costs ~2.5 us)
  order = moved + tuple(d for d in range(ndim) if d not in moved)
  if order == tuple(range(ndim)):
    order = None
  trailing = (1,) * nrest

  k = len(points)

  def kernel(x, idx):
    if idx.shape[-1] != k:   # the plan's check of large operands: every dimension 1
      idx = np.broadcast_to(idx, idx.shape[:-1] + (k,))
    y = x if order is None else x.transpose(order)
    batch_shape = idx.shape[:-1]
    columns, ok = [], None
    for j, d in enumerate(points):
      c = idx[..., j]
      high = min(x.shape[d] - 1, top)
      if _in_bounds(c, high):   # most calls: nothing to clamp or fill
        columns.append(c)
        continue
      columns.append(_clamped(c, high))
      if fill is not None:
        inside = (c >= 0) & (c <= high)
        ok = inside if ok is None else ok & inside
    for _, axis in batching:
      columns.append(np.arange(batch_shape[axis]).reshape(
          [-1 if a == axis else 1 for a in range(len(batch_shape))]))
    out = y[tuple(columns)]
    if not batch_shape:   # scalar columns index basically: a view of x
      out = np.array(out)
    if ok is not None and not ok.all():
      out = np.where(ok.reshape(ok.shape + trailing), out, fill)
    return out if perm is None else np.ascontiguousarray(np.transpose(out, perm))
  return kernel


# Window layouts with up to this many index vectors are read one basic slice
# each (a Python loop); more take the impl's window grids.
_WINDOWS_MAX = 16


def _window_slices(ndim: int, points: tuple, sizes: tuple, collapsed: tuple,
                   offset_dims: tuple, batch: int, fill):
  """Windows wider than a position along an indexed dimension, or narrower
  than a whole other one (``x[1:, i]`` with ``i`` of shape (1,),
  ``dynamic_slice``-like gathers), for a few index vectors: each window one
  basic slice at its start clamped into the operand (the impl's
  ``np.clip(starts, 0, shape - sizes)``); with ``fill``
  (``FILL_OR_DROP``), a window not wholly inside is the fill. Stacked, the
  collapsed dimensions dropped, then the output order (~3 us where the
  impl's window grids cost ~60)."""
  k = len(points)
  base = tuple(slice(0, z) for z in sizes)
  keep = tuple(sizes[d] for d in range(ndim) if d not in collapsed)
  perm = output_perm(batch, len(keep), offset_dims)

  def kernel(x, idx):
    if idx.shape[-1] != k:   # the plan's check of large operands: every dimension 1
      idx = np.broadcast_to(idx, idx.shape[:-1] + (k,))
    batch_shape = idx.shape[:-1]
    shape = x.shape
    rows = idx.reshape(-1, k).tolist()
    out = None
    for j, row in enumerate(rows):
      where = list(base)
      inside = True
      for d, i in zip(points, row):
        high = shape[d] - sizes[d]
        if i < 0 or i > high:
          inside = False
          i = min(max(i, 0), high)
        where[d] = slice(i, i + sizes[d])
      w = x[tuple(where)]
      if len(rows) == 1:
        # one window (``x[1:, i]``): one copy of it (a strided column of a
        # 1e6-element operand: ~15 -> ~3 us)
        out = np.array(w) if inside or fill is None else np.full(w.shape, fill, x.dtype)
        break
      if out is None:   # the windows written in place: np.stack costs ~10 us at 10 elements
        out = np.empty((len(rows),) + w.shape, x.dtype)
      out[j] = w if inside or fill is None else fill
    window = out.shape[out.ndim - ndim:]   # (after the windows' axis, when several)
    shape = batch_shape + tuple(window[d] for d in range(ndim) if d not in collapsed)
    out = out.reshape(shape)
    return out if perm is None else np.ascontiguousarray(np.transpose(out, perm))
  return kernel


def _kept_windows(kernel, axes: tuple):
  """``kernel``'s result with size-1 axes at the output positions ``axes``
  (the windows of indexed dimensions a slice layout keeps)."""
  def kept(x, idx):
    out = kernel(x, idx)
    shape = list(out.shape)
    for a in axes:   # ascending: np.expand_dims's positions, without its checks (~1.5 us)
      shape.insert(a, 1)
    return out.reshape(shape)
  return kept


def gather_eval_kernel(operand, indices, *, dimension_numbers, slice_sizes, unique_indices,
                       indices_are_sorted, mode, fill_value):
  """The eval-kernel rule of ``gather``: a kernel for point and slice
  layouts, None (the impl runs) for windows wider than one position along
  an indexed dimension or narrower than a whole other dimension, collapsed
  dimensions no index addresses, empty operands or indices, and uint64
  indices."""
  dn = dimension_numbers
  points = tuple(dn.start_index_map)
  collapsed = tuple(dn.collapsed_slice_dims)
  batching = tuple(zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
  if (indices.ndim < 1 or not set(collapsed) <= set(points)
      or indices.dtype == np.uint64 or 0 in operand.shape or 0 in indices.shape):
    return None
  moved = set(points) | set(dn.operand_batching_dims)
  rest = [d for d in range(operand.ndim) if d not in moved]
  fill = (cast_scalar(0 if fill_value is None else fill_value, operand.dtype)
          if mode == GatherScatterMode.FILL_OR_DROP else None)
  batch = indices.ndim - 1
  if (any(slice_sizes[d] != 1 for d in moved)
      or any(slice_sizes[d] != operand.shape[d] for d in rest)):
    if batching or math.prod(indices.shape[:-1]) > _WINDOWS_MAX:
      return None
    return _window_slices(operand.ndim, points, tuple(slice_sizes), collapsed,
                          tuple(dn.offset_dims), batch, fill)
  # Bounds compare in the index dtype (NumPy refuses Python ints it cannot
  # hold): no index exceeds its dtype's largest value.
  top = int(np.iinfo(indices.dtype).max)
  offset_dims = tuple(dn.offset_dims)
  # The output positions of indexed dimensions kept as size-1 windows; the
  # point kernel below reads the layout with them collapsed.
  windows = [d for d in range(operand.ndim) if d not in collapsed
             and d not in dn.operand_batching_dims]
  kept = tuple(pos for pos, d in zip(offset_dims, windows) if d in points)
  if kept:
    offset_dims = tuple(pos - sum(k < pos for k in kept) for pos in offset_dims
                        if pos not in kept)
  kernel = _point_kernel(operand.ndim, points, batching, batch, len(rest), offset_dims, fill,
                         top)
  return _kept_windows(kernel, kept) if kept else kernel


def _point_kernel(ndim: int, points: tuple, batching: tuple, batch: int, nrest: int,
                  offset_dims: tuple, fill, top: int):
  if not batching and batch == 0 and fill is None:
    return _point_read(points)
  if not batching and len(points) == 1:
    axis, = points
    if offset_dims == tuple(range(axis)) + tuple(range(axis + batch, batch + ndim - 1)):
      return _axis_take(axis, ndim, fill, top)
  return _advanced_take(ndim, points, batching, nrest, output_perm(batch, nrest, offset_dims),
                        fill, top)
