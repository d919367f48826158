"""jax.numpy elementwise functions: result dtypes and weak types for every
pair of operand kinds (a fixture recorded from JAX 0.10.2), integer division
and remainder semantics, shifts, powers, and error messages."""
import json
import pathlib
import warnings

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp

_FIXTURE = json.loads((pathlib.Path(__file__).parent / "data" / "ufunc_dtypes.json").read_text())
_PY = {"py_bool": True, "py_int": 2, "py_float": 1.5, "py_complex": 1 + 1j}
I32, F32 = np.int32, np.float32


def _operand(name):
  if name in _PY:
    return _PY[name]
  dtype = ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)
  return np.array([1, 2] if name != "bool" else [True, False], dtype=dtype)


def _describe(result) -> str:
  if isinstance(result, tuple):
    return ",".join(_describe(r) for r in result)
  return np.dtype(result.dtype).name + ("*" if result.weak_type else "")


def _functions():
  return sorted({key.split("|")[0] for key in _FIXTURE["x32"]})


@pytest.mark.parametrize("mode", ["x32", "x64"])
@pytest.mark.parametrize("fname", _functions())
def test_result_dtypes_match_jax(fname, mode):
  mismatches = []
  with jax.enable_x64(mode == "x64"), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for key, want in _FIXTURE[mode].items():
      name, *operands = key.split("|")
      if name != fname:
        continue
      try:
        got = _describe(getattr(jnp, name)(*(_operand(o) for o in operands)))
      except Exception as e:  # noqa: BLE001 - the error type is compared
        got = "!" + type(e).__name__
      if got != want:
        mismatches.append(f"{key}: got {got}, JAX gives {want}")
  assert not mismatches, "\n".join(mismatches)


def test_promotion_of_bools_and_small_ints_like_jax():
  assert not jnp.isnan(True).weak_type
  with jax.enable_x64():
    assert jnp.sqrt(np.int32(4)).dtype == np.float32
    assert jnp.square(True).dtype == np.int32


