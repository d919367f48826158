"""The eager ``lu``, ``triangular_solve``, ``hessenberg``, ``schur``,
``householder_product``, ``ormqr``, ``tridiagonal`` and ``tridiagonal_solve``
impls on LAPACK (``primitives/linalg/lapack.py``: getrf, trsm, gehrd, gees,
orgqr, ormqr, sytrd, gtsv of the scipy-openblas32 library) against SciPy's LAPACK and the NumPy
kernels they replace, in every LAPACK type, batched, on non-contiguous and
Fortran-ordered operands, with JAX's results on singular and non-finite
input; and the NumPy fallback when the library is off."""
import os
import subprocess
import sys

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax.lax import linalg as lax_linalg
from openjax._src.primitives.linalg import lapack
from tests.test_eager_linalg_kernels import DTYPES, _check_schur_form, _rand, _tol, _x64

scipy_linalg = pytest.importorskip("scipy.linalg")
pytestmark = pytest.mark.skipif(not lapack.available(), reason="scipy-openblas32 is missing")

@pytest.fixture
def calls(monkeypatch):
  """Counts the LAPACK kernels' calls (by name)."""
  counts = {}
  for name in ("getrf", "trsm", "gehrd", "gees", "orgqr", "ormqr", "sytrd", "gtsv"):
    def spy(*args, _name=name, _fn=getattr(lapack, name), **kwargs):
      counts[_name] = counts.get(_name, 0) + 1
      return _fn(*args, **kwargs)
    monkeypatch.setattr(lapack, name, spy)
  return counts


def _numpy_path(monkeypatch, fn):
  with monkeypatch.context() as m:
    m.setattr(lapack, "available", lambda: False)
    return fn()


# ---------------------------------------------------------------------- lu
def _check_lu(a, lu, pivots, perm, dtype):
  getrf = scipy_linalg.get_lapack_funcs("getrf", (a,))
  lu_ref, piv_ref, _ = getrf(a)
  k = min(a.shape)
  np.testing.assert_array_equal(pivots, piv_ref[:k])
  np.testing.assert_allclose(lu, lu_ref, rtol=_tol(dtype), atol=_tol(dtype))
  want = np.arange(a.shape[0])
  for j, p in enumerate(piv_ref[:k]):
    want[[j, p]] = want[[p, j]]
  np.testing.assert_array_equal(perm, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(8, 8), (33, 33), (3, 7), (7, 3), (4, 6, 6), (2, 3, 5, 5),
                                   (1, 1)])
def test_lu_is_getrf(dtype, shape, calls, monkeypatch):
  a = _rand(shape, dtype, seed=sum(shape))
  with _x64(dtype):
    outs = [np.asarray(r) for r in lax_linalg.lu(a)]
    old = _numpy_path(monkeypatch, lambda: [np.asarray(r) for r in lax_linalg.lu(a)])
  assert calls == {"getrf": 1}
  lu, pivots, perm = outs
  assert lu.dtype == a.dtype and pivots.dtype == perm.dtype == np.int32
  flat = a.reshape(-1, *shape[-2:])
  for i, m in enumerate(flat):
    _check_lu(m, lu.reshape(flat.shape)[i], pivots.reshape(len(flat), -1)[i],
              perm.reshape(len(flat), -1)[i], dtype)
  # The same factors as the NumPy kernels, the same pivots.
  np.testing.assert_allclose(lu, old[0], rtol=_tol(dtype), atol=_tol(dtype))
  np.testing.assert_array_equal(pivots, old[1])
  np.testing.assert_array_equal(perm, old[2])


