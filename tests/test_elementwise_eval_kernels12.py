"""Eval kernels of elementwise primitives sped up in session 12 (issue 14's
eager sweep): ``pow`` of the constant 2 to integral exponents through
np.ldexp (jnp.ldexp's 2**e, slow in NumPy's pow where results overflow or
are subnormal), complex ``atan2`` on the operands' real parts, and float ->
int ``convert_element_type`` of a few elements in Python. Each
must give the bits (integral powers of two are exact) or the values within
tolerance of the general formula, edge values included."""
import ml_dtypes
import numpy as np
import pytest

import openjax.numpy as jnp
from openjax import lax
from openjax._src.primitives.base import convert
from openjax._src.primitives.elementwise import (arithmetic, gamma_kernels, logic, special_numerics,
                                                 transcendental)
from tests.test_eager_library_kernels import _lean_kernel, _same_bits

_BF16 = np.dtype(ml_dtypes.bfloat16)


def _integral_exponents(dt):
  """Every exponent from far below the subnormals to far past overflow,
  signed zeros and infinities, in ``dt``."""
  k = np.concatenate([np.arange(-1100, 1100), [-0.0, np.inf, -np.inf, 5000, -5000]])
  with np.errstate(over="ignore"):
    return k.astype(dt)


@pytest.mark.parametrize("dt", [np.dtype(np.float16), np.dtype(np.float32),
                                np.dtype(np.float64), _BF16], ids=str)
def test_pow_of_two_to_integral_exponents_gives_the_impl_bits(dt):
  every = _integral_exponents(dt)
  # Past the size where every exponent takes np.ldexp; below it with
  # results out of the normal range (np.ldexp) and within it (np.power).
  for y in (np.tile(every, 8), every, every[(every > -100) & (every < 100)][:300]):
    for x in (np.array(2, dt), np.broadcast_to(np.array(2, dt), y.shape)):
      kernel = _lean_kernel(transcendental.pow_p, [x, y])
      with np.errstate(all="ignore"):
        _same_bits(kernel(x, y), transcendental._pow_impl(x, y)[0])


@pytest.mark.parametrize("dt", [np.dtype(np.float32), _BF16], ids=str)
def test_pow_of_two_keeps_numpy_pow_for_other_operands(dt):
  # Non-integral or NaN exponents, a base that is not 2 everywhere, or one
  # that is 2 but not a constant: NumPy's pow, with the impl's bits.
  rng = np.random.default_rng(1)
  frac = (rng.standard_normal(300) * 50).astype(dt)
  ints = np.arange(-150, 150).astype(dt)
  nan_one = ints.copy()
  nan_one[7] = np.nan
  varied = np.full(ints.shape, 2, dt)
  varied[3] = 3
  with np.errstate(all="ignore"):
    for x, y in ((np.array(2, dt), frac), (np.array(2, dt), nan_one), (varied, ints),
                 (np.full(ints.shape, 2, dt), ints), (np.array(0.5, dt), ints)):
      kernel = _lean_kernel(transcendental.pow_p, [x, y])
      _same_bits(kernel(x, y), transcendental._pow_impl(x, y)[0])


def test_ldexp_overflow_and_subnormal_results_eagerly():
  x = np.resize(np.array([1, 1.5, 3, 0, -2.5, 1e-40], np.float32), 600)
  e = np.resize(np.array([200, -140, 128, 5, -149, 20], np.int32), 600)
  with np.errstate(all="ignore"):
    _same_bits(jnp.ldexp(jnp.asarray(x), jnp.asarray(e)), np.ldexp(x, e))


_EDGE_COMPLEX = np.array([0, 1, -1, 1j, -1j, 1 + 2j, 2 - 1j, np.inf, -np.inf, np.nan,
                          complex(np.inf, 1), complex(1, np.nan), 1e-30 + 1e-30j, 1e30 - 1e30j,
                          -0.0, complex(0, -0.0), complex(-0.0, -0.0), 3 + 0j, -1 + 0.5j,
                          complex(-2, 0), complex(-2, -0.0)])


