"""lax elementwise and special-function primitives: JAX's error messages,
weak types, integer division and shift semantics, printed jaxprs (goldens from
JAX 0.10.2), XLA's special-function edge values, float64 accuracy against
SciPy, and that every impl returns exactly the dtype its abstract eval says."""
import ml_dtypes
import numpy as np
import pytest
from scipy import special as sp

import openjax as jax
from openjax import lax
from openjax._src.config import config
from openjax._src.core import Literal
from tests.ops.harness import all_rows

F16, F32, F64 = np.float16, np.float32, np.float64
I8, I16, I32, U8 = np.int8, np.int16, np.int32, np.uint8
BF16 = ml_dtypes.bfloat16


# --------------------------------------------------------------- messages
@pytest.mark.parametrize("fn, args, exc, msg", [
    (lax.add, (F32(1), I32(1)), TypeError,
     "lax.add requires arguments to have the same dtypes, got float32, int32. (Tip: jnp.add "
     "is a similar function that does automatic type promotion on inputs)."),
    (lax.add, (F32(1), 2), TypeError,
     "lax.add requires arguments to have the same dtypes, got float32, int32. (Tip: jnp.add "
     "is a similar function that does automatic type promotion on inputs)."),
    (lax.mul, (True, False), TypeError,
     "mul does not accept dtype bool at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating, complexfloating."),
    (lax.lt, (1j, 2j), TypeError,
     "lt does not accept dtype complex64 at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating, bool."),
    (lax.sin, (I32(1),), TypeError,
     "sin does not accept dtype int32. Accepted dtypes are subtypes of floating, complexfloating."),
    (lax.abs, (U8(2),), TypeError,
     "abs does not accept dtype uint8. Accepted dtypes are subtypes of floating, "
     "complexfloating, signedinteger."),
    (lax.pow, (F32(2), F16(1)), TypeError,
     "the first argument to pow must have an inexact dtype (float or complex), and the second "
     "argument must have an inexact or integer dtype, and two inexact dtypes must match, but "
     "got float32 and float16 respectively."),
    (lax.pow, (I32(2), I32(1)), TypeError,
     "pow does not accept dtype int32 at position 0. Accepted dtypes at position 0 are "
     "subtypes of floating, complexfloating."),
    (lax.rem, (1j, 1j), TypeError,
     "rem does not accept dtype complex64 at position 0. Accepted dtypes at position 0 are "
     "subtypes of integer, floating."),
    (lax.add, (np.ones(3, F32), np.ones(4, F32)), TypeError,
     "add got incompatible shapes for broadcasting: (3,), (4,)."),
    (lax.add, (np.ones(3, F32), np.ones((1, 3), F32)), TypeError,
     "add: arrays must have the same number of dimensions, got {1, 2}"),
    (lax.conj, (F16(1),), TypeError,
     "conj does not accept dtype float16. Accepted dtypes are subtypes of float32, "
     "complexfloating, float64."),
    (lambda x: lax.integer_pow(x, -1), (I32(2),), TypeError,
     "Integers cannot be raised to negative powers, got integer_pow(int32[], -1)"),
    (lax.select_n, (True, np.ones(2, F32), np.ones(3, F32)), TypeError,
     "select cases must have the same shapes, got [(2,), (3,)]."),
    (lax.select_n, (np.ones(2, F32), np.ones(2, F32), np.ones(2, F32)), TypeError,
     "select `which` must be boolean or integer type, got float32."),
    (lax.select, (np.ones(3, bool), np.ones(2, F32), np.ones(2, F32)), TypeError,
     "select `which` must be scalar or have the same shape as cases, got `which` shape (3,) "
     "but case shape (2,)."),
    (lax.select_n, (True, F32(1), I32(1)), TypeError,
     "lax.select requires arguments to have the same dtypes, got float32, int32. (Tip: "
     "jnp.where is a similar function that does automatic type promotion on inputs)."),
    (lax.select_n, (True, 1., 2., 3.), TypeError,
     "select with boolean `which` cannot have > 2 cases."),
    (lax.select_n, (I32(1),), ValueError, "select_n() must have at least one case"),
    (lax.clamp, (np.ones(2, F32), np.ones(3, F32), 1.), TypeError,
     "clamp requires min.shape == operand.shape or min.shape == (), got min.shape=(2,), "
     "operand.shape=(3,)."),
    (lax.clamp, (I32(0), F32(1), F32(2)), TypeError,
     "lax.clamp requires arguments to have the same dtypes, got int32, float32, float32."),
    (lax.igamma, (F32(1), F16(1)), TypeError,
     "lax.igamma requires arguments to have the same dtypes, got float32, float16."),
    (lax.lgamma, (I32(1),), TypeError,
     "lgamma does not accept dtype int32. Accepted dtypes are subtypes of floating."),
    (lax.bitwise_and, (I32(1), I8(1)), TypeError,
     "lax.and requires arguments to have the same dtypes, got int32, int8."),
    (lax.shift_left, (I32(1), I8(1)), TypeError,
     "lax.shift_left requires arguments to have the same dtypes, got int32, int8. (Tip: "
     "jnp.left_shift is a similar function that does automatic type promotion on inputs)."),
    (lax.div, (I32(1), I16(1)), TypeError,
     "lax.div requires arguments to have the same dtypes, got int32, int16. (Tip: jnp.divide "
     "is a similar function that does automatic type promotion on inputs)."),
    (lax.atan2, (F32(1), F16(1)), TypeError,
     "lax.atan2 requires arguments to have the same dtypes, got float32, float16. (Tip: "
     "jnp.arctan2 is a similar function that does automatic type promotion on inputs)."),
    (lax.complex, (F16(1), F16(2)), TypeError,
     "complex does not accept dtype float16 at position 0. Accepted dtypes at position 0 are "
     "subtypes of float32, float64."),
    (lambda x: lax.round(x, "x"), (F32(2.5),), ValueError, "'x' is not a valid RoundingMethod"),
    (lax.population_count, (F32(1),), TypeError,
     "population_count does not accept dtype float32. Accepted dtypes are subtypes of integer."),
    (lax.bitwise_not, (F32(1),), TypeError,
     "not does not accept dtype float32. Accepted dtypes are subtypes of integer, bool."),
    (lax.betainc, (F32(1), F32(1), F16(1)), TypeError,
     "lax.regularized_incomplete_beta requires arguments to have the same dtypes, got "
     "float32, float32, float16."),
])
def test_errors_match_jax(fn, args, exc, msg):
  with pytest.raises(exc) as info:
    fn(*args)
  assert str(info.value) == msg
  if exc is TypeError:   # the same check runs at trace time
    with pytest.raises(exc):
      jax.make_jaxpr(fn)(*args)


