"""Array creation: ``array``/``asarray`` dtype and weak-type inference, the
``zeros``/``ones``/``full`` family, ranges, grids and diagonals, host
converters. Each is checked against NumPy (values, dtype, weak type), eager
and under ``jit``, and for JAX's errors and warnings."""
import array as pyarray
import io

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import errors, lax


def check(x, expected, dtype=None, weak=False):
  """``x`` is an Array equal to ``expected`` with ``dtype`` and weak type."""
  assert isinstance(x, jax.Array), type(x)
  expected = np.asarray(expected)
  dtype = np.dtype(dtype if dtype is not None else expected.dtype)
  assert x.dtype == dtype, (x.dtype, dtype)
  assert x.shape == expected.shape, (x.shape, expected.shape)
  assert x.weak_type == weak, f"weak_type {x.weak_type} != {weak}"
  np.testing.assert_allclose(np.asarray(x, np.float64) if dtype.kind != "c" else np.asarray(x),
                             expected.astype(np.complex128 if dtype.kind == "c" else np.float64),
                             rtol=1e-6, atol=1e-6)


def check_jit_equal(fn):
  """``jit(fn)()`` gives ``fn()``: values, dtype and weak type."""
  eager, jitted = fn(), jax.jit(fn)()
  for e, j in zip(jax.tree_util.tree_leaves(eager), jax.tree_util.tree_leaves(jitted)):
    assert e.dtype == j.dtype and e.shape == j.shape and e.weak_type == j.weak_type
    np.testing.assert_array_equal(np.asarray(e), np.asarray(j))


# ----------------------------------------------------------------- jnp.array
@pytest.mark.parametrize("value, dtype, weak", [
    (1, np.int32, True), (1.5, np.float32, True), (1 + 2j, np.complex64, True),
    (True, np.bool_, False), (np.float64(1.5), np.float32, False),
    (np.int64(3), np.int32, False), (np.float16(2), np.float16, False),
    ([1, 2], np.int32, False), ([1.0, 2], np.float32, False), ([True, 1], np.int32, False),
    ([True, False], np.bool_, False), ([1, 2.5j], np.complex64, False),
    ([np.float16(1), 2.0], np.float16, False), ([np.int8(1), 100], np.int8, False),
    ((1, 2), np.int32, False), ([[1, 2], (3, 4)], np.int32, False),
    ([], np.float32, False), ([[], []], np.float32, False),
    (np.arange(3.0), np.float32, False), (np.arange(3, dtype=np.uint8), np.uint8, False),
])
def test_array_dtype_inference(value, dtype, weak):
  check(jnp.array(value), np.array(value), dtype, weak)


def test_array_weak_scalars_and_asarray():
  assert jnp.asarray(1.0).weak_type and jnp.asarray(1.0).dtype == np.float32
  assert not jnp.array(1.0, dtype=jnp.float32).weak_type
  assert not jnp.float32(1.0).weak_type
  w = jnp.asarray(2)
  assert jnp.array(w).weak_type and jnp.asarray(w).weak_type


def test_array_x64():
  with jax.enable_x64():
    check(jnp.array(1.5), 1.5, np.float64, True)
    check(jnp.array([1, 2]), [1, 2], np.int64)
    check(jnp.array(np.arange(2.0)), [0, 1], np.float64)
    check(jnp.array(1.5, dtype=jnp.float64), 1.5, np.float64)
  # an x64 array keeps its dtype once made
  with jax.enable_x64():
    x = jnp.array([1.0, 2.0])
  assert jnp.array(x).dtype == np.float64


def test_array_explicit_dtype():
  check(jnp.array([1.7, -2.2], dtype=jnp.int32), [1, -2], np.int32)
  check(jnp.array(3, dtype="bfloat16"), 3, ml_dtypes.bfloat16)
  check(jnp.array([1, 0, 2], dtype=bool), [True, False, True], np.bool_)
  check(jnp.array(jnp.arange(3), dtype=jnp.float16), [0, 1, 2], np.float16)
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64 requested in array"):
    check(jnp.array([1.0], dtype=np.float64), [1.0], np.float32)
  with pytest.raises(ValueError, match="Passing an array as a dtype"):
    jnp.array([1], dtype=jnp.arange(2))


