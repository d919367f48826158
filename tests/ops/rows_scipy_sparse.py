"""Op-table rows: ``jax.scipy.sparse.linalg``'s Krylov solvers and
``jax.scipy.optimize.minimize``, against direct solutions (NumPy) and
``scipy.optimize.minimize``. The solvers are ``while_loop``s: their
derivatives are forward-mode only (JAX reaches reverse mode through
``custom_linear_solve``, which openjax lacks). ``minimize`` keeps the
compiled column off: compiling its loops aborts IREE's compiler ("LLVM
ERROR: out of memory", or a segfault), as does any compiled ``while_loop``
that carries a reduction of a carried array, e.g.
``while_loop(lambda s: s[0] < 5, lambda s: (s[0] + 1, s[1] * 2,
jnp.max(s[1])), (0, x, 0.0))`` on main too: a compiler-side failure."""
import numpy as np
import scipy.optimize

import openjax.numpy as jnp
from openjax.scipy.optimize import minimize
from openjax.scipy.sparse import linalg as sparse_linalg
from tests.ops.harness import OpRow

F32 = np.dtype(np.float32)


def _spd_and_rhs(rng):
  a = rng.standard_normal((5, 5))
  return (a @ a.T + 5 * np.eye(5)).astype(F32), rng.standard_normal(5).astype(F32)


def _general_and_rhs(rng):
  a = rng.standard_normal((5, 5)) + 4 * np.eye(5)
  return a.astype(F32), rng.standard_normal(5).astype(F32)


def _solve(a, b):
  return np.linalg.solve(a.astype(np.float64), b).astype(F32)


ROWS = [
    OpRow("scipy_sparse_linalg_cg", lambda a, b: sparse_linalg.cg(a, b, tol=1e-6)[0],
          _spd_and_rhs, _solve, grad=True, vjp=False, atol=1e-4, rtol=1e-4),
    OpRow("scipy_sparse_linalg_cg_operator",
          lambda a, b: sparse_linalg.cg(lambda v: a @ v, b, tol=1e-6,
                                        M=lambda v: v / jnp.diag(a))[0],
          _spd_and_rhs, _solve, atol=1e-4, rtol=1e-4),
    OpRow("scipy_sparse_linalg_bicgstab",
          lambda a, b: sparse_linalg.bicgstab(a, b, tol=1e-6)[0], _general_and_rhs, _solve,
          grad=True, vjp=False, atol=1e-4, rtol=1e-4),
    OpRow("scipy_sparse_linalg_gmres_batched",
          lambda a, b: sparse_linalg.gmres(a, b, tol=1e-6)[0], _general_and_rhs, _solve,
          grad=True, vjp=False, atol=1e-4, rtol=1e-4),
    OpRow("scipy_sparse_linalg_gmres_incremental",
          lambda a, b: sparse_linalg.gmres(a, b, tol=1e-6, restart=2,
                                           solve_method="incremental")[0],
          _general_and_rhs, _solve, atol=1e-4, rtol=1e-4),
]


def _quadratic(x, a, c):
  return jnp.sum((a @ x - c) ** 2) + 0.1 * jnp.sum(x ** 4)


def _np_quadratic(x, a, c):
  return np.sum((a @ x - c) ** 2) + 0.1 * np.sum(x ** 4)


def _problem(rng):
  return (rng.standard_normal(3).astype(F32), rng.standard_normal((3, 3)).astype(F32),
          rng.standard_normal(3).astype(F32))


for _method in ("BFGS", "l-bfgs-experimental-do-not-rely-on-this"):
  ROWS.append(OpRow(
      f"scipy_optimize_minimize_{_method[:6]}",
      lambda x0, a, c, m=_method: minimize(_quadratic, x0, (a, c), method=m,
                                           options=dict(gtol=1e-4)).x,
      _problem,
      lambda x0, a, c: scipy.optimize.minimize(
          _np_quadratic, x0.astype(np.float64), (a.astype(np.float64), c.astype(np.float64)),
          method="BFGS", options=dict(gtol=1e-8)).x.astype(F32),
      compile=False, atol=2e-3, rtol=2e-3))