@pytest.mark.parametrize("layout", ["fortran", "strided", "transposed"])
def test_lu_of_non_contiguous_operands(layout, calls):
  base = _rand((12, 10), np.float64, seed=1)
  a = {"fortran": np.asfortranarray(base[:10]), "strided": base[::2, ::2][:5, :5],
       "transposed": base[:10].T}[layout]
  with jax.enable_x64():
    lu, pivots, perm = (np.asarray(r) for r in lax_linalg.lu(a))
  _check_lu(np.ascontiguousarray(a), lu, pivots, perm, np.float64)
  # The kernel itself on the views (no copy on the way in).
  lu_k, piv_k = lapack.getrf(a[None] if layout != "transposed" else base[None, :10].swapaxes(1, 2))
  np.testing.assert_allclose(lu_k[0], lu, atol=1e-12)
  np.testing.assert_array_equal(piv_k[0], pivots)


def test_lu_of_singular_and_non_finite_matrices():
  # JAX: a singular matrix factors (zero pivots kept), NaN spreads; no error.
  with jax.enable_x64():
    lu, pivots, perm = (np.asarray(r) for r in lax_linalg.lu(np.zeros((3, 3))))
    assert not lu.any() and pivots.tolist() == [0, 1, 2] and perm.tolist() == [0, 1, 2]
    lu, pivots, perm = (np.asarray(r) for r in lax_linalg.lu(np.array([[1.0, np.nan],
                                                                       [2.0, 3.0]])))
  assert lu[0].tolist() == [2.0, 3.0] and lu[1, 0] == 0.5 and np.isnan(lu[1, 1])
  assert pivots.tolist() == [1, 1] and perm.tolist() == [1, 0]


def test_lu_of_half_precision_and_empty(calls):
  a = _rand((5, 5), np.float32, seed=2)
  lu, pivots, _ = lax_linalg.lu(a.astype(np.float16))
  assert lu.dtype == np.float16
  np.testing.assert_array_equal(np.asarray(pivots), np.asarray(lax_linalg.lu(a)[1]))
  lu, pivots, perm = lax_linalg.lu(np.zeros((2, 0, 3), np.float32))
  assert lu.shape == (2, 0, 3) and pivots.shape == (2, 0) and perm.shape == (2, 0)


def test_many_small_matrices_stay_in_the_vectorised_kernel(calls):
  # 200 3x3 matrices: NumPy steps over the batch beat 200 LAPACK calls.
  a = _rand((200, 3, 3), np.float32, seed=3)
  lu, pivots, _ = (np.asarray(r) for r in lax_linalg.lu(a))
  assert "getrf" not in calls
  for i in (0, 199):
    _check_lu(a[i], lu[i], pivots[i], np.asarray(lax_linalg.lu(a[i])[2]), np.float32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_det_and_slogdet_through_getrf(dtype, calls):
  a = _rand((3, 6, 6), dtype, seed=4)
  with _x64(dtype):
    det = np.asarray(jnp.linalg.det(a))
    sign, logdet = (np.asarray(r) for r in jnp.linalg.slogdet(a))
  assert calls.get("getrf", 0) >= 2
  np.testing.assert_allclose(det, np.linalg.det(a), rtol=100 * _tol(dtype))
  want_sign, want_log = np.linalg.slogdet(a)
  np.testing.assert_allclose(sign, want_sign, rtol=100 * _tol(dtype))
  np.testing.assert_allclose(logdet, want_log, rtol=100 * _tol(dtype))


# -------------------------------------------------------- triangular_solve
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left_side", [False, True])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("transpose_a,conjugate_a", [(False, False), (True, False), (True, True),
                                                     (False, True)])
