"""Eval kernels and impls behind eager ufunc calls (issue 14's eager sweep):
shifts, select_n's bit blend, float -> int casts, erf/erfc (the element loop
and the vectorised pieces), lgamma, gcd/lcm. Each must give the bits of the
formula it replaced (decision 12), or agree with it to rounding where the
method changed, on edge values: out-of-range shift amounts, NaN and -0.0
cases, INT_MIN, zeros, empties."""
import math

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.core.memory import ALIGNED_RESULT_MIN_BYTES
from openjax._src.primitives.base import convert
from openjax._src.runtime.iree_device import is_importable
from openjax._src.primitives.elementwise import erf_kernels, logic, special_numerics
from tests.test_eager_library_kernels import _lean_kernel, _same_bits

_INTS = [np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                               np.int64, np.uint64)]


# --------------------------------------------------------------------- shifts
def _unsigned(x):
  return x.astype(np.dtype(f"u{x.dtype.itemsize}"))


def _xla_shift(direction, x, y):
  """XLA's shifts spelled out: the amount is read as unsigned; amounts of the
  bit width or more give 0, or the sign fill for an arithmetic right shift."""
  bits = x.dtype.itemsize * 8
  big = _unsigned(y) >= bits
  amount = np.where(big, 0, y).astype(x.dtype)
  if direction == "left":
    return np.where(big, 0, np.left_shift(x, amount)).astype(x.dtype)
  if direction == "right_logical":
    out = np.right_shift(_unsigned(x), _unsigned(amount)).astype(x.dtype)
    return np.where(big, 0, out).astype(x.dtype)
  fill = np.where(x < 0, -1, 0) if x.dtype.kind == "i" else 0
  return np.where(big, fill, np.right_shift(x, amount)).astype(x.dtype)


@pytest.mark.parametrize("dt", _INTS, ids=str)
def test_shift_kernels_match_xla_semantics(dt):
  rng = np.random.default_rng(0)
  info, bits = np.iinfo(dt), dt.itemsize * 8
  x = rng.integers(info.min, info.max, 300, dtype=dt, endpoint=True)
  x[:4] = [info.min, info.max, 0, 1]
  amounts = np.arange(-5 if info.min < 0 else 0, bits + 5)
  y = np.concatenate([amounts, rng.integers(info.min, info.max, 300 - amounts.size, dtype=dt,
                                            endpoint=True)]).astype(dt)
  for direction, p in [("left", logic.shift_left_p),
                       ("right_logical", logic.shift_right_logical_p),
                       ("right_arithmetic", logic.shift_right_arithmetic_p)]:
    for xs, ys in [(x, y), (x, y[7:8].reshape(())), (x[0:1].reshape(()), y), (x[:0], y[:0])]:
      _same_bits(_lean_kernel(p, [xs, ys])(xs, ys), _xla_shift(direction, xs, ys))
      _same_bits(p.impl(xs, ys)[0], _xla_shift(direction, xs, ys))


def test_right_shift_eagerly():
  x = np.array([-100, 100, -1, 7, -128], np.int8)
  y = np.array([1, 9, -1, 0, 7], np.int8)
  np.testing.assert_array_equal(jnp.right_shift(x, y), [-50, 0, -1, 7, -1])
  np.testing.assert_array_equal(jnp.left_shift(x, y), [56, 0, 0, 7, 0])


# ------------------------------------------------------------------- select_n
_BLEND_DTYPES = [np.dtype(t) for t in (np.float32, np.float16, ml_dtypes.bfloat16, np.int8,
                                       np.uint16, np.int32, np.int64, np.bool_, np.complex64,
                                       np.complex128)]


