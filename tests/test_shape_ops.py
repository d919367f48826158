"""Shape family: errors (types and messages), weak types, dtype promotion,
method forms, printed jaxprs, transformation rules and the cases the op table
cannot express."""
import re

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core import check_jaxpr
from openjax._src.numpy import indexing
from openjax._src.numpy import reductions
from openjax.errors import ConcretizationTypeError

X = np.arange(6, dtype=np.float32).reshape(2, 3)


def _same(a, b):
  assert isinstance(a, jax.Array), type(a)
  np.testing.assert_array_equal(np.asarray(a), b)
  assert np.asarray(a).dtype == np.asarray(b).dtype, (np.asarray(a).dtype, np.asarray(b).dtype)


# ------------------------------------------------------------- lax errors
@pytest.mark.parametrize("fn, exc, match", [
    (lambda: lax.squeeze(X, (0,)), ValueError, "cannot select an axis to squeeze out"),
    (lambda: lax.squeeze(X, (2,)), ValueError, "out of bounds"),
    (lambda: lax.expand_dims(X, (0, 0)), ValueError, "repeated axis in lax.expand_dims"),
    (lambda: lax.expand_dims(X, (-1, 3)), ValueError, "repeated axis"),
    (lambda: lax.transpose(X, (0, 0)), TypeError, "isn't a permutation of operand dimensions"),
    (lambda: lax.transpose(X, 1), TypeError, "must be a tuple/list/ndarray"),
    (lambda: lax.rev(X, (2,)), TypeError, "rev dimensions must all be less than operand ndim"),
    (lambda: lax.rev(X, (0, 0)), TypeError, "rev dimensions must be unique"),
    (lambda: lax.rev(X, (-1,)), TypeError, "must have every element be nonnegative"),
    (lambda: lax.pad(X, np.int32(0), [(0, 0, 0)] * 2), TypeError,
     "pad operand and padding_value must be same dtype: got float32 and int32"),
    (lambda: lax.pad(X, np.zeros(2, np.float32), [(0, 0, 0)] * 2), ValueError,
     "padding_value must be a scalar"),
    (lambda: lax.pad(X, np.float32(0), [(0, 0, 0)]), ValueError,
     "length of padding_config must equal the number of axes"),
    (lambda: lax.pad(X, np.float32(0), [(0, 0, -1)] * 2), ValueError,
     "interior padding in padding_config must be nonnegative"),
    (lambda: lax.pad(X, np.float32(0), [(-2, -1, 0), (0, 0, 0)]), ValueError,
     "Dimension size after padding is not at least 0"),
    (lambda: lax.concatenate([X, X.astype(np.int32)], 0), TypeError,
     r"lax.concatenate requires arguments to have the same dtypes, got float32, int32. "
     r"\(Tip: jnp.concatenate"),
    (lambda: lax.concatenate([X, X[0]], 0), TypeError,
     "Cannot concatenate arrays with different numbers of dimensions"),
    (lambda: lax.concatenate([X, X.T], 0), TypeError,
     "Cannot concatenate arrays with shapes that differ in dimensions other than"),
    (lambda: lax.concatenate([X, X], 2), TypeError, "concatenate dimension out of bounds"),
    (lambda: lax.concatenate([], 0), ValueError, "concatenate requires a non-empty"),
    (lambda: lax.split(X, (1, 1), 1), ValueError, "Sum of sizes 2 must be equal to dimension 1"),
    (lambda: lax.split(X, (4, -1), 1), ValueError, "Sizes passed to split must be nonnegative"),
    (lambda: lax.tile(X, (2,)), TypeError, "reps length must be equal to the ndim of x"),
    (lambda: lax.slice(X, (0, 0), (3, 3)), TypeError,
     "slice limit_indices must be less than or equal to operand shape"),
    (lambda: lax.slice(X, (0,), (2,)), TypeError,
     "slice start_indices must have length equal to the number of dimensions"),
    (lambda: lax.slice(X, (0, 2), (2, 1)), TypeError,
     "slice limit_indices must be greater than or equal to start_indices"),
    (lambda: lax.slice(X, (0, 0), (2, 3), (1, 0)), TypeError, "slice strides must be positive"),
    (lambda: lax.index_in_dim(X, 2), IndexError, "index 2 is out of bounds for axis 0 with size 2"),
    (lambda: lax.full((2,), np.ones(2)), TypeError,
     "full must be called with scalar fill_value"),
    (lambda: lax.collapse(X, 1, 0), ValueError, "Invalid dimension range passed to collapse"),
    (lambda: lax.broadcast_shapes((2,), (3,)), ValueError, "Incompatible shapes for broadcasting"),
])
def test_lax_errors(fn, exc, match):
  with pytest.raises(exc, match=match):
    fn()


def test_lax_errors_at_trace_time():
  with pytest.raises(TypeError, match="transpose permutation"):
    jax.jit(lambda x: lax.transpose(x, (1, 1)))(X)
  with pytest.raises(ValueError, match="cannot select an axis to squeeze"):
    jax.make_jaxpr(lambda x: lax.squeeze(x, (1,)))(X)


