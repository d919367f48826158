"""``jax.scipy.signal``'s ``fftconvolve``, ``detrend``, ``stft``,
``istft``, ``csd`` and ``welch`` against ``scipy.signal`` (float32 and
float64, every option JAX supports), round trips, jit/vmap, and the errors.
The direct convolutions are in tests/test_signal.py."""
import warnings

import numpy as np
import pytest
import scipy.signal

import openjax as jax
import openjax.scipy.signal as jsp_signal


def _rand(shape, dtype=np.float64, seed=0):
  rng = np.random.default_rng(seed)
  x = rng.standard_normal(shape)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def _close(got, want, tol):
  for g, w in zip(got if isinstance(got, tuple) else (got,),
                  want if isinstance(want, tuple) else (want,)):
    np.testing.assert_allclose(np.asarray(g), w, atol=tol, rtol=tol)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", [((9,), (4,)), ((4,), (9,)), ((5, 6), (3, 2)),
                                    ((2, 3, 4), (2, 2, 2)), ((6, 1), (1, 3))])
def test_fftconvolve(mode, shapes):
  a, b = _rand(shapes[0]), _rand(shapes[1], seed=1)
  if mode == "valid" and not (all(x >= y for x, y in zip(*shapes))
                              or all(x <= y for x, y in zip(*shapes))):
    return
  with jax.enable_x64():
    _close(jsp_signal.fftconvolve(a, b, mode), scipy.signal.fftconvolve(a, b, mode), 1e-10)
    ac = _rand(shapes[0], np.complex128, seed=2)
    _close(jsp_signal.fftconvolve(ac, b, mode), scipy.signal.fftconvolve(ac, b, mode), 1e-10)
  _close(jsp_signal.fftconvolve(a.astype(np.float32), b.astype(np.float32), mode),
         scipy.signal.fftconvolve(a, b, mode), 1e-4)
  _close(jsp_signal.convolve(a.astype(np.float32), b.astype(np.float32), mode, method="fft"),
         scipy.signal.convolve(a, b, mode), 1e-4)


def test_fftconvolve_axes():
  a, b = _rand((3, 8, 2)), _rand((3, 4, 2), seed=1)
  with jax.enable_x64():
    for axes in (1, [1], (0, 1), -2):
      _close(jsp_signal.fftconvolve(a, b, axes=axes), scipy.signal.fftconvolve(a, b, axes=axes),
             1e-10)
  with pytest.raises(ValueError, match="mapped axes"):
    jsp_signal.fftconvolve(a, _rand((2, 4, 2)), axes=1)
  with pytest.raises(ValueError, match="same dimensionality"):
    jsp_signal.fftconvolve(a, b[0])


def test_detrend():
  x = _rand((3, 40))
  with jax.enable_x64():
    for kw in ({}, {"type": "constant"}, {"bp": [10, 25]}):
      _close(jsp_signal.detrend(x, **kw), scipy.signal.detrend(x, **kw), 1e-10)
    for kw in ({"axis": 0}, {"bp": 7, "axis": 0}, {"type": "constant", "axis": 0}):
      _close(jsp_signal.detrend(x.T, **kw), scipy.signal.detrend(x.T, **kw), 1e-10)
  ramp = np.arange(10.0, dtype=np.float32) * 3 + 2
  _close(jsp_signal.detrend(ramp), np.zeros(10), 1e-5)
  with pytest.raises(ValueError, match="Trend type"):
    jsp_signal.detrend(x, type="quadratic")
  with pytest.raises(ValueError, match="Breakpoints"):
    jsp_signal.detrend(x, bp=[50])


STFT_OPTIONS = [
    {}, {"nperseg": 16}, {"nperseg": 16, "noverlap": 4}, {"nperseg": 15, "window": "hamming"},
    {"nperseg": 16, "nfft": 20}, {"nperseg": 16, "return_onesided": False},
    {"nperseg": 8, "boundary": None, "padded": False}, {"nperseg": 8, "boundary": "even"},
    {"nperseg": 8, "boundary": "odd"}, {"nperseg": 8, "boundary": "constant"},
    {"nperseg": 16, "detrend": "linear"}, {"nperseg": 12, "window": "blackman", "fs": 100.0},
]


@pytest.mark.parametrize("kw", STFT_OPTIONS, ids=str)
def test_stft(kw):
  x = _rand((2, 60))
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")     # both warn that nperseg=256 > 60
    with jax.enable_x64():
      _close(jsp_signal.stft(x, **kw), scipy.signal.stft(x, **kw), 1e-10)
    _close(jsp_signal.stft(x.astype(np.float32), **kw), scipy.signal.stft(x, **kw), 1e-4)


