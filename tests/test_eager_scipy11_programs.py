"""Eager library programs of jax.image, jax.nn, jax.scipy.ndimage and
jax.scipy.fft (issue 14's eager sweep, session 11): each eager call after the
first runs its cached program (no trace, no jit general path, no compiled
call), and the reformulated DCTs keep SciPy's values at every size parity."""
import numpy as np
import pytest
import scipy.fft
import scipy.ndimage
import scipy.signal
import scipy.stats
from scipy.spatial.transform import Rotation as ScipyRotation

import openjax as jax
import openjax.numpy as jnp
from openjax import image, nn
from openjax._src.api.jit import JitWrapped
from openjax._src.scipy.signal import _fast_len
from openjax._src.scipy.stats import discrete
from openjax.scipy import fft as jsp_fft
from openjax.scipy import ndimage
from openjax.scipy import signal as jsig
from openjax.scipy import stats
from openjax.scipy.spatial.transform import Rotation


@pytest.fixture
def general_calls(monkeypatch):
  """Counts jit's general-path entries (trace lookup, compiled call)."""
  counts = {"entry": 0, "call": 0}
  library_entry, call = JitWrapped._library_entry, JitWrapped._call

  def counted_entry(self, args, kwargs):
    counts["entry"] += 1
    return library_entry(self, args, kwargs)

  def counted_call(self, args, kwargs, fast_key):
    counts["call"] += 1
    return call(self, args, kwargs, fast_key)

  monkeypatch.setattr(JitWrapped, "_library_entry", counted_entry)
  monkeypatch.setattr(JitWrapped, "_call", counted_call)
  return counts


def _repeat_calls_stay_cached(counts, f, *args, n=3):
  first = f(*args)
  counts["entry"] = counts["call"] = 0
  for _ in range(n):
    np.testing.assert_array_equal(np.asarray(f(*args)), np.asarray(first))
  assert counts == {"entry": 0, "call": 0}, counts
  return first


def _img(shape):
  n = int(np.prod(shape))
  return jnp.asarray((np.sin(np.arange(n) * 0.7) * 3).reshape(shape), np.float32)


@pytest.mark.parametrize("method,src,dst", [
    ("linear", (3, 4, 2), (6, 9, 2)), ("area", (6, 6), (2, 3)), ("nearest", (3, 4), (5, 7)),
    ("lanczos3", (7, 9), (3, 4)), ("cubic", (4, 5), (7, 3))])
def test_resize_is_one_cached_program(general_calls, method, src, dst):
  x = _img(src)
  got = _repeat_calls_stay_cached(general_calls, lambda a: image.resize(a, dst, method), x)
  np.testing.assert_allclose(np.asarray(got), np.asarray(jax.jit(
      lambda a: image.resize(a, dst, method))(x)), rtol=1e-6, atol=1e-6)


def test_resize_jaxpr_nests_like_jax():
  # JAX jits its _resize with static shape/method/antialias/precision.
  jaxpr = jax.make_jaxpr(lambda a: image.resize(a, (6, 9, 2), "linear"))(_img((3, 4, 2)))
  eqn, = jaxpr.jaxpr.eqns
  assert eqn.primitive.name == "jit" and eqn.params["name"] == "_resize"


