"""jax.nn.initializers.orthogonal / delta_orthogonal against JAX 0.10.2's values
for the same keys (tests/data/nn_orthogonal.json), and their properties."""
import json
import pathlib

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax.nn import initializers

EXPECTED = json.loads((pathlib.Path(__file__).parent / "data" / "nn_orthogonal.json").read_text())


def test_orthogonal_matches_jax():
  q = initializers.orthogonal()(jax.random.key(0), (3, 5))
  np.testing.assert_allclose(q, EXPECTED["orth_3x5"], atol=1e-6)
  np.testing.assert_allclose(q @ q.T, np.eye(3), atol=1e-5)
  q = initializers.orthogonal(scale=2.0, column_axis=0)(jax.random.key(1), (4, 2, 3))
  np.testing.assert_allclose(q, EXPECTED["orth_4x2x3_axis0"], atol=1e-6)


def test_delta_orthogonal_matches_jax():
  w = initializers.delta_orthogonal()(jax.random.key(2), (3, 3, 2, 4))
  np.testing.assert_allclose(w, EXPECTED["delta_3x3x2x4"], atol=1e-6)
  assert np.count_nonzero(np.asarray(w)[[0, 2]]) == 0
  w = initializers.delta_orthogonal(dtype=jnp.float32)(jax.random.key(3), (2, 3, 3))
  np.testing.assert_allclose(w, EXPECTED["delta_2x3x3"], atol=1e-6)


def test_orthogonal_errors_and_empty_shapes():
  with pytest.raises(ValueError, match="at least a 2D shape"):
    initializers.orthogonal()(jax.random.key(0), (3,))
  assert initializers.orthogonal()(jax.random.key(0), (0, 3)).shape == (0, 3)
  with pytest.raises(ValueError, match="3D, 4D or 5D"):
    initializers.delta_orthogonal()(jax.random.key(0), (3, 3))
  with pytest.raises(ValueError, match="fan_in"):
    initializers.delta_orthogonal()(jax.random.key(0), (3, 4, 2))


def test_orthogonal_under_jit_with_dtype():
  init = initializers.orthogonal(dtype=jnp.float16)
  q = jax.jit(lambda k: init(k, (4, 4)))(jax.random.key(5))
  assert q.dtype == jnp.float16
  np.testing.assert_allclose(np.asarray(q, np.float32) @ np.asarray(q, np.float32).T,
                             np.eye(4), atol=5e-3)


# ------------------------------------------------------- block-scaled products
def test_scaled_matmul_applies_block_scales():
  a = jnp.ones((1, 4, 64), jnp.float8_e4m3fn)
  b = jnp.full((1, 2, 64), 2, jnp.float8_e4m3fn)
  # Two blocks of 32 along K; scales are powers of two (e8m0).
  sa = jnp.array([[[1, 2]] * 4], jnp.float32).astype(jnp.float8_e8m0fnu)
  sb = jnp.array([[[4, 1]] * 2], jnp.float32).astype(jnp.float8_e8m0fnu)
  out = jax.nn.scaled_matmul(a, b, sa, sb)
  # 32 * (1*1*2*4) + 32 * (1*2*2*1) = 256 + 128
  np.testing.assert_array_equal(out, np.full((1, 4, 2), 384.0))
  assert out.dtype == jnp.float32
  with pytest.raises(ValueError, match="3-dimensional"):
    jax.nn.scaled_matmul(a[0], b, sa, sb)


def test_scaled_dot_general_quantizes_like_mxfp8():
  config = jax.nn.get_scaled_dot_general_config("mxfp8")
  assert (config.block_size, config.data_type) == (32, jnp.float8_e4m3fn)
  assert config.scale_type == jnp.float8_e8m0fnu and config.global_scale is None
  nv = jax.nn.get_scaled_dot_general_config("nvfp4")
  assert nv.block_size == 16 and nv.global_scale.shape == (1,)
  x = jnp.linspace(-3, 3, 32 * 64).reshape(32, 64)
  y = jnp.linspace(-1, 2, 64 * 32).reshape(64, 32)
  dn = (((1,), (0,)), ((), ()))
  exact = np.asarray(x) @ np.asarray(y)
  out = jax.nn.scaled_dot_general(x, y, dn, configs=[config] * 3)
  assert out.shape == (32, 32) and out.dtype == jnp.float32
  # e4m3 keeps 3 mantissa bits (steps of 1/8): errors of a few percent of the largest product.
  np.testing.assert_allclose(out, exact, atol=0.08 * np.abs(exact).max())
  assert not np.array_equal(np.asarray(out), exact)  # it did quantize
  g = jax.grad(lambda x: jax.nn.scaled_dot_general(x, y, dn, configs=[config] * 3).sum())(x)
  exact_g = np.broadcast_to(np.asarray(y).sum(1), (32, 64))
  np.testing.assert_allclose(g, exact_g, atol=0.08 * np.abs(exact_g).max())
  np.testing.assert_allclose(jax.nn.scaled_dot_general(x, y, dn), exact, rtol=1e-5)
  with pytest.raises(ValueError, match="Unsupported mode"):
    jax.nn.get_scaled_dot_general_config("int8")
