"""The ``fft`` primitive's StableHLO lowering (the primitive and its other
rules are in ``primitives/fft/fft.py``). IREE's ``stablehlo.fft`` only handles
some power-of-two transforms (DESIGN.md decision 5; no float64 ones), so the
lowering emits ``stablehlo.fft`` where IREE computes it correctly and
otherwise traces a transform that multiplies by DFT matrices, one
``dot_general`` per axis on the real and imaginary parts (real products keep
IREE's data tiling on); long transforms are split in two (four-step).
"""
from __future__ import annotations

import numpy as np

from openjax._src.core import get_aval
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.elementwise import arithmetic
from openjax._src.primitives.elementwise.arithmetic import add, conj, imag, mul, real, sub
from openjax._src.primitives.base.structural import broadcast_in_dim, reshape, transpose
from openjax._src.primitives.shape.shape import concatenate, pad, rev, slice_in_dim
from openjax._src.primitives.dot_conv.dot import dot_general
from openjax._src.primitives.fft.fft import FftType, fft_p, real_dtype


def _dft_contract(x, mat: np.ndarray, axis: int):
  """``x`` with dimension ``axis`` multiplied by ``mat`` (``[n_in, n_out]``)."""
  ndim = get_aval(x).ndim
  y = dot_general(x, mat, (((axis,), (0,)), ((), ())))
  perm = list(range(ndim - 1))
  perm.insert(axis, ndim - 1)
  return transpose(y, tuple(perm)) if axis != ndim - 1 else y


def _dft_matrices(n_in: int, n_out: int, n: int, sign: float, scale: float, dtype):
  """Real and (signed) imaginary parts of ``exp(sign 2 pi i t k / n) * scale``
  for ``t < n_in``, ``k < n_out``; rows ``t >= n`` are zero (padding)."""
  t = np.arange(n_in)[:, None]
  k = np.arange(n_out)[None, :]
  theta = 2 * np.pi * ((t * k) % n) / n
  keep = (t < n) * scale
  return ((np.cos(theta) * keep).astype(dtype), (sign * np.sin(theta) * keep).astype(dtype))


# Longer transforms split into two shorter ones (four-step): DFT matrices
# grow as n**2 (a float64 transform of 4096 would hold 268 MB of them).
_MATRIX_MAX = 128


def _split(n: int) -> int:
  """The factor of ``n`` nearest its square root (1 when ``n`` is prime)."""
  return max((d for d in range(1, int(n ** 0.5) + 1) if n % d == 0), default=1)


def _complex_dft(x, axis: int, n: int, inverse: bool):
  """The 1-D FFT/IFFT of complex ``x`` over ``axis``: matrix products on the
  real and imaginary parts, or for long composite ``n = n1 n2`` a length-n1
  transform, a twiddle product and a length-n2 transform (four-step), or for
  long prime ``n`` Bluestein's convolution."""
  aval = get_aval(x)
  n1 = _split(n) if n > _MATRIX_MAX else 1
  if n1 == 1 and n > _MATRIX_MAX:
    return _bluestein(x, axis, n, inverse)
  if n1 == 1:
    rdt = real_dtype(aval.dtype)
    c, s = _dft_matrices(n, n, n, 1.0 if inverse else -1.0, 1 / n if inverse else 1.0, rdt)
    re, im = real(x), imag(x)
    out_re = sub(_dft_contract(re, c, axis), _dft_contract(im, s, axis))
    out_im = add(_dft_contract(re, s, axis), _dft_contract(im, c, axis))
    return arithmetic.complex(out_re, out_im)
  n2 = n // n1
  shape = aval.shape
  # t = t1 n2 + t2 and k = k1 + n1 k2: X[k] = sum_t2 w_n2^(t2 k2)
  # w_n^(t2 k1) sum_t1 x[t] w_n1^(t1 k1).
  y = reshape(x, shape[:axis] + (n1, n2) + shape[axis + 1:])
  y = _complex_dft(y, axis, n1, inverse)
  sign = 1.0 if inverse else -1.0
  twiddle = np.exp(sign * 2j * np.pi * np.outer(np.arange(n1), np.arange(n2)) / n)
  twiddle = broadcast_in_dim(twiddle.astype(aval.dtype), get_aval(y).shape, (axis, axis + 1))
  y = _complex_dft(mul(y, twiddle), axis + 1, n2, inverse)
  perm = list(range(len(shape) + 1))
  perm[axis], perm[axis + 1] = axis + 1, axis
  return reshape(transpose(y, tuple(perm)), shape)