@pytest.mark.parametrize("unit_diagonal", [False, True])
def test_triangular_solve_is_trsm(dtype, left_side, lower, transpose_a, conjugate_a,
                                  unit_diagonal, calls, monkeypatch):
  n, k = 6, 4
  a = (_rand((2, n, n), dtype, seed=5) + 3 * np.eye(n)).astype(dtype)
  b = _rand((2, n, k) if left_side else (2, k, n), dtype, seed=6)
  params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
  with _x64(dtype):
    x = np.asarray(lax_linalg.triangular_solve(a, b, **params))
    old = _numpy_path(monkeypatch,
                      lambda: np.asarray(lax_linalg.triangular_solve(a, b, **params)))
  assert calls == {"trsm": 1} and x.dtype == a.dtype and x.shape == b.shape
  for i in range(2):
    t = np.tril(a[i]) if lower else np.triu(a[i])
    if unit_diagonal:
      np.fill_diagonal(t, 1)
    if conjugate_a and np.dtype(dtype).kind == "c":
      t = t.conj()
    if transpose_a:
      t = t.T
    np.testing.assert_allclose(t @ x[i] if left_side else x[i] @ t, b[i],
                               rtol=10 * _tol(dtype), atol=10 * _tol(dtype))
  np.testing.assert_allclose(x, old, rtol=10 * _tol(dtype), atol=10 * _tol(dtype))


def test_triangular_solve_of_views_and_zero_pivots(calls):
  rng = np.random.default_rng(7)
  big = np.tril(rng.standard_normal((80, 80))) + 9 * np.eye(80)
  a = np.asfortranarray(big[::2, ::2])          # 40x40, column-major
  b = rng.standard_normal((7, 40)).T            # a transposed view
  with jax.enable_x64():
    x = np.asarray(lax_linalg.triangular_solve(a, b, left_side=True, lower=True))
  np.testing.assert_allclose(x, scipy_linalg.solve_triangular(a, b, lower=True), rtol=1e-10)
  x = lapack.trsm(a[None], b[None], left_side=True, lower=True, transpose_a=False,
                  conjugate_a=False, unit_diagonal=False)
  np.testing.assert_allclose(x[0], scipy_linalg.solve_triangular(a, b, lower=True), rtol=1e-10)
  # JAX (trsm): a zero on the diagonal divides by zero.
  with jax.enable_x64():
    x = np.asarray(lax_linalg.triangular_solve(np.array([[0.0, 0.0], [1.0, 1.0]]),
                                               np.ones((2, 2)), left_side=True, lower=True))
  np.testing.assert_array_equal(x, [[np.inf, np.inf], [-np.inf, -np.inf]])
  empty = lax_linalg.triangular_solve(np.ones((2, 0, 0)), np.ones((2, 0, 3)), left_side=True)
  assert empty.shape == (2, 0, 3)


# -------------------------------------------------------------- hessenberg
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 2), (7, 7), (3, 9, 9), (40, 40)])
def test_hessenberg_is_gehrd(dtype, shape, calls, monkeypatch):
  a = _rand(shape, dtype, seed=sum(shape))
  with _x64(dtype):
    packed, taus = (np.asarray(r) for r in lax_linalg.hessenberg(a))
    old = _numpy_path(monkeypatch, lambda: [np.asarray(r) for r in lax_linalg.hessenberg(a)])
  assert calls == {"gehrd": 1} and packed.dtype == taus.dtype == a.dtype
  n = shape[-1]
  gehrd = scipy_linalg.get_lapack_funcs("gehrd", (a,))
  flat_a, flat_p, flat_t = a.reshape(-1, n, n), packed.reshape(-1, n, n), taus.reshape(-1, n - 1)
  scale = 10 * _tol(dtype) * np.sqrt(n)
  for i in range(len(flat_a)):
    packed_ref, taus_ref, _ = gehrd(flat_a[i])
    np.testing.assert_allclose(flat_p[i], packed_ref, atol=scale)
    np.testing.assert_allclose(flat_t[i], taus_ref[:n - 1], atol=scale)
  np.testing.assert_allclose(packed, old[0], atol=scale)
  np.testing.assert_allclose(taus, old[1], atol=scale)


def test_hessenberg_of_small_and_empty_matrices():
  packed, taus = lax_linalg.hessenberg(np.ones((3, 1, 1), np.float32))
  assert packed.shape == (3, 1, 1) and taus.shape == (3, 0)
  packed, taus = lax_linalg.hessenberg(np.ones((0, 4, 4), np.float32))
  assert packed.shape == (0, 4, 4) and taus.shape == (0, 3)


