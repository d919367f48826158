"""Op-table rows: the rest of jax.lax.linalg (eig, householder_product, ormqr,
tridiagonal, tridiagonal_solve, cholesky_update, symmetric_product, qdwh).
References are SciPy's LAPACK wrappers where LAPACK defines the output
(orgqr, ormqr, sytrd, gtsv); eigenvectors enter as sign-free products."""
import numpy as np
import scipy.linalg
from scipy.linalg import lapack

import openjax.numpy as jnp
from openjax.lax import linalg as lax_linalg
from tests.ops.harness import OpRow as _OpRow

F32 = np.dtype(np.float32)


def OpRow(*args, **kw):  # noqa: N802 - compiled alone, as the other linalg rows
  return _OpRow(*args, compile="alone", **kw)


def _matrix(shape, shift=0.0):
  def make(rng):
    a = rng.standard_normal(shape)
    k = min(shape)
    a[:k, :k] += shift * np.eye(k)
    return a.astype(F32)
  return make


def _geqrf(rng):
  a = rng.standard_normal((5, 3))
  qr, tau, _, _ = lapack.dgeqrf(a)
  return qr.astype(F32), tau.astype(F32)


def _householder_ref(a, taus):
  q, _, _ = lapack.dorgqr(a.astype(np.float64), taus.astype(np.float64))
  return q.astype(F32)


def _ormqr_args(rng):
  a, taus = _geqrf(rng)
  return a, taus, rng.standard_normal((5, 2)).astype(F32)


def _ormqr_ref(a, taus, c):
  # LAPACK wants lwork >= columns of c (the eager sweep scales c up); a
  # blocked workspace of 64 per column.
  out, _, info = lapack.dormqr("L", "T", a.astype(np.float64), taus.astype(np.float64),
                               c.astype(np.float64), lwork=64 * max(1, c.shape[1]))
  if info != 0:
    raise ValueError(f"dormqr: info {info}")
  return out.astype(F32)


def _tridiagonal_ref(a):
  c, d, e, tau, _ = lapack.dsytrd(a.astype(np.float64), lower=1)
  return tuple(v.astype(F32) for v in (c, d, e, tau))


def _gtsv_args(rng):
  dl, d, du = rng.standard_normal((3, 5)).astype(F32)
  return dl, d + 3, du, rng.standard_normal((5, 2)).astype(F32)


def _gtsv_ref(dl, d, du, b):
  *_, x, _ = lapack.dgtsv(dl[1:].astype(np.float64), d.astype(np.float64),
                          du[:-1].astype(np.float64), b.astype(np.float64))
  return x.astype(F32)


def _spd_factor(rng):
  a = rng.standard_normal((4, 4))
  r = np.linalg.cholesky(a @ a.T + 4 * np.eye(4)).T
  return r.astype(F32), rng.standard_normal(4).astype(F32)


def _cholesky_update_ref(r, w):
  r = r.astype(np.float64)
  return np.linalg.cholesky(r.T @ r + np.outer(w, w)).T.astype(F32)


def _eig_products(x):
  w, vl, vr = lax_linalg.eig(x)
  # Sums of w_j v_j v_j^H are free of each eigenvector's sign (phase).
  return (w, (vr * w[..., None, :]) @ vr.conj().swapaxes(-1, -2),
          (vl * w.conj()[..., None, :]) @ vl.conj().swapaxes(-1, -2))


def _eig_products_ref(x):
  w, vl, vr = scipy.linalg.eig(x.astype(np.float64), left=True, right=True)
  c = np.complex64
  return (w.astype(c), ((vr * w) @ vr.conj().T).astype(c),
          ((vl * w.conj()) @ vl.conj().T).astype(c))


def _eigvals(x):
  return lax_linalg.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def _qdwh_polar(x):
  u, h, _, _ = lax_linalg.qdwh(x)
  return u, h


def _polar_ref(x):
  u, h = scipy.linalg.polar(x.astype(np.float64))
  return u.astype(F32), h.astype(F32)


ROWS = [
    OpRow("lax_linalg_householder_product", lax_linalg.householder_product, _geqrf,
          _householder_ref, atol=1e-5, rtol=1e-5),
    OpRow("lax_linalg_ormqr_left_transpose",
          lambda a, t, c: lax_linalg.ormqr(a, t, c, left=True, transpose=True), _ormqr_args,
          _ormqr_ref, atol=1e-5, rtol=1e-5),
    OpRow("lax_linalg_tridiagonal", lambda a: lax_linalg.tridiagonal(a, lower=True),
          lambda rng: (_matrix((4, 4))(rng),), _tridiagonal_ref, atol=1e-5, rtol=1e-5),
    OpRow("lax_linalg_tridiagonal_solve", lax_linalg.tridiagonal_solve, _gtsv_args, _gtsv_ref,
          grad=True, atol=1e-5, rtol=1e-5),
    OpRow("lax_linalg_cholesky_update", lax_linalg.cholesky_update, _spd_factor,
          _cholesky_update_ref, atol=1e-5, rtol=1e-5),
    OpRow("lax_linalg_symmetric_product",
          lambda a, c: lax_linalg.symmetric_product(a, c, alpha=2.0, beta=0.5),
          lambda rng: (_matrix((3, 2))(rng), _matrix((3, 3))(rng)),
          lambda a, c: 2.0 * a @ a.T + 0.5 * c, grad=True, atol=1e-5, rtol=1e-5),
    OpRow("lax_linalg_eig", _eig_products, lambda rng: (_matrix((4, 4))(rng),),
          _eig_products_ref, atol=1e-4, rtol=1e-4),
    OpRow("lax_linalg_eig_eigenvalues", _eigvals,
          lambda rng: (_matrix((3, 3), shift=2.0)(rng) + np.diag([0, 1, 3]).astype(F32),),
          lambda x: np.linalg.eigvals(x.astype(np.float64)).astype(np.complex64),
          grad=True, atol=1e-4, rtol=1e-4),
    OpRow("jnp_linalg_eigvals", jnp.linalg.eigvals,
          lambda rng: (_matrix((3, 3), shift=2.0)(rng) + np.diag([0, 1, 3]).astype(F32),),
          lambda x: np.linalg.eigvals(x.astype(np.float64)).astype(np.complex64),
          atol=1e-4, rtol=1e-4),
    OpRow("lax_linalg_qdwh", _qdwh_polar, lambda rng: (_matrix((5, 3), shift=2.0)(rng),),
          _polar_ref, atol=1e-5, rtol=1e-5),
]