def test_resize_static_arguments_key_the_program():
  x = _img((4, 4))
  a = image.resize(x, (2, 2), "linear", antialias=True)
  b = image.resize(x, (2, 2), "linear", antialias=False)
  c = image.resize(x, (8, 8), "linear")
  assert a.shape == b.shape == (2, 2) and c.shape == (8, 8)
  assert not np.allclose(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("f", [nn.silu, nn.elu, nn.leaky_relu, nn.selu, nn.celu,
                               nn.log_softmax, nn.standardize])
def test_jitted_nn_functions_stay_compiled_jits(f):
  # JAX jits these: an eager call runs compiled past the tiered first calls.
  # As library programs (interpreted NumPy kernels) they were 3-13x slower
  # at 1e6 elements (silu 0.53 -> 3.3 ms, softplus 0.76 -> 4.0 ms).
  assert not f.eager


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("mode", ["constant", "reflect", "wrap"])
def test_map_coordinates_repeat_calls_skip_general_path(general_calls, order, mode):
  rng = np.random.default_rng(order)
  im = rng.random((4, 3)).astype(np.float32)
  r = rng.uniform(-1, 4, 10).astype(np.float32)
  c = rng.uniform(-1, 3, 10).astype(np.float32)
  args = [jnp.asarray(a) for a in (im, r, c)]
  got = _repeat_calls_stay_cached(
      general_calls, lambda a, b, d: ndimage.map_coordinates(a, [b, d], order, mode, 0.5),
      *args)
  with jax.disable_jit():   # op by op: the same definition, no program
    np.testing.assert_allclose(
        np.asarray(got), np.asarray(ndimage.map_coordinates(*args[:1], args[1:], order, mode,
                                                            0.5)), rtol=1e-6, atol=1e-6)
  # SciPy agrees away from the borders (its rounding and constant-mode edges differ).
  inside = (r >= 0.6) & (r <= 2.4) & (c >= 0.6) & (c <= 1.4)
  want = scipy.ndimage.map_coordinates(im, [r, c], order=order, mode=mode, cval=0.5)
  np.testing.assert_allclose(np.asarray(got)[inside], want[inside], rtol=1e-5, atol=1e-5)


def test_map_coordinates_array_cval_and_int_input():
  im = jnp.asarray(np.arange(12, dtype=np.int32).reshape(4, 3))
  coords = [jnp.asarray([0.4, 2.6, 7.0]), jnp.asarray([1.5, 0.2, 0.0])]
  got = ndimage.map_coordinates(im, coords, 1, "constant", jnp.asarray(-3))
  assert got.dtype == np.int32
  want = scipy.ndimage.map_coordinates(np.asarray(im), [np.asarray(c) for c in coords],
                                       order=1, mode="constant", cval=-3)
  np.testing.assert_array_equal(np.asarray(got)[2], want[2])


def _inner_eqns(f, x):
  jaxpr = jax.make_jaxpr(f)(x)
  eqn, = jaxpr.jaxpr.eqns
  return [e for e in eqn.params["jaxpr"].jaxpr.eqns]


@pytest.mark.parametrize("norm", [None, "ortho"])
def test_dct_axis_is_a_short_program(norm):
  # A gather, the FFT, a product by a folded constant (and its broadcast), real.
  x = jnp.ones((3, 8), np.float32)
  assert len(_inner_eqns(lambda a: jsp_fft.dct(a, norm=norm), x)) <= 6
  # Two gathers, two products by constants (their broadcasts, the conversions to
  # complex), a sum, the FFT, real.
  assert len(_inner_eqns(lambda a: jsp_fft.idct(a, norm=norm), x)) <= 11


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 8, 9])
@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_dct_idct_every_parity(n, norm, axis):
  rng = np.random.default_rng(n)
  x = rng.standard_normal((n, n + 1) if axis == 0 else (3, n)).astype(np.float32)
  np.testing.assert_allclose(np.asarray(jsp_fft.dct(x, norm=norm, axis=axis)),
                             scipy.fft.dct(x, norm=norm, axis=axis), rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(np.asarray(jsp_fft.idct(x, norm=norm, axis=axis)),
                             scipy.fft.idct(x, norm=norm, axis=axis), rtol=1e-5, atol=1e-5)
  y = jsp_fft.idct(jsp_fft.dct(x, norm=norm, axis=axis), norm=norm, axis=axis)
  np.testing.assert_allclose(np.asarray(y), x, rtol=1e-5, atol=1e-5)


def test_dct_complex_and_float64_and_grad():
  rng = np.random.default_rng(0)
  x = (rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))).astype(np.complex64)
  np.testing.assert_allclose(np.asarray(jsp_fft.dctn(x, norm="ortho")),
                             scipy.fft.dctn(x, norm="ortho"), rtol=1e-5, atol=1e-5)
  with jax.enable_x64():
    x64 = rng.standard_normal((5, 6))
    got = jsp_fft.idctn(x64)
    assert got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), scipy.fft.idctn(x64), rtol=1e-12)
  # The DCT is linear: its gradient of sum(dct(x) * w) is dct's transpose applied to w.
  w = rng.standard_normal(7).astype(np.float32)
  g = jax.grad(lambda a: jnp.sum(jsp_fft.dct(a, norm="ortho") * w))(jnp.zeros(7, np.float32))
  np.testing.assert_allclose(np.asarray(g), scipy.fft.idct(w, norm="ortho"), rtol=1e-5,
                             atol=1e-5)


