"""The compiled (IREE) elementwise and special-function primitives against
their NumPy impls: the StableHLO they emit, and the values at the edges
where XLA's semantics are specific (integer division by zero, INT_MIN / -1,
shifts past the bit width, NaN in max/min, rounding ties, unsigned sign,
signed zeros and infinities in atan2/pow, complex branch cuts, n-way
select), per dtype class (bool, signed, unsigned, narrow and wide floats,
complex; 64-bit ones under x64)."""
import ml_dtypes
import numpy as np
import scipy.special
import pytest

import openjax as jax
from openjax import lax
import openjax.numpy as jnp

F32, F16, BF16, C64 = np.float32, np.float16, ml_dtypes.bfloat16, np.complex64
_FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 3.0, 1e-30, 1e30, np.inf, -np.inf,
                np.nan]


def _text(f, *args):
  return jax.jit(f).lower(*args).as_text()


def _compiled(f, *args):
  with jax.config.override("openjax_executor", "iree"):
    return jax.jit(f)(*args)


def _check(f, *args, rtol=2e-6, atol=0.0, exact=False):
  """Compiled equals eager: bit for bit for integers and bools (and floats
  when ``exact``), else to ``rtol``/``atol``, NaN where NaN. IREE's CPU code
  flushes subnormal results of float arithmetic to zero, so a subnormal eager
  value may also come back as a zero of its sign."""
  got, want = _compiled(f, *args), f(*args)
  got, want = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
  for g, w in zip(got, want):
    g, w = np.asarray(g), np.asarray(w)
    assert g.dtype == w.dtype and g.shape == w.shape
    if g.dtype.kind == "c":
      _close(g.real, w.real, rtol, atol, exact)
      _close(g.imag, w.imag, rtol, atol, exact)
    elif g.dtype.kind == "f" or g.dtype == BF16:
      _close(g, w, rtol, atol, exact)
    else:
      np.testing.assert_array_equal(g, w)


def _close(g, w, rtol, atol, exact):
  tiny = float(ml_dtypes.finfo(w.dtype).tiny)
  g, w = g.astype(np.float64), w.astype(np.float64)
  flushed = np.where(np.abs(w) < tiny, np.copysign(0.0, w), w)
  ok = np.isnan(g) & np.isnan(w)
  for ref in (w, flushed):
    with np.errstate(invalid="ignore"):
      ok |= (g == ref) if exact else (g == ref) | (np.abs(g - ref) <= atol + rtol * np.abs(ref))
  assert ok.all(), f"mismatch at {np.argwhere(~ok)[:6].tolist()}: got {g[~ok][:6]}, " \
                   f"want {w[~ok][:6]}"


def _grid(values, dtype):
  a, b = np.meshgrid(np.asarray(values, np.float64), np.asarray(values, np.float64),
                     indexing="ij")
  with np.errstate(over="ignore"):
    return a.astype(dtype), b.astype(dtype)


# ----------------------------------------------------------------- op text
@pytest.mark.parametrize("dtype,kind", [(np.float32, "FLOAT"), (np.int32, "SIGNED"),
                                        (np.uint8, "UNSIGNED"), (np.bool_, "UNSIGNED")])
def test_comparison_type(dtype, kind):
  x = np.ones(3, dtype)
  assert f"stablehlo.compare LT, %arg0, %arg1, {kind}" in _text(lax.lt, x, x)


@pytest.mark.parametrize("fn,op", [(lax.erf, "chlo.erf"), (lax.erfc, "chlo.erfc"),
                                   (lax.asin, "chlo.asin"),
                                   (lax.bessel_i1e, "chlo.bessel_i1e"),
                                   (lax.exp, "stablehlo.exponential"),
                                   (lambda x: lax.round(x), "stablehlo.round_nearest_afz"),
                                   (lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
                                    "stablehlo.round_nearest_even"),
                                   (lambda x: lax.reduce_precision(x, 5, 10),
                                    "stablehlo.reduce_precision"),
                                   (lambda x: lax.bitcast_convert_type(x, np.int32),
                                    "stablehlo.bitcast_convert")])
def test_op_text(fn, op):
  assert op in _text(fn, np.ones(3, F32))


def test_narrow_floats_compute_in_float32():
  text = _text(lax.exp, np.ones(3, BF16))
  assert "stablehlo.exponential" in text and "tensor<3xf32>" in text