# ------------------------------------------------------------------ schur
def _check_gees_form(a, t, z, tol, standardised=True):
  """gees' Schur form, to ``tol`` per row (its error grows with n)."""
  _check_schur_form(a, t, z, tol * a.shape[-1], standardised)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 2), (5, 5), (4, 12, 12), (40, 40)])
def test_schur_is_gees(dtype, shape, calls):
  a = _rand(shape, dtype, seed=sum(shape))
  with _x64(dtype):
    t, z = (np.asarray(r) for r in lax_linalg.schur(a))
    t_only, = lax_linalg.schur(a, compute_schur_vectors=False)
  assert calls == {"gees": 2} and t.dtype == z.dtype == a.dtype
  n = shape[-1]
  for i, (ai, ti, zi) in enumerate(zip(a.reshape(-1, n, n), t.reshape(-1, n, n),
                                       z.reshape(-1, n, n))):
    _check_gees_form(ai, ti, zi, _tol(dtype))
    # gees in the operand's own precision (JAX's CPU kernel): its
    # eigenvalues in its order on the diagonal.
    t_ref = scipy_linalg.schur(ai)[0]
    np.testing.assert_allclose(np.diag(ti), np.diag(t_ref), atol=100 * _tol(dtype) * n)
  np.testing.assert_allclose(np.asarray(t_only), t, atol=100 * _tol(dtype))


def test_schur_of_non_finite_and_defective_matrices():
  rng = np.random.default_rng(3)
  q = np.linalg.qr(rng.standard_normal((6, 6)))[0]
  jordan = q @ (np.eye(6) * 2 + np.eye(6, k=1)) @ q.T
  a = np.stack([jordan, np.full((6, 6), np.nan), rng.standard_normal((6, 6))])
  with jax.enable_x64():
    t, z = (np.asarray(r) for r in lax_linalg.schur(a))
  assert np.isnan(t[1]).all() and np.isnan(z[1]).all()   # gees' info > 0: NaNs, as JAX
  for i in (0, 2):
    _check_gees_form(a[i], t[i], z[i], 1e-10)


def test_schur_empty_and_one_by_one():
  t, z = lax_linalg.schur(np.full((2, 1, 1), 3.0, np.float32))
  assert np.asarray(t).tolist() == [[[3.0]], [[3.0]]] and np.asarray(z).tolist() == [[[1.0]]] * 2
  t, z = lax_linalg.schur(np.ones((0, 3, 3), np.float32))
  assert t.shape == z.shape == (0, 3, 3)


# ------------------------------------------------------------ orgqr, ormqr
def _reflectors(shape, dtype, seed):
  """A batch of geqrf outputs (packed reflectors, taus) from SciPy."""
  a = _rand(shape, dtype, seed)
  geqrf = scipy_linalg.get_lapack_funcs("geqrf", (a[0],))
  outs = [geqrf(m)[:2] for m in a]
  return np.stack([o[0] for o in outs]), np.stack([o[1] for o in outs])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,k", [((2, 7, 5), 5), ((3, 6, 6), 4), ((1, 40, 33), 33)])
def test_householder_product_is_orgqr(dtype, shape, k, calls, monkeypatch):
  a, taus = _reflectors(shape, dtype, seed=9)
  taus = taus[:, :k]
  with _x64(dtype):
    q = np.asarray(lax_linalg.householder_product(a, taus))
    old = _numpy_path(monkeypatch, lambda: np.asarray(lax_linalg.householder_product(a, taus)))
  assert calls == {"orgqr": 1} and q.dtype == a.dtype and q.shape == a.shape
  orgqr = scipy_linalg.get_lapack_funcs("ungqr" if np.dtype(dtype).kind == "c" else "orgqr",
                                        (a[0],))
  for i in range(shape[0]):
    np.testing.assert_allclose(q[i], orgqr(a[i], taus[i])[0], atol=10 * _tol(dtype))
  np.testing.assert_allclose(q, old, atol=10 * _tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [True, False])
