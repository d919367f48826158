"""Eval kernels of elementwise primitives added for the eager sweep (issue 14):
integer ``div`` through a floating-point quotient, ``rem`` without a zero
divisor, ``bitcast_convert_type`` as a view, and the special functions' faster
evaluations (``erf_inv``'s pieces); and the eager programs of ufuncs JAX does
not jit (log2/log10, logaddexp of integers, complex comparisons). Each must
give the bits of the general kernel or the op-by-op call it stands in for
(decision 12) on edge values: INT_MIN / -1, division by zero, near multiples,
0-d and empty operands, NaN and -0.0."""
import ml_dtypes
import numpy as np
import pytest

import openjax.numpy as jnp
from openjax._src import lax
from openjax._src.primitives.elementwise import (arithmetic, logic, special, special_numerics,
                                                 transcendental)
from tests.test_eager_library_kernels import _lean_kernel, _same_bits

_NARROW_INTS = [np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                      np.uint32)]


def _div_samples(dt: np.dtype, rng):
  """Pairs (x, y) of ``dt``: random full-range values, small divisors,
  near multiples of the divisor, and the extremes against each other."""
  info = np.iinfo(dt)
  n = 20000
  x = rng.integers(info.min, info.max, n, endpoint=True).astype(dt)
  y = rng.integers(info.min, info.max, n, endpoint=True).astype(dt)
  yield x, y
  small = rng.integers(1 if info.min == 0 else -300, 300, n).astype(dt)
  yield x, small
  q = rng.integers(-60 if info.min else 0, 60, n)
  near = (q * small.astype(np.int64) + rng.integers(-1 if info.min else 0, 2, n))
  yield np.clip(near, info.min, info.max).astype(dt), small
  ex = np.array(sorted({info.min, info.min + 1, -1 if info.min else 2, 0, 1, 2, 3,
                        info.max // 2, info.max - 1, info.max}), dt)
  ex_x, ex_y = np.meshgrid(ex, ex)
  yield ex_x, ex_y


@pytest.mark.parametrize("dt", _NARROW_INTS, ids=str)
def test_integer_div_kernel_matches_the_general_kernel(dt):
  rng = np.random.default_rng(0)
  for x, y in _div_samples(dt, rng):
    kernel = _lean_kernel(arithmetic.div_p, [x, y])
    assert kernel is not arithmetic._div   # the floating-point quotient is chosen
    with np.errstate(all="ignore"):
      _same_bits(kernel(x, y), arithmetic._div(x, y))
      nonzero = np.where(y == 0, 1, y).astype(dt)   # the fast path itself, not the fallback
      _same_bits(kernel(x, nonzero), arithmetic._div(x, nonzero))


def test_integer_div_of_every_int8_pair():
  a = np.arange(-128, 128, dtype=np.int8)
  x, y = np.meshgrid(a, a)
  with np.errstate(all="ignore"):
    _same_bits(_lean_kernel(arithmetic.div_p, [x, y])(x, y), arithmetic._div(x, y))


def test_integer_div_eagerly_keeps_xla_edges():
  i32 = np.int32
  x = jnp.asarray(np.array([-2**31, 7, -7, 7, -7, 5, 0], i32))
  y = jnp.asarray(np.array([-1, 2, 2, -2, -2, 0, 0], i32))
  out = lax.div(x, y)
  assert out.dtype == np.int32
  np.testing.assert_array_equal(out, np.array([-2**31, 3, -3, -3, 3, -1, -1], i32))
  assert int(lax.div(jnp.int32(-9), jnp.int32(4))) == -2   # 0-d: the general kernel
  assert lax.div(jnp.zeros((0,), i32), jnp.ones((0,), i32)).shape == (0,)
  np.testing.assert_array_equal(jnp.floor_divide(jnp.asarray(np.array([-7, 7, 8], np.int16)),
                                jnp.int16(2)), np.array([-4, 3, 4], np.int16))
  u = jnp.asarray(np.array([2**32 - 1, 2**31, 5], np.uint32))
  np.testing.assert_array_equal(lax.div(u, jnp.asarray(np.array([1, 3, 0], np.uint32))),
                                np.array([2**32 - 1, 715827882, 2**32 - 1], np.uint32))


def test_wide_and_float_div_keep_the_general_kernel():
  for dt in (np.int64, np.uint64):
    x = np.ones(4, dt)
    assert _lean_kernel(arithmetic.div_p, [x, x]) is arithmetic._div
  for dt in (np.float32, np.float64, np.complex64):   # _div's float case, as the ufunc
    x = np.ones(4, dt)
    assert _lean_kernel(arithmetic.div_p, [x, x]) is np.true_divide
  x = np.ones((), np.int32)
  assert _lean_kernel(arithmetic.div_p, [x, x]) is arithmetic._div


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int32, np.uint32], ids=str)
def test_integer_rem_with_and_without_zero_divisors(dt):
  rng = np.random.default_rng(1)
  info = np.iinfo(dt)
  x = rng.integers(info.min, info.max, 500, endpoint=True).astype(dt)
  y = rng.integers(info.min, info.max, 500, endpoint=True).astype(dt)
  y[::7] = 0
  with np.errstate(all="ignore"):
    expected = np.where(y == 0, x, np.fmod(x, np.where(y == 0, 1, y))).astype(dt)
    _same_bits(arithmetic._rem(x, y), expected)
    nonzero = np.where(y == 0, 1, y).astype(dt)
    _same_bits(arithmetic._rem(x, nonzero), np.fmod(x, nonzero))


_BITCASTS = [(np.float32, np.int32), (np.int32, np.float32), (np.float32, np.uint32),
             (ml_dtypes.bfloat16, np.uint16), (np.uint16, np.float16), (np.float64, np.int64),
             (np.int8, np.uint8), (np.complex64, np.complex64)]


@pytest.mark.parametrize("src,dst", _BITCASTS, ids=str)
def test_bitcast_view_kernel_gives_the_impl_bits(src, dst):
  rng = np.random.default_rng(2)
  raw = rng.integers(0, 256, 64 * np.dtype(src).itemsize, dtype=np.uint8)
  for x in (raw.view(src).reshape(8, -1), raw.view(src)[::3], raw.view(src)[:0],
            raw.view(src)[0].copy().reshape(())):
    kernel = _lean_kernel(logic.bitcast_convert_type_p, [x], new_dtype=np.dtype(dst))
    out = kernel(x)
    impl, = logic._bitcast_impl(x, new_dtype=np.dtype(dst))
    _same_bits(out.copy(), impl)   # (a strided view: copied for the byte view)


def test_bitcast_changing_the_item_size_keeps_the_impl():
  from openjax._src.core.avals import ShapedArray
  from openjax._src.core.trace import make_plan
  _, lean, *_ = make_plan(logic.bitcast_convert_type_p, [ShapedArray((4,), np.dtype(np.int32))],
                          dict(new_dtype=np.dtype(np.int8)))
  assert not lean
  out = lax.bitcast_convert_type(jnp.asarray(np.array([1, -1], np.int32)), np.int8)
  assert out.shape == (2, 4)
  np.testing.assert_array_equal(out, np.array([1, -1], np.int32).view(np.int8).reshape(2, 4))


def test_bitcast_results_are_read_only_values():
  x = jnp.asarray(np.array([1.5, -0.0], np.float32))
  y = lax.bitcast_convert_type(x, np.int32)
  np.testing.assert_array_equal(y, np.array([1.5, -0.0], np.float32).view(np.int32))
  assert y.dtype == np.int32 and not np.asarray(y).flags.writeable


# ------------------------------------------------------------------ erf_inv
def _erf_inv_piece_by_piece(x, single_precision):
  """Giles' pieces one after the other over every element (the formula the
  stacked and split evaluations stand in for)."""
  pieces = special_numerics._ERF_INV32 if single_precision else special_numerics._ERF_INV64
  square = x * x
  if single_precision:
    square = square.astype(np.float32).astype(np.float64)
  w = -np.log1p(-square)
  p = np.zeros_like(x)
  below = np.zeros(x.shape, bool)
  for bound, shift, in_sqrt, coefs in pieces:
    piece = ~below & (w < bound)
    below |= piece
    t = (np.sqrt(w) if in_sqrt else w) - shift
    acc = np.full_like(x, coefs[0])
    for c in coefs[1:]:
      acc = acc * t + c
    p = np.where(piece, acc, p)
  out = np.where(np.abs(x) == 1, np.copysign(np.inf, x), x * p)
  return np.where(np.abs(x) > 1, np.nan, out)


@pytest.mark.parametrize("single", [True, False], ids=["single", "double"])
def test_erf_inv_stacked_and_split_pieces_give_the_formula_bits(single):
  rng = np.random.default_rng(3)
  x = np.concatenate([rng.uniform(-1, 1, 6000), 1 - 10.0 ** -rng.uniform(0, 16, 3000),
                      -(1 - 10.0 ** -rng.uniform(0, 16, 3000)),
                      [1, -1, 0, -0.0, np.nan, np.inf, -np.inf, 1.5, -2, 1 - 1e-300]])
  if single:
    x = x.astype(np.float32).astype(np.float64)
  expected = _erf_inv_piece_by_piece(x, single)
  with np.errstate(all="ignore"):
    assert x.size >= special_numerics._ERF_INV_SPLIT_MIN
    _same_bits(special_numerics.erf_inv(x, single), expected)   # each piece on its elements
    for part in np.array_split(x, 8):   # below the split size: the stacked pieces
      assert part.size < special_numerics._ERF_INV_SPLIT_MIN
      _same_bits(special_numerics.erf_inv(part, single), _erf_inv_piece_by_piece(part, single))
    for small in (x[:12].reshape(3, 4), x[5:6].reshape(())):
      _same_bits(special_numerics.erf_inv(small, single), _erf_inv_piece_by_piece(small, single))


def test_erf_inv_primitive_edges():
  x = jnp.asarray(np.array([0.0, -0.0, 0.5, -0.999, 1.0, -1.0, 1.5, np.nan], np.float32))
  out = np.asarray(lax.erf_inv(x))
  assert out.dtype == np.float32
  np.testing.assert_array_equal(out[[0, 4, 5]], [0.0, np.inf, -np.inf])
  assert np.signbit(out[1]) and np.isnan(out[6]) and np.isnan(out[7])
  np.testing.assert_allclose(out[[2, 3]], [0.4769362762, -2.3267537655], rtol=1e-5)


# --------------------------------------- eager programs of unjitted ufuncs
# JAX does not jit these; its equations (JAX 0.10.2's make_jaxpr) stay, and
# eagerly they run as one library program: no primitive is bound per call.
_C64 = np.array([1 + 2j, -0.0 + 1j, 3 - 1j, 1 + 2j, np.nan + 0j, 2.5 + 0j], np.complex64)
_C64_B = np.array([1 + 3j, 0.0 + 1j, 2 - 1j, 1 + 2j, 1 + 0j, 2.5 - 1j], np.complex64)
_I32 = np.array([1, 2, 3, 7, 100, 5], np.int32)
_PROGRAM_CASES = [
    ("log2_c64", lambda x, y: jnp.log2(x), _C64, _C64_B,
     ["log", "real", "imag", "log", "div", "div", "complex"]),
    ("log10_c64", lambda x, y: jnp.log10(x), _C64, _C64_B, None),
    ("log2_i32", lambda x, y: jnp.log2(x), _I32, _I32, ["convert_element_type", "log", "log", "div"]),
    ("log10_i32", lambda x, y: jnp.log10(x), _I32, _I32, None),
    ("logaddexp_i32", jnp.logaddexp, _I32, _I32[::-1].copy(),
     ["convert_element_type", "convert_element_type", "custom_jvp_call"]),
    ("logaddexp2_i32", jnp.logaddexp2, _I32, _I32[::-1].copy(), None),
    ("float_power_i32", jnp.float_power, _I32, _I32 % 3,
     ["convert_element_type", "convert_element_type", "pow"]),
    ("spacing_f32", lambda x, y: jnp.spacing(x),
     np.array([1.0, -0.0, 0.0, -3.5, np.inf, np.nan, 1e-45, 3e38], np.float32), None, None),
    ("spacing_i32", lambda x, y: jnp.spacing(x), _I32, None, None),
    ("less_c64", jnp.less, _C64, _C64_B,
     ["real", "real", "eq", "imag", "imag", "lt", "real", "real", "lt", "select_n"]),
    ("less_equal_c64", jnp.less_equal, _C64, _C64_B, None),
    ("greater_c64", jnp.greater, _C64, _C64_B, None),
    ("greater_equal_c64", jnp.greater_equal, _C64, _C64_B, None),
]


@pytest.mark.parametrize("name,f,x,y,jax_eqns", _PROGRAM_CASES, ids=[c[0] for c in _PROGRAM_CASES])
def test_unjitted_ufuncs_run_as_one_eager_program(monkeypatch, name, f, x, y, jax_eqns):
  import openjax as jax
  from openjax._src.core import eval_trace
  x, y = jnp.asarray(x), jnp.asarray(x if y is None else y)
  with jax.disable_jit():
    want = f(x, y)
  if jax_eqns is not None:
    assert [e.primitive.name for e in jax.make_jaxpr(f)(x, y).jaxpr.eqns] == jax_eqns
  f(x, y)   # the program is made on the first call
  bound = []
  process = eval_trace.process_primitive
  monkeypatch.setattr(eval_trace, "process_primitive",
                      lambda p, args, params: bound.append(p.name) or process(p, args, params))
  got = f(x, y)
  assert bound == []
  assert got.dtype == want.dtype and got.weak_type == want.weak_type
  _same_bits(got, want)
  expected = {"less_c64": np.less, "less_equal_c64": np.less_equal, "greater_c64": np.greater,
              "greater_equal_c64": np.greater_equal}.get(name)
  if expected is not None:   # NumPy's lexicographic order, NaN and -0.0 included
    np.testing.assert_array_equal(got, expected(np.asarray(x), np.asarray(y)))


def test_logaddexp_of_one_float_dtype_keeps_its_custom_program():
  x = jnp.asarray(np.array([0.5, -1.0, np.inf], np.float32))
  y = jnp.asarray(np.array([0.25, np.nan, 1.0], np.float32))
  out = jnp.logaddexp(x, y)
  np.testing.assert_allclose(out[0], np.logaddexp(0.5, 0.25), rtol=1e-6)
  assert np.isnan(out[1]) and out[2] == np.inf and out.dtype == np.float32
  assert jnp.logaddexp(x, 1.0).dtype == np.float32   # a Python scalar: the program path
  assert jnp.float_power(jnp.asarray(np.array([2, 3], np.int32)), 2).dtype == np.float32


# ------------------------------------------------------------------- logistic
def _logistic_two_quotients(x):
  e = np.exp(-np.abs(x))
  return np.where(x >= 0, 1 / (1 + e), e / (1 + e))


@pytest.mark.parametrize("dt", [np.float32, np.float64], ids=str)
def test_logistic_one_quotient_gives_the_two_quotients_bits(dt):
  rng = np.random.default_rng(4)
  x = np.concatenate([rng.standard_normal(5000) * 30, [0, -0.0, np.inf, -np.inf, np.nan, 1e-30,
                                                       -1e-30, 88, -88, 800, -800]]).astype(dt)
  with np.errstate(all="ignore"):
    _same_bits(transcendental._logistic(x), _logistic_two_quotients(x))


def test_logistic_float16_rounds_the_float32_value_once():
  x = np.arange(65536, dtype=np.uint16).view(np.float16)
  with np.errstate(all="ignore"):
    out = transcendental._logistic(x)
    want = _logistic_two_quotients(x.astype(np.float32)).astype(np.float16)
  assert out.dtype == np.float16
  _same_bits(out, want)
  got = lax.logistic(jnp.asarray(np.array([-20.0, -1.0, 0.0, 1.0, 20.0, np.nan], np.float16)))
  np.testing.assert_allclose(np.asarray(got, np.float64)[:5],
                             1 / (1 + np.exp(-np.array([-20.0, -1.0, 0.0, 1.0, 20.0]))),
                             rtol=1e-3, atol=1e-7)
  assert got.dtype == np.float16 and np.isnan(got[5])


# ------------------------------------ special functions as lean eval kernels
_SPECIAL_CASES = [("lgamma", 1), ("digamma", 1), ("erf", 1), ("erfc", 1), ("bessel_i0e", 1),
                  ("bessel_i1e", 1), ("igamma", 2), ("igammac", 2), ("zeta", 2),
                  ("polygamma", 2), ("regularized_incomplete_beta", 3)]


@pytest.mark.parametrize("name,nargs", _SPECIAL_CASES, ids=[c[0] for c in _SPECIAL_CASES])
@pytest.mark.parametrize("dt", [np.float32, np.float16, ml_dtypes.bfloat16, np.float64], ids=str)
def test_float64_special_functions_are_lean_kernels_with_the_impl_bits(name, nargs, dt):
  p = getattr(special, name + "_p")
  rng = np.random.default_rng(5)
  x = [rng.uniform(0.2, 6, 7).astype(dt) for _ in range(nargs)]
  if name == "polygamma":
    x[0] = np.array([0, 1, 2, 3, 0.5, -1, 1], dt)
  if name == "regularized_incomplete_beta":
    x[2] = np.array([0, 0.1, 0.5, 0.9, 1, 1.5, -0.1], dt)
  x[-1][:3] = np.array([np.nan, 0, -1], dt)   # NaN, the poles / domain edges
  kernel = _lean_kernel(p, x)
  with np.errstate(all="ignore"):
    out = kernel(*x)
    _same_bits(out, p.impl(*x)[0])
  assert out.dtype == np.dtype(dt)
  if nargs > 1:   # a rank-0 operand broadcasts as the impl's did
    scalar = [x[0][3].reshape(())] + [v for v in x[1:]]
    with np.errstate(all="ignore"):
      _same_bits(_lean_kernel(p, scalar)(*scalar), p.impl(*scalar)[0])


# ------------------------------------------------------ round and via_float32
@pytest.mark.parametrize("method", [0, 1], ids=["away_from_zero", "to_nearest_even"])
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64], ids=str)
def test_round_has_a_lean_kernel_for_either_method(method, dt):
  x = np.array([0.5, -0.5, 1.5, 2.5, -2.5, np.nan, -0.0, 0.0, np.inf, -np.inf, 0.49999997,
                -1.4999999, 1e30, 7.0], dt)
  params = dict(rounding_method=arithmetic.RoundingMethod(method))
  kernel = _lean_kernel(arithmetic.round_p, [x], **params)
  with np.errstate(all="ignore"):
    _same_bits(kernel(x), arithmetic._round(x, **params))
    _same_bits(kernel(x[3].reshape(())), arithmetic._round(x[3].reshape(()), **params))
  x = jnp.asarray(x)   # (float64 becomes float32 without x64)
  assert lax.round(x, arithmetic.RoundingMethod(method)).dtype == x.dtype


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64], ids=str)
def test_round_away_from_zero_on_the_magnitude_gives_the_select_bits(dt):
  raw = np.dtype(f"u{np.dtype(dt).itemsize}")
  bits = np.random.default_rng(8).integers(0, np.iinfo(raw).max, 50000, dtype=raw)
  with np.errstate(all="ignore"):
    x = np.concatenate([bits.view(dt), np.array([0.5, -0.5, 1.5, 2.5, -2.5, -0.0, 0.0, np.inf,
                                                 -np.inf, np.nan, -np.nan, 0.49999997], dt)])
    t = np.trunc(x)
    want = np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)   # the formula it replaced
    got = arithmetic._round(x, rounding_method=arithmetic.RoundingMethod.AWAY_FROM_ZERO)
  _same_bits(got, want)


