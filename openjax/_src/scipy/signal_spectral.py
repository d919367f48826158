"""``jax.scipy.signal``'s spectral analysis: ``detrend``, the short-time
Fourier transform ``stft`` and its inverse ``istft``, and the averaged
periodograms ``csd`` (cross spectral density) and ``welch`` (power spectral
density), with SciPy's arguments and scalings.

Windows are given as arrays or by name; named windows are SciPy's periodic
(``fftbins=True``) ``hann``, ``hamming``, ``blackman``, ``bartlett``,
``boxcar`` (constants computed on the host from the static length)."""
from __future__ import annotations

import operator
import warnings
from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import concrete_or_error
from openjax._src.numpy import util
from openjax._src.numpy import fft
from openjax._src.scipy import jnp

__all__ = ["detrend", "stft", "istft", "csd", "welch"]


# ------------------------------------------------------------------ detrend
def detrend(data, axis: int = -1, type: str = "linear", bp=0, overwrite_data=None):  # noqa: A002
  """Remove the mean (``type='constant'``) or the least-squares line
  (``'linear'``, piecewise between the breakpoints ``bp``) along ``axis``."""
  if overwrite_data is not None:
    raise NotImplementedError("detrend: overwrite_data is not supported (arrays are immutable)")
  if type not in ("constant", "linear"):
    raise ValueError("Trend type must be 'linear' or 'constant'.")
  # bp as a tuple of ints: a static argument of the cached program.
  bp = tuple(int(b) for b in np.atleast_1d(np.asarray(bp)).ravel())
  return _detrend(jnp.asarray(data), axis, type, bp)


# A cached library program per signature (eagerly ~1 us a step).
@partial(util.jit, static_argnames=("axis", "type", "bp"))
def _detrend(data, axis: int, type: str, bp: tuple):  # noqa: A002 - SciPy's name
  data, = util.promote_dtypes_inexact(data)
  if type == "constant":
    return data - jnp.mean(data, axis, keepdims=True)
  axis = util.canonicalize_axis(axis, data.ndim)
  n = data.shape[axis]
  breaks = np.sort(np.unique(np.r_[0, list(bp), n]))
  if breaks[0] < 0 or breaks[-1] > n:
    raise ValueError("Breakpoints must be non-negative and less than length of data along "
                     "given axis.")
  data = jnp.moveaxis(data, axis, -1)
  pieces = []
  for lo, hi in zip(breaks[:-1], breaks[1:]):
    seg = data[..., int(lo):int(hi)]
    # The least-squares line a + b t: b = cov(t, y) / var(t), a at the mean.
    t = np.arange(hi - lo, dtype=np.float64)
    t = t - t.mean()
    denom = float(np.sum(t ** 2))
    t = t.astype(np.finfo(seg.dtype).dtype)
    centred = seg - jnp.mean(seg, axis=-1, keepdims=True)
    slope = jnp.sum(centred * t, axis=-1, keepdims=True) / denom if denom else 0
    pieces.append(centred - slope * t)
  return jnp.moveaxis(jnp.concatenate(pieces, axis=-1), -1, axis)


# ------------------------------------------------------------------ windows
def _named_window(name: str, n: int) -> np.ndarray:
  """SciPy's periodic window ``name`` of length ``n`` (``get_window``)."""
  if n == 1:
    return np.ones(1)
  k = np.arange(n)
  if name in ("hann", "hanning", "han"):
    return np.sin(np.pi * k / n) ** 2
  if name in ("hamming", "hamm", "ham"):
    return 0.54 - 0.46 * np.cos(2 * np.pi * k / n)
  if name in ("blackman", "black", "blk"):
    return 0.42 - 0.5 * np.cos(2 * np.pi * k / n) + 0.08 * np.cos(4 * np.pi * k / n)
  if name in ("boxcar", "box", "ones", "rect", "rectangular"):
    return np.ones(n)
  if name in ("bartlett", "bart", "brt"):
    # The symmetric Bartlett window of length n + 1, last sample dropped.
    m = n + 1
    kk = np.arange(m)
    w = np.where(kk <= (m - 1) / 2, 2 * kk / (m - 1), 2 - 2 * kk / (m - 1))
    return w[:n]
  raise NotImplementedError(f"window {name!r} is not supported; pass the window as an array "
                            "(e.g. scipy.signal.get_window(...)) or use one of 'hann', "
                            "'hamming', 'blackman', 'bartlett', 'boxcar'")