def test_array_mixed_leaves():
  check(jnp.array([jnp.float16(1), 2.5]), [1, 2.5], np.float16)
  check(jnp.array([np.arange(2), jnp.arange(2, 4)]), [[0, 1], [2, 3]], np.int32)
  check(jnp.array([jnp.asarray(1), 2]), [1, 2], np.int32)


def test_array_ndmin_order_copy():
  check(jnp.array(5, ndmin=2), [[5]], np.int32, True)
  check(jnp.array([1, 2], ndmin=3), [[[1, 2]]], np.int32)
  with pytest.raises(NotImplementedError, match="order='K'"):
    jnp.array([1], order="F")
  x = jnp.arange(3)
  y = jnp.array(x)
  assert y is not x
  x.delete()
  check(y, [0, 1, 2], np.int32)
  z = jnp.arange(2)
  assert jnp.asarray(z) is z


def test_array_does_not_alias_host_data():
  host = np.arange(3.0, dtype=np.float32)
  x = jnp.array(host)
  host[0] = 10
  assert float(x[0]) == 0.0
  assert host.flags.writeable


def test_array_protocols():
  check(jnp.array(pyarray.array("i", [2, 3, 5])), [2, 3, 5], np.int32)

  class HasJaxArray:
    def __jax_array__(self):
      return jnp.arange(3, dtype=jnp.int8)
  check(jnp.array(HasJaxArray()), [0, 1, 2], np.int8)
  check(jnp.array([HasJaxArray(), HasJaxArray()]), [[0, 1, 2]] * 2, np.int8)


@pytest.mark.parametrize("bad, exc, match", [
    (None, ValueError, "None is not a valid value for jnp.array"),
    ([1, None], ValueError, "None is not a valid value"),
    (object(), TypeError, "not a valid JAX array type"),
    ("abc", TypeError, None),
    ({"a": 1}, TypeError, None),
    ([[1], [1, 2]], ValueError, "inhomogeneous"),
    (2 ** 40, OverflowError, "too large to convert to int32"),
    ([np.int8(1), 300], OverflowError, None),  # NumPy's check, as in JAX
])
def test_array_errors(bad, exc, match):
  with pytest.raises(exc, match=match):
    jnp.array(bad)


def test_array_under_jit():
  # host data becomes a constant: no equation in the jaxpr
  closed = jax.make_jaxpr(lambda: jnp.array([[1, 2], [3, 4]]))()
  assert not closed.jaxpr.eqns
  check(jax.jit(lambda: jnp.array([[1, 2], [3, 4]]))(), [[1, 2], [3, 4]], np.int32)
  # traced leaves are stacked with lax
  f = lambda x, y: jnp.array([[x, 1.0], [y, x]])
  check(jax.jit(f)(2.0, 3.0), [[2, 1], [3, 2]], np.float32)
  names = {e.primitive.name for e in jax.make_jaxpr(f)(2.0, 3.0).jaxpr.eqns}
  assert "concatenate" in names and "broadcast_in_dim" in names
  # a weak traced scalar stays weak through jnp.asarray
  out = jax.jit(lambda x: jnp.asarray(x))(2.0)
  assert out.weak_type
  check(jax.jit(lambda x: jnp.array(x, dtype=jnp.int8))(np.float32(3.7)), 3, np.int8)
  with pytest.raises(ValueError, match="inhomogeneous shape"):
    jax.jit(lambda x: jnp.array([x, [x, x]]))(1.0)


def test_copy():
  x = jnp.arange(3)
  y = jnp.copy(x)
  assert y is not x
  check(y, [0, 1, 2], np.int32)
  check(jnp.copy(np.ones(2)), [1, 1], np.float32)
  with pytest.raises(TypeError, match="copy requires ndarray or scalar arguments"):
    jnp.copy([1, 2])


# ------------------------------------------------------------- zeros / full
@pytest.mark.parametrize("fn, npfn", [(jnp.zeros, np.zeros), (jnp.ones, np.ones),
                                      (jnp.empty, np.zeros)])
@pytest.mark.parametrize("shape", [3, (2, 3), [2, 1], (), (0, 2), np.array([2, 2]), np.int64(2)])
@pytest.mark.parametrize("dtype", [None, jnp.int32, np.uint8, bool, jnp.bfloat16, "complex64"])
def test_zeros_ones_empty(fn, npfn, shape, dtype):
  out = fn(shape, dtype)
  want = np.dtype(np.float32) if dtype is None else np.dtype(dtype)
  check(out, npfn(tuple(np.atleast_1d(shape)) if np.ndim(shape) else shape, np.float64), want)
  check_jit_equal(lambda: fn(shape, dtype))


