"""``jax.numpy.pad``: NumPy's padding modes built from lax.pad, slices and
concatenation."""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import concrete_or_error, eval_trace, trace_state
from openjax._src.numpy import util
from openjax._src.numpy.functional import apply_along_axis
from openjax._src.numpy.repeating import repeat
from openjax._src.numpy.reductions import max as _max, mean, min as _min
from openjax._src.numpy.shape_reshaping import as_array, flip
from openjax._src.numpy.statistics import median
from openjax._src.numpy.util import ensure_arraylike

__all__ = ["pad"]

_ALLOWED_KWARGS = {
    "empty": (), "edge": (), "wrap": (), "constant": ("constant_values",),
    "linear_ramp": ("end_values",), "maximum": ("stat_length",), "mean": ("stat_length",),
    "median": ("stat_length",), "minimum": ("stat_length",),
    "reflect": ("reflect_type",), "symmetric": ("reflect_type",),
}


def _static(x: Any, name: str):
  # Pad widths, stat lengths and end values are static: read them as NumPy.
  def conc(v):
    return concrete_or_error(np.asarray, v, f"{name} argument of jnp.pad")
  if isinstance(x, (list, tuple)):
    parts = [_static(v, name) for v in x]
    try:
      return np.asarray(parts)
    except ValueError:
      raise TypeError(f"`{name}` entries must be the same shape: {x}") from None
  return np.asarray(conc(x))


