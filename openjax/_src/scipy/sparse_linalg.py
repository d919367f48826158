"""``jax.scipy.sparse.linalg``: the Krylov solvers ``cg`` (conjugate
gradients), ``bicgstab`` and ``gmres`` (restarted, with the ``'batched'`` and
``'incremental'`` least-squares updates), each a ``lax.while_loop`` over a
linear operator given as a matrix or a function of pytrees.

As in JAX, ``info`` is ``None`` for ``cg``/``bicgstab`` (convergence is not
reported) and ``gmres`` reports ``-1`` only for a NaN result. Each solve is
wrapped in ``lax.custom_linear_solve``, as JAX does: derivatives (forward
and reverse mode, with respect to ``b`` and to arrays ``A`` closes over)
solve another linear system with the same method, never differentiate the
iterations, and ``cg`` on real operands uses ``A``'s symmetry for the
transposed solve.
"""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.transform_cache import call_transformed
from openjax._src.core import Tracer
from openjax._src.numpy import util
from openjax._src.scipy import jnp
from openjax._src.tree_util import tree_leaves, tree_map, tree_structure

__all__ = ["cg", "bicgstab", "gmres"]

_HIGHEST = lax.Precision.HIGHEST


def _dot(a, b):
  return jnp.dot(a, b, precision=_HIGHEST)


def _vdot_real(x, y):
  """``Re(vdot(x, y))`` without forming complex products of real parts."""
  out = _dot(jnp.real(x).ravel(), jnp.real(y).ravel())
  if dtypes.kind(x.dtype) == "c" or dtypes.kind(y.dtype) == "c":
    out = out + _dot(jnp.imag(x).ravel(), jnp.imag(y).ravel())
  return out


def _vdot_real_tree(x, y):
  return sum(tree_leaves(tree_map(_vdot_real, x, y)))


def _vdot_tree(x, y):
  return sum(tree_leaves(tree_map(lambda a, b: jnp.vdot(a, b, precision=_HIGHEST), x, y)))


def _norm(x):
  return jnp.sqrt(_vdot_real_tree(x, x))


def _scale(scalar, tree):
  return tree_map(lambda leaf: scalar * leaf, tree)


def _add(x, y):
  return tree_map(operator.add, x, y)


def _sub(x, y):
  return tree_map(operator.sub, x, y)


def _identity(x):
  return x


def _as_operator(f, what: str):
  """A matrix (square, 2-d) or anything with ``@`` becomes its matvec."""
  if callable(f):
    return f
  shape = getattr(f, "shape", None)
  if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
    raise ValueError(f"linear operator must be a square matrix, but has shape: {shape}")
  if isinstance(f, np.ndarray) or hasattr(f, "dtype"):
    return partial(_dot, f)
  if hasattr(f, "__matmul__"):
    return partial(operator.matmul, f)
  raise TypeError(f"{what}: linear operator must be either a function or ndarray: {f}")


def _setup(fun: str, A, b, x0, maxiter, M):
  b = tree_map(jnp.asarray, b)
  x0 = tree_map(jnp.zeros_like, b) if x0 is None else tree_map(jnp.asarray, x0)
  if tree_structure(x0) != tree_structure(b):
    raise ValueError(f"x0 and b must have matching tree structure: {tree_structure(x0)} vs "
                     f"{tree_structure(b)}")
  shapes = lambda t: [np.shape(leaf) for leaf in tree_leaves(t)]  # noqa: E731
  if shapes(x0) != shapes(b):
    raise ValueError(f"arrays in x0 and b must have matching shapes: {shapes(x0)} vs "
                     f"{shapes(b)}")
  size = sum(leaf.size for leaf in tree_leaves(b))
  if maxiter is None:
    maxiter = 10 * size    # SciPy's default
  return (_as_operator(A, fun), b, x0, maxiter,
          _identity if M is None else _as_operator(M, fun), size)


def _program_call_ok(A, b, x0, M, options) -> bool:
  """Whether an eager call can run as a cached program: operators given as
  matrices (or no preconditioner), concrete operands, hashable options.
  Traced, a solver stages its loop as JAX's does (no extra jit call); a
  function operator is a new closure per call, so nothing could be reused."""
  if callable(A) or callable(M) or not all(
      type(v) in (int, float, bool, str) or v is None for v in options.values()):
    return False
  return not any(isinstance(leaf, Tracer) for leaf in tree_leaves((A, b, x0, M)))


def _program(solver):
  """``solver(A, b, x0, M=M, **options)`` as a library program, traced once
  per signature (the loop bodies and the custom solve's functions otherwise
  retrace on every call: milliseconds for a 5 x 5 system)."""
  def run(A, b, x0, M, options):
    return solver(A, b, x0, M=M, **dict(options))
  return util.jit(run, static_argnames=("options",))


