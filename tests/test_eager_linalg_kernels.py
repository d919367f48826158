"""The eager linalg kernels' NumPy paths, taken when the LAPACK library
(``primitives/linalg/lapack.py``, tested in test_eager_lapack_kernels.py) is
unavailable, against LAPACK (SciPy): the recursive LU's pivots and factors,
the Schur form from geev's eigenvectors (and its fallback to the QR
iteration), the blocked triangular solve."""
import warnings

import numpy as np
import pytest

import openjax as jax
from openjax.lax import linalg as lax_linalg
from openjax._src.primitives.linalg import lapack
from openjax._src.primitives.linalg.schur import schur_from_eig

scipy_linalg = pytest.importorskip("scipy.linalg")


@pytest.fixture(autouse=True)
def numpy_kernels(monkeypatch):
  monkeypatch.setattr(lapack, "available", lambda: False)

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _rand(shape, dtype, seed=0):
  rng = np.random.default_rng(seed)
  x = rng.standard_normal(shape)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def _tol(dtype):
  return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


def _x64(dtype):
  return jax.enable_x64(np.dtype(dtype) in (np.float64, np.complex128))


def _check_schur_form(a, t, z, tol, standardised=False):
  """``z t z^H = a`` with ``z`` unitary and ``t`` (quasi-)triangular (2x2
  blocks only for complex pairs); ``standardised``: gees' blocks, with
  equal diagonal entries."""
  n = a.shape[-1]
  scale = max(1.0, float(np.abs(a).max()))
  np.testing.assert_allclose(z @ t @ z.conj().T, a, atol=tol * scale)
  np.testing.assert_allclose(z.conj().T @ z, np.eye(n), atol=tol)
  if np.iscomplexobj(t):
    assert not np.tril(t, -1).any()
  else:
    assert not np.tril(t, -2).any()
    sub = np.diag(t, -1)
    assert not np.any((sub[:-1] != 0) & (sub[1:] != 0))
    for i in np.nonzero(sub)[0]:
      blk = t[i:i + 2, i:i + 2]
      assert ((blk[0, 0] - blk[1, 1]) / 2) ** 2 + blk[0, 1] * blk[1, 0] < 0
      assert blk[0, 0] == blk[1, 1] or not standardised


# ------------------------------------------------------------------ schur
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 2), (5, 5), (4, 12, 12), (40, 40)])
def test_schur_from_eigenvectors_is_a_schur_form(dtype, shape):
  a = _rand(shape, dtype, seed=sum(shape))
  # The eigenvector route takes random matrices (no QR iteration) ...
  work = a.reshape(-1, *shape[-2:]).astype(np.complex128 if a.dtype.kind == "c" else np.float64)
  assert schur_from_eig(work)[2].all()
  with _x64(dtype):
    t, z = (np.asarray(r) for r in lax_linalg.schur(a))
  assert t.dtype == a.dtype and z.dtype == a.dtype
  flat_a, flat_t, flat_z = (r.reshape(-1, *shape[-2:]) for r in (a, t, z))
  for i in range(flat_a.shape[0]):
    _check_schur_form(flat_a[i], flat_t[i], flat_z[i], _tol(dtype))
    # ... and keeps LAPACK's eigenvalue order (geev's, which is gees').
    work = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    want = np.linalg.eigvals(flat_a[i].astype(work))
    np.testing.assert_allclose(_block_eigenvalues(flat_t[i]), want,
                               atol=100 * _tol(dtype) * np.abs(want).max())


def _block_eigenvalues(t):
  """The eigenvalues of a (quasi-)triangular ``t`` in diagonal order, each
  2x2 block's pair positive imaginary part first (as geev)."""
  out, i, n = [], 0, t.shape[-1]
  while i < n:
    if i + 1 < n and not np.iscomplexobj(t) and t[i + 1, i] != 0:
      pair = np.linalg.eigvals(t[i:i + 2, i:i + 2].astype(np.float64))
      out += sorted(pair, key=lambda e: -e.imag)
      i += 2
    else:
      out.append(t[i, i])
      i += 1
  return np.array(out, np.complex128)


