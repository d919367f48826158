"""Compiled elementwise math at edge values (issue 19, item 8): IREE's CPU
runtime flushes subnormals to zero (as XLA's does); the functions with f(x) =
x near 0 return x there as NumPy, the interpreter and JAX do, cbrt of a
subnormal is its cube root (it was NaN); atan2 and complex atan where
intermediate values under- or overflow."""
import time

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp

ODD = ["sin", "tan", "arctan", "tanh", "sinh", "arcsin", "arcsinh", "arctanh"]
NEAR_IDENTITY = ODD + ["expm1", "log1p"]


def _compiled(f, x):
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    out = jax.jit(f)(x)
    assert out._buffer is not None, "did not run compiled"
    return np.asarray(out)


def _inputs(dt):
  info = np.finfo(dt)
  tiny = float(info.tiny)
  vals = [tiny / 3, -tiny / 7, float(info.smallest_subnormal), -float(info.smallest_subnormal),
          tiny, 2 * tiny, 1e-30 if dt == np.float32 else 1e-200, 0.0, -0.0]
  return np.array(vals, dt)


@pytest.mark.parametrize("name", NEAR_IDENTITY)
def test_float32_subnormal_operands(name):
  x = _inputs(np.float32)
  got = _compiled(getattr(jnp, name), x)
  want = getattr(np, name)(x)
  np.testing.assert_array_equal(got, want)
  np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
  np.testing.assert_array_equal(got, np.asarray(getattr(jnp, name)(x)))   # the interpreter


@pytest.mark.parametrize("name", NEAR_IDENTITY)
def test_float64_subnormal_operands(name):
  with jax.enable_x64():
    x = _inputs(np.float64)
    got = _compiled(getattr(jnp, name), x)
    np.testing.assert_array_equal(got, getattr(np, name)(x))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_cbrt_of_subnormals_is_a_number(dt):
  with jax.enable_x64(dt == np.float64):
    x = _inputs(dt)
    got = _compiled(jnp.cbrt, x)
    assert not np.isnan(got).any(), got
    np.testing.assert_allclose(got, np.cbrt(x), rtol=4 * np.finfo(dt).eps, atol=0)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.cbrt(x)))


def test_small_normal_values_are_unchanged():
  # The pass-through is exact for |x| below half the square root of eps.
  x = np.array([1e-5, -3e-4, 2e-4], np.float32)
  for name in ODD:
    np.testing.assert_allclose(_compiled(getattr(jnp, name), x), getattr(np, name)(x),
                               rtol=2e-7, atol=0, err_msg=name)


