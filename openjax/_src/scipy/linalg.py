"""``jax.scipy.linalg``: SciPy's decompositions and solves on the
``lax.linalg`` primitives (``cholesky``, ``cho_factor``/``cho_solve``,
``lu``/``lu_factor``/``lu_solve``, ``qr``/``qr_multiply``, ``svd``, ``eigh``,
``solve``, ``solve_triangular``, ``inv``, ``det``, ``polar``) and the
functions built on the Schur form (``schur``, ``rsf2csf``, ``hessenberg``,
``sqrtm``, ``funm``, ``solve_sylvester``) and on Sturm bisection
(``eigh_tridiagonal``).

SciPy's ``overwrite_*``, ``check_finite`` and ``lapack_driver`` arguments are
accepted and ignored, as in JAX (arrays are immutable; nothing is checked).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.jit import jit as _api_jit
from openjax._src.numpy import util
from openjax._src.scipy import jnp

# As jnp.linalg: traced, these stage a jit call; eager, they run op by op so
# the decompositions use their LAPACK impls.
jit = partial(_api_jit, _eager=True)

__all__ = ["cholesky", "cho_factor", "cho_solve", "svd", "det", "eigh", "inv", "lu",
           "lu_factor", "lu_solve", "qr", "qr_multiply", "solve", "solve_triangular", "polar",
           "eigh_tridiagonal"]


def _inexact(*args):
  return util.promote_dtypes_inexact(*(jnp.asarray(a) for a in args))


def _solve_signature(fun: str, a, b) -> str:
  """1-d ``b`` is one right-hand side; otherwise ``b`` is ``[..., n, k]``."""
  if b.ndim == 1:
    return "(n,n),(n)->(n)"
  if a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
    # JAX 0.10.2 still reads batched 1-d right-hand sides this way (with a
    # FutureWarning); the shapes say which reading is meant.
    return "(n,n),(n)->(n)"
  return "(n,n),(n,k)->(n,k)"


def _tri_solve(a, b, *, lower, transpose_a=False, conjugate_a=False, unit_diagonal=False):
  """``op(a)^-1 b`` for one matrix ``a`` and a vector or matrix ``b``."""
  vector = b.ndim == 1
  x = lax.linalg.triangular_solve(a, b[:, None] if vector else b, left_side=True, lower=lower,
                                  transpose_a=transpose_a, conjugate_a=conjugate_a,
                                  unit_diagonal=unit_diagonal)
  return x[:, 0] if vector else x


# ---------------------------------------------------------------- cholesky
@jit(static_argnames=("lower",))
def _cholesky(a, lower: bool):
  a, = _inexact(a)
  l = lax.linalg.cholesky(a if lower else jnp.conj(jnp.matrix_transpose(a)),
                          symmetrize_input=False)
  return l if lower else jnp.conj(jnp.matrix_transpose(l))


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
  """The Cholesky factor of Hermitian positive-definite ``a`` (``[..., n, n]``):
  upper ``U`` with ``a = U^H U`` (default) or lower ``L`` with ``a = L L^H``.
  Only the triangle named by ``lower`` is read; a matrix that is not
  positive definite gives NaNs."""
  del overwrite_a, check_finite
  return _cholesky(a, lower)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
  """``(c, lower)`` for ``cho_solve``: ``c`` is ``cholesky(a, lower)`` (the
  other triangle is zero here, where SciPy leaves garbage)."""
  del overwrite_a, check_finite
  return cholesky(a, lower=lower), lower


@jit(static_argnames=("lower",))
def _cho_solve(c, b, lower: bool):
  c, b = _inexact(c, b)
  sig = _solve_signature("cho_solve", c, b)
  # a = L L^H: solve L y = b, then L^H x = y (or U^H y = b, U x = y).
  first = partial(_tri_solve, lower=lower, transpose_a=not lower, conjugate_a=not lower)
  second = partial(_tri_solve, lower=lower, transpose_a=lower, conjugate_a=lower)
  return jnp.vectorize(second, signature=sig)(c, jnp.vectorize(first, signature=sig)(c, b))


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
  """Solve ``a x = b`` from ``cho_factor(a)``'s ``(c, lower)``."""
  del overwrite_b, check_finite
  c, lower = c_and_lower
  return _cho_solve(c, b, bool(lower))