@pytest.mark.parametrize("dt", [np.dtype(np.complex64), np.dtype(np.complex128)], ids=str)
def test_complex_atan2_by_parts_gives_the_formula(dt):
  # Every pair of edge values (s = x^2 + y^2 = 0 gives NaN, signed zeros on
  # the branch cut keep the formula's sign) and random operands; above the
  # size where the eval trace computes by parts.
  ex, ey = np.meshgrid(_EDGE_COMPLEX, _EDGE_COMPLEX)
  rng = np.random.default_rng(2)
  rand = (rng.standard_normal((2, 3000)) + 1j * rng.standard_normal((2, 3000))) * \
      10.0 ** rng.integers(-3, 4, (2, 3000))
  x = np.concatenate([ex.ravel(), rand[0]]).astype(dt)
  y = np.concatenate([ey.ravel(), rand[1]]).astype(dt)
  assert x.size >= transcendental._ATAN2_BY_PARTS_MIN_SIZE
  with np.errstate(all="ignore"):
    wide = transcendental._complex_atan2_formula(x.astype(np.complex128),
                                                 y.astype(np.complex128))
    own = transcendental._complex_atan2_formula(x, y)   # NaN and inf where its s = 0 in dt
    # complex128 Arrays need x64: the kernel itself then.
    got = (np.asarray(transcendental.atan2(jnp.asarray(x), jnp.asarray(y)))
           if dt == np.complex64 else transcendental._atan2(x, y))
  assert got.dtype == dt
  finite = np.isfinite(own)
  np.testing.assert_array_equal(got[~finite], own[~finite])
  err = got[finite] - wide[finite]
  # The real part is an angle: at the branch cut (+-pi within rounding)
  # either sign is the value.
  err.real = np.abs(np.remainder(err.real + np.pi, 2 * np.pi) - np.pi)
  tol = 2e-6 if dt == np.complex64 else 1e-13
  assert np.all(np.abs(err) <= tol * np.maximum(np.abs(wide[finite]), 1.0))
  # The edge pairs: the formula's values, signed zeros on the cut included.
  edges = ex.size
  np.testing.assert_allclose(got[:edges], own[:edges], rtol=1e-6, atol=1e-6)


_INT_EDGES = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5, 0.99, -0.99, 127.5,
                       128, -128.7, -129, 255.9, 256, 2.0**31, -2.0**31 - 1, 2.0**31 - 1,
                       -2.0**31, 65535.7, 65536, 1e30, -1e30, 3.7, -3.7, 4294967295.0])


@pytest.mark.parametrize("src", [np.dtype(t) for t in (np.float16, np.float32, np.float64)],
                         ids=str)
@pytest.mark.parametrize("dst", [np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16,
                                                       np.int32, np.uint32)], ids=str)
def test_float_to_int_of_a_few_elements_saturates_like_the_impl(src, dst):
  # Up to 16 elements the kernel converts per element in Python: every edge
  # value (NaN -> 0, saturation, truncation toward zero) against the impl.
  with np.errstate(over="ignore"):
    edges = _INT_EDGES.astype(src)
  for x in (edges[:16], edges[11:], edges[:1], edges[3:9].reshape(2, 3), edges[:0]):
    kernel = _lean_kernel(convert.convert_element_type_p, [x], new_dtype=dst, weak_type=False)
    _same_bits(kernel(x), convert.convert_numpy(x, dst))


def test_reduce_precision_to_bfloat16_gives_the_impl_bits():
  # Random bit patterns (NaNs with payloads, subnormals, both signs) and
  # every pattern around the rounding ties, the overflow edge and NaN/inf.
  rng = np.random.default_rng(3)
  bits = np.concatenate([
      rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32),
      np.arange(0, 70000, dtype=np.uint32), np.arange(0x7F7F0000, 0x7F810000, dtype=np.uint32),
      np.arange(0xFF7F0000, 0xFF810000, dtype=np.uint32),
      np.arange(0x7FFF0000, 0x80010000, dtype=np.uint32),
      (np.arange(0, 2**16, dtype=np.uint32) << 16) | 0x8000])   # exact ties
  x = bits.view(np.float32)
  params = dict(exponent_bits=8, mantissa_bits=7)
  for v in (x, x[5].reshape(()), x[:0], x[:12].reshape(3, 4)):
    kernel = _lean_kernel(arithmetic.reduce_precision_p, [v], **params)
    assert kernel is arithmetic._round_float32_to_bfloat16
    with np.errstate(all="ignore"):
      _same_bits(kernel(v), arithmetic._reduce_precision_impl(v, **params)[0])


