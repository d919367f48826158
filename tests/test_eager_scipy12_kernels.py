"""Eager kernels of session 12's scipy/linalg/conv/windowed sweep: each planned
kernel against the primitive's impl (the reference implementation) on the
layouts, paddings, strides and dtypes it covers, and the cases it leaves to
the impl."""
import itertools

import ml_dtypes
import numpy as np
import pytest
import scipy.linalg
import scipy.signal

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.control import _reduce_computation
from openjax._src.control import reduce_variadic
from openjax._src.core import eval_trace
from openjax._src.core.avals import ShapedArray
from openjax._src.core.trace import make_plan
from openjax._src.primitives.dot_conv.conv import (ConvDimensionNumbers, _conv_general_dilated_impl,
                                                   conv_general_dilated_p)
from openjax.scipy import linalg as jsl
from openjax.scipy import signal as jsig


def _aval(x: np.ndarray) -> ShapedArray:
  return ShapedArray(x.shape, x.dtype)


def _plan(p, operands, **params):
  kernel, lean, *_ = make_plan(p, [_aval(x) for x in operands], params)
  return kernel, lean


def _operand(rng, shape, dt):
  x = rng.standard_normal(shape)
  if np.dtype(dt).kind == "c":
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dt)


def _conv_params(nsp, *, strides=None, padding=None, rhs_dilation=None, specs=None,
                 preferred=None, lhs_dilation=None, groups=1):
  specs = specs or tuple(tuple(range(nsp + 2)) for _ in range(3))
  return dict(window_strides=strides or (1,) * nsp, padding=padding or ((0, 0),) * nsp,
              lhs_dilation=lhs_dilation or (1,) * nsp, rhs_dilation=rhs_dilation or (1,) * nsp,
              dimension_numbers=ConvDimensionNumbers(*specs), feature_group_count=groups,
              batch_group_count=1, precision=None, preferred_element_type=preferred)


def _check_conv(lhs, rhs, params, *, lean=True, tol=None):
  kernel, is_lean = _plan(conv_general_dilated_p, (lhs, rhs), **params)
  assert is_lean is lean
  if not lean:
    return
  want = _conv_general_dilated_impl(lhs, rhs, **params)[0]
  got = np.asarray(kernel(lhs, rhs))
  assert got.dtype == want.dtype and got.shape == want.shape
  wide = want.dtype in (np.float64, np.complex128)
  tol = tol or (1e-12 if wide else 2e-5 if want.dtype.itemsize >= 4 else 2e-2)
  np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128),
                             rtol=tol, atol=tol)


_CONV_DTYPES = [np.float32, np.float64, np.complex64, np.complex128, np.float16,
                ml_dtypes.bfloat16]


@pytest.mark.parametrize("dt", _CONV_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n,m,pad", [(7, 3, (0, 0)), (3, 5, (4, 4)), (9, 4, (2, 1)),
                                     (12, 3, (-2, 1)), (1, 1, (0, 0)), (1000, 429, (428, 428))])
def test_one_channel_1d_conv_kernel_matches_the_impl(dt, n, m, pad):
  rng = np.random.default_rng(n * m)
  lhs, rhs = _operand(rng, (1, 1, n), dt), _operand(rng, (1, 1, m), dt)
  _check_conv(lhs, rhs, _conv_params(1, padding=(pad,)),
              tol=1e-4 if n == 1000 and np.dtype(dt).itemsize == 4 else None)


_LAYOUTS = {
    "nchw": ((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3)),
    "nhwc": ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2)),
    "mixed": ((1, 0, 3, 2), (2, 3, 0, 1), (3, 2, 0, 1)),
}


@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
@pytest.mark.parametrize("strides,padding,dilation", [
    ((1, 1), ((0, 0), (0, 0)), (1, 1)), ((2, 1), ((1, 2), (0, 1)), (1, 1)),
    ((1, 3), ((-1, 2), (2, -1)), (2, 1)), ((2, 2), ((3, 3), (3, 3)), (2, 3))])
