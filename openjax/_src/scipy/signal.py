"""jax.scipy.signal: n-dimensional convolution and cross-correlation
(``convolve``, ``correlate``, ``convolve2d``, ``correlate2d``), each one
``lax.conv_general_dilated`` over all axes of the inputs, and
``fftconvolve`` (products of FFTs). The spectral functions (``stft``,
``istft``, ``welch``, ``csd``, ``detrend``) are in ``signal_spectral.py``."""
from __future__ import annotations

from functools import lru_cache, partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.vmap import vmap
from openjax._src.core import get_aval
from openjax._src.numpy import util
from openjax._src.numpy import fft
from openjax._src.numpy.eager_programs import eager_program
from openjax._src.scipy import jnp

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve"]

_MODES = ("full", "same", "valid")


def _conj(x):
  return lax.conj(x) if dtypes.kind(get_aval(x).dtype) == "c" else x


def _flip_all(x):
  return lax.rev(x, tuple(range(get_aval(x).ndim)))


def _convolve_nd(in1, in2, mode: str, precision):
  """SciPy's direct n-d convolution: the smaller operand (in every axis) is
  the kernel; ``'same'`` output has ``in1``'s shape."""
  if mode not in _MODES:
    raise ValueError(f"mode must be one of {list(_MODES)}")
  in1, in2 = util.ensure_arraylike("convolve", in1, in2)
  if np.ndim(in1) != np.ndim(in2):
    raise ValueError("in1 and in2 must have the same number of dimensions")
  s1, s2 = get_aval(in1).shape, get_aval(in2).shape
  if 0 in s1 or 0 in s2:
    raise ValueError(f"zero-size arrays not supported in convolutions, got shapes {s1} and "
                     f"{s2}.")
  in1, in2 = util.promote_dtypes_inexact(in1, in2)
  no_swap = all(a >= b for a, b in zip(s1, s2))
  swap = all(a <= b for a, b in zip(s1, s2))
  if not (no_swap or swap):
    raise ValueError("One input must be smaller than the other in every dimension.")
  if swap:
    in1, in2 = in2, in1
  kernel_shape = get_aval(in2).shape
  if mode == "valid":
    padding = [(0, 0)] * len(kernel_shape)
  elif mode == "same":
    # Centre the window on in1's (the caller's first operand's) elements.
    padding = [(k - 1 - (k2 - 1) // 2, k - k2 + (k2 - 1) // 2)
               for k, k2 in zip(kernel_shape, s2)]
  else:
    padding = [(k - 1, k - 1) for k in kernel_shape]
  nd = len(kernel_shape)
  lhs = lax.expand_dims(in1, (0, 1))
  rhs = lax.expand_dims(_flip_all(in2), (0, 1))
  out = lax.conv_general_dilated(lhs, rhs, (1,) * nd, padding, precision=precision)
  return lax.squeeze(out, (0, 1))


# Eager calls run as one cached program (4-6 binds op by op: convolve2d of
# 4x5 by 2x3 34 -> ~15 us); traced, the equations are JAX's, inline.
@eager_program(static_argnames=("mode", "method", "precision"))
def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None):
  """N-dimensional convolution (``scipy.signal.convolve``).

  Args:
    in1, in2: arrays of equal rank; one must be at least as large as the
      other in every dimension.
    mode: ``'full'`` (default), ``'same'`` (the shape of ``in1``, centred) or
      ``'valid'`` (only full overlaps).
    method: ``'auto'`` or ``'direct'`` (a direct convolution, as JAX's
      ``'auto'``) or ``'fft'`` (``fftconvolve``).
    precision: passed to ``lax.conv_general_dilated``.
  """
  if method not in ("auto", "direct", "fft"):
    raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
  if method == "fft":
    return fftconvolve(in1, in2, mode=mode)
  return _convolve_nd(in1, in2, mode, precision)


@eager_program(static_argnames=("mode", "method", "precision"))
def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None):
  """N-dimensional cross-correlation (``scipy.signal.correlate``):
  ``convolve(in1, flip(conj(in2)))``. Arguments as in ``convolve``."""
  in2 = util.ensure_arraylike("correlate", in2)
  return convolve(in1, _flip_all(_conj(in2)), mode, method=method, precision=precision)


def _check_2d(fun: str, in1, in2, boundary, fillvalue) -> None:
  if boundary != "fill" or fillvalue != 0:
    raise NotImplementedError(f"{fun}() only supports boundary='fill', fillvalue=0")
  if np.ndim(in1) != 2 or np.ndim(in2) != 2:
    raise ValueError(f"{fun}() only supports 2-dimensional inputs.")