# ------------------------------------------------------------ svd, eigh, det
@jit(static_argnames=("full_matrices", "compute_uv"))
def _svd(a, *, full_matrices: bool, compute_uv: bool):
  a, = _inexact(a)
  return lax.linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
  """``(u, s, vh)`` with ``a = u @ diag(s) @ vh`` (``s`` descending), or ``s``
  alone when ``compute_uv`` is False."""
  del overwrite_a, check_finite, lapack_driver
  return _svd(a, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))


def det(a, overwrite_a: bool = False, check_finite: bool = True):
  """The determinant of square matrices ``a`` (``[..., n, n]``)."""
  del overwrite_a, check_finite
  return jnp.linalg.det(a)


@jit(static_argnames=("lower", "eigvals_only", "eigvals", "type"))
def _eigh(a, b, lower: bool, eigvals_only: bool, eigvals, type: int):  # noqa: A002 - SciPy's name
  if b is not None:
    raise NotImplementedError("eigh: only the b=None case (a standard, not generalised, "
                              "eigenproblem) is implemented, as in JAX")
  if type != 1:
    raise NotImplementedError(f"eigh: only type=1 is implemented, as in JAX; got type={type}")
  if eigvals is not None:
    raise NotImplementedError("eigh: only eigvals=None is implemented, as in JAX; select "
                              "eigenvalues from the full result instead")
  a, = _inexact(a)
  v, w = lax.linalg.eigh(a, lower=lower)
  return w if eigvals_only else (w, v)


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals=None, type: int = 1,  # noqa: A002
         check_finite: bool = True):
  """Eigenvalues (ascending) and eigenvectors of Hermitian ``a``: ``(w, v)``,
  or ``w`` alone with ``eigvals_only``. ``lower`` names the triangle read."""
  del overwrite_a, overwrite_b, turbo, check_finite
  return _eigh(a, b, bool(lower), bool(eigvals_only), eigvals, type)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
  """The inverse of square matrices ``a`` (``[..., n, n]``)."""
  del overwrite_a, check_finite
  return jnp.linalg.inv(a)


# ---------------------------------------------------------------------- lu
@jit(static_argnames=("overwrite_a", "check_finite"))
def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
  """``(lu, piv)`` as LAPACK's ``getrf``: unit-lower ``L`` below the diagonal
  and ``U`` on and above it; ``piv[i]`` is the row swapped with row ``i``."""
  del overwrite_a, check_finite
  a, = _inexact(a)
  lu_, pivots, _ = lax.linalg.lu(a)
  return lu_, pivots


def _lu_solve_one(lu_, perm, b, *, trans: int):
  vector = b.ndim == 1
  if vector:
    b = b[:, None]
  if trans == 0:     # P a = L U: a x = b  <=>  L U x = P b
    x = b[perm, :]
    x = lax.linalg.triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
    x = lax.linalg.triangular_solve(lu_, x, left_side=True, lower=False)
  else:              # a^T x = U^T L^T P x = b (a^H with conjugation)
    conj = trans == 2
    x = lax.linalg.triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True,
                                    conjugate_a=conj)
    x = lax.linalg.triangular_solve(lu_, x, left_side=True, lower=True, transpose_a=True,
                                    conjugate_a=conj, unit_diagonal=True)
    x = x[jnp.argsort(perm), :]
  return x[:, 0] if vector else x


@jit(static_argnames=("trans", "overwrite_b", "check_finite"))
def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False, check_finite: bool = True):
  """Solve ``a x = b`` (``trans=0``), ``a^T x = b`` (1) or ``a^H x = b`` (2)
  from ``lu_factor(a)``'s ``(lu, piv)``."""
  del overwrite_b, check_finite
  if trans not in (0, 1, 2):
    raise ValueError(f"lu_solve: trans must be 0, 1 or 2; got {trans!r}")
  lu_, pivots = lu_and_piv
  lu_, b = _inexact(lu_, b)
  perm = lax.linalg.lu_pivots_to_permutation(jnp.asarray(pivots), lu_.shape[-2])
  sig = "(n,n),(n),(n)->(n)" if _solve_signature("lu_solve", lu_, b).endswith("(n)") else \
      "(n,n),(n),(n,k)->(n,k)"
  return jnp.vectorize(partial(_lu_solve_one, trans=trans), signature=sig)(lu_, perm, b)


