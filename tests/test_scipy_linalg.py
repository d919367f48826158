"""``jax.scipy.linalg`` against ``scipy.linalg`` beyond the op table
(tests/ops/rows_scipy_linalg.py): float64 and complex inputs, batches, the
Schur family (structure, eigenvalues, the IREE-compiled lowerings of
``lax.linalg.schur``/``hessenberg``), JAX's dtypes for the special matrices,
and the errors."""
import numpy as np
import pytest
import scipy.linalg

import openjax as jax
import openjax.numpy as jnp
from openjax.lax import linalg as lax_linalg
from openjax.scipy import linalg as jsl


def _rand(shape, dtype=np.float64, seed=0, shift=0.0):
  rng = np.random.default_rng(seed)
  x = rng.standard_normal(shape)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * rng.standard_normal(shape)
  if shift:
    x = x + shift * np.eye(shape[-1])
  return x.astype(dtype)


def _spd(n, dtype=np.float64, seed=0):
  a = _rand((n, n), dtype, seed)
  return (a @ a.conj().T + n * np.eye(n)).astype(dtype)


def _close(actual, expected, tol):
  np.testing.assert_allclose(np.asarray(actual), expected, atol=tol, rtol=tol)


DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _tol(dtype):
  return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


# ------------------------------------------------- decompositions and solves
@pytest.mark.parametrize("dtype", DTYPES)
def test_factorisations_and_solves(dtype):
  tol = _tol(dtype)
  with jax.enable_x64(np.dtype(dtype).itemsize >= 8 and np.dtype(dtype) != np.complex64):
    a, spd, b = _rand((4, 4), dtype, shift=3.0), _spd(4, dtype), _rand((4, 2), dtype, seed=1)
    for lower in (False, True):
      _close(jsl.cholesky(spd, lower=lower), scipy.linalg.cholesky(spd, lower=lower), tol)
      _close(jsl.cho_solve(jsl.cho_factor(spd, lower=lower), b),
             scipy.linalg.cho_solve(scipy.linalg.cho_factor(spd, lower=lower), b), tol)
      for trans in (0, 1, 2):
        _close(jsl.solve_triangular(a, b, trans=trans, lower=lower),
               scipy.linalg.solve_triangular(a, b, trans=trans, lower=lower), tol)
    for trans in (0, 1, 2):
      _close(jsl.lu_solve(jsl.lu_factor(a), b, trans=trans),
             scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b, trans=trans), tol)
    lu, piv = jsl.lu_factor(a)
    lu_ref, piv_ref = scipy.linalg.lu_factor(a)
    _close(lu, lu_ref, tol)
    np.testing.assert_array_equal(np.asarray(piv), piv_ref)
    for got, want in zip(jsl.lu(a[:, :3]), scipy.linalg.lu(a[:, :3])):
      _close(got, want, tol)
    _close(jsl.solve(a, b), scipy.linalg.solve(a, b), tol)
    _close(jsl.solve(spd, b, assume_a="pos"), scipy.linalg.solve(spd, b, assume_a="pos"), tol)
    _close(jsl.inv(a), scipy.linalg.inv(a), tol)
    _close(jsl.det(a), scipy.linalg.det(a), tol)
    _close(jsl.eigh(spd, eigvals_only=True), scipy.linalg.eigh(spd, eigvals_only=True), tol)
    _close(jsl.svd(a, compute_uv=False), scipy.linalg.svd(a, compute_uv=False), tol)
    for mode in ("full", "economic"):
      q, r = jsl.qr(a[:, :3], mode=mode)
      assert q.shape == scipy.linalg.qr(a[:, :3], mode=mode)[0].shape
      _close(q @ r, a[:, :3], tol)
    u, p = jsl.polar(a)
    u_ref, p_ref = scipy.linalg.polar(a)
    _close(u, u_ref, tol)
    _close(p, p_ref, tol)
    assert np.asarray(jsl.solve(a, b)).dtype == np.dtype(dtype)


