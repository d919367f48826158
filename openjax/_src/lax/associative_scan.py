"""lax.associative_scan: parallel prefix scan written with slicing primitives."""
from __future__ import annotations

import functools
from typing import Callable, Sequence

import numpy as np

from openjax._src import tree_util
from openjax._src.api.transform_cache import call_transformed
from openjax._src.core import Array, eval_trace, get_aval, trace_state
from openjax._src.primitives.elementwise import arithmetic
from openjax._src.primitives.elementwise.arithmetic import add
from openjax._src.primitives.elementwise.logic import bitwise_or
from openjax._src.primitives.reduce.reductions import cummax, cummin, cumprod, cumsum
from openjax._src.primitives.shape.shape import concatenate, pad, rev, slice_in_dim

__all__ = ["associative_scan"]


def _interleave(evens, odds, axis: int):
  """``evens[0], odds[0], evens[1], odds[1], ...`` along ``axis`` (``evens``
  is as long as ``odds`` or one longer): each spread out with zero holes by
  ``pad``, then added (or-ed for booleans)."""
  a, b = get_aval(evens), get_aval(odds)
  same = a.shape[axis] == b.shape[axis]
  a_cfg, b_cfg = [(0, 0, 0)] * a.ndim, [(0, 0, 0)] * b.ndim
  a_cfg[axis] = (0, 1 if same else 0, 1)
  b_cfg[axis] = (1, 0 if same else 1, 1)
  combine = bitwise_or if a.dtype == np.bool_ else add
  return combine(pad(evens, np.zeros((), a.dtype), a_cfg),
                 pad(odds, np.zeros((), b.dtype), b_cfg))


def _prefix_scan(combine: Callable, elems: Sequence, axis: int) -> list:
  """The inclusive scan of the flat arrays ``elems`` along ``axis``.

  Results at odd positions are the scan of the pairwise combined elements
  (one level down, half as long); results at even positions combine the
  previous odd result with the element itself. O(log n) levels of whole-
  array operations."""
  n = get_aval(elems[0]).shape[axis]
  if n < 2:
    return list(elems)
  sl = slice_in_dim
  pairs = combine([sl(e, 0, -1, 2, axis) for e in elems],
                  [sl(e, 1, None, 2, axis) for e in elems])
  odd = _prefix_scan(combine, pairs, axis)
  if n % 2 == 0:
    even = combine([sl(e, 0, -1, 1, axis) for e in odd],
                   [sl(e, 2, None, 2, axis) for e in elems])
  else:
    even = combine(odd, [sl(e, 2, None, 2, axis) for e in elems])
  even = [concatenate([sl(e, 0, 1, 1, axis), r], axis) for e, r in zip(elems, even)]
  return [_interleave(e, o, axis) for e, o in zip(even, odd)]


def associative_scan(fn: Callable, elems, reverse: bool = False, axis: int = 0):
  """Scan ``elems`` with the associative binary operation ``fn``, in parallel.

  ``elems`` is a pytree of arrays with equal extents along ``axis``;
  ``fn(a, b)`` combines two such pytrees elementwise (slices along ``axis``
  of any equal length) and must be associative. Element ``k`` of the result
  is ``fn(...fn(fn(x0, x1), x2)..., xk)``; with ``reverse`` the scan runs
  from the end. The computation takes O(log n) levels of whole-array calls
  to ``fn`` (Blelloch's parallel prefix scan), so it stays fast under
  ``jit`` and differentiates and batches like any lax code.
  """
  if not callable(fn):
    raise TypeError("lax.associative_scan: fn argument should be callable.")
  # By identity (fn may be unhashable): lax's own monoids only.
  cumulative = next((c for op, c in _EAGER_CUMULATIVE if fn is op), None)
  if (cumulative is not None and trace_state.trace is eval_trace and type(elems) is Array
      and elems.ndim and elems.dtype.kind in "iuf" and -elems.ndim <= axis < elems.ndim):
    # Eagerly, a lax monoid on one array is its cumulative primitive: one NumPy
    # accumulate instead of the O(log n) levels' ~30-60 operations (integer
    # results are the same bits, wrapping included; float sums differ by
    # reassociation only). Traced calls stage JAX's levels below.
    return cumulative(elems, axis % elems.ndim, reverse)
  # Eager calls of an effect-free ``fn`` run as a cached program: JAX's
  # O(log n) levels of slices, pads and ``fn`` calls are ~30-60 operations.
  return call_transformed(("associative_scan", reverse, axis), fn,
                          functools.partial(_associative_scan, fn, reverse=reverse, axis=axis),
                          (elems,), {})


_EAGER_CUMULATIVE = ((add, cumsum), (arithmetic.mul, cumprod), (arithmetic.max, cummax),
                     (arithmetic.min, cummin))


def _associative_scan(fn: Callable, elems, reverse: bool, axis: int):
  elems_flat, tree = tree_util.tree_flatten(elems)
  if not elems_flat:
    raise ValueError("lax.associative_scan: elems must contain at least one array, got "
                     f"{elems!r}")
  ndim = get_aval(elems_flat[0]).ndim
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  axis = axis % ndim
  if reverse:
    elems_flat = [rev(e, (axis,)) for e in elems_flat]
  num_elems = get_aval(elems_flat[0]).shape[axis]
  if any(get_aval(e).shape[axis] != num_elems for e in elems_flat[1:]):
    raise ValueError("Array inputs to associative_scan must have the same first dimension. "
                     f"(saw: {[get_aval(e).shape for e in elems_flat]})")

  def combine(a_flat, b_flat):
    out = fn(tree_util.tree_unflatten(tree, a_flat), tree_util.tree_unflatten(tree, b_flat))
    out_flat, out_tree = tree_util.tree_flatten(out)
    if out_tree != tree:
      raise TypeError("lax.associative_scan: fn must return a pytree of the structure of "
                      f"elems, {tree}, but returned {out_tree}")
    return out_flat

  scans = _prefix_scan(combine, elems_flat, axis)
  if reverse:
    scans = [rev(s, (axis,)) for s in scans]
  return tree_util.tree_unflatten(tree, scans)
