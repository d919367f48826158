"""The rest of jax.lax.linalg (issue 17): eig, householder_product, ormqr,
tridiagonal, tridiagonal_solve, cholesky_update, symmetric_product, qdwh and
the algorithm enums. Values against SciPy's LAPACK wrappers (test-only) or
JAX 0.10.2's outputs stored in tests/data/lax_linalg_extra/ (generate.py),
eager, under jit (interpreted) and compiled with IREE; vmap against a loop;
derivatives against finite differences where JAX defines them."""
import pathlib

import numpy as np
import pytest
import scipy.linalg
from scipy.linalg import lapack

import openjax as jax
import openjax.numpy as jnp
import openjax.scipy.linalg as jsl
from openjax.lax import linalg as lax_linalg
from openjax.test_util import check_grads

FIXTURES = np.load(pathlib.Path(__file__).parent / "data" / "lax_linalg_extra" / "jax_0_10_2.npz")
DTYPES = [np.float32, np.float64, np.complex64]
IDS = ["f32", "f64", "c64"]


def _tol(dtype):
  return 2e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


def _random(rng, shape, dtype):
  a = rng.standard_normal(shape)
  if np.dtype(dtype).kind == "c":
    a = a + 1j * rng.standard_normal(shape)
  return a.astype(dtype)


def _compiled(f, *args):
  """``jit(f)(*args)`` compiled by IREE (not interpreted)."""
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    out = jax.jit(f)(*args)
  leaves = jax.tree_util.tree_leaves(out)
  assert any(x._buffer is not None for x in leaves), "did not run compiled"
  return [np.asarray(x) for x in leaves]


def _interpreted(f, *args):
  return [np.asarray(x) for x in jax.tree_util.tree_leaves(jax.jit(f)(*args))]


def _eager(f, *args):
  return [np.asarray(x) for x in jax.tree_util.tree_leaves(f(*args))]


def _assert_all_close(got, want, tol):
  assert len(got) == len(want)
  for g, w in zip(got, want):
    assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
    np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def _lapack(name, dtype):
  prefix = {np.float32: "s", np.float64: "d", np.complex64: "c", np.complex128: "z"}
  return getattr(lapack, prefix[np.dtype(dtype).type] + name)


def _x64(dtype):
  return jax.enable_x64(np.dtype(dtype) in (np.float64, np.complex128))


# ------------------------------------------------------------------- enums
def test_enums_have_jax_members():
  assert {m.name: m.value for m in lax_linalg.EigImplementation} == \
      {"CUSOLVER": "cusolver", "MAGMA": "magma", "LAPACK": "lapack"}
  assert {m.name: m.value for m in lax_linalg.EighImplementation} == \
      {"QR": "qr", "JACOBI": "jacobi", "QDWH": "qdwh"}
  assert {m.name: m.value for m in lax_linalg.SvdAlgorithm} == \
      {"DEFAULT": "default", "QR": "QR", "JACOBI": "Jacobi", "POLAR": "polar",
       "DIVIDE_AND_CONQUER": "divide_and_conquer"}
  x = np.diag([1.0, 2.0]).astype(np.float32)
  v, w = lax_linalg.eigh(x, implementation=lax_linalg.EighImplementation.QR)
  np.testing.assert_allclose(w, [1, 2])
  s = lax_linalg.svd(x, compute_uv=False, algorithm=lax_linalg.SvdAlgorithm.DEFAULT)
  np.testing.assert_allclose(s, [2, 1])


# ----------------------------------------------------------- tridiagonal
def _sytrd(a, lower):
  name = "hetrd" if np.dtype(a.dtype).kind == "c" else "sytrd"
  c, d, e, tau, info = _lapack(name, a.dtype)(a, lower=int(lower))
  assert info == 0
  return [c, d, e, tau]


@pytest.mark.parametrize("lower", [True, False], ids=["lower", "upper"])
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_tridiagonal_matches_lapack(dtype, lower):
  a = _random(np.random.default_rng(0), (5, 5), dtype)
  with _x64(dtype):
    got = _eager(lambda x: lax_linalg.tridiagonal(x, lower=lower), a)
    _assert_all_close(got, _sytrd(a, lower), 10 * _tol(dtype))
    _assert_all_close(_interpreted(lambda x: lax_linalg.tridiagonal(x, lower=lower), a), got,
                      _tol(dtype))


