"""jnp.frexp and jnp.ldexp as one fused NumPy kernel in their eager library
programs (``core/fused_templates.py``): the same bits as JAX's equations run
op by op (``disable_jit``: each primitive bound eagerly) on every float16,
and on float32/float64/bfloat16 edges (subnormals, overflow and underflow of
the result, signed zeros, infinities, NaNs with payloads, signalling NaNs),
with the jaxpr unchanged."""
import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src import lax
from openjax._src.control.nested_calls import inline_interpreted_calls
from openjax._src.core.program import eval_jaxpr, program_of

BF16 = np.dtype(ml_dtypes.bfloat16)
_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


@pytest.fixture
def x64():
  jax.config.update("jax_enable_x64", True)
  yield
  jax.config.update("jax_enable_x64", False)


def _same_bits(a, b) -> None:
  a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
  assert a.dtype == b.dtype and a.shape == b.shape
  np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


def _samples(dtype, normals: int = 500, scale: float = 1.0) -> np.ndarray:
  """Every float16; else edges and random bit patterns of ``dtype``, and
  ``normals`` normal numbers times ``scale``."""
  dtype = np.dtype(dtype)
  u = _UINT[dtype.itemsize]
  if dtype == np.float16:
    return np.arange(1 << 16, dtype=np.uint32).astype(u).view(dtype)
  info = ml_dtypes.finfo(dtype)
  nbits = 8 * dtype.itemsize
  sign = 1 << (nbits - 1)
  quiet = 1 << (info.nmant - 1)
  exp_all = ((1 << info.nexp) - 1) << info.nmant
  special = [0, 1, 2, 3, quiet, (1 << info.nmant) - 1, 1 << info.nmant, exp_all,
             exp_all | quiet, exp_all | 1, exp_all | quiet | 5, exp_all - 1,
             (info.nmant + 2) << info.nmant]
  special = special + [s | sign for s in special]
  rng = np.random.default_rng(11)
  rand = rng.integers(0, 1 << min(nbits, 63), 4000, dtype=np.uint64)
  if nbits == 64:
    rand |= rng.integers(0, 2, 4000, dtype=np.uint64) << np.uint64(63)
  bits = np.concatenate([np.array(special, np.uint64), rand]).astype(u)
  x = bits.view(dtype)
  # normals near 1 as well (the random bits are mostly huge or tiny)
  return np.concatenate([x, (scale * rng.standard_normal(normals)).astype(dtype)])


def _op_by_op(f, *args):
  with jax.disable_jit():
    return f(*args)


def _fused_kernels(f, *args):
  jaxpr = jax.make_jaxpr(f)(*args).jaxpr
  flat = inline_interpreted_calls(jaxpr.eqns[0].params["jaxpr"])
  return flat, [getattr(s[0], "__qualname__", "")
                for s in program_of(flat.jaxpr).kernel_steps]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, BF16], ids=str)
def test_frexp_fused_gives_the_bits_of_jax_equations(dtype):
  x = jnp.asarray(_samples(dtype))
  m, e = jnp.frexp(x)
  m0, e0 = _op_by_op(jnp.frexp, x)
  _same_bits(m, m0)
  _same_bits(e, e0)
  _, kernels = _fused_kernels(jnp.frexp, x)
  assert kernels == ["_frexp_kernel.<locals>.kernel"]


def test_frexp_fused_float64(x64):
  x = jnp.asarray(_samples(np.float64))
  m, e = jnp.frexp(x)
  m0, e0 = _op_by_op(jnp.frexp, x)
  _same_bits(m, m0)
  _same_bits(e, e0)
  assert _fused_kernels(jnp.frexp, x)[1] == ["_frexp_kernel.<locals>.kernel"]


def test_frexp_keeps_signalling_nans_and_the_jaxpr():
  bits = np.array([0x7f800001, 0xff800123, 0x7fc00000, 0x7f800000, 0x80000000, 1],
                  np.uint32)
  x = jnp.asarray(bits.view(np.float32))
  m, e = jnp.frexp(x)
  _same_bits(np.asarray(m)[:5], bits.view(np.float32)[:5])   # as they are, as JAX's select
  np.testing.assert_array_equal(e, [0, 0, 0, 0, 0, -148])
  text = str(jax.make_jaxpr(jnp.frexp)(x))
  assert "custom_jvp_call" in text and "shift_right_arithmetic" in text


def _exponents(rng, n, dtype):
  k = np.concatenate([np.arange(-300, 301), [-(1 << 31), (1 << 31) - 1, 1 << 20, -(1 << 20)],
                      rng.integers(-40, 41, n)])
  info = np.iinfo(dtype) if dtype != np.bool_ else None
  if info is not None:
    k = np.clip(k, info.min, info.max)
  return k.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, BF16], ids=str)