@pytest.mark.parametrize("dt", [np.float32, np.complex64, np.float16], ids=lambda d: np.dtype(d).name)
def test_2d_conv_kernel_matches_the_impl(layout, strides, padding, dilation, dt):
  rng = np.random.default_rng(3)
  specs = _LAYOUTS[layout]
  canon_l, canon_r = (2, 3, 9, 8), (4, 3, 3, 2)     # (n, c, h, w), (o, i, kh, kw)
  lshape = [0] * 4
  rshape = [0] * 4
  for axis, size in zip(specs[0], canon_l):
    lshape[axis] = size
  for axis, size in zip(specs[1], canon_r):
    rshape[axis] = size
  lhs, rhs = _operand(rng, lshape, dt), _operand(rng, rshape, dt)
  _check_conv(lhs, rhs, _conv_params(2, strides=strides, padding=padding,
                                     rhs_dilation=dilation, specs=specs))


def test_1d_and_3d_multichannel_conv_kernels_match_the_impl():
  rng = np.random.default_rng(5)
  lhs, rhs = _operand(rng, (3, 2, 11), np.float32), _operand(rng, (5, 2, 4), np.float32)
  _check_conv(lhs, rhs, _conv_params(1, strides=(2,), padding=((1, 3),)))
  # A one-channel 1-d convolution with a stride or a dilated kernel: the window matrix.
  lhs, rhs = _operand(rng, (1, 1, 20), np.float64), _operand(rng, (1, 1, 3), np.float64)
  _check_conv(lhs, rhs, _conv_params(1, strides=(3,), padding=((2, 2),)))
  _check_conv(lhs, rhs, _conv_params(1, rhs_dilation=(2,), padding=((2, 2),)))
  lhs, rhs = _operand(rng, (1, 2, 5, 6, 4), np.float32), _operand(rng, (3, 2, 2, 3, 2),
                                                                  np.float32)
  _check_conv(lhs, rhs, _conv_params(3, padding=((1, 0), (0, 1), (1, 1))))


def test_conv_kernel_preferred_element_type_widens_like_the_impl():
  rng = np.random.default_rng(6)
  lhs, rhs = _operand(rng, (1, 1, 30), np.float16), _operand(rng, (1, 1, 5), np.float16)
  _check_conv(lhs, rhs, _conv_params(1, preferred=np.float32))
  lhs, rhs = _operand(rng, (2, 3, 6, 6), np.float16), _operand(rng, (2, 3, 3, 3), np.float16)
  _check_conv(lhs, rhs, _conv_params(2, preferred=np.float32))


def test_conv_kernel_leaves_integer_grouped_dilated_and_empty_convs_to_the_impl():
  rng = np.random.default_rng(7)
  ints = rng.integers(-9, 9, (1, 1, 8)).astype(np.int32)
  _check_conv(ints, ints[..., :3], _conv_params(1), lean=False)
  lhs, rhs = _operand(rng, (1, 4, 8), np.float32), _operand(rng, (4, 2, 3), np.float32)
  _check_conv(lhs, rhs, _conv_params(1, groups=2), lean=False)
  lhs, rhs = _operand(rng, (1, 1, 8), np.float32), _operand(rng, (1, 1, 3), np.float32)
  _check_conv(lhs, rhs, _conv_params(1, lhs_dilation=(2,)), lean=False)
  # The window does not fit: an empty result.
  _check_conv(lhs[..., :2], rhs, _conv_params(1), lean=False)


def test_convolve_and_correlate_eagerly_match_numpy_with_complex_conjugation():
  rng = np.random.default_rng(8)
  for dt in (np.float32, np.complex64, np.float64):
    a, v = _operand(rng, (9,), dt), _operand(rng, (4,), dt)
    for mode in ("full", "same", "valid"):
      tol = 1e-5      # float64 operands are float32 without x64
      np.testing.assert_allclose(jnp.convolve(a, v, mode), np.convolve(a, v, mode),
                                 rtol=tol, atol=tol)
      np.testing.assert_allclose(jnp.correlate(a, v, mode), np.correlate(a, v, mode),
                                 rtol=tol, atol=tol)
      np.testing.assert_allclose(jnp.correlate(v, a, mode), np.correlate(v, a, mode),
                                 rtol=tol, atol=tol)


