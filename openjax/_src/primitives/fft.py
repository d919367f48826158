"""The ``fft`` primitive (``jax.lax.fft``): complex and real discrete Fourier
transforms over the trailing ``len(fft_lengths)`` dimensions of an array.

Eager impls run ``numpy.fft`` (pocketfft, which keeps single precision for
float32/complex64 as XLA does). Compiled code: IREE's ``stablehlo.fft`` only
handles some power-of-two transforms (DESIGN.md decision 5), so the lowering
emits ``stablehlo.fft`` where IREE computes it correctly and otherwise
multiplies by DFT matrices, one ``dot_general`` per axis on the real and
imaginary parts (real products keep IREE's data tiling on).
"""
from __future__ import annotations

import enum
import math
from collections.abc import Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core import jaxpr_transforms
from openjax._src.primitives import elementwise as ew
from openjax._src.primitives import shape as sh
from openjax._src.primitives import shape_base as sb
from openjax._src.primitives.shape_base import deflinear
from openjax._src.primitives.batch_util import moveaxis
from openjax._src.primitives.convert import _convert_element_type
from openjax._src.primitives.dot import dot_general

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


def _real_dtype(dtype) -> np.dtype:
  return np.dtype(np.float64 if np.dtype(dtype) in (np.float64, np.complex128) else np.float32)


# --------------------------------------------------------------------- fft
fft_p = Primitive("fft", kind="linear")


@fft_p.def_impl
def _fft_impl(x, *, fft_type, fft_lengths):
  axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
  if fft_type == FftType.FFT:
    out = np.fft.fftn(x, s=fft_lengths, axes=axes)
  elif fft_type == FftType.IFFT:
    out = np.fft.ifftn(x, s=fft_lengths, axes=axes)
  elif fft_type == FftType.RFFT:
    out = np.fft.rfftn(x, s=fft_lengths, axes=axes)
  else:
    out = np.fft.irfftn(x, s=fft_lengths, axes=axes)
  out_dtype = _real_dtype(x.dtype) if fft_type == FftType.IRFFT else _complex_dtype(x.dtype)
  return [np.asarray(out).astype(out_dtype, copy=False)]


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
    return [ShapedArray(x.shape[:x.ndim - k] + fft_lengths, _real_dtype(x.dtype))]
  if x.shape[x.ndim - k:] != fft_lengths:
    raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to "
                     f"fft_lengths {fft_lengths}")
  return [ShapedArray(x.shape, x.dtype)]


def _hermitian_mask(aval: ShapedArray, n: int):
  """Weights of a half spectrum (the last axis of ``aval``) for length ``n``: 1
  for the DC (and, for even ``n``, Nyquist) entry, 2 for entries standing for
  a conjugate pair."""
  m = aval.shape[-1]
  mask = np.full(m, 2.0)
  mask[0] = 1.0
  if n % 2 == 0:
    mask[m - 1] = 1.0
  return sb.broadcast_in_dim(mask.astype(aval.dtype), aval.shape, (aval.ndim - 1,))