@pytest.mark.parametrize("kw", [{"nperseg": 16}, {"nperseg": 16, "noverlap": 12},
                                {"nperseg": 15, "window": "hann"},
                                {"nperseg": 16, "window": "boxcar", "noverlap": 8}], ids=str)
def test_istft_inverts_stft(kw):
  x = _rand(64)
  with jax.enable_x64():
    _, _, z = scipy.signal.stft(x, **kw)
    got = jsp_signal.istft(z, **kw)
    _close(got, scipy.signal.istft(z, **kw), 1e-10)
    _, _, z_ours = jsp_signal.stft(x, **kw)
    _close(jsp_signal.istft(z_ours, **kw)[1][:64], x, 1e-10)
    two = scipy.signal.stft(x, return_onesided=False, **kw)[2]
    _close(jsp_signal.istft(two, input_onesided=False, **kw),
           scipy.signal.istft(two, input_onesided=False, **kw), 1e-10)
    batch = np.stack([z, 2 * z])                    # frequencies at axis -2, times last
    _close(jsp_signal.istft(batch, **kw)[1], np.stack([scipy.signal.istft(z, **kw)[1],
                                                       2 * scipy.signal.istft(z, **kw)[1]]),
           1e-10)


WELCH_OPTIONS = [
    {"nperseg": 70}, {"nperseg": 16}, {"nperseg": 16, "average": "median"}, {"nperseg": 16, "scaling": "spectrum"},
    {"nperseg": 10, "noverlap": 3, "nfft": 16, "window": "blackman", "detrend": "linear"},
    {"nperseg": 16, "return_onesided": False}, {"nperseg": 16, "detrend": False},
    {"nperseg": 16, "window": "bartlett", "fs": 8.0}, {"window": np.hanning(12)},
]


@pytest.mark.parametrize("kw", WELCH_OPTIONS, ids=str)
def test_welch_and_csd(kw):
  x, y = _rand((2, 70)), _rand((2, 70), seed=1)
  with jax.enable_x64():
    _close(jsp_signal.welch(x, **kw), scipy.signal.welch(x, **kw), 1e-10)
    _close(jsp_signal.csd(x, y, **kw), scipy.signal.csd(x, y, **kw), 1e-10)
    _close(jsp_signal.welch(x.T, axis=0, **kw), scipy.signal.welch(x.T, axis=0, **kw), 1e-10)
  _close(jsp_signal.welch(x.astype(np.float32), **kw), scipy.signal.welch(x, **kw), 1e-4)


def test_csd_unequal_lengths_and_complex():
  x, y = _rand(60), _rand(45, seed=1)
  with jax.enable_x64():
    _close(jsp_signal.csd(x, y, nperseg=16), scipy.signal.csd(x, y, nperseg=16), 1e-10)
    xc = _rand(60, np.complex128, seed=2)
    with pytest.warns(UserWarning, match="complex"):
      got = jsp_signal.welch(xc, nperseg=16)
    _close(got, scipy.signal.welch(xc, nperseg=16), 1e-10)


def test_spectral_jit_vmap_grad():
  x = _rand((3, 64), np.float32)
  f = lambda s: jsp_signal.welch(s, nperseg=16)[1]   # noqa: E731
  _close(jax.jit(f)(x), np.asarray(f(x)), 1e-6)
  _close(jax.vmap(f)(x), np.asarray(f(x)), 1e-6)
  with jax.enable_x64():
    jax.test_util.check_grads(lambda s: jsp_signal.welch(s, nperseg=16)[1], (x[0].astype(
        np.float64),), order=1, atol=1e-5, rtol=1e-5)


def test_spectral_errors():
  x = _rand(40)
  with pytest.raises(ValueError, match="noverlap must be less than nperseg"):
    jsp_signal.stft(x, nperseg=8, noverlap=8)
  with pytest.raises(ValueError, match="nfft must be greater"):
    jsp_signal.welch(x, nperseg=16, nfft=8)
  with pytest.raises(ValueError, match="Unknown boundary"):
    jsp_signal.stft(x, nperseg=8, boundary="wrap")
  with pytest.raises(ValueError, match="Unknown scaling"):
    jsp_signal.welch(x, scaling="power")
  with pytest.raises(ValueError, match="average must be"):
    jsp_signal.welch(x, nperseg=8, average="max")
  with pytest.raises(NotImplementedError, match="window 'kaiser'"):
    jsp_signal.welch(x, window="kaiser")
  with pytest.raises(ValueError, match="at least 2d"):
    jsp_signal.istft(x)