def test_batched_solves_and_broadcasting():
  a = np.stack([_rand((3, 3), seed=i, shift=3.0) for i in range(2)]).astype(np.float32)
  b = _rand((2, 3, 2), np.float32, seed=5)
  got = jsl.solve_triangular(a, b, lower=True)
  want = np.stack([scipy.linalg.solve_triangular(a[i], b[i], lower=True) for i in range(2)])
  _close(got, want, 1e-4)
  got = jsl.lu_solve(jsl.lu_factor(a), b)
  _close(got, np.linalg.solve(a, b), 1e-4)
  spd = np.stack([_spd(3, np.float32, seed=i) for i in range(2)])
  _close(jsl.cho_solve(jsl.cho_factor(spd), b), np.linalg.solve(spd, b), 1e-4)
  # One right-hand-side vector for a batch of matrices broadcasts.
  _close(jsl.solve_triangular(a, b[0, :, 0], lower=True),
         np.stack([scipy.linalg.solve_triangular(m, b[0, :, 0], lower=True) for m in a]), 1e-4)


def test_qr_multiply():
  a = _rand((5, 3), np.float64)
  with jax.enable_x64():
    for mode, c in (("right", _rand((2, 5), seed=1)), ("left", _rand((3, 2), seed=1)),
                    ("right", _rand((5,), seed=2))):
      got, r = jsl.qr_multiply(a, c, mode=mode)
      want, r_ref = scipy.linalg.qr_multiply(a, c, mode=mode)
      _close(np.abs(got), np.abs(want), 1e-10)      # Q's column signs are LAPACK's
      _close(np.abs(r), np.abs(r_ref), 1e-10)
    with pytest.raises(ValueError, match="Q @ c"):
      jsl.qr_multiply(a, np.ones((5, 2)), mode="left")


def test_eigh_tridiagonal():
  rng = np.random.default_rng(0)
  d, e = rng.standard_normal(8), rng.standard_normal(7)
  with jax.enable_x64():
    _close(jsl.eigh_tridiagonal(d, e, eigvals_only=True),
           scipy.linalg.eigh_tridiagonal(d, e, eigvals_only=True), 1e-12)
    w, v = jsl.eigh_tridiagonal(d, e)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    _close(t @ np.asarray(v), np.asarray(v) * np.asarray(w), 1e-10)
    _close(jsl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(2, 5)),
           scipy.linalg.eigh_tridiagonal(d, e, eigvals_only=True, select="i",
                                         select_range=(2, 5)), 1e-12)
  with pytest.raises(NotImplementedError, match="select='v'"):
    jsl.eigh_tridiagonal(d.astype(np.float32), e.astype(np.float32), select="v",
                         select_range=(0, 1))


# --------------------------------------------------------------------- expm
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale", [0.01, 1.0, 8.0])
def test_expm_matches_scipy(dtype, scale):
  with jax.enable_x64(np.dtype(dtype) in (np.float64, np.complex128)):
    a = (scale * _rand((5, 5), dtype)).astype(dtype)
    want = scipy.linalg.expm(a.astype(np.complex128 if np.dtype(dtype).kind == "c"
                                      else np.float64))
    got = jsl.expm(a)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(np.asarray(got), want, rtol=20 * _tol(dtype),
                               atol=20 * _tol(dtype) * np.abs(want).max())


def test_expm_options_and_frechet():
  with jax.enable_x64():
    a = np.triu(_rand((4, 4)))
    _close(jsl.expm(a, upper_triangular=True), scipy.linalg.expm(a), 1e-12)
    assert np.isnan(np.asarray(jsl.expm(1e6 * _rand((3, 3)), max_squarings=4))).all()
    e = _rand((4, 4), seed=3)
    got_expm, got_frechet = jsl.expm_frechet(a, e)
    want_expm, want_frechet = scipy.linalg.expm_frechet(a, e)
    _close(got_expm, want_expm, 1e-12)
    _close(got_frechet, want_frechet, 1e-10)
    batch = np.stack([a, -a])
    _close(jsl.expm(batch), np.stack([scipy.linalg.expm(a), scipy.linalg.expm(-a)]), 1e-12)
  with pytest.raises(ValueError, match="square"):
    jsl.expm(np.ones((2, 3)))
  with pytest.raises(TypeError, match="float16 is not supported"):
    jsl.expm(np.eye(2, dtype=np.float16))
  assert jsl.expm(np.eye(2, dtype=np.int32)).dtype == np.float32
  with pytest.raises(ValueError, match="same shape"):
    jsl.expm_frechet(np.eye(2), np.eye(3))