@pytest.mark.parametrize("lower", [True, False], ids=["lower", "upper"])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64], ids=["f32", "c64"])
def test_tridiagonal_compiled(dtype, lower):
  a = _random(np.random.default_rng(1), (2, 4, 4), dtype)
  f = lambda x: lax_linalg.tridiagonal(x, lower=lower)   # noqa: E731
  _assert_all_close(_compiled(f, a), _eager(f, a), 10 * _tol(dtype))


def test_tridiagonal_reconstructs_the_matrix():
  # Q^H A Q = T with Q the product of the reflectors (householder_product).
  rng = np.random.default_rng(2)
  a = _random(rng, (5, 5), np.complex64)
  herm = np.tril(a) + np.tril(a, -1).conj().T
  herm[np.diag_indices(5)] = herm.diagonal().real
  arr, d, e, taus = lax_linalg.tridiagonal(a, lower=True)
  # The reflectors start below the subdiagonal: shift them into a
  # geqrf-shaped (n-1) x (n-1) block.
  q = np.eye(5, dtype=a.dtype)
  q[1:, 1:] = np.asarray(lax_linalg.householder_product(np.asarray(arr)[1:, :-1], taus))
  t = np.diag(np.asarray(d)) + np.diag(np.asarray(e), -1) + np.diag(np.asarray(e), 1)
  np.testing.assert_allclose(q.conj().T @ herm @ q, t, atol=2e-5)


def test_tridiagonal_vmap_and_errors():
  a = _random(np.random.default_rng(3), (3, 4, 4), np.float32)
  got = jax.vmap(lax_linalg.tridiagonal)(a)
  for i in range(3):
    _assert_all_close([np.asarray(g)[i] for g in got], _eager(lax_linalg.tridiagonal, a[i]),
                      1e-6)
  with pytest.raises(ValueError, match="square matrix"):
    lax_linalg.tridiagonal(np.zeros((3, 4), np.float32))
  with pytest.raises(NotImplementedError, match="tridiagonal"):
    jax.grad(lambda x: lax_linalg.tridiagonal(x)[1].sum())(a[0])


# ----------------------------------------------- householder_product, ormqr
def _geqrf(a):
  qr, tau, _, info = _lapack("geqrf", a.dtype)(a)
  assert info == 0
  return qr, tau


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_householder_product_matches_orgqr(dtype):
  a, taus = _geqrf(_random(np.random.default_rng(4), (6, 4), dtype))
  name = "ungqr" if np.dtype(dtype).kind == "c" else "orgqr"
  want, _, _ = _lapack(name, dtype)(a, taus)
  with _x64(dtype):
    got = _eager(lax_linalg.householder_product, a, taus)
    _assert_all_close(got, [want], 10 * _tol(dtype))
    _assert_all_close(_interpreted(lax_linalg.householder_product, a, taus), got, _tol(dtype))
    # Fewer reflectors than columns: the trailing ones act as the identity.
    want2, _, _ = _lapack(name, dtype)(a, taus[:2])
    _assert_all_close(_eager(lax_linalg.householder_product, a, taus[:2]), [want2],
                      10 * _tol(dtype))


@pytest.mark.parametrize("transpose", [False, True], ids=["N", "T"])
@pytest.mark.parametrize("left", [True, False], ids=["left", "right"])
@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_ormqr_matches_lapack(dtype, left, transpose):
  rng = np.random.default_rng(5)
  a, taus = _geqrf(_random(rng, (5, 3), dtype))
  c = _random(rng, (5, 2) if left else (2, 5), dtype)
  complex_ = np.dtype(dtype).kind == "c"
  trans = ("C" if complex_ else "T") if transpose else "N"
  want, _, _ = _lapack("unmqr" if complex_ else "ormqr", dtype)(
      "L" if left else "R", trans, a, taus, c, lwork=64)
  f = lambda a_, t_, c_: lax_linalg.ormqr(a_, t_, c_, left=left, transpose=transpose)  # noqa
  with _x64(dtype):
    got = _eager(f, a, taus, c)
    _assert_all_close(got, [want], 10 * _tol(dtype))
    _assert_all_close(_interpreted(f, a, taus, c), got, _tol(dtype))


def test_ormqr_doc_example():
  # JAX's docstring: ormqr of jnp.linalg.qr's raw output equals Q @ c. The
  # raw mode is geqrf's output, here from LAPACK.
  a = np.array([[1., 2.], [3., 4.], [5., 6.]], np.float32)
  h, taus = _geqrf(a)
  q_times_c = lax_linalg.ormqr(h, taus, jnp.eye(3))
  q_direct, _ = np.linalg.qr(a, mode="complete")
  np.testing.assert_allclose(np.abs(q_times_c), np.abs(q_direct), atol=1e-5)
  np.testing.assert_allclose(q_times_c, lapack.sorgqr(np.pad(h, ((0, 0), (0, 1))), taus)[0],
                             atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64], ids=["f32", "c64"])
