"""``jax.scipy.sparse.linalg``'s ``cg``, ``bicgstab`` and ``gmres`` against
direct solves: matrices and function operators, preconditioners, pytree
right-hand sides, complex systems, tolerances, restarts, jit/vmap,
forward-mode derivatives and the errors."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax.scipy.sparse import linalg as sparse_linalg


def _spd(n, seed=0, dtype=np.float64):
  rng = np.random.default_rng(seed)
  a = rng.standard_normal((n, n))
  return (a @ a.T + n * np.eye(n)).astype(dtype)


def _general(n, seed=0, dtype=np.float64):
  rng = np.random.default_rng(seed)
  a = rng.standard_normal((n, n)) + 4 * np.eye(n)
  if np.dtype(dtype).kind == "c":
    a = a + 1j * rng.standard_normal((n, n))
  return a.astype(dtype)


def _rhs(n, seed=1, dtype=np.float64):
  rng = np.random.default_rng(seed)
  b = rng.standard_normal(n)
  if np.dtype(dtype).kind == "c":
    b = b + 1j * rng.standard_normal(n)
  return b.astype(dtype)


SOLVERS = {
    "cg": sparse_linalg.cg,
    "bicgstab": sparse_linalg.bicgstab,
    "gmres": sparse_linalg.gmres,
    "gmres_incremental": lambda *a, **k: sparse_linalg.gmres(*a, solve_method="incremental", **k),
    "gmres_restart3": lambda *a, **k: sparse_linalg.gmres(*a, restart=3, **k),
}


@pytest.mark.parametrize("name", list(SOLVERS))
def test_solves_to_tolerance(name):
  solve = SOLVERS[name]
  with jax.enable_x64():
    a, b = (_spd(10) if name == "cg" else _general(10)), _rhs(10)
    x, info = solve(a, b, tol=1e-10)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), atol=1e-8)
    x_op, _ = solve(lambda v: a @ v, b, tol=1e-10)
    np.testing.assert_allclose(np.asarray(x_op), np.asarray(x), atol=1e-10)
    x_loose, _ = solve(a, b, tol=1e-2)
    residual = np.linalg.norm(a @ np.asarray(x_loose) - b)
    assert residual <= 1e-2 * np.linalg.norm(b) * 1.01
    if name != "gmres":    # a batched cycle of restart >= n steps solves exactly
      assert residual > 1e-12      # it stopped early
    if name.startswith("gmres"):
      assert int(info) == 0
    else:
      assert info is None


@pytest.mark.parametrize("name", ["bicgstab", "gmres", "gmres_incremental"])
def test_complex_systems(name):
  with jax.enable_x64():
    a, b = _general(8, dtype=np.complex128), _rhs(8, dtype=np.complex128)
    x, _ = SOLVERS[name](a, b, tol=1e-10)
    assert x.dtype == np.complex128
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), atol=1e-8)


def test_cg_complex_hermitian_and_x0_and_preconditioner():
  with jax.enable_x64():
    rng = np.random.default_rng(2)
    m = rng.standard_normal((6, 6)) + 1j * rng.standard_normal((6, 6))
    a = m @ m.conj().T + 6 * np.eye(6)
    b = _rhs(6, dtype=np.complex128)
    x, _ = sparse_linalg.cg(a, b, tol=1e-12)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), atol=1e-9)
    a = _spd(12) * np.logspace(0, 3, 12)[:, None] * np.logspace(0, 3, 12)[None, :]
    b = _rhs(12)
    diag_inv = 1 / np.diag(a)
    x, _ = sparse_linalg.cg(a, b, x0=np.ones(12), M=lambda v: diag_inv * v, tol=1e-12)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), rtol=1e-7)


def test_pytree_operands():
  a = _spd(5)
  b = {"head": _rhs(5)[:2], "tail": _rhs(5)[2:]}

  def matvec(tree):
    v = jnp.concatenate([tree["head"], tree["tail"]])
    out = jnp.asarray(a) @ v
    return {"head": out[:2], "tail": out[2:]}
  with jax.enable_x64():
    for solve in (sparse_linalg.cg, sparse_linalg.bicgstab, sparse_linalg.gmres):
      x, _ = solve(matvec, b, tol=1e-10)
      got = np.concatenate([np.asarray(x["head"]), np.asarray(x["tail"])])
      np.testing.assert_allclose(got, np.linalg.solve(a, _rhs(5)), atol=1e-8)


def test_jit_vmap_and_forward_derivative():
  a, bs = _spd(6, dtype=np.float32), np.stack([_rhs(6, s, np.float32) for s in range(3)])
  solve = lambda b: sparse_linalg.cg(a, b, tol=1e-6)[0]     # noqa: E731
  want = np.linalg.solve(a.astype(np.float64), bs.T).T
  np.testing.assert_allclose(np.asarray(jax.jit(solve)(bs[0])), want[0], atol=1e-4)
  np.testing.assert_allclose(np.asarray(jax.vmap(solve)(bs)), want, atol=1e-4)
  gm = lambda b: sparse_linalg.gmres(a, b, tol=1e-6)[0]     # noqa: E731
  np.testing.assert_allclose(np.asarray(jax.vmap(gm)(bs)), want, atol=1e-4)
  # x(b) = A^-1 b is linear: its JVP along t is A^-1 t.
  _, tangent = jax.jvp(solve, (bs[0],), (bs[1],))
  np.testing.assert_allclose(np.asarray(tangent), want[1], atol=1e-4)


def test_errors():
  with pytest.raises(ValueError, match="matching tree structure"):
    sparse_linalg.cg(np.eye(2), np.ones(2), x0=(np.ones(2),))
  with pytest.raises(ValueError, match="matching shapes"):
    sparse_linalg.cg(np.eye(2), np.ones(2), x0=np.ones(3))
  with pytest.raises(ValueError, match="square matrix"):
    sparse_linalg.bicgstab(np.ones((2, 3)), np.ones(2))
  with pytest.raises(ValueError, match="solve_method"):
    sparse_linalg.gmres(np.eye(2), np.ones(2), solve_method="direct")
