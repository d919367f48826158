"""``jnp.vecdot``, ``jnp.matvec`` and ``jnp.vecmat`` are their core product
vectorized over the batch axes (as JAX's): an operand without a batch axis is
not broadcast along it, so ``vecmat`` of a batch of vectors and one matrix is
one matrix product. Printed jaxprs are JAX 0.10.2's
(``tests/data/vector_products_jaxprs_jax.json``, made by JAX in a separate
environment); values against NumPy."""
import json
import pathlib
import re

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp

_JAX = json.loads((pathlib.Path(__file__).parent / "data" /
                   "vector_products_jaxprs_jax.json").read_text())
_KEY = re.compile(r"(\w+)\[([\d, ]*)\]\[([\d, ]*)\]:(\w+)")


def _shape(text):
  return tuple(int(v) for v in text.split(",") if v.strip())


def _call(name, x, y):
  if name == "vecdot_axis0":
    return jnp.vecdot(x, y, axis=0)
  return getattr(jnp, name)(x, y)


@pytest.mark.parametrize("key", sorted(_JAX))
def test_printed_jaxpr_is_jax(key):
  name, s1, s2, dt = _KEY.fullmatch(key).groups()
  x, y = np.ones(_shape(s1), dt), np.ones(_shape(s2), dt)
  assert str(jax.make_jaxpr(lambda a, b: _call(name, a, b))(x, y)) == _JAX[key]


def _ref(name, x, y):
  if name == "vecmat":
    return np.matmul(np.conj(x)[..., None, :], y)[..., 0, :]
  if name == "matvec":
    return np.matmul(x, y[..., None])[..., 0]
  if name == "vecdot_axis0":
    return np.sum(np.conj(x) * y, axis=0)
  return np.sum(np.conj(x) * y, axis=-1)


@pytest.mark.parametrize("key", sorted(_JAX))
def test_values(key):
  name, s1, s2, dt = _KEY.fullmatch(key).groups()
  rs = np.random.default_rng(len(key))
  x = rs.standard_normal(_shape(s1)).astype(dt)
  y = rs.standard_normal(_shape(s2)).astype(dt)
  if dt.startswith("complex"):
    x = (x + 1j * rs.standard_normal(x.shape)).astype(dt)
    y = (y - 2j * rs.standard_normal(y.shape)).astype(dt)
  want = _ref(name, x, y)
  np.testing.assert_allclose(np.asarray(_call(name, x, y)), want, rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(np.asarray(jax.jit(lambda a, b: _call(name, a, b))(x, y)), want,
                             rtol=1e-5, atol=1e-5)


def test_no_broadcast_of_the_shared_matrix():
  # 64 vectors against one 32 x 16 matrix: one product, no f32[64,32,16].
  jaxpr = jax.make_jaxpr(jnp.vecmat)(np.ones((64, 32), np.float32),
                                     np.ones((32, 16), np.float32))
  assert "f32[64,32,16]" not in str(jaxpr)
  assert "broadcast_in_dim" not in str(jaxpr)


@pytest.mark.parametrize("dt,pet", [(np.int32, None), (np.int8, None), (np.int8, np.int32),
                                    (np.uint8, np.uint32), (np.int16, None), (np.uint32, None)])
def test_integer_matrix_vector_products_wrap_exactly(dt, pet):
  # Past the eval kernel's small-product size the impl multiplies a matrix
  # by a vector in the result's width (unsigned, wrapping): the int64
  # product narrowed, overflow included.
  rs = np.random.default_rng(1)
  info = np.iinfo(dt)
  lo, hi = max(int(info.min), -(2 ** 30)), min(int(info.max), 2 ** 30)
  a = rs.integers(lo, hi, (3, 60000)).astype(dt)
  v = rs.integers(lo, hi, (60000, 1)).astype(dt)
  dims = (((1,), (0,)), ((), ()))
  got = np.asarray(jax.lax.dot_general(a, v, dims, preferred_element_type=pet))
  want = (a.astype(np.int64) @ v.astype(np.int64)).astype(got.dtype)
  np.testing.assert_array_equal(got, want)
  got_t = np.asarray(jax.lax.dot_general(v.T, a.T, dims, preferred_element_type=pet))
  np.testing.assert_array_equal(got_t, want.T)


@pytest.mark.parametrize("make", [
    lambda rs: (rs.integers(-100, 100, 300_000).astype(np.int32), 2.0),
    lambda rs: (rs.standard_normal(700).astype(np.float32), rs.standard_normal(500).astype(np.float32)),
    lambda rs: (rs.random(700) > 0.5, rs.random(500) > 0.5),
    lambda rs: (rs.integers(-128, 127, 700).astype(np.int8), rs.integers(-128, 127, 500).astype(np.int8)),
    lambda rs: ((rs.standard_normal(400) + 1j).astype(np.complex64), np.complex64(2 - 1j))])
def test_products_with_nothing_contracted(make):
  # dot_general without contracting dimensions (jnp.dot by a scalar, outer
  # products, tensordot(a, b, 0)) is one broadcast multiply: the one term
  # matmul would give, small (eval kernel) and large (impl) alike.
  a, b = make(np.random.default_rng(2))
  dims = (((), ()), ((), ()))
  got = jax.lax.dot_general(a, b, dims)
  a64 = np.asarray(a)
  b64 = np.asarray(b)
  if a64.dtype == np.bool_:
    want = np.logical_and.outer(a64, b64)
  elif a64.dtype.kind in "iu":
    want = np.multiply.outer(a64.astype(np.int64), b64).astype(np.asarray(got).dtype)
  else:
    want = np.multiply.outer(a64, b64).astype(np.asarray(got).dtype)
  np.testing.assert_array_equal(np.asarray(got), want.reshape(np.shape(got)))
  np.testing.assert_array_equal(np.asarray(jnp.tensordot(a, b, 0)),
                                np.asarray(jax.lax.dot_general(a, b, dims)))


@pytest.mark.parametrize("dt", [np.float32, np.complex64])
def test_vector_and_stack_of_matrices_in_place(dt):
  # v @ B and B @ v over a stack of matrices: np.matmul reads the stack in
  # place (eval kernel and impl); values as NumPy's, shapes as dot_general's.
  rs = np.random.default_rng(3)
  v = rs.standard_normal(7).astype(dt)
  stack = rs.standard_normal((3, 4, 7, 5)).astype(dt)
  rows = rs.standard_normal((3, 5, 7)).astype(dt)
  got = jax.lax.dot_general(v, stack, (((0,), (2,)), ((), ())))
  np.testing.assert_allclose(np.asarray(got), np.einsum("k,abkn->abn", v, stack), rtol=1e-5)
  got = jax.lax.dot_general(rows, v, (((2,), (0,)), ((), ())))
  np.testing.assert_allclose(np.asarray(got), np.einsum("abk,k->ab", rows, v), rtol=1e-5)
  big = rs.standard_normal((40, 189, 60)).astype(dt)   # the impl's size
  w = rs.standard_normal(189).astype(dt)
  np.testing.assert_allclose(np.asarray(jnp.matmul(w, big)), np.matmul(w, big), rtol=1e-4,
                             atol=1e-4)
  np.testing.assert_allclose(np.asarray(jax.jit(jnp.matmul)(w, big)), np.matmul(w, big),
                             rtol=1e-4, atol=1e-4)
