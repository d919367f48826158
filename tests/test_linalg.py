"""jax.numpy.linalg and jax.lax.linalg: reconstructions against NumPy for
float32/float64/complex64 and batches, gradients, jit/vmap, the IREE-compiled
decompositions (one module per primitive) against eager, printed jaxprs
against JAX 0.10.2 and JAX's errors. The op table (tests/ops/rows_linalg.py)
adds the per-row eager/jit/vmap/grad columns."""
import warnings

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax.lax import linalg as lax_linalg

DTYPES = [np.float32, np.float64, np.complex64]


def _rand(rng, shape, dtype):
  x = rng.standard_normal(shape)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def _hpd(rng, shape, dtype):
  a = _rand(rng, shape, dtype)
  n = shape[-1]
  return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


def _tol(dtype):
  return 1e-10 if np.dtype(dtype) == np.float64 else 2e-4


def _mH(x):
  return np.conj(np.swapaxes(x, -1, -2))


@pytest.fixture(params=DTYPES, ids=lambda d: np.dtype(d).name)
def dtype(request):
  with jax.enable_x64(np.dtype(request.param) == np.float64):
    yield request.param


# ------------------------------------------------------- reconstructions
def test_cholesky_reconstructs(dtype):
  a = _hpd(np.random.default_rng(0), (2, 4, 4), dtype)
  L = np.asarray(jnp.linalg.cholesky(a))
  assert L.dtype == dtype and L.shape == a.shape
  np.testing.assert_allclose(L @ _mH(L), a, atol=_tol(dtype) * 10, rtol=_tol(dtype))
  np.testing.assert_array_equal(np.triu(L[0], 1), 0)
  U = np.asarray(jnp.linalg.cholesky(a, upper=True))
  np.testing.assert_allclose(U, _mH(L), atol=_tol(dtype))


def test_eigh_reconstructs(dtype):
  a = _hpd(np.random.default_rng(1), (3, 4, 4), dtype)
  w, v = jnp.linalg.eigh(a)
  w, v = np.asarray(w), np.asarray(v)
  assert w.dtype == np.finfo(dtype).dtype and v.dtype == dtype
  np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=_tol(dtype) * 10)
  np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=_tol(dtype))
  assert np.all(np.diff(w, axis=-1) >= 0)
  np.testing.assert_allclose(np.asarray(jnp.linalg.eigvalsh(a)), w, rtol=_tol(dtype))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_reconstructs(dtype, shape, mode):
  a = _rand(np.random.default_rng(2), shape, dtype)
  q, r = jnp.linalg.qr(a, mode=mode)
  q, r = np.asarray(q), np.asarray(r)
  m, n = shape[-2:]
  k = m if mode == "complete" else min(m, n)
  assert q.shape == (*shape[:-2], m, k) and r.shape == (*shape[:-2], k, n)
  np.testing.assert_allclose(q @ r, a, atol=_tol(dtype) * 10)
  np.testing.assert_allclose(_mH(q) @ q, np.broadcast_to(np.eye(k), _mH(q).shape[:-1] + (k,)),
                             atol=_tol(dtype) * 10)
  np.testing.assert_array_equal(np.tril(r[..., :, :], -1) if r.ndim == 2 else
                                np.tril(r[0], -1), 0)
  np.testing.assert_allclose(np.asarray(jnp.linalg.qr(a, mode="r")),
                             np.linalg.qr(a, mode="r"), atol=_tol(dtype) * 10)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_reconstructs(dtype, shape, full_matrices):
  a = _rand(np.random.default_rng(3), shape, dtype)
  u, s, vh = (np.asarray(t) for t in jnp.linalg.svd(a, full_matrices=full_matrices))
  k = min(shape[-2:])
  np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=_tol(dtype) * 10)
  us = u[..., :, :k] * s[..., None, :]
  np.testing.assert_allclose(us @ vh[..., :k, :], a, atol=_tol(dtype) * 10)
  np.testing.assert_allclose(np.asarray(jnp.linalg.svd(a, compute_uv=False)), s,
                             rtol=_tol(dtype))