def test_zeros_jaxpr_is_broadcast_of_literal():
  text = str(jax.make_jaxpr(lambda: jnp.zeros(3))())
  # Golden from JAX 0.10.2.
  assert text == "{ lambda ; . let a:f32[3] = broadcast_in_dim 0.0:f32[] in (a,) }"


def test_zeros_python_dtypes_and_x64():
  assert jnp.zeros(2, int).dtype == np.int32
  assert jnp.zeros(2, float).dtype == np.float32
  assert jnp.ones(2, complex).dtype == np.complex64
  with pytest.warns(UserWarning, match="float64 requested in zeros"):
    assert jnp.zeros(2, np.float64).dtype == np.float32
  with jax.enable_x64():
    assert jnp.zeros(2).dtype == np.float64
    assert jnp.ones(2, int).dtype == np.int64


@pytest.mark.parametrize("shape, match", [
    ((2.0,), "Shapes must be 1D sequences of concrete values of integer type"),
    ("abc", "Shapes must be"),
    ((i for i in range(2)), "expected sequence object"),
])
def test_zeros_bad_shape(shape, match):
  with pytest.raises(TypeError, match=match):
    jnp.zeros(shape)


def test_negative_shape():
  with pytest.raises(TypeError, match="non-?negative"):
    jnp.zeros((2, -1))


def test_forgot_shape_tuple_message():
  with pytest.raises(TypeError, match=r"Did you accidentally write `jax.numpy.zeros\(2, 3\)`"):
    jnp.zeros(2, 3)


def test_traced_shape_error():
  with pytest.raises(TypeError, match="static_argnums"):
    jax.jit(lambda n: jnp.ones(n))(3)
  check(jax.jit(lambda n: jnp.ones(n), static_argnums=0)(3), [1, 1, 1], np.float32)


@pytest.mark.parametrize("fill, dtype, want, weak", [
    (1.5, None, np.float32, True), (2, None, np.int32, True), (True, None, np.bool_, False),
    (1j, None, np.complex64, True), (1.5, jnp.int32, np.int32, False),
    (np.float16(1.5), None, np.float16, False), (np.int8(3), None, np.int8, False),
])
def test_full_scalar(fill, dtype, want, weak):
  out = jnp.full((2, 3), fill, dtype)
  check(out, np.full((2, 3), fill).astype(want), want, weak)
  check_jit_equal(lambda: jnp.full((2, 3), fill, dtype))


def test_full_array_fill_and_errors():
  check(jnp.full((2, 3), jnp.arange(3)), [[0, 1, 2]] * 2, np.int32)
  check(jnp.full(2, np.array([1.5])), [1.5, 1.5], np.float32)
  check(jax.jit(lambda v: jnp.full((2,), v))(jnp.float32(4)), [4, 4], np.float32)
  with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
    jnp.full((2,), jnp.arange(3))
  with pytest.raises(TypeError, match="full requires ndarray or scalar arguments"):
    jnp.full((2,), [1, 2])


@pytest.mark.parametrize("fn, value", [(jnp.zeros_like, 0), (jnp.ones_like, 1),
                                       (jnp.empty_like, 0)])
def test_like_functions(fn, value):
  x = jnp.zeros((2, 3), jnp.int8)
  check(fn(x), np.full((2, 3), value), np.int8)
  check(fn(x, dtype=jnp.float16), np.full((2, 3), value), np.float16)
  check(fn(x, shape=(4,)), np.full(4, value), np.int8)
  check(fn(x, shape=3), np.full(3, value), np.int8)
  check(fn(2.0), value, np.float32, weak=True)
  check(fn(jnp.asarray(2)), value, np.int32, weak=True)
  check(fn(np.arange(2.0)), np.full(2, value), np.float32)
  check(fn(jax.ShapeDtypeStruct((2,), np.int16)), np.full(2, value), np.int16)
  check(fn(True), value, np.bool_)
  with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
    fn([1, 2])
  check_jit_equal(lambda: fn(jnp.asarray(1.0), shape=(2,)))