@pytest.mark.parametrize("n", [12, 3000], ids=["python", "vectorised"])
def test_incomplete_gamma_and_beta_of_narrow_operands_stop_early_within_float32(n):
  # float32 operands stop their series and fractions at SINGLE_EPS: the
  # float64 values stay within 1e-9 of the full evaluation's, and the float32
  # results (the primitives' own dtype) within an ulp.
  rng = np.random.default_rng(5)
  a = rng.uniform(0.05, 30, n).astype(np.float32)
  x = (a * rng.uniform(0.05, 3, n)).astype(np.float32)
  b = rng.uniform(0.05, 30, n).astype(np.float32)
  t = rng.uniform(0.001, 0.999, n).astype(np.float32)
  for fn, args in ((special_numerics.igamma, (a, x)), (special_numerics.igammac, (a, x)),
                   (special_numerics.betainc, (a, b, t))):
    wide = [v.astype(np.float64) for v in args]
    full, early = fn(*wide), fn(*wide, single=True)
    assert np.max(np.abs(early - full) / np.maximum(np.abs(full), 1e-300)) < 1e-9
    ulps = np.abs(early.astype(np.float32).view(np.int32).astype(np.int64)
                  - full.astype(np.float32).view(np.int32).astype(np.int64))
    assert ulps.max() <= 1
  got = np.asarray(lax.igamma(jnp.asarray(a), jnp.asarray(x)))
  assert got.dtype == np.float32
  np.testing.assert_allclose(got, special_numerics.igamma(a.astype(np.float64),
                                                          x.astype(np.float64)), rtol=2e-7,
                             atol=1e-30)


@pytest.mark.parametrize("sample", [True, False], ids=["random_gamma_grad", "igamma_grad_a"])
def test_gamma_derivatives_decide_edges_first_and_run_the_rest_alone(sample):
  # x = 0 gives 0 unless a <= 0 or a NaN operand (NaN); the other elements
  # run their own method, with the bits they have when computed one by one.
  rng = np.random.default_rng(6)
  a = rng.uniform(0.05, 12, 400).astype(np.float32)
  x = (a * rng.uniform(0, 3, 400)).astype(np.float32)
  a[:6] = [0, -1, np.nan, 2, 3, 0.5]
  x[:6] = [0, 0, 0, 0, np.nan, -1]
  x[6:9] = [np.inf, 1e-30, 40]
  fn = gamma_kernels.random_gamma_grad if sample else gamma_kernels.igamma_grad_a
  out = fn(a, x)
  assert out.dtype == np.float32
  np.testing.assert_array_equal(out[:6], [np.nan, np.nan, np.nan, 0, np.nan, np.nan])
  one_by_one = np.array([fn(a[i:i + 1], x[i:i + 1])[0] for i in range(0, 400, 7)])
  _same_bits(np.ascontiguousarray(out[::7]), one_by_one)
  zeros = fn(np.array([0.5, 1, 3], np.float32), np.zeros(3, np.float32))
  _same_bits(zeros, np.zeros(3, np.float32))


@pytest.mark.parametrize("name", ["lt", "le", "gt", "ge", "max", "min", "atan2"])
def test_float16_primitives_through_float32_give_numpys_half_bits(name):
  # Every float16 bit pattern (NaNs, signed zeros, infinities, subnormals)
  # against shuffled ones: the float32 route gives NumPy's half loops' bits
  # (atan2: within an ulp; its float32 value rounds to the other neighbour
  # of a near-tie in 9 of 65536).
  p, ufunc = {"lt": (logic.lt_p, np.less), "le": (logic.le_p, np.less_equal),
              "gt": (logic.gt_p, np.greater), "ge": (logic.ge_p, np.greater_equal),
              "max": (arithmetic.max_p, np.maximum), "min": (arithmetic.min_p, np.minimum),
              "atan2": (transcendental.atan2_p, np.arctan2)}[name]
  x = np.arange(2**16, dtype=np.uint16).view(np.float16)
  y = np.random.default_rng(8).permutation(x)
  for a, b in ((x, y), (x, np.array(0.5, np.float16)), (x[:9000], x[-9000:])):
    kernel = _lean_kernel(p, [a, b])
    assert kernel is not ufunc   # the float32 route
    with np.errstate(all="ignore"):
      got, want = np.asarray(kernel(a, b)), ufunc(a, b)
    if want.dtype == np.float16:   # NaN payloads: NaN where NumPy's is
      nan = np.isnan(want)
      np.testing.assert_array_equal(np.isnan(got), nan)
      got, want = got[~nan], want[~nan]
    if name == "atan2":
      ulps = np.abs(got.view(np.int16).astype(np.int32) - want.view(np.int16).astype(np.int32))
      assert ulps.size == 0 or (ulps.max() <= 1 and np.count_nonzero(ulps) <= 16)
      continue
    _same_bits(got, want)
  small = np.ones(10, np.float16)
  assert _lean_kernel(p, [small, small]) is not None