def test_householder_and_ormqr_compiled(dtype):
  rng = np.random.default_rng(6)
  a, taus = _geqrf(_random(rng, (5, 3), dtype))
  c = _random(rng, (2, 5), dtype)

  def f(a_, t_, c_):
    return (lax_linalg.householder_product(a_, t_),
            lax_linalg.ormqr(a_, t_, c_, left=False, transpose=True))
  _assert_all_close(_compiled(f, a, taus, c), _eager(f, a, taus, c), 10 * _tol(dtype))


def test_householder_vmap_and_errors():
  rng = np.random.default_rng(7)
  pairs = [_geqrf(_random(rng, (4, 3), np.float32)) for _ in range(3)]
  a = np.stack([p[0] for p in pairs])
  taus = np.stack([p[1] for p in pairs])
  got = jax.vmap(lax_linalg.householder_product)(a, taus)
  for i in range(3):
    np.testing.assert_allclose(got[i], lax_linalg.householder_product(a[i], taus[i]), atol=1e-6)
  c = rng.standard_normal((4, 2)).astype(np.float32)
  got = jax.vmap(lambda a_, t_: lax_linalg.ormqr(a_, t_, c), in_axes=(0, 0))(a, taus)
  for i in range(3):
    np.testing.assert_allclose(got[i], lax_linalg.ormqr(a[i], taus[i], c), atol=1e-6)
  with pytest.raises(ValueError, match="at least as many rows as columns"):
    lax_linalg.householder_product(np.zeros((2, 3), np.float32), np.zeros(2, np.float32))
  with pytest.raises(ValueError, match="same number of rows"):
    lax_linalg.ormqr(a[0], taus[0], np.zeros((3, 2), np.float32))
  with pytest.raises(NotImplementedError, match="householder_product"):
    jax.grad(lambda x: lax_linalg.householder_product(x, taus[0]).sum())(a[0])


# ------------------------------------------------------- tridiagonal_solve
def _gtsv_inputs(rng, m, k, dtype, batch=()):
  dl, d, du = (_random(rng, (*batch, m), dtype) for _ in range(3))
  dl[..., 0] = 0
  du[..., -1] = 0
  return dl, d, du, _random(rng, (*batch, m, k), dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_tridiagonal_solve_matches_gtsv(dtype):
  rng = np.random.default_rng(8)
  dl, d, du, b = _gtsv_inputs(rng, 7, 3, dtype)
  d[0] = 0     # needs a row interchange
  *_, want, info = _lapack("gtsv", dtype)(dl[1:], d, du[:-1], b)
  assert info == 0
  with _x64(dtype):
    got = _eager(lax_linalg.tridiagonal_solve, dl, d, du, b)
    _assert_all_close(got, [want], 10 * _tol(dtype))
    _assert_all_close(_interpreted(lax_linalg.tridiagonal_solve, dl, d, du, b), got,
                      _tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64], ids=["f32", "c64"])
def test_tridiagonal_solve_compiled(dtype):
  rng = np.random.default_rng(9)
  dl, d, du, b = _gtsv_inputs(rng, 6, 2, dtype, batch=(2,))
  d[0, 0] = 0
  dl_s, d_s, du_s = dl.copy(), d.copy(), du.copy()
  d_s[1], dl_s[1] = 0, 0     # the second system is singular

  def f(dl_, d_, du_, b_):
    return (lax_linalg.tridiagonal_solve(dl_, d_, du_, b_),
            lax_linalg.tridiagonal_solve(dl_, d_, du_, b_, perturb_singular=True))
  got = _compiled(f, dl_s, d_s, du_s, b)
  want = _eager(f, dl_s, d_s, du_s, b)
  _assert_all_close(got[:1], want[:1], 10 * _tol(dtype))
  assert np.isnan(got[0][1]).all() and np.isfinite(got[0][0]).all()
  assert np.isfinite(got[1]).all()
  np.testing.assert_allclose(got[1], want[1], rtol=1e-3)
  _assert_all_close(_compiled(lax_linalg.tridiagonal_solve, dl, d, du, b),
                    _eager(lax_linalg.tridiagonal_solve, dl, d, du, b), 10 * _tol(dtype))