def test_full_like():
  x = jnp.zeros((2, 2), jnp.uint8)
  check(jnp.full_like(x, 3.9), np.full((2, 2), 3), np.uint8)
  check(jnp.full_like(x, 2, dtype=jnp.float32, shape=(3,)), [2, 2, 2], np.float32)
  check(jnp.full_like(x, jnp.arange(2)), [[0, 1], [0, 1]], np.uint8)
  check(jnp.full_like(1.0, 2), 2.0, np.float32, weak=True)
  with pytest.raises(TypeError, match="full_like requires ndarray or scalar arguments"):
    jnp.full_like(x, [1, 2])


# ----------------------------------------------------------------- arange
@pytest.mark.parametrize("args, kwargs, want", [
    ((5,), {}, np.int32), ((0,), {}, np.int32), ((-3,), {}, np.int32), ((2, 7), {}, np.int32),
    ((7, 2), {}, np.int32), ((0, 10, 3), {}, np.int32), ((10, 0, -3), {}, np.int32),
    ((5.0,), {}, np.float32), ((0.5, 3.2), {}, np.float32), ((0, 1, 0.1), {}, np.float32),
    ((1, 2, 0.25), {}, np.float32), ((5,), {"dtype": jnp.float32}, np.float32),
    ((3,), {"dtype": jnp.uint8}, np.uint8), ((1, 4), {"dtype": float}, np.float32),
    ((0, 2, 0.5), {"dtype": jnp.float16}, np.float16), ((2.5,), {"dtype": int}, np.int32),
    ((np.int8(4),), {}, np.int8), ((np.float32(1.5), 4), {}, np.float32),
])
def test_arange(args, kwargs, want):
  out = jnp.arange(*args, **kwargs)
  check(out, np.arange(*args, dtype=want), want)
  check_jit_equal(lambda: jnp.arange(*args, **kwargs))


def test_arange_dtypes_follow_jax():
  assert jnp.arange(5).dtype == np.int32
  assert jnp.arange(5.0).dtype == np.float32
  assert jnp.arange(1, 5, 0.5).dtype == np.float32
  assert jnp.arange(jnp.int8(3)).dtype == np.int8
  with jax.enable_x64():
    assert jnp.arange(5).dtype == np.int64
    assert jnp.arange(5.0).dtype == np.float64


def test_arange_jaxpr_is_iota():
  eqns = jax.make_jaxpr(lambda: jnp.arange(4))().jaxpr.eqns
  assert [e.primitive.name for e in eqns] == ["iota"]


def test_arange_concrete_array_args():
  check(jnp.arange(jnp.asarray(4)), [0, 1, 2, 3], np.int32)
  check(jnp.arange(jnp.array(1.0), 3), [1, 2], np.float32)


def test_arange_errors():
  with pytest.raises(errors.ConcretizationTypeError,
                     match="It arose in the jnp.arange argument 'stop'"):
    jax.jit(lambda n: jnp.arange(n))(3)
  with pytest.raises(errors.ConcretizationTypeError,
                     match="It arose in the jnp.arange argument 'start'"):
    jax.jit(lambda n: jnp.arange(n, 5))(3)
  with pytest.raises(errors.ConcretizationTypeError, match="argument 'step'"):
    jax.jit(lambda s: jnp.arange(0, 5, s))(1)
  with pytest.raises(ValueError, match="arguments must be scalars"):
    jnp.arange(np.arange(3))
  with pytest.raises(ValueError, match="complex start/stop/step"):
    jnp.arange(3j)
  with pytest.raises(TypeError, match="arange requires ndarray, scalar, or None arguments"):
    jnp.arange([3])


# -------------------------------------------------------- linspace & co.
@pytest.mark.parametrize("kwargs", [
    {}, {"num": 1}, {"num": 0}, {"num": 2}, {"endpoint": False}, {"num": 7, "dtype": jnp.int32},
    {"num": 4, "dtype": jnp.float16}, {"num": 1, "endpoint": False},
])
def test_linspace_scalars(kwargs):
  out = jnp.linspace(-2, 7, **kwargs)
  kw = dict(kwargs)
  if "dtype" in kw:
    kw["dtype"] = np.dtype(kw["dtype"])
  expected = np.linspace(-2, 7, **kw)
  want = np.dtype(kw.get("dtype", np.float32))
  # float16 arithmetic rounds each step, as XLA's does
  tol = 1e-2 if want == np.float16 else 1e-6
  np.testing.assert_allclose(np.asarray(out, np.float64), expected, atol=tol, rtol=tol)
  assert out.dtype == want and not out.weak_type
  check_jit_equal(lambda: jnp.linspace(-2, 7, **kwargs))