def test_conv_kernel_on_every_small_1d_padding():
  rng = np.random.default_rng(9)
  lhs, rhs = _operand(rng, (1, 1, 6), np.float64), _operand(rng, (1, 1, 3), np.float64)
  for lo, hi in itertools.product(range(-2, 4), repeat=2):
    params = _conv_params(1, padding=((lo, hi),))
    if 6 + lo + hi < 3:
      continue
    _check_conv(lhs, rhs, params)


# ------------------------------------------------ jax.scipy.signal programs
@pytest.fixture
def eager_binds(monkeypatch):
  """Counts primitives bound one by one in the eval trace."""
  counts = {"binds": 0}
  cls = type(eval_trace)
  process = cls.process_primitive

  def counted(self, primitive, args, params):
    counts["binds"] += 1
    return process(self, primitive, args, params)
  monkeypatch.setattr(cls, "process_primitive", counted)
  return counts


@pytest.mark.parametrize("fun,args", [
    (jsig.convolve2d, ((4, 5), (2, 3), "valid")), (jsig.correlate2d, ((3, 3), (4, 5), "full")),
    (jsig.convolve, ((3, 4, 5), (2, 2, 2), "same")), (jsig.correlate, ((6,), (3,), "full"))])
def test_scipy_signal_convolutions_run_as_one_program_eagerly(eager_binds, fun, args):
  s1, s2, mode = args
  rng = np.random.default_rng(1)
  a, b = rng.standard_normal(s1).astype(np.float32), rng.standard_normal(s2).astype(np.float32)
  ref = getattr(scipy.signal, fun.__name__)(a, b, mode)
  x, y = jnp.asarray(a), jnp.asarray(b)
  np.testing.assert_allclose(fun(x, y, mode), ref, rtol=1e-5, atol=1e-5)
  eager_binds["binds"] = 0
  np.testing.assert_allclose(fun(x, y, mode), ref, rtol=1e-5, atol=1e-5)
  assert eager_binds["binds"] == 0
  # Traced, the equations are staged inline as JAX's (no jit around them).
  eqns = jax.make_jaxpr(lambda u, v: fun(u, v, mode))(a, b).jaxpr.eqns
  assert "jit" not in [e.primitive.name for e in eqns]
  assert "conv_general_dilated" in [e.primitive.name for e in eqns]