@pytest.mark.parametrize("kdtype", [np.int32, np.int8, np.uint8, np.uint32, np.bool_], ids=str)
def test_ldexp_fused_gives_the_bits_of_jax_equations(dtype, kdtype):
  rng = np.random.default_rng(3)
  x = _samples(dtype)
  k = _exponents(rng, 0, kdtype)
  # every sample with every exponent would be large: pair them by tiling
  n = max(x.size, k.size)
  x, k = jnp.asarray(np.resize(x, n)), jnp.asarray(np.resize(k, n))
  got = jnp.ldexp(x, k)
  _same_bits(got, _op_by_op(jnp.ldexp, x, k))
  x2, k2 = jnp.asarray(np.roll(np.asarray(x), 7)), jnp.asarray(rng.permutation(np.asarray(k)))
  _same_bits(jnp.ldexp(x2, k2), _op_by_op(jnp.ldexp, x2, k2))
  assert _fused_kernels(jnp.ldexp, x, k)[1][-1] == "_ldexp_kernel.<locals>.kernel"


@pytest.mark.parametrize("kdtype", [np.int64, np.uint64, np.int32], ids=str)
def test_ldexp_fused_float64(x64, kdtype):
  rng = np.random.default_rng(4)
  x = _samples(np.float64)
  k = np.concatenate([_exponents(rng, 0, kdtype), np.array([np.iinfo(kdtype).max,
                                                            np.iinfo(kdtype).min], kdtype),
                      rng.integers(-1100, 1100, 2000).astype(kdtype)])
  n = max(x.size, k.size)
  x, k = jnp.asarray(np.resize(x, n)), jnp.asarray(np.resize(k, n))
  _same_bits(jnp.ldexp(x, k), _op_by_op(jnp.ldexp, x, k))
  assert _fused_kernels(jnp.ldexp, x, k)[1][-1] == "_ldexp_kernel.<locals>.kernel"


def test_ldexp_float32_of_int64_exponents(x64):
  x = jnp.asarray(_samples(np.float32)[:600])
  k = jnp.asarray(np.arange(-300, 300) * (1 << 25), np.int64)   # past float32's integers
  _same_bits(jnp.ldexp(x, k), _op_by_op(jnp.ldexp, x, k))


def test_ldexp_edges_and_empty_and_scalars():
  x = np.array([1, 1.5, 3, 0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3e-39, 3e38], np.float32)
  k = np.array([200, -140, 128, 5, 7, -3, 4, 2, 149, 100, -277], np.int32)
  got = jnp.ldexp(jnp.asarray(x), jnp.asarray(k))
  with np.errstate(all="ignore"):
    _same_bits(got, np.ldexp(x, k))
  _same_bits(got, _op_by_op(jnp.ldexp, jnp.asarray(x), jnp.asarray(k)))
  empty = jnp.ldexp(jnp.zeros((0, 3)), jnp.zeros((0, 3), jnp.int32))
  assert empty.shape == (0, 3) and empty.dtype == np.float32
  _same_bits(jnp.ldexp(jnp.float32(3), 4), np.float32(48))
  m, e = jnp.frexp(jnp.zeros((2, 0)))
  assert m.shape == e.shape == (2, 0) and e.dtype == np.int32


def test_ldexp_and_frexp_under_jit_and_grad():
  x = jnp.asarray(np.array([0.3, -5.0, 7.5, 1e-3], np.float32))
  k = jnp.asarray(np.array([1, -2, 3, 0], np.int32))
  np.testing.assert_array_equal(jax.jit(jnp.ldexp)(x, k), jnp.ldexp(x, k))
  np.testing.assert_array_equal(jax.jit(jnp.frexp)(x)[1], jnp.frexp(x)[1])
  g = jax.grad(lambda x: jnp.ldexp(x, k).sum())(x)
  np.testing.assert_allclose(g, 2.0 ** np.asarray(k))


def test_frexp_exponent_alone_runs_the_fused_step():
  # a program reading only the exponent: the fused step writes it (the
  # mantissa's step, where it runs, is otherwise dead)
  x = jnp.asarray(_samples(np.float32)[:100])
  flat = inline_interpreted_calls(jax.make_jaxpr(lambda x: lax.add(jnp.frexp(x)[1], 1))(x))
  kernels = [getattr(s[0], "__qualname__", "") for s in program_of(flat.jaxpr).kernel_steps]
  assert kernels[0] == "_frexp_kernel.<locals>.kernel" and len(kernels) == 2
  out, = eval_jaxpr(flat.jaxpr, flat.consts, x)
  with np.errstate(invalid="ignore"):
    want = np.frexp(np.asarray(x))[1] + 1
  np.testing.assert_array_equal(out, want)