# ------------------------------------------------------------- jnp errors
@pytest.mark.parametrize("fn, exc, match", [
    (lambda: jnp.reshape(X, (4, 2)), TypeError,
     r"cannot reshape array of shape \(2, 3\) \(size 6\) into shape \(4, 2\) \(size 8\)"),
    (lambda: jnp.reshape(X, (-1, -1)), TypeError, "can only specify one unknown axis size"),
    (lambda: jnp.reshape(X, (4, -1)), TypeError, "does not evenly divide 6"),
    (lambda: jnp.reshape(X, (6,), order="A"), NotImplementedError, "order=A"),
    (lambda: jnp.reshape(X, (6,), order="X"), ValueError, "Unexpected value for 'order'"),
    (lambda: jnp.reshape([1, 2], (2,)), TypeError,
     "reshape requires ndarray or scalar arguments, got <class 'list'> at position 0"),
    (lambda: jnp.reshape(X, (2.0, 3)), TypeError,
     "Shapes must be 1D sequences of concrete values of integer type"),
    (lambda: jnp.ravel(X, order="K"), NotImplementedError, "order='K'"),
    (lambda: jnp.squeeze(X, 0), ValueError, "cannot select an axis to squeeze out"),
    (lambda: jnp.squeeze(X, 2), ValueError, "out of bounds"),
    (lambda: jnp.expand_dims(X, 3), ValueError, "out of bounds"),
    (lambda: jnp.transpose(X, (0, 2)), ValueError, "out of bounds"),
    (lambda: jnp.transpose(X, (0, 0)), TypeError, "isn't a permutation"),
    (lambda: jnp.permute_dims(X, (1, 1)), ValueError, "repeated axis"),
    (lambda: jnp.matrix_transpose(X[0]), ValueError, "at least two-dimensional"),
    (lambda: jnp.moveaxis(X, (0, 1), 0), ValueError, "Inconsistent number of elements: 2 vs 1"),
    (lambda: jnp.swapaxes(X, 0, 2), ValueError, "out of bounds"),
    (lambda: jnp.rollaxis(X, 0, 4), ValueError, "start=4 must satisfy -2<=start<=2"),
    (lambda: jnp.rot90(X[0]), ValueError, "rot90 requires its first argument to have ndim"),
    (lambda: jnp.rot90(X, axes=(1, -1)), ValueError, "Axes must be different"),
    (lambda: jnp.broadcast_to(X, (3, 3)), ValueError,
     r"Incompatible types for broadcasting: input type=ShapedArray\(float32\[2,3\]\) and "
     r"requested type=float32\[3,3\]"),
    (lambda: jnp.broadcast_to(X, (3,)), ValueError, "Cannot broadcast to shape with fewer"),
    (lambda: jnp.broadcast_shapes((2, 3), (4,)), ValueError,
     "Incompatible shapes for broadcasting"),
    (lambda: jnp.broadcast_arrays(X, X[:, :2]), ValueError, "Incompatible shapes"),
    (lambda: jnp.concatenate([]), ValueError, "Need at least one array to concatenate"),
    (lambda: jnp.concatenate([np.float32(1), np.float32(2)]), ValueError,
     "Zero-dimensional arrays cannot be concatenated"),
    (lambda: jnp.concatenate([X, [1, 2, 3]]), TypeError, "concatenate requires ndarray"),
    (lambda: jnp.concatenate([X, X], axis=2), ValueError, "out of bounds"),
    (lambda: jnp.concatenate([X, X[0]]), TypeError, "different numbers of dimensions"),
    (lambda: jnp.stack([]), ValueError, "Need at least one array to stack"),
    (lambda: jnp.stack([X, X.T]), ValueError, "All input arrays must have the same shape"),
    (lambda: jnp.stack([X], out=X), NotImplementedError, "'out' argument"),
    (lambda: jnp.split(X, 2, axis=1), ValueError,
     "array split does not result in an equal division: rest is 1"),
    (lambda: jnp.split(X, [4], axis=1), ValueError, "Sizes passed to split must be nonnegative"),
    (lambda: jnp.unstack(np.float32(1)), ValueError, "Unstack requires arrays with rank > 0"),
    (lambda: jnp.block((X, X)), ValueError, "does not allow tuples"),
    (lambda: jnp.block([]), ValueError, "does not allow empty list"),
    (lambda: jnp.block([[X], X]), ValueError, "Mismatched list depths"),
    (lambda: jnp.tile(X, 2.5), TypeError, None),
    (lambda: jnp.repeat(X, np.array([1, 2])), ValueError, None),
    (lambda: jnp.repeat(X, -1), ValueError, "negative"),
    (lambda: jnp.repeat(X, 1.5), TypeError, "integers"),
    (lambda: jnp.repeat(np.float32(1), np.array([1, 2]), axis=0), ValueError,
     "`repeat` with a scalar parameter `a` is only implemented for scalar values"),
    (lambda: jnp.resize(X, (-1, 2)), ValueError, "must be non-negative"),
    (lambda: jnp.delete(X, np.array([True]), axis=0), ValueError, "for boolean indices"),
    (lambda: jnp.delete(X, np.array([0.5])), ValueError, "must be integer or bool"),
    (lambda: jnp.insert(X, np.array([0.5]), 1.0), ValueError, "index array must be integer"),
    (lambda: jnp.insert(X, np.zeros((1, 1), np.int32), 1.0), ValueError,
     "obj must be a slice, a one-dimensional array, or a scalar"),
    (lambda: jnp.insert(X, [0], 1.0), TypeError, "insert requires ndarray or scalar"),
])
def test_jnp_errors(fn, exc, match):
  with pytest.raises(exc, match=match):
    fn()


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(pad_width=1, mode="bogus"), NotImplementedError, "Unimplemented padding mode 'bogus'"),
    (dict(pad_width=1, mode="edge", constant_values=1), ValueError,
     "unsupported keyword arguments for mode 'edge'"),
    (dict(pad_width=-1), ValueError, "index can't contain negative values"),
    (dict(pad_width=1.5), TypeError, "`pad_width` must be of integral type"),
    (dict(pad_width=((1, 2, 3),)), ValueError, "pad_width with nd=2 has unsupported shape"),
    (dict(pad_width=((1, 2), (1,))), TypeError, "entries must be the same shape"),
    (dict(pad_width=1, mode="reflect", reflect_type="bad"), ValueError, "reflect_type"),
    (dict(pad_width=1, constant_values=np.zeros(3)), ValueError,
     "constant_values has unsupported shape"),
])
def test_pad_errors(kwargs, exc, match):
  with pytest.raises(exc, match=match):
    jnp.pad(X, **kwargs)


@pytest.mark.parametrize("mode", ["wrap", "edge", "reflect", "symmetric"])
def test_pad_empty_axis_errors(mode):
  with pytest.raises(ValueError, match=f"Cannot apply '{mode}' padding to empty axis"):
    jnp.pad(np.zeros((0, 2), np.float32), 1, mode=mode)


