"""The eager-speed reformulations of jax.scipy (issue 14's eager sweep),
checked where they could go wrong: the window-by-copies construction of the
Toeplitz family at degenerate shapes, Fiedler's companion matrix from its
static layout, the superdiagonal-at-a-time recurrences of sqrtm/funm/
solve_sylvester on larger matrices, hyp2f1 with every branch's elements in
one array (each branch's loop sees the other elements masked), the cached
programs of the Krylov solvers (repeat calls, pytrees, traced calls), and
the written-out polynomials of the special functions at inf/NaN."""
import numpy as np
import pytest
import scipy.linalg
import scipy.signal
from scipy import special

import openjax as jax
import openjax.numpy as jnp
from openjax.scipy import linalg as jsl
from openjax.scipy import special as jsp
from openjax.scipy import signal as jsig
from openjax.scipy.sparse import linalg as sparse_linalg


@pytest.mark.parametrize("m,n", [(1, 1), (1, 4), (4, 1), (3, 4), (5, 2), (2, 7)])
def test_toeplitz_hankel_circulant_shapes(m, n):
  c = np.arange(1.0, m + 1) * 1.5
  r = np.arange(10.0, 10 + n)
  np.testing.assert_array_equal(jsl.toeplitz(c, r), scipy.linalg.toeplitz(c, r))
  np.testing.assert_array_equal(jsl.toeplitz(c), scipy.linalg.toeplitz(c))
  np.testing.assert_array_equal(jsl.hankel(c, r), scipy.linalg.hankel(c, r))
  np.testing.assert_array_equal(jsl.circulant(c), scipy.linalg.circulant(c))


def test_toeplitz_batched_and_integer():
  c = np.arange(12, dtype=np.int32).reshape(3, 4)
  r = np.arange(15, dtype=np.int32).reshape(3, 5) * 7
  out = jsl.toeplitz(c, r)
  assert out.dtype == np.int32 and out.shape == (3, 4, 5)
  for i in range(3):
    np.testing.assert_array_equal(out[i], scipy.linalg.toeplitz(c[i], r[i]))
    np.testing.assert_array_equal(jsl.circulant(c)[i], scipy.linalg.circulant(c[i]))


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 9, 16])
def test_fiedler_companion_layout(n):
  a = np.random.default_rng(n).uniform(1, 2, n)
  np.testing.assert_allclose(jsl.fiedler_companion(a), scipy.linalg.fiedler_companion(a),
                             rtol=1e-6)


def test_fiedler_companion_batched():
  a = np.random.default_rng(0).uniform(1, 2, (2, 5))
  out = jsl.fiedler_companion(a)
  for i in range(2):
    np.testing.assert_allclose(out[i], scipy.linalg.fiedler_companion(a[i]), rtol=1e-6)


