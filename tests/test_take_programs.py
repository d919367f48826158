"""``jnp.take`` and ``jnp.take_along_axis`` are jits, as in JAX: make_jaxpr
prints ``jit[name=_take]`` (with its ``_where``) and
``jit[name=take_along_axis]`` as JAX 0.10.2 does, and eager calls run each
as one cached library program (NumPy index arrays keyed by shape and dtype
take the last call's slot); the gather kernels check bounds with one
reduction (``gather_kernels._in_bounds``) and clamp or fill only indices
out of bounds. Values against NumPy."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.api import eager_call
from openjax._src.numpy import indexing
from openjax._src.numpy import indexer
from openjax._src.primitives.index import gather_kernels

# make_jaxpr(lambda x, i: jnp.take(x, i, axis=1))(f32[2,4], i32[2]), JAX 0.10.2
JAX_TAKE = """{ lambda ; a:f32[2,4] b:i32[2]. let
    c:f32[2,2] = jit[
      name=_take
      jaxpr={ lambda ; a:f32[2,4] b:i32[2]. let
          d:bool[2] = lt b 0:i32[]
          e:i32[2] = add b 4:i32[]
          f:i32[2] = jit[
            name=_where
            jaxpr={ lambda ; d:bool[2] e:i32[2] b:i32[2]. let
                f:i32[2] = select_n d b e
              in (f,) }
          ] d e b
          g:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] f
          c:f32[2,2] = gather[
            dimension_numbers=GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(), start_indices_batching_dims=())
            fill_value=nan
            indices_are_sorted=False
            mode=GatherScatterMode.FILL_OR_DROP
            slice_sizes=(2, 1)
            unique_indices=False
          ] a g
        in (c,) }
    ] a b
  in (c,) }"""

# make_jaxpr(lambda x, i: jnp.take_along_axis(x, i, axis=1))(f32[2,4], i32[2,2]), JAX 0.10.2
JAX_TAKE_ALONG = """{ lambda ; a:f32[2,4] b:i32[2,2]. let
    c:f32[2,2] = jit[
      name=take_along_axis
      jaxpr={ lambda ; a:f32[2,4] b:i32[2,2]. let
          d:bool[2,2] = lt b 0:i32[]
          e:i32[2,2] = add b 4:i32[]
          f:i32[2,2] = select_n d b e
          g:i32[2,2,1] = reshape[
            dimensions=None
            new_sizes=(2, 2, 1)
            sharding=None
          ] f
          c:f32[2,2] = gather[
            dimension_numbers=GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
            fill_value=nan
            indices_are_sorted=False
            mode=GatherScatterMode.FILL_OR_DROP
            slice_sizes=(1, 1)
            unique_indices=False
          ] a g
        in (c,) }
    ] a b
  in (c,) }"""


def test_take_prints_jaxs_jaxpr():
  x, i = np.ones((2, 4), np.float32), np.array([1, 2], np.int32)
  assert str(jax.make_jaxpr(lambda x, i: jnp.take(x, i, axis=1))(x, i)) == JAX_TAKE


def test_take_along_axis_prints_jaxs_jaxpr():
  x, i = np.ones((2, 4), np.float32), np.array([[1, 2], [0, 1]], np.int32)
  assert str(jax.make_jaxpr(lambda x, i: jnp.take_along_axis(x, i, axis=1))(x, i)) == \
      JAX_TAKE_ALONG


def _np_take(x, i, axis, mode, fill):
  n = x.shape[axis] if axis is not None else x.size
  flat = x.ravel() if axis is None else x
  ax = 0 if axis is None else axis % x.ndim
  if mode == "clip":
    return np.take(flat, np.clip(i, 0, n - 1), axis=ax)
  if mode == "wrap":
    return np.take(flat, np.mod(i, n), axis=ax)
  j = np.where(i < 0, i + n, i)
  ok = (j >= 0) & (j < n)
  out = np.take(flat, np.clip(j, 0, n - 1), axis=ax)
  shape = [1] * out.ndim
  shape[ax:ax + ok.ndim] = ok.shape
  return np.where(ok.reshape(shape), out, np.nan if fill is None else fill)


@pytest.mark.parametrize("idt", [np.int8, np.int32, np.int64, np.uint8, np.uint32])
@pytest.mark.parametrize("mode", [None, "fill", "clip", "wrap"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take_values(idt, mode, axis):
  x = np.arange(24, dtype=np.float32).reshape(4, 6)
  n = x.size if axis is None else x.shape[axis]
  raw = np.array([0, 1, n - 1, n, n + 3, -1, -n, -n - 2, 2])
  i = raw if np.dtype(idt).kind == "i" else raw[raw >= 0]
  i = i.astype(idt)
  want = _np_take(x, i.astype(np.int64), axis, mode, None)
  for idx in (i, jnp.asarray(i)):
    for _ in range(2):   # the first call makes the program, the second runs it again
      got = jnp.take(jnp.asarray(x), idx, axis=axis, mode=mode)
      np.testing.assert_array_equal(np.asarray(got), want.astype(np.float32))
  jitted = jax.jit(lambda a, b: jnp.take(a, b, axis=axis, mode=mode))(x, i)
  np.testing.assert_array_equal(np.asarray(jitted), want.astype(np.float32))


def test_take_fill_value_scalars_and_errors():
  x = jnp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
  got = jnp.take(x, np.array([[0, 5], [-1, 2]]), axis=1, fill_value=-7)
  np.testing.assert_array_equal(np.asarray(got), _np_take(np.asarray(x), np.array(
      [[0, 5], [-1, 2]]), 1, None, -7))
  assert jnp.take(x, 4).shape == () and int(jnp.take(x, 4)) == 4
  assert jnp.take(x, np.zeros((0,), np.int32), axis=1).shape == (2, 0)
  with pytest.raises(NotImplementedError, match="out"):
    jnp.take(x, np.array([0]), out=np.zeros(1))
  with pytest.raises(ValueError, match="Invalid mode"):
    jnp.take(x, np.array([0]), mode="bogus")
  with pytest.raises(IndexError, match="empty axis"):
    jnp.take(jnp.zeros((2, 0)), np.array([0]), axis=1)
  with pytest.raises(TypeError, match="take"):
    jnp.take(x, [0, 1])


def test_take_eager_calls_run_one_program(monkeypatch):
  x = jnp.asarray(np.ones((2, 4), np.float32))
  i = np.array([1, -2, 3])
  jnp.take(x, i, axis=1)
  jnp.take(x, i, axis=1)
  assert indexing._take._eager_fast, "no cached library program"
  keys = []
  real = eager_call.eager_key
  monkeypatch.setattr(eager_call, "eager_key", lambda *a: keys.append(1) or real(*a))
  got = jnp.take(x, np.array([0, 3, -1]), axis=1)   # another NumPy index of the same type
  assert keys == []   # the last call's slot: NumPy leaves checked by shape and dtype
  np.testing.assert_array_equal(np.asarray(got), np.ones((2, 3), np.float32))
  got = jnp.take(x, np.array([0, 3]), axis=1)   # another shape: keyed anew
  assert keys == [1] and got.shape == (2, 2)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_take_along_axis_values(axis):
  x = np.arange(12, dtype=np.float16).reshape(3, 4)
  if axis is None:
    i = np.array([11, 0, -1, 13])
    n = x.size
  else:
    i = np.array([[0, 2, -1, 7], [1, -5, 3, 0], [2, 2, 2, 2]])[:, :4 if axis == 1 else 4]
    n = x.shape[axis]
  j = np.where(i < 0, i + n, i)
  ok = (j >= 0) & (j < n)
  src = x.ravel() if axis is None else x
  want = np.where(ok, np.take_along_axis(src, np.clip(j, 0, n - 1), axis=0 if axis is None
                                         else axis), np.nan)
  for idx in (i, jnp.asarray(i)):
    got = jnp.take_along_axis(jnp.asarray(x), idx, axis=axis)
    np.testing.assert_array_equal(np.asarray(got), want.astype(np.float16))
  with pytest.raises(TypeError, match="integer"):
    jnp.take_along_axis(jnp.asarray(x), np.zeros((3, 4), np.float32), axis=1)


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                np.uint32, np.uint64])
def test_in_bounds_reads_negatives_as_out_of_bounds(dt):
  info = np.iinfo(dt)
  c = np.array([0, 3, 5], dt)
  assert gather_kernels._in_bounds(c, 5)
  assert not gather_kernels._in_bounds(c, 4)
  assert gather_kernels._in_bounds(np.zeros((0,), dt), -1)
  assert not gather_kernels._in_bounds(np.array([info.max], dt), 5)
  if info.min < 0:
    assert not gather_kernels._in_bounds(np.array([2, -1], dt), 5)
    # (bounds are at most the index dtype's largest value: gather_kernels._index_max)
    assert not gather_kernels._in_bounds(np.array([info.min], dt), int(info.max))
  strided = np.array([[1, 9], [2, 9]], dt)[:, 0]   # a column view, as the kernels read
  assert gather_kernels._in_bounds(strided, 2)


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32])
@pytest.mark.parametrize("n", [1, 7, indexer.SMALL_INDEX, indexer.SMALL_INDEX + 1, 300])
def test_index_checks_agree_on_the_small_and_the_array_paths(dt, n):
  # up to SMALL_INDEX values the checks run on Python ints, past it by ufuncs
  rng = np.random.default_rng(n)
  signed = np.dtype(dt).kind == "i"
  for shape in ((n,), (n, 1), (1, n)):
    c = rng.integers(0, 6, shape).astype(dt)
    assert gather_kernels._in_bounds(c, 5) and gather_kernels._in_bounds(c.T, 5)
    for bad in ([6] + [-1] * signed):
      d = c.copy()
      d.flat[n // 2] = bad
      assert not gather_kernels._in_bounds(d, 5)
    v = rng.integers(-7 if signed else 0, 7, shape).astype(dt)
    want = np.where(v < 0, v + 7, v).astype(dt)
    got = indexer.add_size_to_negatives(v.copy(), 7)
    assert got.dtype == dt
    np.testing.assert_array_equal(got, want)
    col = np.stack([v, v], -1)[..., 0]   # a strided column, changed in place
    indexer.add_size_to_negatives(col, 7)
    np.testing.assert_array_equal(col, want)
  if signed:
    assert int(indexer.add_size_to_negatives(np.array(-2, dt), 5)) == 3
  assert indexer.add_size_to_negatives(np.zeros((0, 2), dt), 5).shape == (0, 2)


@pytest.mark.parametrize("idt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32])
@pytest.mark.parametrize("mode", [None, "fill", "wrap", "clip"])
def test_many_host_indices_wrap_on_the_host(idt, mode, monkeypatch):
  # Past _HOST_INDICES_MIN host indices are wrapped on the host and the
  # gather bound (the program's passes each make a fresh result): the same
  # values as the staged program, int64 indices truncated first as JAX's
  # int32 conversion does.
  rng = np.random.default_rng(3)
  info = np.iinfo(idt)
  n_idx = indexing._HOST_INDICES_MIN + 5
  calls = []
  real = indexing._take_host_indices
  monkeypatch.setattr(indexing, "_take_host_indices", lambda *a: calls.append(1) or real(*a))
  for size in (1, 7, 127, 300):
    x = jnp.asarray(rng.standard_normal((size, 2)).astype(np.float32))
    lo, hi = max(int(info.min), -3 * size), min(int(info.max), 3 * size)
    i = rng.integers(lo, hi + 1, n_idx).astype(idt)
    staged = jax.jit(lambda a, b: jnp.take(a, b, axis=0, mode=mode))
    for idx in (i, jnp.asarray(i)):
      got = jnp.take(x, idx, axis=0, mode=mode)
      want = staged(x, idx)
      assert got.dtype == want.dtype
      np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
  assert calls or mode == "clip"
  big = np.array([2**32 + 5, -2**33 - 1] * n_idx, np.int64)
  x = jnp.asarray(np.arange(10, dtype=np.float32))
  np.testing.assert_array_equal(np.asarray(jnp.take(x, big, mode=mode)),
                                np.asarray(jax.jit(lambda a, b: jnp.take(a, b, mode=mode))(x, big)))


def test_many_host_indices_along_an_axis():
  rng = np.random.default_rng(4)
  x = jnp.asarray(rng.standard_normal((3, 2000)).astype(np.float32))
  for dt in (np.int8, np.int32, np.int64, np.uint16):
    lo = -2500 if np.dtype(dt).kind == "i" else 0
    i = rng.integers(lo, 2500, (3, 2000)).astype(dt)
    for idx in (i, jnp.asarray(i)):
      for mode in (None, "clip", "fill"):
        got = jnp.take_along_axis(x, idx, axis=1, mode=mode)
        want = jax.jit(lambda a, b: jnp.take_along_axis(a, b, axis=1, mode=mode))(x, idx)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
