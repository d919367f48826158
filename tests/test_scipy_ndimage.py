"""``jax.scipy.ndimage.map_coordinates`` against ``scipy.ndimage`` (JAX's
``'constant'`` and ``'wrap'`` are SciPy's ``'grid-constant'`` and
``'grid-wrap'``): orders 0 and 1, every mode, 1-3 dimensions, integer
images, float64, gradients, jit/vmap and the errors."""
import numpy as np
import pytest
import scipy.ndimage

import openjax as jax
from openjax.scipy import ndimage

MODES = ["constant", "nearest", "wrap", "mirror", "reflect"]
SCIPY_MODE = {"constant": "grid-constant", "wrap": "grid-wrap"}


def _case(shape, n_points=7, seed=0, dtype=np.float64):
  rng = np.random.default_rng(seed)
  image = rng.standard_normal(shape).astype(dtype)
  coords = [rng.uniform(-3, s + 2, n_points).astype(dtype) for s in shape]
  return image, coords


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", [(9,), (5, 6), (3, 4, 5)])
def test_matches_scipy(order, mode, shape):
  image, coords = _case(shape)
  with jax.enable_x64():
    got = ndimage.map_coordinates(image, coords, order, mode, cval=-2.0)
    want = scipy.ndimage.map_coordinates(image, coords, order=order,
                                         mode=SCIPY_MODE.get(mode, mode), cval=-2.0)
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-12)
  image32, coords32 = _case(shape, dtype=np.float32)
  got = ndimage.map_coordinates(image32, coords32, order, mode)
  assert got.dtype == np.float32
  np.testing.assert_allclose(np.asarray(got), scipy.ndimage.map_coordinates(
      image32, coords32, order=order, mode=SCIPY_MODE.get(mode, mode)), atol=1e-5)


def test_integer_images_round_half_away_from_zero():
  image = np.arange(10, dtype=np.int32)
  coords = [np.array([0.5, 1.5, 2.4, 2.6, -0.5, 8.5], np.float32)]
  got = ndimage.map_coordinates(image, coords, 1, "nearest")
  assert got.dtype == np.int32
  np.testing.assert_array_equal(np.asarray(got), [1, 2, 2, 3, 0, 9])   # 0.5 -> 1, 8.5 -> 9
  got = ndimage.map_coordinates(image, [np.array([2.5, -2.5], np.float32)], 0, "mirror")
  np.testing.assert_array_equal(np.asarray(got), [3, 3])


def test_grad_and_transforms():
  image, coords = _case((5, 6))
  with jax.enable_x64():
    jax.test_util.check_grads(lambda im, r, c: ndimage.map_coordinates(im, [r, c], 1, "reflect"),
                              (image, coords[0], coords[1]), order=1, atol=1e-6, rtol=1e-6)
  image, coords = _case((5, 6), dtype=np.float32)
  f = lambda im, r, c: ndimage.map_coordinates(im, [r, c], 1, "wrap")   # noqa: E731
  np.testing.assert_allclose(np.asarray(jax.jit(f)(image, *coords)), np.asarray(f(image, *coords)),
                             atol=1e-6)
  batch = np.stack([image, 2 * image])
  np.testing.assert_allclose(np.asarray(jax.vmap(f, in_axes=(0, None, None))(batch, *coords)),
                             np.stack([np.asarray(f(image, *coords)),
                                       np.asarray(f(2 * image, *coords))]), atol=1e-6)


def test_errors():
  image = np.ones((3, 3))
  with pytest.raises(ValueError, match="sequence of length input.ndim"):
    ndimage.map_coordinates(image, [np.zeros(2)], 1)
  with pytest.raises(NotImplementedError, match="order<=1"):
    ndimage.map_coordinates(image, [np.zeros(2)] * 2, 3)
  with pytest.raises(NotImplementedError, match="does not yet support mode grid-wrap"):
    ndimage.map_coordinates(image, [np.zeros(2)] * 2, 1, mode="grid-wrap")