def _window(window, nperseg, input_length: int, dtype):
  """``(win, nperseg)`` as SciPy's ``_triage_segments``."""
  if isinstance(window, (str, tuple)):
    n = input_length if nperseg is None else int(nperseg)
    if n > input_length:
      warnings.warn(f"nperseg={n} is greater than input_length={input_length}, using "
                    f"nperseg={input_length}")
      n = input_length
    name = window if isinstance(window, str) else window[0]
    return jnp.asarray(_named_window(name, n).astype(dtype)), n
  win = jnp.asarray(window, dtype=dtype)
  n = win.size if nperseg is None else int(nperseg)
  if win.ndim != 1:
    raise ValueError("window must be 1-D")
  if input_length < win.size:
    raise ValueError("window is longer than input signal")
  if n != win.size:
    raise ValueError("value specified for nperseg is different from length of window")
  return win, n


# ---------------------------------------------------------------- segments
def _odd_ext(x, n: int):
  if n < 1:
    return x
  if n > x.shape[-1] - 1:
    raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                     f"x.shape[axis]-1, which is {x.shape[-1] - 1}.")
  left = 2 * x[..., :1] - jnp.flip(x[..., 1:n + 1], axis=-1)
  right = 2 * x[..., -1:] - jnp.flip(x[..., -(n + 1):-1], axis=-1)
  return jnp.concatenate((left, x, right), axis=-1)


def _pad_last(x, n: int, mode: str, **kwargs):
  return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode, **kwargs)


_BOUNDARIES = {
    "even": partial(_pad_last, mode="reflect"),
    "odd": _odd_ext,
    "constant": partial(_pad_last, mode="edge"),
    "zeros": partial(_pad_last, mode="constant"),
    None: lambda x, n: x,
}


def _segments_fft(x, win, detrend_func, nperseg: int, noverlap: int, nfft: int, sides: str):
  """The windowed, detrended segments of ``x`` (``[..., n]``) along a new
  second-to-last axis, transformed along the last."""
  step = nperseg - noverlap
  starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
  idx = starts[:, None] + np.arange(nperseg)[None, :]
  segs = detrend_func(x[..., idx])
  if dtypes.kind(win.dtype) == "c":
    segs, = util.promote_dtypes_complex(segs)
  segs = win * segs
  if sides == "twosided":
    return fft.fft(segs, n=nfft)
  return fft.rfft(jnp.real(segs), n=nfft)