@pytest.mark.parametrize("dt", _BLEND_DTYPES, ids=str)
def test_select_n_large_operands_give_np_where_bits(dt):
  rng = np.random.default_rng(1)
  n = logic._BLEND_MIN_SIZE + 3
  a = (rng.standard_normal(n) * 100).astype(dt)
  b = (rng.standard_normal(n) * 100).astype(dt)
  if dt.kind in "fc":
    a[:6] = [np.nan, -0.0, np.inf, -np.inf, 0.0, -np.nan]
    b[:6] = [-0.0, np.nan, 1, 2, -0.0, 3]
  random = rng.random(n) < 0.5
  for which in (random, np.sort(random), np.zeros(n, bool), np.ones(n, bool)):
    _same_bits(_lean_kernel(logic.select_n_p, [which, a, b])(which, a, b), np.where(which, b, a))
    if dt.itemsize in logic._INT_OF_ITEMSIZE:   # the blend itself (the kernel times its choice)
      _same_bits(logic._blend(which, a, b), np.where(which, b, a))
  # Not contiguous: np.where itself.
  w, x, y = random[::2], a[::2], b[::2]
  _same_bits(logic._select2_large(w, x, y), np.where(w, y, x))


def test_select_n_scalar_predicate_passes_a_case_through():
  a, b = np.arange(5, dtype=np.float32), -np.arange(5, dtype=np.float32)
  for which in (np.array(True), np.array(False)):
    kernel = _lean_kernel(logic.select_n_p, [which, a, b])
    _same_bits(kernel(which, a, b), np.where(which, b, a))
  got = jax.lax.select(jnp.asarray(True), jnp.asarray(a), jnp.asarray(b))
  np.testing.assert_array_equal(got, a)


def test_fmax_of_large_arrays_with_nans():
  rng = np.random.default_rng(2)
  x = rng.standard_normal(1 << 17).astype(np.float32)
  y = rng.standard_normal(1 << 17).astype(np.float32)
  x[::7], y[::5] = np.nan, np.nan
  _same_bits(jnp.fmax(x, y), np.fmax(x, y))
  _same_bits(jnp.fmin(x, y), np.fmin(x, y))


# ---------------------------------------------------------- float -> int cast
@pytest.mark.parametrize("src", [np.float16, np.float32, np.float64, ml_dtypes.bfloat16], ids=str)
@pytest.mark.parametrize("dst", [np.int8, np.uint8, np.int16, np.int32, np.uint32], ids=str)
def test_float_to_int_in_range_fast_path(src, dst):
  info = np.iinfo(dst)
  rng = np.random.default_rng(3)
  with np.errstate(over="ignore"):
    edges = np.array([info.min, info.max, info.min - 0.5, info.max + 0.5, -0.0, 0.99, -0.99,
                      info.max * 0.999, info.min * 0.999], np.float64).astype(src)
  span = min(float(info.max), float(ml_dtypes.finfo(src).max))
  inside = (rng.uniform(max(info.min, -span), span, 200)).astype(src)
  for x in (inside, np.concatenate([inside, edges]), np.concatenate([inside, [np.nan]]).astype(src),
            np.concatenate([inside, [np.inf]]).astype(src)):
    kernel = _lean_kernel(convert.convert_element_type_p, [x], new_dtype=np.dtype(dst),
                     weak_type=False, sharding=None)
    with np.errstate(all="ignore"):
      want = convert.convert_numpy(x, np.dtype(dst))
      _same_bits(kernel(x), want)
  # float32 rounds 2**31 - 1 up to 2**31: that value must saturate, not wrap.
  x = np.full(100, 2.0 ** 31, np.float32)
  kernel = _lean_kernel(convert.convert_element_type_p, [x], new_dtype=np.dtype(np.int32),
                   weak_type=False, sharding=None)
  np.testing.assert_array_equal(kernel(x), np.full(100, 2 ** 31 - 1, np.int32))