def test_tridiagonal_solve_singular():
  f = FIXTURES
  dl, _, du = f["gtsv_pert_args"]
  b = f["gtsv_pert_b"]
  with jax.enable_x64():
    out = np.asarray(lax_linalg.tridiagonal_solve(dl, np.zeros(6), du, b))
    np.testing.assert_array_equal(out, f["gtsv_sing"])         # NaNs, as JAX
    pert = np.asarray(lax_linalg.tridiagonal_solve(dl, np.zeros(6), du, b,
                                                   perturb_singular=True))
  np.testing.assert_array_equal(pert, f["gtsv_sing_pert"])
  # A regular system is barely changed by perturb_singular (which pivots
  # by scaled sizes, as JAX's kernel).
  rng = np.random.default_rng(10)
  dl, d, du, b = _gtsv_inputs(rng, 5, 2, np.float32)
  np.testing.assert_allclose(lax_linalg.tridiagonal_solve(dl, d + 3, du, b, perturb_singular=True),
                             lax_linalg.tridiagonal_solve(dl, d + 3, du, b), rtol=1e-5)


@pytest.mark.parametrize("name", ["f32", "f64", "c128", "m1"])
def test_tridiagonal_solve_perturbed_matches_jax(name):
  # Batches of singular and near-singular systems (zero diagonals, a 1e-30
  # pivot): JAX's CPU kernel's bits for real dtypes, eager; compiled to
  # rounding (real dtypes; a complex zero pivot's sign, which picks the
  # perturbation's, can come out otherwise in compiled code).
  f = FIXTURES
  diags, b, want = f[f"pert_{name}_diags"], f[f"pert_{name}_b"], f[f"pert_{name}_x"]

  def solve(dl, d, du, b_):
    return lax_linalg.tridiagonal_solve(dl, d, du, b_, perturb_singular=True)
  with _x64(want.dtype if name != "m1" else np.float64):
    got = np.asarray(solve(*diags, b))
    assert np.isfinite(got).all()
    if want.dtype.kind == "c":
      np.testing.assert_allclose(got, want, rtol=1e-14)
    else:
      np.testing.assert_array_equal(got, want)
      if name != "m1":
        np.testing.assert_allclose(_compiled(solve, *diags, b)[0], want,
                                   rtol=1e-5 if name == "f32" else 1e-12)


def test_tridiagonal_solve_grads_and_transpose():
  rng = np.random.default_rng(11)
  with jax.enable_x64():
    dl, d, du, b = _gtsv_inputs(rng, 5, 2, np.float64)
    d = d + 4
    check_grads(lax_linalg.tridiagonal_solve, (dl, d, du, b), order=2, modes=("fwd", "rev"))
    # Linear in b: linear_transpose gives A^-T ct.
    ct = rng.standard_normal((5, 2))
    transpose = jax.linear_transpose(lambda b_: lax_linalg.tridiagonal_solve(dl, d, du, b_), b)
    dense = np.diag(d) + np.diag(dl[1:], -1) + np.diag(du[:-1], 1)
    np.testing.assert_allclose(transpose(ct)[0], np.linalg.solve(dense.T, ct), rtol=1e-10)


def test_tridiagonal_solve_vmap():
  rng = np.random.default_rng(12)
  dl, d, du, b = _gtsv_inputs(rng, 5, 2, np.float32, batch=(3,))
  d = d + 3
  got = jax.vmap(lax_linalg.tridiagonal_solve)(dl, d, du, b)
  for i in range(3):
    np.testing.assert_allclose(got[i], lax_linalg.tridiagonal_solve(dl[i], d[i], du[i], b[i]),
                               rtol=1e-5, atol=1e-6)
  # Shared matrix, batched right-hand sides (folded into b's columns), at axis 2.
  bs = np.moveaxis(b, 0, 2)                                  # [m, k, B]
  got = jax.vmap(lambda b_: lax_linalg.tridiagonal_solve(dl[0], d[0], du[0], b_),
                 in_axes=2, out_axes=2)(bs)
  for i in range(3):
    np.testing.assert_allclose(got[..., i], lax_linalg.tridiagonal_solve(dl[0], d[0], du[0],
                                                                         b[i]), rtol=1e-5,
                               atol=1e-6)
  with pytest.raises(TypeError, match="same shape"):
    lax_linalg.tridiagonal_solve(dl[0], d[0, :4], du[0], b[0])