def test_via_float32_primitives_plan_their_numpy_function_directly():
  from openjax._src.core.avals import ShapedArray
  from openjax._src.core.trace import make_plan
  for p, n in ((transcendental.sin_p, 1), (arithmetic.floor_p, 1), (transcendental.atan2_p, 2)):
    f32 = make_plan(p, [ShapedArray((4,), np.dtype(np.float32))] * n, {})[0]
    bf16 = make_plan(p, [ShapedArray((4,), np.dtype(ml_dtypes.bfloat16))] * n, {})[0]
    assert getattr(f32, "direct", None) is None   # not the wrapper
    assert getattr(bf16, "direct", None) is not None   # the float32 round trip
    x = [np.array([-1.5, 0.25, 2.0, np.nan], np.float32)] * n
    xb = [v.astype(ml_dtypes.bfloat16) for v in x]
    _same_bits(f32(*x), p.impl(*x)[0])
    _same_bits(bf16(*xb), p.impl(*xb)[0])


@pytest.mark.parametrize("xdt,ydt", [(np.float32, np.float32), (np.float32, np.int32),
                                     (np.float16, np.int8), (np.complex64, np.int32),
                                     (np.complex64, np.complex64), (np.float64, np.float64),
                                     (np.float16, np.float16)], ids=str)
