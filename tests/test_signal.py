"""``jax.scipy.signal`` convolutions against ``scipy.signal`` and
``jnp.convolve``/``jnp.correlate`` against NumPy: every mode, operand
swapping, complex conjugation, an image blur and an edge filter, the
compiled path, and JAX's errors."""
import numpy as np
import pytest
import scipy.signal

import openjax as jax
import openjax.numpy as jnp
import openjax.scipy.signal as jsp_signal

MODES = ("full", "same", "valid")


def _rand(shape, dtype=np.float32, seed=0):
  rng = np.random.default_rng(seed)
  x = rng.standard_normal(shape)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def _image(n=64):
  """A 64x64 test picture: a bright square on a ramp, with noise."""
  yy, xx = np.mgrid[0:n, 0:n]
  img = 0.5 * xx / n + ((abs(yy - n / 2) < n / 6) & (abs(xx - n / 2) < n / 5))
  return (img + 0.05 * _rand((n, n), np.float64, seed=5)).astype(np.float32)


def _gaussian(size=7, sigma=1.5):
  r = np.arange(size) - (size - 1) / 2
  g = np.exp(-(r[:, None] ** 2 + r[None, :] ** 2) / (2 * sigma ** 2))
  return (g / g.sum()).astype(np.float32)


SOBEL_X = np.array([[1, 0, -1], [2, 0, -2], [1, 0, -1]], np.float32)


# ---------------------------------------------------------- scipy.signal
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", [((9,), (4,)), ((3,), (8,)), ((6, 5), (3, 2)),
                                    ((2, 3), (5, 6)), ((4, 4), (4, 4)),
                                    ((3, 4, 5), (2, 2, 3)), ((2, 1, 2), (3, 4, 5))], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_convolve_and_correlate_match_scipy(mode, shapes, dtype):
  a, b = _rand(shapes[0], dtype, 1), _rand(shapes[1], dtype, 2)
  for ours, theirs in ((jsp_signal.convolve, scipy.signal.convolve),
                       (jsp_signal.correlate, scipy.signal.correlate)):
    got, expected = ours(a, b, mode), theirs(a, b, mode)
    assert got.dtype == dtype and got.shape == expected.shape
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shapes", [((6, 7), (3, 2)), ((2, 3), (5, 4)), ((4, 4), (4, 4)),
                                    ((1, 6), (1, 3)), ((3, 1), (5, 2))], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_convolve2d_and_correlate2d_match_scipy(mode, shapes, dtype):
  a, b = _rand(shapes[0], dtype, 3), _rand(shapes[1], dtype, 4)
  for ours, theirs in ((jsp_signal.convolve2d, scipy.signal.convolve2d),
                       (jsp_signal.correlate2d, scipy.signal.correlate2d)):
    try:
      expected = theirs(a, b, mode)
    except ValueError:
      # SciPy refuses 'valid' when neither operand contains the other.
      with pytest.raises(ValueError, match="One input must be smaller"):
        ours(a, b, mode)
      continue
    got = ours(a, b, mode)
    assert got.shape == expected.shape
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_gaussian_blur_of_an_image(mode):
  img, kernel = _image(), _gaussian()
  got = jsp_signal.convolve2d(img, kernel, mode)
  expected = scipy.signal.convolve2d(img, kernel, mode)
  np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-6)
  # Blurring keeps the mean of the interior and smooths the noise.
  if mode == "valid":
    assert np.asarray(got).std() < img[3:-3, 3:-3].std()


@pytest.mark.parametrize("mode", MODES)
def test_sobel_edges_of_an_image(mode):
  img = _image()
  got = jsp_signal.correlate2d(img, SOBEL_X, mode)
  expected = scipy.signal.correlate2d(img, SOBEL_X, mode)
  np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)
  # The correlation with the Sobel kernel also equals convolve2d with the flipped one.
  np.testing.assert_allclose(np.asarray(jsp_signal.convolve2d(img, SOBEL_X[::-1, ::-1], mode)),
                             expected, rtol=1e-5, atol=1e-5)


def test_integer_inputs_promote_to_float():
  a = np.arange(6, dtype=np.int32).reshape(2, 3)
  b = np.array([[1, 2], [3, 4]], np.int32)
  got = jsp_signal.convolve(a, b)
  assert got.dtype == np.float32
  np.testing.assert_array_equal(np.asarray(got), scipy.signal.convolve(a, b))
  with jax.enable_x64():
    assert jsp_signal.correlate(a.astype(np.float64), b.astype(np.float64)).dtype == np.float64