# --------------------------------------------------------- cholesky_update
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_cholesky_update(dtype):
  rng = np.random.default_rng(13)
  a = rng.standard_normal((5, 5))
  a = a @ a.T + 5 * np.eye(5)
  r = np.linalg.cholesky(a).T.astype(dtype)
  w = rng.standard_normal(5).astype(dtype)
  want = np.linalg.cholesky(a + np.outer(w, w)).T
  with _x64(dtype):
    got = _eager(lax_linalg.cholesky_update, r, w)
    np.testing.assert_allclose(got[0], want, rtol=10 * _tol(dtype), atol=10 * _tol(dtype))
    assert got[0].dtype == dtype
    _assert_all_close(_interpreted(lax_linalg.cholesky_update, r, w), got, _tol(dtype))
  _assert_all_close(_compiled(lax_linalg.cholesky_update, r.astype(np.float32),
                              w.astype(np.float32)),
                    _eager(lax_linalg.cholesky_update, r.astype(np.float32),
                           w.astype(np.float32)), 1e-5)
  # vmap against a loop, and the zero update.
  rs, ws = np.stack([r, 2 * r]), np.stack([w, 0 * w])
  got = jax.vmap(lax_linalg.cholesky_update)(rs, ws)
  for i in range(2):
    np.testing.assert_allclose(got[i], lax_linalg.cholesky_update(rs[i], ws[i]), rtol=1e-6)
  np.testing.assert_allclose(got[1], 2 * r, rtol=1e-6)
  batch = (rs.astype(np.float32), ws.astype(np.float32))
  _assert_all_close(_compiled(lax_linalg.cholesky_update, *batch),
                    _eager(lax_linalg.cholesky_update, *batch), 1e-5)
  with pytest.raises(TypeError, match="cholesky_update"):
    lax_linalg.cholesky_update(r.astype(np.complex64), w.astype(np.complex64))
  with pytest.raises(ValueError, match="same size"):
    lax_linalg.cholesky_update(r, w[:4])


# ------------------------------------------------------- symmetric_product
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_symmetric_product(dtype):
  rng = np.random.default_rng(14)
  a = rng.standard_normal((2, 4, 3)).astype(dtype)
  c = rng.standard_normal((2, 4, 4)).astype(dtype)
  want = 1.5 * a @ np.swapaxes(a, -1, -2) - 0.5 * c
  with _x64(dtype):
    f = lambda a_, c_: lax_linalg.symmetric_product(a_, c_, alpha=1.5, beta=-0.5)  # noqa
    got = _eager(f, a, c)
    np.testing.assert_allclose(got[0], want, rtol=_tol(dtype), atol=_tol(dtype))
    sym = np.asarray(lax_linalg.symmetric_product(a, c, alpha=1.5, beta=-0.5,
                                                  symmetrize_output=True))
    low = np.tril(want)
    np.testing.assert_allclose(sym, low + np.swapaxes(np.tril(want, -1), -1, -2),
                               rtol=_tol(dtype), atol=_tol(dtype))
    _assert_all_close(_interpreted(f, a, c), got, _tol(dtype))
    if dtype == np.float64:
      check_grads(f, (a, c), order=2, modes=("fwd", "rev"))
  f32 = (a.astype(np.float32), c.astype(np.float32))
  _assert_all_close(_compiled(lambda a_, c_: lax_linalg.symmetric_product(a_, c_, alpha=1.5),
                              *f32),
                    _eager(lambda a_, c_: lax_linalg.symmetric_product(a_, c_, alpha=1.5), *f32),
                    1e-5)
  with pytest.raises(ValueError, match="symmetric_product"):
    lax_linalg.symmetric_product(a[0], c[0, :3, :3])


# --------------------------------------------------------------------- eig
def test_eig_matches_jax():
  f = FIXTURES
  with jax.enable_x64():
    w, vl, vr = (np.asarray(v) for v in lax_linalg.eig(f["eig_x"]))
  assert w.dtype == np.complex128
  np.testing.assert_allclose(w, f["eig_w"], rtol=1e-12)
  np.testing.assert_allclose(vr, f["eig_vr"], atol=1e-12)
  # Left eigenvectors: geev's normalisation (unit norm, real largest entry)
  # fixes them up to sign; compare them with their sign removed.
  np.testing.assert_allclose(vl.conj().T @ f["eig_x"], np.diag(w) @ vl.conj().T, atol=1e-12)
  np.testing.assert_allclose(np.linalg.norm(vl, axis=0), 1, rtol=1e-12)
  big = np.argmax(np.abs(vl), axis=0)
  assert np.all(vl[big, range(5)].imag == 0)
  sign = np.sign(vl[big, range(5)].real / f["eig_vl"][big, range(5)].real)
  np.testing.assert_allclose(vl * sign, f["eig_vl"], atol=1e-12)