def test_rotation_matrix_is_one_contraction_and_matches_scipy():
  q = np.random.default_rng(3).standard_normal((6, 4)).astype(np.float32)
  np.testing.assert_allclose(np.asarray(Rotation.from_quat(q).as_matrix()),
                             ScipyRotation.from_quat(q).as_matrix(), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(np.asarray(Rotation.from_quat(q[2]).as_matrix()),
                             ScipyRotation.from_quat(q[2]).as_matrix(), rtol=1e-5, atol=1e-6)
  # Unnormalised quaternions give the quadratic forms scaled by |q|^2, as written out.
  x, y, z, w = q[0]
  want = [[x * x - y * y - z * z + w * w, 2 * (x * y - z * w), 2 * (x * z + y * w)],
          [2 * (x * y + z * w), -x * x + y * y - z * z + w * w, 2 * (y * z - x * w)],
          [2 * (x * z - y * w), 2 * (y * z + x * w), -x * x - y * y + z * z + w * w]]
  np.testing.assert_allclose(np.asarray(Rotation(jnp.asarray(q[0])).as_matrix()), want,
                             rtol=1e-5, atol=1e-5)
  jaxpr = jax.make_jaxpr(lambda a: Rotation(a).as_matrix())(jnp.asarray(q))
  eqn, = jaxpr.jaxpr.eqns
  assert len(eqn.params["jaxpr"].jaxpr.eqns) <= 8


@pytest.mark.parametrize("inverse", [False, True])
def test_rotation_apply_and_magnitude_are_cached_programs(general_calls, inverse):
  rng = np.random.default_rng(4)
  q = jnp.asarray(rng.standard_normal((4, 4)).astype(np.float32))
  v = jnp.asarray(rng.standard_normal((4, 3)).astype(np.float32))
  r = Rotation.from_quat(q)
  got = _repeat_calls_stay_cached(general_calls, lambda a: r.apply(a, inverse=inverse), v)
  np.testing.assert_allclose(np.asarray(got), ScipyRotation.from_quat(np.asarray(q)).apply(
      np.asarray(v), inverse=inverse), rtol=1e-5, atol=1e-5)
  mag = _repeat_calls_stay_cached(general_calls, lambda a: Rotation(a).magnitude(), r.quat)
  np.testing.assert_allclose(np.asarray(mag), ScipyRotation.from_quat(np.asarray(q))
                             .magnitude(), rtol=1e-5, atol=1e-6)
  g = jax.grad(lambda a: jnp.sum(Rotation.from_quat(a).apply(v, inverse=inverse)))(q)
  assert g.shape == (4, 4) and np.all(np.isfinite(np.asarray(g)))


def test_rotation_apply_and_magnitude_are_one_program_each():
  # One cached program a call (eagerly its kernels) rather than op-by-op dispatches.
  q, v = jnp.ones((4, 4)), jnp.ones((4, 3))
  for f, args in ((lambda a: Rotation(a).magnitude(), (q,)),
                  (lambda a, b: Rotation(a).apply(b), (q, v)),
                  (lambda a, b: Rotation(a).apply(b, inverse=True), (q, v))):
    eqn, = jax.make_jaxpr(f)(*args).jaxpr.eqns
    assert eqn.primitive.name == "jit"


def test_fftconvolve_pads_to_fast_lengths():
  assert [_fast_len(n) for n in (1, 7, 11, 13, 1459, 1751, 1470)] == \
      [1, 7, 12, 14, 1470, 1764, 1470]
  # The transforms run at the padded lengths; the result is still the linear convolution.
  rng = np.random.default_rng(5)
  for s1, s2 in (((13, 11), (5, 3)), ((17,), (4,)), ((6, 9), (6, 9))):
    a = rng.standard_normal(s1).astype(np.float32)
    b = rng.standard_normal(s2).astype(np.float32)
    for mode in ("full", "same", "valid"):
      np.testing.assert_allclose(np.asarray(jsig.fftconvolve(a, b, mode)),
                                 scipy.signal.fftconvolve(a, b, mode), rtol=1e-4, atol=1e-5)
    c = (a + 1j * a[::-1]).astype(np.complex64)
    np.testing.assert_allclose(np.asarray(jsig.fftconvolve(c, b)),
                               scipy.signal.fftconvolve(c, b), rtol=1e-4, atol=1e-5)
  jaxpr = jax.make_jaxpr(lambda x, y: jsig.fftconvolve(x, y))(jnp.ones((13, 11)),
                                                              jnp.ones((5, 3)))
  assert "fft_lengths=(18, 14)" in str(jaxpr)   # full shape (17, 13) padded


@pytest.mark.parametrize("name,f,op", [
    ("gelu", lambda x: nn.gelu(x), "tanh"),
    ("softmax", lambda x: nn.softmax(x, axis=0), "exp"),
])
def test_unjitted_nn_functions_run_eagerly_as_one_program(monkeypatch, name, f, op):
  # JAX does not jit gelu/softmax: traced they stay inline (no jit equation);
  # eagerly their body runs once per signature (a cached program), not per call.
  x = jnp.asarray(np.linspace(-2, 2, 15, dtype=np.float32).reshape(5, 3))
  assert all(e.primitive.name != "jit" for e in jax.make_jaxpr(f)(x).jaxpr.eqns)
  calls = []
  original = getattr(jnp, op)   # the jnp functions jax.nn is written with, the same objects
  monkeypatch.setattr(f"openjax._src.nn.jnp.{op}",
                      lambda *a, **k: calls.append(1) or original(*a, **k))
  y = jnp.asarray(np.linspace(-1, 3, 21, dtype=np.float32).reshape(7, 3))  # a new signature
  first = f(y)
  traced = len(calls)
  for _ in range(3):
    np.testing.assert_array_equal(np.asarray(f(y)), np.asarray(first))
  assert len(calls) == traced
  with jax.disable_jit():
    np.testing.assert_allclose(np.asarray(f(y)), np.asarray(first), rtol=1e-6, atol=1e-7)


def test_softmax_program_follows_the_custom_jvp_flag():
  x = jnp.asarray(np.array([0.5, -1.0, 2.0], np.float32))
  t = jnp.asarray(np.array([1.0, 0.0, -1.0], np.float32))
  plain = jax.jvp(nn.softmax, (x,), (t,))
  with jax.softmax_custom_jvp(True):
    custom = jax.jvp(nn.softmax, (x,), (t,))
    eager = nn.softmax(x)
  for a, b in zip(plain, custom):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-7)
  np.testing.assert_allclose(np.asarray(eager), np.asarray(plain[0]), rtol=1e-6)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("mode", ["reflect", "mirror", "wrap", "nearest"])