# ------------------------------------------------------------- weak types
@pytest.mark.parametrize("fn, args, dtype, weak", [
    (lax.add, (1.0, 2.0), F32, True),
    (lax.add, (F32(1), 2.0), F32, False),
    (lax.eq, (1.0, 2.0), np.bool_, True),
    (lax.is_finite, (1.0,), np.bool_, True),
    (lax.abs, (1j,), F32, True),
    (lax.real, (1j,), F32, True),
    (lax.complex, (1.0, 2.0), np.complex64, True),
    (lambda x: lax.integer_pow(x, 2), (2.0,), F32, True),
    (lambda x: lax.convert_element_type(x, np.int32), (1.0,), I32, False),
    (lax.clamp, (0., 1., 2.), F32, True),
    (lax.clamp, (F32(0), 1., F32(2)), F32, False),
    (lax.pow, (2., 3), F32, True),
    (lax.pow, (2., I32(3)), F32, False),
    (lambda p, a, b: lax.select(p, a, b), (True, 1., 2.), F32, True),
    (lax.lgamma, (2.5,), F32, True),
])
def test_weak_types(fn, args, dtype, weak):
  out = fn(*args)
  assert out.dtype == np.dtype(dtype) and out.weak_type == weak
  staged = jax.jit(fn)(*args)
  assert staged.dtype == out.dtype and staged.weak_type == weak


# ------------------------------------------------ integer semantics (XLA's)
def test_div_and_rem_truncate_toward_zero():
  x = np.array([7, -7, 7, -7], I32)
  y = np.array([2, 2, -2, -2], I32)
  np.testing.assert_array_equal(lax.div(x, y), [3, -3, -3, 3])
  np.testing.assert_array_equal(lax.rem(x, y), [1, -1, 1, -1])