def test_pow_lean_kernel_gives_the_impl_bits(xdt, ydt):
  rng = np.random.default_rng(6)
  x = np.concatenate([rng.uniform(-3, 3, 40), [0, -0.0, np.inf, -np.inf, np.nan, 2, -2, 0.5]])
  y = np.concatenate([rng.integers(-5, 6, 40), [0, -1, 2, -3, 0, 127, -126, 3]])
  if np.dtype(ydt).kind == "f":
    y = y + np.where(np.arange(y.size) % 3 == 0, 0.5, 0.0)
  x = (x + 1j * x[::-1] if np.dtype(xdt).kind == "c" else x).astype(xdt)
  y = (y + 0.5j if np.dtype(ydt).kind == "c" else y).astype(ydt)
  kernel = _lean_kernel(transcendental.pow_p, [x, y])
  with np.errstate(all="ignore"):
    _same_bits(np.asarray(kernel(x, y)), transcendental._pow_impl(x, y)[0])
    x0, y0 = x[5].reshape(()), y[7].reshape(())
    _same_bits(np.asarray(_lean_kernel(transcendental.pow_p, [x0, y0])(x0, y0)),
               transcendental._pow_impl(x0, y0)[0])


def test_complex_atan2_is_jax_extension():
  # JAX 0.10.2: lax.atan2 of complex operands is -i log((y + i x) / sqrt(x^2 + y^2))
  # (not |y + i x|: x^2 + y^2 is complex), NaN where x^2 + y^2 = 0.
  x = jnp.asarray(np.array([1 + 2j, 0.5 - 1j, 3 + 0j, 1 + 0j], np.complex64))
  y = jnp.asarray(np.array([2 - 1j, -1 + 0.5j, -1 + 0j, 2 + 0j], np.complex64))
  out = np.asarray(lax.atan2(x, y))
  assert out.dtype == np.complex64
  assert np.isnan(out[0].real) and np.isnan(out[0].imag)
  np.testing.assert_allclose(out[1], 2.3561945 + 0.34657353j, rtol=1e-6)
  np.testing.assert_allclose(out[2:], np.arctan2([3, 1], [-1, 2]).astype(np.complex64),
                             rtol=1e-6, atol=1e-7)