# ------------------------------------------------------------------ erf, erfc
def test_erf_erfc_are_elementwise_and_accurate():
  rng = np.random.default_rng(4)
  x = np.concatenate([rng.standard_normal(500) * 3, [0.0, -0.0, 1e-300, 27.0, -27.0, 6.0]])
  erf, erfc = special_numerics.erf(x), special_numerics.erfc(x)
  for k in (1, 7, 50):   # an element's bits do not depend on its neighbours
    _same_bits(special_numerics.erf(x[:k]), erf[:k])
    _same_bits(special_numerics.erfc(x[:k]), erfc[:k])
  _same_bits(special_numerics.erf(-x), -erf)
  for v, e, c in zip(x.tolist(), erf, erfc):
    assert math.isclose(e, math.erf(v), rel_tol=1e-15, abs_tol=1e-300)
    assert math.isclose(c, math.erfc(v), rel_tol=1e-15, abs_tol=1e-300)
  assert special_numerics.erf(np.array(0.5)).shape == ()
  assert special_numerics.erfc(np.zeros((0, 3))).shape == (0, 3)
  got = jax.lax.erf(np.array([np.nan, -np.inf, 0.5], np.float32))
  assert got.dtype == np.float32
  np.testing.assert_array_equal(got[:2], [np.nan, -1.0])


def _erf_edges() -> np.ndarray:
  """Values in and between every piece of erf_kernels, their edges, tails."""
  rng = np.random.default_rng(5)
  edges = np.array([0.5, 1.5, 2.5, 3.5])
  special = [0.0, -0.0, 5e-324, 1e-300, 1e-8, 6.0, 10.0, 26.0, 26.5, 27.3, 30.0, 1e10, 1e300,
             np.inf, -np.inf, np.nan]
  x = np.concatenate([rng.uniform(-6, 6, 4000), rng.standard_normal(2000) * 10, edges,
                      np.nextafter(edges, 0), np.nextafter(edges, 9), special])
  return np.concatenate([x, -x])


@pytest.mark.parametrize("fn,name", [(erf_kernels.erf, "erf"), (erf_kernels.erfc, "erfc")])
def test_vectorised_erf_pieces_are_accurate(fn, name):
  x = _erf_edges()
  ref = np.array([getattr(math, name)(v) for v in x.tolist()])
  got = fn(x)
  assert got.dtype == np.float64 and got.shape == x.shape
  np.testing.assert_array_equal(np.isnan(got), np.isnan(x))
  np.testing.assert_allclose(got, ref, rtol=4e-15, atol=1e-320)   # a few ulp
  # float32 and narrower: the low-degree pieces round to the same float32
  # as math's value but in near-ties (one float32 ulp at most).
  with np.errstate(over="ignore"):   # 1e300 and the like: inf in float32
    x32 = x.astype(np.float32).astype(np.float64)
  got32 = fn(x32, True).astype(np.float32)
  ref32 = np.array([getattr(math, name)(v) for v in x32.tolist()]).astype(np.float32)
  finite = np.isfinite(ref32)
  np.testing.assert_array_equal(np.isnan(got32), np.isnan(ref32))
  ulps = np.abs(got32[finite].view(np.int32).astype(np.int64)
                - ref32[finite].view(np.int32).astype(np.int64))
  assert ulps.max() <= 1


def test_vectorised_erf_is_elementwise_odd_and_chunked():
  x = _erf_edges()
  x = np.concatenate([x] * 4)   # over one chunk (erf_kernels._CHUNK)
  assert x.size > erf_kernels._CHUNK
  for fn in (erf_kernels.erf, erf_kernels.erfc):
    whole = fn(x)
    _same_bits(np.concatenate([fn(x[i:i + 999]) for i in range(0, x.size, 999)]), whole)
  finite = x[~np.isnan(x)]   # (a nan's sign bit means nothing)
  _same_bits(erf_kernels.erf(-finite), -erf_kernels.erf(finite))
  assert erf_kernels.erf(np.zeros((0, 3))).shape == (0, 3)