def _call_solver(name: str, solver, program, A, b, x0, M, options: dict):
  """``solver(A, b, x0, M=M, **options)``: as ``program`` for matrix
  operators; for function operators as a program cached by what the
  functions compute (``call_transformed``: their code and closed-over
  values; a fresh ``lambda v: a @ v`` per call finds the program of the
  last one), op by op when that cannot be keyed."""
  if _program_call_ok(A, b, x0, M, options):
    return program(A, b, x0, M, tuple(sorted(options.items())))
  if callable(A) or callable(M):
    return call_transformed(
        (name, tuple(sorted(options.items()))), (A, M),
        lambda b, x0: solver(A, b, x0, M=M, **options), (b, x0), {})
  return solver(A, b, x0, M=M, **options)


# ---------------------------------------------------------------------- cg
def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
  """Solve ``A x = b`` for Hermitian positive-definite ``A`` by
  (preconditioned, with ``M`` ~ ``A^-1``) conjugate gradients, until
  ``norm(residual) <= max(tol * norm(b), atol)``. Returns ``(x, None)``."""
  options = dict(tol=tol, atol=atol, maxiter=maxiter)
  return _call_solver("cg", _cg, _cg_program, A, b, x0, M, options), None


def _cg(A, b, x0=None, *, tol, atol, maxiter, M):
  A, b, x0, maxiter, M, _ = _setup("cg", A, b, x0, maxiter, M)
  solve = partial(_cg_solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
  # Real positive-definite operators are symmetric: the transposed solve is a solve.
  symmetric = all(dtypes.kind(leaf.dtype) != "c" for leaf in tree_leaves(b))
  return lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve,
                                 symmetric=symmetric)


_cg_program = _program(_cg)


def _cg_solve(A, b, *, x0, tol, atol, maxiter, M):
  atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))
  r0 = _sub(b, A(x0))
  p0 = z0 = M(r0)
  dtype = dtypes.result_type(*tree_leaves(p0))
  gamma0 = _vdot_real_tree(r0, z0).astype(dtype)

  def keep_going(state):
    _, r, gamma, _, k = state
    rs = jnp.real(gamma) if M is _identity else _vdot_real_tree(r, r)
    return (rs > atol2) & (k < maxiter)

  def step(state):
    x, r, gamma, p, k = state
    ap = A(p)
    alpha = gamma / _vdot_real_tree(p, ap).astype(dtype)
    x = _add(x, _scale(alpha, p))
    r = _sub(r, _scale(alpha, ap))
    z = M(r)
    gamma_new = _vdot_real_tree(r, z).astype(dtype)
    p = _add(z, _scale(gamma_new / gamma, p))
    return x, r, gamma_new, p, k + 1
  x, *_ = lax.while_loop(keep_going, step, (x0, r0, gamma0, p0, 0))
  return x


# ---------------------------------------------------------------- bicgstab
def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
  """Solve ``A x = b`` for general ``A`` by the biconjugate gradient
  stabilised method, stopping as ``cg`` does (or on a breakdown). Returns
  ``(x, None)``."""
  options = dict(tol=tol, atol=atol, maxiter=maxiter)
  return _call_solver("bicgstab", _bicgstab, _bicgstab_program, A, b, x0, M, options), None


def _bicgstab(A, b, x0=None, *, tol, atol, maxiter, M):
  A, b, x0, maxiter, M, _ = _setup("bicgstab", A, b, x0, maxiter, M)
  solve = partial(_bicgstab_solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
  return lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)


_bicgstab_program = _program(_bicgstab)


def _bicgstab_solve(A, b, *, x0, tol, atol, maxiter, M):
  atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))
  r0 = _sub(b, A(x0))
  one = jnp.ones((), dtypes.result_type(*tree_leaves(b)))

  def keep_going(state):
    _, r, *_, k = state
    return (_vdot_real_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)

  def step(state):
    x, r, rhat, alpha, omega, rho, p, q, k = state
    rho_new = _vdot_tree(rhat, r)
    beta = rho_new / rho * alpha / omega
    p = _add(r, _scale(beta, _sub(p, _scale(omega, q))))
    phat = M(p)
    q = A(phat)
    alpha = rho_new / _vdot_tree(rhat, q)
    s = _sub(r, _scale(alpha, q))
    done_half = _vdot_real_tree(s, s) < atol2     # converged after the first half step
    shat = M(s)
    t = A(shat)
    omega = _vdot_tree(t, s) / _vdot_tree(t, t)
    x_half = _add(x, _scale(alpha, phat))
    x = tree_map(partial(jnp.where, done_half), x_half, _add(x_half, _scale(omega, shat)))
    r = tree_map(partial(jnp.where, done_half), s, _sub(s, _scale(omega, t)))
    # Negative counters stop the loop on a breakdown (SciPy's info codes).
    k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
    k = jnp.where(rho_new == 0, -10, k)
    return x, r, rhat, alpha, omega, rho_new, p, q, k
  x, *_ = lax.while_loop(keep_going, step, (x0, r0, r0, one, one, one, r0, r0, 0))
  return x