def test_broadcasting_operands_are_expanded():
  text = _text(lax.add, np.ones((1, 4), F32), np.ones((3, 1), F32))
  assert text.count("stablehlo.broadcast_in_dim") == 2
  _check(lax.add, np.arange(4, dtype=F32).reshape(1, 4), np.arange(3, dtype=F32).reshape(3, 1))
  _check(lax.mul, np.arange(6, dtype=F32).reshape(2, 3), np.float32(2.5))


def test_special_functions_with_loops_emit_while():
  x = np.ones(3, F32)
  assert "stablehlo.while" in _text(lax.igamma, x, x)
  for fn in (lax.lgamma, lax.digamma, lax.sin):    # evaluated in float64
    assert "xf64>" in _text(fn, x)


def _ulps(got, want):
  got, want = np.asarray(got), np.asarray(want)
  d = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
  d[(got == want) | (np.isnan(got) & np.isnan(want))] = 0
  tiny = np.finfo(F32).tiny                      # IREE flushes subnormal results
  d[(np.abs(want) < tiny) & (got == 0)] = 0
  return d


@pytest.mark.parametrize("name,fn,ref,lo,hi,max_ulps", [
    ("sin", lax.sin, np.sin, -4, 5, 1), ("cos", lax.cos, np.cos, -4, 5, 1),
    ("tan", lax.tan, np.tan, -4, 5, 1), ("cbrt", lax.cbrt, np.cbrt, -8, 4, 2),
    ("exp2", lax.exp2, np.exp2, -2, 2.1, 2), ("lgamma", lax.lgamma, scipy.special.gammaln, -3, 2, 1),
    ("digamma", lax.digamma, scipy.special.psi, -3, 2, 1), ("log", lax.log, np.log, -8, 4, 3),
    ("exp", lax.exp, np.exp, -2, 1.9, 3)])
def test_float32_accuracy_in_ulps(name, fn, ref, lo, hi, max_ulps):
  """Compiled float32 results within a few ulps of the correctly rounded
  value (the float64 result rounded) over magnitudes 10**lo .. 10**hi (IREE's
  own sin/cos lose all accuracy past ~1e4, its lgamma/digamma near their
  zeros and poles). The reference is float64, not NumPy's float32 kernels:
  with AVX-512 NumPy's float32 tan is itself 3 ulps off."""
  rng = np.random.default_rng(3)
  x = (10.0 ** rng.uniform(lo, hi, 20000) * rng.choice([-1, 1], 20000)).astype(F32)
  if name == "log":
    x = np.abs(x)
  got = np.asarray(_compiled(fn, x))
  with np.errstate(all="ignore"):
    want = ref(x.astype(np.float64)).astype(F32)
  assert _ulps(got, want).max() <= max_ulps


# --------------------------------------------------------------- integers
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32])
def test_integer_division_edges(dtype):
  info = np.iinfo(dtype)
  vals = [0, 1, -1, 7, -7, 3, info.min, info.max, 2]
  x, y = (a.astype(dtype) for a in np.meshgrid(np.array(vals, np.int64).astype(dtype),
                                               np.array(vals, np.int64).astype(dtype),
                                               indexing="ij"))
  _check(lax.div, x, y)        # x / 0 == -1 (all ones), INT_MIN / -1 == INT_MIN
  _check(lax.rem, x, y)        # x % 0 == x, INT_MIN % -1 == 0


def test_integer_division_values():
  x = np.array([5, -5, 7, -128, -128, 3], np.int8)
  y = np.array([0, 0, -2, -1, 1, 2], np.int8)
  np.testing.assert_array_equal(_compiled(lax.div, x, y), [-1, -1, -3, -128, -128, 1])
  np.testing.assert_array_equal(_compiled(lax.rem, x, y), [5, -5, 1, 0, 0, 1])
  u = np.array([5, 0], np.uint8)
  np.testing.assert_array_equal(_compiled(lax.div, u, np.zeros(2, np.uint8)), [255, 255])


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.uint32])
@pytest.mark.parametrize("fn", [lax.shift_left, lax.shift_right_logical,
                                lax.shift_right_arithmetic])