@pytest.mark.parametrize("dt", [np.float32, np.float16], ids=str)
def test_erf_primitive_past_the_element_loop(dt):
  # Past special_numerics._ELEMENTWISE_MAX elements the primitive runs the
  # vectorised pieces: values, dtype and special values as the element loop.
  x = np.linspace(-8, 8, 3 * special_numerics._ELEMENTWISE_MAX).astype(dt)
  x[:3] = [np.nan, np.inf, -np.inf]
  for lax_fn, name in ((jax.lax.erf, "erf"), (jax.lax.erfc, "erfc")):
    got = np.asarray(lax_fn(x))
    assert got.dtype == dt
    ref = np.array([getattr(math, name)(v) for v in x.astype(np.float64).tolist()])
    np.testing.assert_allclose(got.astype(np.float64), ref.astype(dt).astype(np.float64),
                               rtol=np.finfo(dt).eps, atol=0)


def test_lgamma_element_loop_agrees_with_the_formula():
  # Up to special_numerics._LGAMMA_ELEMENTWISE_MAX elements lgamma is
  # math.lgamma per element; past it the reflection + Lanczos formula.
  rng = np.random.default_rng(6)
  x = np.concatenate([rng.uniform(-30, 60, 200), [0.5, 1.0, 2.0, 1e-300, -0.5, -2.5, 171.5,
                                                  -170.5, 1 + 1e-9, 2 - 1e-12, 1e300]])
  small = special_numerics.lgamma(x)
  assert x.size <= special_numerics._LGAMMA_ELEMENTWISE_MAX
  with np.errstate(all="ignore"):
    wide = special_numerics.lgamma(np.tile(x, 2))[:x.size]   # the formula's path
  np.testing.assert_allclose(small, wide, rtol=1e-13, atol=1e-14)
  for v, got in zip(x.tolist(), small):
    assert got == math.lgamma(v)
  edges = np.array([0.0, -0.0, -3.0, -1e20, np.inf, -np.inf, np.nan, 1e308])
  with np.errstate(all="ignore"):   # as the primitive's impl runs them
    np.testing.assert_array_equal(special_numerics.lgamma(edges),
                                  special_numerics.lgamma(np.tile(edges, 40))[:edges.size])
    np.testing.assert_array_equal(special_numerics.lgamma(edges)[:6], [np.inf] * 6)
  got = jax.lax.lgamma(np.array([0.5, -2.0, np.nan], np.float32))
  assert got.dtype == np.float32
  np.testing.assert_allclose(np.asarray(got)[:2], [math.lgamma(0.5), np.inf], rtol=1e-7)


# ------------------------------------------------------------------- gcd, lcm
@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int16, np.int32, np.uint32], ids=str)
def test_gcd_lcm_match_numpy_on_edges(dt):
  info = np.iinfo(dt)
  rng = np.random.default_rng(5)
  a = rng.integers(info.min, info.max, 200, dtype=dt, endpoint=True)
  b = rng.integers(info.min, info.max, 200, dtype=dt, endpoint=True)
  ex = np.array([info.min, info.min, 0, 0, 5, info.max, info.min, 7, 1], dt)
  ey = np.array([-14 if info.min < 0 else 14, info.min, 0, 9, info.min, info.max, 0, 0,
                 info.min], dt)
  a, b = np.concatenate([a, ex, ey]), np.concatenate([b, ey, ex])
  with np.errstate(all="ignore"):
    want_gcd = np.gcd(a.astype(np.int64), b.astype(np.int64)).astype(dt)
    want_lcm = np.lcm(a.astype(np.int64), b.astype(np.int64)).astype(dt)
  _same_bits(jnp.gcd(a, b), want_gcd)
  _same_bits(jnp.lcm(a, b), want_lcm)
  _same_bits(jax.jit(jnp.gcd)(a, b), want_gcd)


def test_gcd_lcm_types_and_program():
  assert jnp.gcd(12, 18) == 6 and jnp.gcd(12, 18).weak_type and jnp.lcm(4, 6).weak_type
  assert jnp.gcd(np.int8(4), 6).dtype == np.int8 and not jnp.gcd(np.int8(4), 6).weak_type
  assert jnp.gcd(np.arange(3), 2).shape == (3,)
  # One jit named gcd (as JAX's), whose loop body is rem, max, min.
  closed = jax.make_jaxpr(jnp.gcd)(np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32))
  call, = closed.jaxpr.eqns
  assert call.params["name"] == "gcd"
  inner = call.params["jaxpr"].jaxpr
  loop, = [e for e in inner.eqns if e.primitive.name == "while"]
  assert [e.primitive.name for e in loop.params["body_jaxpr"].jaxpr.eqns] == ["rem", "max", "min"]


