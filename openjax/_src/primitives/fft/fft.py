"""The ``fft`` primitive (``jax.lax.fft``): complex and real discrete Fourier
transforms over the trailing ``len(fft_lengths)`` dimensions of an array.

Eager impls run ``numpy.fft`` (pocketfft, which keeps single precision for
float32/complex64 as XLA does; forward transforms of float32/complex64 call
pocketfft's single-precision loop directly, see ``_forward_single``). The lowering traces DFT-matrix products where
IREE's ``stablehlo.fft`` falls short, so it is set from the control layer
(``control/fft_lowering.py``).
"""
from __future__ import annotations

import enum
import math
from collections.abc import Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules_ops import fft_rule
from openjax._src.primitives.base.convert import _convert_element_type
from openjax._src.primitives.base.structural import broadcast_in_dim, deflinear, moveaxis
from openjax._src.primitives.elementwise.arithmetic import conj, div, mul
from openjax._src.primitives.shape.shape import pad, slice

__all__ = ["FftType", "fft", "fft_p"]


class FftType(enum.IntEnum):
  """Which transform ``fft`` computes (prints as its number, as in JAX)."""
  FFT = 0     # forward complex-to-complex
  IFFT = 1    # inverse complex-to-complex
  RFFT = 2    # forward real-to-complex (half spectrum)
  IRFFT = 3   # inverse complex-to-real (from a half spectrum)

  def __repr__(self):
    return str(int(self))


_FFT_TYPE_NAMES = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT,
                   "irfft": FftType.IRFFT}


def _fft_type(fft_type) -> FftType:
  if isinstance(fft_type, FftType):
    return fft_type
  if isinstance(fft_type, str):
    typ = _FFT_TYPE_NAMES.get(fft_type.lower())
    if typ is None:
      raise ValueError(f"Unknown FFT type '{fft_type}'")
    return typ
  raise TypeError(f"Unknown FFT type value '{fft_type}'")


def _complex_dtype(dtype) -> np.dtype:
  return np.dtype(np.complex128 if np.dtype(dtype) in (np.float64, np.complex128)
                  else np.complex64)


def real_dtype(dtype) -> np.dtype:
  return np.dtype(np.float64 if np.dtype(dtype) in (np.float64, np.complex128) else np.float32)


# --------------------------------------------------------------------- fft
fft_p = Primitive("fft", kind="linear")


def fft(x, fft_type: FftType | str, fft_lengths: Sequence[int]):
  """The discrete Fourier transform of ``x`` over its last
  ``len(fft_lengths)`` dimensions (``jax.lax.fft``). ``fft_type`` is an
  ``FftType`` or one of ``'fft'``, ``'ifft'``, ``'rfft'``, ``'irfft'``. RFFT
  takes a real array and returns the half spectrum (last length
  ``n // 2 + 1``); IRFFT inverts it to a real array of ``fft_lengths``."""
  typ = _fft_type(fft_type)
  fft_lengths = tuple(int(n) for n in fft_lengths)
  dt = dtypes.dtype(x)
  if typ == FftType.RFFT:
    if dtypes.kind(dt) == "c":
      raise ValueError("only real valued inputs supported for rfft")
    x = _convert_element_type(x, dtypes.to_inexact_dtype(dt))
  else:
    x = _convert_element_type(x, dtypes.to_complex_dtype(dt))
  if not fft_lengths:
    return x
  return fft_p.bind1(x, fft_type=typ, fft_lengths=fft_lengths)


# numpy.fft's forward transforms pass their scale factor as the Python int 1,
# which resolves pocketfft's gufunc to its double loop: float32/complex64
# operands are cast to float64, transformed and rounded back, 4-5x the time
# of the single-precision loop (c64 1000x1000 fft 53 -> 13 ms, rfft of f32
# 41 -> 11 ms, loaded machine; its inverse transforms' factor 1/n is already
# single precision). A factor of float32 1 runs the single loop, as XLA's
# transform does (values within float32 rounding: ~1e-7 of the largest).
try:
  from numpy.fft import _pocketfft_umath as _pocketfft