# ------------------------------------------------------------------- gmres
def _safe_normalize(x, thresh=None):
  """``(x / norm(x), norm(x))``, or zeros and 0 where the norm is at most
  ``thresh`` (default: machine epsilon)."""
  norm = _norm(x)
  dtype = dtypes.result_type(*tree_leaves(x))
  if thresh is None:
    thresh = np.finfo(norm.dtype).eps
  use = norm > thresh
  scale = jnp.where(use, norm, 1).astype(dtype)
  return (tree_map(lambda y: jnp.where(use, y / scale, 0), x), jnp.where(use, norm, 0))


# The loop counters that index the Krylov basis and the Hessenberg rows are
# never negative: slicing without wrapping them saves three steps an index
# (lt, add, select_n), most of a cycle's steps on small systems.
def _index(x, i, axis=0):
  return lax.dynamic_index_in_dim(x, i, axis, keepdims=False, allow_negative_indices=False)


def _set_index(x, i, value, axis=0):
  return lax.dynamic_update_index_in_dim(x, value, i, axis, allow_negative_indices=False)


def _arnoldi_step(k, A, M, V, H):
  """Extend the Krylov basis ``V`` (leaves ``[..., restart + 1]``) by column
  ``k + 1`` and fill row ``k`` of ``H`` (the transposed Hessenberg matrix),
  orthogonalising twice by classical Gram-Schmidt."""
  dtype = dtypes.result_type(*tree_leaves(V))
  v = M(A(tree_map(lambda X: _index(X, k, X.ndim - 1), V)))
  _, norm0 = _safe_normalize(v)
  h = jnp.zeros(H.shape[1], dtype)
  for _ in range(2):
    proj = sum(tree_leaves(tree_map(
        lambda X, y: jnp.einsum("...n,...->n", jnp.conj(X), y, precision=_HIGHEST), V, v)))
    v = _sub(v, tree_map(lambda X: _dot(X, proj), V))
    h = h + proj
  unit, norm1 = _safe_normalize(v, thresh=np.finfo(norm0.dtype).eps * norm0)
  V = tree_map(lambda X, y: _set_index(X, k + 1, y, X.ndim - 1), V, unit)
  h = _set_index(h, k + 1, norm1.astype(dtype))
  return V, _set_index(H, k, h), norm1 == 0


def _initial_basis(unit_residual, restart: int):
  return tree_map(lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
                  unit_residual)


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
  """One restart cycle: ``restart`` Arnoldi steps (or until breakdown), then
  the small least-squares problem ``min |beta e1 - H y|``."""
  del ptol
  V = _initial_basis(unit_residual, restart)
  dtype = dtypes.result_type(*tree_leaves(b))
  H = jnp.eye(restart, restart + 1, dtype=dtype)

  def keep_going(state):
    _, _, breakdown, k = state
    return (k < restart) & jnp.logical_not(breakdown)

  def step(state):
    V, H, _, k = state
    V, H, breakdown = _arnoldi_step(k, A, M, V, H)
    return V, H, breakdown, k + 1
  V, H, _, _ = lax.while_loop(keep_going, step, (V, H, False, 0))
  beta = jnp.zeros(restart + 1, dtype).at[0].set(residual_norm.astype(dtype))
  # Normal equations of the (restart + 1) x restart problem H^T y = beta,
  # by Cholesky (primitives, not a nested jit: its compiled complex LU
  # would run inside the loop).
  ht = H.T
  gram = _dot(jnp.conj(ht).T, ht)
  rhs = _dot(jnp.conj(ht).T, beta)[:, None]
  chol = lax.linalg.cholesky(gram)
  y = lax.linalg.triangular_solve(chol, rhs, left_side=True, lower=True)
  y = lax.linalg.triangular_solve(chol, y, left_side=True, lower=True, transpose_a=True,
                                  conjugate_a=True)[:, 0]
  x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))
  return (x,) + _safe_normalize(M(_sub(b, A(x))))