def test_shifts_past_the_width(dtype, fn):
  bits = np.dtype(dtype).itemsize * 8
  info = np.iinfo(dtype)
  x = np.array([1, 5, info.max, info.min, 0, 3, info.min + 1, 7, 9], np.int64).astype(dtype)
  y = np.array([0, 1, 3, bits - 1, bits, bits + 1, 2 * bits, 255 % (2 * bits), 2],
               np.int64).astype(dtype)
  _check(fn, x, y)
  if info.min < 0:   # negative amounts read as huge unsigned ones
    _check(fn, x, np.full_like(x, -1))


def test_shift_values():
  x = np.array([-8, -8, 1, 1], np.int32)
  y = np.array([1, 40, 31, 32], np.int32)
  np.testing.assert_array_equal(_compiled(lax.shift_right_arithmetic, x, y), [-4, -1, 0, 0])
  np.testing.assert_array_equal(_compiled(lax.shift_left, x, y), [-16, 0, -2**31, 0])


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.uint32])
def test_bit_counts_and_unsigned_sign(dtype):
  info = np.iinfo(dtype)
  x = np.array([0, 1, 2, 7, info.max, info.min, 100, info.max // 3], np.int64).astype(dtype)
  for fn in (lax.population_count, lax.clz, lax.sign, lax.neg, lax.bitwise_not):
    _check(fn, x)
  if info.min < 0:
    _check(lax.abs, x)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32])
def test_mulhi(dtype):
  info = np.iinfo(dtype)
  vals = np.array([0, 1, -1, 3, info.max, info.min, info.max // 2 + 1, 12345 % info.max],
                  np.int64).astype(dtype)
  x, y = np.meshgrid(vals, vals, indexing="ij")
  _check(lax.mulhi, x, y)


def test_integer_bool_bitwise_and_minmax():
  b = np.array([True, False, True, False])
  c = np.array([True, True, False, False])
  for fn in (lax.bitwise_and, lax.bitwise_or, lax.bitwise_xor, lax.max, lax.min, lax.eq,
             lax.lt, lax.ge):
    _check(fn, b, c)
  _check(lax.bitwise_not, b)
  i = np.array([3, -4, 0, 2**31 - 1], np.int32)
  for fn in (lax.bitwise_and, lax.bitwise_or, lax.bitwise_xor, lax.max, lax.min, lax.add,
             lax.sub, lax.mul):
    _check(fn, i, i[::-1].copy())


def test_mul_out_dtype():
  x = np.array([100, -100, 127], np.int8)
  _check(lambda a, b: lax.mul(a, b, out_dtype=np.int32), x, x)


def test_integer_pow_int():
  x = np.array([0, 1, -1, 2, -3, 7, 100], np.int32)
  for y in (0, 1, 2, 3, 5, 8, 13):
    _check(lambda v, y=y: lax.integer_pow(v, y), x)


# ----------------------------------------------------------------- floats
@pytest.mark.parametrize("dtype", [F32, F16, BF16])
def test_max_min_nan_and_ties(dtype):
  x, y = _grid(_FLOAT_EDGES, dtype)
  _check(lax.max, x, y, exact=True)
  _check(lax.min, x, y, exact=True)
  _check(lambda a, b: lax.clamp(np.array(-1, dtype), a, b), x, y, exact=True)


@pytest.mark.parametrize("dtype", [F32, F16, BF16])
def test_float_binary_edges(dtype):
  x, y = _grid(_FLOAT_EDGES, dtype)
  tol = 2e-6 if dtype == F32 else 1e-2
  for fn in (lax.add, lax.sub, lax.mul, lax.div, lax.rem):
    _check(fn, x, y, exact=True)
  _check(lax.atan2, x, y, rtol=tol)              # signed zeros and infinities as C's
  _check(lax.nextafter, x, y, exact=True)
  for fn in (lax.eq, lax.ne, lax.lt, lax.le, lax.gt, lax.ge):
    _check(fn, x, y)


@pytest.mark.parametrize("dtype", [F32, F16, BF16])
def test_pow_edges(dtype):
  x, y = _grid(_FLOAT_EDGES + [-3.0, 2.0, -1.5], dtype)
  _check(lax.pow, x, y, rtol=2e-6 if dtype == F32 else 1e-2)
  n = np.array([-3, -2, -1, 0, 1, 2, 3, 4], np.int32)
  with np.errstate(over="ignore"):
    xs = np.array(_FLOAT_EDGES, np.float64).astype(dtype)
  _check(lambda a, b: lax.pow(a[:, None], b[None, :]), xs, n,
         rtol=2e-6 if dtype == F32 else 1e-2)


def test_nextafter_values():
  x = np.array([0, -0.0, 1, 1, np.inf, -1, np.nan, 2], F32)
  y = np.array([1, -1, 2, 0, 0, -2, 0, 2], F32)
  got = np.asarray(_compiled(lax.nextafter, x, y))
  np.testing.assert_array_equal(got, np.nextafter(x, y))
  assert got[0] == np.float32(1e-45) and np.signbit(got[1])


@pytest.mark.parametrize("dtype", [F32, F16, BF16])
def test_float_unary_edges(dtype):
  with np.errstate(over="ignore"):
    x = np.array(_FLOAT_EDGES + [2.5, -0.5, 0.49999997, 7.5], np.float64).astype(dtype)
  for fn in (lax.neg, lax.abs, lax.sign, lax.floor, lax.ceil, lax.is_finite, lax.round,
             lambda v: lax.round(v, lax.RoundingMethod.TO_NEAREST_EVEN), lax.square):
    _check(fn, x, exact=True)
  tol = 2e-6 if dtype == F32 else 1e-2
  for fn in (lax.exp, lax.exp2, lax.log, lax.log1p, lax.expm1, lax.tanh, lax.logistic, lax.sqrt,
             lax.rsqrt, lax.cbrt, lax.sinh, lax.cosh, lax.asinh, lax.atan):
    _check(fn, x, rtol=tol, atol=1e-6)
  # float32 trig reduces its argument in float64: exact enough below ~1e18 only.
  small = x[~(np.abs(x.astype(np.float64)) > 1e18)]
  for fn in (lax.sin, lax.cos, lax.tan):
    _check(fn, small, rtol=tol, atol=1e-6)
  for y in (-3, -2, -1, 0, 1, 2, 3, 7):
    _check(lambda v, y=y: lax.integer_pow(v, y), x, rtol=tol)


def test_round_ties():
  x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.0], F32)
  np.testing.assert_array_equal(_compiled(lax.round, x), [1, 2, 3, -1, -3, 0, -0.0])
  np.testing.assert_array_equal(
      _compiled(lambda v: lax.round(v, lax.RoundingMethod.TO_NEAREST_EVEN), x),
      [0, 2, 2, -0.0, -2, 0, -0.0])