def test_map_coordinates_boundary_modes_far_outside(n, mode):
  # The index fixers map every index into range themselves (no clip after them):
  # points several periods outside, on and between the grid.
  im = np.arange(n, dtype=np.float32) * 1.5 + 1
  c = np.arange(-3 * n - 2, 3 * n + 3).astype(np.float32)
  scipy_mode = "grid-wrap" if mode == "wrap" else mode   # JAX's wrap is SciPy's grid-wrap
  for order in (0, 1):
    got = np.asarray(ndimage.map_coordinates(im, [c], order, mode))
    want = scipy.ndimage.map_coordinates(im, [c], order=order, mode=scipy_mode)
    if mode == "mirror" and n == 1:
      want = np.full_like(want, im[0])   # SciPy's mirror of one element is that element
    np.testing.assert_array_equal(got, want)
  half = c + 0.25
  np.testing.assert_allclose(np.asarray(ndimage.map_coordinates(im, [half], 1, mode)),
                             scipy.ndimage.map_coordinates(im, [half], order=1,
                                                           mode=scipy_mode),
                             rtol=1e-6)


def _count_eqns(jaxpr) -> int:
  n = 0
  for e in jaxpr.eqns:
    n += 1
    sub = e.params.get("jaxpr")
    if sub is not None:
      n += _count_eqns(getattr(sub, "jaxpr", sub))
  return n


