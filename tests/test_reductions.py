"""Reductions: errors, result dtypes (JAX's promotion rules), weak types, NaN
handling and printed jaxprs (the op table checks values)."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.lax import _convert_element_type
from openjax._src.primitives.reduce import reductions
from openjax.errors import ConcretizationTypeError

F32 = np.float32


def _x(shape=(3, 4), dtype=F32):
  return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def _weak(value, shape=(3,)):
  """A weakly typed float32 array (what Python scalars become)."""
  return lax.broadcast_in_dim(_convert_element_type(value, F32, weak_type=True), shape, ())


# ------------------------------------------------------------- lax errors
def test_reduce_axes_errors():
  with pytest.raises(ValueError, match=r"reduction axes \(2,\) contains out-of-bounds"):
    lax.reduce_sum(_x(), (2,))
  with pytest.raises(ValueError, match="duplicate value in 'axes' of reduction"):
    lax.reduce_max(_x(), (0, 0))
  with pytest.raises(ValueError, match="out-of-bounds"):
    jax.make_jaxpr(lambda x: lax.reduce_min(x, (-1,)))(_x())


def test_reduce_dtype_errors():
  b = np.array([True, False])
  with pytest.raises(TypeError, match="reduce_sum does not accept dtype bool"):
    lax.reduce_sum(b, (0,))
  with pytest.raises(TypeError, match="reduce_prod does not accept dtype bool"):
    lax.reduce_prod(b, (0,))
  with pytest.raises(TypeError, match="logical reduction requires operand dtype bool or int"):
    lax.reduce_or(_x(), (0,))
  assert lax.reduce_max(b, (0,)).dtype == np.bool_


def test_argminmax_errors():
  with pytest.raises(ValueError, match="require non-empty reduced dimension"):
    lax.argmax(np.zeros((0, 3), F32), 0, np.int32)
  with pytest.raises(ValueError, match="Invalid axis 2 for operand shape"):
    lax.argmin(_x(), 2, np.int32)
  with pytest.raises(TypeError, match="index_dtype must be an integer type"):
    lax.argmax(_x(), 0, np.float32)


def test_cumulative_errors():
  with pytest.raises(ValueError, match="XLA operations do not allow negative axes"):
    lax.cumsum(_x(), -1)
  with pytest.raises(ValueError, match="axis 2 is out of bounds for array of shape"):
    lax.cumprod(_x(), 2)
  with pytest.raises(TypeError, match="cummax does not accept dtype bool"):
    lax.cummax(np.array([True]), 0)


# ------------------------------------------------------------- jnp errors
def test_jnp_argument_errors():
  x = _x()
  with pytest.raises(NotImplementedError, match="The 'out' argument to jnp.sum is not supported"):
    jnp.sum(x, out=np.zeros(4))
  with pytest.raises(ValueError, match="reduction operation max does not have an identity"):
    jnp.max(x, where=x > 2)
  with pytest.raises(ValueError, match="zero-size array to reduction operation min"):
    jnp.min(np.zeros((0, 2), F32), axis=0)
  with pytest.raises(ValueError, match="duplicate value in 'axis'"):
    jnp.sum(x, axis=(0, -2))
  with pytest.raises(ValueError, match="out of bounds"):
    jnp.mean(x, axis=2)
  with pytest.raises(ValueError, match="where must be None or a boolean array"):
    jnp.sum(x, where=np.ones((3, 4), np.int32))
  with pytest.raises(ValueError, match="initial value must be a scalar"):
    jnp.sum(x, initial=np.ones(2, F32))
  with pytest.raises(ValueError, match="ddof and correction can't be provided simultaneously"):
    jnp.var(x, ddof=1, correction=1)
  with pytest.raises(ValueError, match="dtype argument to jnp.std must be inexact"):
    jnp.std(x, dtype=np.int32)
  with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
    jnp.argmax(np.zeros((0,), F32))
  with pytest.raises(ValueError, match="non-scalar to take a cumulative sum"):
    jnp.cumulative_sum(np.float32(1))
  with pytest.raises(ValueError, match="axis was not set to an explicit value"):
    jnp.cumulative_prod(x)
  with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
    jnp.sum([1, 2, 3])


def test_axis_must_be_static():
  with pytest.raises(ConcretizationTypeError):
    jax.jit(lambda x, a: jnp.sum(x, axis=a))(_x(), 0)
  assert jax.jit(jnp.sum, static_argnames="axis")(_x(), axis=1).shape == (3,)


# ------------------------------------------------------------- dtypes
@pytest.mark.parametrize("fn, in_dtype, out_dtype", [
    (jnp.sum, np.int8, np.int32), (jnp.sum, np.uint8, np.uint32), (jnp.sum, np.bool_, np.int32),
    (jnp.sum, np.float16, np.float16), (jnp.prod, np.bool_, np.int32),
    (jnp.prod, np.int16, np.int32), (jnp.max, np.bool_, np.bool_), (jnp.max, np.int8, np.int8),
    (jnp.mean, np.int32, np.float32), (jnp.mean, np.bool_, np.float32),
    (jnp.mean, np.float16, np.float16), (jnp.var, np.int8, np.float32),
    (jnp.std, np.uint8, np.float32), (jnp.var, np.complex64, np.float32),
    (jnp.all, np.float32, np.bool_), (jnp.any, np.int32, np.bool_),
    (jnp.count_nonzero, np.float32, np.int32), (jnp.argmax, np.float16, np.int32),
    (jnp.cumsum, np.int8, np.int8), (jnp.cumsum, np.bool_, np.int32),
    (jnp.cumprod, np.uint8, np.uint8), (jnp.cumulative_sum, np.int8, np.int32),
    (jnp.cumulative_sum, np.bool_, np.int32), (jnp.cumulative_prod, np.int8, np.int8),
    (jnp.nansum, np.int8, np.int32), (jnp.nanmean, np.int32, np.float32),
    (jnp.nanvar, np.float16, np.float16), (jnp.nancumsum, np.int16, np.int16),
    (jnp.ptp, np.uint8, np.uint8), (jnp.nanargmin, np.float32, np.int32),
])
def test_result_dtypes(fn, in_dtype, out_dtype):
  x = np.ones((4,), in_dtype)
  out = fn(x)
  assert out.dtype == out_dtype
  assert jax.jit(fn)(x).dtype == out_dtype


def test_promote_integers_false_and_dtype_argument():
  x = np.ones((4,), np.int8)
  assert jnp.sum(x, promote_integers=False).dtype == np.int8
  assert jnp.prod(x, dtype=np.float16).dtype == np.float16
  assert jnp.sum(np.ones(3, np.float16), dtype=np.float32).dtype == np.float32
  assert jnp.mean(x, dtype=np.float16).dtype == np.float16


def test_x64_dtypes():
  with jax.enable_x64(True):
    x = np.ones((4,), np.int32)
    assert jnp.sum(x).dtype == np.int64
    assert jnp.sum(x, promote_integers=False).dtype == np.int32
    assert jnp.mean(x).dtype == np.float32   # JAX 0.10.2: int32 -> float32 even with x64
    assert jnp.argmax(x).dtype == np.int64
    assert jnp.cumsum(x).dtype == np.int32
    assert jnp.cumulative_sum(x).dtype == np.int64
    assert jnp.sum(np.ones(3, np.uint8)).dtype == np.uint64


def test_float64_dtype_request_warns_and_truncates():
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
    out = jnp.sum(_x(), dtype=np.float64)
  assert out.dtype == np.float32


# ------------------------------------------------------------- weak types
def test_lax_reductions_keep_weak_type():
  w = _weak(2.0)
  for f in (lambda x: lax.reduce_sum(x, (0,)), lambda x: lax.reduce_max(x, (0,)),
            lambda x: lax.reduce_prod(x, (0,)), lambda x: lax.cumsum(x, 0),
            lambda x: lax.cummax(x, 0, reverse=True)):
    assert f(w).weak_type
    assert jax.jit(f)(w).weak_type
  assert not lax.argmax(w, 0, np.int32).weak_type
  iw = lax.broadcast_in_dim(_convert_element_type(3, np.int32, weak_type=True), (2,), ())
  assert not lax.reduce_or(iw, (0,)).weak_type


def test_jnp_reductions_are_strongly_typed():
  for f in (jnp.sum, jnp.max, jnp.mean, jnp.var, jnp.nansum, jnp.cumsum, jnp.prod):
    assert not f(2.0).weak_type
    assert not f(_weak(1.5)).weak_type
  assert jnp.sum(2.0).dtype == np.float32
  assert jnp.sum(3).dtype == np.int32


# ------------------------------------------------------------- NaN handling
def test_nan_propagation_and_ignoring():
  x = np.array([[1.0, np.nan, 3.0], [2.0, 0.5, -1.0]], F32)
  np.testing.assert_array_equal(jnp.max(x, axis=1), [np.nan, 2.0])
  np.testing.assert_array_equal(jnp.min(x, axis=1), [np.nan, -1.0])
  np.testing.assert_array_equal(jnp.argmax(x, axis=1), [1, 0])
  np.testing.assert_array_equal(jnp.argmin(x, axis=1), [1, 2])   # NaN counts as the minimum too
  np.testing.assert_array_equal(jnp.nanargmax(x, axis=1), [2, 0])
  np.testing.assert_array_equal(jnp.nanmax(x, axis=1), [3.0, 2.0])
  np.testing.assert_array_equal(lax.cummax(x, 1), [[1.0, np.nan, np.nan], [2.0, 2.0, 2.0]])
  np.testing.assert_allclose(jnp.nanmean(x, axis=1), [2.0, 0.5])
  assert np.isnan(jnp.nanmax(np.full(3, np.nan, F32)))
  assert int(jnp.nanargmin(np.full(3, np.nan, F32))) == -1
  assert float(jnp.nanmax(np.full(3, np.nan, F32), initial=-5.0)) == -5.0


def test_argmax_first_occurrence():
  x = np.array([1, 3, 3, 0, 3], np.int32)
  assert int(jnp.argmax(x)) == 1
  assert int(lax.argmin(np.array([2.0, 0.0, 0.0], F32), 0, np.int32)) == 1


def test_empty_reductions():
  e = np.zeros((0, 3), F32)
  np.testing.assert_array_equal(jnp.sum(e, axis=0), np.zeros(3))
  np.testing.assert_array_equal(jnp.prod(e, axis=0), np.ones(3))
  assert np.isnan(jnp.mean(e, axis=0)).all()
  np.testing.assert_array_equal(jnp.max(e, axis=0, initial=1.0), np.ones(3))
  np.testing.assert_array_equal(lax.reduce_min(np.zeros((0,), np.int8), (0,)), 127)


# ------------------------------------------------------------- jaxprs
def test_sum_jaxpr():
  text = str(jax.make_jaxpr(jnp.sum)(_x()))
  assert text == ("{ lambda ; a:f32[3,4]. let\n"
                  "    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a\n"
                  "  in (b,) }")


def test_primitive_params_print_like_jax():
  x = _x()
  text = str(jax.make_jaxpr(lambda x: (lax.argmax(x, 1, np.int32), lax.cumsum(x, 0, True),
                                       lax.reduce_and(x > 1, (0,))))(x))
  assert "argmax[axes=(1,) index_dtype=int32] a" in text
  assert "cumsum[axis=0 reverse=True] a" in text
  assert "reduce_and[axes=(0,)]" in text


def test_mean_of_int_jaxpr():
  text = str(jax.make_jaxpr(lambda x: jnp.mean(x, axis=0))(np.ones((2, 3), np.int32)))
  assert "convert_element_type[new_dtype=float32 weak_type=False] a" in text
  assert "reduce_sum[axes=(0,) out_sharding=None]" in text
  assert "div" in text and "2.0:f32[]" in text


def test_jit_matches_eager_with_keepdims_where():
  x = _x()
  w = x % 3 == 0
  f = lambda x, w: jnp.var(x, axis=1, keepdims=True, where=w)  # noqa: E731
  np.testing.assert_allclose(jax.jit(f)(x, w), f(x, w))
  np.testing.assert_allclose(f(x, w), np.var(x, axis=1, keepdims=True, where=w))


# ------------------------------------------------------------ transformations
# Expected values are JAX 0.10.2's (printed by the JAX venv), stored as data.
_TIES = np.array([[1., 3., 3.], [3., 0., 2.]], F32)


def test_grad_max_with_ties_averages_like_jax():
  # JAX's "location indicators": the tangent is split evenly among tied maxima.
  np.testing.assert_allclose(jax.grad(lambda x: jnp.max(x))(_TIES),
                             [[0., 1 / 3, 1 / 3], [1 / 3, 0., 0.]], rtol=1e-6)
  np.testing.assert_allclose(jax.grad(lambda x: jnp.max(x, axis=1).sum())(_TIES),
                             [[0., .5, .5], [1., 0., 0.]])
  np.testing.assert_allclose(
      jax.grad(lambda x: (jnp.min(x, axis=0) * jnp.array([1., 2., 3.])).sum())(_TIES),
      [[1., 0., 0.], [0., 2., 3.]])
  # `initial` ties with the data: the initial value takes a share too.
  np.testing.assert_allclose(jax.grad(lambda x: jnp.max(x, axis=1, initial=3.0).sum())(_TIES),
                             [[0., .25, .25], [.5, 0., 0.]])
  np.testing.assert_allclose(jax.grad(lambda x: jnp.ptp(x))(_TIES),
                             [[0., 1 / 3, 1 / 3], [1 / 3, -1., 0.]], rtol=1e-6)


def test_jvp_reduce_max_ties_and_vmap():
  t = np.arange(6, dtype=F32).reshape(2, 3)
  _, tan = jax.jvp(lambda x: lax.reduce_max(x, (1,)), (_TIES,), (t,))
  np.testing.assert_allclose(tan, [1.5, 3.])
  g = jax.vmap(jax.grad(lambda x: jnp.max(x)))(_TIES)
  np.testing.assert_allclose(g, [[0., .5, .5], [1., 0., 0.]])


_ZEROS = np.array([[2., 0., 3., .5], [0., 0., 4., 1.], [1.5, -2., .5, 3.]], F32)


def test_grad_prod_with_zeros():
  g = jax.grad(lambda x: (jnp.prod(x, axis=1) * jnp.array([1., 2., 3.])).sum())(_ZEROS)
  np.testing.assert_allclose(g, [[0., 3., 0., 0.], [0., 0., 0., 0.], [-9., 6.75, -27., -4.5]])
  np.testing.assert_allclose(jax.grad(lambda x: jnp.prod(x[0]))(_ZEROS),
                             [[0., 3., 0., 0.], [0.] * 4, [0.] * 4])


def test_hessian_prod_with_zeros():
  h0 = jax.jacfwd(jax.grad(jnp.prod))(_ZEROS[0])
  np.testing.assert_allclose(h0, [[0., 1.5, 0., 0.], [1.5, 0., 1., 6.], [0., 1., 0., 0.],
                                  [0., 6., 0., 0.]])
  h1 = jax.jacrev(jax.grad(jnp.prod))(_ZEROS[1])
  np.testing.assert_allclose(h1, [[0., 4., 0., 0.], [4., 0., 0., 0.], [0.] * 4, [0.] * 4])


_Z = np.array([[.5, -1., 2., .25], [1.5, 3., -.5, 1.]], F32)


@pytest.mark.parametrize("name,fn,expected", [
    ("mean", lambda x: jnp.mean(x, axis=1), [[.25] * 4, [.5] * 4]),
    ("var", lambda x: jnp.var(x, axis=1),
     [[.03125, -.71875, .78125, -.09375], [.25, 1.75, -1.75, -.25]]),
    ("std", lambda x: jnp.std(x, axis=1),
     [[.014655262, -.33707097, .36638153, -.04396578], [.1, .7, -.7, -.1]]),
    ("var_ddof1", lambda x: jnp.var(x, axis=0, ddof=1),
     [[-1., -8., 7.5, -3.], [1., 8., -7.5, 3.]]),
    ("std_all", lambda x: jnp.std(x),
     [[-.034913775, -.18726479, .11743724, -.06030561],
      [.06665357, .21900459, -.13648112, .015869897]]),
])
def test_grad_mean_var_std(name, fn, expected):
  def loss(x):
    y = fn(x)
    return (y * jnp.arange(1., 1. + y.size).reshape(y.shape)).sum()
  np.testing.assert_allclose(jax.grad(loss)(_Z), expected, rtol=2e-6, atol=1e-7)


def test_grad_std_of_constant_is_nan_like_jax():
  ones = np.ones(3, F32)
  assert np.isnan(np.asarray(jax.grad(jnp.std)(ones))).all()
  np.testing.assert_array_equal(jax.grad(jnp.var)(ones), [0., 0., 0.])


_C = np.array([1., 3., 3., 2., 5., 5.], F32)
_T = np.arange(6, dtype=F32)


@pytest.mark.parametrize("name,fn,jvp_expected,vjp_expected", [
    # ties split as JAX's associative-scan JVP splits them
    ("cummax", lambda x: lax.cummax(x), [0., 1., 1.5, 1.5, 4., 4.5],
     [0., 3.5, 2.5, 0., 6.5, 2.5]),
    ("cummin_rev", lambda x: lax.cummin(x, reverse=True), [0., 3., 3., 3., 4.5, 5.],
     [0., 0., 0., 6., 2., 7.]),
    ("cumprod", lambda x: lax.cumprod(x), [0., 1., 9., 45., 297., 1935.],
     [2685., 895., 894., 1332., 522., 450.]),
    ("cumlogsumexp", lambda x: lax.cumlogsumexp(x),
     [0., .880797, 1.4049317, 1.6393473, 3.4026425, 4.0856323],
     [.50203466, 3.7095625, 2.8287656, .69608104, 5.125683, 2.137873]),
    ("cumsum_rev", lambda x: lax.cumsum(x, reverse=True), [15., 15., 14., 12., 9., 5.],
     [0., 1., 3., 6., 10., 15.]),
])
def test_cumulative_jvp_vjp_match_jax(name, fn, jvp_expected, vjp_expected):
  _, tan = jax.jvp(fn, (_C,), (_T,))
  np.testing.assert_allclose(tan, jvp_expected, rtol=1e-6)
  _, pullback = jax.vjp(fn, _C)
  np.testing.assert_allclose(pullback(_T)[0], vjp_expected, rtol=1e-6)


def test_cumprod_with_zeros_grad():
  x = np.array([2., 0., 3., 0., 1.5], F32)
  t = np.arange(5, dtype=F32)
  np.testing.assert_allclose(jax.jvp(lax.cumprod, (x,), (t,))[1], [0., 2., 6., 0., 0.])
  np.testing.assert_allclose(jax.vjp(lax.cumprod, x)[1](t)[0], [0., 14., 0., 0., 0.])


@pytest.mark.parametrize("k", [1, 2, 3, 8, 9])
@pytest.mark.parametrize("axis", [0, 1])
def test_bool_argmax_argmin_along_a_short_axis(k, axis, monkeypatch):
  # Large bool operands reduced along a short axis other than the last pack
  # the slices' bits (reductions._bool_first_index, up to 8 slices); NumPy's
  # first True / first False, 0 where there is none; transposed operands too.
  packed = []
  kernel = reductions._bool_first_index
  monkeypatch.setattr(reductions, "_bool_first_index",
                      lambda *a: packed.append(1) or kernel(*a))
  rng = np.random.default_rng(k)
  shape = [130, 130, 130]
  shape[axis] = k
  x = rng.random(shape) < 0.3
  x[(slice(None),) * axis + (slice(None), 0)] = False   # columns of no True
  x[(slice(None),) * axis + (slice(None), 1)] = True    # and of no False
  for operand in (x, np.swapaxes(x, 2, 1 - axis)):
    for ax in range(operand.ndim - 1):
      if operand.shape[ax] != k:
        continue
      for jf, nf in ((jnp.argmax, np.argmax), (jnp.argmin, np.argmin)):
        got = jf(jnp.asarray(operand), axis=ax)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(np.asarray(got), nf(operand, axis=ax))
        np.testing.assert_array_equal(np.asarray(lax.argmax(jnp.asarray(operand), ax, np.int8)
                                                 if jf is jnp.argmax else
                                                 lax.argmin(jnp.asarray(operand), ax, np.int8)),
                                      nf(operand, axis=ax).astype(np.int8))
  assert bool(packed) == (k <= 8)


def test_argmax_tangent_is_float0():
  out, tan = jax.jvp(lambda x: jnp.argmax(x), (_C,), (_T,))
  assert int(out) == 4
  assert np.asarray(tan).dtype == jax.dtypes.float0
  np.testing.assert_array_equal(jax.grad(lambda x: x[jnp.argmax(x)])(_C),
                                [0., 0., 0., 0., 1., 0.])


def test_reductions_under_vmap_and_jit_of_grad():
  x = np.random.default_rng(0).standard_normal((4, 3, 5)).astype(F32)
  for f in (lambda v: jnp.max(v, axis=0), lambda v: jnp.prod(v, axis=-1),
            lambda v: lax.cumprod(v, 1), lambda v: lax.cumlogsumexp(v, 0, reverse=True)):
    for ax in (0, 1, 2):
      got = jax.vmap(f, in_axes=ax)(x)
      want = np.stack([np.asarray(f(np.take(x, i, axis=ax))) for i in range(x.shape[ax])])
      np.testing.assert_allclose(got, want, rtol=1e-6)
  g = jax.jit(jax.grad(lambda v: jnp.prod(v[0]) + lax.cummax(v, 1).sum()))(x)
  g_eager = jax.grad(lambda v: jnp.prod(v[0]) + lax.cummax(v, 1).sum())(x)
  np.testing.assert_allclose(g, g_eager, rtol=1e-6)


def test_second_derivative_of_cumlogsumexp_at_ties_like_jax():
  # JAX differentiates logaddexp through its custom_jvp: exact at ties too.
  c = np.array([2., 5., 5.], F32)
  h = jax.jacrev(jax.jacfwd(lax.cumlogsumexp))(c)
  np.testing.assert_allclose(h[2], [[.02369895, -.01184948, -.01184948],
                                    [-.01184948, .24985252, -.2380031],
                                    [-.01184948, -.23800309, .24985251]], rtol=2e-5, atol=1e-7)
  np.testing.assert_allclose(h[1], [[.04517666, -.04517666, 0.], [-.04517666, .04517663, 0.],
                                    [0., 0., 0.]], rtol=2e-5, atol=1e-7)


# ------------------------------------------------------ compiled (IREE)
def _sample(rng, dtype, shape=(5, 7)):
  dt = np.dtype(dtype)
  if dt == np.bool_:
    return rng.random(shape) < 0.5
  if dt.kind in "iu":
    info = np.iinfo(dt)
    x = rng.integers(max(info.min, -6), min(info.max, 6) + 1, shape).astype(dt)
    x.flat[0], x.flat[-1] = info.min, info.max
    return x
  x = (np.round(rng.standard_normal(shape) * 4) / 4).astype(dt)   # ties
  if dt.kind == "c":
    x = x + 1j * np.round(rng.standard_normal(shape) * 4).astype(dt) / 4
    x.flat[[2, 8]] = complex(np.nan, 1), complex(1, np.nan)
    return x.astype(dt)
  x.flat[[3, 12]] = np.nan
  x.flat[5], x.flat[20] = np.inf, -np.inf
  return x


def _all_reductions(xs):
  out = {}
  for name, x in xs.items():
    dt = np.dtype(x.dtype)
    r = out[name] = {}
    empty = x[:0]
    for ax in ((0,), (1,), (0, 1), ()):
      r[f"max{ax}"] = lax.reduce_max(x, ax)
      r[f"min{ax}"] = lax.reduce_min(x, ax)
    r["max_empty"] = lax.reduce_max(empty, (0,))
    r["min_empty"] = lax.reduce_min(empty, (0,))
    for axis in (0, 1):
      r[f"argmax{axis}"] = lax.argmax(x, axis, np.int32)
      r[f"argmin{axis}"] = lax.argmin(x, axis, np.int32)
    if dt.kind in "iub":
      for op in (lax.reduce_and, lax.reduce_or, lax.reduce_xor):
        r[op.__name__] = (op(x, (1,)), op(x, (0, 1)), op(empty, (0,)))
    if dt.kind != "b":
      r["prod"] = (lax.reduce_prod(x, (1,)), lax.reduce_prod(empty, (0,)))
      for rev in (False, True):
        for axis in (0, 1):
          r[f"cumsum{axis}{rev}"] = lax.cumsum(x, axis, rev)
          r[f"cumprod{axis}{rev}"] = lax.cumprod(x, axis, rev)
          r[f"cummax{axis}{rev}"] = lax.cummax(x, axis, rev)
          r[f"cummin{axis}{rev}"] = lax.cummin(x, axis, rev)
          if dt.kind == "f":
            r[f"cumlogsumexp{axis}{rev}"] = lax.cumlogsumexp(x, axis, rev)
  return out


def _compare_compiled(got, want):
  for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
    g, w = np.asarray(g), np.asarray(w)
    assert g.dtype == w.dtype and g.shape == w.shape
    if g.dtype.kind in "fc" or g.dtype == jnp.bfloat16:
      # max/min/cummax exact; products and sums within rounding of their order
      tol = 1e-2 if g.dtype in (np.float16, jnp.bfloat16) else 1e-6
      np.testing.assert_allclose(g.astype(np.complex128), w.astype(np.complex128),
                                 rtol=tol, atol=tol, equal_nan=True)
    else:
      np.testing.assert_array_equal(g, w)


def test_compiled_reductions_of_every_dtype_match_eager():
  rng = np.random.default_rng(0)
  xs = {str(np.dtype(dt)): _sample(rng, dt) for dt in (
      np.float32, np.float16, jnp.bfloat16, np.int32, np.int8, np.uint8, np.uint32, np.bool_,
      np.complex64)}
  # first occurrences among NaNs, signed zeros and infinities
  xs["special"] = np.array([[np.nan, 2.0, np.nan, 2.0], [-0.0, 0.0, -1.0, 0.0],
                            [-np.inf, -np.inf, -np.inf, -np.inf], [1.0, np.inf, np.nan, np.inf]],
                           np.float32)
  with jax.config.override("openjax_executor", "iree"):
    got = jax.jit(_all_reductions)(xs)
  _compare_compiled(got, _all_reductions(xs))


def test_compiled_reductions_x64_and_long_cumulative():
  rng = np.random.default_rng(1)
  with jax.enable_x64():
    xs = {str(np.dtype(dt)): _sample(rng, dt) for dt in (np.float64, np.int64, np.uint64)}
    with jax.config.override("openjax_executor", "iree"):
      got = jax.jit(_all_reductions)(xs)
    _compare_compiled(got, _all_reductions(xs))
  # A long scan lowers to one full-axis reduce_window, scanned linearly.
  x = rng.integers(-3, 4, (3, 100_000)).astype(np.int32)
  with jax.config.override("openjax_executor", "iree"):
    got = jax.jit(lambda x: (lax.cumsum(x, 1), lax.cummax(x, 1, reverse=True)))(x)
  np.testing.assert_array_equal(got[0], np.cumsum(x, 1, dtype=np.int32))
  np.testing.assert_array_equal(got[1], np.flip(np.maximum.accumulate(np.flip(x, 1), 1), 1))