def test_arctan2_sign_when_the_ratio_underflows():
  y = np.array([-2, -2, 2, -1e-30, 0.0, -0.0, np.nan, 1, -1, 0, -0.0], np.float32)
  x = np.array([-3e38, -3e30, -3e38, -1.0, -1, -1, 1, np.nan, 0, 0, -0.0], np.float32)
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    got = np.asarray(jax.jit(jnp.arctan2)(y, x))
  want = np.arctan2(y, x)
  np.testing.assert_array_equal(got, want)
  np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_complex_arctan_of_huge_values():
  # 2x and x^2 overflowed: atan(3e38 - 1.2j) was 3 pi / 8 (fuzz case).
  x = np.array([3e38 - 1.1776125j, -3e38 + 2j, 1e20 + 1e20j, 1e30j, -1e30j, 2 - 3j,
                complex(np.nan, np.inf)], np.complex64)
  np.testing.assert_allclose(_compiled(jnp.arctan, x), np.arctan(x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_float32_trig_of_huge_arguments(name):
  """Compiled float32 sin/cos/tan reduce huge arguments exactly (x = m 2**e
  and a table of 2**e mod 2 pi): sin(3e38) was -1 for 0.8749 (the float64
  Cody-Waite reduction is lost past ~1e18); NumPy's float64 values, within
  float32 rounding (tan relative, away from its poles)."""
  rng = np.random.default_rng(0)
  x = np.concatenate([
      np.array([3e38, -3e38, 1e30, 2.0 ** 100, 1e20, 2e18, 8388608.0, 8388607.0, 1e7, 12345.678,
                np.finfo(np.float32).max, -np.finfo(np.float32).max], np.float32),
      (rng.uniform(1, 38, 200) * rng.choice([-1, 1], 200)).astype(np.float32)])
  x = np.concatenate([x, (10.0 ** np.abs(x[12:])).astype(np.float32) * np.sign(x[12:])])
  x = x[np.isfinite(x)]
  got = np.asarray(_compiled(getattr(jnp, name), x)).astype(np.float64)
  want = getattr(np, name)(x.astype(np.float64))
  if name == "tan":
    ok = np.abs(want) < 1e3
    np.testing.assert_allclose(got[ok], want[ok], rtol=3e-6, atol=3e-7)
  else:
    np.testing.assert_allclose(got, want, rtol=0, atol=1.2e-7)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_float32_sin_cos_within_one_ulp(name):
  """Compiled float32 sin/cos (float64 reduction, float32 tail polynomials,
  one final rounding) stay within 1 ulp of the true value (JAX's: 0.56 ulp)
  for every magnitude and sign, near the quadrant boundaries k pi / 4 and
  near the zeros of the function, where relative errors show; NaN for
  infinities and NaN."""
  rng = np.random.default_rng(1)
  k = np.arange(-2000, 2001, dtype=np.float64)
  near = (k * np.pi / 4).astype(np.float32)
  x = np.concatenate([
      near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(-np.inf)),
      rng.uniform(-1, 1, 20000).astype(np.float32),
      (rng.standard_normal(20000) * 1e3).astype(np.float32),
      rng.uniform(-2.0 ** 23, 2.0 ** 23, 20000).astype(np.float32),
      (np.sign(rng.standard_normal(5000)) * 10.0 ** rng.uniform(-30, 38, 5000)).astype(np.float32),
      np.array([0.0, -0.0, 1e-45, -1e-45, np.float32(np.pi), np.float32(np.pi / 2)], np.float32)])
  got = _compiled(getattr(jnp, name), x).astype(np.float64)
  want = getattr(np, name)(x.astype(np.float64))
  ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
  err = np.abs(got - want) / ulp
  assert err.max() < 1.0, (x[np.argmax(err)], err.max())
  special = _compiled(getattr(jnp, name), np.array([np.inf, -np.inf, np.nan], np.float32))
  assert np.isnan(special).all()
  if name == "sin":   # odd: the sign of zero survives
    zero = _compiled(jnp.sin, np.array([0.0, -0.0], np.float32))
    assert list(np.signbit(zero)) == [False, True]


@pytest.mark.parametrize("name", ["exp", "sin", "cos", "sinh", "cosh", "expm1"])
def test_complex64_functions_of_large_parts(name):
  """Compiled complex64 exp/sin/cos/sinh/cosh/expm1 take the sines and
  cosines of their float32 parts as float32 sin/cos do (reduced exactly):
  IREE's own float32 sine made exp(1e6j) 11% off and sin(1e6 + 0.5j) 194%
  off; NumPy's complex128 values within float32 rounding."""
  rng = np.random.default_rng(3)
  big = np.concatenate([rng.standard_normal(2000) * 1e6, rng.standard_normal(2000) * 1e4,
                        rng.standard_normal(2000) * 3])
  small = rng.standard_normal(6000) * 0.5
  periodic_imag = name in ("exp", "sinh", "cosh", "expm1")
  z = (small + 1j * big) if periodic_imag else (big + 1j * small)
  z = z.astype(np.complex64)
  got = _compiled(getattr(jnp, name), z).astype(np.complex128)
  want = getattr(np, name)(z.astype(np.complex128))
  rel = np.abs(got - want) / np.maximum(np.abs(want), 1e-30)
  assert rel.max() < 2e-6, (z[np.argmax(rel)], rel.max())


def test_module_rejected_under_peeled_loops_compiles_without_them(monkeypatch):
  # A float64 FFT of 4096 points lowers to contractions whose peeled vector
  # form IREE rejects on AVX-512 hosts (8x16x32 f64 past its vector-size
  # limit; AVX2 hosts compile it); peeling is a process-wide IREE option, so
  # the module compiles in an iree-compile process without it. The in-process
  # compile is made to reject it here, as on AVX-512, so every host runs the
  # fallback. A constant unique to this run keeps caches out.
  from openjax._src.runtime import compiler
  in_process = compiler._compile_in_process

  def rejecting(text, flags, name):
    if "fft" in text and any(f in flags for f in compiler.GLOBAL_FLAGS):
      raise compiler.CompilationError(f"jit of {name}: IREE failed to compile the lowered "
                                      "module:\nerror: vector too large (simulated)")
    return in_process(text, flags, name)
  monkeypatch.setattr(compiler, "_compile_in_process", rejecting)
  scale = 1.0 + (time.time_ns() % 1_000_003) * 1e-12
  x = np.random.default_rng(0).standard_normal(4096)
  before = compiler.stats["global_flag_fallbacks"]
  with jax.config.override("jax_enable_x64", True):
    got = _compiled(lambda v: jnp.fft.fft(v * scale), x)
  assert compiler.stats["global_flag_fallbacks"] == before + 1
  np.testing.assert_allclose(got, np.fft.fft(x * scale), rtol=1e-9, atol=1e-9)