@pytest.mark.parametrize("name", ["near_jordan", "clustered", "defective_block"])
def test_schur_of_ill_conditioned_eigenvectors(name):
  rng = np.random.default_rng(3)
  q = np.linalg.qr(rng.standard_normal((6, 6)))[0]
  if name == "near_jordan":
    core = np.eye(6) * 2 + np.eye(6, k=1) + 1e-12 * rng.standard_normal((6, 6))
  elif name == "clustered":
    core = np.diag([1, 1 + 1e-10, 1 - 1e-10, 3, 3 + 1e-9, 5.]) + np.triu(rng.standard_normal((6, 6)), 1)
  else:
    core = np.triu(rng.integers(-2, 3, (6, 6)).astype(float)) + np.diag([1, 1, 1, 2, 2, 0.])
  a = q @ core @ q.T
  with jax.enable_x64():
    t, z = (np.asarray(r) for r in lax_linalg.schur(a))
  _check_schur_form(a, t, z, 1e-9)


def test_schur_batch_mixes_both_paths_and_non_finite_input():
  a = np.stack([_rand((4, 4), np.float64, 1), np.full((4, 4), np.nan)])
  with jax.enable_x64():
    t, z = (np.asarray(r) for r in lax_linalg.schur(a))
  assert np.isnan(t[1]).all()
  _check_schur_form(a[0], t[0], z[0], 1e-10)


# ------------------------------------------------------- triangular_solve
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(3, 3, 2), (1, 100, 70), (2, 75, 40)])
@pytest.mark.parametrize("left_side", [False, True])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("transpose_a", [False, True])
def test_triangular_solve_blocks_match_lapack(dtype, shape, left_side, lower, transpose_a):
  # Past 32 rows the solve is blocked (halves, a matrix product between
  # them); one system takes 2-D steps, a batch batched ones.
  batch, n, k = shape
  a = _rand((batch, n, n), dtype, seed=n) + 2 * np.sqrt(n) * np.eye(n)
  a = a.astype(dtype)
  b = _rand((batch, n, k) if left_side else (batch, k, n), dtype, seed=k)
  unit = n == 3
  with _x64(dtype):
    x = np.asarray(lax_linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                               transpose_a=transpose_a, conjugate_a=True,
                                               unit_diagonal=unit))
  assert x.dtype == a.dtype and x.shape == b.shape
  for i in range(batch):
    # op(a) = a^H (transpose_a with conjugate_a) or conj(a).
    if left_side:
      want = scipy_linalg.solve_triangular(a[i] if transpose_a else a[i].conj(), b[i],
                                           lower=lower, trans="C" if transpose_a else "N",
                                           unit_diagonal=unit)
    else:   # x op = b  <=>  op^T x^T = b^T
      op = a[i].conj().T if transpose_a else a[i].conj()
      tri = np.tril(op) if lower != transpose_a else np.triu(op)
      if unit:
        np.fill_diagonal(tri, 1)
      want = np.linalg.solve(tri.T, b[i].T).T
    np.testing.assert_allclose(x[i], want, rtol=_tol(dtype), atol=_tol(dtype))


def test_triangular_solve_zero_pivot_and_empty():
  a = np.tril(np.ones((40, 40)))
  a[20, 20] = 0
  with jax.enable_x64():
    x = np.asarray(lax_linalg.triangular_solve(a, np.ones((40, 2)), left_side=True, lower=True))
    assert np.isfinite(x[:20]).all() and not np.isfinite(x[20:]).any()
    empty = lax_linalg.triangular_solve(np.ones((2, 0, 0)), np.ones((2, 0, 3)), left_side=True)
    assert empty.shape == (2, 0, 3)


# ------------------------------------------------- cholesky, eigh wrappers
def test_cholesky_batch_with_a_failing_matrix_and_eager_programs():
  # One gufunc call for the batch; a matrix that is not positive definite
  # gives NaNs (LAPACK's info > 0, as JAX) and the others their factors.
  spd = np.array([[4.0, 2.0], [2.0, 3.0]], np.float32)
  batch = np.stack([spd, -spd, spd])
  out = np.asarray(lax_linalg.cholesky(batch))
  assert np.isnan(out[1][np.tril_indices(2)]).all()
  for i in (0, 2):
    np.testing.assert_allclose(out[i], np.linalg.cholesky(spd), rtol=1e-6)
  # The eager call runs as one program; make_jaxpr still shows JAX's equations.
  text = str(jax.make_jaxpr(lax_linalg.cholesky)(spd))
  assert "cholesky" in text and "transpose" in text and "select_n" in text
  w = np.asarray(lax_linalg.eigh(spd, symmetrize_input=False)[1])
  np.testing.assert_allclose(w, np.linalg.eigvalsh(spd), rtol=1e-6)
  v, w = lax_linalg.eigh(np.diag([3.0, 1.0, 2.0]).astype(np.float32), subset_by_index=(0, 2))
  np.testing.assert_allclose(np.asarray(w), [1.0, 2.0])