def test_logistic_extremes():
  x = np.array([-1000, -100, -20, 0, 20, 100, 1000, np.nan], F32)
  _check(lax.logistic, x)
  got = np.asarray(_compiled(lax.logistic, x))
  assert got[0] == 0 and got[-2] == 1 and np.all(np.isfinite(got[:-1]))


def test_sin_cos_large_arguments():
  x = np.array([10, 1e3, 1e4, 1e5, 1e6, 1e8, 1e10, -3e7, 1.5707964], F32)
  for fn in (lax.sin, lax.cos, lax.tan):
    _check(fn, x, rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("exponent_bits,mantissa_bits", [(5, 10), (8, 7), (5, 0), (3, 2),
                                                         (8, 23), (11, 52)])
def test_reduce_precision(exponent_bits, mantissa_bits):
  rng = np.random.default_rng(0)
  x = np.concatenate([rng.uniform(-1e5, 1e5, 40), [0, -0.0, 65504, 65520, 1e-5, 6e-8, 3e-8,
                                                   np.inf, -np.inf, np.nan]]).astype(F32)
  _check(lambda v: lax.reduce_precision(v, exponent_bits, mantissa_bits), x, exact=True)


def test_reduce_precision_narrow():
  x = np.array([0.1, -3.3, 1000, 1e-4, np.inf, np.nan], F16)
  _check(lambda v: lax.reduce_precision(v, 4, 3), x, exact=True)


def test_bitcast_convert_type():
  x = np.array([1.0, -2.5, np.inf, np.nan], F32)
  _check(lambda v: lax.bitcast_convert_type(v, np.int32), x)
  _check(lambda v: lax.bitcast_convert_type(v, np.uint8), x)
  _check(lambda v: lax.bitcast_convert_type(v, np.uint16), x)
  u = np.arange(8, dtype=np.uint8).reshape(2, 4)
  _check(lambda v: lax.bitcast_convert_type(v, np.int32), u)
  _check(lambda v: lax.bitcast_convert_type(v, BF16), np.arange(4, dtype=np.uint16))


# ---------------------------------------------------------------- select
def test_select_n():
  rng = np.random.default_rng(1)
  a, b, c = (rng.standard_normal((3, 4)).astype(F32) for _ in range(3))
  p = rng.random((3, 4)) < 0.5
  _check(lax.select_n, p, a, b)
  _check(lax.select_n, np.bool_(True), a, b)
  w = rng.integers(-2, 5, (3, 4)).astype(np.int32)     # out of range picks an end case
  _check(lax.select_n, w, a, b, c)
  _check(lax.select_n, np.int32(1), a, b, c)
  _check(lax.select_n, w.astype(np.uint8), a, b, c)
  _check(lambda x: lax.select_n(p, x), a)
  _check(lax.select_n, p, a.astype(C64), b.astype(C64))


def test_clamp_shapes():
  x = np.linspace(-3, 3, 12).reshape(3, 4).astype(F32)
  _check(lax.clamp, np.float32(-1), x, np.float32(2))
  _check(lax.clamp, np.full((3, 4), -0.5, F32), x, np.float32(1))
  _check(lax.clamp, np.int32(0), np.arange(-3, 9, dtype=np.int32), np.int32(5))


# --------------------------------------------------------------- complex
_COMPLEX = np.array([complex(a, b) for a in (0.0, -0.0, 1.0, -2.0, 0.5, np.inf, -np.inf, np.nan)
                     for b in (0.0, -0.0, 1.0, -1.5, 3.0, np.inf, np.nan)], C64)


def test_complex_parts():
  z = _COMPLEX
  for fn in (lax.real, lax.imag, lax.conj, lax.neg):
    _check(fn, z, exact=True)
  x = np.array([1.0, -0.0, np.inf, np.nan], F32)
  _check(lax.complex, x, x[::-1].copy(), exact=True)
  _check(lax.conj, x, exact=True)


def test_complex_abs_sign_sqrt_log():
  z = _COMPLEX
  for fn in (lax.abs, lax.sign, lax.sqrt, lax.rsqrt, lax.log, lax.log1p, lax.exp, lax.expm1,
             lax.exp2):
    _check(fn, z, rtol=2e-6, atol=1e-6)


def test_complex_division_and_powers():
  z = _COMPLEX
  w = np.roll(z, 5)
  _check(lax.div, z, w, rtol=2e-6, atol=1e-6)    # NumPy's (Smith's) division, x / 0 included
  for y in (-3, -1, 2, 5):
    _check(lambda v, y=y: lax.integer_pow(v, y), z, rtol=1e-5, atol=1e-6)
  finite = np.array([1 + 1j, -2.5 + 0.5j, 0.5 - 3j, -1j, 2], C64)
  _check(lax.pow, finite, finite[::-1].copy(), rtol=1e-5)


def test_complex_trig_and_branch_cuts():
  finite = np.array([complex(a, b) for a in (0.0, -0.0, 0.5, -2.0, 3.0)
                     for b in (0.0, -0.0, 0.25, -1.0, 2.0)], C64)
  for fn in (lax.sin, lax.cos, lax.tan, lax.sinh, lax.cosh, lax.tanh, lax.asin, lax.acos,
             lax.atan, lax.asinh, lax.acosh, lax.atanh, lax.logistic):
    _check(fn, finite, rtol=1e-5, atol=1e-6)
  _check(lax.atan2, np.array([1, 0.5], C64), np.array([2, -1], C64), rtol=1e-5, atol=1e-6)


def test_complex_max_min_and_compare():
  z = _COMPLEX
  w = np.roll(z, 3)
  for fn in (lax.max, lax.min, lax.eq, lax.ne):
    _check(fn, z, w, exact=True)


# --------------------------------------------------------------- special
_SPECIAL = np.array([0.0, -0.0, 1.0, 2.0, -2.5, 0.5, 7.3, -3.0, 30.5, 100.0, np.inf, -np.inf,
                     np.nan], F32)


@pytest.mark.parametrize("dtype", [F32, F16])
def test_special_unary(dtype):
  x = _SPECIAL.astype(dtype)
  tol = 1e-5 if dtype == F32 else 1e-2
  for fn in (lax.lgamma, lax.digamma, lax.erf, lax.erfc, lax.bessel_i0e, lax.bessel_i1e):
    _check(fn, x, rtol=tol, atol=1e-6)
  _check(lax.erf_inv, np.array([0, 0.5, -0.999, 1, -1, 1.5, np.nan], dtype), rtol=tol)


def test_special_binary():
  rng = np.random.default_rng(2)
  a = np.concatenate([rng.uniform(0.05, 20, 12), [0, 1, -1, np.inf, np.nan, 2]]).astype(F32)
  x = np.concatenate([rng.uniform(0, 30, 12), [0, 0, 1, 1, 1, np.inf]]).astype(F32)
  for fn in (lax.igamma, lax.igammac, lax.igamma_grad_a, lax.random_gamma_grad):
    _check(fn, a, x, rtol=1e-5, atol=1e-6)
  b = np.concatenate([rng.uniform(0.1, 30, 12), [1, 0, 2, 2, 1, 1]]).astype(F32)
  p = np.concatenate([rng.uniform(0, 1, 12), [0, 0.5, 1, 0.5, 0.5, np.nan]]).astype(F32)
  _check(lax.betainc, a, b, p, rtol=1e-5, atol=1e-6)
  s = np.array([2, 3, 3, 1, 0.5, 4, 3], F32)
  q = np.array([1, 0.5, -1.5, 2, 2, -2, 7], F32)
  _check(lax.zeta, s, q, rtol=1e-5)
  m = np.array([0, 1, 2, 3, 1.5, -1], F32)
  _check(lax.polygamma, m, np.array([0.5, 1, 2.5, 3, 1, 1], F32), rtol=1e-4)


# ------------------------------------------------------------------- x64
def test_x64_dtypes():
  with jax.enable_x64():
    i = np.array([0, 1, -1, 2**62, -2**63, 2**63 - 1, 7], np.int64)
    j = np.array([0, -1, 0, 3, -1, 2**63 - 1, -2], np.int64)
    for fn in (lax.div, lax.rem, lax.mulhi, lax.shift_left, lax.shift_right_arithmetic,
               lax.max, lambda a, b: lax.clz(a), lambda a, b: lax.population_count(a)):
      _check(fn, i, j)
    u = i.astype(np.uint64)
    for fn in (lax.div, lax.rem, lax.mulhi, lax.shift_right_logical, lax.lt):
      _check(fn, u, j.astype(np.uint64))
    x, y = _grid(_FLOAT_EDGES, np.float64)
    for fn in (lax.atan2, lax.pow, lax.nextafter, lax.max, lax.rem):
      _check(fn, x, y, rtol=1e-14)
    v = np.array(_FLOAT_EDGES, np.float64)
    for fn in (lax.exp, lax.log, lax.sin, lax.tanh, lax.cbrt, lax.logistic, lax.erf,
               lax.lgamma):
      _check(fn, v, rtol=1e-13, atol=1e-15)
    z = _COMPLEX.astype(np.complex128)
    for fn in (lax.abs, lax.sqrt, lax.log, lax.exp, lax.sign):
      _check(fn, z, rtol=1e-13, atol=1e-15)
    _check(lambda a, b: lax.igamma(a, b), np.array([0.5, 3, 10], np.float64),
           np.array([1, 2, 30], np.float64), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_abs_does_not_overflow_compiled(dtype):
  """|z| is a scaled hypot compiled (IREE's squares the parts: |1e30+0j| was
  inf), so jitted log, log1p and isclose on large complex values are right."""
  big = 1e30 if dtype == np.complex64 else 1e300
  x = np.array([big, big * (1 + 1j), 3 + 4j, 0, -0.0, complex(np.nan, 1), complex(np.inf, np.nan),
                1e-30 * (1 + 1j), complex(0, -big)], dtype)
  with jax.config.override("jax_enable_x64", dtype == np.complex128):
    _check(jnp.abs, x)
    _check(jnp.log, x[:3])
    _check(jnp.log1p, x[:3])
    assert not bool(_compiled(jnp.isclose, dtype(1 + 1j), dtype(big)))