def test_integer_division_by_zero_and_overflow():
  np.testing.assert_array_equal(lax.div(np.array([7, -7, 0], I32), np.zeros(3, I32)), [-1, -1, -1])
  np.testing.assert_array_equal(lax.div(np.array([7, 0], U8), np.zeros(2, U8)), [255, 255])
  np.testing.assert_array_equal(lax.rem(np.array([7, -7, 0], I32), np.zeros(3, I32)), [7, -7, 0])
  np.testing.assert_array_equal(lax.div(np.array([-2**31], I32), np.array([-1], I32)), [-2**31])
  np.testing.assert_array_equal(lax.rem(np.array([-2**31], I32), np.array([-1], I32)), [0])
  np.testing.assert_array_equal(lax.div(np.array([-128], I8), np.array([-1], I8)), [-128])


def test_shifts_read_the_amount_as_unsigned():
  x = np.array([1, -1, 5, -8, 3], I32)
  amount = np.array([32, 33, -1, 31, 0], I32)
  np.testing.assert_array_equal(lax.shift_left(x, amount), [0, 0, 0, 0, 3])
  np.testing.assert_array_equal(lax.shift_right_arithmetic(x, amount), [0, -1, 0, -1, 3])
  np.testing.assert_array_equal(lax.shift_right_logical(x, amount), [0, 0, 0, 1, 3])
  np.testing.assert_array_equal(lax.shift_right_logical(np.array([-8], I8), np.array([1], I8)),
                                [124])


def test_bit_counts_use_raw_bits():
  np.testing.assert_array_equal(lax.population_count(np.array([-1, -128, 5], I8)), [8, 1, 2])
  np.testing.assert_array_equal(lax.clz(np.array([-1, 0, 1, 2**30], I32)), [0, 32, 31, 1])


def test_mulhi_and_out_dtype():
  np.testing.assert_array_equal(
      lax.mulhi(np.array([-5, 7, 2**31 - 1], I32), np.array([2**30, -3, 2**31 - 1], I32)),
      [-2, -1, 1073741823])
  big = np.array([2**63 - 1, -2**63], np.int64)
  with jax.enable_x64():
    np.testing.assert_array_equal(lax.mulhi(big, big), [(2**63 - 1) ** 2 >> 64, 2**62])
  out = lax.mul(np.array([100], I8), np.array([100], I8), out_dtype=np.int32)
  assert out.dtype == np.int32 and int(out[0]) == 10000


def test_rounding_methods():
  x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, np.nextafter(F32(0.5), F32(0))], F32)
  np.testing.assert_array_equal(lax.round(x), [1, 2, 3, -1, -3, 0])
  np.testing.assert_array_equal(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
                                [0, 2, 2, -0, -2, 0])


def test_reduce_precision_matches_jax():
  x = np.array([1.0001, 1e-6, 7e4, 1e5, np.nan, -np.inf, 3.14159, 65504, 65520], F32)
  np.testing.assert_array_equal(lax.reduce_precision(x, 5, 10),
                                [1, 0, np.inf, np.inf, np.nan, -np.inf, 3.140625, 65504, np.inf])
  np.testing.assert_array_equal(lax.reduce_precision(x, 5, 0),
                                [1, 0, np.inf, np.inf, np.nan, -np.inf, 4, np.inf, np.inf])
  np.testing.assert_array_equal(lax.reduce_precision(x, 8, 7), x.astype(BF16).astype(F32))


def test_nextafter_narrow_floats():
  one = np.array([1, 0, np.inf], BF16)
  np.testing.assert_array_equal(lax.nextafter(one, np.full(3, 2, BF16)).astype(F32),
                                np.array([1.0078125, 9.183549615799121e-41, 3.3895313892515355e38],
                                         F32))
  assert float(lax.nextafter(F16(1), F16(2))) == 1.0009765625