def test_eigh_eager_program_takes_every_keyword():
  x = np.diag([3.0, 1.0, 2.0]).astype(np.float32)
  for implementation in (None, *lax_linalg.EighImplementation):
    _, w = lax_linalg.eigh(x, implementation=implementation, subset_by_index=[1, 3])
    np.testing.assert_allclose(np.asarray(w), [2.0, 3.0])


# -------------------------------------------------------------- hessenberg
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["general", "hessenberg", "triangular"])
@pytest.mark.parametrize("batch", [1, 3])
def test_hessenberg_matches_gehrd(dtype, kind, batch):
  # Already-reduced columns take no reflector (tau = 0), as larfg; one
  # matrix runs the scalar column loop, a batch the vectorised one.
  a = _rand((batch, 7, 7), dtype, seed=7)
  if kind == "hessenberg":
    a = np.triu(a, -1)
  if kind == "triangular":
    a = np.triu(a)
  gehrd = scipy_linalg.get_lapack_funcs("gehrd", (a[0],))
  with _x64(dtype):
    packed, taus = (np.asarray(r) for r in lax_linalg.hessenberg(a))
  for i in range(batch):
    packed_ref, taus_ref, _ = gehrd(a[i])
    np.testing.assert_allclose(packed[i], packed_ref, atol=10 * _tol(dtype))
    np.testing.assert_allclose(taus[i], taus_ref[:6], atol=10 * _tol(dtype))


# ------------------------------------------------ lu_pivots_to_permutation
@pytest.mark.parametrize("shape", [(5,), (3, 5), (40, 5), (0, 5), (2, 0, 5)])
def test_pivots_to_permutation_both_paths_match_lapack_swaps(shape):
  # Up to 16 permutations the swaps run on Python lists, past it batched.
  rng = np.random.default_rng(2)
  size = 7
  k = shape[-1]
  pivots = np.maximum(rng.integers(0, size, shape), np.arange(k)).astype(np.int32)
  got = np.asarray(lax_linalg.lu_pivots_to_permutation(pivots, size))
  assert got.dtype == np.int32 and got.shape == shape[:-1] + (size,)
  flat_p, flat_g = pivots.reshape(-1, k), got.reshape(-1, size)
  for p, g in zip(flat_p, flat_g):
    want = np.arange(size)
    for j, i in enumerate(p):
      want[[j, i]] = want[[i, j]]
    np.testing.assert_array_equal(g, want)


def test_schur_falls_back_per_matrix():
  # A near-Jordan block fails the eigenvector route's check (its V is
  # ill-conditioned): that matrix alone takes the QR iteration.
  rng = np.random.default_rng(3)
  q = np.linalg.qr(rng.standard_normal((6, 6)))[0]
  jordan = q @ (np.eye(6) * 2 + np.eye(6, k=1) + 1e-12 * rng.standard_normal((6, 6))) @ q.T
  a = np.stack([rng.standard_normal((6, 6)), jordan, rng.standard_normal((6, 6))])
  assert schur_from_eig(a)[2].tolist() == [True, False, True]
  with jax.enable_x64():
    t, z = (np.asarray(r) for r in lax_linalg.schur(a))
  for i in range(3):
    _check_schur_form(a[i], t[i], z[i], 1e-9)


# ---------------------------------------------------------------------- lu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 6, 6), (4, 3, 7), (4, 7, 3), (1, 6, 6), (2, 40, 40)])
def test_lu_batches_match_getrf(dtype, shape):
  # A batch of small matrices runs with the batch as the last axis, one
  # matrix Crout's panels, larger batches recursion plus batched panels.
  # Integer entries make exact ties: getrf takes the first largest row.
  rng = np.random.default_rng(sum(shape))
  a = rng.integers(-2, 3, shape).astype(dtype)
  if np.dtype(dtype).kind == "c":
    a = a + 1j * rng.integers(-2, 3, shape)
  a[0, :, 1] = 0     # a zero column: a zero pivot left in place
  with _x64(dtype):
    lu, pivots, perm = (np.asarray(r) for r in lax_linalg.lu(a))
  getrf = scipy_linalg.get_lapack_funcs("getrf", (a[0],))
  for i in range(shape[0]):
    lu_ref, piv_ref, _ = getrf(a[i])
    np.testing.assert_array_equal(pivots[i], piv_ref[:min(shape[1:])])
    np.testing.assert_allclose(lu[i], lu_ref, atol=100 * _tol(dtype))
    want = np.arange(shape[1])
    for j, p in enumerate(piv_ref[:min(shape[1:])]):
      want[[j, p]] = want[[p, j]]
    np.testing.assert_array_equal(perm[i], want)