except ImportError:   # pragma: no cover - NumPy moved it: numpy.fft's own path
  _pocketfft = None
_SINGLE = (np.dtype(np.complex64), np.dtype(np.float32))


def _forward_single(fft_type, x_dtype, fft_lengths):
  """``v -> transform`` of a forward FFT/RFFT of a complex64/float32 operand
  over its trailing ``len(fft_lengths)`` axes in pocketfft's single loop
  (the last axis first, as numpy.fft.fftn/rfftn go), or None."""
  if _pocketfft is None or min(fft_lengths, default=0) < 1:
    return None
  if fft_type == FftType.FFT and np.dtype(x_dtype) == _SINGLE[0]:
    first = _pocketfft.fft
  elif fft_type == FftType.RFFT and np.dtype(x_dtype) == _SINGLE[1]:
    first = _pocketfft.rfft_n_even if fft_lengths[-1] % 2 == 0 else _pocketfft.rfft_n_odd
  else:
    return None
  if ("Ff->F" if fft_type == FftType.FFT else "ff->F") not in first.types or (
      len(fft_lengths) > 1 and "Ff->F" not in _pocketfft.fft.types):
    return None
  one, k = np.float32(1), len(fft_lengths)
  half = fft_lengths[-1] // 2 + 1 if fft_type == FftType.RFFT else fft_lengths[-1]

  def transform(v):
    last = v.ndim - 1
    out = np.empty(v.shape[:-1] + (half,), np.complex64)
    v = first(v, one, axes=[(last,), (), (last,)], out=out)
    for axis in range(last - 1, last - k, -1):
      v = _pocketfft.fft(v, one, axes=[(axis,), (), (axis,)], out=np.empty_like(v))
    return v
  return transform


@fft_p.def_impl
def _fft_impl(x, *, fft_type, fft_lengths):
  single = _forward_single(fft_type, x.dtype, fft_lengths)
  if single is not None and x.shape[x.ndim - len(fft_lengths):] == tuple(fft_lengths):
    return [single(x)]
  axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
  if fft_type == FftType.FFT:
    out = np.fft.fftn(x, s=fft_lengths, axes=axes)
  elif fft_type == FftType.IFFT:
    out = np.fft.ifftn(x, s=fft_lengths, axes=axes)
  elif fft_type == FftType.RFFT:
    out = np.fft.rfftn(x, s=fft_lengths, axes=axes)
  else:
    out = np.fft.irfftn(x, s=fft_lengths, axes=axes)
  out_dtype = real_dtype(x.dtype) if fft_type == FftType.IRFFT else _complex_dtype(x.dtype)
  return [np.asarray(out).astype(out_dtype, copy=False)]


_NUMPY_1D = {FftType.FFT: np.fft.fft, FftType.IFFT: np.fft.ifft, FftType.RFFT: np.fft.rfft,
             FftType.IRFFT: np.fft.irfft}
_NUMPY_ND = {FftType.FFT: np.fft.fftn, FftType.IFFT: np.fft.ifftn, FftType.RFFT: np.fft.rfftn,
             FftType.IRFFT: np.fft.irfftn}


@fft_p.def_eval_kernel
def _fft_eval_kernel(x, *, fft_type, fft_lengths):
  # The impl's NumPy call bound to its arguments: one-axis transforms call
  # numpy.fft.fft & co. directly (numpy.fft.fftn's axis bookkeeping costs
  # more than a short transform).
  out_dtype = real_dtype(x.dtype) if fft_type == FftType.IRFFT else _complex_dtype(x.dtype)
  single = _forward_single(fft_type, x.dtype, fft_lengths)
  if single is not None and x.shape[x.ndim - len(fft_lengths):] == tuple(fft_lengths):
    return single
  if len(fft_lengths) == 1:
    transform, n = _NUMPY_1D[fft_type], fft_lengths[0]

    def kernel(v):
      return transform(v, n).astype(out_dtype, copy=False)
    return kernel
  transform = _NUMPY_ND[fft_type]
  axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))

  def kernel_nd(v):
    return transform(v, fft_lengths, axes).astype(out_dtype, copy=False)
  return kernel_nd