def _broadcast_to_pairs(nvals: Any, nd: int, name: str) -> tuple:
  """NumPy's pad-width forms (``n``, ``(n,)``, ``(before, after)``,
  ``((before, after),)`` or one pair per axis) as one pair per axis."""
  vals = _static(nvals, name)
  if vals.dtype == object:
    raise TypeError(f"`{name}` entries must be the same shape: {nvals}")
  if vals.shape == (nd, 2):
    return tuple((vals[i, 0], vals[i, 1]) for i in range(nd))
  if vals.shape == (1, 2):
    return ((vals[0, 0], vals[0, 1]),) * nd
  if vals.shape == (2,):
    return ((vals[0], vals[1]),) * nd
  if vals.shape == (1,):
    return ((vals[0], vals[0]),) * nd
  if vals.shape == ():
    return ((vals[()], vals[()]),) * nd
  raise ValueError(f"jnp.pad: {name} with nd={nd} has unsupported shape {vals.shape}. "
                   f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


def _check_no_padding(axis_padding, mode: str) -> None:
  if axis_padding[0] > 0 or axis_padding[1] > 0:
    raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


# ------------------------------------------------------------------- modes
def _pad_constant(array, pad_width, constant_values):
  nd = array.ndim
  cv = lax._convert_element_type(constant_values, array.dtype, dtypes.is_weakly_typed(array))
  if np.ndim(cv) == 0:
    return lax.pad(array, cv, [(lo, hi, 0) for lo, hi in pad_width])
  if np.ndim(cv) == 1:
    if cv.shape[-1] == 1:
      return lax.pad(array, lax.reshape(cv, ()), [(lo, hi, 0) for lo, hi in pad_width])
    if cv.shape[-1] != 2:
      raise ValueError("jnp.pad: constant_values has unsupported shape "
                       f"{tuple(cv.shape)}. If the shape is 1D or 2D, the last dimension "
                       "must be of size 1 or 2.")
  cv = lax.broadcast_in_dim(cv, (nd, 2), tuple(range(2 - np.ndim(cv), 2))) \
      if tuple(np.shape(cv)) != (nd, 2) else cv
  for i in range(nd):
    for side, width in enumerate(pad_width[i]):
      if width != 0:
        value = lax.reshape(lax.slice(cv, (i, side), (i + 1, side + 1)), ())
        config = [(0, 0, 0)] * nd
        config[i] = (width, 0, 0) if side == 0 else (0, width, 0)
        array = lax.pad(array, value, config)
  return array


def _pad_wrap(array, pad_width):
  for i in range(array.ndim):
    size = array.shape[i]
    if size == 0:
      _check_no_padding(pad_width[i], "wrap")
      continue
    left_reps, left_rem = divmod(pad_width[i][0], size)
    right_reps, right_rem = divmod(pad_width[i][1], size)
    parts = []
    if left_rem > 0:
      parts.append(lax.slice_in_dim(array, size - left_rem, size, axis=i))
    parts += [array] * (left_reps + right_reps + 1)
    if right_rem > 0:
      parts.append(lax.slice_in_dim(array, 0, right_rem, axis=i))
    array = lax.concatenate(parts, i)
  return array


def _pad_symmetric_or_reflect(array, pad_width, mode: str, reflect_type: str):
  for i in range(array.ndim):
    axis_size = array.shape[i]
    if axis_size == 0:
      _check_no_padding(pad_width[i], mode)
      continue
    # 'reflect' mirrors about the edge element, 'symmetric' repeats it; a
    # length-1 axis has nothing to mirror, so both repeat it.
    offset = 1 if (mode == "reflect" and axis_size > 1) else 0
    for before in (True, False):
      padding = pad_width[i][0 if before else 1]
      edge = lax.slice_in_dim(array, 0, 1, axis=i) if before else \
          lax.slice_in_dim(array, -1, None, axis=i)
      while padding > 0:
        cur = min(padding, axis_size - offset)
        padding -= cur
        if before:
          x = lax.slice_in_dim(array, offset, offset + cur, axis=i)
        else:
          stop = None if (mode == "symmetric" or axis_size == 1) else -1
          x = lax.slice_in_dim(array, -(cur + offset), stop, axis=i)
        x = flip(x, axis=i)
        if reflect_type == "odd":
          x = _odd(edge, x)
          if axis_size > 1:
            edge = lax.slice_in_dim(x, 0, 1, axis=i) if before else \
                lax.slice_in_dim(x, -1, None, axis=i)
        array = lax.concatenate([x, array] if before else [array, x], i)
  return array


def _odd(edge, x):
  # 2 * edge - x, with ``edge`` (size 1 on the padded axis) broadcast to x.
  two = lax._convert_element_type(2, x.dtype, dtypes.is_weakly_typed(x))
  e = lax.broadcast_in_dim(edge, x.shape, tuple(range(x.ndim)))
  return lax.sub(lax.mul(lax.broadcast_in_dim(two, x.shape, ()), e), x)


def _pad_edge(array, pad_width):
  for i in range(array.ndim):
    n = array.shape[i]
    if n == 0:
      _check_no_padding(pad_width[i], "edge")
      continue
    before = repeat(lax.slice_in_dim(array, 0, 1, axis=i), pad_width[i][0], axis=i)
    after = repeat(lax.slice_in_dim(array, n - 1, n, axis=i), pad_width[i][1], axis=i)
    array = lax.concatenate([before, array, after], i)
  return array


def _ramp(start, stop, num: int, axis: int, dtype):
  """``num`` evenly spaced values from ``start`` towards ``stop`` (excluded)
  along ``axis``, computed like jnp.linspace(endpoint=False): in the inexact
  dtype as start*(1-t) + stop*t, floored for integer results."""
  comp = dtype if dtypes.kind(dtype) in "fc" else dtypes.default_float_dtype()
  stop = lax.convert_element_type(stop, comp)
  start = lax.convert_element_type(start, comp)
  start = lax.broadcast_in_dim(start, stop.shape, ()) if np.ndim(start) == 0 else start
  shape = list(stop.shape)
  shape.insert(axis, num)
  kept = tuple(d for d in range(len(shape)) if d != axis)
  if num == 0:
    return lax.full(shape, 0, dtype)
  real = np.dtype(np.float32) if comp == np.complex64 else (
      np.dtype(np.float64) if comp == np.complex128 else comp)
  t = lax.div(lax.broadcasted_iota(real, shape, axis), lax.full(shape, num, real))
  t = lax.convert_element_type(t, comp)
  one = lax.full(shape, 1, comp)
  out = lax.add(lax.mul(lax.broadcast_in_dim(start, shape, kept), lax.sub(one, t)),
                lax.mul(lax.broadcast_in_dim(stop, shape, kept), t))
  if dtypes.kind(dtype) in "iu":
    out = lax.floor(out)
  return lax.convert_element_type(out, dtype)


def _pad_linear_ramp(array, pad_width, end_values):
  weak = dtypes.is_weakly_typed(array)
  for axis in range(array.ndim):
    edge_before = lax.squeeze(lax.slice_in_dim(array, 0, 1, axis=axis), (axis,))
    edge_after = lax.squeeze(lax.slice_in_dim(array, -1, None, axis=axis), (axis,))
    before = _ramp(end_values[axis][0], edge_before, int(pad_width[axis][0]), axis, array.dtype)
    after = _ramp(end_values[axis][1], edge_after, int(pad_width[axis][1]), axis, array.dtype)
    before = lax._convert_element_type(before, array.dtype, weak)
    after = flip(lax._convert_element_type(after, array.dtype, weak), axis)
    array = lax.concatenate([before, array, after], axis)
  return array


_STAT_FUNCS = {"maximum": _max, "minimum": _min, "mean": mean, "median": median}


def _pad_stats(array, pad_width, stat_length, stat_func):
  weak = dtypes.is_weakly_typed(array)
  for i in range(array.ndim):
    if stat_length is None:
      stat_before = stat_after = stat_func(array, axis=i, keepdims=True)
    else:
      n = array.shape[i]
      len_before, len_after = stat_length[i]
      if len_before == 0 or len_after == 0:
        raise ValueError("stat_length of 0 yields no value for padding")
      len_before, len_after = min(int(len_before), n), min(int(len_after), n)
      stat_before = stat_func(lax.slice_in_dim(array, 0, len_before, axis=i), axis=i,
                              keepdims=True)
      stat_after = stat_func(lax.slice_in_dim(array, n - len_after, n, axis=i), axis=i,
                             keepdims=True)
    if dtypes.kind(array.dtype) in "iu":
      # Integer statistics (a mean, a median) round half to even before the cast back.
      stat_before = _round_even(stat_before)
      stat_after = _round_even(stat_after)
    stat_before = lax._convert_element_type(stat_before, array.dtype, weak)
    stat_after = lax._convert_element_type(stat_after, array.dtype, weak)
    before = repeat(stat_before, pad_width[i][0], axis=i)
    after = repeat(stat_after, pad_width[i][1], axis=i)
    array = lax.concatenate([before, array, after], i)
  return array


def _round_even(x):
  return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN) if dtypes.kind(x.dtype) == "f" else x