def test_static_arguments_under_jit():
  with pytest.raises(ConcretizationTypeError):
    jax.jit(lambda x, r: jnp.repeat(x, r))(X, np.array([1, 2, 3]))
  with pytest.raises(ConcretizationTypeError):
    jax.jit(jnp.trim_zeros)(np.array([0, 1, 0]))
  with pytest.raises(ConcretizationTypeError):
    jax.jit(lambda x, i: jnp.delete(x, i))(np.arange(3), np.array([1]))
  with pytest.raises(ConcretizationTypeError):
    jax.jit(lambda x, p: jnp.pad(x, p))(X, 1)
  with pytest.raises(TypeError, match="Shapes must be 1D sequences"):
    jax.jit(lambda x, n: jnp.reshape(x, (n, -1)))(X, 2)


# -------------------------------------------------------------- weak types
def _weak(x):
  return jnp.broadcast_to(1.5, x)   # a weakly typed float32 array of shape x


def test_weak_types_preserved():
  w = _weak((2, 3))
  assert w.weak_type and w.dtype == np.float32
  for out in (jnp.reshape(w, (3, 2)), jnp.transpose(w), jnp.expand_dims(w, 0),
              jnp.squeeze(jnp.expand_dims(w, 0)), jnp.flip(w), jnp.rot90(w), jnp.roll(w, 1),
              jnp.tile(w, 2), jnp.repeat(w, 2), jnp.pad(w, 1), jnp.pad(w, 1, mode="edge"),
              jnp.pad(w, 2, mode="reflect"), jnp.concatenate([w, w]), jnp.stack([w, w]),
              jnp.split(w, 3, axis=1)[0], lax.slice(w, (0, 0), (1, 1)), lax.rev(w, (0,)),
              lax.tile(w, (1, 2)), jnp.unstack(w)[0], jnp.atleast_3d(w), jnp.ravel(w),
              jnp.resize(w, (7,)), jnp.insert(w, 1, 2.0, axis=1), jnp.delete(w, 0, axis=1),
              jnp.pad(w, 1, mode="linear_ramp"), jnp.pad(w, 1, mode="wrap")):
    assert out.weak_type, out
    assert out.dtype == np.float32


def test_weak_type_rules_of_primitives():
  w, s = _weak((3,)), np.ones(3, np.float32)
  assert not lax.concatenate([w, s], 0).weak_type
  assert lax.concatenate([w, w], 0).weak_type
  assert not lax.pad(w, np.float32(0), [(1, 1, 0)]).weak_type
  assert lax.pad(w, 0.0, [(1, 1, 0)]).weak_type
  assert not lax.pad(s, 0.0, [(1, 1, 0)]).weak_type
  assert jnp.expand_dims(2.0, 0).weak_type
  assert jnp.stack([1.0, 2.0]).weak_type
  assert not jnp.stack([1.0, np.float32(2.0)]).weak_type


def test_full_and_full_like_dtypes():
  assert lax.full((2,), 1.0).weak_type
  out = lax.full((2,), 1, np.float32)
  assert out.dtype == np.float32 and not out.weak_type
  _same(lax.full_like(np.arange(3, dtype=np.int32), 1.7), np.ones(3, np.int32))
  out = lax.full_like(_weak((2,)), 3)
  assert out.weak_type and out.dtype == np.float32
  _same(lax.full_like(X, 2, dtype=np.int32, shape=(1, 2)), np.full((1, 2), 2, np.int32))
  _same(lax.full(3, True), np.ones(3, bool))


# --------------------------------------------------------- dtype promotion
@pytest.mark.parametrize("a, b, want", [
    (np.int32, np.float32, np.float32), (np.bool_, np.int32, np.int32),
    (np.int8, np.uint8, np.int16), (np.float16, np.float32, np.float32),
    (np.bool_, np.bool_, np.bool_),
])
def test_concatenate_and_stack_promote(a, b, want):
  x, y = np.ones((2,), a), np.zeros((2,), b)
  assert jnp.concatenate([x, y]).dtype == want
  assert jnp.stack([x, y]).dtype == want
  assert jnp.append(x, y).dtype == want
  assert jnp.vstack([x, y]).dtype == want


def test_explicit_dtype_argument():
  assert jnp.concatenate([X, X], dtype=np.int32).dtype == np.int32
  assert jnp.stack([X, X], dtype=jnp.bool_).dtype == np.bool_
  assert jnp.hstack([X, X], dtype=np.int16).dtype == np.int16
  assert jnp.concatenate(np.ones((2, 2), np.int32), axis=None, dtype=np.float32).dtype == np.float32


def test_pad_constant_values_cast_to_array_dtype():
  x = np.arange(3, dtype=np.int32)
  _same(jnp.pad(x, 1, constant_values=2.7), np.array([2, 0, 1, 2, 2], np.int32))


# -------------------------------------------------------- method forms
def test_reshape_and_transpose_methods():
  a = jnp.ravel(X)
  _same(a.reshape(2, 3), X)
  _same(a.reshape((3, 2)), X.reshape(3, 2))
  _same(a.reshape([3, -1]), X.reshape(3, 2))
  _same(a.reshape(3, 2, order="F"), X.ravel().reshape(3, 2, order="F"))
  _same(jnp.reshape(a, shape=(2, 3)), X)
  m = a.reshape(2, 3)
  _same(m.transpose(), X.T)
  _same(m.transpose(None), X.T)
  _same(m.transpose(1, 0), X.T)
  _same(m.transpose((1, 0)), X.T)
  _same(m.T, X.T)
  _same(jnp.expand_dims(m, 0).mT, np.swapaxes(X[None], -1, -2))
  _same(m.flatten(), X.flatten())
  _same(m.flatten("F"), X.flatten("F"))
  _same(m.ravel(), X.ravel())
  _same(jnp.expand_dims(m, 1).squeeze(), X)
  _same(jnp.expand_dims(m, 1).squeeze(axis=1), X)
  _same(m.swapaxes(0, 1), X.T)
  _same(m.repeat(2, axis=0), X.repeat(2, axis=0))


def test_methods_on_tracers():
  def f(x):
    y = x.reshape(3, 2).transpose(1, 0).flatten()
    return y.reshape((2, 3)).T.squeeze().swapaxes(0, 1).ravel().repeat(2)
  _same(jax.jit(f)(X), X.reshape(3, 2).T.flatten().reshape(2, 3).T.T.ravel().repeat(2))