def _static_int(value, what: str) -> int:
  return concrete_or_error(operator.index, value, f"{what} of the windowed FFT")


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend_type, return_onesided,
              scaling, axis, mode, boundary=None, padded=False):
  """SciPy's ``_spectral_helper``: ``(freqs, times, result)`` with the
  segments' axis last and the frequency axis at ``axis``."""
  if boundary not in _BOUNDARIES:
    raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                     f"{list(_BOUNDARIES)}")
  axis = _static_int(axis, "axis")
  if y is None:
    x, = util.promote_dtypes_inexact(util.ensure_arraylike("spectral_helper", x))
  else:
    if mode != "psd":
      raise ValueError("two-argument mode is available only when mode=='psd'")
    x, y = util.promote_dtypes_inexact(*util.ensure_arraylike("spectral_helper", x, y))
    if x.ndim != y.ndim:
      raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
  axis = util.canonicalize_axis(axis, x.ndim)
  result_dtype = dtypes.to_complex_dtype(x.dtype)
  freq_dtype = np.finfo(result_dtype).dtype
  if nperseg is not None:
    nperseg = _static_int(nperseg, "nperseg")
    if nperseg < 1:
      raise ValueError("nperseg must be a positive integer")
  win, nperseg = _window(window, nperseg, x.shape[axis], x.dtype)
  noverlap = nperseg // 2 if noverlap is None else _static_int(noverlap, "noverlap")
  nfft = nperseg if nfft is None else _static_int(nfft, "nfft")
  if x.size == 0 or (y is not None and y.size == 0):
    shape = list(x.shape)
    if y is not None:
      shape[axis] = min(x.shape[axis], y.shape[axis])
    return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
            jnp.zeros(shape, result_dtype))
  x = jnp.moveaxis(x, axis, -1)
  if y is not None:
    y = jnp.moveaxis(y, axis, -1)
    if x.shape[-1] != y.shape[-1]:   # zero-pad the shorter signal
      n = max(x.shape[-1], y.shape[-1])
      x = _pad_to(x, n)
      y = _pad_to(y, n)
  if nfft < nperseg:
    raise ValueError("nfft must be greater than or equal to nperseg.")
  if noverlap >= nperseg:
    raise ValueError("noverlap must be less than nperseg.")
  step = nperseg - noverlap
  if boundary is not None:
    x = _BOUNDARIES[boundary](x, nperseg // 2)
    if y is not None:
      y = _BOUNDARIES[boundary](y, nperseg // 2)
  if padded:
    extra = (-(x.shape[-1] - nperseg) % step) % nperseg
    x = _pad_to(x, x.shape[-1] + extra)
    if y is not None:
      y = _pad_to(y, y.shape[-1] + extra)
  if isinstance(detrend_type, str):
    detrend_func = partial(detrend, type=detrend_type, axis=-1)
  elif callable(detrend_type):
    detrend_func = detrend_type
  elif not detrend_type:
    detrend_func = lambda d: d  # noqa: E731
  else:
    raise ValueError(f"Unsupported detrend type: {detrend_type}")
  if scaling == "density":
    scale = 1.0 / (fs * jnp.sum(win * win))
  elif scaling == "spectrum":
    scale = 1.0 / jnp.sum(win) ** 2
  else:
    raise ValueError(f"Unknown scaling: {scaling}")
  if mode == "stft":
    scale = jnp.sqrt(scale)
  sides = "onesided" if return_onesided else "twosided"
  if return_onesided and (dtypes.kind(x.dtype) == "c" or
                          (y is not None and dtypes.kind(y.dtype) == "c")):
    sides = "twosided"
    warnings.warn("Input data is complex, switching to return_onesided=False")
  freqs = (fft.fftfreq(nfft, 1 / fs, dtype=freq_dtype) if sides == "twosided"
           else fft.rfftfreq(nfft, 1 / fs, dtype=freq_dtype))
  result = _segments_fft(x, win, detrend_func, nperseg, noverlap, nfft, sides)
  if y is not None:
    result = jnp.conj(result) * _segments_fft(y, win, detrend_func, nperseg, noverlap, nfft,
                                              sides)
  elif mode == "psd":
    result = jnp.conj(result) * result
  result = result * jnp.asarray(scale).astype(result_dtype)
  if sides == "onesided" and mode == "psd":
    # Fold the negative frequencies onto the positive ones (not DC, nor
    # Nyquist for even nfft).
    end = None if nfft % 2 else -1
    result = result.at[..., 1:end].multiply(2)
  time = jnp.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, step, dtype=freq_dtype) / fs
  if boundary is not None:
    time = time - (nperseg / 2) / fs
  result = result.astype(result_dtype)
  if y is None and mode != "stft":
    result = jnp.real(result)
  return freqs, time, jnp.moveaxis(result, -1, axis)


def _pad_to(x, n: int):
  return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - x.shape[-1])])


# -------------------------------------------------------- public functions
# Each is a cached library program per signature, its parameters static (an
# array window or fs runs the function inline): eagerly ~1 us a step instead
# of a dispatch per operation.
@partial(util.jit, static_argnames=('fs', 'window', 'nperseg', 'noverlap', 'nfft', 'detrend', 'return_onesided', 'boundary', 'padded', 'axis'))
def stft(x, fs=1.0, window="hann", nperseg: int = 256, noverlap=None, nfft=None,
         detrend=False, return_onesided: bool = True, boundary="zeros", padded: bool = True,
         axis: int = -1):
  """The short-time Fourier transform ``(f, t, Zxx)`` of ``x`` along
  ``axis`` (``scipy.signal.stft``): ``Zxx`` has the frequencies at ``axis``
  and the segment times last, scaled as a spectrum."""
  return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                   "spectrum", axis, "stft", boundary, padded)


@partial(util.jit, static_argnames=('fs', 'window', 'nperseg', 'noverlap', 'nfft', 'detrend', 'return_onesided', 'scaling', 'axis', 'average'))
def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided: bool = True, scaling: str = "density",
        axis: int = -1, average: str = "mean"):
  """The cross spectral density ``(f, Pxy)`` of ``x`` and ``y`` by Welch's
  method (``scipy.signal.csd``): segment periodograms averaged by ``mean``
  or ``median``; ``y=None`` gives ``x``'s power spectral density."""
  freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                            return_onesided, scaling, axis, "psd")
  if y is not None:
    pxy = pxy + 0j
  if pxy.ndim >= 2 and pxy.size > 0:
    if pxy.shape[-1] > 1:
      if average == "median":
        # The median of chi-squared(2) periodograms is biased low by this
        # factor (SciPy's _median_bias).
        n = pxy.shape[-1]
        ii = np.arange(2.0, n, 2)
        bias = 1 + np.sum(1.0 / (ii + 1) - 1.0 / ii)
        if dtypes.kind(pxy.dtype) == "c":
          pxy = lax.complex(jnp.median(jnp.real(pxy), axis=-1),
                            jnp.median(jnp.imag(pxy), axis=-1))
        else:
          pxy = jnp.median(pxy, axis=-1)
        pxy = pxy / np.asarray(bias, pxy.dtype)
      elif average == "mean":
        pxy = jnp.mean(pxy, axis=-1)
      else:
        raise ValueError(f'average must be "median" or "mean", got {average}')
    else:
      pxy = jnp.reshape(pxy, pxy.shape[:-1])
  return freqs, pxy


