"""The eager special-function kernels (special_kernels, incomplete_kernels,
special_numerics.zeta): accuracy against SciPy on 1e5 random points per
function and dtype (float32 within 2 ulp of SciPy's float64 value rounded,
float64 within ~1e-14 relative on the bulk of the domain), mpmath where SciPy
itself is off (lgamma near its zeros 1 and 2), XLA's edge values, and the
element-loop, gathered and per-piece paths agreeing with each other."""
import math

import mpmath
import numpy as np
import pytest
import scipy.special as sp

import openjax as jax
from openjax._src.primitives.elementwise import (incomplete_kernels, special_kernels,
                                                 special_numerics)

N = 100_000
F32_TINY = float(np.finfo(np.float32).tiny)


def _ulp32(got, ref):
  """Max distance of float32 ``got`` from float64 ``ref`` in ulps of
  float32(ref), over the finite normal-range references."""
  ref32 = ref.astype(np.float32)
  ok = np.isfinite(ref32) & (np.abs(ref) > F32_TINY)
  spacing = np.spacing(np.abs(ref32[ok])).astype(np.float64)
  return float(np.max(np.abs(got[ok].astype(np.float64) - ref[ok]) / spacing))


def _rel(got, ref):
  ok = np.isfinite(ref) & (ref != 0)
  return float(np.max(np.abs(got[ok] - ref[ok]) / np.abs(ref[ok])))


def _f32_sample(rng, lo, hi, n=N):
  return rng.uniform(lo, hi, n).astype(np.float32)