def test_eager_results_are_arrays():
  for out in (jnp.reshape(X, (2, 3)), jnp.squeeze(X), jnp.transpose(X[0]), jnp.rot90(X, 0),
              jnp.broadcast_to(X, (2, 3)), jnp.concatenate([X]), jnp.stack([X]),
              jnp.atleast_1d(X), jnp.tile(X, 1), jnp.pad(X, 0), jnp.moveaxis(X, 0, 0),
              jnp.trim_zeros(np.array([1, 2])), jnp.flip(X, ()), jnp.repeat(X, 1, axis=0),
              jnp.pad(np.float32(3), 2)):
    assert isinstance(out, jax.Array), type(out)
  for out in jnp.broadcast_arrays(X, X):
    assert isinstance(out, jax.Array)


# ------------------------------------------------------ printed jaxprs
def test_printed_jaxprs():
  def f(x):
    return (lax.squeeze(lax.expand_dims(x, (0,)), (0,)),
            lax.transpose(x, (1, 0)), lax.rev(x, (0,)), lax.pad(x, 0.0, [(1, 2, 0), (0, 0, 1)]),
            lax.concatenate([x, x], 1), lax.slice(x, (0, 1), (2, 3)), lax.tile(x, (2, 1)))
  text = str(jax.make_jaxpr(f)(X))
  for line in ["squeeze[dimensions=(0,)] ", "transpose[permutation=(1, 0)] a",
               "rev[dimensions=(0,)] a",
               "f32[5,5] = pad[padding_config=((1, 2, 0), (0, 0, 1))] a 0.0:f32[]",
               "f32[2,6] = concatenate[dimension=1] a a",
               "f32[2,2] = slice[limit_indices=(2, 3) start_indices=(0, 1) strides=None] a",
               "f32[4,3] = tile[reps=(2, 1)] a"]:
    assert line in text, (line, text)
  text = str(jax.make_jaxpr(lambda x: lax.split(x, (1, 2), axis=1))(X))
  assert "f32[2,1] c:f32[2,2] = split[axis=1 sizes=(1, 2)] a" in text, text


def test_jit_matches_eager_for_shape_functions():
  fns = [lambda x: jnp.pad(x, ((1, 2), (3, 0)), mode="symmetric", reflect_type="odd"),
         lambda x: jnp.block([[x, x], [x, x]]), lambda x: jnp.insert(x, 1, 5.0, axis=0),
         lambda x: jnp.delete(x, np.array([0, 2]), axis=1), lambda x: jnp.column_stack([x, x]),
         lambda x: jnp.repeat(x, np.array([3, 0, 1]), axis=1)]
  for fn in fns:
    eager, jitted = fn(X), jax.jit(fn)(X)
    _same(jitted, np.asarray(eager))


# --------------------------------------------------- concrete-only functions
def test_trim_zeros():
  _same(jnp.trim_zeros(np.array([0, 0, 1, 0, 2, 0, 0], np.int32)), np.array([1, 0, 2], np.int32))
  _same(jnp.trim_zeros(np.array([0, 3, 0], np.int32), "b"), np.array([0, 3], np.int32))
  _same(jnp.trim_zeros(np.array([0., 3., 0.], np.float32), "F"), np.array([3., 0.], np.float32))
  _same(jnp.trim_zeros(np.zeros(4, np.float32)), np.zeros(0, np.float32))
  _same(jnp.trim_zeros(np.array([1, 2], np.int32), ""), np.array([1, 2], np.int32))
  m = np.zeros((4, 5), np.int32)
  m[1, 2], m[2, 3] = 1, 2
  _same(jnp.trim_zeros(m), m[1:3, 2:4])
  _same(jnp.trim_zeros(m, axis=0), m[1:3])
  _same(jnp.trim_zeros(m, axis=-1), m[:, 2:4])
  _same(jnp.trim_zeros(np.array([False, True, False])), np.array([True]))


def test_split_variants():
  x = np.arange(10, dtype=np.int32)
  for got, want in zip(jnp.array_split(x, 4), np.array_split(x, 4)):
    _same(got, want)
  for got, want in zip(jnp.split(x, np.array([2, 5])), np.split(x, [2, 5])):
    _same(got, want)
  assert isinstance(jnp.split(x, 2), list)
  assert isinstance(jnp.unstack(X), tuple)
  assert len(jnp.split(np.zeros((0, 2)), 3)) == 3


def test_broadcast_shapes_and_arrays():
  assert jnp.broadcast_shapes((2, 1), (3,)) == (2, 3)
  assert jnp.broadcast_shapes(3, (1,)) == (3,)
  assert jnp.broadcast_shapes() == ()
  assert lax.broadcast_shapes((1, 3), (4, 1)) == (4, 3)
  outs = jnp.broadcast_arrays(np.float32(1), X[0], X[:, :1])
  assert isinstance(outs, list) and all(o.shape == (2, 3) for o in outs)


def test_roll_and_rot90_more():
  y = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
  for k in range(-5, 6):
    _same(jnp.rot90(y, k, axes=(1, 2)), np.rot90(y, k, axes=(1, 2)))
  _same(jnp.roll(y, (1, -2, 7), axis=(0, 1, 2)), np.roll(y, (1, -2, 7), axis=(0, 1, 2)))
  _same(jnp.roll(y, np.array(3)), np.roll(y, 3))
  _same(jnp.roll(y, 1, axis=(0, 0)), np.roll(y, 1, axis=(0, 0)))


