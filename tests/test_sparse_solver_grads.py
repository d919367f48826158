"""Reverse-mode derivatives of jax.scipy.sparse.linalg.cg/gmres/bicgstab:
each solve is a lax.custom_linear_solve (as in JAX), so gradients with
respect to b and to the matrix a matvec closes over agree with the gradient
of jnp.linalg.solve and with central finite differences."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax.scipy.sparse.linalg import bicgstab, cg, gmres

SOLVERS = {"cg": cg, "gmres": gmres, "bicgstab": bicgstab}


def _problem(name, seed=0):
  rng = np.random.default_rng(seed)
  m = rng.standard_normal((5, 5))
  # cg needs a symmetric positive-definite matrix; the others any well-conditioned one.
  mat = m @ m.T + 5 * np.eye(5) if name == "cg" else m + 5 * np.eye(5)
  return mat, rng.standard_normal(5), rng.standard_normal(5)


def _loss(solver, w):
  def loss(b, mat):
    x, _ = solver(lambda v: jnp.dot(mat, v), b, tol=1e-12, atol=0.)
    return jnp.dot(w, x) + jnp.sum(x ** 2)
  return loss


def _solve_loss(w):
  def loss(b, mat):
    x = jnp.linalg.solve(mat, b)
    return jnp.dot(w, x) + jnp.sum(x ** 2)
  return loss


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_grad_matches_linalg_solve_and_finite_differences(name):
  with jax.enable_x64():
    mat, b, w = _problem(name)
    loss = _loss(SOLVERS[name], w)
    g_b, g_mat = jax.grad(loss, argnums=(0, 1))(jnp.asarray(b), jnp.asarray(mat))
    r_b, r_mat = jax.grad(_solve_loss(w), argnums=(0, 1))(jnp.asarray(b), jnp.asarray(mat))
    np.testing.assert_allclose(g_b, r_b, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(g_mat, r_mat, rtol=1e-9, atol=1e-12)
    eps = 1e-6
    for i in range(5):
      e = np.zeros(5)
      e[i] = eps
      fd = (float(loss(b + e, mat)) - float(loss(b - e, mat))) / (2 * eps)
      np.testing.assert_allclose(g_b[i], fd, rtol=1e-6, atol=1e-8)
    e = np.zeros((5, 5))
    e[1, 3] = eps
    fd = (float(loss(b, mat + e)) - float(loss(b, mat - e))) / (2 * eps)
    np.testing.assert_allclose(g_mat[1, 3], fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_grad_under_jit_float32(name):
  mat, b, w = (a.astype(np.float32) for a in _problem(name, seed=1))
  loss = _loss(SOLVERS[name], w)
  got = jax.jit(jax.grad(loss))(jnp.asarray(b), jnp.asarray(mat))
  want = jax.grad(_solve_loss(w))(jnp.asarray(b), jnp.asarray(mat))
  np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_solves_stage_custom_linear_solve():
  mat, b, _ = _problem("cg")
  jaxpr = jax.make_jaxpr(lambda b: cg(jnp.asarray(mat, jnp.float32), b)[0])(
      jnp.asarray(b, jnp.float32))
  assert "custom_linear_solve" in str(jaxpr)
  # cg on real operands solves the transposed system with the same solve
  # (symmetric=True); a vjp works without transposing the loop.
  x, vjp = jax.vjp(lambda b: cg(lambda v: jnp.dot(jnp.asarray(mat), v), b)[0], jnp.asarray(b))
  np.testing.assert_allclose(vjp(jnp.ones(5))[0], np.linalg.solve(mat.T, np.ones(5)),
                             rtol=1e-4, atol=1e-5)
