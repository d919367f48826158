"""Op-table rows: ``jax.scipy.linalg`` against ``scipy.linalg``. Outputs
whose signs are implementation choices (Q, eigenvectors) enter as sign-free
products. Rows built on the decomposition primitives keep the compiled
column off, as rows_linalg.py does (IREE fails on several of their loops in
one module; tests/test_linalg.py compiles each primitive alone)."""
import numpy as np
import scipy.linalg
import scipy.linalg.lapack

import openjax.numpy as jnp
from openjax.lax import linalg as lax_linalg
from openjax.scipy import linalg as jsl
from tests.ops.harness import OpRow

F32 = np.dtype(np.float32)


def _general(shape=(3, 3), shift=2.0):
  def make(rng):
    a = rng.standard_normal(shape)
    k = min(shape[-2:])
    a[..., :k, :k] += shift * np.eye(k)
    return a.astype(F32)
  return make


def _spd(n=3):
  def make(rng):
    a = rng.standard_normal((n, n))
    return ((a @ a.T + n * np.eye(n)) / n).astype(F32)
  return make


def _vec(shape):
  return lambda rng: rng.standard_normal(shape).astype(F32)


def _pair(make_a, make_b):
  return lambda rng: (make_a(rng), make_b(rng))


def _one(make):
  return lambda rng: (make(rng),)


def _sym(a):
  # The factorisations read one triangle; their JVPs assume a Hermitian
  # tangent (as JAX's), so grad rows differentiate a symmetrised input.
  return (a + a.T) / 2


def _f32(fn):
  return lambda *a: np.asarray(fn(*a), F32)


ROWS = [
    OpRow("scipy_linalg_cholesky", lambda a: jsl.cholesky(_sym(a)), _one(_spd()),
          _f32(scipy.linalg.cholesky), grad=True, compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_cholesky_lower", lambda a: jsl.cholesky(_sym(a), lower=True), _one(_spd()),
          _f32(lambda a: scipy.linalg.cholesky(a, lower=True)), grad=True, compile=False,
          atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_cho_solve", lambda a, b: jsl.cho_solve(jsl.cho_factor(_sym(a)), b),
          _pair(_spd(), _vec((3, 2))),
          _f32(lambda a, b: scipy.linalg.cho_solve(scipy.linalg.cho_factor(a), b)), grad=True,
          compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_lu_solve", lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b),
          _pair(_general(), _vec((3, 2))),
          _f32(lambda a, b: scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b)), grad=True,
          compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_lu_solve_trans1",
          lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b, trans=1),
          _pair(_general(), _vec((3,))),
          _f32(lambda a, b: scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b, trans=1)),
          grad=True, compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_lu", lambda a: jsl.lu(a), _one(_general((4, 3), shift=0.0)),
          lambda a: tuple(np.asarray(x, F32) for x in scipy.linalg.lu(a)), compile=False,
          atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_solve", lambda a, b: jsl.solve(a, b), _pair(_general(), _vec((3, 2))),
          _f32(scipy.linalg.solve), grad=True, compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_solve_pos", lambda a, b: jsl.solve(_sym(a), b, assume_a="pos"),
          _pair(_spd(), _vec((3,))),
          _f32(lambda a, b: scipy.linalg.solve(a, b, assume_a="pos")), grad=True,
          compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_inv", lambda a: jsl.inv(a), _one(_general()), _f32(scipy.linalg.inv),
          grad=True, compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_det", lambda a: jsl.det(a), _one(_general()), _f32(scipy.linalg.det),
          grad=True, compile=False, atol=1e-4, rtol=1e-5),
    OpRow("scipy_linalg_eigh_values", lambda a: jsl.eigh(_sym(a), eigvals_only=True), _one(_spd()),
          _f32(lambda a: scipy.linalg.eigh(a, eigvals_only=True)), grad=True, compile=False,
          atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_svd_values", lambda a: jsl.svd(a, compute_uv=False),
          _one(_general((4, 3))), _f32(lambda a: scipy.linalg.svd(a, compute_uv=False)),
          grad=True, compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_qr_products", lambda a: (lambda q, r: (q @ r, r.T @ r))(
        *jsl.qr(a, mode="economic")), _one(_general((4, 3))),
          lambda a: (lambda q, r: (np.asarray(q @ r, F32), np.asarray(r.T @ r, F32)))(
              *scipy.linalg.qr(a, mode="economic")), grad=True, compile=False,
          atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_polar", lambda a: jsl.polar(a), _one(_general()),
          lambda a: tuple(np.asarray(x, F32) for x in scipy.linalg.polar(a)), grad=True,
          compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_expm", lambda a: jsl.expm(a), _one(_vec((3, 3))),
          _f32(scipy.linalg.expm), grad=True, compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_expm_frechet", lambda a, e: jsl.expm_frechet(a, e, compute_expm=False),
          _pair(_vec((3, 3)), _vec((3, 3))),
          _f32(lambda a, e: scipy.linalg.expm_frechet(a, e, compute_expm=False)),
          compile=False, atol=1e-4, rtol=1e-4),
]

for _trans in (0, 1, 2):
  for _lower in (False, True):
    ROWS.append(OpRow(
        f"scipy_linalg_solve_triangular_t{_trans}_l{int(_lower)}",
        lambda a, b, t=_trans, lo=_lower: jsl.solve_triangular(a, b, trans=t, lower=lo),
        _pair(_general(), _vec((3, 2))),
        lambda a, b, t=_trans, lo=_lower: np.asarray(
            scipy.linalg.solve_triangular(a, b, trans=t, lower=lo), F32),
        grad=True, compile=False, atol=1e-5, rtol=1e-5))

