"""``jax.numpy.fft``: discrete Fourier transforms of openjax arrays, with
NumPy's ``n``/``s``, ``axis``/``axes`` and ``norm`` arguments, built on the
``fft`` primitive (``lax.fft``), which transforms trailing axes only: other
axes are moved to the end and back."""
from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.jit import jit as _api_jit
from openjax._src.core import Array, eval_trace, trace_state
from openjax._src.numpy import util
from openjax._src.numpy.creation import asarray
from openjax._src.numpy.eager_programs import eager_program
from openjax._src.numpy.ranges import arange
from openjax._src.numpy.shape_joining import roll
from openjax._src.numpy.shape_padding import pad
from openjax._src.numpy.shape_reshaping import moveaxis
from openjax._src.numpy.ufuncs_float import conj
from openjax._src.primitives.fft.fft import FftType

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
           "ifftn", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]


def fft_primitive(x, fft_type, fft_lengths):
  """``lax.fft``, staged under the name ``fft`` (see ``_lax_fft``)."""
  return lax.fft(x, fft_type, fft_lengths)


fft_primitive.__name__ = fft_primitive.__qualname__ = "fft"
# Staged as ``jit[name=fft]`` around the primitive, as JAX's lax.fft is.
_lax_fft = _api_jit(fft_primitive, static_argnums=(1, 2))


def _norm_factor(s: Sequence[int], func_name: str, norm: str | None, dtype):
  """The scale ``norm`` applies after an unnormalised transform (None: none)."""
  if norm is None or norm == "backward":
    return None
  rdt = np.dtype(np.float64 if np.dtype(dtype) in (np.float64, np.complex128) else np.float32)
  total = np.prod(np.asarray(s, rdt), dtype=rdt)
  inverse = func_name.startswith("i")
  # Returned as Python floats holding the rdt values exactly: weakly typed,
  # they scale in the transform's dtype (as the rdt scalar did), and an
  # Array times a Python float takes the operator's fast path (~3 us, where
  # a NumPy scalar operand goes through promotion, ~15 us).
  if norm == "ortho":
    root = np.sqrt(total)
    return float(root if inverse else rdt.type(1) / root)
  if norm == "forward":
    return float(total if inverse else rdt.type(1) / total)
  raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _fft_core(func_name: str, fft_type: FftType, a, s, axes, norm):
  full_name = f"jax.numpy.fft.{func_name}"
  arr = util.ensure_arraylike(full_name, a)
  if s is not None:
    s = tuple(operator.index(v) for v in s)
    if any(v <= 0 for v in s):
      raise ValueError("Shape should be positive.")
  if s is not None and axes is not None and len(s) != len(axes):
    raise ValueError("Shape and axes have different lengths.")
  if axes is not None:
    axes = tuple(axes)
  if trace_state.trace is eval_trace and type(arr) is Array and (
      s is not None or norm not in (None, "backward") or (axes is not None and tuple(
          ax % arr.ndim if -arr.ndim <= ax < arr.ndim else ax for ax in axes) != tuple(
          range(arr.ndim - len(axes), arr.ndim)))):
    # Eager, with moves, a crop/pad or a scale: one cached program (op by op
    # ~4-6 binds and their wrappers: fft(x, n=8, axis=0) of 5 x 3 55 -> 22
    # us); a lone transform binds its primitive. Traced, JAX's equations.
    return _fft_program(arr, func_name=func_name, fft_type=fft_type, s=s, axes=axes, norm=norm)
  return _fft_body(arr, func_name, fft_type, s, axes, norm)