# ---------------------------------------------------------- reduce_precision
def _reduce_precision_in_uint64(x, exponent_bits, mantissa_bits):
  """XLA's reduce_precision on the bits widened to uint64 (the formula the
  operand-width kernel stands in for)."""
  info = np.finfo(x.dtype) if x.dtype != ml_dtypes.bfloat16 else ml_dtypes.finfo(x.dtype)
  nmant, nexp = int(info.nmant), int(info.nexp)
  udt = np.dtype(f"u{x.dtype.itemsize}")
  bits = x.view(udt).astype(np.uint64)
  sign = np.uint64(1 << (x.dtype.itemsize * 8 - 1))
  exp_mask = np.uint64(((1 << nexp) - 1) << nmant)
  if mantissa_bits < nmant:
    shift = np.uint64(nmant - mantissa_bits)
    last = (bits >> shift) & np.uint64(1)
    half = np.uint64((1 << (nmant - mantissa_bits - 1)) - 1)
    bits = (bits + half + last) & ~np.uint64((1 << (nmant - mantissa_bits)) - 1)
  if exponent_bits < nexp:
    src_bias, red_bias = (1 << (nexp - 1)) - 1, (1 << (exponent_bits - 1)) - 1
    e = (bits & exp_mask) >> np.uint64(nmant)
    bits = np.where(e > src_bias + red_bias, (bits & sign) | exp_mask, bits)
    bits = np.where(e <= src_bias - red_bias, bits & sign, bits)
  return np.where(np.isnan(x), x, bits.astype(udt).view(x.dtype))