@pytest.mark.parametrize("dtype", DTYPES, ids=IDS)
def test_eig_values_and_flags(dtype):
  rng = np.random.default_rng(15)
  x = _random(rng, (2, 4, 4), dtype)
  cdt = np.result_type(dtype, np.complex64)
  with _x64(dtype):
    w, vl, vr = (np.asarray(v) for v in lax_linalg.eig(x))
    assert w.dtype == vl.dtype == vr.dtype == cdt
    for i in range(2):
      want_w, want_vl, want_vr = scipy.linalg.eig(x[i], left=True, right=True)
      np.testing.assert_allclose(w[i], want_w, rtol=10 * _tol(dtype))
      np.testing.assert_allclose(x[i] @ vr[i], vr[i] * w[i], atol=10 * _tol(dtype))
      np.testing.assert_allclose(vl[i].conj().T @ x[i], w[i][:, None] * vl[i].conj().T,
                                 atol=10 * _tol(dtype))
    only_w = lax_linalg.eig(x, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    assert len(only_w) == 1
    np.testing.assert_allclose(only_w[0], w, rtol=_tol(dtype))
    w2, vr2 = lax_linalg.eig(x, compute_left_eigenvectors=False)
    np.testing.assert_allclose(vr2, vr, rtol=_tol(dtype))
    w3, vl3 = lax_linalg.eig(x, compute_right_eigenvectors=False)
    np.testing.assert_allclose(vl3, vl, atol=_tol(dtype))
    _assert_all_close(_interpreted(lax_linalg.eig, x), [w, vl, vr], _tol(dtype))
    # vmap against a loop
    got = jax.vmap(lambda m: lax_linalg.eig(m, compute_left_eigenvectors=False))(x)
    for i in range(2):
      _assert_all_close([np.asarray(g)[i] for g in got],
                        _eager(lambda m: lax_linalg.eig(m, compute_left_eigenvectors=False),
                               x[i]), _tol(dtype))


def test_eig_compiled_calls_the_host():
  x = _random(np.random.default_rng(16), (2, 3, 3), np.float32)

  def f(a):
    w, vl, vr = lax_linalg.eig(a * 2)
    return w + 1, vl, vr
  got = _compiled(f, x)
  _assert_all_close(got, _eager(f, x), 1e-5)
  text = jax.jit(f).lower(x).as_text()
  assert "openjax_host_" in text


def test_eig_failure_gives_nans():
  x = np.array([[[1.0, 2.0], [3.0, 4.0]], [[np.nan, 0.0], [0.0, 1.0]]], np.float32)
  w, vl, vr = (np.asarray(v) for v in lax_linalg.eig(x))
  assert np.isfinite(w[0]).all() and np.isnan(w[1]).all() and np.isnan(vr[1]).all()


def test_eig_eigenvalue_grads():
  f = FIXTURES
  x = f["eig_x"]

  def eigvals(a):
    return lax_linalg.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]
  with jax.enable_x64():
    g = jax.grad(lambda a: eigvals(a).real.sum() + 0.3 * eigvals(a).imag.sum())(x)
    np.testing.assert_allclose(g, f["eig_grad"], atol=1e-10)
    check_grads(lambda a: eigvals(a).real, (x,), order=2, modes=("fwd", "rev"))
    check_grads(lambda a: eigvals(a).imag, (x,), order=1, modes=("fwd", "rev"))


def test_eig_eigenvector_jvp():
  f = FIXTURES
  x = f["eig_x"]
  with jax.enable_x64():
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
      jax.jvp(lambda a: lax_linalg.eig(a)[2], (x,), (np.ones_like(x),))
    _, dvr = jax.jvp(lambda a: lax_linalg.eig(a, enable_eigvec_derivs=True)[2], (x,),
                     (np.ones_like(x),))
    np.testing.assert_allclose(dvr, f["eig_vr_jvp"], atol=1e-10)
    vl = np.asarray(lax_linalg.eig(x)[1])
    _, dvl = jax.jvp(lambda a: lax_linalg.eig(a, enable_eigvec_derivs=True)[1], (x,),
                     (np.ones_like(x),))
    big = np.argmax(np.abs(vl), axis=0)
    sign = np.sign(vl[big, range(5)].real / f["eig_vl"][big, range(5)].real)
    np.testing.assert_allclose(np.asarray(dvl) * sign, f["eig_vl_jvp"], atol=1e-10)
    # Against finite differences of geev's normalised eigenvectors, for the
    # real eigenvalues (0, 3, 4): the sign geev gives a complex pair's
    # vectors is not continuous in the matrix, so finite differences fail there.
    check_grads(lambda a: lax_linalg.eig(a, enable_eigvec_derivs=True,
                                         compute_left_eigenvectors=False)[1][:, (0, 3, 4)].real,
                (x,), order=1, modes=("fwd",))