def _fft_body(arr, func_name: str, fft_type: FftType, s, axes, norm):
  full_name = f"jax.numpy.fft.{func_name}"
  orig_axes = axes
  if axes is None:
    axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
  axes = tuple(axes)
  if len(axes) != len(set(axes)):
    raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
  if orig_axes is not None:
    # The primitive transforms trailing axes: move the requested ones there
    # (requested trailing axes stay: an identity moveaxis costs ~6 us eager).
    trailing = tuple(range(arr.ndim - len(axes), arr.ndim))
    if tuple(ax + arr.ndim if -arr.ndim <= ax < 0 else ax for ax in axes) == trailing:
      orig_axes = None
    else:
      arr = moveaxis(arr, tuple(orig_axes), trailing)
    axes = trailing
  if s is not None:
    want = list(arr.shape)
    for ax, v in zip(axes, s):
      want[ax] = v
    if fft_type == FftType.IRFFT:
      want[-1] = want[-1] // 2 + 1
    if trace_state.trace is eval_trace:
      # Eager: the crop and the zero padding as one lax op each (jnp.pad's
      # staged jit and the indexing wrapper cost ~40 us at 10 elements).
      if any(w < h for w, h in zip(want, arr.shape)):
        arr = lax.slice(arr, (0,) * arr.ndim, tuple(map(min, want, arr.shape)))
      if any(w > h for w, h in zip(want, arr.shape)):
        arr = lax.pad(arr, np.zeros((), arr.dtype),
                      [(0, max(w - h, 0), 0) for w, h in zip(want, arr.shape)])
    else:
      arr = arr[tuple(slice(v) for v in want)]
      if any(w > h for w, h in zip(want, arr.shape)):
        arr = pad(arr, [(0, w - h) for w, h in zip(want, arr.shape)])
  elif fft_type == FftType.IRFFT:
    s = [arr.shape[ax] for ax in axes[:-1]]
    if axes:
      s.append(max(0, 2 * (arr.shape[axes[-1]] - 1)))
  else:
    s = [arr.shape[ax] for ax in axes]
  if trace_state.trace is eval_trace:
    # Eager, the staged jit around one primitive would only add its ~25 us
    # of call overhead: bind the primitive (its eval kernel runs numpy.fft).
    out = lax.fft(arr, fft_type, tuple(s))
  else:
    out = _lax_fft(arr, fft_type, tuple(s))
  factor = _norm_factor(s, func_name, norm, out.dtype)
  if factor is not None:
    out = out * factor
  if orig_axes is not None:
    out = moveaxis(out, axes, tuple(orig_axes))
  return out


_fft_program = util.jit(_fft_body, static_argnames=("func_name", "fft_type", "s", "axes", "norm"))


def _axis_check_1d(func_name: str, axis):
  if isinstance(axis, (list, tuple)):
    raise ValueError(f"jax.numpy.fft.{func_name} does not support multiple axes. Please use "
                     f"jax.numpy.fft.{func_name}n. Got axis = {axis}.")


def _fft_core_1d(func_name, fft_type, a, n, axis, norm):
  _axis_check_1d(func_name, axis)
  return _fft_core(func_name, fft_type, a, None if n is None else [n],
                   None if axis is None else [axis], norm)


def _fft_core_2d(func_name, fft_type, a, s, axes, norm):
  if len(axes) != 2:
    raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes}.")
  return _fft_core(func_name, fft_type, a, s, axes, norm)


def fftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None):
  """The n-dimensional discrete Fourier transform over ``axes`` (all by
  default), each cropped or zero-padded to the lengths ``s``
  (``numpy.fft.fftn``). ``norm``: 'backward' (default), 'ortho' or 'forward'."""
  return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
  """The inverse of ``fftn`` (``numpy.fft.ifftn``)."""
  return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None):
  """The n-dimensional transform of a real array; the last axis keeps its
  ``n // 2 + 1`` non-negative frequencies (``numpy.fft.rfftn``)."""
  return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None):
  """The inverse of ``rfftn``: a real array; the last output length is
  ``2 * (m - 1)`` unless ``s`` gives it (``numpy.fft.irfftn``)."""
  return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def fft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
  """The 1-D discrete Fourier transform along ``axis``, of length ``n``
  (cropped or zero-padded) (``numpy.fft.fft``)."""
  return _fft_core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
  """The inverse of ``fft`` (``numpy.fft.ifft``)."""
  return _fft_core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
  """The 1-D transform of a real array: its ``n // 2 + 1`` non-negative
  frequencies (``numpy.fft.rfft``)."""
  return _fft_core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
  """The inverse of ``rfft``: a real array of length ``n`` (default
  ``2 * (m - 1)``) (``numpy.fft.irfft``)."""
  return _fft_core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