# The special matrices are plain array code: every column, compiled too.
ROWS += [
    OpRow("scipy_linalg_toeplitz", lambda c, r: jsl.toeplitz(c, r), _pair(_vec(3), _vec(4)),
          scipy.linalg.toeplitz, grad=True),
    OpRow("scipy_linalg_toeplitz_sym", lambda c: jsl.toeplitz(c), _one(_vec(4)),
          scipy.linalg.toeplitz, grad=True),
    OpRow("scipy_linalg_hankel", lambda c, r: jsl.hankel(c, r), _pair(_vec(3), _vec(4)),
          scipy.linalg.hankel, grad=True),
    OpRow("scipy_linalg_circulant", lambda c: jsl.circulant(c), _one(_vec(4)),
          scipy.linalg.circulant, grad=True),
    OpRow("scipy_linalg_leslie", lambda f, s: jsl.leslie(f, s), _pair(_vec(4), _vec(3)),
          scipy.linalg.leslie, grad=True),
    OpRow("scipy_linalg_companion", lambda a: jsl.companion(a),
          lambda rng: (rng.uniform(1, 2, 4).astype(F32),), scipy.linalg.companion, grad=True),
    OpRow("scipy_linalg_fiedler", lambda a: jsl.fiedler(a), _one(_vec(4)),
          scipy.linalg.fiedler),
    OpRow("scipy_linalg_fiedler_companion", lambda a: jsl.fiedler_companion(a),
          lambda rng: (rng.uniform(1, 2, 6).astype(F32),), scipy.linalg.fiedler_companion,
          grad=True),
    OpRow("scipy_linalg_convolution_matrix_same", lambda a: jsl.convolution_matrix(a, 5, "same"),
          _one(_vec(3)), lambda a: scipy.linalg.convolution_matrix(a, 5, "same"), grad=True),
    OpRow("scipy_linalg_convolution_matrix_valid",
          lambda a: jsl.convolution_matrix(a, 3, "valid"), _one(_vec(5)),
          lambda a: scipy.linalg.convolution_matrix(a, 3, "valid"), grad=True),
    OpRow("scipy_linalg_block_diag", lambda a, b: jsl.block_diag(a, b),
          _pair(_vec((2, 3)), _vec((3, 1))), scipy.linalg.block_diag, grad=True),
]

# The Schur family: lax.linalg.hessenberg (LAPACK gehrd's packed output, so
# compared entry for entry), lax.linalg.schur as sign-free products, and the
# scipy functions built on them.


def _gehrd(a):
  packed, taus, _ = scipy.linalg.lapack.sgehrd(a)
  return packed, taus[:a.shape[-1] - 1]


def _schur_products(a):
  t, z = lax_linalg.schur(a)
  return z @ t @ jnp.swapaxes(z, -1, -2), jnp.swapaxes(z, -1, -2) @ z, jnp.tril(t, -2)


def _np_schur_products(a):
  return a, np.eye(a.shape[-1], dtype=a.dtype), np.zeros_like(a)


ROWS += [
    OpRow("lax_linalg_hessenberg", lambda a: lax_linalg.hessenberg(a), _one(_vec((5, 5))),
          _gehrd, compile=False, atol=1e-5, rtol=1e-5),
    OpRow("lax_linalg_schur", _schur_products, _one(_vec((5, 5))), _np_schur_products,
          compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_hessenberg", lambda a: jsl.hessenberg(a, calc_q=True),
          _one(_vec((5, 5))),
          lambda a: tuple(np.asarray(x, F32) for x in scipy.linalg.hessenberg(a, calc_q=True)),
          compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_schur_eigenvalues",
          lambda a: jnp.sort(jnp.real(jnp.diagonal(jsl.schur(a, output="complex")[0]))),
          _one(_spd()),
          lambda a: np.sort(np.linalg.eigvalsh(a.astype(np.float64))).astype(F32),
          compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_rsf2csf", lambda t, z: jsl.rsf2csf(t, z),
          lambda rng: tuple(x.astype(F32) for x in scipy.linalg.schur(
              rng.standard_normal((4, 4)))),
          lambda t, z: tuple(np.asarray(x, np.complex64) for x in scipy.linalg.rsf2csf(t, z)),
          vmap=False, compile=False, atol=1e-4, rtol=1e-4),
    OpRow("scipy_linalg_sqrtm", lambda a: jsl.sqrtm(a), _one(_spd(4)),
          lambda a: np.asarray(scipy.linalg.sqrtm(a.astype(np.float64)), np.complex64),
          compile=False, atol=1e-5, rtol=1e-5),
    OpRow("scipy_linalg_funm_exp", lambda a: jsl.funm(a, jnp.exp), _one(_vec((4, 4))),
          lambda a: np.asarray(scipy.linalg.expm(a.astype(np.float64)), np.complex64),
          vmap=False, compile=False, atol=1e-4, rtol=1e-4),
    OpRow("scipy_linalg_solve_sylvester", lambda a, b, c: jsl.solve_sylvester(a, b, c),
          lambda rng: (_general((4, 4))(rng), _general((3, 3))(rng), _vec((4, 3))(rng)),
          lambda a, b, c: np.asarray(scipy.linalg.solve_sylvester(a, b, c), F32),
          compile=False, atol=1e-4, rtol=1e-4),
]