def test_pad_more_forms():
  y = np.arange(12, dtype=np.float32).reshape(3, 4)
  _same(jnp.pad(y, ((1, 2),)), np.pad(y, ((1, 2),)))
  _same(jnp.pad(y, (3,)), np.pad(y, (3,)))
  _same(jnp.pad(y, np.array([[1, 0], [0, 2]])), np.pad(y, [[1, 0], [0, 2]]))
  _same(jnp.pad(y, 1, constant_values=(5, 6)), np.pad(y, 1, constant_values=(5, 6)))
  _same(jnp.pad(y, 1, constant_values=np.float32(3)), np.pad(y, 1, constant_values=3))
  _same(jnp.pad(y, 9, mode="wrap"), np.pad(y, 9, mode="wrap"))
  _same(jnp.pad(y, 7, mode="reflect"), np.pad(y, 7, mode="reflect"))
  _same(jnp.pad(y, 7, mode="symmetric"), np.pad(y, 7, mode="symmetric"))
  _same(jnp.pad(np.float32(3), 2), np.float32(3))
  np.testing.assert_allclose(
      jnp.pad(y, ((0, 0), (2, 3)), mode="linear_ramp", end_values=(1, 2)),
      np.pad(y, ((0, 0), (2, 3)), mode="linear_ramp", end_values=(1, 2)), rtol=1e-6)