# --------------------------------------------------------- printed jaxprs
def test_printed_jaxpr_matches_jax():
  def f(x, i):
    return (lax.exp(x), lax.tan(x), lax.mul(x, x), lax.round(x), lax.round(x, 1), lax.conj(x),
            lax.integer_pow(x, 3), lax.rsqrt(x), lax.convert_element_type(x, I32),
            lax.reduce_precision(x, 5, 10), lax.clamp(0., x, 1.), lax.select_n(True, x, x),
            lax.exp(x, accuracy=lax.AccuracyMode.HIGHEST), lax.shift_right_logical(i, i),
            lax.bitwise_not(i), lax.population_count(i), lax.complex(x, x), lax.lgamma(x),
            lax.igamma(x, x), lax.betainc(x, x, x), lax.nextafter(x, x),
            lax.bitcast_convert_type(x, I32), lax.is_finite(x), lax.erf_inv(x))
  assert str(jax.make_jaxpr(f)(F32(1), I32(2))) == """\
{ lambda ; a:f32[] b:i32[]. let
    c:f32[] = exp a
    d:f32[] = tan a
    e:f32[] = mul a a
    f:f32[] = round[rounding_method=0] a
    g:f32[] = round[rounding_method=1] a
    h:c64[] = conj[input_dtype=float32] a
    i:f32[] = integer_pow[y=3] a
    j:f32[] = rsqrt a
    k:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    l:f32[] = reduce_precision[exponent_bits=5 mantissa_bits=10] a
    m:f32[] = clamp 0.0:f32[] a 1.0:f32[]
    n:f32[] = select_n True:bool[] a a
    o:f32[] = exp[accuracy=AccuracyMode.HIGHEST] a
    p:i32[] = shift_right_logical b b
    q:i32[] = not b
    r:i32[] = population_count b
    s:c64[] = complex a a
    t:f32[] = lgamma a
    u:f32[] = igamma a a
    v:f32[] = regularized_incomplete_beta a a a
    w:f32[] = nextafter a a
    x:i32[] = bitcast_convert_type[new_dtype=int32] a
    y:bool[] = is_finite a
    z:f32[] = erf_inv a
  in (c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x, y, z) }"""
  assert str(jax.make_jaxpr(lambda x: lax.add(x, 1.0))(np.ones(2, F32))) == \
      "{ lambda ; a:f32[2]. let b:f32[2] = add a 1.0:f32[] in (b,) }"


# --------------------------------------- special functions: XLA's edge values
def test_special_function_edges_match_xla():
  nan, inf = np.nan, np.inf
  x = np.array([0.0, -0.0, -1.0, -2.5, np.inf, -np.inf, np.nan, -1e20], F32)
  np.testing.assert_array_equal(np.asarray(lax.lgamma(x))[[0, 1, 2, 4, 5, 6, 7]],
                                [inf, inf, inf, inf, inf, nan, inf])
  np.testing.assert_array_equal(np.asarray(lax.digamma(x))[[0, 1, 2, 4, 5, 6, 7]],
                                [nan, nan, nan, inf, nan, nan, nan])
  np.testing.assert_array_equal(lax.erf_inv(np.array([1, -1, 1.5, -0.0], F32)),
                                [inf, -inf, nan, -0.0])
  np.testing.assert_array_equal(lax.erfc(np.array([-inf, inf, 30], F32)), [2, 0, 0])
  np.testing.assert_array_equal(lax.bessel_i1e(np.array([inf, -inf, 0], F32)), [0, -0.0, 0])
  np.testing.assert_array_equal(
      lax.igamma_grad_a(np.array([5, 0, -1, 1, 1], F32), np.array([0, 1, 1, -1, inf], F32)),
      [0, nan, nan, nan, nan])
  np.testing.assert_array_equal(
      lax.polygamma(np.array([1, 2, 3, 4, 1, 1], F32), np.array([0, 0, 0, 0, inf, nan], F32)),
      [inf, nan, inf, nan, nan, nan])
  np.testing.assert_array_equal(
      lax.zeta(np.array([2, 3, 2, 4, 3.5], F32), np.array([-0.0, -2, -1, -3, -1], F32)),
      [inf, nan, inf, inf, nan])
  np.testing.assert_array_equal(
      lax.betainc(np.array([0, 1, 1, np.inf], F32), np.array([1, 0, np.inf, 1], F32),
                  np.full(4, 0.5, F32)), [1, 0, 1, 0])