def _givens(a, b):
  """``(c, s)`` rotating ``(a, b)`` onto ``(r, 0)``."""
  b_zero = jnp.abs(b) == 0
  a_lt_b = jnp.abs(a) < jnp.abs(b)
  t = -jnp.where(a_lt_b, a, b) / jnp.where(a_lt_b, b, jnp.where(b_zero, 1, a))
  r = lax.rsqrt(1 + jnp.abs(t) ** 2).astype(t.dtype)
  c = jnp.where(b_zero, 1, jnp.where(a_lt_b, r * t, r))
  s = jnp.where(b_zero, 0, jnp.where(a_lt_b, r, r * t))
  return c, s


def _rotate(v, i, c, s):
  """``v`` with entries ``i, i + 1`` (in range) rotated by ``(c, s)``."""
  pair = lax.dynamic_slice_in_dim(v, i, 2, allow_negative_indices=False)
  x, y = pair[0], pair[1]
  new = jnp.stack([jnp.conj(c) * x - jnp.conj(s) * y, s * x + c * y])
  return lax.dynamic_update_slice_in_dim(v, new, i, 0, allow_negative_indices=False)


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
  """One restart cycle updating a QR factorisation of ``H`` by Givens
  rotations, stopping early once the residual estimate is below ``ptol``."""
  V = _initial_basis(unit_residual, restart)
  dtype = dtypes.result_type(*tree_leaves(b))
  R = jnp.eye(restart, restart + 1, dtype=dtype)
  givens = jnp.zeros((restart, 2), dtype)
  beta = jnp.zeros(restart + 1, dtype).at[0].set(residual_norm.astype(dtype))

  def keep_going(state):
    k, err, *_ = state
    return (k < restart) & (err > ptol)

  def step(state):
    k, _, V, R, beta, givens = state
    V, H, _ = _arnoldi_step(k, A, M, V, R)
    def apply(i, r):
      cs = _index(givens, i)
      return _rotate(r, i, cs[0], cs[1])
    row = lax.fori_loop(0, k, apply, _index(H, k))
    pair = lax.dynamic_slice_in_dim(row, k, 2, allow_negative_indices=False)
    c, s = _givens(pair[0], pair[1])
    givens = _set_index(givens, k, jnp.stack([c, s]))
    R = _set_index(R, k, _rotate(row, k, c, s))
    beta = _rotate(beta, k, c, s)
    return k + 1, jnp.abs(_index(beta, k + 1)), V, R, beta, givens
  _, _, V, R, beta, _ = lax.while_loop(
      keep_going, step, (0, residual_norm, V, R, beta, givens))
  y = lax.linalg.triangular_solve(R[:, :-1].T, beta[:-1, None], left_side=True)[:, 0]
  x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))
  return (x,) + _safe_normalize(M(_sub(b, A(x))))


def _gmres_solve(A, b, *, x0, atol, ptol, restart, maxiter, M, cycle):
  unit, norm = _safe_normalize(M(_sub(b, A(x0))))

  def keep_going(state):
    _, k, _, residual_norm = state
    return (k < maxiter) & (residual_norm > atol)

  def step(state):
    x, k, unit, norm = state
    x, unit, norm = cycle(A, b, x, unit, norm, ptol, restart, M)
    return x, k + 1, unit, norm
  x, *_ = lax.while_loop(keep_going, step, (x0, 0, unit, norm))
  return x


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
  """Solve ``A x = b`` for general ``A`` by GMRES restarted every
  ``restart`` steps, at most ``maxiter`` restarts, until
  ``norm(residual) <= max(tol * norm(b), atol)``. ``solve_method`` is
  ``'batched'`` (a least-squares solve per cycle) or ``'incremental'``
  (Givens updates with early exit). Returns ``(x, info)``: ``info`` is -1
  when ``x`` has NaNs, else 0."""
  if solve_method not in ("batched", "incremental"):
    raise ValueError(f"invalid solve_method {solve_method}, must be either 'incremental' or "
                     "'batched'")
  options = dict(tol=tol, atol=atol, restart=restart, maxiter=maxiter,
                 solve_method=solve_method)
  return _call_solver("gmres", _gmres, _gmres_program, A, b, x0, M, options)


def _gmres(A, b, x0=None, *, tol, atol, restart, maxiter, M, solve_method):
  A, b, x0, maxiter, M, size = _setup("gmres", A, b, x0, maxiter, M)
  restart = min(restart, size)
  b_norm = _norm(b)
  atol = jnp.maximum(tol * b_norm, atol)
  ptol = _norm(M(b)) * jnp.minimum(1.0, atol / b_norm)
  cycle = _gmres_batched if solve_method == "batched" else _gmres_incremental
  solve = partial(_gmres_solve, x0=x0, atol=atol, ptol=ptol, restart=restart,
                  maxiter=maxiter, M=M, cycle=cycle)
  x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
  info = jnp.where(jnp.isnan(_norm(x)), -1, 0)
  return x, info


_gmres_program = _program(_gmres)