def test_gcd_lcm_weak_types_as_jax():
  # JAX: weak only for two weak scalars (bool arrays promote to weak int32
  # arrays, whose gcd is strong).
  flags = np.array([True, False])
  for f in (jnp.gcd, jnp.lcm):
    assert f(3, 4).weak_type and f(np.bool_(True), 3).weak_type
    assert not f(flags, 3).weak_type and not f(3, flags).weak_type
    assert f(flags, 3).dtype == np.int32


@pytest.mark.parametrize("src", [np.float16, np.float32, np.float64, ml_dtypes.bfloat16], ids=str)
@pytest.mark.parametrize("dst", [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64],
                         ids=str)
def test_float_to_int_scalars_match_the_array_path(src, dst):
  # A 0-d value takes Python's compares; one element among many the arrays'.
  info = np.iinfo(dst)
  values = [np.nan, np.inf, -np.inf, -0.0, 0.7, -0.7, 127.9, -128.9, 255.5, 2.0 ** 31,
            -2.0 ** 31 - 1, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 1e30, -1e30, info.max, info.min]
  with np.errstate(over="ignore"):
    xs = np.array(values, np.float64).astype(src)
  many = convert.convert_numpy(np.tile(xs, 10), np.dtype(dst))[:xs.size]
  for x, want in zip(xs, many):
    _same_bits(convert.convert_numpy(np.array(x), np.dtype(dst)), want)
  got = jnp.full((2,), jnp.asarray(np.float32(-3.7)), dtype=jnp.int8)
  np.testing.assert_array_equal(got, [-3, -3])


@pytest.mark.parametrize("dt", _INTS, ids=str)
def test_clz_matches_the_bit_length(dt):
  info, bits = np.iinfo(dt), dt.itemsize * 8
  rng = np.random.default_rng(6)
  x = np.concatenate([rng.integers(info.min, info.max, 200, dtype=dt, endpoint=True),
                      np.array([0, 1, 2, 3, info.max, info.min], dt)])
  for shift in range(bits):   # every bit length
    x = np.append(x, np.array(1, np.uint64 if dt.kind == "u" else np.int64) << shift)
  x = x.astype(dt)
  want = np.array([bits - int(v).bit_length() for v in _unsigned(x).tolist()], dt)
  _same_bits(logic.clz_p.impl(x)[0], want)
  if bits <= 32:   # (64-bit operands are not planned without x64)
    _same_bits(_lean_kernel(logic.clz_p, [x])(x), want)


@pytest.mark.parametrize("dt", [np.float32, np.int32, np.complex64, np.bool_])
def test_large_ufunc_results_are_import_aligned(dt):
  # A jitted call reads an eager result of 64 KB or more in place (no copy
  # into aligned memory on import): NumPy's own allocation of it starts 16
  # bytes past a page.
  n = 3 * (ALIGNED_RESULT_MIN_BYTES // np.dtype(dt).itemsize + 1)
  a = np.arange(n).astype(dt)
  b = (np.arange(n) % 7).astype(dt)
  x, y = jnp.asarray(a), jnp.asarray(b)
  for got, want in [(x + y, a + b), (jnp.maximum(x, y), np.maximum(a, b)),
                                    (x.reshape(3, -1)[0] == y.reshape(3, -1)[0],
                     a.reshape(3, -1)[0] == b.reshape(3, -1)[0])]:
    np.testing.assert_array_equal(np.asarray(got), want)
    assert got.dtype == want.dtype
  out = x * y
  assert is_importable(out._np) and not out._np.flags.writeable
  np.testing.assert_array_equal(np.asarray(out), a * b)
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v == v)(out)), np.ones(n, bool))