def _scale(x, factor):
  aval = get_aval(x)
  return ew.mul(x, sb.broadcast_in_dim(np.asarray(factor, aval.dtype), aval.shape, ()))


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
  # The DFT matrix is symmetric, so FFT and IFFT are their own transposes.
  # RFFT/IRFFT drop the redundant half of a Hermitian spectrum: their
  # transposes reweight the kept entries (JAX's rules, including its
  # conjugation convention for complex cotangents).
  n = fft_lengths[-1]
  if fft_type == FftType.RFFT:
    weighted = ew.div(ew.conj(ct), _hermitian_mask(get_aval(ct), n))
    out = fft_p.bind1(weighted, fft_type=FftType.IRFFT, fft_lengths=fft_lengths)
    return [_scale(out, math.prod(fft_lengths))]
  if fft_type == FftType.IRFFT:
    spec = fft_p.bind1(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    aval = get_aval(spec)
    out = ew.mul(_hermitian_mask(aval, n), spec)
    out = ew.conj(_scale(out, 1 / math.prod(fft_lengths)))
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
    return sh.slice(x, (0,) * aval.ndim, aval.shape[:-1] + (m,))
  zero = np.zeros((), aval.dtype)
  return sh.pad(x, zero, [(0, 0, 0)] * (aval.ndim - 1) + [(0, m - have, 0)])


deflinear(fft_p, _fft_transpose)


@fft_p.def_batch
def _fft_batch(vals, dims, *, fft_type, fft_lengths):
  x, = vals
  d, = dims
  return [fft_p.bind1(moveaxis(x, d, 0), fft_type=fft_type, fft_lengths=fft_lengths)], [0]


# ---------------------------------------------------------------- lowering
def _dft_contract(x, mat: np.ndarray, axis: int):
  """``x`` with dimension ``axis`` multiplied by ``mat`` (``[n_in, n_out]``)."""
  ndim = get_aval(x).ndim
  y = dot_general(x, mat, (((axis,), (0,)), ((), ())))
  perm = list(range(ndim - 1))
  perm.insert(axis, ndim - 1)
  return sb.transpose(y, tuple(perm)) if axis != ndim - 1 else y


def _dft_matrices(n_in: int, n_out: int, n: int, sign: float, scale: float, dtype):
  """Real and (signed) imaginary parts of ``exp(sign 2 pi i t k / n) * scale``
  for ``t < n_in``, ``k < n_out``; rows ``t >= n`` are zero (padding)."""
  t = np.arange(n_in)[:, None]
  k = np.arange(n_out)[None, :]
  theta = 2 * np.pi * ((t * k) % n) / n
  keep = (t < n) * scale
  return ((np.cos(theta) * keep).astype(dtype), (sign * np.sin(theta) * keep).astype(dtype))


def _complex_dft_last(x, n: int, inverse: bool):
  """The 1-D FFT/IFFT of complex ``x`` over its last axis as matrix products
  on the real and imaginary parts."""
  ndim = get_aval(x).ndim
  rdt = _real_dtype(get_aval(x).dtype)
  c, s = _dft_matrices(n, n, n, 1.0 if inverse else -1.0, 1 / n if inverse else 1.0, rdt)
  re, im = ew.real(x), ew.imag(x)
  out_re = ew.sub(_dft_contract(re, c, ndim - 1), _dft_contract(im, s, ndim - 1))
  out_im = ew.add(_dft_contract(re, s, ndim - 1), _dft_contract(im, c, ndim - 1))
  return ew.complex(out_re, out_im)


def _rfft_dft_last(x, n: int):
  ndim = get_aval(x).ndim
  c, s = _dft_matrices(n, n // 2 + 1, n, -1.0, 1.0, get_aval(x).dtype)
  return ew.complex(_dft_contract(x, c, ndim - 1), _dft_contract(x, s, ndim - 1))


def _irfft_dft_last(x, n: int):
  # x_t = (1/n) sum_k w_k Re(X_k e^{2 pi i k t / n}) over the half spectrum,
  # w_k the Hermitian weights; entries past n//2 and the imaginary parts of
  # the DC/Nyquist entries do not contribute (as in numpy.fft.irfft).
  aval = get_aval(x)
  rdt = _real_dtype(aval.dtype)
  m, half = aval.shape[-1], n // 2 + 1
  w = np.where(np.arange(m) < half, 2.0, 0.0)
  w[0] = 1.0
  if n % 2 == 0 and half - 1 < m:
    w[half - 1] = 1.0
  theta = 2 * np.pi * ((np.arange(m)[:, None] * np.arange(n)[None, :]) % n) / n
  a = (np.cos(theta) * w[:, None] / n).astype(rdt)
  b = (-np.sin(theta) * w[:, None] / n).astype(rdt)
  return ew.add(_dft_contract(ew.real(x), a, aval.ndim - 1),
                _dft_contract(ew.imag(x), b, aval.ndim - 1))


def _is_power_of_two(n: int) -> bool:
  return n > 1 and n & (n - 1) == 0


def _native_fft_ok(fft_type, fft_lengths, in_aval) -> bool:
  """Whether IREE's own ``stablehlo.fft`` computes this transform: IREE
  legalises 1-D transforms of power-of-two lengths only (checked against
  NumPy in tests/test_fft.py); an IRFFT must get exactly ``n // 2 + 1``
  half-spectrum entries."""
  if len(fft_lengths) != 1 or not _is_power_of_two(fft_lengths[0]):
    return False
  return fft_type != FftType.IRFFT or in_aval.shape[-1] == fft_lengths[0] // 2 + 1


def _fft_1d_last(x, fft_type, n: int):
  """A 1-D transform over the last axis: the primitive itself where IREE
  lowers it natively, DFT-matrix products otherwise."""
  if _native_fft_ok(fft_type, (n,), get_aval(x)):
    return fft_p.bind1(x, fft_type=fft_type, fft_lengths=(n,))
  if fft_type == FftType.RFFT:
    return _rfft_dft_last(x, n)
  if fft_type == FftType.IRFFT:
    return _irfft_dft_last(x, n)
  return _complex_dft_last(x, n, fft_type == FftType.IFFT)


def _complex_on_axis(x, axis: int, n: int, inverse: bool):
  ndim = get_aval(x).ndim
  if axis == ndim - 1:
    return _fft_1d_last(x, FftType.IFFT if inverse else FftType.FFT, n)
  perm = list(range(ndim))
  perm[axis], perm[-1] = perm[-1], perm[axis]
  y = _fft_1d_last(sb.transpose(x, tuple(perm)), FftType.IFFT if inverse else FftType.FFT, n)
  return sb.transpose(y, tuple(perm))


def _fft_by_axes(x, *, fft_type, fft_lengths):
  """A multi-dimensional transform as 1-D transforms, one axis at a time
  (lax wrappers; any lengths)."""
  ndim, k = get_aval(x).ndim, len(fft_lengths)
  outer = list(zip(range(ndim - k, ndim - 1), fft_lengths[:-1]))
  if fft_type == FftType.RFFT:
    x = _fft_1d_last(x, FftType.RFFT, fft_lengths[-1])
    for ax, n in outer:
      x = _complex_on_axis(x, ax, n, False)
    return x
  if fft_type == FftType.IRFFT:
    for ax, n in outer:
      x = _complex_on_axis(x, ax, n, True)
    return _fft_1d_last(x, FftType.IRFFT, fft_lengths[-1])
  inverse = fft_type == FftType.IFFT
  for ax, n in outer + [(ndim - 1, fft_lengths[-1])]:
    x = _complex_on_axis(x, ax, n, inverse)
  return x


@fft_p.def_lower
def _fft_lower(ctx, x, *, fft_type, fft_lengths):
  if _native_fft_ok(fft_type, fft_lengths, ctx.avals_in[0]):
    attrs = {"fft_type": f"#stablehlo<fft_type {fft_type.name}>",
             "fft_length": tuple(fft_lengths)}
    return [ctx.op("stablehlo.fft", [x], ctx.avals_out[0], attrs=attrs)]
  jaxpr, consts = jaxpr_transforms.trace_to_jaxpr(
      lambda v: [_fft_by_axes(v, fft_type=fft_type, fft_lengths=fft_lengths)],
      list(ctx.avals_in))
  return ctx.lower_jaxpr_inline(jaxpr, [x], consts)


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