def test_eig_rejects_gpu_implementations():
  x = np.eye(2, dtype=np.float32)
  with pytest.raises(ValueError, match="lapack"):
    lax_linalg.eig(x, implementation=lax_linalg.EigImplementation.CUSOLVER)
  with pytest.warns(DeprecationWarning, match="use_magma"):
    w, _, _ = lax_linalg.eig(x, use_magma=False)
  np.testing.assert_allclose(w, [1, 1])
  with pytest.raises(ValueError, match="square"):
    lax_linalg.eig(np.zeros((2, 3), np.float32))


# -------------------------------------------------------------------- qdwh
@pytest.mark.parametrize("name", ["f32", "f64", "c64"])
def test_qdwh_matches_jax(name):
  f = FIXTURES
  x = f[f"qdwh_{name}_x"]
  with _x64(x.dtype):
    u, h, iters, conv = lax_linalg.qdwh(x)
    assert np.asarray(u).dtype == x.dtype and np.asarray(h).dtype == x.dtype
    tol = 20 * _tol(x.dtype)
    np.testing.assert_allclose(u, f[f"qdwh_{name}_u"], atol=tol)
    np.testing.assert_allclose(h, f[f"qdwh_{name}_h"], atol=tol)
    assert int(iters) == int(f[f"qdwh_{name}_iters"]) and bool(conv)
    np.testing.assert_allclose(np.asarray(u) @ np.asarray(h), x, atol=tol)
    _, _, iters2, conv2 = lax_linalg.qdwh(x, max_iterations=2)
    assert int(iters2) == int(f[f"qdwh2_{name}_iters"])
    assert bool(conv2) == bool(f[f"qdwh2_{name}_conv"])


def test_qdwh_compiled_vmap_grad_and_errors():
  rng = np.random.default_rng(17)
  x = rng.standard_normal((5, 3)).astype(np.float32)
  got = _compiled(lambda a: lax_linalg.qdwh(a)[:2], x)     # unused iteration outputs
  u, h = np.asarray(lax_linalg.qdwh(x)[0]), np.asarray(lax_linalg.qdwh(x)[1])
  np.testing.assert_allclose(got[0], u, atol=1e-5)
  np.testing.assert_allclose(got[1], h, atol=1e-5)
  want_u, want_h = scipy.linalg.polar(x.astype(np.float64))
  np.testing.assert_allclose(u, want_u, atol=1e-5)
  np.testing.assert_allclose(h, want_h, atol=1e-5)
  xs = np.stack([x, 2 * x])
  us = jax.vmap(lambda a: lax_linalg.qdwh(a)[0])(xs)
  np.testing.assert_allclose(us[1], u, atol=1e-5)
  # Padded input with its true shape: the padding stays zero.
  padded = np.zeros((7, 4), np.float32)
  padded[:5, :3] = x
  up, hp, _, _ = lax_linalg.qdwh(padded, dynamic_shape=(5, 3))
  np.testing.assert_allclose(np.asarray(up)[:5, :3], u, atol=1e-5)
  np.testing.assert_allclose(np.asarray(hp)[:3, :3], h, atol=1e-5)
  np.testing.assert_array_equal(np.asarray(up)[5:], 0)
  with jax.enable_x64():
    xd = x.astype(np.float64)
    check_grads(lambda a: lax_linalg.qdwh(a)[0], (xd,), order=1, modes=("fwd", "rev"),
                atol=1e-5, rtol=1e-5)
  with pytest.raises(ValueError, match="M >= N"):
    lax_linalg.qdwh(x.T)


# ------------------------------------------------------- jnp.linalg.eig
def test_jnp_linalg_eig_traces_like_jax():
  # Once eager only (a NumPy call on concrete values); now lax.linalg.eig, so
  # jit, vmap and grad work and the jaxpr is JAX's.
  x = _random(np.random.default_rng(18), (3, 4, 4), np.float32)
  result = jnp.linalg.eig(x)
  assert type(result).__name__ == "EigResult"
  assert result.eigenvalues.dtype == np.complex64
  np.testing.assert_allclose(result.eigenvalues, np.linalg.eigvals(x), rtol=1e-5)
  np.testing.assert_allclose(jax.jit(jnp.linalg.eigvals)(x), np.linalg.eigvals(x), rtol=1e-5)
  got = jax.vmap(jnp.linalg.eig)(x)
  for i in range(3):
    np.testing.assert_allclose(got[1][i], jnp.linalg.eig(x[i])[1], atol=1e-6)
  eqn = jax.make_jaxpr(jnp.linalg.eigvals)(x[0]).jaxpr.eqns[0].params["jaxpr"].jaxpr.eqns[0]
  assert eqn.primitive.name == "eig"
  assert not eqn.params["compute_right_eigenvectors"]
  # d sum(Re w) / dA = I (the trace's derivative).
  np.testing.assert_allclose(jax.grad(lambda a: jnp.linalg.eigvals(a).real.sum())(x[0]),
                             np.eye(4), atol=1e-5)
  assert jnp.linalg.eig(np.eye(2, dtype=np.int32))[0].dtype == np.complex64


