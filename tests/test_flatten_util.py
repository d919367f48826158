"""jax.flatten_util.ravel_pytree: the flat vector, its dtype, the inverse, and transforms."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax.flatten_util import ravel_pytree


def test_ravel_concatenates_leaves_in_tree_order_and_unravel_inverts():
  tree = {"b": (jnp.arange(3.0), jnp.float32(7)), "a": jnp.ones((2, 2))}
  flat, unravel = ravel_pytree(tree)
  np.testing.assert_array_equal(flat, [1, 1, 1, 1, 0, 1, 2, 7])
  assert flat.dtype == jnp.float32
  back = unravel(flat * 2)
  assert jax.tree.structure(back) == jax.tree.structure(tree)
  np.testing.assert_array_equal(back["a"], np.full((2, 2), 2.0))
  np.testing.assert_array_equal(back["b"][0], [0, 2, 4])
  assert back["b"][1].shape == ()


def test_mixed_dtypes_promote_and_come_back_in_their_own_dtype():
  # JAX 0.10.2: ravel_pytree((int32[2], float32[1], bool[1])) -> float32[4].
  flat, unravel = ravel_pytree((jnp.array([1, 2]), jnp.array([0.5], jnp.float32),
                                jnp.array([True])))
  assert flat.dtype == jnp.float32
  np.testing.assert_array_equal(flat, [1, 2, 0.5, 1])
  ints, floats, bools = unravel(jnp.array([3.0, 4.0, 1.5, 0.0]))
  assert ints.dtype == jnp.int32 and bools.dtype == jnp.bool_
  np.testing.assert_array_equal(ints, [3, 4])
  np.testing.assert_array_equal(bools, [False])


def test_empty_tree_ravels_to_empty_float32():
  flat, unravel = ravel_pytree({})
  assert flat.shape == (0,) and flat.dtype == jnp.float32
  assert unravel(flat) == {}


def test_unravel_checks_shape_and_dtype():
  _, unravel = ravel_pytree([jnp.zeros(3)])
  with pytest.raises(ValueError, match=r"expected an array of shape \(3,\), got shape \(4,\)"):
    unravel(jnp.zeros(4))
  with pytest.raises(TypeError, match="dtype int32 but expects dtype float32"):
    unravel(jnp.zeros(3, jnp.int32))


def test_ravel_under_jit_and_grad():
  params = {"w": jnp.arange(4.0).reshape(2, 2), "b": jnp.array([1.0, -1.0])}

  def loss(p):
    flat, _ = ravel_pytree(p)
    return jnp.sum(flat ** 2)

  grads = jax.jit(jax.grad(loss))(params)
  np.testing.assert_allclose(grads["w"], 2 * params["w"])
  np.testing.assert_allclose(grads["b"], 2 * params["b"])
  flat, unravel = ravel_pytree(params)
  rebuilt = jax.jit(unravel)(flat)
  np.testing.assert_array_equal(rebuilt["w"], params["w"])


def test_ravel_under_vmap():
  batched = {"x": jnp.arange(6.0).reshape(3, 2), "y": jnp.ones((3, 1))}
  flats = jax.vmap(lambda t: ravel_pytree(t)[0])(batched)
  np.testing.assert_array_equal(flats, [[0, 1, 1], [2, 3, 1], [4, 5, 1]])