# --------------------------------------------------------------- Schur family
def _check_schur(a, t, z, tol):
  t, z = np.asarray(t), np.asarray(z)
  n = a.shape[-1]
  np.testing.assert_allclose(z @ t @ z.conj().T, a, atol=tol * max(1, np.abs(a).max()))
  np.testing.assert_allclose(z.conj().T @ z, np.eye(n), atol=tol)
  if np.iscomplexobj(t):
    assert np.abs(np.tril(t, -1)).max(initial=0) == 0
  else:
    # Quasi-triangular: nothing below the subdiagonal, no two adjacent
    # subdiagonal entries (2x2 blocks only), each block a complex pair.
    assert np.abs(np.tril(t, -2)).max(initial=0) == 0
    sub = np.diag(t, -1)
    assert not np.any((sub[:-1] != 0) & (sub[1:] != 0))
    for i in np.nonzero(sub)[0]:
      blk = t[i:i + 2, i:i + 2]
      assert ((blk[0, 0] - blk[1, 1]) / 2) ** 2 + blk[0, 1] * blk[1, 0] < 0
  got = np.linalg.eigvals(t.astype(np.complex128))
  want = np.linalg.eigvals(a.astype(np.complex128))
  assert np.abs(got[:, None] - want[None, :]).min(1).max() < 100 * tol * max(1, np.abs(want).max())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 3, 6, 12])
def test_schur_structure(dtype, n):
  with jax.enable_x64(np.dtype(dtype) in (np.float64, np.complex128)):
    for seed, kind in enumerate(("general", "symmetric", "integer")):
      a = _rand((n, n), dtype, seed=seed)
      if kind == "symmetric":
        a = (a + a.conj().T).astype(dtype)
      if kind == "integer":
        a = np.round(2 * a.real).astype(dtype)      # repeated and defective eigenvalues
      t, z = jsl.schur(a)
      assert t.dtype == np.dtype(dtype) and z.dtype == np.dtype(dtype)
      _check_schur(a, t, z, _tol(dtype))
      tc, zc = jsl.schur(a, output="complex")
      assert np.iscomplexobj(np.asarray(tc))
      _check_schur(a, tc, zc, _tol(dtype))