# ------------------------------------------------------------ scipy.linalg
def test_funm_parlett_recurrence_is_one_jitted_program():
  # JAX jits its recurrence (``_algorithm_11_1_1``); eagerly, a loop body
  # closing over the Schur form was traced again on every call (4 x 4: 2.1 ms
  # -> 0.5 ms a call).
  rng = np.random.default_rng(2)
  a = (rng.standard_normal((4, 4)) * 0.5).astype(np.float32)
  eqns = jax.make_jaxpr(lambda m: jsl.funm(m, jnp.exp))(a).jaxpr.eqns
  names = [e.params.get("name") for e in eqns if e.primitive.name == "jit"]
  assert "_parlett" in names
  want = scipy.linalg.expm(a.astype(np.float64))
  for _ in range(2):
    np.testing.assert_allclose(jsl.funm(jnp.asarray(a), jnp.exp), want, rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------- numpy.fft
@pytest.mark.parametrize("fun,kwargs,shape,dt", [
    ("fft", dict(n=8, axis=0), (5, 3), np.float32), ("ifft", dict(norm="ortho"), (3, 5), np.complex64),
    ("rfft", dict(norm="forward"), (4, 6), np.float32), ("irfft", dict(n=7, axis=0), (5, 3), np.complex64),
    ("hfft", dict(), (3, 5), np.complex64), ("ihfft", dict(n=4), (2, 6), np.float32),
    ("rfft2", dict(axes=(0, 1)), (4, 6, 2), np.float32), ("fftn", dict(s=(3, 2), axes=(0, 1)), (4, 5), np.complex64)])
def test_fft_with_moves_pads_or_scales_run_as_one_program(eager_binds, fun, kwargs, shape, dt):
  rng = np.random.default_rng(4)
  a = _operand(rng, shape, dt)
  ref = getattr(np.fft, fun)(a, **kwargs)
  x = jnp.asarray(a)
  np.testing.assert_allclose(getattr(jnp.fft, fun)(x, **kwargs), ref, rtol=2e-5, atol=2e-5)
  eager_binds["binds"] = 0
  np.testing.assert_allclose(getattr(jnp.fft, fun)(x, **kwargs), ref, rtol=2e-5, atol=2e-5)
  assert eager_binds["binds"] == 0
  # Traced, the equations are JAX's: the transform inside ``jit[name=fft]``.
  eqns = jax.make_jaxpr(lambda u: getattr(jnp.fft, fun)(u, **kwargs))(a).jaxpr.eqns
  assert "fft" in [e.params.get("name") for e in eqns if e.primitive.name == "jit"]


def test_a_lone_fft_binds_its_primitive(eager_binds):
  x = jnp.asarray(np.arange(8, dtype=np.complex64))
  np.testing.assert_allclose(jnp.fft.fft(x), np.fft.fft(np.arange(8)), rtol=1e-5, atol=1e-5)
  eager_binds["binds"] = 0
  jnp.fft.fft(x)
  assert eager_binds["binds"] == 1


# ------------------------------------------------------------- lax.reduce
def _argmax_pair(a, b):
  (av, ai), (bv, bi) = a, b
  pick_b = (bv > av) | ((bv == av) & (bi < ai))
  return lax.select(pick_b, bv, av), lax.select(pick_b, bi, ai)


@pytest.mark.parametrize("n,m", [(1, 3), (2, 1), (7, 3), (9, 4), (1000, 2), (5, 0), (0, 3)])
def test_planned_tree_reduction_gives_the_tree_bits(n, m):
  rng = np.random.default_rng(n + m)
  x = rng.standard_normal((n, m)).astype(np.float32)
  i = np.broadcast_to(np.arange(n, dtype=np.int32)[:, None], (n, m)).copy()
  x[::3] = 0.5    # ties: the order of the pairs decides the index
  closed = jax.make_jaxpr(_argmax_pair)((np.float32(0), np.int32(0)), (np.float32(0), np.int32(0)))
  inits = [np.asarray(-np.inf, np.float32), np.asarray(np.iinfo(np.int32).max, np.int32)]
  want = _reduce_computation.tree_reduce_np(closed, [x, i], inits)
  got = _reduce_computation.tree_reducer(closed, n, m, (x.dtype, i.dtype))([x, i], inits)
  for g, w in zip(got, want):
    assert g.dtype == w.dtype and g.shape == w.shape
    np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))
  if n and m:
    np.testing.assert_array_equal(got[1], np.argmax(x, axis=0))


def test_variadic_reduce_impl_reuses_its_planned_tree():
  x = np.random.default_rng(3).standard_normal((3, 6)).astype(np.float32)
  i = np.broadcast_to(np.arange(6, dtype=np.int32), (3, 6)).copy()
  init = (-np.inf, np.iinfo(np.int32).max)
  for _ in range(2):
    values, index = lax.reduce((x, i), init, _argmax_pair, (1,))
    np.testing.assert_array_equal(values, x.max(1))
    np.testing.assert_array_equal(index, x.argmax(1))
  planned = [k for per in reduce_variadic._reducers.values() for k in per]
  assert (6, 3, (np.dtype(np.float32), np.dtype(np.int32))) in planned


def test_logaddexp_reduce_kernel_matches_numpy():
  def logaddexp(a, b):
    return lax.max(a, b) + lax.log1p(lax.exp(-lax.abs(a - b)))
  x = np.random.default_rng(5).standard_normal((3, 7)).astype(np.float32)
  for dims in ((1,), (0,), (0, 1)):
    for _ in range(2):
      np.testing.assert_allclose(lax.reduce(x, -np.inf, logaddexp, dims),
                                 np.logaddexp.reduce(x, axis=dims), rtol=1e-5, atol=1e-6)