@pytest.mark.parametrize("dt", [np.float32, np.float16, ml_dtypes.bfloat16, np.float64], ids=str)
def test_reduce_precision_in_the_operand_width_gives_the_uint64_bits(dt):
  raw = np.dtype(f"u{np.dtype(dt).itemsize}")
  rng = np.random.default_rng(7)
  bits = rng.integers(0, np.iinfo(raw).max, 20000, dtype=raw, endpoint=True)
  with np.errstate(all="ignore"):
    x = np.concatenate([bits.view(dt), np.array([0, -0.0, np.inf, -np.inf, np.nan, 1, -1], dt)])
  for e, m in ((8, 7), (5, 10), (4, 3), (11, 52), (8, 23), (2, 1), (5, 2)):
    with np.errstate(all="ignore"):   # (NumPy warns on bfloat16 NaNs' isnan)
      out = arithmetic._reduce_precision_impl(x, exponent_bits=e, mantissa_bits=m)[0]
      want = _reduce_precision_in_uint64(x, e, m)
    _same_bits(out, want)


def test_polygamma_parts_on_their_own_elements_agree_with_the_whole_formula():
  rng = np.random.default_rng(9)
  m = rng.integers(0, 6, 3000).astype(np.float64)
  x = rng.uniform(0.05, 12, 3000)
  m[:6] = [0.5, -1, np.nan, np.inf, 200, 3]
  x[6:9] = [0, -1, np.nan]
  with np.errstate(all="ignore"):
    got = special_numerics.polygamma(m, x)
    integer_m = (m >= 0) & (m == np.floor(m))
    safe_m = np.where(integer_m, m, 1.0)
    sign = np.where(np.remainder(safe_m, 2) == 1, 1.0, -1.0)
    whole = sign * np.exp(special_numerics.lgamma(safe_m + 1)) * special_numerics.zeta(
        safe_m + 1, x)
    whole = np.where(integer_m, np.where(m == 0, special_numerics.digamma(x), whole), np.nan)
  np.testing.assert_array_equal(np.isnan(got), np.isnan(whole))
  finite = np.isfinite(whole)
  np.testing.assert_allclose(got[finite], whole[finite], rtol=1e-13)
  np.testing.assert_array_equal(got[~finite & ~np.isnan(whole)], whole[~finite & ~np.isnan(whole)])
  assert special_numerics._FACTORIALS[20] == 2432902008176640000.0   # exact below 23!