@partial(util.jit, static_argnames=('fs', 'window', 'nperseg', 'noverlap', 'nfft', 'detrend', 'return_onesided', 'scaling', 'axis', 'average'))
def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided: bool = True, scaling: str = "density",
          axis: int = -1, average: str = "mean"):
  """The power spectral density ``(f, Pxx)`` of ``x`` by Welch's method
  (``scipy.signal.welch``): ``csd(x, x)``'s real part."""
  freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                   nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                   scaling=scaling, axis=axis, average=average)
  return freqs, jnp.real(pxx)


def _overlap_add(frames, step: int):
  """Sum frames ``[..., nframes, length]`` placed ``step`` apart."""
  *batch, nframes, length = frames.shape
  out_len = step * (nframes - 1) + length
  out = jnp.zeros(tuple(batch) + (out_len,), frames.dtype)
  idx = (np.arange(nframes)[:, None] * step + np.arange(length)[None, :]).ravel()
  return out.at[..., idx].add(frames.reshape(tuple(batch) + (nframes * length,)))


@partial(util.jit, static_argnames=('fs', 'window', 'nperseg', 'noverlap', 'nfft', 'input_onesided', 'boundary', 'time_axis', 'freq_axis'))
def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided: bool = True, boundary: bool = True, time_axis: int = -1,
          freq_axis: int = -2):
  """The inverse short-time Fourier transform ``(t, x)`` of ``Zxx``
  (``scipy.signal.istft``): inverse FFTs of the segments, windowed and
  overlap-added, divided by the summed squared window."""
  Zxx = util.ensure_arraylike("istft", Zxx)
  if Zxx.ndim < 2:
    raise ValueError("Input stft must be at least 2d!")
  freq_axis = util.canonicalize_axis(freq_axis, Zxx.ndim)
  time_axis = util.canonicalize_axis(time_axis, Zxx.ndim)
  if freq_axis == time_axis:
    raise ValueError("Must specify differing time and frequency axes!")
  Zxx = Zxx.astype(dtypes.to_complex_dtype(dtypes.to_inexact_dtype(Zxx.dtype)))
  n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
  nperseg = _static_int(nperseg or n_default, "nperseg")
  if nperseg < 1:
    raise ValueError("nperseg must be a positive integer")
  if nfft is None:
    nfft = n_default + 1 if input_onesided and nperseg == n_default + 1 else n_default
  else:
    nfft = _static_int(nfft, "nfft")
  if nfft < nperseg:
    raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
  noverlap = _static_int(noverlap or nperseg // 2, "noverlap")
  if noverlap >= nperseg:
    raise ValueError("noverlap must be less than nperseg.")
  step = nperseg - noverlap
  outer = tuple(i for i in range(Zxx.ndim) if i not in (time_axis, freq_axis))
  Zxx = jnp.transpose(Zxx, outer + (freq_axis, time_axis))
  inverse = fft.irfft if input_onesided else fft.ifft
  segs = inverse(Zxx, axis=-2, n=nfft)[..., :nperseg, :]
  if isinstance(window, (str, tuple)):
    name = window if isinstance(window, str) else window[0]
    win = jnp.asarray(_named_window(name, nperseg).astype(segs.dtype))
  else:
    win = jnp.asarray(window)
    if win.ndim != 1:
      raise ValueError("window must be 1-D")
    if win.shape[0] != nperseg:
      raise ValueError(f"window must have length of {nperseg}")
    win = win.astype(segs.dtype)
  segs = segs * jnp.sum(win)            # undo the 'spectrum' scaling
  frames = jnp.swapaxes(segs * win[:, None], -2, -1)
  x = _overlap_add(frames, step)
  nframes = segs.shape[-1]
  norm = _overlap_add(jnp.broadcast_to(win * win, (nframes, nperseg)), step)
  if boundary:
    half = nperseg // 2
    x = x[..., half:-half] if half else x
    norm = norm[..., half:-half] if half else norm
  x = x / jnp.where(norm > 1e-10, norm, 1.0)
  if x.ndim > 1 and time_axis != Zxx.ndim - 1:
    x = jnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
  time = jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
  return time, x