@eager_program(static_argnames=("mode", "boundary", "fillvalue", "precision"))
def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
               precision=None):
  """2-D convolution (``scipy.signal.convolve2d``); only ``boundary='fill'``
  with ``fillvalue=0`` (zero padding) is supported. ``mode`` as in
  ``convolve``."""
  _check_2d("convolve2d", in1, in2, boundary, fillvalue)
  return _convolve_nd(in1, in2, mode, precision)


@eager_program(static_argnames=("mode", "boundary", "fillvalue", "precision"))
def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
                precision=None):
  """2-D cross-correlation (``scipy.signal.correlate2d``); only
  ``boundary='fill'`` with ``fillvalue=0`` is supported. ``mode`` as in
  ``convolve``."""
  _check_2d("correlate2d", in1, in2, boundary, fillvalue)
  in1, in2 = util.ensure_arraylike("correlate2d", in1, in2)
  s1, s2 = get_aval(in1).shape, get_aval(in2).shape
  swap = all(a <= b for a, b in zip(s1, s2))
  same_shape = s1 == s2
  # correlate2d(a, b) = flip(convolve(flip(a), conj(b))); SciPy swaps the
  # operands when in1 is the smaller one (for 'valid' and 'full'), which
  # reads the result backwards and conjugated instead.
  if mode == "same" or not swap or (mode == "valid" and same_shape):
    return _flip_all(_convolve_nd(_flip_all(in1), _conj(in2), mode, precision))
  out = _convolve_nd(_flip_all(in2), _conj(in1), mode, precision)
  return out if mode == "valid" else _conj(out)


@lru_cache(maxsize=256)
def _fast_len(n: int) -> int:
  """The smallest ``m >= n`` whose prime factors are 2, 3, 5 and 7: NumPy's
  pocketfft runs those lengths fast, while a length with a large prime factor
  takes Bluestein's algorithm (an FFT of 1459 x 1751 took 2.6x that of
  1470 x 1764)."""
  m = n
  while True:
    r = m
    for p in (2, 3, 5, 7):
      while r % p == 0:
        r //= p
    if r == 1:
      return m
    m += 1


def _fftconvolve_all_axes(in1, in2, mode: str):
  s1, s2 = in1.shape, in2.shape
  full_shape = tuple(a + b - 1 for a, b in zip(s1, s2))
  if mode == "valid":
    no_swap = all(a >= b for a, b in zip(s1, s2))
    swap = all(a <= b for a, b in zip(s1, s2))
    if not (no_swap or swap):
      raise ValueError("For 'valid' mode, One input must be at least as large as the other "
                       "in every dimension.")
    if swap:
      in1, in2 = in2, in1
      s1, s2 = s2, s1
  if all(a == 1 or b == 1 for a, b in zip(s1, s2)):
    conv = in1 * in2    # an outer product: no transform needed
  else:
    # Zero padding past the full shape leaves the linear convolution in the
    # first full_shape entries of the circular one (the slice below keeps them).
    fast_shape = tuple(_fast_len(n) for n in full_shape)
    if dtypes.kind(in1.dtype) == "c":
      conv = fft.ifftn(fft.fftn(in1, fast_shape) * fft.fftn(in2, fast_shape), fast_shape)
    else:
      conv = fft.irfftn(fft.rfftn(in1, fast_shape) * fft.rfftn(in2, fast_shape), fast_shape)
  if mode == "full":
    out_shape = full_shape
  elif mode == "same":
    out_shape = s1
  else:
    out_shape = tuple(a - b + 1 for a, b in zip(s1, s2))
  start = tuple((f - o) // 2 for f, o in zip(full_shape, out_shape))
  return lax.slice(conv, start, tuple(b + o for b, o in zip(start, out_shape)))


# A cached library program per signature (eagerly ~1 us a step).
@partial(util.jit, static_argnames=("mode", "axes"))
def fftconvolve(in1, in2, mode: str = "full", axes=None):
  """N-dimensional convolution by FFTs (``scipy.signal.fftconvolve``):
  the same result as ``convolve`` up to rounding. With ``axes``, only those
  axes are convolved; the others must match and are mapped over."""
  in1, in2 = util.promote_dtypes_inexact(*util.ensure_arraylike("fftconvolve", in1, in2))
  if in1.ndim != in2.ndim:
    raise ValueError("in1 and in2 should have the same dimensionality")
  if mode not in _MODES:
    raise ValueError(f"mode must be one of {list(_MODES)}")

  def conv(a, b):
    return _fftconvolve_all_axes(a, b, mode)
  if axes is None:
    return conv(in1, in2)
  axes = util.canonicalize_axes(axes if isinstance(axes, (tuple, list)) else (axes,), in1.ndim)
  mapped = sorted(set(range(in1.ndim)) - set(axes))
  if any(in1.shape[i] != in2.shape[i] for i in mapped):
    raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} "
                     f"in2.shape={in2.shape} axes={axes}")
  for ax in mapped:
    conv = vmap(conv, in_axes=ax, out_axes=ax)
  return conv(in1, in2)