def test_linspace_exact_endpoints_and_retstep():
  out = jnp.linspace(0.1, 0.7, 13)
  assert float(out[0]) == np.float32(0.1) and float(out[-1]) == np.float32(0.7)
  vals, step = jnp.linspace(0, 1, 5, retstep=True)
  check(vals, [0, 0.25, 0.5, 0.75, 1], np.float32)
  check(step, 0.25, np.float32)
  _, step = jnp.linspace(0, 1, 1, retstep=True)
  assert np.isnan(float(step))
  _, step = jnp.linspace(0, 1, 0, retstep=True)
  assert np.isnan(float(step))
  _, step = jnp.linspace(0, 1, 1, endpoint=False, retstep=True)
  assert float(step) == 1.0


def test_linspace_errors():
  with pytest.raises(ValueError, match="Number of samples, -1, must be non-negative"):
    jnp.linspace(0, 1, -1)
  with pytest.raises(errors.ConcretizationTypeError, match="'num' argument of jnp.linspace"):
    jax.jit(lambda n: jnp.linspace(0, 1, n))(3)
  with pytest.raises(ValueError, match="out of bounds"):
    jnp.linspace(jnp.zeros(2), 1, 3, axis=2)
  # start and stop may be traced
  check(jax.jit(lambda a: jnp.linspace(a, 1, 3))(0.0), [0, 0.5, 1], np.float32)


def test_logspace_geomspace_scalars():
  check(jnp.logspace(0, 2, 3), [1, 10, 100], np.float32)
  check(jnp.logspace(0, 3, 4, base=2, endpoint=False), np.logspace(0, 3, 4, base=2,
                                                                   endpoint=False), np.float32)
  check(jnp.logspace(0, 2, 3, dtype=jnp.int32), [1, 10, 100], np.int32)
  check(jnp.geomspace(1, 16, 5), [1, 2, 4, 8, 16], np.float32)
  check(jnp.geomspace(-1, -1000, 4), [-1, -10, -100, -1000], np.float32)
  check(jnp.geomspace(2, 32, 3, endpoint=False), np.geomspace(2, 32, 3, endpoint=False),
        np.float32)
  check_jit_equal(lambda: jnp.geomspace(1, 16, 5))
  check_jit_equal(lambda: jnp.logspace(0, 2, 3))


# ------------------------------------------------------ eye / tri / diag
@pytest.mark.parametrize("N, M, k", [(3, None, 0), (2, 4, 1), (4, 2, -1), (3, 3, 5), (0, 2, 0),
                                     (3, None, -3)])
@pytest.mark.parametrize("dtype", [None, jnp.int32, bool])
def test_eye_tri(N, M, k, dtype):
  want = np.dtype(np.float32) if dtype is None else np.dtype(dtype)
  check(jnp.eye(N, M, k, dtype), np.eye(N, M, k), want)
  check(jnp.tri(N, M, k, dtype), np.tri(N, M, k), want)
  check_jit_equal(lambda: jnp.eye(N, M, k, dtype))
  check_jit_equal(lambda: jnp.tri(N, M, k, dtype))


def test_eye_identity_misc():
  check(jnp.identity(3), np.identity(3), np.float32)
  check(jnp.identity(2, dtype=jnp.int8), np.identity(2), np.int8)
  check(jax.jit(lambda k: jnp.eye(3, k=k))(1), np.eye(3, k=1), np.float32)
  with jax.enable_x64():
    assert jnp.eye(2).dtype == np.float64
    assert jnp.tri(2).dtype == np.float32  # JAX keeps float32 here
  with pytest.raises(ValueError, match="negative dimensions are not allowed"):
    jnp.eye(-1)
  with pytest.raises(ValueError, match="k must be a scalar integer"):
    jnp.eye(3, k=1.5)
  with pytest.raises(TypeError, match="offset must be an integer"):
    jnp.tri(3, k=0.5)


