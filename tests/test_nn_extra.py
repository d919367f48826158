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