# Eager calls of hfft/ihfft run as one program (conj, transform, scale: 3
# binds op by op); traced, inline.
@eager_program(static_argnames=("n", "axis", "norm"))
def hfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
  """The transform of a Hermitian-symmetric signal given by its first half: a
  real spectrum of length ``n`` (default ``2 * (m - 1)``) (``numpy.fft.hfft``)."""
  _axis_check_1d("hfft", axis)
  conj_a = conj(a)
  nn = (conj_a.shape[axis] - 1) * 2 if n is None else n
  return _fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * nn


@eager_program(static_argnames=("n", "axis", "norm"))
def ihfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
  """The inverse of ``hfft``: the half spectrum of a real signal
  (``numpy.fft.ihfft``)."""
  _axis_check_1d("ihfft", axis)
  arr = asarray(a)
  nn = arr.shape[axis] if n is None else n
  out = _fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
  return conj(out) * (1 / nn)


def fft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None):
  """The 2-D discrete Fourier transform over ``axes`` (``numpy.fft.fft2``)."""
  return _fft_core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None):
  """The inverse of ``fft2`` (``numpy.fft.ifft2``)."""
  return _fft_core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None):
  """The 2-D transform of a real array (``numpy.fft.rfft2``)."""
  return _fft_core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None):
  """The inverse of ``rfft2`` (``numpy.fft.irfft2``)."""
  return _fft_core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def _check_n(func_name: str, n):
  if isinstance(n, (list, tuple)):
    raise ValueError(f"The n argument of jax.numpy.fft.{func_name} only takes an int. "
                     f"Got n = {list(n)}.")
  if isinstance(n, (float, np.floating)):
    raise ValueError(f"n should be an integer for jax.numpy.fft.{func_name}, got n = {n}.")


def fftfreq(n: int, d=1.0, *, dtype=None, device=None):
  """The sample frequencies of an ``n``-point ``fft`` with sample spacing
  ``d``: ``[0, 1, ..., n//2 - 1 (or (n-1)//2), -n//2, ..., -1] / (d * n)``
  (``numpy.fft.fftfreq``)."""
  _check_n("fftfreq", n)
  out_dtype = dtypes.canonicalize_dtype(dtype or dtypes.default_float_dtype())
  dt = dtypes.finfo(dtypes.to_inexact_dtype(out_dtype)).dtype
  i = arange(n, dtype=dt)
  k = (i + n // 2) % n - n // 2
  return (k.astype(dt) / asarray(d * n, dtype=dt)).astype(out_dtype)


def rfftfreq(n: int, d=1.0, *, dtype=None, device=None):
  """The non-negative sample frequencies of an ``n``-point ``rfft``:
  ``[0, 1, ..., n//2] / (d * n)`` (``numpy.fft.rfftfreq``)."""
  _check_n("rfftfreq", n)
  dt = dtypes.canonicalize_dtype(dtype or dtypes.default_float_dtype())
  k = arange(0, n // 2 + 1, dtype=dt)
  return k / asarray(d * n, dtype=dt)


def _shifts(x, axes, sign: int):
  """``(axes, shifts)`` for ``roll``: half of each axis' length, signed."""
  if axes is None:
    axes = tuple(range(x.ndim))
  if isinstance(axes, int):
    return axes, sign * (x.shape[axes] // 2)
  return tuple(axes), tuple(sign * (x.shape[ax] // 2) for ax in axes)


def fftshift(x, axes: None | int | Sequence[int] = None):
  """``x`` with the zero frequency moved to the centre of ``axes`` (all by
  default) (``numpy.fft.fftshift``)."""
  x = util.ensure_arraylike("fftshift", x)
  axes, shift = _shifts(x, axes, 1)
  return roll(x, shift, axes)


def ifftshift(x, axes: None | int | Sequence[int] = None):
  """The inverse of ``fftshift`` (``numpy.fft.ifftshift``)."""
  x = util.ensure_arraylike("ifftshift", x)
  axes, shift = _shifts(x, axes, -1)
  return roll(x, shift, axes)