UNARY = {   # name: (openjax primitive wrapper, kernel, SciPy reference, float32 range)
    "lgamma": (jax.lax.lgamma, special_kernels.lgamma, sp.gammaln, (-20, 40)),
    "digamma": (jax.lax.digamma, special_kernels.digamma, sp.digamma, (-20, 40)),
    "bessel_i0e": (jax.lax.bessel_i0e, special_kernels.bessel_i0e, sp.i0e, (-60, 60)),
    "bessel_i1e": (jax.lax.bessel_i1e, special_kernels.bessel_i1e, sp.i1e, (-60, 60)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_float32_within_two_ulp_of_scipy(name):
  wrapper, _, reference, (lo, hi) = UNARY[name]
  rng = np.random.default_rng(1)
  x = np.concatenate([_f32_sample(rng, lo, hi), _f32_sample(rng, -1, 3, 20_000),
                      np.exp(rng.uniform(-20, 20, 20_000)).astype(np.float32)])
  got = np.asarray(wrapper(x))
  assert got.dtype == np.float32 and got.shape == x.shape
  assert _ulp32(got, reference(x.astype(np.float64))) <= 2


@pytest.mark.parametrize("name", sorted(UNARY))
def test_float64_relative_error_on_the_bulk(name):
  _, kernel, reference, _ = UNARY[name]
  rng = np.random.default_rng(2)
  if name == "lgamma":      # away from the zeros 1 and 2 (SciPy's own error there) and x < 0
    x = np.concatenate([rng.uniform(2.5, 200, N), rng.uniform(1e-3, 0.9, N // 10),
                        np.exp(rng.uniform(2, 600, N // 10))])
  elif name == "digamma":   # away from psi's root 1.46 (relative error of any method there)
    x = np.concatenate([rng.uniform(2, 200, N), rng.uniform(1e-3, 1.3, N // 10),
                        np.exp(rng.uniform(2, 600, N // 10))])
  else:
    x = np.concatenate([rng.uniform(-40, 40, N), np.exp(rng.uniform(-30, 600, N // 10))])
  with np.errstate(all="ignore"):
    assert _rel(kernel(x), reference(x)) < 2e-14


def test_lgamma_digamma_near_their_zeros_against_mpmath():
  rng = np.random.default_rng(3)
  for center in (1.0, 2.0):
    x = center + rng.uniform(-0.02, 0.02, 300)
    want = np.array([float(mpmath.loggamma(v)) for v in x])
    assert _rel(special_kernels.lgamma(np.tile(x, 40), False)[:300], want) < 1e-14
  root = 1.4616321449683623
  x = root + rng.uniform(-0.01, 0.01, 300)
  want = np.array([float(mpmath.digamma(v)) for v in x])
  assert _rel(special_kernels.digamma(np.tile(x, 40), False)[:300], want) < 3e-14


EDGES = np.array([0.0, -0.0, -1.0, -3.0, -1e20, np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324,
                  -2.5, 0.5, 1.0, 2.0, 1e-300, 8.0, -8.0, 10.0, 9.5, 1.5, -0.5, 3.5, 1.25])
EXACT = {   # XLA's values where they are exact (the rest: SciPy's, to rounding)
    "lgamma": [np.inf, np.inf, np.inf, np.inf, np.inf, np.inf, np.inf, np.nan, None, np.inf,
               math.lgamma(5e-324)],
    "digamma": [np.nan, np.nan, np.nan, np.nan, np.nan, np.inf, np.nan, np.nan],
    "bessel_i0e": [1.0, 1.0, None, None, None, 0.0, 0.0, np.nan],
    "bessel_i1e": [0.0, -0.0, None, None, None, 0.0, -0.0, np.nan],
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("single", [False, True])
def test_edges_and_paths_agree(name, single):
  """XLA's values at the edges (-0.0's sign too), the same from the element
  loop, the gathered pass and the per-piece chunks."""
  _, kernel, reference, _ = UNARY[name]
  dtype = np.float32 if single else np.float64
  with np.errstate(all="ignore"):
    small = kernel(EDGES, single).astype(dtype)
    gathered = kernel(np.tile(EDGES, 10), single)[:EDGES.size].astype(dtype)
    pieces = kernel(np.tile(EDGES, 1000), single)[:EDGES.size].astype(dtype)
    ref = reference(EDGES).astype(dtype)
  exact = EXACT[name]
  for k, want in enumerate(exact):
    if want is not None:
      np.testing.assert_array_equal(small[k], dtype(want), err_msg=f"{name}({EDGES[k]})")
      assert np.signbit(small[k]) == np.signbit(want), (name, EDGES[k])
  rest = np.array([k >= len(exact) or exact[k] is None for k in range(EDGES.size)])
  np.testing.assert_allclose(small[rest], ref[rest], err_msg=name,
                             rtol=1e-14 if not single else 1.2e-7, atol=1e-320)
  for other in (gathered, pieces):
    np.testing.assert_allclose(other, small, rtol=4e-16 if not single else 1.2e-7, atol=0)
    np.testing.assert_array_equal(np.signbit(other), np.signbit(small))


def test_element_loop_and_vector_paths_agree_on_random_points():
  rng = np.random.default_rng(4)
  x = rng.uniform(-20, 40, 20)
  for name, (_, kernel, _, _) in UNARY.items():
    for single in (False, True):
      with np.errstate(all="ignore"):
        small = kernel(x, single)
        wide = kernel(np.tile(x, 600), single)[:x.size]
      np.testing.assert_allclose(small, wide, rtol=1e-14 if not single else 3e-9, err_msg=name)


# --------------------------------------------------- incomplete gamma, beta
def _gamma_args(rng, n):
  return rng.uniform(0.05, 20, n), rng.uniform(0, 30, n)


@pytest.mark.parametrize("upper", [False, True])
def test_igamma_matches_scipy(upper):
  ours = special_numerics.igammac if upper else special_numerics.igamma
  reference = sp.gammaincc if upper else sp.gammainc
  rng = np.random.default_rng(5)
  a, x = _gamma_args(rng, N)
  wide_a, wide_x = np.exp(rng.uniform(-5, 5, N // 10)), np.exp(rng.uniform(-5, 5, N // 10))
  with np.errstate(all="ignore"):
    assert _rel(ours(a, x), reference(a, x)) < 1e-13
    assert _rel(ours(wide_a, wide_x), reference(wide_a, wide_x)) < 1e-12
    got32 = np.asarray((jax.lax.igammac if upper else jax.lax.igamma)(
        a.astype(np.float32), x.astype(np.float32)))
  assert got32.dtype == np.float32
  ref32 = reference(a.astype(np.float32).astype(np.float64), x.astype(np.float32).astype(np.float64))
  assert _ulp32(got32, ref32) <= 2


def test_betainc_matches_scipy():
  rng = np.random.default_rng(6)
  a, b, x = rng.uniform(0.1, 30, N), rng.uniform(0.1, 30, N), rng.uniform(0, 1, N)
  with np.errstate(all="ignore"):
    assert _rel(special_numerics.betainc(a, b, x), sp.betainc(a, b, x)) < 1e-12
    got32 = np.asarray(jax.lax.betainc(a.astype(np.float32), b.astype(np.float32),
                                       x.astype(np.float32)))
  args64 = [v.astype(np.float32).astype(np.float64) for v in (a, b, x)]
  # The fraction converges relative to 1: tiny results keep ~1e-13 absolute error.
  ref = sp.betainc(*args64)
  big = np.abs(ref) > 1e-6
  assert _ulp32(got32[big], ref[big]) <= 2


IGAMMA_EDGES = (np.array([1, 0, -1, 1, 1, 2, 0, np.inf, np.inf, np.inf, 0, 3, np.nan, 1e-300]),
                np.array([0, 1, 1, -1, np.inf, np.nan, 0, 1, np.inf, 0, np.inf, 1e-320, 1, 5]))


@pytest.mark.parametrize("upper", [False, True])
def test_igamma_edges_same_on_both_paths(upper):
  ours = special_numerics.igammac if upper else special_numerics.igamma
  a, x = IGAMMA_EDGES
  assert a.size <= incomplete_kernels.SCALAR_MAX
  with np.errstate(all="ignore"):
    small = ours(a, x)
    wide = ours(np.tile(a, 10), np.tile(x, 10))[:a.size]
  p = [0, 1, np.nan, np.nan, 1, np.nan, np.nan, np.nan, 1, 0, 1]
  want = [1 - v for v in p] if upper else p
  np.testing.assert_array_equal(small[:len(want)], want)
  np.testing.assert_allclose(small, wide, rtol=1e-15)


def test_betainc_edges_same_on_both_paths():
  a = np.array([1, 0, 1, -1, 1, 1, 2, 2, 0, np.inf, 2, np.inf, 2, 1, 0])
  b = np.array([1, 1, 0, 1, 1, 1, 2, 2, np.inf, 3, np.inf, np.inf, 2, 0, 0])
  x = np.array([0.5, 0.5, 0.5, 0.5, -0.1, 1.1, 0, 1, 0.5, 0.5, 0.5, 0.5, -0.0, 1, 0.5])
  want = [0.5, 1, 0, np.nan, np.nan, np.nan, 0, 1, 1, 0, 1, np.nan, 0, 1, np.nan]
  with np.errstate(all="ignore"):
    small = special_numerics.betainc(a, b, x)
    wide = special_numerics.betainc(np.tile(a, 10), np.tile(b, 10), np.tile(x, 10))[:a.size]
  np.testing.assert_array_equal(small, want)
  np.testing.assert_array_equal(wide, want)
  assert not np.signbit(small[12]) and not np.signbit(wide[12])


def test_scalar_and_vector_iterations_agree():
  rng = np.random.default_rng(7)
  a, x = _gamma_args(rng, 30)
  ab = rng.uniform(0.1, 30, 30)
  t = rng.uniform(0, 1, 30)
  with np.errstate(all="ignore"):
    for fn, args in ((special_numerics.igamma, (a, x)), (special_numerics.igammac, (a, x)),
                     (special_numerics.betainc, (a, ab, t))):
      small = fn(*args)
      wide = fn(*(np.tile(v, 100) for v in args))[:30]
      np.testing.assert_allclose(small, wide, rtol=1e-13, atol=1e-300)


# -------------------------------------------------------- zeta, polygamma
def test_zeta_and_polygamma_match_scipy():
  rng = np.random.default_rng(8)
  x, q = rng.uniform(1.1, 12, N), rng.uniform(0.1, 10, N)
  m = rng.integers(0, 5, N).astype(np.float64)
  with np.errstate(all="ignore"):
    assert _rel(special_numerics.zeta(x, q), sp.zeta(x, q)) < 1e-14
    assert _rel(special_numerics.polygamma(m, q), sp.polygamma(m, q)) < 1e-13
    got32 = np.asarray(jax.lax.zeta(x.astype(np.float32), q.astype(np.float32)))
  ref32 = sp.zeta(x.astype(np.float32).astype(np.float64), q.astype(np.float32).astype(np.float64))
  assert _ulp32(got32, ref32) <= 2


def test_zeta_edges_same_on_both_paths():
  x = np.array([1, 0.5, 2, 3, 2, 3, 2.5, np.inf, 3, 2, 4, 2.0, 2, np.nan])
  q = np.array([1, 1, 0, 0, -1, -1.5, -1.5, 2, -2.5, np.inf, np.nan, -7.25, 1e-5, 1])
  want = [np.inf, np.nan, np.inf, np.nan, np.inf, sp.zeta(3, -1.5), np.nan, np.nan,
          sp.zeta(3, -2.5), np.nan, np.nan, sp.zeta(2, -7.25), sp.zeta(2, 1e-5), np.nan]
  with np.errstate(all="ignore"):
    small = special_numerics.zeta(x, q)
    wide = special_numerics.zeta(np.tile(x, 2000), np.tile(q, 2000))[:x.size]
  np.testing.assert_allclose(small, want, rtol=1e-13)
  np.testing.assert_array_equal(small, wide)
  assert math.isinf(small[0]) and math.isinf(wide[4])


@pytest.mark.parametrize("x, q", [(np.inf, 2.0), (2.0, np.inf), (np.nan, 2.0), (2.0, np.nan),
                                  (1.0, 2.0), (0.5, 2.0)])
def test_zeta_edge_alone(x, q):
  """An edge value alone in its array (no ordinary element beside it)."""
  with np.errstate(all="ignore"):
    got = special_numerics.zeta(np.full(3, x), np.full(3, q))
  np.testing.assert_array_equal(got, np.full(3, np.inf if x == 1 else np.nan))


@pytest.mark.parametrize("edge", [(0.5, 2.0), (2.0, np.nan), (np.inf, 1.0), (1.0, 3.0)])
def test_zeta_without_edges_gives_the_edge_paths_bits(edge):
  """An array with no edge (x > 1, 0 < q, both finite) skips the edge
  handling and the negative-q shift: its elements get the same bits as
  beside an edge value (a negative q would add direct terms for all)."""
  rng = np.random.default_rng(8)
  x, q = rng.uniform(1.01, 20, 12), rng.uniform(1e-3, 20, 12)
  with np.errstate(all="ignore"):
    clean = special_numerics.zeta(x, q)
    mixed = special_numerics.zeta(np.append(x, edge[0]), np.append(q, edge[1]))
  np.testing.assert_array_equal(clean, mixed[:12])
  np.testing.assert_allclose(clean, sp.zeta(x, q), rtol=1e-13)


def test_zeta_long_shift_for_negative_q():
  """q far below 0 (integer x): more direct terms than the matrix takes."""
  x, q = np.array([2.0, 3.0, 4.0]), np.array([-100.5, 0.5, -70.25])
  with np.errstate(all="ignore"):
    got = special_numerics.zeta(x, q)
  np.testing.assert_allclose(got, sp.zeta(x, q), rtol=1e-12)


# ----------------------------------------------------------------- erf_inv
@pytest.mark.parametrize("single", [True, False])
def test_erf_inv_element_loop_gives_the_vector_paths_bits(single):
  """Up to _ERF_INV_SCALAR_MAX elements erf_inv runs element by element in
  Python floats: the same bits as the stacked pieces (short arrays) and the
  per-piece pass (long ones), at the pieces' bounds, +-1, outside [-1, 1],
  +-0 and NaN."""
  rng = np.random.default_rng(9)
  # w = -log1p(-x^2) at the bounds 5 (float32), 6.25 and 16 (float64)
  near = np.sqrt(-np.expm1(-np.array([5.0, 6.25, 16.0])))
  edges = np.concatenate([near, np.nextafter(near, 0), -near,
                          [0.0, -0.0, 1.0, -1.0, 1.5, -2.0, np.nan, -np.nan, 1e-30,
                           0.999999, -0.9999999999, np.inf]])
  values = np.concatenate([edges, rng.uniform(-1, 1, 200), 1 - np.exp(rng.uniform(-40, -1, 50))])
  if single:
    values = values.astype(np.float32).astype(np.float64)
  n = special_numerics._ERF_INV_SCALAR_MAX
  with np.errstate(all="ignore"):
    stacked = special_numerics.erf_inv(np.tile(values, 2), single)[:values.size]
    by_piece = special_numerics.erf_inv(np.tile(values, 20), single)[:values.size]
    small = np.concatenate([special_numerics.erf_inv(values[k:k + n], single)
                            for k in range(0, values.size, n)])
  assert 2 * values.size < special_numerics._ERF_INV_SPLIT_MIN <= 20 * values.size
  np.testing.assert_array_equal(small.view(np.uint64), stacked.view(np.uint64))
  np.testing.assert_array_equal(small.view(np.uint64), by_piece.view(np.uint64))
  assert special_numerics.erf_inv(np.zeros((0, 3)), single).shape == (0, 3)
  assert special_numerics.erf_inv(np.array(0.5), single).shape == ()