@pytest.mark.parametrize("mode,most", [("reflect", 140), ("nearest", 90), ("wrap", 120),
                                       ("mirror", 135), ("constant", 115)])
def test_map_coordinates_program_steps(mode, most):
  # Indices are fixed (and, in constant mode, clipped) once per axis and node, not
  # per corner; reflect is a mod and a select (main: reflect 222, nearest 122).
  jaxpr = jax.make_jaxpr(lambda a, b, c: ndimage.map_coordinates(a, [b, c], 1, mode, 0.5))(
      jnp.ones((4, 3)), jnp.ones(10), jnp.ones(10))
  assert _count_eqns(jaxpr.jaxpr) <= most


def test_betabinom_eager_program_traced_inline_and_differentiable(monkeypatch):
  # Eagerly one cached program (the body runs once per signature); traced inline
  # (no jit equation, so grad never compiles a transpose of its own).
  k = jnp.asarray(np.array([0., 3., 7., 11., -1.], np.float32))
  n = jnp.full(5, 10., np.float32)
  a = jnp.asarray(np.array([0.5, 1.5, 2.0, 1.0, 3.0], np.float32))
  b = jnp.asarray(np.array([2.5, 0.7, 1.0, 1.0, 3.0], np.float32))
  for f in (stats.betabinom.logpmf, stats.betabinom.pmf):
    names = [e.params.get("name") for e in jax.make_jaxpr(f)(k, n, a, b).jaxpr.eqns]
    assert not any(str(name).startswith("betabinom") for name in names), names
  calls = []
  original = discrete.betaln
  monkeypatch.setattr(discrete, "betaln", lambda *x: calls.append(1) or original(*x))
  k2 = jnp.concatenate([k, k])   # a new signature: traced once below
  n2, a2, b2 = (jnp.concatenate([v, v]) for v in (n, a, b))
  first = stats.betabinom.logpmf(k2, n2, a2, b2)
  traced = len(calls)
  assert traced == 3
  for _ in range(3):
    np.testing.assert_array_equal(np.asarray(stats.betabinom.logpmf(k2, n2, a2, b2)),
                                  np.asarray(first))
  assert len(calls) == traced
  want = scipy.stats.betabinom.logpmf(np.asarray(k2), np.asarray(n2), np.asarray(a2),
                                      np.asarray(b2))
  np.testing.assert_allclose(np.asarray(first), want, rtol=2e-5, atol=1e-5)
  g = jax.grad(lambda x: jnp.sum(stats.betabinom.pmf(k[:3], n[:3], x, b[:3])))(a[:3])
  assert g.shape == (3,) and np.all(np.isfinite(np.asarray(g)))