def test_lu_reconstructs(dtype):
  a = _rand(np.random.default_rng(4), (2, 5, 3), dtype)
  lu, pivots, perm = (np.asarray(t) for t in lax_linalg.lu(a))
  assert pivots.dtype == np.int32 and perm.shape == (2, 5) and pivots.shape == (2, 3)
  l = np.tril(lu, -1)[..., :, :3] + np.eye(5, 3)
  u = np.triu(lu)[..., :3, :]
  pa = np.take_along_axis(a, perm[..., None], axis=-2)
  np.testing.assert_allclose(l @ u, pa, atol=_tol(dtype) * 10)
  np.testing.assert_array_equal(np.asarray(lax_linalg.lu_pivots_to_permutation(pivots, 5)),
                                perm)


@pytest.mark.parametrize("shape", [(1, 300, 300), (2, 257, 150), (1, 150, 257), (1, 70, 45),
                                   (3, 70, 70), (1, 45, 70), (1, 33, 33)])
@pytest.mark.parametrize("kind", ["f64", "c128"])
def test_lu_by_panels_matches_lapack(shape, kind):
  # Past 32 columns the eager LU is recursive (halves of the columns, block
  # solves and matrix products between them; Crout panels for one matrix,
  # right-looking ones for a batch): LAPACK getrf's pivots, its factors to
  # rounding (SciPy's lu_factor is the reference).
  sl = pytest.importorskip("scipy.linalg")
  rng = np.random.default_rng(11)
  a = rng.standard_normal(shape)
  if kind == "c128":
    a = a + 1j * rng.standard_normal(shape)
  a[0, :, 7] = 0   # a zero column: a zero pivot left in place, as LAPACK does
  with jax.enable_x64():
    lu, pivots, perm = (np.asarray(t) for t in lax_linalg.lu(a))
  assert lu.dtype == a.dtype
  for i in range(shape[0]):
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")   # SciPy warns of the zero pivot
      lu_ref, piv_ref = sl.lu_factor(a[i], check_finite=False)
    np.testing.assert_array_equal(pivots[i], piv_ref)
    np.testing.assert_allclose(lu[i], lu_ref, atol=1e-11 * np.abs(lu_ref).max())
  np.testing.assert_array_equal(
      np.asarray(lax_linalg.lu_pivots_to_permutation(pivots, shape[1])), perm)


def test_solve_inv_det_slogdet(dtype):
  rng = np.random.default_rng(5)
  a = _rand(rng, (2, 4, 4), dtype) + 3 * np.eye(4, dtype=dtype)
  b = _rand(rng, (2, 4, 3), dtype)
  tol = _tol(dtype) * 10
  np.testing.assert_allclose(np.asarray(jnp.linalg.solve(a, b)), np.linalg.solve(a, b),
                             atol=tol, rtol=tol)
  np.testing.assert_allclose(np.asarray(jnp.linalg.solve(a, b[..., 0])),
                             np.linalg.solve(a, b[..., :1])[..., 0], atol=tol, rtol=tol)
  np.testing.assert_allclose(np.asarray(jnp.linalg.inv(a)), np.linalg.inv(a), atol=tol,
                             rtol=tol)
  np.testing.assert_allclose(np.asarray(jnp.linalg.det(a)), np.linalg.det(a), rtol=tol)
  sign, logdet = jnp.linalg.slogdet(a)
  ref_sign, ref_logdet = np.linalg.slogdet(a)
  np.testing.assert_allclose(np.asarray(sign), ref_sign, rtol=tol, atol=tol)
  np.testing.assert_allclose(np.asarray(logdet), ref_logdet, rtol=tol)
  for n in (2, 3):   # the explicit small-matrix determinants
    np.testing.assert_allclose(np.asarray(jnp.linalg.det(a[..., :n, :n])),
                               np.linalg.det(a[..., :n, :n]), rtol=tol)


def test_singular_slogdet_and_failed_cholesky():
  sign, logdet = jnp.linalg.slogdet(np.zeros((3, 3), np.float32))
  assert float(sign) == 0 and float(logdet) == -np.inf
  L = np.asarray(jnp.linalg.cholesky(np.array([[1., 2.], [2., 1.]], np.float32)))
  assert np.isnan(L[np.tril_indices(2)]).all()   # as JAX: NaN, not an exception


