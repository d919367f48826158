"""jnp.fft and lax.fft: values and dtypes against numpy.fft, JAX's jaxprs,
errors and gradients (JAX's values and finite differences), jit, vmap, and
IREE-compiled code (native ``stablehlo.fft`` for 1-D power-of-two lengths,
DFT-matrix products otherwise) against eager. The op table
(tests/ops/rows_fft.py) covers the per-row columns."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.primitives.fft.fft import FftType, fft_p

RNG = np.random.default_rng(0)


def _c64(*shape):
  return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


def _f32(*shape):
  return RNG.standard_normal(shape).astype(np.float32)


def _close(actual, expected, tol=2e-5):
  actual = np.asarray(actual)
  assert actual.shape == np.shape(expected)
  scale = max(1.0, float(np.abs(expected).max())) if np.size(expected) else 1.0
  np.testing.assert_allclose(actual, expected, atol=tol * scale, rtol=tol)


ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
ONE_D_KWARGS = [{}, {"n": 5}, {"n": 8, "axis": 0}, {"axis": 0}, {"norm": "ortho"},
                {"norm": "forward"}, {"norm": "backward"}]


@pytest.mark.parametrize("kwargs", ONE_D_KWARGS, ids=str)
@pytest.mark.parametrize("name", ONE_D)
def test_one_dimensional_matches_numpy(name, kwargs):
  x = _f32(4, 6) if name in ("rfft", "ihfft") else _c64(4, 6)
  out = getattr(jnp.fft, name)(x, **kwargs)
  expected = getattr(np.fft, name)(x, **kwargs)
  assert out.dtype == (np.float32 if expected.dtype.kind == "f" else np.complex64)
  _close(out, expected)


N_D = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
N_D_KWARGS = [{}, {"s": (3, 5)}, {"s": (4, 8), "axes": (0, 2)}, {"axes": (2, 0)},
              {"norm": "ortho"}, {"norm": "forward"}]


@pytest.mark.parametrize("kwargs", N_D_KWARGS, ids=str)
@pytest.mark.parametrize("name", N_D)
def test_multi_dimensional_matches_numpy(name, kwargs):
  x = _f32(3, 4, 6) if name.startswith("rfft") else _c64(3, 4, 6)
  out = getattr(jnp.fft, name)(x, **kwargs)
  np_kwargs = dict(kwargs)
  if "s" in kwargs and "axes" not in kwargs:
    np_kwargs["axes"] = (1, 2)     # NumPy 2 wants explicit axes with s
  expected = getattr(np.fft, name)(x, **np_kwargs)
  _close(out, expected)


def test_dtypes():
  assert jnp.fft.fft(np.arange(4)).dtype == np.complex64
  assert jnp.fft.fft(np.ones(4, np.float32)).dtype == np.complex64
  assert jnp.fft.rfft(np.arange(4)).dtype == np.complex64
  assert jnp.fft.irfft(np.ones(3, np.complex64)).dtype == np.float32
  assert jnp.fft.fftfreq(4).dtype == np.float32
  with jax.enable_x64():
    x = RNG.standard_normal(16)
    out = jnp.fft.fft(x)
    assert out.dtype == np.complex128
    np.testing.assert_allclose(np.asarray(out), np.fft.fft(x), rtol=1e-12, atol=1e-12)
    assert jnp.fft.irfft(np.fft.rfft(x)).dtype == np.float64


def test_frequencies_and_shifts():
  _close(jnp.fft.fftfreq(5), np.fft.fftfreq(5))
  _close(jnp.fft.fftfreq(8, d=0.1), np.fft.fftfreq(8, d=0.1))
  _close(jnp.fft.rfftfreq(6, 0.5), np.fft.rfftfreq(6, 0.5))
  _close(jnp.fft.rfftfreq(7), np.fft.rfftfreq(7))
  x = np.arange(35).reshape(5, 7)
  for axes in (None, 0, 1, (1, 0)):
    np.testing.assert_array_equal(jnp.fft.fftshift(x, axes), np.fft.fftshift(x, axes))
    np.testing.assert_array_equal(jnp.fft.ifftshift(x, axes), np.fft.ifftshift(x, axes))


def test_jaxpr_matches_jax():
  # JAX 0.10.2: make_jaxpr(jnp.fft.fft)(f32[3,8]).
  expected = """{ lambda ; a:f32[3,8]. let
    b:c64[3,8] = jit[
      name=fft
      jaxpr={ lambda ; a:f32[3,8]. let
          c:c64[3,8] = convert_element_type[new_dtype=complex64 weak_type=False] a
          b:c64[3,8] = fft[fft_lengths=(8,) fft_type=0] c
        in (b,) }
    ] a
  in (b,) }"""
  assert str(jax.make_jaxpr(jnp.fft.fft)(np.ones((3, 8), np.float32))) == expected
  rfft = str(jax.make_jaxpr(jnp.fft.rfft)(np.ones((3, 8), np.float32)))
  assert "b:c64[3,5] = fft[fft_lengths=(8,) fft_type=2] a" in rfft


@pytest.mark.parametrize("fn, exc, msg", [
    (lambda: jnp.fft.fft(np.ones(4), norm="bad"), ValueError,
     'Invalid norm value bad; should be "backward","ortho" or "forward".'),
    (lambda: lax.fft(np.ones(4, np.complex64), "rfft", (4,)), ValueError,
     "only real valued inputs supported for rfft"),
    (lambda: jnp.fft.fftn(np.ones((2, 2)), axes=(0, 0)), ValueError,
     "jax.numpy.fft.fftn does not support repeated axes. Got axes (0, 0)."),
    (lambda: jnp.fft.fft(np.ones(4), axis=(0,)), ValueError,
     "jax.numpy.fft.fft does not support multiple axes"),
    (lambda: jnp.fft.fftn(np.ones((2, 2)), s=(2,), axes=(0, 1)), ValueError,
     "Shape and axes have different lengths."),
    (lambda: lax.fft(np.ones(4, np.complex64), "fft", (5,)), ValueError,
     "FFT input shape (4,) minor dimensions must be equal to fft_lengths (5,)"),
    (lambda: lax.fft(np.ones(4, np.complex64), "dct", (4,)), ValueError,
     "Unknown FFT type 'dct'"),
])
def test_errors(fn, exc, msg):
  with pytest.raises(exc) as info:
    fn()
  assert msg in str(info.value)


def test_gradients_match_jax():
  # Goldens from JAX 0.10.2 (the RFFT/IRFFT transposes and JAX's convention
  # for complex inputs).
  x = np.arange(8.0).astype(np.float32)
  g = jax.grad(lambda x: jnp.fft.rfft(x).real.sum() + (jnp.fft.rfft(x).imag ** 2).sum())(x)
  _close(g, np.array([5, -24, -15, -8, 1, 8, 17, 24], np.float32), 1e-5)
  z = (x[:5] + 1j * x[:5]).astype(np.complex64)
  g = jax.grad(lambda z: jnp.fft.irfft(z).sum() * 2.0 + (jnp.fft.irfft(z) ** 2).sum())(z)
  _close(g, np.array([2, 0.5 - 0.5j, 1 - 1j, 1.5 - 1.5j, 1], np.complex64), 1e-5)
  g = jax.grad(lambda x: (jnp.abs(jnp.fft.fft(x, n=6)) ** 2).sum())(x[:5])
  _close(g, np.array([0, 12, 24, 36, 48], np.float32), 1e-5)


@pytest.mark.parametrize("fn, make", [
    (lambda x: jnp.fft.fft2(x, s=(3, 5)), lambda: _c64(2, 4).astype(np.complex128)),
    (lambda x: jnp.fft.rfftn(x, norm="ortho"), lambda: RNG.standard_normal((3, 6))),
    (lambda x: jnp.fft.irfft2(x, s=(4, 7)), lambda: _c64(4, 4).astype(np.complex128)),
    (lambda x: jnp.fft.irfft(x, n=8), lambda: _c64(3, 6).astype(np.complex128)),
    (lambda x: jnp.fft.ihfft(x), lambda: RNG.standard_normal(7)),
], ids=["fft2", "rfftn", "irfft2", "irfft_cropped", "ihfft"])
def test_gradients_match_finite_differences(fn, make):
  with jax.enable_x64():
    jax.test_util.check_grads(fn, (make(),), order=2, modes=("fwd", "rev"), atol=1e-5,
                              rtol=1e-5)
    jax.test_util.check_grads(jax.jit(fn), (make(),), order=1, modes=("rev",), atol=1e-5,
                              rtol=1e-5)


def test_vmap_and_jit():
  x = _c64(3, 4, 6)
  for axis in (0, 1, 2):
    out = jax.vmap(lambda v: lax.fft(v, FftType.FFT, (v.shape[-1],)), in_axes=axis)(x)
    expected = np.stack([np.fft.fft(np.take(x, i, axis)) for i in range(x.shape[axis])])
    _close(out, expected)
  r = _f32(5, 8)
  _close(jax.vmap(jnp.fft.rfft, in_axes=1)(r), np.fft.rfft(r.T))
  _close(jax.jit(jnp.fft.irfftn)(x), np.fft.irfftn(x))
  _close(jax.jit(lambda v: jnp.fft.fft(v, n=10, axis=0))(r), np.fft.fft(r, n=10, axis=0))


def test_compiled_matches_eager():
  # One IREE module for every kind at power-of-two and other lengths, 1-D
  # and multi-dimensional, plus a gradient.
  cases = [
      (FftType.FFT, _c64(3, 8), (8,)), (FftType.IFFT, _c64(3, 6), (6,)),
      (FftType.RFFT, _f32(3, 12), (12,)), (FftType.RFFT, _f32(2, 16), (16,)),
      (FftType.IRFFT, _c64(3, 5), (8,)), (FftType.IRFFT, _c64(3, 4), (7,)),
      (FftType.IRFFT, _c64(3, 7), (8,)),
      (FftType.FFT, _c64(4, 8), (4, 8)), (FftType.IFFT, _c64(2, 3, 5), (3, 5)),
      (FftType.RFFT, _f32(4, 8), (4, 8)), (FftType.RFFT, _f32(2, 3, 5), (3, 5)),
      (FftType.IRFFT, _c64(4, 5), (4, 8)), (FftType.IRFFT, _c64(2, 3, 4), (3, 6)),
      (FftType.FFT, _c64(2, 4, 4, 2), (4, 4, 2)), (FftType.RFFT, _f32(2, 1024), (1024,)),
      (FftType.IRFFT, _c64(2, 513), (1024,)), (FftType.FFT, _c64(2, 1000), (1000,)),
  ]
  grad_in = _f32(12)
  grad_fn = jax.grad(lambda v: (jnp.abs(jnp.fft.rfft(v)) ** 2).sum()
                     + jnp.fft.irfft(jnp.fft.fft(v)[:7], n=12).sum())

  def run_all(g, *xs):
    return [grad_fn(g)] + [lax.fft(x, t, n) for (t, _, n), x in zip(cases, xs)]

  args = [grad_in] + [x for _, x, _ in cases]
  lowered = jax.jit(run_all).lower(*args)
  text = lowered.as_text()
  assert "stablehlo.fft %arg15, type = RFFT, length = [1024]" in text
  assert "stablehlo.fft %arg1, type = FFT, length = [8]" in text
  assert "length = [1000]" not in text and "length = [4, 8]" not in text
  compiled = lowered.compile()(*args)
  eager = run_all(*args)
  for c, e in zip(compiled, eager):
    assert np.asarray(c).dtype == np.asarray(e).dtype
    _close(c, np.asarray(e), 2e-5)


def test_eager_kernel_matches_impl_bits_and_dtypes():
  # The eval kernel (numpy.fft.fft & co. for one axis, the n-D functions
  # otherwise) gives the impl's bits and dtypes, empty and NaN/inf inputs
  # included; jnp.fft's eager path (the primitive, no staged jit) gives the
  # jitted path's values, normalisations and moved axes included.
  x = _c64(3, 8)
  x[0, 1] = np.nan
  x[1, 2] = np.inf
  cases = [(FftType.FFT, x, (8,)), (FftType.IFFT, _c64(2, 5), (5,)),
           (FftType.RFFT, _f32(3, 10), (10,)), (FftType.IRFFT, _c64(3, 5), (8,)),
           (FftType.IRFFT, _c64(3, 5), (9,)), (FftType.FFT, _c64(4, 6), (4, 6)),
           (FftType.RFFT, _f32(2, 3, 4), (3, 4)), (FftType.IRFFT, _c64(2, 3, 4), (3, 6)),
           (FftType.FFT, np.zeros((0, 4), np.complex64), (4,)),
           (FftType.RFFT, _f32(5).astype(np.float64), (5,))]
  for typ, v, n in cases:
    with jax.enable_x64(v.dtype == np.float64):
      got = np.asarray(lax.fft(v, typ, n))
      want, = fft_p.impl(v, fft_type=typ, fft_lengths=n)
      assert got.dtype == want.dtype and got.shape == want.shape
      np.testing.assert_array_equal(got, want)
  a = _c64(3, 6)
  for norm in (None, "ortho", "forward"):
    for fun, kw in ((jnp.fft.fft, dict(axis=0)), (jnp.fft.ifft, dict(n=4)),
                    (jnp.fft.rfft, dict(n=9)), (jnp.fft.irfft, dict(axis=-2)),
                    (jnp.fft.fft2, {}), (jnp.fft.ihfft, {}), (jnp.fft.hfft, {})):
      arg = a.real.copy() if fun in (jnp.fft.rfft, jnp.fft.ihfft) else a
      if fun in (jnp.fft.ihfft, jnp.fft.hfft) and norm is not None:
        continue
      eager = fun(arg, norm=norm, **kw)
      jitted = jax.jit(lambda v, fun=fun, kw=kw, norm=norm: fun(v, norm=norm, **kw))(arg)
      assert eager.dtype == jitted.dtype
      np.testing.assert_array_equal(eager, jitted)


# ----------------------------------------------- long lengths, compiled
@pytest.fixture
def compiled():
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    yield


@pytest.mark.parametrize("name,make", [("fft", _c64), ("ifft", _c64), ("rfft", _f32)])
def test_long_prime_length_compiles(compiled, name, make):
  # 65537 is prime: its DFT matrix would hold 4.3e9 entries (the lowering
  # ran out of memory); Bluestein's convolution of 2**18 points instead.
  x = make(65537)
  ref = getattr(np.fft, name)(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
  _close(jax.jit(getattr(jnp.fft, name))(x), ref, 1e-5)


def test_long_prime_factor_and_batch_axes(compiled):
  # 2 x 1031 (a prime factor over the matrix size) along axis 0 of a batch,
  # and irfft to an odd prime length.
  x = _c64(2062, 3)
  _close(jax.jit(lambda v: jnp.fft.fft(v, axis=0))(x), np.fft.fft(x.astype(np.complex128), axis=0),
         1e-5)
  h = _c64(2, 2000)
  _close(jax.jit(lambda v: jnp.fft.irfft(v, n=3989))(h),
         np.fft.irfft(h.astype(np.complex128), n=3989), 1e-5)


def test_long_power_of_two_irfft_compiles(compiled):
  # IREE's own IRFFT fails to compile from 2**14 points (stack limit).
  h = _c64(1 << 13 | 1)
  _close(jax.jit(jnp.fft.irfft)(h), np.fft.irfft(h.astype(np.complex128)), 1e-5)


def test_long_prime_length_float64(compiled):
  with jax.enable_x64():
    x = RNG.standard_normal(4099) + 1j * RNG.standard_normal(4099)
    got = jax.jit(jnp.fft.fft)(x)
    assert np.asarray(got).dtype == np.complex128
    _close(got, np.fft.fft(x), 1e-12)
