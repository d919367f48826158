"""Op-table rows: ``jax.scipy.signal``'s FFT convolution and spectral
functions and ``jax.scipy.fft``'s DCTs, against SciPy."""
import numpy as np
import scipy.fft
import scipy.signal

from openjax.scipy import fft as jsp_fft
from openjax.scipy import signal as jsp_signal
from tests.ops.harness import OpRow

F32, C64 = np.dtype(np.float32), np.dtype(np.complex64)


def _arr(*shapes):
  return lambda rng: tuple(rng.standard_normal(s).astype(F32) for s in shapes)


def _f32(fn):
  return lambda *a: np.asarray(fn(*a), F32)


def _cast(fn):
  """Each output of ``fn`` as float32 or complex64 (SciPy computes in
  float64 for some of them)."""
  def ref(*a):
    return tuple(np.asarray(o, C64 if np.iscomplexobj(o) else F32) for o in fn(*a))
  return ref


ROWS = []
for _mode in ("full", "same", "valid"):
  ROWS.append(OpRow(f"scipy_signal_fftconvolve_{_mode}",
                    lambda a, b, m=_mode: jsp_signal.fftconvolve(a, b, m), _arr((5, 6), (3, 2)),
                    lambda a, b, m=_mode: scipy.signal.fftconvolve(a, b, m), grad=True,
                    atol=1e-5, rtol=1e-5))
ROWS += [
    OpRow("scipy_signal_fftconvolve_axes", lambda a, b: jsp_signal.fftconvolve(a, b, axes=1),
          _arr((3, 7), (3, 4)), lambda a, b: scipy.signal.fftconvolve(a, b, axes=1), grad=True,
          atol=1e-5, rtol=1e-5),
    OpRow("scipy_signal_detrend_linear", lambda x: jsp_signal.detrend(x), _arr((3, 20)),
          scipy.signal.detrend, grad=True, atol=1e-5, rtol=1e-5),
    OpRow("scipy_signal_detrend_bp", lambda x: jsp_signal.detrend(x, axis=0, bp=[5]),
          _arr((12, 2)), lambda x: scipy.signal.detrend(x, axis=0, bp=[5]), grad=True,
          atol=1e-5, rtol=1e-5),
    OpRow("scipy_signal_detrend_constant", lambda x: jsp_signal.detrend(x, type="constant"),
          _arr((3, 20)), lambda x: scipy.signal.detrend(x, type="constant"), grad=True,
          atol=1e-5, rtol=1e-5),
    OpRow("scipy_signal_stft", lambda x: jsp_signal.stft(x, nperseg=16), _arr((2, 40)),
          _cast(lambda x: scipy.signal.stft(x, nperseg=16)), atol=1e-5, rtol=1e-5),
    OpRow("scipy_signal_istft",
          lambda z: jsp_signal.istft(z, nperseg=16),
          lambda rng: (scipy.signal.stft(rng.standard_normal(40), nperseg=16)[2]
                       .astype(C64),),
          _cast(lambda z: scipy.signal.istft(z, nperseg=16)), atol=1e-5, rtol=1e-5),
    OpRow("scipy_signal_welch", lambda x: jsp_signal.welch(x, nperseg=16), _arr((2, 50)),
          _cast(lambda x: scipy.signal.welch(x, nperseg=16)), grad=True, atol=1e-5, rtol=1e-5),
    OpRow("scipy_signal_welch_median",
          lambda x: jsp_signal.welch(x, nperseg=8, average="median", window="hamming"),
          _arr((40,)),
          _cast(lambda x: scipy.signal.welch(x, nperseg=8, average="median", window="hamming")),
          atol=1e-5, rtol=1e-5),
    OpRow("scipy_signal_csd", lambda x, y: jsp_signal.csd(x, y, nperseg=16),
          _arr((2, 50), (2, 50)), _cast(lambda x, y: scipy.signal.csd(x, y, nperseg=16)),
          grad=True, atol=1e-5, rtol=1e-5),
]

for _norm in (None, "ortho"):
  _tag = _norm or "backward"
  ROWS += [
      OpRow(f"scipy_fft_dct_{_tag}", lambda x, n=_norm: jsp_fft.dct(x, norm=n), _arr((3, 7)),
            lambda x, n=_norm: scipy.fft.dct(x, norm=n), grad=True, atol=1e-5, rtol=1e-5),
      OpRow(f"scipy_fft_idct_{_tag}", lambda x, n=_norm: jsp_fft.idct(x, norm=n), _arr((3, 8)),
            lambda x, n=_norm: scipy.fft.idct(x, norm=n), grad=True, atol=1e-5, rtol=1e-5),
      OpRow(f"scipy_fft_dctn_{_tag}", lambda x, n=_norm: jsp_fft.dctn(x, norm=n),
            _arr((4, 5)), lambda x, n=_norm: scipy.fft.dctn(x, norm=n), grad=True,
            atol=1e-4, rtol=1e-5),
      OpRow(f"scipy_fft_idctn_{_tag}", lambda x, n=_norm: jsp_fft.idctn(x, norm=n),
            _arr((4, 5)), lambda x, n=_norm: scipy.fft.idctn(x, norm=n), grad=True,
            atol=1e-5, rtol=1e-5),
  ]
ROWS += [
    OpRow("scipy_fft_dct_n_axis", lambda x: jsp_fft.dct(x, n=6, axis=0), _arr((4, 3)),
          lambda x: scipy.fft.dct(x, n=6, axis=0), grad=True, atol=1e-5, rtol=1e-5),
    OpRow("scipy_fft_dctn_s", lambda x: jsp_fft.dctn(x, s=(3, 6)), _arr((2, 4, 5)),
          lambda x: scipy.fft.dctn(x, s=(3, 6)), atol=1e-4, rtol=1e-5),
]
