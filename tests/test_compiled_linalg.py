"""Compiled decompositions agree with the interpreter (issue 19, item 8):
x64 (int32 and int64 indices mixed), complex QR, complex64 constants, and a
dynamic_update_slice whose update is read from the array it writes."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax.lax import linalg as lax_linalg


def _compiled(f, *args):
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    out = jax.jit(f)(*args)
  leaves = jax.tree_util.tree_leaves(out)
  assert any(x._buffer is not None for x in leaves), "did not run compiled"
  return jax.tree_util.tree_map(np.asarray, out)


def _matrix(rng, shape, dtype):
  a = rng.standard_normal(shape)
  if np.dtype(dtype).kind == "c":
    a = a + 1j * rng.standard_normal(shape)
  k = min(shape)
  a[:k, :k] += 3 * np.eye(k)
  return a.astype(dtype)


def _hpd(rng, n, dtype):
  a = _matrix(rng, (n, n), dtype)
  return (a @ a.conj().T + n * np.eye(n)).astype(dtype)


CASES = {
    "cholesky": (lambda x: lax_linalg.cholesky(x), "hpd", np.linalg.cholesky),
    "inv": (jnp.linalg.inv, "general", np.linalg.inv),
    "solve": (lambda x: jnp.linalg.solve(x, x[:, :2] + 1), "general",
              lambda x: np.linalg.solve(x, x[:, :2] + 1)),
    "det": (jnp.linalg.det, "general", np.linalg.det),
    "lu_reconstructs": (lambda x: _lu_product(x), "general", lambda x: x),
    "qr_reconstructs": (lambda x: _qr_product(x), "tall", lambda x: x),
}


def _lu_product(x):
  lu, _, perm = lax_linalg.lu(x)
  n = x.shape[0]
  low = jnp.tril(lu, -1) + jnp.eye(n, dtype=lu.dtype)
  return (low @ jnp.triu(lu))[jnp.argsort(perm)]


def _qr_product(x):
  q, r = lax_linalg.qr(x, full_matrices=False)
  return q @ r


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("kind", ["real", "complex"])
@pytest.mark.parametrize("name", list(CASES))
def test_decomposition_compiled(name, kind, x64):
  f, shape, ref = CASES[name]
  rng = np.random.default_rng(0)
  with jax.enable_x64(x64):
    dtype = {("real", False): np.float32, ("real", True): np.float64,
             ("complex", False): np.complex64, ("complex", True): np.complex128}[kind, x64]
    x = (_hpd(rng, 3, dtype) if shape == "hpd" else
         _matrix(rng, (4, 3) if shape == "tall" else (3, 3), dtype))
    got = _compiled(f, x)
    tol = 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(got, ref(x), rtol=tol, atol=tol)
    assert got.dtype == np.dtype(dtype) or name == "det"


def test_complex_qr_factors():
  rng = np.random.default_rng(1)
  x = _matrix(rng, (5, 3), np.complex64)
  q, r = _compiled(lambda a: lax_linalg.qr(a, full_matrices=False), x)
  np.testing.assert_allclose(q @ r, x, atol=2e-5)
  np.testing.assert_allclose(q.conj().T @ q, np.eye(3), atol=2e-5)
  assert np.all(np.tril(r, -1) == 0)
  # LAPACK's convention (the eager impl): real diagonal, the same factors.
  q_e, r_e = lax_linalg.qr(x, full_matrices=False)
  np.testing.assert_allclose(r, np.asarray(r_e), atol=2e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.int32])
def test_dynamic_update_slice_from_the_same_array(dtype):
  a = (np.arange(9) + (0.5j * np.arange(9) if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
  a = a.reshape(1, 3, 3)

  def f(a):
    row = lax.reshape(a[:, 0, :], (1, 3, 1))
    return lax.dynamic_update_slice(a, row, (0, 0, 1))
  np.testing.assert_array_equal(_compiled(f, a), np.asarray(f(a)))


def test_complex64_scalar_constants_in_loops_compile():
  x = np.array([1 + 2j, 3 - 1j, 0.5j], np.complex64)

  def f(x):
    return lax.fori_loop(0, 3, lambda i, acc: acc * (1 - 0.5j) + x, jnp.zeros_like(x))
  np.testing.assert_allclose(_compiled(f, x), np.asarray(f(x)), rtol=1e-6)


def test_complex128_fills_updated_in_place_by_two_loops():
  # Both loops start from zeros: IREE shared one complex128 zero buffer
  # between them and the first loop's in-place updates leaked into the second.
  with jax.enable_x64():
    rng = np.random.default_rng(0)
    b = (rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))).astype(np.complex128)

    def fill_rows(src):
      def step(i, x):
        return lax.dynamic_update_slice(x, lax.dynamic_slice(src, (i, 0), (1, 3)), (i, 0))
      return lax.fori_loop(0, 3, step, jnp.zeros_like(src))

    def f(b):
      return fill_rows(b) + fill_rows(b * 2)
    np.testing.assert_array_equal(_compiled(f, b), 3 * b)