def test_triangular_solve_all_variants():
  rng = np.random.default_rng(6)
  a = rng.standard_normal((3, 4, 4)) + 4 * np.eye(4)
  b = rng.standard_normal((3, 4, 2))
  with jax.enable_x64():
    for lower in (True, False):
      for transpose_a in (True, False):
        for unit in (True, False):
          t = np.tril(a) if lower else np.triu(a)
          if unit:
            t = t - t * np.eye(4) + np.eye(4)
          op = np.swapaxes(t, -1, -2) if transpose_a else t
          x = lax_linalg.triangular_solve(a, b, left_side=True, lower=lower,
                                          transpose_a=transpose_a, unit_diagonal=unit)
          np.testing.assert_allclose(op @ np.asarray(x), b, atol=1e-10)
          y = lax_linalg.triangular_solve(a, np.swapaxes(b, -1, -2), left_side=False,
                                          lower=lower, transpose_a=transpose_a,
                                          unit_diagonal=unit)
          np.testing.assert_allclose(np.asarray(y) @ op, np.swapaxes(b, -1, -2), atol=1e-10)


def test_pinv_rank_norms_lstsq_and_friends():
  rng = np.random.default_rng(7)
  a = rng.standard_normal((4, 3)).astype(np.float32)
  sq = rng.standard_normal((3, 3)).astype(np.float32) + 2 * np.eye(3, dtype=np.float32)
  np.testing.assert_allclose(np.asarray(jnp.linalg.pinv(a)), np.linalg.pinv(a), atol=1e-5)
  assert int(jnp.linalg.matrix_rank(a)) == 3
  assert int(jnp.linalg.matrix_rank(np.outer(a[:, 0], a[0]))) == 1
  for ord_ in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
    np.testing.assert_allclose(np.asarray(jnp.linalg.norm(a, ord_)), np.linalg.norm(a, ord_),
                               rtol=1e-5, err_msg=str(ord_))
  v = a[:, 0]
  for ord_ in (None, 0, 1, 2, 3, np.inf, -np.inf):
    np.testing.assert_allclose(np.asarray(jnp.linalg.norm(v, ord_)), np.linalg.norm(v, ord_),
                               rtol=1e-5, err_msg=str(ord_))
  np.testing.assert_allclose(np.asarray(jnp.linalg.norm(a, axis=0, keepdims=True)),
                             np.linalg.norm(a, axis=0, keepdims=True), rtol=1e-5)
  np.testing.assert_allclose(np.asarray(jnp.linalg.vector_norm(a)), np.linalg.norm(a.ravel()),
                             rtol=1e-5)
  np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_norm(a)), np.linalg.norm(a),
                             rtol=1e-5)
  np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_power(sq, 3)),
                             np.linalg.matrix_power(sq, 3), rtol=1e-4)
  np.testing.assert_allclose(np.asarray(jnp.linalg.matrix_power(sq, -2)),
                             np.linalg.matrix_power(sq, -2), rtol=1e-4, atol=1e-5)
  b = rng.standard_normal(4).astype(np.float32)
  x, resid, rank, s = jnp.linalg.lstsq(a, b)
  rx, rresid, rrank, rs = np.linalg.lstsq(a, b)
  np.testing.assert_allclose(np.asarray(x), rx, atol=1e-5)
  np.testing.assert_allclose(np.asarray(resid), rresid, rtol=1e-4)
  assert int(rank) == rrank
  t = rng.standard_normal((2, 3, 6)).astype(np.float64)
  with jax.enable_x64():
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensorinv(t, ind=2)),
                               np.linalg.tensorinv(t, ind=2), atol=1e-8)
    tb = rng.standard_normal((2, 3))
    np.testing.assert_allclose(np.asarray(jnp.linalg.tensorsolve(t.reshape(2, 3, 6), tb)),
                               np.linalg.tensorsolve(t.reshape(2, 3, 6), tb), atol=1e-8)
  np.testing.assert_allclose(np.asarray(jnp.linalg.multi_dot([a, sq, sq])), a @ sq @ sq,
                             rtol=1e-4)
  np.testing.assert_allclose(np.asarray(jnp.linalg.cross(a[:3, 0], a[:3, 1])),
                             np.cross(a[:3, 0], a[:3, 1]), rtol=1e-5)
  np.testing.assert_allclose(np.asarray(jnp.linalg.trace(sq)), np.trace(sq), rtol=1e-5)
  np.testing.assert_allclose(np.asarray(jnp.linalg.diagonal(sq)), np.diagonal(sq))
  np.testing.assert_allclose(np.asarray(jnp.linalg.cond(sq)), np.linalg.cond(sq), rtol=1e-4)
  w, _ = jnp.linalg.eig(sq)
  np.testing.assert_allclose(np.sort_complex(np.asarray(w)),
                             np.sort_complex(np.linalg.eigvals(sq)), rtol=1e-5)