# ----------------------------------------------------------- integer division
def test_integer_floor_divide_and_remainder_follow_python():
  x = np.array([7, -7, 7, -7, 1, -1], I32)
  y = np.array([2, 2, -2, -2, 3, 3], I32)
  np.testing.assert_array_equal(jnp.floor_divide(x, y), x // y)
  np.testing.assert_array_equal(jnp.remainder(x, y), x % y)
  np.testing.assert_array_equal(jnp.mod(x, y), x % y)
  np.testing.assert_array_equal(jnp.fmod(x, y), np.fmod(x, y))
  q, r = jnp.divmod(x, y)
  np.testing.assert_array_equal(q, x // y)
  np.testing.assert_array_equal(r, x % y)
  # the operators dispatch to the same functions
  np.testing.assert_array_equal(jnp.asarray(x) // y, x // y)
  np.testing.assert_array_equal(jnp.asarray(x) % y, x % y)


def test_integer_division_by_zero_matches_jax():
  # XLA defines x / 0 as -1 for signed integers and the maximum for unsigned;
  # floor_divide then steps down where the signs differ; remainder gives 0.
  x = np.array([7, -7, 0, 5], I32)
  zero = np.zeros(4, I32)
  np.testing.assert_array_equal(jnp.floor_divide(x, zero), [-2, -2, -1, -2])
  np.testing.assert_array_equal(jnp.remainder(x, zero), [0, 0, 0, 0])
  np.testing.assert_array_equal(jnp.fmod(x, zero), [0, 0, 0, 0])
  np.testing.assert_array_equal(jnp.floor_divide(np.array([7, 5], np.uint8), np.uint8(0)),
                                [255, 255])
  np.testing.assert_array_equal(jnp.true_divide(x, zero), [np.inf, -np.inf, np.nan, np.inf])


def test_integer_division_overflow():
  x = np.array([-128], np.int8)
  np.testing.assert_array_equal(jnp.floor_divide(x, np.int8(-1)), [-128])
  np.testing.assert_array_equal(jnp.remainder(np.array([-2**31], I32), I32(-1)), [0])


def test_divide_of_integers_is_float():
  out = jnp.divide(I32(1), I32(2))
  assert out.dtype == np.float32 and float(out) == 0.5
  assert jnp.true_divide(1, 2).weak_type
  assert (jnp.asarray(np.arange(3, dtype=I32)) / 2).dtype == np.float32


def test_float_floor_divide_and_remainder_edges():
  x = np.array([7.5, -7.5, 7.5, 1.0, -1.0, 0.0, np.inf, 1.0, -1.0], F32)
  y = np.array([2, 2, -2, 0, 0, 0, 2, np.inf, np.inf], F32)
  np.testing.assert_array_equal(jnp.floor_divide(x, y),
                                [3, -4, -4, np.inf, -np.inf, np.nan, np.nan, 0, -1])
  np.testing.assert_array_equal(jnp.remainder(x, y),
                                [1.5, 0.5, -0.5, np.nan, np.nan, np.nan, np.nan, 1, np.inf])


# ------------------------------------------------------------------- shifts
def test_shifts_past_the_bit_width():
  ones = np.array([1, -1, 5, -8], I32)
  np.testing.assert_array_equal(jnp.left_shift(ones, 32), [0, 0, 0, 0])
  np.testing.assert_array_equal(jnp.left_shift(ones, 31), [-2**31, -2**31, -2**31, 0])
  np.testing.assert_array_equal(jnp.right_shift(ones, 40), [0, -1, 0, -1])
  np.testing.assert_array_equal(jnp.right_shift(ones, 1), [0, -1, 2, -4])
  u = np.array([255, 128, 1], np.uint8)
  np.testing.assert_array_equal(jnp.right_shift(u, np.uint8(1)), [127, 64, 0])
  np.testing.assert_array_equal(jnp.right_shift(u, np.uint8(8)), [0, 0, 0])
  np.testing.assert_array_equal(jnp.left_shift(u, np.uint8(9)), [0, 0, 0])
  # negative shift amounts are huge unsigned ones
  np.testing.assert_array_equal(jnp.left_shift(ones, -1), [0, 0, 0, 0])
  assert (jnp.asarray(ones) << 2).dtype == np.int32
  np.testing.assert_array_equal(jnp.asarray(ones) >> 1, [0, -1, 2, -4])


def test_shift_of_floats_is_an_error():
  with pytest.raises(TypeError, match="shift_left does not accept dtype float32"):
    jnp.left_shift(np.float32(1), 1)


# ------------------------------------------------------------------- powers
def test_power_with_static_integer_uses_integer_pow():
  assert str(jax.make_jaxpr(lambda x: jnp.power(x, 3))(F32(1))) == \
      "{ lambda ; a:f32[]. let b:f32[] = integer_pow[y=3] a in (b,) }"
  assert str(jax.make_jaxpr(lambda x: x ** 2)(F32(1))) == \
      "{ lambda ; a:f32[]. let b:f32[] = integer_pow[y=2] a in (b,) }"
  assert str(jax.make_jaxpr(lambda x: jnp.power(x, 3.0))(F32(1))) == \
      "{ lambda ; a:f32[]. let b:f32[] = pow a 3.0:f32[] in (b,) }"
  assert str(jax.make_jaxpr(lambda x: 2 ** x)(F32(1))) == \
      "{ lambda ; a:f32[]. let b:f32[] = pow 2.0:f32[] a in (b,) }"


def test_power_integer_cases():
  assert jnp.power(np.int8(2), np.int32(3)).dtype == np.int8     # the exponent's dtype is unused
  assert jnp.power(2, 3).weak_type
  with pytest.raises(TypeError, match="Integers cannot be raised to negative powers"):
    jnp.power(I32(2), -1)
  # array exponents wrap like JAX's: negative exponents give 0 or garbage, not errors
  np.testing.assert_array_equal(
      jnp.power(np.array([2, 3, -1, -1, 0, 0], I32), np.array([-1, -2, 64, 65, 0, 3], I32)),
      [0, 703701817, 1, -1, 1, 0])
  np.testing.assert_array_equal(jnp.power(np.array([True]), 2), [1])


def test_float_power_keeps_the_float_width():
  assert jnp.float_power(np.float16(2), 3).dtype == np.float16
  assert jnp.float_power(I32(2), I32(3)).dtype == np.float32


# -------------------------------------------------------------- weak types
@pytest.mark.parametrize("fn, args, dtype, weak", [
    (jnp.sin, (1.0,), np.float32, True),
    (jnp.sin, (1,), np.float32, True),
    (jnp.add, (F32(1), 1), np.float32, False),
    (jnp.add, (I32(1), 1.5), np.float32, True),
    (jnp.add, (np.float16(1), 1.5), np.float16, False),
    (jnp.multiply, (ml_dtypes.bfloat16(1), 2), ml_dtypes.bfloat16, False),
    (jnp.exp, (True,), np.float32, False),
    (jnp.deg2rad, (1.0,), np.float32, True),
    (jnp.log10, (1.0,), np.float32, False),
    (jnp.isnan, (1.0,), np.bool_, True),
    (jnp.signbit, (1.0,), np.bool_, False),
    (jnp.imag, (1.0,), np.float32, True),
    (jnp.ceil, (True,), np.bool_, False),
    (jnp.floor_divide, (7, 2), np.int32, True),
    (jnp.maximum, (1, 2.5), np.float32, True),
])
def test_weak_types(fn, args, dtype, weak):
  out = fn(*args)
  assert out.dtype == np.dtype(dtype)
  assert out.weak_type == weak
  jitted = jax.jit(fn)(*args)
  assert jitted.dtype == out.dtype and jitted.weak_type == out.weak_type


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("fn, args, exc, msg", [
    (jnp.add, ([1, 2], 1), TypeError, "add requires ndarray or scalar arguments"),
    (jnp.sin, ("a",), TypeError, "sin requires ndarray or scalar arguments"),
    (jnp.subtract, (True, False), TypeError, "sub does not accept dtype bool"),
    (jnp.negative, (True,), TypeError, "neg does not accept dtype bool"),
    (jnp.sign, (np.array([True]),), TypeError, "sign does not accept dtype bool"),
    (jnp.bitwise_and, (F32(1), F32(1)), TypeError, "and does not accept dtype float32"),
    (jnp.invert, (F32(1),), TypeError, "not does not accept dtype float32"),
    (jnp.floor_divide, (1j, 1j), TypeError, "floor_divide does not support complex"),
    (jnp.remainder, (1j, 1j), TypeError, "rem does not accept dtype complex64"),
    (jnp.fabs, (1j,), TypeError, "ufunc 'fabs' does not support complex dtypes"),
    (jnp.copysign, (1j, 1), TypeError, "copysign does not support complex-valued inputs"),
    (jnp.hypot, (1j, 1), ValueError, "jnp.hypot is not well defined for complex"),
    (jnp.signbit, (1j,), ValueError, "signbit is not well defined for complex64"),
    (jnp.gcd, (1.0, 2.0), ValueError, "Arguments to jax.numpy.gcd must be integers"),
    (jnp.ldexp, (F32(1), 2.0), ValueError, "ldexp not supported for input types"),
    (jnp.i0, (1j,), ValueError, "Unsupported input type to jax.numpy.i0: complex64"),
    (jnp.spacing, (1j,), ValueError, "jnp.spacing is not defined for complex inputs"),
    (jnp.isposinf, (1j,), ValueError, "isposinf/isneginf are not well defined"),
    (jnp.interp, (np.ones(2), np.ones((2, 2)), np.ones((2, 2))), ValueError,
     "xp and fp must be one-dimensional arrays of equal size"),
    (lambda: jnp.interp(1.0, np.ones(2), np.ones(2), left="x"), (), ValueError,
     "the only valid string value of `left` is 'extrapolate'"),
    (lambda: jnp.modf(1.0, out=np.ones(1)), (), NotImplementedError,
     "The 'out' argument to jnp.modf is not supported"),
])
def test_errors(fn, args, exc, msg):
  with pytest.raises(exc, match=msg):
    fn(*args)


# ------------------------------------------------ jaxprs look like JAX's
@pytest.mark.parametrize("fn, arg, expected", [
    (lambda x: jnp.sin(x) * 2, 1.0,
     "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }"),
    (lambda x: jnp.add(x, 1), np.int32(1),
     "{ lambda ; a:i32[]. let b:i32[] = add a 1:i32[] in (b,) }"),
    (lambda x: jnp.exp(x), np.int32(1),
     "{ lambda ; a:i32[]. let\n    b:f32[] = convert_element_type[new_dtype=float32 "
     "weak_type=False] a\n    c:f32[] = exp b\n  in (c,) }"),
    (lambda x: jnp.float_power(x, 2), np.int32(1),
     "{ lambda ; a:i32[]. let\n    b:f32[] = convert_element_type[new_dtype=float32 "
     "weak_type=False] a\n    c:f32[] = pow b 2.0:f32[]\n  in (c,) }"),
])
def test_jaxprs(fn, arg, expected):
  assert str(jax.make_jaxpr(fn)(arg)) == expected


# -------------------------------------------------- eager equals jit, dunders
def test_dunders_dispatch_with_numpy_argument_order():
  x = jnp.asarray(np.array([1.0, -2.0, 3.0], F32))
  np.testing.assert_allclose(2.0 - x, [1, 4, -1])
  np.testing.assert_allclose(2.0 / x, [2, -1, 2 / 3], rtol=1e-6)
  np.testing.assert_allclose(7.0 // x, [7, -4, 2])
  np.testing.assert_allclose(7.0 % x, [0, -1, 1])
  np.testing.assert_allclose(2.0 ** x, [2, 0.25, 8])
  q, r = divmod(7.0, x)
  np.testing.assert_allclose(q, [7, -4, 2])
  np.testing.assert_allclose(abs(x), [1, 2, 3])
  np.testing.assert_allclose(-x, [-1, 2, -3])
  assert (x < 0).dtype == np.bool_
  i = jnp.asarray(np.array([6, 3], I32))
  np.testing.assert_array_equal(~i, [-7, -4])
  np.testing.assert_array_equal(5 & i, [4, 1])
  np.testing.assert_array_equal(1 << i, [64, 8])


def test_complex_comparisons_are_lexicographic():
  x = np.array([1 + 2j, 1 + 1j, 2 + 0j], np.complex64)
  y = np.array([1 + 1j, 1 + 1j, 1 + 5j], np.complex64)
  np.testing.assert_array_equal(jnp.less(x, y), [False, False, False])
  np.testing.assert_array_equal(jnp.greater_equal(x, y), [True, True, True])
  np.testing.assert_array_equal(jnp.maximum(x, y), np.maximum(x, y))


def test_gcd_lcm_and_interp_under_jit():
  a = np.array([12, -12, 0, 0, 7, 1836311903], I32)
  b = np.array([18, 18, 5, 0, -21, 1134903170], I32)
  np.testing.assert_array_equal(jax.jit(jnp.gcd)(a, b), np.gcd(a, b))
  np.testing.assert_array_equal(jax.jit(jnp.lcm)(a[:5], b[:5]), np.lcm(a[:5], b[:5]))
  xp = np.array([0.0, 1.0, 3.0], F32)
  fp = np.array([1.0, 3.0, -1.0], F32)
  x = np.array([-1.0, 0.5, 2.0, 4.0], F32)
  np.testing.assert_allclose(jax.jit(jnp.interp)(x, xp, fp), np.interp(x, xp, fp))
  np.testing.assert_allclose(jnp.interp(x, xp, fp, left="extrapolate", right="extrapolate"),
                             [-1.0, 2.0, 1.0, -3.0])


def test_nan_to_num_and_sinc_edges():
  x = np.array([np.nan, np.inf, -np.inf, 1.0], np.float16)
  np.testing.assert_array_equal(jnp.nan_to_num(x), [0, 65504, -65504, 1])
  np.testing.assert_array_equal(jnp.sinc(np.array([0.0, np.inf, -np.inf], F32)), [1, 0, 0])
  np.testing.assert_array_equal(jnp.frexp(np.array([np.inf, np.nan, 0.0], F32))[1], [0, 0, 0])


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_broadcast_across_ranks(name):
  """The NaN test broadcasts with the operands (fmax(f32[2,3], f32[3]) raised)."""
  a = np.array([[1, np.nan, 3], [np.nan, 5, np.nan]], np.float32)
  b = np.array([2, 2, np.nan], np.float32)
  f, ref = getattr(jnp, name), getattr(np, name)
  for x, y in ((a, b), (b, a), (a, np.float32(2)), (np.ones((4, 1, 3), np.float32), a)):
    want = ref(x, y)
    for got in (f(x, y), jax.jit(f)(x, y)):
      assert got.shape == want.shape and got.dtype == want.dtype
      np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("make", [
    lambda i: i + 2**40, lambda i: jnp.minimum(2**40, i), lambda i: jnp.multiply(2**33, i),
    lambda i: jnp.where(i > 1, 2**40, 0), lambda i: i + 2**31, lambda i: i - (-2**31 - 1),
    lambda i: jax.jit(lambda x: x + 2**40)(i)])
def test_python_int_outside_int32_raises_overflow_error(make):
  """With x64 off a Python int the int32 operand cannot hold raises, as in
  JAX, eagerly and under jit (it wrapped silently: int32 + 2**40 was +0)."""
  i = jnp.array([1, 2], jnp.int32)
  with pytest.raises(OverflowError, match="too large to convert to int32"):
    make(i)
  np.testing.assert_array_equal(np.asarray(i + (2**31 - 2)), [2**31 - 1, -2**31])   # in range: wraps


def test_python_ints_are_weak_int32_as_in_jax():
  """A Python int is a weak int32 (x64 off): it wraps into a narrower integer
  operand's dtype (JAX 0.10.2: int8 [0, 1, 2] + 300 is [44, 45, 46]; uint8 //
  -1 is 0), and one int32 cannot hold raises whatever the other operand is
  (JAX: float32 + 2**40 raises), eagerly, in library functions and jitted."""
  i8 = jnp.arange(3, dtype=jnp.int8)
  np.testing.assert_array_equal(np.asarray(i8 + 300), [44, 45, 46])
  np.testing.assert_array_equal(np.asarray(jnp.floor_divide(i8, 300)), [0, 0, 0])
  np.testing.assert_array_equal(np.asarray(jnp.floor_divide(jnp.arange(3, dtype=jnp.uint8), -1)),
                                [0, 0, 0])
  f32 = jnp.arange(3, dtype=jnp.float32)
  for make in (lambda: f32 + 2**40, lambda: jnp.floor_divide(f32, 2**40),
               lambda: jax.jit(lambda a, b: a * b)(f32, 2**40)):
    with pytest.raises(OverflowError, match="Python int 1099511627776 too large to convert to int32"):
      make()