@jit(static_argnums=(1,))
def _lu(a, permute_l: bool):
  a, = _inexact(a)
  lu_, _, perm = lax.linalg.lu(a)
  dtype = a.dtype
  m, n = a.shape[-2:]
  p = (perm[..., None, :] == jnp.arange(m, dtype=perm.dtype)[:, None]).astype(dtype)
  k = min(m, n)
  l = jnp.tril(lu_, -1)[..., :, :k] + jnp.eye(m, k, dtype=dtype)
  u = jnp.triu(lu_)[..., :k, :]
  if permute_l:
    return jnp.matmul(p, l, precision=lax.Precision.HIGHEST), u
  return p, l, u


@jit(static_argnames=("permute_l", "overwrite_a", "check_finite"))
def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
  """``(p, l, u)`` with ``a = p @ l @ u`` (``l`` unit lower ``[m, k]``, ``u``
  upper ``[k, n]``), or ``(p @ l, u)`` with ``permute_l``."""
  del overwrite_a, check_finite
  return _lu(a, bool(permute_l))


# ---------------------------------------------------------------------- qr
@jit(static_argnames=("mode", "pivoting"))
def _qr(a, mode: str, pivoting: bool):
  if mode in ("full", "r"):
    full_matrices = True
  elif mode == "economic":
    full_matrices = False
  else:
    raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
  a, = _inexact(a)
  q, r, *p = lax.linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
  if mode == "r":
    return (r, p[0]) if pivoting else (r,)
  return (q, r, p[0]) if pivoting else (q, r)


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
  """``(q, r)`` (``mode`` 'full' or 'economic'), ``(r,)`` (``mode='r'``), with
  the column permutation ``p`` appended when ``pivoting``."""
  del overwrite_a, lwork, check_finite
  return _qr(a, mode, bool(pivoting))


@jit(static_argnames=("mode", "pivoting", "conjugate", "overwrite_a", "overwrite_c"))
def qr_multiply(a, c, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False):
  """``(c @ Q, r)`` (``mode='right'``) or ``(Q @ c, r)`` (``'left'``) for the
  economic ``Q`` of ``a``'s QR factorisation, with ``Q`` conjugated when
  ``conjugate``; ``p`` is appended when ``pivoting``."""
  del overwrite_a, overwrite_c
  a, c = _inexact(a, c)
  if mode not in ("right", "left"):
    raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
  onedim = c.ndim == 1
  if onedim:
    c = c[:, None] if mode == "left" else c[None, :]
  m, n = a.shape[-2:]
  k = min(m, n)
  if mode == "left" and c.shape[-2] != k:
    raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape "
                     f"{tuple(a.shape)} so Q has {k} columns, but c has {c.shape[-2]} rows "
                     f"(expected {k}).")
  if mode == "right" and c.shape[-1] != m:
    raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape "
                     f"{tuple(a.shape)} so Q has {m} rows, but c has {c.shape[-1]} columns "
                     f"(expected {m}).")
  q, r, *p = lax.linalg.qr(a, pivoting=bool(pivoting), full_matrices=False)
  if conjugate:
    q = jnp.conj(q)
  prec = lax.Precision.HIGHEST
  cq = jnp.matmul(q, c, precision=prec) if mode == "left" else jnp.matmul(c, q, precision=prec)
  if onedim:
    cq = cq.ravel()
  return (cq, r, p[0]) if pivoting else (cq, r)


# ------------------------------------------------------------------ solves
@jit(static_argnames=("assume_a", "lower"))
def _solve(a, b, assume_a: str, lower: bool):
  if assume_a != "pos":
    return jnp.linalg.solve(a, b)
  a, b = _inexact(a, b)
  if not (a.ndim >= 2 and a.shape[-1] == a.shape[-2] and b.ndim >= 1):
    raise ValueError("The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] "
                     f"or b=[..., m]; got a={a.shape} and b={b.shape}")
  vector = b.ndim == 1 or b.ndim == a.ndim - 1
  rhs = b[..., None] if vector else b
  x = _cho_solve(cholesky(a, lower=lower), rhs, lower)
  return x[..., 0] if vector else x


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
  """Solve ``a x = b``; ``assume_a='pos'`` uses a Cholesky factorisation of
  the triangle named by ``lower``, the others (``gen``, ``sym``, ``her``) LU."""
  del overwrite_a, overwrite_b, debug, check_finite
  valid = ["gen", "sym", "her", "pos"]
  if assume_a not in valid:
    raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
  return _solve(a, b, assume_a, bool(lower))


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