@pytest.mark.parametrize("fn, ref, make", [
    (lax.lgamma, sp.gammaln, lambda r: r.uniform(-20, 30, 64)),
    (lax.digamma, sp.digamma, lambda r: r.uniform(-20, 30, 64)),
    (lax.erf, sp.erf, lambda r: r.uniform(-6, 6, 64)),
    (lax.erfc, sp.erfc, lambda r: r.uniform(-6, 27, 64)),
    (lax.erf_inv, sp.erfinv, lambda r: r.uniform(-1, 1, 64)),
    (lax.bessel_i0e, sp.i0e, lambda r: r.uniform(-100, 100, 64)),
    (lax.bessel_i1e, sp.i1e, lambda r: r.uniform(-100, 100, 64)),
    (lax.igamma, sp.gammainc, lambda r: (r.uniform(0.01, 50, 64), r.uniform(0, 80, 64))),
    (lax.igammac, sp.gammaincc, lambda r: (r.uniform(0.01, 50, 64), r.uniform(0, 80, 64))),
    (lax.zeta, sp.zeta, lambda r: (r.uniform(1.01, 20, 64), r.uniform(0.01, 20, 64))),
    (lax.polygamma, sp.polygamma, lambda r: (r.integers(0, 6, 64).astype(F64),
                                             r.uniform(0.05, 20, 64))),
    (lax.betainc, sp.betainc, lambda r: (r.uniform(0.01, 40, 64), r.uniform(0.01, 40, 64),
                                         r.uniform(0, 1, 64))),
])
def test_special_functions_float64_accuracy(fn, ref, make):
  args = make(np.random.default_rng(0))
  args = args if isinstance(args, tuple) else (args,)
  with jax.enable_x64():
    out = fn(*args)
    assert out.dtype == np.float64
  np.testing.assert_allclose(np.asarray(out), ref(*args), rtol=1e-11, atol=1e-13)


# ------------------------------------ impl dtypes equal abstract-eval dtypes
def _elementwise_rows():
  return [r for r in all_rows() if r.name.startswith("lax.") and r.jit]


def test_impls_return_exactly_the_abstract_dtype():
  # EvalTrace would silently cast a wrong dtype; call each impl directly.
  checked = set()
  for row in _elementwise_rows():
    args = row.args(np.random.default_rng(0))
    closed = jax.make_jaxpr(row.fn)(*args)
    env = dict(zip(closed.jaxpr.invars,
                   [np.asarray(a, dtype=v.aval.dtype) for a, v in zip(args, closed.jaxpr.invars)]))
    env.update(zip(closed.jaxpr.constvars, [np.asarray(c) for c in closed.consts]))
    for eqn in closed.jaxpr.eqns:
      vals = [np.asarray(a.val) if isinstance(a, Literal) else env[a] for a in eqn.invars]
      outs = eqn.primitive.impl(*vals, **eqn.params)
      for v, o in zip(eqn.outvars, outs):
        assert np.asarray(o).dtype == v.aval.dtype, (row.name, eqn.primitive.name)
        assert np.shape(o) == v.aval.shape, (row.name, eqn.primitive.name)
        env[v] = np.asarray(o)
      checked.add(eqn.primitive.name)
  assert {"sin", "add", "lgamma", "betainc", "regularized_incomplete_beta", "select_n"} & checked


# JAX 0.10.2's values at the special functions' edges (jax.lax, float32).
_JAX_EDGES = [
    ("betainc", (1.0, 0.0, 1.0), 1.0), ("betainc", (0.0, 2.0, 0.0), 0.0),
    ("betainc", (0.0, 2.0, 0.5), 1.0), ("betainc", (2.0, 0.0, 0.5), 0.0),
    ("betainc", (np.inf, 1.0, 1.0), 1.0), ("betainc", (1.0, np.inf, 0.0), 0.0),
    ("igamma", (np.inf, np.inf), 1.0), ("igamma", (np.inf, 0.0), 0.0),
    ("igammac", (np.inf, np.inf), 0.0), ("igammac", (np.inf, 0.0), 1.0),
    ("igamma", (np.inf, 1.0), np.nan), ("igamma", (0.0, 1.0), 1.0),
    ("zeta", (1.0, 0.0), np.inf), ("zeta", (1.0, -1.0), np.inf), ("zeta", (1.0, np.inf), np.inf),
    ("zeta", (1.0, np.nan), np.inf), ("zeta", (2.0, 0.0), np.inf)]


@pytest.mark.parametrize("executor", ["interpreter", "iree"])
def test_special_function_edges_match_jax(executor):
  """x at an end of the domain decides before the parameters' edges, and
  zeta's pole at x == 1 before q's NaN cases, as JAX 0.10.2 computes them,
  eagerly and compiled."""
  for name, args, want in _JAX_EDGES:
    fn = getattr(lax, name)
    args = [np.float32(a) for a in args]
    with config.override("openjax_executor", executor), \
         config.override("openjax_tiered_compilation", False):
      for got in (fn(*args), jax.jit(fn)(*args)):
        np.testing.assert_equal(float(got), want, err_msg=f"{name}{tuple(map(float, args))}")