def _bluestein(x, axis: int, n: int, inverse: bool):
  """The length-``n`` DFT over ``axis`` as a circular convolution of
  power-of-two length ``m >= 2n - 1`` (Bluestein): with the chirp
  ``b_j = exp(sign i pi j^2 / n)``, ``X_k = b_k sum_t (x_t b_t) conj(b_(k-t))``.
  Its constants are O(n) (a prime n's DFT matrix would be n^2: 7 TiB at
  999983); the chirp's angles use ``j^2 mod 2n``, exact in int64."""
  aval = get_aval(x)
  ndim = aval.ndim
  m = 1 << (2 * n - 2).bit_length()
  sign = 1.0 if inverse else -1.0
  j = np.arange(n, dtype=np.int64)
  chirp = np.exp(sign * 1j * np.pi * ((j * j) % (2 * n)) / n)
  h = np.zeros(m, np.complex128)
  h[:n] = np.conj(chirp)
  h[m - n + 1:] = np.conj(chirp[1:][::-1])
  spectrum = np.fft.fft(h)
  dims = (axis,)

  def along(v: np.ndarray, length: int):
    return broadcast_in_dim(v.astype(aval.dtype),
                            aval.shape[:axis] + (length,) + aval.shape[axis + 1:], dims)
  a = mul(x, along(chirp, n))
  a = pad(a, np.zeros((), aval.dtype), [(0, 0, 0)] * axis + [(0, m - n, 0)]
          + [(0, 0, 0)] * (ndim - axis - 1))
  c = _complex_on_axis(mul(_complex_on_axis(a, axis, m, False), along(spectrum, m)),
                       axis, m, True)
  scale = chirp / n if inverse else chirp
  return mul(slice_in_dim(c, 0, n, axis=axis), along(scale, n))


def _complex_dft_last(x, n: int, inverse: bool):
  return _complex_dft(x, get_aval(x).ndim - 1, n, inverse)


def _rfft_dft_last(x, n: int):
  ndim = get_aval(x).ndim
  if n > _MATRIX_MAX:
    full = _complex_dft_last(arithmetic.complex(x, np.zeros((), get_aval(x).dtype)), n, False)
    return slice_in_dim(full, 0, n // 2 + 1, axis=ndim - 1)
  c, s = _dft_matrices(n, n // 2 + 1, n, -1.0, 1.0, get_aval(x).dtype)
  return arithmetic.complex(_dft_contract(x, c, ndim - 1), _dft_contract(x, s, ndim - 1))


def _irfft_dft_last(x, n: int):
  aval = get_aval(x)
  if n > _MATRIX_MAX:
    # The full spectrum's Hermitian extension; the real part of its inverse
    # ignores the imaginary parts of the DC and Nyquist entries, as NumPy.
    half, m, last = n // 2 + 1, aval.shape[-1], aval.ndim - 1
    if m < half:
      x = pad(x, np.zeros((), aval.dtype), [(0, 0, 0)] * last + [(0, half - m, 0)])
    x = slice_in_dim(x, 0, half, axis=last)
    tail = conj(rev(slice_in_dim(x, 1, n - half + 1, axis=last), (last,)))
    return real(_complex_dft_last(concatenate([x, tail], last), n, True))
  return _irfft_dft_matrix(x, n)


def _irfft_dft_matrix(x, n: int):
  # x_t = (1/n) sum_k w_k Re(X_k e^{2 pi i k t / n}) over the half spectrum,
  # w_k the Hermitian weights; entries past n//2 and the imaginary parts of
  # the DC/Nyquist entries do not contribute (as in numpy.fft.irfft).
  aval = get_aval(x)
  rdt = real_dtype(aval.dtype)
  m, half = aval.shape[-1], n // 2 + 1
  w = np.where(np.arange(m) < half, 2.0, 0.0)
  w[0] = 1.0
  if n % 2 == 0 and half - 1 < m:
    w[half - 1] = 1.0
  theta = 2 * np.pi * ((np.arange(m)[:, None] * np.arange(n)[None, :]) % n) / n
  a = (np.cos(theta) * w[:, None] / n).astype(rdt)
  b = (-np.sin(theta) * w[:, None] / n).astype(rdt)
  return add(_dft_contract(real(x), a, aval.ndim - 1),
             _dft_contract(imag(x), b, aval.ndim - 1))


# IREE 3.13 cannot compile its own IRFFT from 2**14 points on ("'func.func' op
# exceeded stack allocation limit of 32768 bytes"); longer ones take the
# complex transform of the Hermitian extension.
_NATIVE_IRFFT_MAX = 1 << 13


def _is_power_of_two(n: int) -> bool:
  return n > 1 and n & (n - 1) == 0


def _native_fft_ok(fft_type, fft_lengths, in_aval) -> bool:
  """Whether IREE's own ``stablehlo.fft`` computes this transform: IREE
  legalises 1-D transforms of power-of-two lengths only (checked against
  NumPy in tests/test_fft.py); an IRFFT must get exactly ``n // 2 + 1``
  half-spectrum entries."""
  if len(fft_lengths) != 1 or not _is_power_of_two(fft_lengths[0]):
    return False
  if real_dtype(in_aval.dtype) == np.float64:
    return False   # IREE fails to compile it ("'arith.mulf' op requires the same type")
  if fft_type != FftType.IRFFT:
    return True
  return in_aval.shape[-1] == fft_lengths[0] // 2 + 1 and fft_lengths[0] <= _NATIVE_IRFFT_MAX


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
  y = _fft_1d_last(transpose(x, tuple(perm)), FftType.IFFT if inverse else FftType.FFT, n)
  return transpose(y, tuple(perm))


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
  jaxpr, consts = trace_to_jaxpr(
      lambda v: [_fft_by_axes(v, fft_type=fft_type, fft_lengths=fft_lengths)],
      list(ctx.avals_in))
  return ctx.lower_jaxpr_inline(jaxpr, [x], consts)