@fft_p.def_abstract_eval
def _fft_abstract_eval(x, *, fft_type, fft_lengths):
  k = len(fft_lengths)
  if k > x.ndim:
    raise ValueError(f"FFT input shape {x.shape} must have at least as many input "
                     f"dimensions as fft_lengths {fft_lengths}.")
  if fft_type == FftType.RFFT:
    if x.dtype not in (np.float32, np.float64):
      raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
    if x.shape[x.ndim - k:] != fft_lengths:
      raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to "
                       f"fft_lengths {fft_lengths}")
    shape = x.shape[:x.ndim - k] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
    return [ShapedArray(shape, _complex_dtype(x.dtype))]
  if dtypes.kind(x.dtype) != "c":
    raise ValueError(f"{fft_type.name} input must be complex64 or complex128, got {x.dtype}")
  if fft_type == FftType.IRFFT:
    if x.shape[x.ndim - k:-1] != fft_lengths[:-1]:
      raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal to all "
                       f"except the last fft_length, got fft_lengths={fft_lengths}")
    return [ShapedArray(x.shape[:x.ndim - k] + fft_lengths, real_dtype(x.dtype))]
  if x.shape[x.ndim - k:] != fft_lengths:
    raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to "
                     f"fft_lengths {fft_lengths}")
  return [ShapedArray(x.shape, x.dtype)]


fft_p.def_sharding_rule(fft_rule)


def _hermitian_mask(aval: ShapedArray, n: int):
  """Weights of a half spectrum (the last axis of ``aval``) for length ``n``: 1
  for the DC (and, for even ``n``, Nyquist) entry, 2 for entries standing for
  a conjugate pair."""
  m = aval.shape[-1]
  mask = np.full(m, 2.0)
  mask[0] = 1.0
  if n % 2 == 0:
    mask[m - 1] = 1.0
  return broadcast_in_dim(mask.astype(aval.dtype), aval.shape, (aval.ndim - 1,))


def _scale(x, factor):
  aval = get_aval(x)
  return mul(x, broadcast_in_dim(np.asarray(factor, aval.dtype), aval.shape, ()))


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
  # The DFT matrix is symmetric, so FFT and IFFT are their own transposes.
  # RFFT/IRFFT drop the redundant half of a Hermitian spectrum: their
  # transposes reweight the kept entries (JAX's rules, including its
  # conjugation convention for complex cotangents).
  n = fft_lengths[-1]
  if fft_type == FftType.RFFT:
    weighted = div(conj(ct), _hermitian_mask(get_aval(ct), n))
    out = fft_p.bind1(weighted, fft_type=FftType.IRFFT, fft_lengths=fft_lengths)
    return [_scale(out, math.prod(fft_lengths))]
  if fft_type == FftType.IRFFT:
    spec = fft_p.bind1(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    aval = get_aval(spec)
    out = mul(_hermitian_mask(aval, n), spec)
    out = conj(_scale(out, 1 / math.prod(fft_lengths)))
    want = x.aval.shape[-1]
    if aval.shape[-1] != want:   # the operand held more/fewer half-spectrum entries
      out = _fit_last(out, want)
    return [out]
  return [fft_p.bind1(ct, fft_type=fft_type, fft_lengths=fft_lengths)]


def _fit_last(x, m: int):
  """``x`` cropped or zero-padded to ``m`` entries on its last axis."""
  aval = get_aval(x)
  have = aval.shape[-1]
  if have > m:
    return slice(x, (0,) * aval.ndim, aval.shape[:-1] + (m,))
  zero = np.zeros((), aval.dtype)
  return pad(x, zero, [(0, 0, 0)] * (aval.ndim - 1) + [(0, m - have, 0)])


deflinear(fft_p, _fft_transpose)


@fft_p.def_batch
def _fft_batch(vals, dims, *, fft_type, fft_lengths):
  x, = vals
  d, = dims
  return [fft_p.bind1(moveaxis(x, d, 0), fft_type=fft_type, fft_lengths=fft_lengths)], [0]
