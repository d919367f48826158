"""Session 15's eager shortcuts of creation, shape and indexing calls at small
sizes: ``jnp.array``/``jnp.copy``/scalar-type calls of an eager Array, the
``*_like`` functions of an Array, small float -> int conversions of any rank.
Each is checked against what the general path (traced, or the impl) gives:
values (bits), dtypes, weak types, shapes, fresh objects, errors."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.core import Array, eval_jaxpr
from openjax._src.core.avals import ShapedArray
from openjax._src.numpy import creation
from openjax._src.primitives.base import convert
from openjax._src.primitives.shape.shape import _pad_impl, _pad_lattice, _padded_shape


def _traced(f, *args):
  """``f``'s result through its traced jaxpr, run equation by equation (the
  general path every eager shortcut must agree with)."""
  closed = jax.make_jaxpr(f)(*args)
  out, = eval_jaxpr(closed.jaxpr, closed.consts, *args)
  return out


def _same(got, want):
  got_a, want_a = np.asarray(got), np.asarray(want)
  assert got_a.dtype == want_a.dtype and got_a.shape == want_a.shape, (got, want)
  assert got_a.tobytes() == want_a.tobytes(), (got, want)
  if isinstance(want, Array) or hasattr(want, "aval"):
    assert got.aval.weak_type == want.aval.weak_type, (got.aval, want.aval)


_VALUES = [
    np.array([1.5, -0.0, np.nan, np.inf], np.float32),
    np.array([[1, 2], [3, 4]], np.int8),
    np.array(True),
    np.array([], np.float16),
    np.array([1 + 2j, 0], np.complex64),
    np.array([1.5, -2.25], ml_dtypes.bfloat16),
]


# ------------------------------------------------------------- jnp.array
@pytest.mark.parametrize("v", _VALUES, ids=lambda v: f"{v.dtype}{v.shape}")
@pytest.mark.parametrize("fn", ["array", "copy", "array_nocopy", "asarray"])
def test_array_of_an_array_is_the_traced_result(fn, v):
  f = {"array": jnp.array, "copy": jnp.copy, "asarray": jnp.asarray,
       "array_nocopy": lambda x: jnp.array(x, copy=False)}[fn]
  x = jnp.asarray(v)
  got = f(x)
  _same(got, _traced(f, x))
  _same(got, x)
  if fn in ("array", "copy"):
    assert got is not x   # a new Array object (deleting one leaves the other)
    x2 = jnp.asarray(v)
    y = f(x2)
    x2.delete()
    _same(y, x)


def test_array_of_a_weak_array_stays_weak():
  x = jnp.asarray(2.5) * 1   # weak float32
  assert x.aval.weak_type
  for f in (jnp.array, jnp.copy):
    _same(f(x), _traced(f, x))
    assert f(x).aval.weak_type


@pytest.mark.parametrize("v", _VALUES[:2] + [np.array(3.5, np.float32)],
                         ids=lambda v: f"{v.dtype}{v.shape}")
@pytest.mark.parametrize("dt", [np.int32, np.int8, np.float16, np.bool_, ml_dtypes.bfloat16,
                                np.float32])
def test_array_with_dtype_of_an_array(v, dt):
  x = jnp.asarray(v)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for f in (lambda a: jnp.array(a, dtype=dt), lambda a: jnp.asarray(a, dt),
              lambda a: jnp.array(a, dtype=dt, copy=False)):
      got = f(x)
      _same(got, _traced(f, x))
  if np.dtype(dt) == x.dtype:
    assert jnp.array(x, dtype=dt) is not x
    assert jnp.array(x, dtype=dt, copy=False) is x


def test_array_of_an_array_keeps_errors_and_ndmin():
  x = jnp.arange(3.0)
  with pytest.raises(NotImplementedError):
    jnp.array(x, order="F")
  with pytest.raises(ValueError):
    jnp.array(x, dtype=x)   # an array as a dtype
  assert jnp.array(x, ndmin=3).shape == (1, 1, 3)
  with pytest.raises(TypeError):
    jnp.array(x, dtype=np.object_)
  x.delete()
  with pytest.raises(RuntimeError):
    jnp.array(x)


@pytest.mark.parametrize("scalar_type", [jnp.float32, jnp.int8, jnp.uint8, jnp.int32,
                                         jnp.bool_, jnp.bfloat16, jnp.float16])
@pytest.mark.parametrize("v", [np.array([[1.7, -2.9], [np.nan, 300.0]], np.float32),
                               np.array([[-1e10, 1e10, -0.0]], np.float32),
                               np.array([[-130.5], [255.9]], np.float16),
                               np.array([[1, 2]], np.int32)],
                         ids=lambda v: f"{v.dtype}{v.shape}")
def test_scalar_type_calls_of_an_array(scalar_type, v):
  x = jnp.asarray(v)
  got = scalar_type(x)
  _same(got, _traced(scalar_type, x))


# ------------------------------------------- small float -> int conversions
@pytest.mark.parametrize("src", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("dst", [np.int8, np.uint8, np.int16, np.uint32, np.int32])
@pytest.mark.parametrize("shape", [(2, 2), (1, 3, 1), (4, 4), (0, 3)])
def test_few_floats_to_int_of_any_rank_is_the_impl(src, dst, shape):
  edges = [np.nan, -np.inf, np.inf, -0.0, 0.5, -0.5, 127.5, 128.0, -129.0, 255.5, 256.0,
           -1.0, 2.0 ** 31, -2.0 ** 31, 65535.9, 1e30]
  n = int(np.prod(shape))
  with np.errstate(all="ignore"):
    v = np.resize(np.array(edges, np.float64), n).astype(src).reshape(shape)
  kernel = convert._convert_eval_kernel(ShapedArray(shape, np.dtype(src)),
                                        new_dtype=np.dtype(dst), weak_type=False)
  with np.errstate(all="ignore"):
    want = convert.convert_numpy(v, np.dtype(dst))
    got = kernel(v)
  _same(got, want)
  _same(jnp.asarray(v).astype(dst), want)


# -------------------------------------------------------------- *_like
_LIKE = [
    ("zeros_like", lambda a: jnp.zeros_like(a)),
    ("ones_like", lambda a: jnp.ones_like(a)),
    ("empty_like", lambda a: jnp.empty_like(a)),
    ("full_like", lambda a: jnp.full_like(a, 7)),
    ("full_like_float", lambda a: jnp.full_like(a, -2.5)),
    ("full_like_nan", lambda a: jnp.full_like(a, np.nan)),
    ("full_like_bool", lambda a: jnp.full_like(a, True)),
    ("full_like_dtype", lambda a: jnp.full_like(a, 3, dtype=jnp.int8)),
    ("zeros_like_shape", lambda a: jnp.zeros_like(a, shape=(2,))),
]


@pytest.mark.parametrize("name,f", _LIKE, ids=[n for n, _ in _LIKE])
@pytest.mark.parametrize("v", [np.zeros((2, 3), np.float32), np.zeros((), np.int8),
                               np.zeros((0, 2), np.uint8), np.zeros((3,), np.bool_),
                               np.zeros((2,), np.complex64),
                               np.zeros((2,), ml_dtypes.bfloat16)],
                         ids=lambda v: f"{v.dtype}{v.shape}")
def test_like_functions_of_an_array_are_the_traced_result(name, f, v):
  x = jnp.asarray(v)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    try:
      want = _traced(f, x)
    except (TypeError, OverflowError) as err:
      with pytest.raises(type(err)):
        f(x)
      return
    _same(f(x), want)


def test_like_functions_of_a_weak_array():
  x = jnp.asarray(1.0) + 1   # a weak float32 scalar
  for _, f in _LIKE:
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      _same(f(x), _traced(f, x))
  assert jnp.zeros_like(x).aval.weak_type


def test_compiled_results_agree():
  x = jnp.asarray(np.array([[1.7, np.nan], [-300.0, 2.0]], np.float32))
  for f in (jnp.copy, jnp.int8, lambda a: jnp.array(a, dtype=jnp.uint8), jnp.zeros_like,
            lambda a: jnp.full_like(a, 3)):
    _same(f(x), jax.jit(f)(x))


# ------------------------------------------------------------ lax.pad edges
@pytest.mark.parametrize("dt", [np.float32, np.int8, np.bool_, np.complex64, np.float16,
                                ml_dtypes.bfloat16])
@pytest.mark.parametrize("shape,config", [
    ((64, 64), ((1, 2, 0), (2, 1, 0))),
    ((4096,), ((0, 3, 0),)),
    ((16, 16, 16), ((0, 0, 0), (3, 0, 0), (0, 5, 0))),
    ((64, 64), ((0, 0, 0), (0, 0, 0))),
    ((64, 64), ((1, -2, 0), (2, 1, 0))),    # negative: the general impl
    ((64, 64), ((1, 2, 1), (0, 0, 0))),     # interior: the general impl
])
def test_pad_of_large_operands_by_edges_is_np_full_then_copy(dt, shape, config):
  x = (np.arange(int(np.prod(shape))) % 11 - 5).astype(dt).reshape(shape)
  v = np.asarray(-7 if np.dtype(dt).kind != "b" else True, dt)
  got, = _pad_impl(x, v, padding_config=config)
  want_shape = _padded_shape(config, shape)
  want = np.full(want_shape, v, dt)
  lattice = _pad_lattice(config, shape)
  src = tuple(slice(a, b + 1) for a, b, *_ in lattice)
  dst = tuple(slice(s, e, st) for *_, s, e, st in lattice)
  want[dst] = x[src]
  _same(got, want)
  _same(jax.lax.pad(jnp.asarray(x), v, config), want)


# ------------------------------------------- dynamic slices, concrete starts
_DS_STARTS = [(1, -2), (3, 7), (-9, 0), (np.int32(2), np.int32(-1)), (np.int8(-1), np.int8(1)),
              (np.uint8(250), np.uint8(0))]


@pytest.mark.parametrize("starts", _DS_STARTS, ids=str)
@pytest.mark.parametrize("as_arrays", [False, True])
def test_dynamic_slice_with_concrete_starts_is_the_general_path(starts, as_arrays):
  x = jnp.asarray(np.arange(20, dtype=np.float32).reshape(4, 5))
  if as_arrays:
    starts = tuple(jnp.asarray(s) for s in starts)
  f = lambda a, *s: jax.lax.dynamic_slice(a, s, (2, 3))
  _same(f(x, *starts), _traced(f, x, *starts))
  u = jnp.asarray(-np.ones((2, 2), np.float32))
  g = lambda a, b, *s: jax.lax.dynamic_update_slice(a, b, s)
  _same(g(x, u, *starts), _traced(g, x, u, *starts))


def test_dynamic_slice_with_concrete_starts_keeps_errors_and_weak_types():
  x = jnp.asarray(np.arange(20, dtype=np.float32).reshape(4, 5))
  with pytest.raises(TypeError):   # starts of two dtypes
    jax.lax.dynamic_slice(x, (np.int32(1), np.int8(1)), (2, 2))
  with pytest.raises(TypeError):
    jax.lax.dynamic_update_slice(x, x[:2, :2], (np.int32(1), np.int16(1)))
  with pytest.raises(TypeError):   # a window larger than the operand
    jax.lax.dynamic_slice(x, (0, 0), (5, 2))
  with pytest.raises(TypeError):
    jax.lax.dynamic_slice(x, (0.5, 0), (2, 2))
  with pytest.raises(ValueError):
    jax.lax.dynamic_slice(x, (-1, 0), (2, 2), allow_negative_indices=False)
  with pytest.raises(TypeError):   # dtypes differ
    jax.lax.dynamic_update_slice(x, jnp.zeros((2, 2), jnp.int32), (0, 0))
  weak = jax.lax.full((4,), 2.0)   # a weak operand and update
  upd = jax.lax.full((2,), 5.0)
  assert weak.aval.weak_type and upd.aval.weak_type
  f = lambda a, b, i: jax.lax.dynamic_update_slice(a, b, (i,))
  _same(f(weak, upd, 1), _traced(f, weak, upd, 1))
  _same(f(weak, upd, np.int32(3)), _traced(f, weak, upd, np.int32(3)))
  _same(jax.lax.dynamic_slice(weak, (1,), (2,)), _traced(
      lambda a: jax.lax.dynamic_slice(a, (1,), (2,)), weak))
  _same(jax.jit(f)(weak, upd, 1), f(weak, upd, 1))


# ---------------------------------------------------------------- lax.full
def test_lax_full_values_and_jaxpr():
  _same(jax.lax.full((2, 3), 1.5), np.full((2, 3), 1.5, np.float32))
  assert jax.lax.full((2,), 1.5).aval.weak_type
  _same(jax.lax.full((), 7, jnp.int8), np.array(7, np.int8))
  _same(jax.lax.full(3, jnp.asarray(np.float16(2.5))), np.full(3, 2.5, np.float16))
  with pytest.raises(TypeError):
    jax.lax.full((2,), np.zeros(2))
  text = str(jax.make_jaxpr(lambda v: jax.lax.full((2, 3), v))(np.float32(1)))
  assert text == "{ lambda ; a:f32[]. let b:f32[2,3] = broadcast_in_dim a in (b,) }", text
  text = str(jax.make_jaxpr(lambda v: jax.lax.full((), v))(np.float32(1)))
  assert text == "{ lambda ; a:f32[]. let  in (a,) }", text


# ------------------------------------------- jnp.array of lists: the join cached
_LEAF_LISTS = [
    lambda x: [x, 1.5, 2], lambda x: [x, 2], lambda x: [np.int8(1), 2.0], lambda x: [True, 1],
    lambda x: [[1, 2], [3, 4.5]], lambda x: [np.array([1, 2], np.uint8), [3, 4]],
    lambda x: [x * 1, x.astype(jnp.bfloat16)], lambda x: [1 + 2j, x], lambda x: [True, False],
]


@pytest.mark.parametrize("x64", [False, True])
def test_array_of_lists_dtypes_are_the_join(x64):
  with jax.enable_x64(x64):
    x = jnp.asarray(np.float32(1.5))
    for make in _LEAF_LISTS:
      creation._INFERRED_DTYPES.clear()
      first = jnp.array(make(x))
      for _ in range(2):   # the cached join
        again = jnp.array(make(x))
        _same(again, first)

  # a join cached without x64 is not the one with it (Python ints and floats)
  creation._INFERRED_DTYPES.clear()
  assert jnp.array([1, 2.5]).dtype == np.float32
  with jax.enable_x64(True):
    assert jnp.array([1, 2.5]).dtype == np.float64
    assert jnp.array([1, 2]).dtype == np.int64
  assert jnp.array([1, 2]).dtype == np.int32