@pytest.mark.parametrize("mode", ["maximum", "minimum", "mean", "median"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("stat_length", [None, 2, ((1, 3), (2, 1))])
def test_pad_stat_modes(mode, dtype, stat_length):
  y = np.array([[1, 7, 2, 9], [4, 4, 0, 3], [8, 1, 5, 6]], dtype)
  kw = {} if stat_length is None else {"stat_length": stat_length}
  want = np.pad(y, ((2, 1), (1, 3)), mode=mode, **kw)
  got = jnp.pad(y, ((2, 1), (1, 3)), mode=mode, **kw)
  np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
  assert got.dtype == dtype
  _same(jax.jit(lambda v: jnp.pad(v, ((2, 1), (1, 3)), mode=mode, **kw))(y), np.asarray(got))


def test_pad_stat_length_zero():
  with pytest.raises(ValueError, match="stat_length of 0 yields no value for padding"):
    jnp.pad(X, 1, mode="mean", stat_length=0)


@pytest.mark.skipif(not (hasattr(reductions, "cumsum") and hasattr(reductions, "sum")
                         and hasattr(indexing, "take")),
                    reason="needs the reductions (cumsum, sum) and indexing (take) families")
def test_repeat_traced_repeats_with_total_length():
  x = np.arange(4, dtype=np.float32)
  reps = np.array([0, 2, 1, 3], np.int32)
  f = jax.jit(lambda x, r: jnp.repeat(x, r, total_repeat_length=6))
  _same(f(x, reps), np.repeat(x, reps))
  g = jax.jit(lambda x, r: jnp.repeat(x, r, total_repeat_length=8))
  _same(g(x, reps), np.concatenate([np.repeat(x, reps), x[-1:], x[-1:]]))
  h = jax.jit(lambda x, r: jnp.repeat(x, r, axis=1, total_repeat_length=3))
  _same(h(X, np.array([1, 0, 2], np.int32)), np.repeat(X, [1, 0, 2], axis=1))


@pytest.mark.skipif(not hasattr(lax, "dynamic_slice_in_dim"),
                    reason="needs lax.dynamic_slice_in_dim (indexing primitives)")
def test_roll_traced_shift():
  f = jax.jit(lambda x, s: jnp.roll(x, s, axis=1))
  for s in (-4, -1, 0, 2, 7):
    _same(f(X, s), np.roll(X, s, axis=1))
  g = jax.jit(lambda x, s: jnp.roll(x, s))
  _same(g(X, np.int32(4)), np.roll(X, 4))
  h = jax.jit(lambda x, s: jnp.roll(x, s, axis=(0, 1)))
  _same(h(X, np.array([1, 2], np.int32)), np.roll(X, (1, 2), axis=(0, 1)))


def test_x64_shape_ops_keep_float64():
  with jax.enable_x64():
    y = np.arange(4, dtype=np.float64)
    assert jnp.reshape(y, (2, 2)).dtype == np.float64
    assert jnp.concatenate([y, np.arange(2)]).dtype == np.float64
    assert jnp.pad(np.arange(3), 1, mode="linear_ramp").dtype == np.int64


# ------------------------------------------------ transformation rules
# Printed jaxprs of grad/vmap, pasted from JAX 0.10.2. ``_canonical`` undoes
# printing details outside the shape family: JAX shows binders that are never
# used as ``_`` (its printer's dead-variable pass) and prints NumPy integers in
# some transpose-rule params as ``np.int64(k)`` (which also moves line breaks).
def _canonical(text: str) -> str:
  text = re.sub(r"np\.int64\((-?\d+)\)", r"\1", text)
  text = re.sub(r"\s+", " ", re.sub(r"\s+\]", "]", re.sub(r"\[\s+", "[", text)))
  names, out = {}, []
  for tok in re.split(r"([A-Za-z_]\w*(?::(?=\w+\[))?)", text):
    if tok.endswith(":") and re.fullmatch(r"[A-Za-z_]\w*:", tok):
      names[tok[:-1]] = f"v{len(names)}"
      out.append(names[tok[:-1]] + ":")
    else:
      out.append(names.get(tok, tok) if tok != "_" else tok)
  return "".join(out)


_GRAD_BROADCAST = """{ lambda ; a:f32[3]. let
    b:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a
    c:f32[2,3] = integer_pow[y=2] b
    d:f32[2,3] = mul 2.0:f32[] b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    e:f32[2,3] = broadcast_in_dim 1.0:f32[]
    f:f32[2,3] = mul e d
    g:f32[3] = reduce_sum[axes=(0,) out_sharding=None] f
  in (g,) }"""

_GRAD_BROADCAST_UNIT_DIM = """{ lambda ; a:f32[1,3]. let
    b:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(0, 1)] a
    c:f32[2,3] = integer_pow[y=2] b
    d:f32[2,3] = mul 2.0:f32[] b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    e:f32[2,3] = broadcast_in_dim 1.0:f32[]
    f:f32[2,3] = mul e d
    g:f32[3] = reduce_sum[axes=(0,) out_sharding=None] f
    h:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] g
  in (h,) }"""

_GRAD_REDUCE_SUM = """{ lambda ; a:f32[2,3]. let
    b:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a
    c:f32[3] = integer_pow[y=2] b
    d:f32[3] = mul 2.0:f32[] b
    _:f32[] = reduce_sum[axes=(0,) out_sharding=None] c
    e:f32[3] = broadcast_in_dim 1.0:f32[]
    f:f32[3] = mul e d
    g:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(np.int64(1),)] f
  in (g,) }"""

_GRAD_PAD = """{ lambda ; a:f32[2,3]. let
    b:f32[3,5] = pad[padding_config=((1, -1, 1), (0, 2, 0))] a 0.0:f32[]
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
    c:f32[3,5] = broadcast_in_dim 1.0:f32[]
    d:f32[3,3] = pad[
      padding_config=((np.int64(-1), np.int64(1), np.int64(0)), (np.int64(0), np.int64(-2), np.int64(0)))
    ] c 0.0:f32[]
    e:f32[2,3] = slice[
      limit_indices=(3, 3)
      start_indices=(np.int64(0), np.int64(0))
      strides=(np.int64(2), np.int64(1))
    ] d
  in (e,) }"""

_GRAD_SLICE = """{ lambda ; a:f32[2,3]. let
    b:f32[2,1] = slice[limit_indices=(2, 3) start_indices=(0, 1) strides=(1, 2)] a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
    c:f32[2,1] = broadcast_in_dim 1.0:f32[]
    d:f32[2,3] = pad[
      padding_config=((0, np.int64(0), np.int64(0)), (1, np.int64(1), np.int64(1)))
    ] c 0.0:f32[]
  in (d,) }"""

_GRAD_CONCATENATE = """{ lambda ; a:f32[2,3]. let
    b:f32[2,3] = mul 2.0:f32[] a
    c:f32[2,6] = concatenate[dimension=1] a b
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] c
    d:f32[2,6] = broadcast_in_dim 1.0:f32[]
    e:f32[2,3] f:f32[2,3] = split[axis=1 sizes=(3, 3)] d
    g:f32[2,3] = mul 2.0:f32[] f
    h:f32[2,3] = add_any e g
  in (h,) }"""

_GRAD_TILE = """{ lambda ; a:f32[2,3]. let
    b:f32[4,3] = tile[reps=(2, 1)] a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
    c:f32[4,3] = broadcast_in_dim 1.0:f32[]
    d:f32[2,2,1,3] = reshape[
      dimensions=None
      new_sizes=(2, 2, 1, 3)
      sharding=None
    ] c
    e:f32[2,3] = reduce_sum[axes=(0, 2) out_sharding=None] d
  in (e,) }"""


@pytest.mark.parametrize("fn, shape, expected", [
    (lambda x: jnp.sum(jnp.broadcast_to(x, (2, 3)) ** 2), (3,), _GRAD_BROADCAST),
    (lambda x: jnp.sum(jnp.broadcast_to(x, (2, 3)) ** 2), (1, 3), _GRAD_BROADCAST_UNIT_DIM),
    (lambda x: (lax.reduce_sum(x, (0,)) ** 2).sum(), (2, 3), _GRAD_REDUCE_SUM),
    (lambda x: lax.pad(x, 0.0, [(1, -1, 1), (0, 2, 0)]).sum(), (2, 3), _GRAD_PAD),
    (lambda x: lax.slice(x, (0, 1), (2, 3), (1, 2)).sum(), (2, 3), _GRAD_SLICE),
    (lambda x: jnp.concatenate([x, 2 * x], 1).sum(), (2, 3), _GRAD_CONCATENATE),
    (lambda x: lax.tile(x, (2, 1)).sum(), (2, 3), _GRAD_TILE),
], ids=["broadcast_in_dim", "broadcast_in_dim_unit", "reduce_sum", "pad", "slice",
        "concatenate", "tile"])
def test_grad_jaxpr_matches_jax(fn, shape, expected):
  closed = jax.make_jaxpr(jax.grad(fn))(np.ones(shape, np.float32))
  check_jaxpr(closed.jaxpr)
  assert _canonical(str(closed)) == _canonical(expected)


@pytest.mark.parametrize("fn, args, in_axes, out_axes, expected", [
    (lambda x: jnp.reshape(x, (3, 2)), (np.ones((2, 3, 4), np.float32),), -1, -1,
     """{ lambda ; a:f32[2,3,4]. let
    b:f32[4,2,3] = transpose[permutation=(2, 0, 1)] a
    c:f32[4,3,2] = reshape[dimensions=None new_sizes=(4, 3, 2) sharding=None] b
    d:f32[3,2,4] = transpose[permutation=(1, 2, 0)] c
  in (d,) }"""),
    (jnp.transpose, (np.ones((2, 3, 4), np.float32),), -1, -2,
     """{ lambda ; a:f32[2,3,4]. let
    b:f32[4,3,2] = transpose[permutation=(2, 1, 0)] a
    c:f32[3,4,2] = transpose[permutation=(1, 0, 2)] b
  in (c,) }"""),
    (lambda x, y: jnp.concatenate([x, y]),
     (np.ones((2, 4), np.float32), np.ones((3,), np.float32)), (-1, None), -1,
     """{ lambda ; a:f32[2,4] b:f32[3]. let
    c:f32[4,2] = transpose[permutation=(1, 0)] a
    d:f32[4,3] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    e:f32[4,5] = concatenate[dimension=1] c d
    f:f32[5,4] = transpose[permutation=(1, 0)] e
  in (f,) }"""),
], ids=["reshape", "transpose", "concatenate"])
def test_vmap_negative_axes_jaxpr_matches_jax(fn, args, in_axes, out_axes, expected):
  vf = jax.vmap(fn, in_axes=in_axes, out_axes=out_axes)
  closed = jax.make_jaxpr(vf)(*args)
  check_jaxpr(closed.jaxpr)
  assert str(closed) == expected
  axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
  n = next(a.shape[ax] for a, ax in zip(args, axes) if ax is not None)
  loop = [np.asarray(fn(*(a if ax is None else np.take(a, i, axis=ax)
                          for a, ax in zip(args, axes)))) for i in range(n)]
  _same(vf(*args), np.stack(loop, axis=out_axes))


@pytest.mark.parametrize("fn, in_axes, out_axes", [
    (lambda x: lax.reshape(x, (4, 3), (1, 0)), 1, -1),
    (lambda x: lax.squeeze(lax.expand_dims(x, (0, 2)), (0, 2)), -1, 1),
    (lambda x: lax.broadcast_in_dim(x, (5, 3, 4), (1, 2)), 2, -2),
    (lambda x: lax.reduce_sum(x, (1,)), 0, -1),
    (lambda x: lax.rev(x, (0, 1)), -1, -1),
    (lambda x: lax.tile(x, (2, 1)), 1, 2),
    (lambda x: lax.slice(x, (1, 0), (3, 4), (2, 3)), -1, 0),
    (lambda x: lax.split(x, (1, 2), 0)[1], 1, -1),
    (lambda x: lax.pad(x, 7.0, [(1, -2, 2), (-1, 3, 0)]), -1, 1),
], ids=["reshape", "squeeze", "broadcast_in_dim", "reduce_sum", "rev", "tile", "slice",
        "split", "pad"])
def test_vmap_negative_axes_matches_loop(fn, in_axes, out_axes):
  x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
  x = np.moveaxis(x, -1, in_axes)             # five examples of shape (3, 4)
  got = jax.vmap(fn, in_axes=in_axes, out_axes=out_axes)(x)
  loop = [np.asarray(fn(np.take(x, i, axis=in_axes))) for i in range(5)]
  _same(got, np.stack(loop, axis=out_axes))


def test_vmap_pad_batched_padding_value():
  x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
  v = np.array([-1, -2, -3, -4], np.int32)
  cfg = [(1, -2, 2), (-3, 2, 1)]
  got = jax.vmap(lambda x, v: lax.pad(x, v, cfg), in_axes=(2, 0), out_axes=-1)(x, v)
  loop = [np.asarray(lax.pad(x[..., i], v[i], cfg)) for i in range(4)]
  _same(got, np.stack(loop, axis=-1))
  empty = jax.vmap(lambda v: lax.pad(np.zeros((0,), np.float32), v, [(1, 2, 3)]))(
      np.array([1.0, 2.0], np.float32))
  _same(empty, np.repeat(np.array([[1.0], [2.0]], np.float32), 3, axis=1))


def test_iota_batch_rule_not_applicable():
  assert "no operands" in lax.iota_p.not_applicable["batch"]
  got = jax.vmap(lambda x: x + lax.iota(np.float32, 3))(np.ones((2, 3), np.float32))
  _same(got, np.ones((2, 3), np.float32) + np.arange(3, dtype=np.float32))


# Gradients pasted from JAX 0.10.2.
def test_pad_grads_match_jax():
  x = np.arange(12, dtype=np.float32).reshape(3, 4)

  def f(x, v):
    y = lax.pad(x, v, [(2, -1, 2), (-1, 1, 1)])
    return jnp.sum(y * np.arange(56, dtype=np.float32).reshape(8, 7))
  gx, gv = jax.grad(f, argnums=(0, 1))(x, np.float32(0.5))
  _same(gx, np.array([[0., 15., 17., 19.], [0., 36., 38., 40.], [0., 0., 0., 0.]], np.float32))
  _same(gv, np.array(1375., np.float32))


def test_slice_split_tile_grads_match_jax():
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  g = jax.grad(lambda x: jnp.sum(lax.slice(x, (0, 1), (3, 4), (2, 2))
                                 * np.arange(1, 5, dtype=np.float32).reshape(2, 2)))(x)
  _same(g, np.array([[0., 1., 0., 2.], [0., 0., 0., 0.], [0., 3., 0., 4.]], np.float32))

  def f(x):
    a, _, c = lax.split(x, (1, 2, 1), axis=1)   # the middle cotangent is a symbolic zero
    return jnp.sum(c * 3.0) + jnp.sum(a)
  _same(jax.grad(f)(x), np.array([[1., 0., 0., 3.]] * 3, np.float32))
  g = jax.grad(lambda x: jnp.sum(lax.tile(x[:2, :2], (2, 3))
                                 * np.arange(24, dtype=np.float32).reshape(4, 6)))(x)
  _same(g, np.array([[48., 54., 0., 0.], [84., 90., 0., 0.], [0., 0., 0., 0.]], np.float32))


def test_concatenate_transpose_only_for_linear_operands():
  c = np.ones((2, 1), np.float32)
  g = jax.grad(lambda x: jnp.sum(lax.concatenate([c, x, c], 1) * np.arange(8.0).reshape(2, 4)
                                 .astype(np.float32)))(np.ones((2, 2), np.float32))
  _same(g, np.array([[1., 2.], [5., 6.]], np.float32))
  closed = jax.make_jaxpr(jax.linear_transpose(lambda x: lax.concatenate([c, x], 1),
                                               np.ones((2, 2), np.float32)))(
      np.ones((2, 3), np.float32))
  check_jaxpr(closed.jaxpr)


def test_transpose_rules_under_jit_and_second_order():
  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  f = lambda x: jnp.sum(lax.pad(lax.rev(x, (1,)), 0.0, [(1, 0, 1), (0, -1, 0)]) ** 3)
  g = jax.grad(f)
  _same(jax.jit(g)(x), np.asarray(g(x)))
  hvp = jax.jvp(g, (x,), (np.ones_like(x),))[1]
  # d/dx of 3 * x**2 (rev'd, padded, cropped) along ones: 6 * x where kept.
  want = np.where(np.arange(3) > 0, 6 * x, 0).astype(np.float32)
  _same(hvp, want)


# ------------------------------------------------------------ lowering (IREE)
def _compiled(f, *args):
  with jax.config.override("openjax_executor", "iree"):
    return jax.jit(f)(*args)


def _bits_equal(got, want):
  got, want = np.asarray(got), np.asarray(want)
  assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.shape)
  assert got.tobytes() == want.tobytes(), (got, want)


def _all_shape_ops(x, v):
  a = lax.broadcast_in_dim(x, (2,) + x.shape, (1, 2))
  parts = lax.split(x, (1, 0, 2), axis=1)
  return [a, lax.reshape(x, (3, 2), (1, 0)), lax.squeeze(x[None], (0,)),
          lax.transpose(a, (2, 0, 1)), lax.rev(x, (0, 1)),
          lax.pad(x, v, [(1, -1, 2), (-2, 3, 1)]), lax.concatenate([x, x[:, :1], x], 1),
          *parts, lax.tile(x, (2, 3)), lax.slice(x, (0, 1), (2, 3), (2, 2)),
          lax.broadcasted_iota(x.dtype, (2, 4), 1)]


def test_shape_ops_lower_to_stablehlo():
  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  text = jax.jit(lambda x, v: _all_shape_ops(x, v) + [lax.reduce_sum(x, (0,))]).lower(
      x, np.float32(0)).as_text()
  for op in ("broadcast_in_dim", "reshape", "transpose", "reverse", "pad", "concatenate",
             "slice", "iota", "reduce"):
    assert f"stablehlo.{op}" in text, op
  # A negative edge is a slice of the positively padded operand.
  pad_text = jax.jit(lambda x: lax.pad(x, 0.0, [(-1, 2, 1), (0, 0, 0)])).lower(x).as_text()
  assert "stablehlo.pad" in pad_text and "stablehlo.slice" in pad_text


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint32, jnp.bfloat16, np.float32,
                                   np.complex64], ids=lambda d: np.dtype(d).name)