def test_unfused_when_the_pattern_differs():
  # frexp's bit arithmetic with one constant changed is not np.frexp
  def almost(x):
    bits = lax.bitcast_convert_type(x, np.int32)
    shifted = lax.shift_right_arithmetic(bits, np.int32(22))
    return lax.select_n(lax.ne(x, x), x, lax.bitcast_convert_type(shifted, np.float32))
  x = jnp.asarray(np.float32([1.5, 3.0]))
  kernels = [getattr(s[0], "__qualname__", "") for s in
             program_of(jax.make_jaxpr(almost)(x).jaxpr).kernel_steps]
  assert not any(k.startswith(("_frexp_kernel", "_ldexp_kernel")) for k in kernels)


# ------------------------------------------------------------ integer power
def _int_pairs(dtype):
  """Every pair of int8/uint8 values; else edges and random values."""
  dtype = np.dtype(dtype)
  if dtype.itemsize == 1:
    v = np.arange(256, dtype=np.uint8).view(dtype)
    return np.repeat(v, 256), np.tile(v, 256)
  info = np.iinfo(dtype)
  rng = np.random.default_rng(9)
  edges = np.array([0, 1, 2, 3, 63, 64, 65, 127, 128, 192, 1000, info.max, info.max - 1]
                   + ([-1, -2, -3, -64, -65, -128, info.min, info.min + 1] if info.min else []),
                   object).astype(dtype)
  base = np.concatenate([edges, rng.integers(info.min, info.max, 3000, dtype=dtype,
                                              endpoint=True),
                         rng.integers(-7 if info.min else 0, 8, 3000).astype(dtype)])
  exp = np.concatenate([rng.permutation(np.resize(edges, base.size - 6000)),
                        rng.integers(info.min, info.max, 3000, dtype=dtype, endpoint=True),
                        rng.integers(-3 if info.min else 0, 70, 3000).astype(dtype)])
  return np.repeat(base, 2)[: 2 * base.size], np.concatenate([exp, exp[::-1]])


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                   np.uint32], ids=str)
def test_int_power_fused_gives_the_bits_of_jax_equations(dtype):
  a, b = _int_pairs(dtype)
  a, b = jnp.asarray(a), jnp.asarray(b)
  got = jnp.power(a, b)
  _same_bits(got, _op_by_op(jnp.power, a, b))
  flat = inline_interpreted_calls(jax.make_jaxpr(jnp.power)(a, b))
  kernels = [getattr(s[0], "__qualname__", "") for s in program_of(flat.jaxpr).kernel_steps]
  assert kernels == ["_int_pow_kernel"]


@pytest.mark.parametrize("dtype", [np.int64, np.uint64], ids=str)
def test_int_power_fused_64_bits(x64, dtype):
  a, b = _int_pairs(dtype)
  a, b = jnp.asarray(a), jnp.asarray(b)
  _same_bits(jnp.power(a, b), _op_by_op(jnp.power, a, b))


def test_int_power_overflow_parity_bool_and_empty():
  a = jnp.asarray(np.array([-1, -1, 1, 2, 0, 0, 0, 0, 5, 3], np.int32))
  b = jnp.asarray(np.array([64, 65, 1000, 30, 0, 5, 64, -64, 128, -1], np.int32))
  got = jnp.power(a, b)
  _same_bits(got, _op_by_op(jnp.power, a, b))
  np.testing.assert_array_equal(got[:8], [1, -1, 1, 2 ** 30, 1, 0, 0, 0])
  t = jnp.asarray(np.array([True, False, True, False]))
  u = jnp.asarray(np.array([True, True, False, False]))
  _same_bits(jnp.power(t, u), np.array([1, 0, 1, 1], np.int32))
  assert jnp.power(jnp.zeros((0, 2), jnp.int32), jnp.zeros((0, 2), jnp.int32)).shape == (0, 2)
  np.testing.assert_array_equal(jax.jit(jnp.power)(a, b), got)


def test_fused_int_power_is_not_worth_compiling():
  # 38 equations, one fused kernel: interpreted (a compiled call costs more)
  from openjax._src.api.library_compile import worth_compiling
  x = jnp.asarray(np.arange(12, dtype=np.int32))
  closed = jax.make_jaxpr(jnp.power)(x, x).jaxpr.eqns[0].params["jaxpr"]
  assert len(closed.jaxpr.eqns) >= 20 and not worth_compiling(closed)
  # gcd's loop is one fused np.gcd: interpreted too; another integer loop compiles
  assert not worth_compiling(jax.make_jaxpr(jnp.gcd)(x, x).jaxpr.eqns[0].params["jaxpr"])
  assert worth_compiling(jax.make_jaxpr(lambda v: lax.while_loop(
      lambda c: jnp.any(c != 0), lambda c: c // 2, v))(x))