def test_schur_batched_and_jit():
  a = _rand((3, 5, 5), np.float32)
  t, z = jsl.schur(a)
  for i in range(3):
    _check_schur(a[i], t[i], z[i], 1e-4)
  t_jit, _ = jax.jit(jsl.schur)(a)
  np.testing.assert_allclose(np.asarray(t_jit), np.asarray(t), atol=1e-5)
  t_vmap, _ = jax.vmap(jsl.schur)(a)
  np.testing.assert_allclose(np.asarray(t_vmap), np.asarray(t), atol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_hessenberg_matches_lapack(dtype):
  with jax.enable_x64(np.dtype(dtype) in (np.float64, np.complex128)):
    a = _rand((6, 6), dtype)
    h, q = jsl.hessenberg(a, calc_q=True)
    h_ref, q_ref = scipy.linalg.hessenberg(a, calc_q=True)
    _close(h, h_ref, _tol(dtype))
    _close(q, q_ref, _tol(dtype))
    _close(jsl.hessenberg(a), h_ref, _tol(dtype))
    packed, taus = lax_linalg.hessenberg(a)
    gehrd = {np.float32: scipy.linalg.lapack.sgehrd, np.float64: scipy.linalg.lapack.dgehrd,
             np.complex64: scipy.linalg.lapack.cgehrd,
             np.complex128: scipy.linalg.lapack.zgehrd}[dtype]
    packed_ref, taus_ref, _ = gehrd(a)
    _close(packed, packed_ref, _tol(dtype))
    _close(taus, taus_ref[:5], _tol(dtype))


def _compiled(fun, *args):
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    out = jax.jit(fun)(*args)
  leaves = jax.tree_util.tree_leaves(out)
  assert all(x._buffer is not None for x in leaves), "did not run compiled"
  return out


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_schur_and_hessenberg_compiled(dtype):
  a = np.concatenate([_rand((2, 5, 5), dtype), _rand((1, 5, 5), dtype, seed=9) +
                      np.swapaxes(_rand((1, 5, 5), dtype, seed=9), -1, -2).conj()])
  t, z = _compiled(lax_linalg.schur, a)
  for i in range(3):
    _check_schur(a[i], t[i], z[i], 2e-5)
  packed, taus = _compiled(lax_linalg.hessenberg, a)
  packed_ref, taus_ref = lax_linalg.hessenberg(a)
  _close(packed, np.asarray(packed_ref), 1e-5)
  _close(taus, np.asarray(taus_ref), 1e-5)


def test_compiled_complex_qr():
  # The compiled Householder step once applied v^T A for v^H A: complex QR
  # products were wrong (real ones were right).
  for shape in [(4, 4), (5, 3), (3, 5)]:
    b = _rand(shape, np.complex64)
    q, r = _compiled(lax_linalg.qr, b)
    q, r = np.asarray(q), np.asarray(r)
    np.testing.assert_allclose(q @ r, b, atol=2e-6)
    np.testing.assert_allclose(q.conj().T @ q, np.eye(q.shape[1]), atol=2e-6)


def test_schur_is_not_differentiable():
  with pytest.raises(NotImplementedError, match="schur is not implemented"):
    jax.grad(lambda a: jnp.sum(lax_linalg.schur(a)[0]))(np.eye(3, dtype=np.float32))


def test_rsf2csf_sqrtm_funm_sylvester():
  with jax.enable_x64():
    a = _rand((5, 5), seed=2)
    t, z = scipy.linalg.schur(a)
    for got, want in zip(jsl.rsf2csf(t, z), scipy.linalg.rsf2csf(t, z)):
      _close(got, want, 1e-10)
    _close(jsl.sqrtm(a), scipy.linalg.sqrtm(a.astype(np.complex128)), 1e-9)
    spd = _spd(5)
    _close(jsl.sqrtm(spd), scipy.linalg.sqrtm(spd), 1e-10)
    _close(jsl.funm(a, jnp.sin), scipy.linalg.funm(a, np.sin), 1e-9)
    f, err = jsl.funm(a, jnp.exp, disp=False)
    _close(f, scipy.linalg.expm(a), 1e-9)
    assert 0 < float(err) < 1e-10
    b, c = _rand((3, 3), seed=3), _rand((5, 3), seed=4)
    _close(jsl.solve_sylvester(a, b, c), scipy.linalg.solve_sylvester(a, b, c), 1e-9)
    ac, bc, cc = (x.astype(np.complex128) + 1j for x in (a, b, c))
    _close(jsl.solve_sylvester(ac, bc, cc), scipy.linalg.solve_sylvester(ac, bc, cc), 1e-9)
    _close(jsl.solve_sylvester(a, b, c, method="eigen"), scipy.linalg.solve_sylvester(a, b, c),
           1e-9)
    # A and -B sharing an eigenvalue: no unique solution, NaNs as in JAX.
    for method in ("schur", "eigen"):
      assert np.isnan(np.asarray(jsl.solve_sylvester(np.eye(2), -np.eye(2), np.ones((2, 2)),
                                                     method=method))).all()
  # method='eigen' traces (jnp.linalg.eig is lax.linalg.eig), as in JAX.
  m = _rand((3, 3), np.float32, seed=6) + 3 * np.eye(3, dtype=np.float32)
  _close(jax.jit(lambda m: jsl.solve_sylvester(m, m, m, method="eigen"))(m),
         scipy.linalg.solve_sylvester(m, m, m), 1e-4)
  with pytest.raises(ValueError, match="Unrecognized method"):
    jsl.solve_sylvester(np.eye(2), np.eye(2), np.eye(2), method="direct")
  with pytest.raises(NotImplementedError, match="blocksize"):
    jsl.sqrtm(np.eye(2), blocksize=2)
  with pytest.raises(ValueError, match="Input array shapes must match"):
    jsl.rsf2csf(np.eye(2), np.eye(3))


# ---------------------------------------------------------- special matrices
def test_special_matrices_match_scipy_and_jax_dtypes():
  # Result dtypes as JAX 0.10.2 gives them (x64 off).
  cases = [
      (jsl.hilbert(4), scipy.linalg.hilbert(4), np.float32),
      (jsl.invhilbert(6), scipy.linalg.invhilbert(6), np.float32),
      (jsl.pascal(6), scipy.linalg.pascal(6), np.float32),
      (jsl.pascal(5, "lower"), scipy.linalg.pascal(5, "lower"), np.float32),
      (jsl.invpascal(6), scipy.linalg.invpascal(6), np.float32),
      (jsl.invpascal(5, "upper"), scipy.linalg.invpascal(5, "upper"), np.float32),
      (jsl.helmert(5), scipy.linalg.helmert(5), np.float32),
      (jsl.helmert(4, full=True), scipy.linalg.helmert(4, full=True), np.float32),
      (jsl.hadamard(8), scipy.linalg.hadamard(8), np.int32),
      (jsl.dft(5), scipy.linalg.dft(5), np.complex64),
      (jsl.dft(6, "n"), scipy.linalg.dft(6, "n"), np.complex64),
      (jsl.toeplitz(np.array([1, 2, 3])), scipy.linalg.toeplitz([1, 2, 3]), np.int32),
      (jsl.circulant(np.array([1, 2, 3])), scipy.linalg.circulant([1, 2, 3]), np.int32),
      (jsl.fiedler(np.array([1, 4, 2])), scipy.linalg.fiedler([1, 4, 2]), np.int32),
      (jsl.companion(np.array([1, 2, 3])), scipy.linalg.companion([1, 2, 3]), np.float32),
      (jsl.convolution_matrix(np.array([1, 2, 3]), 4), scipy.linalg.convolution_matrix(
          [1, 2, 3], 4), np.int32),
      (jsl.block_diag(np.ones((2, 2), np.int32), 3), scipy.linalg.block_diag(np.ones((2, 2)), 3),
       np.int32),
  ]
  for got, want, dtype in cases:
    assert np.asarray(got).dtype == dtype
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
  assert jsl.block_diag().shape == (1, 0)
  assert jsl.hadamard(4, dtype=np.float32).dtype == np.float32


def test_special_matrices_batch():
  c = _rand((2, 3), np.float32)
  r = _rand((2, 4), np.float32, seed=1)
  _close(jsl.toeplitz(c, r), np.stack([scipy.linalg.toeplitz(c[i], r[i]) for i in range(2)]), 0)
  _close(jsl.hankel(c, r), np.stack([scipy.linalg.hankel(c[i], r[i]) for i in range(2)]), 0)
  _close(jsl.circulant(c), np.stack([scipy.linalg.circulant(c[i]) for i in range(2)]), 0)


def test_errors():
  with pytest.raises(ValueError, match="assume_a"):
    jsl.solve(np.eye(2), np.ones(2), assume_a="banded")
  with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
    jsl.qr(np.eye(2), mode="raw")
  with pytest.raises(ValueError, match="Invalid 'trans'"):
    jsl.solve_triangular(np.eye(2), np.ones(2), trans=3)
  with pytest.raises(NotImplementedError, match="method='qdwh'"):
    jsl.polar(np.ones((2, 3)))
  with pytest.raises(NotImplementedError, match="b=None"):
    jsl.eigh(np.eye(2), np.eye(2))
  with pytest.raises(ValueError, match="power of 2"):
    jsl.hadamard(6)
  with pytest.raises(ValueError, match="scale"):
    jsl.dft(3, "sqrt")
  with pytest.raises(ValueError, match="positive"):
    jsl.convolution_matrix(np.ones(3), 0)
  with pytest.raises(ValueError, match="at most 2 dimensions"):
    jsl.block_diag(np.ones((1, 1, 1)))
  with pytest.raises(ValueError, match="output"):
    jsl.schur(np.eye(2), output="quasi")
  with pytest.raises(ValueError, match="square"):
    jsl.schur(np.ones((2, 3)))