def test_diag_diagflat():
  check(jnp.diag(jnp.arange(3)), np.diag(np.arange(3)), np.int32)
  check(jnp.diag(jnp.arange(2), -2), np.diag(np.arange(2), -2), np.int32)
  check(jnp.diag(2.0 * np.ones(2)), np.diag(2.0 * np.ones(2)), np.float32)
  m = np.arange(12).reshape(3, 4)
  for k in (-1, 0, 2):
    check(jnp.diag(m, k), np.diag(m, k), np.int32)
  check(jnp.diagflat(np.array([[1, 2], [3, 4]]), 1), np.diagflat([[1, 2], [3, 4]], 1),
        np.int32)
  check(jnp.diagflat(3.0), np.diagflat(3.0), np.float32)
  with pytest.raises(ValueError, match="diag input must be 1d or 2d"):
    jnp.diag(np.zeros((2, 2, 2)))
  with pytest.raises(TypeError, match="diag requires ndarray or scalar arguments"):
    jnp.diag([1, 2])


# ----------------------------------------------------------- grids / indices
def test_meshgrid():
  x, y = np.arange(3), np.arange(4.0)
  for indexing in ("xy", "ij"):
    for sparse in (False, True):
      got = jnp.meshgrid(x, y, indexing=indexing, sparse=sparse)
      want = np.meshgrid(x, y, indexing=indexing, sparse=sparse)
      assert isinstance(got, tuple) and len(got) == 2
      for g, w in zip(got, want):
        check(g, w, jax.dtypes.canonicalize_dtype(w.dtype))
  assert jnp.meshgrid() == ()
  check(jnp.meshgrid(x)[0], x, np.int32)
  with pytest.raises(ValueError, match="Valid values for indexing are 'xy' and 'ij'"):
    jnp.meshgrid(x, indexing="yx")
  with pytest.raises(ValueError, match="must be 1D"):
    jnp.meshgrid(np.zeros((2, 2)))
  with pytest.raises(ValueError, match="only supports copy=True"):
    jnp.meshgrid(x, copy=False)


@pytest.mark.parametrize("dims", [(2, 3), (4,), (), (2, 0, 3)])
@pytest.mark.parametrize("sparse", [False, True])
def test_indices(dims, sparse):
  got = jnp.indices(dims, sparse=sparse)
  want = np.indices(dims, sparse=sparse)
  if sparse:
    assert len(got) == len(want)
    for g, w in zip(got, want):
      check(g, w, np.int32)
  else:
    check(got, want, np.int32)
  check(jnp.indices((2,), dtype=jnp.float32), [[0, 1]], np.float32)


def test_fromfunction():
  check(jnp.fromfunction(lambda i, j: lax.add(lax.mul(i, 10.0), j), (2, 3)),
        np.fromfunction(lambda i, j: i * 10 + j, (2, 3)), np.float32)
  check(jnp.fromfunction(lambda i: i, (3,), dtype=int), [0, 1, 2], np.int32)


# ------------------------------------------------------------ host converters
def test_frombuffer_fromstring():
  buf = np.arange(4, dtype=np.int16).tobytes()
  check(jnp.frombuffer(buf, dtype=jnp.int16), [0, 1, 2, 3], np.int16)
  check(jnp.frombuffer(buf, dtype=np.int16, count=2, offset=2), [1, 2], np.int16)
  check(jnp.frombuffer(np.ones(2).tobytes()), [1, 1], np.float32)
  check(jnp.fromstring("1 2 3", dtype=int, sep=" "), [1, 2, 3], np.int32)
  with pytest.raises(NotImplementedError, match="jnp.fromfile"):
    jnp.fromfile("x")
  with pytest.raises(NotImplementedError, match="jnp.fromiter"):
    jnp.fromiter(iter([1]))


def test_from_dlpack():
  check(jnp.from_dlpack(np.arange(3, dtype=np.int16)), [0, 1, 2], np.int16)
  x = jnp.arange(3.0)
  check(jnp.from_dlpack(x), [0, 1, 2], np.float32)
  with pytest.raises(TypeError, match="__dlpack__"):
    jnp.from_dlpack([1, 2])


def test_save_load_roundtrip():
  for x in (jnp.arange(4.0), jnp.arange(3, dtype=jnp.bfloat16)):
    f = io.BytesIO()
    jnp.save(f, x)
    f.seek(0)
    y = jnp.load(f)
    check(y, np.asarray(x).astype(np.float32), x.dtype)