def test_ormqr_is_lapack_ormqr(dtype, left, transpose, calls, monkeypatch):
  a, taus = _reflectors((2, 6, 4), dtype, seed=10)
  c = _rand((2, 6, 3) if left else (2, 3, 6), dtype, seed=11)
  with _x64(dtype):
    out = np.asarray(lax_linalg.ormqr(a, taus, c, left=left, transpose=transpose))
    old = _numpy_path(monkeypatch, lambda: np.asarray(
        lax_linalg.ormqr(a, taus, c, left=left, transpose=transpose)))
  assert calls == {"ormqr": 1} and out.dtype == c.dtype and out.shape == c.shape
  complex_kind = np.dtype(dtype).kind == "c"
  ormqr = scipy_linalg.get_lapack_funcs("unmqr" if complex_kind else "ormqr", (a[0],))
  trans = ("C" if complex_kind else "T") if transpose else "N"
  for i in range(2):
    want = ormqr("L" if left else "R", trans, a[i], taus[i], c[i], max(1, 64 * 6))[0]
    np.testing.assert_allclose(out[i], want, atol=10 * _tol(dtype))
  np.testing.assert_allclose(out, old, atol=10 * _tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (3, 8, 8), (40, 40)])
def test_tridiagonal_is_sytrd(dtype, lower, shape, calls, monkeypatch):
  a = _rand(shape, dtype, seed=12)
  with _x64(dtype):
    outs = [np.asarray(r) for r in lax_linalg.tridiagonal(a, lower=lower)]
    old = _numpy_path(monkeypatch, lambda: [np.asarray(r)
                                            for r in lax_linalg.tridiagonal(a, lower=lower)])
  assert calls == {"sytrd": 1}
  real = np.finfo(dtype).dtype
  assert [o.dtype for o in outs] == [np.dtype(dtype), real, real, np.dtype(dtype)]
  complex_kind = np.dtype(dtype).kind == "c"
  name = "hetrd" if complex_kind else "sytrd"
  sytrd, query = scipy_linalg.get_lapack_funcs((name, name + "_lwork"), (a,))
  n = shape[-1]
  batch = int(np.prod(shape[:-2]))
  flat = [o.reshape(batch, *o.shape[len(shape) - 2:]) for o in outs]
  tol = 10 * _tol(dtype) * np.sqrt(n)
  for i, m in enumerate(a.reshape(-1, n, n)):
    # The optimal workspace, as JAX's (the blocked code: with a short one
    # the unblocked code also drops the imaginary part of a diagonal entry
    # the blocked code leaves in arr, e.g. the last of a 40x40 complex64
    # upper reduction; JAX 0.10.2 keeps it).
    lwork = max(1, int(query(n, lower=int(lower))[0].real))
    want = sytrd(m, lower=int(lower), lwork=lwork)[:4]
    for got, ref in zip(flat, want):
      np.testing.assert_allclose(got[i], ref[:got.shape[-1]] if ref.ndim == 1 else ref,
                                 atol=tol)
  # The NumPy path's arr holds the diagonal as d (real).
  outs[0] = outs[0].copy()
  idx = np.arange(n)
  outs[0][..., idx, idx] = outs[1]
  for got, ref in zip(outs, old):
    np.testing.assert_allclose(got, ref, atol=tol)


