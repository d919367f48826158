"""jax.image: resize (every method, with and without antialias), scale_and_translate
and their gradients against JAX 0.10.2's values, plus jit/vmap and errors.

tests/libs/image_program.py is written against JAX; under JAX 0.10.2 it wrote
tests/data/image.npz, here it runs under ``alias_jax``.
"""
import importlib.util
import pathlib

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src import alias

HERE = pathlib.Path(__file__).parent
EXPECTED = np.load(HERE / "data" / "image.npz")


@pytest.fixture(scope="module")
def program():
  alias.alias_jax()
  try:
    spec = importlib.util.spec_from_file_location("image_program",
                                                  HERE / "libs" / "image_program.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
  finally:
    alias.unalias_jax()


def _check(values: dict, rtol=1e-5, atol=1e-5):
  assert values
  for key, value in values.items():
    expected = EXPECTED[key]
    assert value.dtype == expected.dtype and value.shape == expected.shape, key
    np.testing.assert_allclose(value, expected, rtol=rtol, atol=atol, err_msg=key)


def test_resize_every_method_matches_jax(program):
  _check(program.resize_cases())


def test_scale_and_translate_matches_jax(program):
  _check(program.scale_and_translate_cases())


def test_gradients_match_jax(program):
  # d/d(scale) and d/d(translation) go through the kernel: a little looser.
  _check(program.gradient_cases(), rtol=1e-4, atol=1e-4)


def test_resize_method_names_and_enum():
  assert jax.image.ResizeMethod.from_string("bilinear") is jax.image.ResizeMethod.LINEAR
  assert jax.image.ResizeMethod.from_string("bicubic-pytorch") is (
      jax.image.ResizeMethod.CUBIC_PYTORCH)
  with pytest.raises(ValueError, match='Unknown resize method "bogus"'):
    jax.image.resize(jnp.ones((2, 2)), (3, 3), "bogus")


def test_resize_errors():
  with pytest.raises(ValueError, match="shape must have length equal to the number of dim"):
    jax.image.resize(jnp.ones((2, 2)), (3,), "linear")
  with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently"):
    jax.image.scale_and_translate(jnp.ones((2, 2)), (3, 3), (0, 1), jnp.ones(2), jnp.zeros(2),
                                  "nearest")


def test_resize_under_jit_and_vmap():
  images = jnp.arange(2 * 4 * 5, dtype=jnp.float32).reshape(2, 4, 5)
  eager = jnp.stack([jax.image.resize(im, (7, 3), "cubic") for im in images])
  jitted = jax.jit(lambda x: jax.image.resize(x, (2, 7, 3), "cubic"))(images)
  batched = jax.vmap(lambda x: jax.image.resize(x, (7, 3), "cubic"))(images)
  np.testing.assert_allclose(jitted, eager, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(batched, eager, rtol=1e-5, atol=1e-5)


def test_scale_and_translate_traced_scale_under_jit():
  x = jnp.linspace(0, 1, 12).reshape(3, 4)

  def f(scale):
    return jax.image.scale_and_translate(x, (5, 5), (0, 1), scale, jnp.zeros(2), "linear")

  np.testing.assert_allclose(jax.jit(f)(jnp.array([1.5, 1.2])), f(jnp.array([1.5, 1.2])),
                             rtol=1e-6, atol=1e-6)


def test_nearest_keeps_integer_dtype_and_linear_promotes():
  x = jnp.arange(6, dtype=jnp.int32).reshape(2, 3)
  assert jax.image.resize(x, (4, 6), "nearest").dtype == jnp.int32
  assert jax.image.resize(x, (4, 6), "linear").dtype == jnp.float32
  np.testing.assert_array_equal(jax.image.resize(x, (4, 6), "nearest"),
                                np.repeat(np.repeat(np.arange(6).reshape(2, 3), 2, 0), 2, 1))
