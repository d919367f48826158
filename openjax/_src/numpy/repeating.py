"""``jnp.repeat``: each element repeated a static number of times (a
broadcast and a reshape), per-element counts (one gather at host-computed
positions) or, under ``jit``, traced counts with a static total (a gather at
positions computed from their cumulative sum)."""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from openjax._src import lax
from openjax._src.core import Array, Tracer, concrete_or_error, eval_trace, trace_state
from openjax._src.numpy import util
from openjax._src.numpy.indexing import take
from openjax._src.numpy.shape_reshaping import as_array, broadcast_to, ravel, take_static

__all__ = ["repeat"]


# ------------------------------------------------------------------- repeat
def _repeat_traced(a, repeats, axis: int, total: int):
  # Output position j takes element #(how many inclusive cumulative counts are <= j),
  # clamped so positions past sum(repeats) repeat the last element.
  n = a.shape[axis]
  reps = lax.convert_element_type(broadcast_to(ravel(repeats), (n,)), np.int32)
  ends = lax.cumsum(reps)
  pos = lax.broadcasted_iota(np.int32, (total, n), 0)
  counts = lax.reduce_sum(lax.convert_element_type(
      lax.le(lax.broadcast_in_dim(ends, (total, n), (1,)), pos), np.int32), (1,))
  idx = lax.min(counts, lax.full((), n - 1, np.int32))
  return take(a, idx, axis=axis)


def repeat(a, repeats, axis: int | None = None, *, total_repeat_length: int | None = None,
           out_sharding=None):
  """Repeat each element of ``a`` ``repeats`` times along ``axis`` (the
  flattened array when None). Under ``jit`` an array of repeats needs a static
  ``total_repeat_length``."""
  if (type(a) is Array and out_sharding is None and trace_state.trace is eval_trace
      and (axis is None or type(axis) is int)
      and (total_repeat_length is None or type(total_repeat_length) is int)):
    # Eager calls with static counts: one library program of the 2-3 binds
    # (ravel, broadcast, reshape; a gather for counts per element), ~4.5 us
    # a bind against ~0.6 a step (repeat 30 -> 10 us; an array of counts
    # 77 -> 11). A NumPy array of counts is keyed by its values.
    t = type(repeats)
    if t is int and repeats >= 0:
      return _repeat_program(a, repeats, axis, total_repeat_length)
    if t is np.ndarray and repeats.dtype.kind in "iu" and repeats.size <= _KEYED_COUNTS:
      counts = _Counts(repeats.tobytes(), repeats.dtype.str, repeats.shape)
      return _repeat_program(a, counts, axis, total_repeat_length)
  return _repeat(a, repeats, axis, total_repeat_length)


#: NumPy arrays of counts up to this size key the eager repeat program.
_KEYED_COUNTS = 64


class _Counts(NamedTuple):
  """A NumPy array of repeat counts as a static argument (its bytes)."""
  data: bytes
  dtype: str
  shape: tuple

  def value(self) -> np.ndarray:
    return np.frombuffer(self.data, np.dtype(self.dtype)).reshape(self.shape)


def _repeat_static(a, repeats, axis, total_repeat_length):
  if type(repeats) is _Counts:
    repeats = repeats.value()
  return _repeat(a, repeats, axis, total_repeat_length)


_repeat_program = util.jit(_repeat_static, static_argnums=(1, 2, 3))


def _repeat(a, repeats, axis, total_repeat_length):
  if isinstance(repeats, int) or (util.is_arraylike(repeats) and not np.shape(repeats)
                                  and not isinstance(repeats, Tracer)):
    util.check_arraylike("repeat", a)
  else:
    util.check_arraylike("repeat", a, repeats)
  a = util.ensure_arraylike("repeat", a)
  if axis is None:
    a, axis = ravel(a), 0
  axis = concrete_or_error(operator.index, axis, "'axis' argument of jnp.repeat()")
  if type(repeats) is int and total_repeat_length is None:
    # An int count (most calls): the checks and branches below decided
    # without making it a NumPy array.
    if repeats < 0:
      raise ValueError(f"jnp.repeat: repeats may not contain negative values, got {repeats}")
    if a.ndim == 0:
      return _repeat_scalar(a, (), repeats)
    return _repeat_each(a, repeats, util.canonicalize_axis(axis, a.ndim))
  if total_repeat_length is None:
    repeats = concrete_or_error(
        None, repeats,
        "When jit-compiling jnp.repeat, the total number of repeats must be static. To fix "
        "this, either specify a static value for `repeats`, or pass a static value to "
        "`total_repeat_length`.")
  elif isinstance(repeats, Tracer) and repeats.to_concrete_value() is None:
    total = operator.index(total_repeat_length)
    if a.ndim == 0:
      return _repeat_scalar(a, np.shape(repeats), total)
    return _repeat_traced(a, repeats, util.canonicalize_axis(axis, a.ndim), total)
  reps = np.asarray(repeats)
  if reps.dtype.kind not in "iub":
    raise TypeError(f"jnp.repeat: repeats must be integers, got dtype {reps.dtype}")
  if reps.size and reps.min() < 0:
    raise ValueError(f"jnp.repeat: repeats may not contain negative values, got {repeats}")
  if a.ndim == 0:
    total = int(reps.sum()) if total_repeat_length is None else int(total_repeat_length)
    return _repeat_scalar(a, reps.shape if reps.ndim == 0 else (reps.size,), total)
  axis = util.canonicalize_axis(axis, a.ndim)
  n = a.shape[axis]
  if reps.ndim == 0 and total_repeat_length is None:
    return _repeat_each(a, int(reps), axis)
  reps = np.broadcast_to(reps.ravel(), (n,))
  idx = np.repeat(np.arange(n), reps)
  if total_repeat_length is not None:
    total = operator.index(total_repeat_length)
    idx = idx[:total]
    if total > idx.size and n:
      idx = np.concatenate([idx, np.full(total - idx.size, n - 1)])
  if n == 0:
    return as_array(a)
  return take_static(a, idx, axis)


def _repeat_each(a, r: int, axis: int):
  """Every element of ``a`` repeated ``r`` times along ``axis``: a new axis
  after ``axis`` broadcast to ``r``, merged into it."""
  shape = a.shape
  out = lax.broadcast_in_dim(a, shape[:axis + 1] + (r,) + shape[axis + 1:],
                             tuple(i for i in range(len(shape) + 1) if i != axis + 1))
  return as_array(lax.reshape(out, shape[:axis] + (shape[axis] * r,) + shape[axis + 1:]))


def _repeat_scalar(a, reps_shape, total: int):
  if tuple(reps_shape) not in ((), (1,)):
    raise ValueError("`repeat` with a scalar parameter `a` is only implemented for scalar "
                     "values of the parameter `repeats`.")
  return as_array(lax.broadcast(a, (total,)))