@jit(static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a, b, trans, lower: bool, unit_diagonal: bool):
  if trans not in _TRANS:
    raise ValueError(f"Invalid 'trans' value {trans}")
  transpose_a, conjugate_a = _TRANS[trans]
  a, b = _inexact(a, b)
  sig = _solve_signature("solve_triangular", a, b)
  return jnp.vectorize(partial(_tri_solve, lower=lower, transpose_a=transpose_a,
                               conjugate_a=conjugate_a, unit_diagonal=unit_diagonal),
                       signature=sig)(a, b)


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
  """Solve ``op(a) x = b`` for triangular ``a``: ``trans`` 0/'N' (``a``),
  1/'T' (``a^T``) or 2/'C' (``a^H``); only the triangle named by ``lower``
  is read and ``unit_diagonal`` takes the diagonal as ones."""
  del overwrite_b, debug, check_finite
  return _solve_triangular(a, b, trans, bool(lower), bool(unit_diagonal))


# ------------------------------------------------------------------- polar
def _polar_2d(a, *, side: str, method: str, eps):
  m, n = a.shape
  if method == "qdwh":
    if m >= n and side == "right":
      unitary, posdef, _, _ = lax.linalg.qdwh(a, eps=eps)
    elif m < n and side == "left":
      unitary, posdef, _, _ = lax.linalg.qdwh(jnp.conj(a.T), eps=eps)
      unitary, posdef = jnp.conj(unitary.T), jnp.conj(posdef.T)
    else:
      raise NotImplementedError("method='qdwh' only supports mxn matrices where m < n where "
                                "side='right' and m >= n side='left', got "
                                f"{a.shape} with side={side!r}")
    return unitary, posdef
  if method != "svd":
    raise ValueError(f"Unknown polar decomposition method {method}.")
  u, s, vh = lax.linalg.svd(a, full_matrices=False)
  s = s.astype(u.dtype)
  prec = lax.Precision.HIGHEST
  unitary = jnp.matmul(u, vh, precision=prec)
  if side == "right":
    posdef = jnp.matmul(jnp.conj(vh.T) * s[None, :], vh, precision=prec)
  else:
    posdef = jnp.matmul(u * s[None, :], jnp.conj(u.T), precision=prec)
  return unitary, posdef


@jit(static_argnames=("side", "method", "eps"))
def _polar(a, side: str, method: str, eps):
  arr, = _inexact(a)
  if arr.ndim < 2:
    raise ValueError("The input `a` must be at least a 2-D array.")
  if side not in ("right", "left"):
    raise ValueError("The argument `side` must be either 'right' or 'left'.")
  sig = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
  return jnp.vectorize(partial(_polar_2d, side=side, method=method, eps=eps),
                       signature=sig)(arr)


def polar(a, side: str = "right", *, method: str = "qdwh", eps=None, max_iterations=None):
  """The polar decomposition ``a = u p`` (``side='right'``) or ``a = p u``
  (``'left'``): ``u`` has orthonormal columns (or rows), ``p`` is Hermitian
  positive semi-definite; by QDWH (``lax.linalg.qdwh``, with tolerance
  ``eps``) or the SVD. ``max_iterations`` is unused, as in JAX."""
  del max_iterations
  return _polar(a, side, method, None if eps is None else float(eps))


# -------------------------------------------------------- eigh_tridiagonal
def _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, x):
  """How many eigenvalues of the tridiagonal matrix are below each ``x``
  (the sign changes of the Sturm sequence, with LAPACK's pivot guard)."""
  n = alpha.shape[0]
  q = alpha[0] - x
  count = (q < 0).astype(np.int32)
  q = jnp.where(alpha[0] == x, alpha0_perturbation, q)

  def step(i, qc):
    q, count = qc
    q = alpha[i] - beta_sq[i - 1] / q - x
    small = q <= pivmin
    return jnp.where(small, jnp.minimum(q, -pivmin), q), jnp.where(small, count + 1, count)
  return lax.fori_loop(1, n, step, (q, count))[1]