# --------------------------------------------------------- transformations
def test_grads_match_finite_differences():
  rng = np.random.default_rng(8)
  with jax.enable_x64():
    spd = _hpd(rng, (3, 3), np.float64)
    a = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((3, 2))
    tall = rng.standard_normal((4, 3))
    check = jax.test_util.check_grads
    check(lambda x: jnp.linalg.cholesky(x), (spd,), order=1, atol=1e-5, rtol=1e-5)
    check(lambda x: jnp.linalg.eigh(x)[0], (spd,), order=2, atol=1e-5, rtol=1e-5)
    check(lambda x: jnp.abs(jnp.linalg.eigh(x)[1]), (spd,), order=1, atol=1e-5, rtol=1e-5)
    check(lambda x: jnp.linalg.qr(x), (tall,), order=1, atol=1e-5, rtol=1e-5)
    check(lambda x: jnp.linalg.qr(x), (tall.T,), order=1, atol=1e-5, rtol=1e-5)
    check(lambda x: jnp.linalg.svd(x, compute_uv=False), (tall,), order=2, atol=1e-5, rtol=1e-5)
    check(lambda x: jnp.abs(jnp.linalg.svd(x, full_matrices=False)[0]), (tall,), order=1,
          atol=1e-5, rtol=1e-5)
    check(jnp.linalg.solve, (a, b), order=2, atol=1e-5, rtol=1e-5)
    check(jnp.linalg.inv, (a,), order=1, atol=1e-5, rtol=1e-5)
    check(jnp.linalg.det, (a,), order=2, atol=1e-5, rtol=1e-5)
    check(jnp.linalg.det, (rng.standard_normal((5, 5)),), order=1, atol=1e-5, rtol=1e-5)
    check(lambda x: jnp.linalg.slogdet(x)[1], (a,), order=2, atol=1e-5, rtol=1e-5)


def test_jit_and_vmap_match_eager():
  rng = np.random.default_rng(9)
  a = _hpd(rng, (3, 4, 4), np.float32)

  def f(x):
    w, v = jnp.linalg.eigh(x)
    q, r = jnp.linalg.qr(x)
    return jnp.linalg.cholesky(x), w, q @ r, jnp.linalg.svd(x, compute_uv=False), \
        jnp.linalg.inv(x), jnp.linalg.slogdet(x)[1]
  eager = f(a)
  for got in (jax.jit(f)(a), jax.vmap(f)(a), jax.vmap(f, in_axes=1, out_axes=0)(
      np.swapaxes(a, 0, 1))):
    for g, e in zip(got, eager):
      np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-4, atol=1e-5)
  loop = [f(a[i]) for i in range(3)]
  batched = jax.vmap(f)(a)
  for j, g in enumerate(batched):
    np.testing.assert_allclose(np.asarray(g), np.stack([np.asarray(l[j]) for l in loop]),
                               rtol=1e-5, atol=1e-6)


# ------------------------------------------------------ compiled (IREE)
def _compiled(f, *args):
  return jax.jit(f).lower(*args).compile()(*args)


@pytest.mark.parametrize("name", ["cholesky", "triangular_solve", "eigh", "qr", "lu", "svd"])
def test_compiled_matches_eager(name):
  rng = np.random.default_rng(10)
  a = _hpd(rng, (2, 4, 4), np.float32)
  tall = rng.standard_normal((2, 5, 3)).astype(np.float32)
  b = rng.standard_normal((2, 4, 2)).astype(np.float32)
  fns = {
      "cholesky": (lambda x: lax_linalg.cholesky(x), (a,)),
      "triangular_solve": (lambda x, y: lax_linalg.triangular_solve(x, y, left_side=True,
                                                                    lower=True), (a, b)),
      # Eigenvector, Q and U signs are algorithm choices: compare sign-free products.
      "eigh": (lambda x: (lambda v, w: (w, jnp.abs(v)))(*lax_linalg.eigh(x)), (a,)),
      "qr": (lambda x: lax_linalg.qr(x, full_matrices=False), (tall,)),
      "lu": (lambda x: lax_linalg.lu(x), (tall,)),
      # The completed columns of a full U are any orthonormal basis of the
      # complement: compare the projector onto them.
      "svd": (lambda x: (lambda u, s, vh: (s, jnp.abs(u[..., :3]), jnp.abs(vh),
                                           u[..., 3:] @ jnp.swapaxes(u[..., 3:], -1, -2)))(
          *lax_linalg.svd(x, full_matrices=True)), (tall,)),
  }
  f, args = fns[name]
  got, want = _compiled(f, *args), f(*args)
  for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
    assert np.asarray(g).dtype == np.asarray(w).dtype
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)
  assert "custom_call" not in jax.jit(f).lower(*args).as_text()   # no LAPACK in IREE