def _pad_empty(array, pad_width):
  # jnp.empty is zeros: the padding is zero-filled.
  return lax.pad(array, lax._convert_element_type(0, array.dtype, dtypes.is_weakly_typed(array)),
                 [(int(lo), int(hi), 0) for lo, hi in pad_width])


def _pad_func(array, pad_width, func: Callable, **kwargs):
  # NumPy's callable mode: func(vector, (before, after), axis, kwargs) returns
  # each 1-D vector of the zero-padded array with its padding filled in. As
  # in JAX, one vmapped call per axis (apply_along_axis), not a Python call
  # per vector (1000 calls for a 1000x1000 array).
  padded = _pad_constant(array, pad_width, 0)
  for axis in range(padded.ndim):
    if padded.size:
      padded = as_array(apply_along_axis(func, axis, padded, pad_width[axis], axis, kwargs))
  return padded


def pad(array, pad_width, mode: str | Callable = "constant", **kwargs):
  """Pad ``array`` by ``pad_width`` (NumPy's forms) in one of NumPy's modes:
  constant (``constant_values``), edge, wrap, reflect/symmetric
  (``reflect_type``), linear_ramp (``end_values``), maximum/minimum/mean/
  median (``stat_length``), empty, or a callable."""
  array = ensure_arraylike("pad", array)
  nd = array.ndim
  widths = _broadcast_to_pairs(pad_width, nd, "pad_width")
  if widths and not all(np.asarray(p).dtype.kind in "iu" for pair in widths for p in pair):
    raise TypeError("`pad_width` must be of integral type.")
  pad_width = tuple((operator.index(lo), operator.index(hi)) for lo, hi in widths)
  if callable(mode):
    return as_array(_pad_func(as_array(array), pad_width, mode, **kwargs))
  if mode not in _ALLOWED_KWARGS:
    raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
  unsupported = set(kwargs) - set(_ALLOWED_KWARGS[mode])
  if unsupported:
    raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
  if nd == 0:
    return as_array(array)
  if any(lo < 0 or hi < 0 for lo, hi in pad_width):
    raise ValueError("index can't contain negative values")
  cv = kwargs.get("constant_values", 0)
  if isinstance(cv, (list, tuple)):
    cv = np.asarray(_static(cv, "constant_values"))
  reflect_type = kwargs.get("reflect_type", "even")
  if mode in ("symmetric", "reflect") and reflect_type not in ("even", "odd"):
    raise ValueError(f"reflect_type must be 'even' or 'odd', got {reflect_type!r}")
  end_values = _broadcast_to_pairs(kwargs.get("end_values", 0), nd, "end_values") \
      if mode == "linear_ramp" else None
  stat_length = kwargs.get("stat_length")
  if stat_length is not None:
    stat_length = _broadcast_to_pairs(stat_length, nd, "stat_length")
  if mode == "constant":
    # lax.pad's padding_config keeps the widths' NumPy integers (np.int64 for
    # Python ints), as JAX's printed jaxpr shows them.
    pad_width = tuple((lo, hi) for lo, hi in widths)
  if (mode == "empty" or mode == "constant" and np.ndim(cv) == 0) \
      and trace_state.trace is eval_trace:
    # Eager, one lax.pad needs no program around it (~15 us of jit call).
    return as_array(_pad_constant(array, pad_width, cv) if mode == "constant"
                    else _pad_empty(array, pad_width))
  return _pad(array, pad_width, mode, cv, stat_length, end_values, reflect_type)


# One library program, as JAX stages it (``jit[name=_pad]``, the constant
# values traced): eager, the modes' slices, flips and concatenates run as
# kernel steps (~1 us each) instead of binds (~5 us each).
@util.jit(static_argnames=("pad_width", "mode", "stat_length", "end_values", "reflect_type"))
def _pad(array, pad_width, mode, constant_values, stat_length, end_values, reflect_type):
  if mode == "constant":
    return as_array(_pad_constant(array, pad_width, constant_values))
  if mode == "wrap":
    return as_array(_pad_wrap(array, pad_width))
  if mode in ("symmetric", "reflect"):
    return as_array(_pad_symmetric_or_reflect(array, pad_width, mode, reflect_type))
  if mode == "edge":
    return as_array(_pad_edge(array, pad_width))
  if mode == "linear_ramp":
    return as_array(_pad_linear_ramp(array, pad_width, end_values))
  if mode == "empty":
    return as_array(_pad_empty(array, pad_width))
  return as_array(_pad_stats(array, pad_width, stat_length, _STAT_FUNCS[mode]))
