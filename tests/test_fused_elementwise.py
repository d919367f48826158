"""Eager kernels of exact elementwise operations with the bits of the
primitive path: jnp.trunc/fmax/fmin fused in their library programs
(``core/fused_templates.py``), bfloat16 compares and is_finite through
float32, conj of a real array as one cast, population_count through an
unsigned view. Each is compared bit for bit with JAX's equations run op by
op (``disable_jit``) or with NumPy's definition, on the dtype edges (signed
zeros, infinities, NaNs with payloads, signalling NaNs, subnormals)."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src import lax
from openjax._src.control.nested_calls import inline_interpreted_calls
from openjax._src.core.program import program_of

from tests.test_fused_templates import BF16, _op_by_op, _same_bits, x64  # noqa: F401
from tests.test_fused_templates import _samples as _edge_samples


def _samples(dtype) -> np.ndarray:
  """Every float16; else edges and random bit patterns of ``dtype``, and
  normals with signs mixed and fractions (3 x standard normal)."""
  return _edge_samples(dtype, normals=2000, scale=3.0)


def _kernels(f, *args):
  flat = inline_interpreted_calls(jax.make_jaxpr(f)(*args))
  return [getattr(s[0], "__qualname__", getattr(s[0], "__name__", ""))
          for s in program_of(flat.jaxpr).kernel_steps]


_FLOATS = [np.float16, np.float32, BF16]


# ------------------------------------------------------------------ trunc
@pytest.mark.parametrize("dtype", _FLOATS, ids=str)
def test_trunc_fused_gives_the_bits_of_jax_equations(dtype):
  x = jnp.asarray(_samples(dtype))
  _same_bits(jnp.trunc(x), _op_by_op(jnp.trunc, x))
  kernels = _kernels(jnp.trunc, x)
  assert len(kernels) == 1 and "trunc" in kernels[0]
  # the jaxpr is JAX's: lt, ceil, floor, select_n inside jit
  text = str(jax.make_jaxpr(jnp.trunc)(x))
  assert all(p in text for p in ("lt", "ceil", "floor", "select_n"))


def test_trunc_fused_float64(x64):
  x = jnp.asarray(_samples(np.float64))
  _same_bits(jnp.trunc(x), _op_by_op(jnp.trunc, x))


def test_trunc_edges_jit_grad_and_empty():
  x = np.array([-0.5, -0.0, 0.0, 0.5, -1.5, 2.5, np.inf, -np.inf, np.nan, -1e-45, 3e38],
               np.float32)
  got = jnp.trunc(jnp.asarray(x))
  _same_bits(got, np.trunc(x))
  assert np.signbit(np.asarray(got)[0]) and np.signbit(np.asarray(got)[9])
  _same_bits(jax.jit(jnp.trunc)(jnp.asarray(x)), np.trunc(x))
  np.testing.assert_array_equal(jax.grad(lambda v: jnp.trunc(v).sum())(jnp.asarray(x[:6])),
                                np.zeros(6, np.float32))
  assert jnp.trunc(jnp.zeros((0, 2), jnp.bfloat16)).shape == (0, 2)
  _same_bits(jnp.trunc(jnp.float32(-2.7)), np.float32(-2.0))


# ------------------------------------------------------------- fmax, fmin
def _pairs(dtype):
  x = _samples(dtype)
  rng = np.random.default_rng(5)
  y = rng.permutation(x)
  # ties of every kind: equal values, +-0 both ways, NaN against NaN
  zeros = np.array([0.0, -0.0, 0.0, -0.0], dtype)
  nans = _samples(dtype)[[8, 9, 10, 21, 22, 23]] if dtype != np.float16 else \
      np.array([0x7e00, 0xfe00, 0x7c01, 0xfd55, 0x7e00, 0x7c07], np.uint16).view(dtype)
  a = np.concatenate([x, x, zeros, nans, nans])
  b = np.concatenate([y, x, zeros[::-1][[1, 0, 3, 2]], nans[::-1], np.ones(6, dtype)])
  return jnp.asarray(a), jnp.asarray(b)


@pytest.mark.parametrize("dtype", _FLOATS, ids=str)
@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_fused_give_the_bits_of_jax_equations(dtype, name):
  fn = getattr(jnp, name)
  a, b = _pairs(dtype)
  _same_bits(fn(a, b), _op_by_op(fn, a, b))
  _same_bits(fn(b, a), _op_by_op(fn, b, a))
  assert _kernels(fn, a, b) == ["_fmax_kernel.<locals>.kernel"]
  # no zeros nor NaNs: np.fmax's own result
  c = jnp.asarray((np.random.default_rng(1).standard_normal(5000) + 0.5).astype(dtype))
  d = jnp.asarray(np.roll(np.asarray(c), 3))
  _same_bits(fn(c, d), _op_by_op(fn, c, d))


@pytest.mark.parametrize("dtype", _FLOATS, ids=str)
@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_zero_ties_without_nans_large(dtype, name):
  """Past the select size, zero results without NaNs take np.fmax's value
  with the +-0 ties set to b's bits by index (np.fmax's sign of a tie
  varies along an array); C- and F-ordered operands, a broadcast row."""
  fn = getattr(jnp, name)
  rng = np.random.default_rng(7)
  n = 3 * 4099
  a = rng.choice(np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf], dtype), n)
  b = rng.choice(np.array([0.0, -0.0, 0.5, -1.0, -np.inf], dtype), n)
  _same_bits(fn(a, b), _op_by_op(fn, a, b))
  _same_bits(fn(b, a), _op_by_op(fn, b, a))
  af, bf = np.asfortranarray(a.reshape(4099, 3)), np.asfortranarray(b.reshape(4099, 3))
  _same_bits(fn(af, bf), _op_by_op(fn, af, bf))
  _same_bits(fn(a.reshape(4099, 3), bf[:1]), _op_by_op(fn, a.reshape(4099, 3), bf[:1]))
  _same_bits(jax.jit(fn)(a, b), _op_by_op(fn, a, b))


def test_fmax_fused_float64(x64):
  a, b = _pairs(np.float64)
  _same_bits(jnp.fmax(a, b), _op_by_op(jnp.fmax, a, b))
  _same_bits(jnp.fmin(a, b), _op_by_op(jnp.fmin, a, b))


def test_fmax_signed_zeros_nans_jit_and_broadcast():
  a = jnp.asarray(np.array([0.0, -0.0, np.nan, 1.0, np.nan], np.float32))
  b = jnp.asarray(np.array([-0.0, 0.0, 2.0, np.nan, np.nan], np.float32))
  got = np.asarray(jnp.fmax(a, b))
  assert np.signbit(got[0]) and not np.signbit(got[1])   # a tie picks b, as JAX's select
  np.testing.assert_array_equal(got[2:4], [2.0, 1.0])
  assert np.isnan(got[4])
  _same_bits(jax.jit(jnp.fmax)(a, b), got)
  _same_bits(jnp.fmin(a, jnp.float32(0.5)), _op_by_op(jnp.fmin, a, jnp.float32(0.5)))
  assert jnp.fmax(jnp.zeros((0,)), jnp.zeros((0,))).shape == (0,)
  g = jax.grad(lambda x: jnp.fmax(x, 0.5 * x).sum())(jnp.asarray([1.0, -2.0, 3.0]))
  np.testing.assert_array_equal(g, [1.0, 0.5, 1.0])


# ------------------------------------------------ bfloat16 through float32
_COMPARES = {"eq": (lax.eq, np.equal), "ne": (lax.ne, np.not_equal), "lt": (lax.lt, np.less),
             "le": (lax.le, np.less_equal), "gt": (lax.gt, np.greater),
             "ge": (lax.ge, np.greater_equal)}


@pytest.mark.parametrize("name", list(_COMPARES))
@pytest.mark.parametrize("size", [10, 5000])
def test_bfloat16_compares_as_in_float32(name, size):
  fn, npf = _COMPARES[name]
  x = np.resize(_samples(BF16), size)
  y = np.random.default_rng(2).permutation(x)
  y[::3] = x[::3]                         # equal elements, NaN against itself
  want = npf(x.astype(np.float32), y.astype(np.float32))
  got = fn(jnp.asarray(x), jnp.asarray(y))
  assert got.dtype == np.bool_
  np.testing.assert_array_equal(got, want)
  np.testing.assert_array_equal(jax.jit(fn)(jnp.asarray(x), jnp.asarray(y)), want)
  # against a scalar, and 0-d
  np.testing.assert_array_equal(fn(jnp.asarray(x), jnp.bfloat16(0)),
                                npf(x.astype(np.float32), np.float32(0)))


@pytest.mark.parametrize("size", [10, 5000])
def test_bfloat16_float_tests(size):
  x = np.resize(_samples(BF16), size)
  x32 = x.astype(np.float32)
  for fn, npf in ((jnp.isnan, np.isnan), (jnp.isinf, np.isinf), (jnp.isfinite, np.isfinite),
                  (jnp.isposinf, np.isposinf), (jnp.isneginf, np.isneginf),
                  (lax.is_finite, np.isfinite)):
    np.testing.assert_array_equal(fn(jnp.asarray(x)), npf(x32))


# ------------------------------------------------------------------- conj
def test_conj_of_real_is_one_cast():
  x = np.array([1.5, -0.0, 0.0, np.inf, -np.inf, np.nan, 1e-45], np.float32)
  x = np.resize(x, 70000)
  got = lax.conj(jnp.asarray(x))
  assert got.dtype == np.complex64
  _same_bits(got, x.astype(np.complex64))
  _same_bits(jax.jit(lax.conj)(jnp.asarray(x)), x.astype(np.complex64))
  _same_bits(lax.conj(jnp.asarray(x[:3].reshape(3, 1))), x[:3].reshape(3, 1).astype(np.complex64))
  with np.errstate(invalid="ignore"):
    z = (x[:7] + 1j * x[:7][::-1]).astype(np.complex64)
  _same_bits(lax.conj(jnp.asarray(z)), np.conj(z))


def test_conj_of_float64(x64):
  x = np.array([1.5, -0.0, np.nan], np.float64)
  _same_bits(lax.conj(jnp.asarray(x)), x.astype(np.complex128))


# ------------------------------------------------------- population_count
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.uint32], ids=str)
def test_population_count_counts_raw_bits(dtype):
  dtype = np.dtype(dtype)
  if dtype.itemsize <= 2:
    x = np.arange(1 << (8 * dtype.itemsize), dtype=np.uint32).astype(f"u{dtype.itemsize}")
  else:
    x = np.random.default_rng(0).integers(0, 1 << 32, 5000, dtype=np.uint64).astype(np.uint32)
  x = x.view(dtype)
  want = np.bitwise_count(x.view(f"u{dtype.itemsize}")).astype(dtype)
  got = lax.population_count(jnp.asarray(x))
  assert got.dtype == dtype
  _same_bits(got, want)
  _same_bits(lax.population_count(jnp.asarray(x[::-2])), want[::-2])
  _same_bits(lax.population_count(jnp.asarray(x[5])), want[5])
  _same_bits(jax.jit(lax.population_count)(jnp.asarray(x)), want)
  if dtype.kind == "i":
    np.testing.assert_array_equal(jnp.bitwise_count(jnp.asarray(x)),
                                  np.bitwise_count(x).astype(np.uint8))


# ------------------------------------------- clamp, max, min with a scalar
_BOUNDS = [(-1.0, 1.0), (-0.0, 0.0), (0.0, -0.0), (0.0, 0.0), (-0.0, -0.0), (2.0, -2.0),
           (-np.inf, np.inf), (np.nan, 1.0), (-1.0, np.nan), (0.5, np.inf)]


def _edge_floats(dtype, n=1 << 15):
  x = np.resize(_samples(dtype), n)
  x[:8] = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, np.inf, -np.inf], dtype)
  return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_clamp_scalar_bounds_bits(dtype):
  if dtype == np.float64:
    jax.config.update("jax_enable_x64", True)
  try:
    x = _edge_floats(dtype)
    for lo, hi in _BOUNDS:
      lo_, hi_ = np.array(lo, dtype), np.array(hi, dtype)
      with np.errstate(invalid="ignore"):
        want = np.minimum(np.maximum(x, lo_), hi_)
      _same_bits(lax.clamp(lo_, jnp.asarray(x), hi_), want)
      _same_bits(lax.clamp(jnp.asarray(lo_), jnp.asarray(x[:100]), jnp.asarray(hi_)), want[:100])
  finally:
    jax.config.update("jax_enable_x64", False)


def test_clamp_python_scalars_and_jnp_clip_bits():
  x = _edge_floats(np.float32)
  for lo, hi in _BOUNDS:
    lo_, hi_ = np.float32(lo), np.float32(hi)
    with np.errstate(invalid="ignore"):
      want_clamp = np.minimum(np.maximum(x, lo_), hi_)
      want_clip = np.minimum(hi_, np.maximum(lo_, x))    # JAX's clip: max(lo, x), min(hi, .)
    _same_bits(lax.clamp(lo, jnp.asarray(x), hi), want_clamp)
    _same_bits(jnp.clip(jnp.asarray(x), lo, hi), want_clip)
    _same_bits(jnp.clip(jnp.asarray(x), lo, hi), _op_by_op(jnp.clip, jnp.asarray(x), lo, hi))
  assert _kernels(lambda v: jnp.clip(v, -0.5, 0.5), jnp.asarray(x)) == ["_clip.<locals>.kernel"]
  # array bounds are not fused
  assert "_clip.<locals>.kernel" not in _kernels(jnp.clip, jnp.asarray(x), jnp.asarray(x),
                                                 jnp.asarray(x))
  lo_arr = jnp.asarray(np.full(x.shape, -1.0, np.float32))
  _same_bits(jnp.clip(jnp.asarray(x), lo_arr, 1.0), np.minimum(np.float32(1), np.maximum(
      np.asarray(lo_arr), x)))


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_against_a_scalar_bits(name):
  fn, npf = getattr(lax, name), getattr(np, name + "imum")
  x = _edge_floats(np.float32)
  for s in (0.0, -0.0, 1.5, -np.inf, np.inf, np.nan):
    s_ = np.float32(s)
    with np.errstate(invalid="ignore"):
      _same_bits(fn(jnp.asarray(x), s_), npf(x, s_))
      _same_bits(fn(s_, jnp.asarray(x)), npf(s_, x))
      _same_bits(jax.jit(fn)(s_, jnp.asarray(x)), npf(s_, x))


def test_bfloat16_abs_clears_the_sign_bit():
  x = np.resize(_samples(BF16), 5000)
  got = lax.abs(jnp.asarray(x))
  _same_bits(got, (x.view(np.uint16) & 0x7FFF).view(BF16))
  _same_bits(jnp.abs(jnp.asarray(x[:3])), (x[:3].view(np.uint16) & 0x7FFF).view(BF16))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32], ids=str)
def test_sign_of_unsigned(dtype):
  x = np.array([0, 1, 2, np.iinfo(dtype).max, np.iinfo(dtype).max // 2 + 1] * 20000, dtype)
  got = lax.sign(jnp.asarray(x))
  assert got.dtype == dtype
  _same_bits(got, (x != 0).astype(dtype))
  _same_bits(jnp.sign(jnp.asarray(x[:5])), (x[:5] != 0).astype(dtype))
  _same_bits(jax.jit(lax.sign)(jnp.asarray(x[:5])), (x[:5] != 0).astype(dtype))


def test_reduce_precision_to_bfloat16_on_the_bits():
  rng = np.random.default_rng(7)
  u = np.concatenate([rng.integers(0, 1 << 32, 200000, dtype=np.uint64).astype(np.uint32),
                      np.arange(0, 1 << 17, dtype=np.uint32),            # subnormals
                      np.arange(0x7F7F0000, 0x7F800001, 7, dtype=np.uint32),  # to inf
                      np.arange(0xFF7F0000, 0xFF800001, 7, dtype=np.uint32),
                      np.array([0x7FC00001, 0xFFFFFFFF, 0x7F800001, 0x80000000], np.uint32)])
  x = u.view(np.float32)
  with np.errstate(invalid="ignore"):
    want = x.astype(BF16).astype(np.float32)
  nan = np.isnan(x)
  want[nan] = x[nan]                     # NaNs come back as they are
  _same_bits(lax.reduce_precision(jnp.asarray(x), 8, 7), want)
  _same_bits(lax.reduce_precision(jnp.asarray(x[:5]), 8, 7), want[:5])
  y = x[~nan][:50000]
  _same_bits(lax.reduce_precision(jnp.asarray(y), 8, 7), y.astype(BF16).astype(np.float32))


def test_lean_kernels_are_planned():
  # the eval trace plans these kernels (no impl fallback, no extra passes)
  from openjax._src.core import ShapedArray
  from openjax._src.primitives.elementwise import arithmetic, logic
  bf = ShapedArray((1000,), BF16)
  f32 = ShapedArray((1 << 15,), np.dtype(np.float32))
  for p in (logic.lt_p, logic.le_p, logic.gt_p, logic.ge_p, logic.eq_p, logic.ne_p):
    assert p.eval_kernel(bf, bf).__name__ == "compare_in_float32"
  assert logic.is_finite_p.eval_kernel(bf).__name__ == "_is_finite_float32"
  assert arithmetic.abs_p.eval_kernel(bf).__name__ == "_abs_of_bits"
  assert arithmetic.conj_p.eval_kernel(f32, input_dtype=f32.dtype).__name__ == "conj_of_real"
  i8 = ShapedArray((10,), np.dtype(np.int8))
  assert logic.population_count_p.eval_kernel(i8).__name__ == "_population_count_narrow"
  scalar = ShapedArray((), np.dtype(np.float32))
  assert arithmetic.max_p.eval_kernel(scalar, f32).__name__ == "scalar_first"
  assert arithmetic.min_p.eval_kernel(f32, scalar).__name__ == "scalar_second"
  assert logic.clamp_p.eval_kernel(scalar, f32, scalar).__name__ == "_clamp_scalar_bounds"
  assert arithmetic.sign_p.eval_kernel(ShapedArray((10,), np.dtype(np.uint8))) is np.sign