# ------------------------------------------------------ jaxprs and errors
CHOLESKY_JAXPR_JAX = """\
{ lambda ; a:f32[3,3]. let
    b:f32[3,3] = jit[
      name=cholesky
      jaxpr={ lambda ; a:f32[3,3]. let
          c:f32[3,3] = transpose[permutation=(1, 0)] a
          d:f32[3,3] = add a c
          e:f32[3,3] = div d 2.0:f32[]
          f:f32[3,3] = cholesky e
          g:i32[3,3] = iota[dimension=0 dtype=int32 shape=(3, 3) sharding=None] 
          h:i32[3,3] = add g 0:i32[]
          i:i32[3,3] = iota[dimension=1 dtype=int32 shape=(3, 3) sharding=None] 
          j:bool[3,3] = ge h i
          k:f32[3,3] = broadcast_in_dim 0.0:f32[]
          b:f32[3,3] = select_n j k f
        in (b,) }
    ] a
  in (b,) }"""

QR_JAXPR_JAX = """\
{ lambda ; a:f32[3,3]. let
    b:f32[3,3] c:f32[3,3] = jit[
      name=qr
      jaxpr={ lambda ; a:f32[3,3]. let
          b:f32[3,3] c:f32[3,3] = qr[
            full_matrices=False
            pivoting=False
            use_magma=None
          ] a
        in (b, c) }
    ] a
  in (b, c) }"""


def test_printed_jaxprs_match_jax():
  x = np.eye(3, dtype=np.float32)
  assert str(jax.make_jaxpr(jnp.linalg.cholesky)(x)) == CHOLESKY_JAXPR_JAX
  assert str(jax.make_jaxpr(jnp.linalg.qr)(x)) == QR_JAXPR_JAX
  lu_text = str(jax.make_jaxpr(lax_linalg.lu)(x))
  assert lu_text == "{ lambda ; a:f32[3,3]. let b:f32[3,3] c:i32[3] d:i32[3] = lu a in (b, c, d) }"


def test_errors_match_jax():
  with pytest.raises(TypeError, match="Input 0 to lu must have rank at least 2"):
    lax_linalg.lu(np.ones(3, np.float32))
  with pytest.raises(ValueError, match="Incompatible shapes for arguments to triangular_solve"):
    lax_linalg.triangular_solve(np.ones((3, 3), np.float32), np.ones((2, 3), np.float32),
                                left_side=True)
  with pytest.raises(ValueError, match="must be a square matrix"):
    lax_linalg.cholesky(np.ones((3, 2), np.float32), symmetrize_input=False)
  with pytest.raises(TypeError, match="eigh does not accept dtype int32"):
    lax_linalg.eigh(np.ones((2, 2), np.int32), symmetrize_input=False)
  with pytest.raises(ValueError, match="The arguments to solve must have shapes"):
    jnp.linalg.solve(np.ones((3, 3), np.float32), np.ones((4,), np.float32))
  with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
    jnp.linalg.qr(np.ones((3, 3), np.float32), mode="bogus")


@pytest.mark.parametrize("batch", [1, 3])
def test_lu_ties_pick_the_first_row_as_lapack(batch):
  # Integer matrices: exact ties in |a| everywhere; getrf takes the first
  # row of largest magnitude at every step, in every panel and block.
  sl = pytest.importorskip("scipy.linalg")
  a = np.random.default_rng(5).integers(-2, 3, (batch, 80, 80)).astype(np.float64)
  with jax.enable_x64():
    lu, pivots, _ = (np.asarray(t) for t in lax_linalg.lu(a))
  for i in range(batch):
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      lu_ref, piv_ref = sl.lu_factor(a[i], check_finite=False)
    np.testing.assert_array_equal(pivots[i], piv_ref)
    np.testing.assert_allclose(lu[i], lu_ref, atol=1e-9 * np.abs(lu_ref).max())