@pytest.mark.parametrize("method", ["auto", "direct", "fft"])
def test_methods_agree(method):
  a, b = _rand((8, 7), seed=6), _rand((3, 3), seed=7)
  np.testing.assert_allclose(np.asarray(jsp_signal.convolve(a, b, method=method)),
                             scipy.signal.convolve(a, b), rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(np.asarray(jsp_signal.correlate(a, b, "same", method=method)),
                             scipy.signal.correlate(a, b, "same"), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("fn,exc,match", [
    (lambda: jsp_signal.convolve(np.ones(3), np.ones(2), method="spectral"), ValueError,
     "expected 'auto', 'fft', or 'direct'"),
    (lambda: jsp_signal.convolve(np.ones(3), np.ones(2), "circular"), ValueError,
     r"mode must be one of \['full', 'same', 'valid'\]"),
    (lambda: jsp_signal.convolve(np.ones((3, 3)), np.ones(2)), ValueError,
     "in1 and in2 must have the same number of dimensions"),
    (lambda: jsp_signal.convolve(np.ones((3, 0)), np.ones((2, 2))), ValueError,
     "zero-size arrays not supported in convolutions"),
    (lambda: jsp_signal.convolve(np.ones((3, 2)), np.ones((2, 3))), ValueError,
     "One input must be smaller than the other in every dimension"),
    (lambda: jsp_signal.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="wrap"),
     NotImplementedError, r"convolve2d\(\) only supports boundary='fill', fillvalue=0"),
    (lambda: jsp_signal.correlate2d(np.ones((3, 3)), np.ones((2, 2)), fillvalue=1),
     NotImplementedError, r"correlate2d\(\) only supports boundary='fill', fillvalue=0"),
    (lambda: jsp_signal.convolve2d(np.ones(3), np.ones(2)), ValueError,
     r"convolve2d\(\) only supports 2-dimensional inputs"),
    (lambda: jsp_signal.correlate2d(np.ones((2, 2, 2)), np.ones((2, 2, 2))), ValueError,
     r"correlate2d\(\) only supports 2-dimensional inputs"),
])
def test_signal_errors_match_jax(fn, exc, match):
  with pytest.raises(exc, match=match):
    fn()


# ------------------------------------------------------ jnp.convolve/correlate
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n,m", [(7, 3), (3, 7), (4, 4), (1, 5), (6, 1), (8, 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_jnp_convolve_and_correlate_match_numpy(mode, n, m, dtype):
  a, v = _rand((n,), dtype, 8), _rand((m,), dtype, 9)
  for ours, theirs in ((jnp.convolve, np.convolve), (jnp.correlate, np.correlate)):
    got, expected = ours(a, v, mode), theirs(a, v, mode)
    assert got.dtype == dtype and got.shape == expected.shape
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


def test_jnp_correlate_default_mode_is_valid_and_convolve_full():
  a, v = _rand((6,), seed=10), _rand((3,), seed=11)
  assert jnp.correlate(a, v).shape == (4,)
  assert jnp.convolve(a, v).shape == (8,)


def test_jnp_convolve_integer_inputs():
  a, v = np.array([1, 2, 3], np.int32), np.array([0, 1, 5, 2], np.int32)
  got = jnp.convolve(a, v)
  assert got.dtype == np.float32          # promoted to inexact, as in JAX
  np.testing.assert_array_equal(np.asarray(got), np.convolve(a, v))
  exact = jnp.convolve(a, v, preferred_element_type=np.int32)
  assert exact.dtype == np.int32
  np.testing.assert_array_equal(np.asarray(exact), np.convolve(a, v))
  np.testing.assert_array_equal(
      np.asarray(jnp.correlate(a, v, "full", precision="highest")), np.correlate(a, v, "full"))


@pytest.mark.parametrize("fn,match", [
    (lambda: jnp.convolve(np.ones((2, 2)), np.ones(2)), r"convolve\(\) only support "
     "1-dimensional inputs"),
    (lambda: jnp.correlate(np.ones(2), np.ones((1, 2))), r"correlate\(\) only support "
     "1-dimensional inputs"),
    (lambda: jnp.convolve(np.ones(0), np.ones(2)), "convolve: inputs cannot be empty"),
    (lambda: jnp.correlate(np.ones(3), np.ones(2), "circular"),
     r"mode must be one of \['full', 'same', 'valid'\]"),
])
def test_jnp_errors_match_jax(fn, match):
  with pytest.raises(ValueError, match=match):
    fn()


# ------------------------------------------------------- transformations
def test_jit_grad_and_compiled_match():
  img, kernel = _image(32), _gaussian(5)

  def pipeline(img, kernel, a, v):
    blurred = jsp_signal.convolve2d(img, kernel, "same")
    edges = jsp_signal.correlate2d(blurred, SOBEL_X, "valid")
    return edges, jnp.convolve(a, v, "same"), jnp.correlate(a, v, "full")
  a, v = _rand((9,), seed=12), _rand((4,), seed=13)
  eager = pipeline(img, kernel, a, v)
  np.testing.assert_allclose(
      np.asarray(eager[0]),
      scipy.signal.correlate2d(scipy.signal.convolve2d(img, kernel, "same"), SOBEL_X, "valid"),
      rtol=1e-4, atol=1e-5)
  for got in (jax.jit(pipeline)(img, kernel, a, v),
              jax.jit(pipeline).lower(img, kernel, a, v).compile()(img, kernel, a, v)):
    for g, e in zip(got, eager):
      np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-5)
  # d/dkernel of sum(convolve2d(img, kernel, 'valid')) is the window sums of img, flipped.
  grad = jax.grad(lambda k: jsp_signal.convolve2d(img, k, "valid").sum())(kernel)
  windows = scipy.signal.correlate2d(img, np.ones((28, 28), np.float32), "valid")
  np.testing.assert_allclose(np.asarray(grad), windows[::-1, ::-1], rtol=1e-4)