def test_shape_ops_compiled_match_eager(dtype):
  rng = np.random.default_rng(0)
  x = (rng.standard_normal((2, 3)) * 4 + 1j * rng.standard_normal((2, 3)))
  x = x.real > 0 if dtype is np.bool_ else x.astype(dtype) if np.dtype(dtype).kind == "c" \
      else x.real.astype(dtype)
  v = x.reshape(-1)[0]
  got, want = _compiled(_all_shape_ops, x, v), _all_shape_ops(x, v)
  for g, w in zip(got, want):
    _bits_equal(g, w)


@pytest.mark.parametrize("dtype", [np.float64, np.uint64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_shape_ops_compiled_match_eager_x64(dtype):
  # complex128 pads its float64 parts apart (IREE cannot fill 16-byte values).
  with jax.enable_x64():
    x = ((np.arange(6) - 2) * (1 + 2j if dtype is np.complex128 else 1)).reshape(2, 3)
    x = x.astype(dtype)
    v = x.reshape(-1)[0]
    f = lambda x, v: _all_shape_ops(x, v) + [lax.reduce_sum(x, (0, 1))]
    for g, w in zip(_compiled(f, x, v), f(x, v)):
      _bits_equal(g, w)


def test_pad_negative_and_empty_compiled():
  x = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
  configs = [[(-5, 4, 0), (0, 0, 0)], [(-2, -1, 3), (2, -3, 0)], [(1, 1, 0), (-4, 0, 0)],
             [(0, -4, 1), (0, 0, 2)]]
  f = lambda x: [lax.pad(x, np.int32(-7), c) for c in configs] + [
      lax.pad(x[:0], np.int32(9), [(1, 2, 3), (0, 0, 0)])]
  for g, w in zip(_compiled(f, x), f(x)):
    _bits_equal(g, w)


def test_empty_and_degenerate_shape_ops_compiled():
  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  f = lambda x: [lax.tile(x, (0, 2)), *lax.split(x, (0, 3, 0), axis=1),
                 lax.concatenate([x[:0], x[:1]], 0), lax.reduce_sum(x[:, :0], (1,)),
                 lax.transpose(x[:0], (1, 0)), lax.rev(x, ()), lax.reduce_sum(x, ())]
  for g, w in zip(_compiled(f, x), f(x)):
    _bits_equal(g, w)


def test_iota_compiled_dtypes():
  # Counting is done in int32 and cast like arange(n).astype(dtype): int8 wraps.
  dts = [np.int8, np.uint8, np.int32, np.bool_, jnp.bfloat16, np.float16, np.float32,
         np.complex64]
  f = lambda: [lax.broadcasted_iota(d, (2, 300), 1) for d in dts]
  for g, w in zip(_compiled(f), f()):
    _bits_equal(g, w)


def test_reduce_sum_compiled_dtypes():
  # bfloat16 accumulates in float32 (the exact sum 4096 + 1 * 255 is kept,
  # where bfloat16 steps would get stuck); ints wrap; complex sums both parts.
  b = np.concatenate([[4096.0], np.ones(255)]).astype(jnp.bfloat16)
  i = np.full((4, 64), 2 ** 29, np.int32)
  c = (np.arange(6) + 1j * np.arange(6)[::-1]).astype(np.complex64).reshape(2, 3)
  f = lambda b, i, c: [lax.reduce_sum(b, (0,)), lax.reduce_sum(i, (0, 1)),
                       lax.reduce_sum(i.astype(np.int8), (1,)), lax.reduce_sum(c, (1,))]
  for g, w in zip(_compiled(f, b, i, c), f(b, i, c)):
    _bits_equal(g, w)


@pytest.mark.parametrize("start,limit,stride,axis", [
    (0, 1, 1, 1), (None, None, 1, 0), (-2, None, 1, -1), (1, 3, 2, 2), (0, 2, 1, -3),
    (np.int64(1), np.int32(3), np.int8(1), 1)])
def test_slice_in_dim_against_numpy_and_its_parameters(start, limit, stride, axis):
  x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
  idx = [slice(None)] * 3
  idx[axis] = slice(start, limit, stride)
  np.testing.assert_array_equal(np.asarray(lax.slice_in_dim(x, start, limit, stride, axis)),
                                x[tuple(idx)])
  np.testing.assert_array_equal(lax.slice_in_dim(jnp.asarray(x), start, limit, stride, axis),
                                x[tuple(idx)])
  eqn, = jax.make_jaxpr(lambda a: lax.slice_in_dim(a, start, limit, stride, axis))(x).eqns
  # JAX's parameters: tuples of Python ints over every axis
  for name in ("start_indices", "limit_indices", "strides"):
    value = eqn.params[name]
    assert type(value) is tuple and len(value) == 3 and all(type(v) is int for v in value)
  with pytest.raises(IndexError):
    lax.slice_in_dim(x, 0, 1, axis=3)
