"""jnp.ufunc / jnp.frompyfunc: calls, reduce (axes, keepdims, where/initial),
accumulate, outer, at, reduceat and gradients, with JAX 0.10.2's values."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp

F = jnp.frompyfunc(lambda x, y: x * y + 1, 2, 1, identity=0)
X = jnp.arange(6.0).reshape(2, 3)


def test_call_broadcasts_and_repr():
  assert repr(F) == "<jnp.ufunc '<lambda>'>"
  np.testing.assert_array_equal(F(X, 2.0), [[1, 3, 5], [7, 9, 11]])
  assert F.nin == 2 and F.nout == 1 and F.nargs == 2 and F.identity == 0
  assert isinstance(F, jnp.ufunc)


def test_reduce_matches_jax():
  np.testing.assert_array_equal(F.reduce(X, axis=1), [5, 26])
  assert float(F.reduce(X, axis=None)) == 326.0
  np.testing.assert_array_equal(F.reduce(X, axis=0, keepdims=True), [[4, 5, 6]])
  np.testing.assert_array_equal(
      F.reduce(X, axis=1, where=jnp.array([[True, False, True]] * 2), initial=1.0), [3, 21])
  assert F.reduce(jnp.zeros((0,)), axis=0).shape == ()
  no_identity = jnp.frompyfunc(lambda x, y: x - y, 2, 1)
  with pytest.raises(ValueError, match="zero-size array to reduction operation"):
    no_identity.reduce(jnp.zeros((0,)))
  with pytest.raises(ValueError, match="does not have an identity"):
    no_identity.reduce(X, where=jnp.ones((2, 3), bool))


def test_accumulate_outer_at_reduceat_match_jax():
  np.testing.assert_array_equal(F.accumulate(X, axis=1), [[0, 1, 3], [3, 13, 66]])
  np.testing.assert_array_equal(F.outer(jnp.arange(3.0), jnp.arange(2.0)),
                                [[1, 1], [1, 2], [1, 3]])
  np.testing.assert_array_equal(F.at(jnp.zeros(4), jnp.array([0, 2, 2]), 3.0, inplace=False),
                                [1, 0, 4, 0])
  with pytest.raises(NotImplementedError, match="inplace=False"):
    F.at(jnp.zeros(4), 0, 1.0)
  np.testing.assert_array_equal(F.reduceat(jnp.arange(8.0), jnp.array([0, 4, 1, 5])),
                                [10, 4, 41, 218])
  maximum = jnp.frompyfunc(jnp.maximum, 2, 1)
  assert int(maximum.reduce(jnp.array([3, 1, 4, 1, 5]))) == 5
  np.testing.assert_array_equal(maximum.accumulate(jnp.array([3, 1, 4, 1, 5])), [3, 3, 4, 4, 5])


def test_reduce_is_differentiable_and_jittable():
  np.testing.assert_array_equal(jax.grad(lambda x: F.reduce(x, axis=None))(X),
                                [[0, 120, 120], [100, 80, 65]])
  np.testing.assert_array_equal(jax.jit(lambda x: F.reduce(x, axis=1))(X), [5, 26])
  unary = jnp.frompyfunc(jnp.sin, 1, 1)
  with pytest.raises(ValueError, match="reduce only supported for binary ufuncs"):
    unary.reduce(X)
