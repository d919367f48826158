"""Session 16 eager kernels (helper cliff16): the same values as the
primitive path, on edge values, eagerly and under jit."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.primitives.elementwise.transcendental import _pow_eval_kernel


def _same_bits(a, b) -> None:
  a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
  assert a.dtype == b.dtype and a.shape == b.shape
  np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


def _edge_column(dtype, n=5000):
  info = np.finfo(dtype)
  rng = np.random.default_rng(3)
  x = (3 * rng.standard_normal(n)).astype(dtype)
  edges = [0.0, -0.0, np.inf, -np.inf, np.nan, info.smallest_subnormal,
           -info.smallest_subnormal, info.max, -info.max, info.tiny, 1.0, -1.0, 2.0,
           float(np.sqrt(info.max)), -float(np.cbrt(info.max))]
  x[:len(edges)] = np.array(edges, dtype)
  return x.reshape(n, 1)


@pytest.mark.parametrize("dtype", [np.float16, np.float32], ids=str)
@pytest.mark.parametrize("exps", [[[3, 2, 1, 0]], [[0, 1, 2, 3, 4]], 3, [4], [[[2]], [[1]]],
                                  [[-1, 2]], [[5, 1]]], ids=str)
def test_pow_of_few_small_int_exponents_gives_float64_pow_rounded(dtype, exps):
  """pow(float, int) with exponents in [0, 4] along axes where the base has
  size 1 (vander's layout) as float64 products: the bits of float64 pow
  rounded to the dtype (negative or larger exponents: pow itself)."""
  x = _edge_column(dtype)
  y = np.asarray(exps, np.int32)
  with np.errstate(all="ignore"):
    want = np.power(x, y).astype(dtype)
    _same_bits(_pow_eval_kernel(x, y)(x, y), want)


def test_vander_values_eager_and_jit():
  x = _edge_column(np.float32, 300)[:, 0]
  with np.errstate(all="ignore"):
    want = np.power(x[:, None].astype(np.float64), np.arange(3, -1, -1)).astype(np.float32)
  got = jnp.vander(jnp.asarray(x), 4)
  _same_bits(np.asarray(got), want)
  np.testing.assert_allclose(np.asarray(jax.jit(lambda v: jnp.vander(v, 4))(x)), want,
                             rtol=1e-6)
  with np.errstate(all="ignore"):
    want5 = np.power(x[:, None].astype(np.float64), np.arange(5)).astype(np.float32)
  _same_bits(np.asarray(jnp.vander(jnp.asarray(x), 5, increasing=True)), want5)


def test_index_take_eager_program_values_and_jaxpr():
  """lax.index_take runs eagerly as one library program: the values of its
  equations op by op (indices wrapping, negative ones too), JAX's equations
  printed under a trace, and the same values under jit."""
  from openjax import lax   # noqa: PLC0415
  x = np.arange(3 * 2 * 4, dtype=np.float32).reshape(3, 2, 4)
  i = np.array([0, -1, 2, 5, -7], np.int32)
  j = np.array([3, 4, -1, 0, 9], np.int32)
  want = x[i % 3, :, j % 4]
  got = lax.index_take(jnp.asarray(x), (jnp.asarray(i), jnp.asarray(j)), [0, 2])
  _same_bits(np.asarray(got), want)
  with jax.disable_jit():
    _same_bits(np.asarray(lax.index_take(x, (i, j), (0, 2))), want)
  _same_bits(np.asarray(jax.jit(lambda x, i, j: lax.index_take(x, (i, j), (0, 2)))(x, i, j)),
             want)
  text = str(jax.make_jaxpr(lambda x, i, j: lax.index_take(x, (i, j), (0, 2)))(x, i, j))
  assert text.count("rem") == 4 and "concatenate[dimension=1]" in text and "gather[" in text
  assert "pjit" not in text and "jit[" not in text
  one = lax.index_take(jnp.asarray(x), (jnp.asarray(i),), (0,))
  _same_bits(np.asarray(one), x[i % 3])


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=str)
def test_complex_atan2_of_real_valued_operands(dtype):
  """Complex atan2 of operands whose imaginary parts are zeros (of either
  sign) skips their terms: the bits of the general by-parts path (run with
  one more element whose imaginary part is not zero), edges included; the
  real part is arctan2 of the real parts; jit gives the same values."""
  from openjax import lax   # noqa: PLC0415
  from openjax._src.primitives.elementwise.transcendental import _complex_atan2_by_parts
  ft = np.finfo(dtype).dtype
  rng = np.random.default_rng(4)
  edges = np.array([0, -0.0, 1, -1, np.inf, -np.inf, np.nan, 1e-30, -2.5, 0.5], ft)
  a = (3 * rng.standard_normal(1200)).astype(ft)
  c = (3 * rng.standard_normal(1200)).astype(ft)
  a[:100], c[:100] = np.repeat(edges, 10), np.tile(edges, 10)
  for sign in (0.0, -0.0):
    x, y = np.empty(1200, dtype), np.empty(1200, dtype)
    x.real, x.imag, y.real, y.imag = a, sign, c, sign
    with np.errstate(all="ignore"):
      got = (np.asarray(lax.atan2(jnp.asarray(x), jnp.asarray(y))) if dtype == np.complex64
             else _complex_atan2_by_parts(x, y))   # (complex128 needs x64 through lax)
      general = _complex_atan2_by_parts(np.append(x, dtype(1 + 1j)), np.append(y, dtype(1)))
    _same_bits(got, general[:-1])
    # (tiny operands: x^2 + y^2 underflows, the formula's NaN, as JAX's)
    ok = np.isfinite(a) & np.isfinite(c) & (np.abs(a) > 1e-15) & (np.abs(c) > 1e-15)
    np.testing.assert_array_equal(got.real[ok], np.arctan2(a, c)[ok])
    if dtype == np.complex64:
      np.testing.assert_allclose(np.asarray(jax.jit(lax.atan2)(x, y))[ok], got[ok],
                                 rtol=1e-5, atol=1e-6)


def _integer_pow_reference(x, y):
  # square-and-multiply with a fresh array per product (the kernel before)
  if y == 0:
    return np.ones_like(x)
  acc, base, n = None, x, abs(y)
  while n:
    if n & 1:
      acc = base if acc is None else acc * base
    n >>= 1
    if n:
      base = base * base
  return np.asarray(1, x.dtype) / acc if y < 0 else acc


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8, np.complex64],
                         ids=str)
def test_integer_pow_in_place_products_same_bits_input_kept(dtype):
  """integer_pow's products after the first reuse the call's own buffers:
  the same bits for every exponent, the operand (also strided or 0-d)
  never written, eagerly and under jit."""
  from openjax import lax   # noqa: PLC0415
  from openjax._src.primitives.elementwise.arithmetic import _integer_pow
  rng = np.random.default_rng(6)
  x = (3 * rng.standard_normal(600)).astype(dtype) if dtype != np.complex64 else \
      (rng.standard_normal(600) + 1j * rng.standard_normal(600)).astype(dtype)
  if dtype in (np.float32, np.float16):
    x[:6] = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-3], dtype)
  for y in range(-7, 34):
    if y < 0 and np.dtype(dtype).kind in "iu":
      continue
    for v in (x, x.reshape(20, 30)[:, ::4], x[:1].reshape(())):
      before = v.copy()
      with np.errstate(all="ignore"):
        got, want = _integer_pow(v, y=y), _integer_pow_reference(v, y)
      _same_bits(np.asarray(got), np.asarray(want))
      _same_bits(v, before)
  with np.errstate(all="ignore"):
    want = _integer_pow_reference(x, 3)
  _same_bits(np.asarray(lax.integer_pow(jnp.asarray(x), 3)), want)
  np.testing.assert_allclose(np.asarray(jax.jit(lambda v: lax.integer_pow(v, 3))(x)), want,
                             rtol=1e-3 if dtype == np.float16 else 1e-6)


def test_flatnonzero_eager_host_flatten():
  """flatnonzero of an eager Array flattens its host value (no reshape
  bind): NumPy's indices, padded with 0 or fill_value to ``size``; n-d NumPy
  inputs flatten too (lists raise, as JAX's); the same values under jit."""
  x = np.array([[0, 3, 0], [7, 0, 1]], np.uint8)
  f = np.array([[0.0, -0.0, np.nan], [1.0, 0.0, -2.0]], np.float32)
  for v in (x, f, np.array(5, np.int32), np.zeros((0, 3), np.float32)):
    found = np.flatnonzero(v)
    for size, fill in ((4, None), (1, None), (6, -1), (None, None)):
      got = jnp.flatnonzero(jnp.asarray(v), size=size, fill_value=fill)
      n = found.size if size is None else size
      # (an empty operand gives zeros whatever the fill, as JAX's nonzero)
      want = np.full(n, 0 if fill is None or not v.size else fill, np.int32)
      want[:min(n, found.size)] = found[:n]
      assert got.dtype == np.int32 and got.shape == want.shape
      np.testing.assert_array_equal(np.asarray(got), want)
      np.testing.assert_array_equal(np.asarray(jnp.flatnonzero(v, size=size, fill_value=fill)),
                                    want)
      if size is not None and v.size:
        jitted = jax.jit(lambda a, s=size, fv=fill: jnp.flatnonzero(a, size=s, fill_value=fv))
        np.testing.assert_array_equal(np.asarray(jitted(v)), want)
  with pytest.raises(TypeError, match="flatnonzero requires ndarray"):
    jnp.flatnonzero([[0, 1], [2, 0]])
  text = str(jax.make_jaxpr(lambda a: jnp.flatnonzero(a, size=3))(x))
  assert "reshape" in text


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int8,
                                   np.uint8, np.complex64, "bfloat16"], ids=str)
def test_integer_pow_eval_kernel_matches_the_impl(dtype):
  """integer_pow's eager kernel (the impl's function without its wrappers):
  the impl's bits and dtype, 0-d operands, no warnings on 0 ** -1."""
  import warnings   # noqa: PLC0415
  from openjax import lax   # noqa: PLC0415
  from openjax._src.primitives.elementwise.arithmetic import integer_pow_p
  dt = jnp.dtype(dtype)
  rng = np.random.default_rng(8)
  x = (5 * rng.standard_normal(64)).astype(dt) if dt.kind != "c" else \
      (rng.standard_normal(64) + 1j * rng.standard_normal(64)).astype(dt)
  if dt.kind == "f" or dt == jnp.bfloat16:
    x[:4] = np.array([0.0, -0.0, np.inf, np.nan]).astype(dt)
  for y in (-3, -1, 0, 1, 2, 3, 4, 7, 31):
    if y < 0 and dt.kind in "iu":
      continue
    for v in (x, x[:1].reshape(())):
      with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = lax.integer_pow(jnp.asarray(v), y)
      want, = integer_pow_p.impl(v, y=y)
      assert got.dtype == want.dtype == dt and got.shape == v.shape
      _same_bits(np.asarray(got), np.asarray(want))