# ------------------------------------------------------- tridiagonal_solve
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (2, 5, 2), (300, 4)])
def test_tridiagonal_solve_is_gtsv(dtype, shape, calls, monkeypatch):
  *batch, m, k = shape
  dl, d, du = (_rand((*batch, m), dtype, seed=s) for s in (13, 14, 15))
  b = _rand(shape, dtype, seed=16)
  with _x64(dtype):
    x = np.asarray(lax_linalg.tridiagonal_solve(dl, d, du, b))
    old = _numpy_path(monkeypatch,
                      lambda: np.asarray(lax_linalg.tridiagonal_solve(dl, d, du, b)))
  assert calls == {"gtsv": 1} and x.dtype == b.dtype and x.shape == b.shape
  gtsv = scipy_linalg.get_lapack_funcs("gtsv", (b,))
  flat = [v.reshape(-1, m) for v in (dl, d, du)]
  for i, (rhs, xi) in enumerate(zip(b.reshape(-1, m, k), x.reshape(-1, m, k))):
    want = (rhs / flat[1][i][:, None] if m == 1   # SciPy's gtsv takes no 1x1 system
            else gtsv(flat[0][i, 1:], flat[1][i], flat[2][i, :-1], rhs)[3])
    np.testing.assert_allclose(xi, want, rtol=100 * _tol(dtype), atol=100 * _tol(dtype))
  np.testing.assert_allclose(x, old, rtol=100 * _tol(dtype), atol=100 * _tol(dtype))


def test_tridiagonal_solve_of_singular_systems_and_perturb_singular(calls):
  # JAX: a singular system gives NaNs; only that one of a batch.
  dl = np.array([[0.0, 1, 1], [0, 1, 1]], np.float32)
  d = np.array([[1.0, 1, 0], [4, 4, 4]], np.float32)
  du = np.array([[0.0, 0, 0], [1, 1, 0]], np.float32)
  x = np.asarray(lax_linalg.tridiagonal_solve(dl, d, du, np.ones((2, 3, 2), np.float32)))
  assert np.isnan(x[0]).all() and np.isfinite(x[1]).all()
  a1 = np.diag(d[1]) + np.diag(dl[1, 1:], -1) + np.diag(du[1, :-1], 1)
  np.testing.assert_allclose(a1 @ x[1], np.ones((3, 2)), rtol=1e-6)
  # perturb_singular keeps its own kernel (LAPACK lagtf/lagts' rules).
  calls.clear()
  x = np.asarray(lax_linalg.tridiagonal_solve(dl, d, du, np.ones((2, 3, 2), np.float32),
                                              perturb_singular=True))
  assert np.isfinite(x).all() and not calls


# --------------------------------------------------------------- fallback
def test_kernels_fall_back_to_numpy_without_the_library(calls, monkeypatch):
  a = _rand((6, 6), np.float64, seed=8)
  monkeypatch.setattr(lapack, "available", lambda: False)
  with jax.enable_x64():
    lu, pivots, _ = (np.asarray(r) for r in lax_linalg.lu(a))
    x = np.asarray(lax_linalg.triangular_solve(lu, a, left_side=True, lower=False))
    packed, _ = lax_linalg.hessenberg(a)
    t, z = (np.asarray(r) for r in lax_linalg.schur(a))
  assert not calls
  _check_lu(a, lu, pivots, np.asarray(lax_linalg.lu(a)[2]), np.float64)
  np.testing.assert_allclose(np.triu(lu) @ x, a, atol=1e-10)
  _check_gees_form(a, t, z, 1e-10, standardised=False)


def test_host_blas_switch_also_turns_off_eager_lapack():
  code = ("import numpy as np, openjax as jax\n"
          "from openjax._src.primitives.linalg import lapack\n"
          "from openjax._src.runtime import host_blas\n"
          "print(lapack.available(), host_blas.available(),\n"
          "      np.asarray(jax.lax.linalg.lu(np.array([[1., 2.], [3., 4.]], np.float32))[1]))")
  env = dict(os.environ, OPENJAX_HOST_BLAS="0")
  out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       check=True, timeout=120)
  assert out.stdout.split() == ["False", "False", "[1", "1]"]
