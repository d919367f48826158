"""Eager forward FFTs of complex64/float32 run pocketfft's single-precision
loop (numpy.fft's own forward call resolves to its double loop, 4-5x
slower): the bits of that loop, the last axis first as numpy.fft.fftn goes,
the same from the eval kernel and the impl, within float32 rounding of the
double transform."""
import numpy as np
import pytest
from numpy.fft import _pocketfft_umath as pocketfft

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.primitives.fft.fft import FftType, _fft_impl

ONE = np.float32(1)


def _single_loop(x, fft_type, k):
  """pocketfft's single loop over the trailing ``k`` axes, last first."""
  last = x.ndim - 1
  n = x.shape[-1]
  if fft_type == "RFFT":
    first = pocketfft.rfft_n_even if n % 2 == 0 else pocketfft.rfft_n_odd
    v = first(x, ONE, axes=[(last,), (), (last,)],
              out=np.empty(x.shape[:-1] + (n // 2 + 1,), np.complex64))
  else:
    v = pocketfft.fft(x, ONE, axes=[(last,), (), (last,)], out=np.empty_like(x))
  for axis in range(last - 1, last - k, -1):
    v = pocketfft.fft(v, ONE, axes=[(axis,), (), (axis,)], out=np.empty_like(v))
  return v


@pytest.mark.parametrize("shape,k", [((8,), 1), ((3, 10), 1), ((5, 7), 2), ((2, 3, 4), 3),
                                     ((2, 9, 5), 2), ((1,), 1), ((0, 6), 1), ((4, 1, 3), 2)],
                         ids=str)
@pytest.mark.parametrize("fft_type", ["FFT", "RFFT"])
def test_forward_single_precision_bits(shape, k, fft_type):
  rng = np.random.default_rng(len(shape) * 10 + k)
  x = rng.standard_normal(shape).astype(np.float32)
  if fft_type == "FFT":
    x = (x + 1j * rng.standard_normal(shape)).astype(np.complex64)
  lengths = shape[len(shape) - k:]
  got = np.asarray(lax.fft(jnp.asarray(x), fft_type, lengths))
  want = _single_loop(x, fft_type, k)
  assert got.dtype == np.complex64 and got.shape == want.shape
  np.testing.assert_array_equal(got.view(np.float32), want.view(np.float32))
  # the impl (loop bodies, the impl path) gives the same bits
  impl, = _fft_impl(x, fft_type=FftType[fft_type], fft_lengths=lengths)
  np.testing.assert_array_equal(impl.view(np.float32), want.view(np.float32))
  # within float32 rounding of the double transform
  axes = tuple(range(len(shape) - k, len(shape)))
  exact = (np.fft.fftn(x.astype(np.complex128), axes=axes) if fft_type == "FFT"
           else np.fft.rfftn(x.astype(np.float64), axes=axes))
  scale = max(np.abs(exact).max(initial=0.0), 1.0)
  assert np.abs(got - exact).max(initial=0.0) <= 1e-6 * scale


def test_single_loop_is_not_the_double_loop():
  # numpy.fft.fft of complex64 rounds a double transform: the eager call
  # does not (the bits differ somewhere in a large transform)
  rng = np.random.default_rng(1)
  x = (rng.standard_normal((64, 100)) + 1j * rng.standard_normal((64, 100))).astype(np.complex64)
  got = np.asarray(jnp.fft.fft(jnp.asarray(x)))
  np.testing.assert_array_equal(got, _single_loop(x, "FFT", 1))
  assert not np.array_equal(got, np.fft.fft(x))
  np.testing.assert_allclose(got, np.fft.fft(x), rtol=1e-5, atol=1e-4)


def test_other_transforms_keep_numpy_fft():
  rng = np.random.default_rng(2)
  x = (rng.standard_normal((4, 6)) + 1j * rng.standard_normal((4, 6))).astype(np.complex64)
  np.testing.assert_array_equal(np.asarray(lax.fft(jnp.asarray(x), "IFFT", (6,))),
                                np.fft.ifft(x).astype(np.complex64))
  np.testing.assert_array_equal(np.asarray(lax.fft(jnp.asarray(x), "IRFFT", (10,))),
                                np.fft.irfft(x, 10).astype(np.float32))
  x64 = x.astype(np.complex128)
  with jax.enable_x64(True):
    np.testing.assert_array_equal(np.asarray(lax.fft(jnp.asarray(x64), "FFT", (6,))),
                                  np.fft.fft(x64))