@jit(static_argnames=("eigvals_only", "select", "select_range"))
def eigh_tridiagonal(d, e, *, eigvals_only: bool = False, select: str = "a",
                     select_range=None, tol=None, key=None):
  """Eigenvalues (ascending; by Sturm bisection, as JAX) and eigenvectors of
  the real symmetric or complex Hermitian tridiagonal matrix with diagonal
  ``d`` and off-diagonal ``e``. ``select='i'`` with ``select_range=(lo, hi)``
  keeps eigenvalues ``lo..hi`` (inclusive). Eigenvectors come from the
  Hermitian eigensolver on the assembled matrix (``key``, JAX's seed for
  inverse iteration, is accepted and unused)."""
  del key
  alpha, beta = jnp.asarray(d), jnp.asarray(e)
  supported = (np.float32, np.float64, np.complex64, np.complex128)
  if alpha.dtype != beta.dtype:
    raise TypeError("diagonal and off-diagonal values must have same dtype, got "
                    f"{alpha.dtype} and {beta.dtype}")
  if alpha.dtype not in supported:
    raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                    f"jax.scipy.linalg.eigh_tridiagonal, got {alpha.dtype} and {beta.dtype}")
  n = alpha.shape[0]
  if n <= 1:
    return jnp.real(alpha) if eigvals_only else (jnp.real(alpha), jnp.eye(n, dtype=alpha.dtype))
  if select == "a":
    targets = np.arange(n, dtype=np.int32)
  elif select == "i":
    if select_range is None:
      raise ValueError("for select='i', select_range must be specified.")
    if select_range[0] > select_range[1]:
      raise ValueError("Got empty index range in select_range.")
    targets = np.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
  elif select == "v":
    raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented (the "
                              "number of eigenvalues in a range is not static); use select='i'")
  else:
    raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
  matrix_alpha, matrix_beta = alpha, beta
  if dtypes.kind(alpha.dtype) == "c":
    alpha = jnp.real(alpha)
    beta_sq = jnp.real(beta * jnp.conj(beta))
    beta_abs = jnp.sqrt(beta_sq)
  else:
    beta_abs, beta_sq = jnp.abs(beta), jnp.square(beta)
  # Gershgorin bounds on the spectrum.
  row_sums = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
  lam_max = jnp.max(alpha + row_sums)
  lam_min = jnp.min(alpha - row_sums)
  t_norm = jnp.maximum(jnp.abs(lam_min), jnp.abs(lam_max))
  finfo = np.finfo(alpha.dtype)
  one = np.ones([], alpha.dtype)
  safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
  pivmin = safemin * jnp.maximum(1, jnp.max(beta_sq))
  alpha0_perturbation = jnp.square(finfo.eps * beta_abs[0])
  abs_tol = finfo.eps * t_norm
  if tol is not None:
    abs_tol = jnp.maximum(tol, abs_tol)
  # Each bisection step halves every interval: mantissa bits + 1 steps reach
  # the tolerance from the (slightly widened) Gershgorin interval.
  max_it = finfo.nmant + 1
  fudge = 2.1
  slack = np.array(n, alpha.dtype) * fudge * finfo.eps * t_norm
  shape = targets.shape
  lower = jnp.broadcast_to(lam_min - slack - 2 * fudge * pivmin, shape)
  upper = jnp.broadcast_to(lam_max + slack + fudge * pivmin, shape)
  pivmin = jnp.broadcast_to(pivmin, shape)
  alpha0_perturbation = jnp.broadcast_to(alpha0_perturbation, shape)

  def keep_going(state):
    i, lo, _, hi = state
    return jnp.logical_and(i < max_it, abs_tol < jnp.max(hi - lo))

  def bisect(state):
    i, lo, mid, hi = state
    counts = _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
    lo = jnp.where(counts <= targets, mid, lo)
    hi = jnp.where(counts > targets, mid, hi)
    return i + 1, lo, 0.5 * (lo + hi), hi
  _, _, mid, _ = lax.while_loop(keep_going, bisect, (0, lower, 0.5 * (lower + upper), upper))
  if eigvals_only:
    return mid
  t = (jnp.diag(matrix_alpha) + jnp.diag(jnp.conj(matrix_beta), -1) + jnp.diag(matrix_beta, 1))
  v, _ = lax.linalg.eigh(t, lower=True)
  return mid, v[:, targets]