@pytest.mark.parametrize("n", [1, 2, 7, 12])
def test_schur_recurrences_match_scipy(n):
  with jax.enable_x64():
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n))
    spd = a @ a.T + n * np.eye(n)
    np.testing.assert_allclose(jsl.sqrtm(spd), scipy.linalg.sqrtm(spd), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(jsl.funm(a, jnp.exp), scipy.linalg.expm(a), rtol=1e-8,
                               atol=1e-8)
    b = rng.standard_normal((3, 3)) + 4 * np.eye(3)
    c = rng.standard_normal((n, 3))
    shifted = a + 4 * np.eye(n)
    np.testing.assert_allclose(jsl.solve_sylvester(shifted, b, c),
                               scipy.linalg.solve_sylvester(shifted, b, c), rtol=1e-8,
                               atol=1e-8)


def test_funm_error_estimate_is_the_smallest_gap():
  with jax.enable_x64():
    t = np.triu(np.random.default_rng(0).standard_normal((4, 4)))
    np.fill_diagonal(t, [1.0, 1.5, 3.0, 3.1])
    _, err = jsl.funm(t, jnp.exp, disp=False)
    eps = np.finfo(np.float64).eps
    expected = min(1, max(eps, eps / 0.1 * np.linalg.norm(np.triu(t, 1), 1)))
    np.testing.assert_allclose(err, expected, rtol=1e-6)


def test_hyp2f1_every_branch_in_one_array():
  # One call whose elements take the power series, the near-one series, the
  # terminating polynomial, Euler's transformation, Gauss' theorem at x = 1
  # and the closed forms: each branch's loop masks the others' elements.
  with jax.enable_x64():
    a = np.array([0.5, 1.0, -3.0, 0.5, 0.5, 1.2, 0.7, 2.0])
    b = np.array([0.25, 1.0, 2.0, 0.5, 0.25, 0.3, 1.1, 3.0])
    c = np.array([3.0, 2.0, 1.5, 1.0, 3.0, 4.0, 1.1, 1.5])
    x = np.array([0.3, 0.95, 0.7, 0.5, 1.0, -0.6, 0.2, 0.8])
    np.testing.assert_allclose(jsp.hyp2f1(a, b, c, x), special.hyp2f1(a, b, c, x), rtol=1e-8)
    # The same elements alone give the same values (no lane leaks into another).
    for i in range(len(x)):
      np.testing.assert_allclose(jsp.hyp2f1(a[i], b[i], c[i], x[i]),
                                 jsp.hyp2f1(a, b, c, x)[i], rtol=1e-12)


def test_krylov_programs_repeat_and_trace():
  rng = np.random.default_rng(0)
  m = rng.standard_normal((5, 5))
  a = (m @ m.T + 5 * np.eye(5)).astype(np.float32)
  b = rng.standard_normal(5).astype(np.float32)
  expected = np.linalg.solve(a.astype(np.float64), b)
  for solve in (sparse_linalg.cg, sparse_linalg.bicgstab, sparse_linalg.gmres):
    first = solve(a, b, tol=1e-6)[0]
    second = solve(a, b, tol=1e-6)[0]
    np.testing.assert_array_equal(first, second)   # the cached program: same bits
    np.testing.assert_allclose(first, expected, rtol=1e-4, atol=1e-4)
    traced = jax.jit(lambda a, b, solve=solve: solve(a, b, tol=1e-6)[0])(a, b)
    np.testing.assert_allclose(traced, expected, rtol=1e-4, atol=1e-4)
  # Pytree right-hand sides with a function operator run inline, as before.
  x, _ = sparse_linalg.cg(lambda v: {"p": a @ v["p"]}, {"p": b}, tol=1e-6)
  np.testing.assert_allclose(x["p"], expected, rtol=1e-4, atol=1e-4)
  # The cached program differentiates like the inline solve.
  g = jax.grad(lambda b: jnp.sum(sparse_linalg.cg(a, b, tol=1e-6)[0]))(b)
  np.testing.assert_allclose(g, np.linalg.solve(a.astype(np.float64).T, np.ones(5)),
                             rtol=1e-3, atol=1e-3)


def test_written_out_polynomials_at_special_values():
  # horner() starts from zero as polyval's scan does: inf and NaN arguments
  # give the values they gave through jnp.polyval.
  x = np.array([np.inf, -np.inf, np.nan, 0.0, 1e-30, 3.0, 7.0], np.float32)
  for f, ref in ((jsp.dawsn, special.dawsn), (jsp.erfcx, special.erfcx)):
    out = np.asarray(f(x))
    finite = np.isfinite(x)
    np.testing.assert_allclose(out[finite], ref(x[finite].astype(np.float64)), rtol=2e-6)
    assert np.isnan(out[2])
  p = np.array([0.0, 1.0, 0.5, 1e-30, 1 - 1e-7, np.nan], np.float32)
  out = np.asarray(jsp.ndtri(p))
  assert out[0] == -np.inf and out[1] == np.inf and out[2] == 0 and np.isnan(out[5])
  np.testing.assert_allclose(out[3:5], special.ndtri(p[3:5].astype(np.float64)), rtol=1e-5)


def test_detrend_breakpoints_as_static_arguments():
  x = np.random.default_rng(0).standard_normal((12, 2)).astype(np.float32)
  for bp in (0, 5, [5], (3, 8), np.array([4, 9])):
    np.testing.assert_allclose(jsig.detrend(x, axis=0, bp=bp),
                               scipy.signal.detrend(x, axis=0, bp=bp), atol=1e-5)