def test_scipy_polar_runs_qdwh():
  # jax.scipy.linalg.polar's default method is QDWH (lax.linalg.qdwh), with
  # its eps; side='left' applies it to the conjugate transpose.
  rng = np.random.default_rng(19)
  a = _random(rng, (5, 3), np.complex64)
  u, p = jsl.polar(a)
  u_q, h_q, _, _ = lax_linalg.qdwh(a)
  np.testing.assert_array_equal(u, u_q)
  np.testing.assert_array_equal(p, h_q)
  want_u, want_p = scipy.linalg.polar(a.astype(np.complex128))
  np.testing.assert_allclose(u, want_u, atol=1e-5)
  u_l, p_l = jsl.polar(a.T, side="left", eps=1e-6)
  want_u, want_p = scipy.linalg.polar(a.T.astype(np.complex128), side="left")
  np.testing.assert_allclose(u_l, want_u, atol=1e-5)
  np.testing.assert_allclose(p_l, want_p, atol=1e-5)
  u_s, p_s = jsl.polar(a, method="svd")
  np.testing.assert_allclose(u_s, u, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_tridiagonal_solve_scalar_and_batched_kernels_agree_bitwise(dtype):
  # One narrow system runs a scalar loop, a large batch the row-wise array
  # loop: the same operations, so the same bits (singular and perturbed too).
  rng = np.random.default_rng(20)
  dl, d, du, b = _gtsv_inputs(rng, 9, 1, dtype, batch=(20,))
  d[:, 0] = 0
  d[3], dl[3] = 0, 0
  for perturb in (False, True):
    batched = np.asarray(lax_linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=perturb))
    for i in (0, 3, 7):
      one = lax_linalg.tridiagonal_solve(dl[i], d[i], du[i], b[i], perturb_singular=perturb)
      np.testing.assert_array_equal(np.asarray(one), batched[i])


@pytest.mark.parametrize("shape", [(2, 4, 4), (3, 5, 5)])
def test_compiled_hessenberg_of_a_complex_batch(shape):
  # The first matrix's first tau came back 0 (IREE 3.13, the taus started
  # from a zero constant inside the loop over the batch).
  rng = np.random.default_rng(1)
  a = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
  _assert_all_close(_compiled(lax_linalg.hessenberg, a), _eager(lax_linalg.hessenberg, a), 1e-5)


def test_empty_and_one_by_one_inputs():
  # Shapes JAX accepts: an empty eig, no reflectors, no right-hand sides, 1x1.
  cases = [
      (lax_linalg.eig, (np.zeros((0, 0), np.float32),)),
      (lax_linalg.eig, (np.array([[2.0]], np.float32),)),
      (lax_linalg.householder_product, (np.eye(3, 2, dtype=np.float32), np.zeros(0, np.float32))),
      (lax_linalg.ormqr, (np.eye(3, 2, dtype=np.float32), np.zeros(0, np.float32),
                          np.ones((3, 2), np.float32))),
      (lax_linalg.cholesky_update, (np.array([[2.0]], np.float32), np.array([1.0], np.float32))),
      (lax_linalg.tridiagonal, (np.array([[2.0]], np.float32),)),
      (lax_linalg.tridiagonal_solve, (np.zeros(3, np.float32), np.ones(3, np.float32),
                                      np.zeros(3, np.float32), np.ones((3, 0), np.float32))),
  ]
  for fn, args in cases:
    want = _eager(fn, *args)
    _assert_all_close(_interpreted(fn, *args), want, 1e-6)
  np.testing.assert_allclose(_eager(lax_linalg.cholesky_update, *cases[4][1])[0], [[np.sqrt(5)]],
                             rtol=1e-6)
  assert [x.shape for x in _eager(lax_linalg.eig, *cases[0][1])] == [(0,), (0, 0), (0, 0)]
