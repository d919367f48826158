"""Eager fast paths of view-like operations at small sizes: the lean eval
kernels of slice/squeeze/rev/transpose/reshape, the eval trace's inline check
of three or more operands, ``x[i]`` with a concrete scalar index array as a
static slice, and the jnp wrappers' per-signature shortcuts (reshape,
transpose, atleast_*, stacks, split, roll, asarray of NumPy arrays). Each
is checked against what the general path gives: values, dtypes, weak types,
shapes and errors."""
import operator

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src import lax
from openjax._src.core import Array
from openjax._src.core.avals import ShapedArray
from openjax._src.core.trace import EvalTrace, make_plan
from openjax._src.numpy.index_plans import rewriting_take
from openjax._src.primitives.base import structural
from openjax._src.primitives.shape.shape import rev_p, slice_p

_DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.uint16, np.int32, np.float16,
                                 np.float32, np.complex64, ml_dtypes.bfloat16)]


def _value(dt, shape):
  v = (np.arange(int(np.prod(shape))) % 7 - 3).reshape(shape)
  return v.astype(dt)


def _same(got, want):
  got, want = np.asarray(got), np.asarray(want)
  assert got.dtype == want.dtype and got.shape == want.shape, (got, want)
  assert got.tobytes() == want.tobytes(), (got, want)


_KERNEL_CASES = [
    (slice_p, (4, 5), dict(start_indices=(1, 0), limit_indices=(3, 5), strides=None)),
    (slice_p, (4, 5), dict(start_indices=(0, 1), limit_indices=(4, 5), strides=(2, 3))),
    (slice_p, (6,), dict(start_indices=(2,), limit_indices=(2,), strides=None)),
    (slice_p, (0, 3), dict(start_indices=(0, 1), limit_indices=(0, 3), strides=None)),
    (structural.squeeze_p, (1, 3, 1), dict(dimensions=(0, 2))),
    (structural.squeeze_p, (1,), dict(dimensions=(0,))),            # a rank-0 result
    (structural.squeeze_p, (2, 1), dict(dimensions=(1,))),
    (rev_p, (3, 4), dict(dimensions=(1,))),
    (rev_p, (3, 4), dict(dimensions=(0, 1))),
    (rev_p, (0, 2), dict(dimensions=(0,))),
    (structural.transpose_p, (2, 3, 4), dict(permutation=(2, 0, 1))),
    (structural.transpose_p, (2, 3), dict(permutation=(1, 0))),
    (structural.reshape_p, (2, 6), dict(new_sizes=(3, 4), dimensions=None)),
    (structural.reshape_p, (6,), dict(new_sizes=(1, 6, 1), dimensions=None)),
    (structural.reshape_p, (1,), dict(new_sizes=(), dimensions=None)),
    (structural.reshape_p, (0, 4), dict(new_sizes=(2, 0), dimensions=None)),
]


@pytest.mark.parametrize("prim,shape,params", _KERNEL_CASES)
def test_view_kernels_give_the_impls_result(prim, shape, params):
  """The lean kernel the plan picks (one index or ndarray method, no
  floating-point state around it) gives the impl's values, dtype and shape
  on every dtype kind; without it the plan would call the impl."""
  for dt in _DTYPES:
    aval = ShapedArray(shape, dt, False)
    kernel, lean, quiet, out_avals, _ = make_plan(prim, [aval], params)
    assert lean and not quiet, (prim, dt)
    assert type(kernel) in (operator.itemgetter, operator.methodcaller)
    x = _value(dt, shape)
    got = np.asarray(kernel(x))
    want = prim.impl(x, **params)[0]
    _same(got, want)
    assert got.shape == out_avals[0].shape
    # through bind: a read-only Array with the operand's weak type
    for weak in (False, True):
      a = lax._convert_element_type(jnp.asarray(x), dt, weak_type=weak)
      r = prim.bind1(a, **params)
      assert type(r) is Array and r.weak_type == weak and r.dtype == dt
      assert not np.asarray(r).flags.writeable
      _same(r, want)


def test_large_reshapes_keep_the_impl_and_other_views_take_the_kernel():
  big = ShapedArray((100, 100), np.dtype(np.float32), False)
  plan = make_plan(structural.reshape_p, [big], dict(new_sizes=(10000,), dimensions=None))
  assert not plan[1]   # sampled at size 1, a reshape cannot run: the impl copies broadcasts
  plan = make_plan(structural.transpose_p, [big], dict(permutation=(1, 0)))
  assert plan[1]
  x = np.arange(10000, dtype=np.float32).reshape(100, 100)
  _same(plan[0](x), x.T)
  plan = make_plan(slice_p, [big],
                   dict(start_indices=(3, 90), limit_indices=(97, 100), strides=(5, 2)))
  assert plan[1]
  _same(plan[0](x), x[3:97:5, 90:100:2])
  plan = make_plan(structural.reshape_p, [big], dict(new_sizes=(100, 100), dimensions=(1, 0)))
  assert not plan[1]


def test_three_operand_calls_are_matched_inline(monkeypatch):
  """A primitive of three operands called again with the same avals runs
  its plan without ``_recent`` (the general matcher); a new signature, a
  Python scalar operand and operands on two devices still take the general
  path."""
  calls = []
  recent = EvalTrace._recent

  def counting(self, *args):
    calls.append(args[0].name)
    return recent(self, *args)
  monkeypatch.setattr(EvalTrace, "_recent", counting)
  x = jnp.asarray(np.linspace(-2, 2, 7, dtype=np.float32))
  lo, hi = jnp.asarray(np.float32(-1)), jnp.asarray(np.float32(0.5))
  want = np.clip(np.asarray(x), -1, 0.5)
  _same(lax.clamp(lo, x, hi), want)
  calls.clear()
  for _ in range(3):
    r = lax.clamp(lo, x, hi)
    _same(r, want)
    assert r.dtype == np.float32 and not r.weak_type
  assert calls == []
  c = x > 0
  v = np.asarray(x)
  _same(lax.select(c, x, -x), np.where(v > 0, v, -v))
  _same(lax.select(c, x, -x), np.where(v > 0, v, -v))
  # a weak Python scalar operand among three: the scalar's value each call
  wx = lax._convert_element_type(x, np.float32, weak_type=True)
  for v in (0.25, -0.5, 3.0):
    r = lax.clamp(v, wx, 1.0)
    _same(r, np.clip(np.asarray(x), np.float32(v), np.float32(1.0)))
    assert r.weak_type
  # a deleted operand: the general path raises
  d = jnp.asarray(np.float32(1.0)) + 0
  lax.clamp(lo, x, d)
  d.delete()
  with pytest.raises(RuntimeError, match="deleted"):
    lax.clamp(lo, x, d)


def test_numpy_index_operands_are_matched_inline(monkeypatch):
  """A gather or scatter whose indices are a NumPy array (what ``x[idx]``
  and ``x.at[idx]`` bind for host index values) finds its plan inline on
  the next call with indices of the same shape and dtype; a writeable
  index array is copied (never aliased) and another shape misses."""
  calls = []
  recent = EvalTrace._recent

  def counting(self, *args):
    calls.append(args[0].name)
    return recent(self, *args)
  v = np.arange(15, dtype=np.float32).reshape(5, 3)
  x = jnp.asarray(v)
  i = jnp.asarray(np.array([4, 0, -1], np.int32))
  u = jnp.asarray(np.full((3, 3), 7, np.float32))
  _same(x[i], v[[4, 0, -1]])
  _same(x.at[i].set(u), np.where(np.isin(np.arange(5), [4, 0])[:, None], 7, v).astype(np.float32))
  monkeypatch.setattr(EvalTrace, "_recent", counting)
  for _ in range(3):
    _same(x[i], v[[4, 0, -1]])
    r = x.at[i].set(u)
    assert r.dtype == np.float32 and not r.weak_type
  assert "gather" not in calls and "scatter" not in calls, calls
  idx = np.array([[1], [2]], np.int32)   # writeable: the plan takes a copy
  dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                  start_index_map=(0,))
  first = lax.gather(x, idx, dn, (1, 3))
  idx[0, 0] = 3
  _same(first, v[[1, 2]])
  _same(lax.gather(x, idx, dn, (1, 3)), v[[3, 2]])
  _same(lax.gather(x, np.array([[0]], np.int32), dn, (1, 3)), v[[0]])


def test_three_operand_inline_check_places_results_on_committed_devices():
  devices = jax.devices()
  x = jax.device_put(np.arange(5, dtype=np.float32), devices[0])
  lo = jnp.asarray(np.float32(1))
  for _ in range(2):
    r = lax.clamp(lo, x, jnp.asarray(np.float32(3)))
    assert r.committed and r.device == devices[0]
    _same(r, np.clip(np.arange(5, dtype=np.float32), 1, 3))
  if len(devices) > 1:
    y = jax.device_put(np.float32(3), devices[1])
    with pytest.raises(ValueError):
      lax.clamp(jax.device_put(np.float32(1), devices[0]), x, y)


_SCALAR_INDICES = [np.asarray(-1, np.int32), np.asarray(2, np.int32), np.asarray(7, np.int32),
                   np.asarray(-9, np.int32), np.int8(-1), np.asarray(3, np.uint8),
                   np.asarray(-2, np.int64), np.asarray(2 ** 33 + 1, np.int64)]


@pytest.mark.parametrize("i", _SCALAR_INDICES, ids=repr)
@pytest.mark.parametrize("form", ["x[i]", "x[1:, i]", "x[i, ::-1]", "x[None, i]", "x[..., i]"])
def test_scalar_index_arrays_give_the_dynamic_slice_result(i, form):
  """Eager ``x[i]`` with a concrete scalar index array is a static slice at
  the start dynamic_slice takes (negative starts wrapped in the index's
  dtype, clamped into bounds): the values, dtype and weak type of the same
  index under jit, which stages dynamic_slice."""
  fn = {"x[i]": lambda x: x[i], "x[1:, i]": lambda x: x[1:, i],
        "x[i, ::-1]": lambda x: x[i, ::-1], "x[None, i]": lambda x: x[None, i],
        "x[..., i]": lambda x: x[..., i]}[form]
  for dt, weak in ((np.float32, False), (np.int32, True), (np.bool_, False)):
    x = lax._convert_element_type(jnp.asarray(_value(dt, (5, 4))), dt, weak_type=weak)
    got = fn(x)
    want = jax.jit(fn)(x)
    _same(got, want)
    assert got.weak_type == want.weak_type == weak


def test_scalar_index_arrays_wrap_in_their_dtype_as_dynamic_slice_does():
  """An int8 -1 on an axis longer than 127: dynamic_slice adds the size in
  int8 (wrapping), and so does the host start."""
  x = jnp.asarray(np.arange(300, dtype=np.float32))
  i = np.int8(-1)
  _same(x[i], jax.jit(lambda v: v[i])(x))
  _same(x[np.asarray(-1, np.int16)], np.float32(299))


def test_scalar_index_arrays_take_a_static_slice_eagerly_and_stage_dynamic_slice(monkeypatch):
  bound = []
  bind = type(slice_p).bind1

  def recording(self, *args, **params):
    bound.append(self.name)
    return bind(self, *args, **params)
  x = jnp.asarray(np.arange(12, dtype=np.float32).reshape(4, 3))
  i = np.asarray(-1, np.int32)
  monkeypatch.setattr(type(slice_p), "bind1", recording)
  _same(x[i], np.arange(9, 12, dtype=np.float32))
  assert "dynamic_slice" not in bound and "slice" in bound
  monkeypatch.undo()
  text = str(jax.make_jaxpr(lambda v: v[i])(x))
  assert "dynamic_slice" in text


def test_negative_scalar_index_without_normalising_still_raises():
  x = jnp.asarray(np.arange(6, dtype=np.float32))
  with pytest.raises(ValueError, match="allow_negative_indices=False"):
    rewriting_take(x, np.asarray(-1, np.int32), normalize_indices=False)
  _same(rewriting_take(x, np.asarray(2, np.int32), normalize_indices=False), np.float32(2))


def test_static_int_and_slice_indices_match_numpy():
  v = np.arange(20, dtype=np.float32).reshape(4, 5)
  x = jnp.asarray(v)
  for idx in (3, -1, (1, 2), (-1, -2), slice(1, 3), slice(None, None, -1), (slice(None), 1),
              (None, Ellipsis, 0), (Ellipsis, None), (slice(4, 0, -3), slice(1, None, 2)),
              slice(3, 1), ()):
    for _ in range(2):   # the second call takes the cached plan
      r = x[idx]
      _same(r, v[idx])
      assert not r.weak_type
  w = lax._convert_element_type(jnp.asarray(v[0]), np.float32, weak_type=True)
  assert w[1].weak_type and w[1:3].weak_type
  # out-of-bounds static ints clamp, as JAX's do (values from JAX 0.10.2)
  for _ in range(2):
    _same(x[4], v[3])
    _same(x[0, -6], v[0, 0])
    _same(x[0, 7], v[0, 4])
  with pytest.raises(IndexError, match="Too many indices"):
    x[0, 0, 0]


def test_reshape_and_transpose_shortcuts_keep_the_checks():
  v = np.arange(10, dtype=np.float32)
  x = jnp.asarray(v)
  for _ in range(2):
    _same(x.reshape(2, 5), v.reshape(2, 5))
    _same(x.reshape((5, -1)), v.reshape(5, -1))
    _same(jnp.reshape(x, 10), v)
    _same(x.reshape(2, 5).T, v.reshape(2, 5).T)
    _same(x.reshape(2, 5).transpose(1, 0), v.reshape(2, 5).T)
    _same(x.reshape(1, 2, 5).transpose((-1, 0, 1)), v.reshape(1, 2, 5).transpose(2, 0, 1))
    _same(jnp.transpose(x.reshape(2, 5), (1, 0)), v.reshape(2, 5).T)
    _same(x.reshape(2, 5).flatten(), v)
    _same(jnp.ravel(x.reshape(2, 5), order="F"), v.reshape(2, 5).ravel(order="F"))
  # arguments that are not ints are checked (and refused) every time, also
  # after an equal int shape was cached
  with pytest.raises(TypeError):
    x.reshape(2.0, 5.0)
  with pytest.raises(TypeError):
    x.reshape((2, 5.0))
  with pytest.raises(TypeError, match="only specify one unknown"):
    x.reshape(-1, -1)
  with pytest.raises(TypeError, match="cannot reshape"):
    x.reshape(3, 4)
  with pytest.raises(TypeError, match="cannot reshape"):
    x.reshape(3, 4)
  m = x.reshape(2, 5)
  with pytest.raises(np.exceptions.AxisError):
    m.transpose(0, 2)
  with pytest.raises(TypeError, match="permutation"):
    m.transpose(0, 0)
  with pytest.raises(TypeError):
    m.transpose(0.0, 1.0)
  _same(m.transpose(np.int64(1), np.int64(0)), v.reshape(2, 5).T)


def test_lax_wrappers_take_int_tuples_as_they_are_and_check_the_rest():
  x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
  assert lax.reshape(x, (2, 3)) is x
  assert lax.transpose(x, (0, 1)) is x
  assert lax.broadcast_in_dim(x, (2, 3), (0, 1)) is x
  _same(lax.reshape(x, [3, 2]), np.arange(6, dtype=np.float32).reshape(3, 2))
  _same(lax.reshape(x, (np.int64(3), 2)), np.arange(6, dtype=np.float32).reshape(3, 2))
  with pytest.raises(TypeError, match="non-negative"):
    lax.reshape(x, (-1, 6))
  with pytest.raises(TypeError, match="tuple of integers"):
    lax.broadcast_in_dim(x, (2, 3.0), (0, 1))
  _same(lax.broadcast_in_dim(x, (4, 2, 3), [1.0, 2.0]),   # int() of the dims, as before
        np.broadcast_to(np.arange(6, dtype=np.float32).reshape(2, 3), (4, 2, 3)))
  _same(lax.squeeze(x[None], (-3,)), np.arange(6, dtype=np.float32).reshape(2, 3))
  _same(lax.squeeze(x[None, :, None], (2, 0)), np.arange(6, dtype=np.float32).reshape(2, 3))
  with pytest.raises(ValueError):
    lax.squeeze(x, (0,))
  _same(lax.slice(x, [0, 1], [2, 3], [1, 2]), np.arange(6, dtype=np.float32).reshape(2, 3)[:, 1::2])
  with pytest.raises(TypeError, match="sequence of integers"):
    lax.slice(x, (0, 0.5), (2, 3))
  for _ in range(2):
    _same(lax.expand_dims(x, (0, -1)), np.arange(6, dtype=np.float32).reshape(1, 2, 3, 1))
    with pytest.raises(ValueError, match="repeated axis"):
      lax.expand_dims(x, (0, 0))
    with pytest.raises(ValueError, match="repeated axis"):
      lax.expand_dims(x, (3, -1))
  with pytest.raises(TypeError):
    lax.expand_dims(x, ([0],))   # an unhashable axis: refused, not cached
  with pytest.raises(TypeError):
    lax.expand_dims(x, (0.0, -1))   # equal to (0, -1) as a key: refused all the same


@pytest.mark.parametrize("fn,ref", [
    (jnp.atleast_1d, np.atleast_1d), (jnp.atleast_2d, np.atleast_2d),
    (jnp.atleast_3d, np.atleast_3d)])
def test_atleast_shortcuts(fn, ref):
  for shape in ((), (3,), (2, 3), (2, 1, 3), (1, 2, 3, 4)):
    v = _value(np.int32, shape)
    for weak in (False, True):
      x = lax._convert_element_type(jnp.asarray(v), np.int32, weak_type=weak)
      r = fn(x)
      _same(r, ref(v))
      assert r.weak_type == weak
      if np.ndim(ref(v)) == len(shape):
        assert r is x
  got = fn(jnp.asarray(1.0), np.float64(2.0), 3)
  want = ref(np.float32(1.0), np.float32(2.0), np.int32(3))
  for g, w in zip(got, want):
    _same(g, w)
  assert [g.weak_type for g in got] == [True, False, True]


def test_stacks_and_splits_of_arrays_match_numpy():
  a = _value(np.float32, (3,))
  b = _value(np.float32, (3,))[::-1].copy()
  x, y = jnp.asarray(a), jnp.asarray(b)
  for _ in range(2):
    _same(jnp.vstack([x, y]), np.vstack([a, b]))
    _same(jnp.vstack((x, y)), np.vstack([a, b]))
    _same(jnp.hstack([x, y]), np.hstack([a, b]))
    _same(jnp.dstack([x, y]), np.dstack([a, b]))
    _same(jnp.column_stack([x, y]), np.column_stack([a, b]))
    for axis in (0, 1, -1):
      _same(jnp.stack([x, y], axis=axis), np.stack([a, b], axis=axis))
    _same(jnp.stack((x,)), np.stack((a,)))
  s = jnp.stack([jnp.asarray(2.0), jnp.asarray(3.0)])
  assert s.weak_type and s.shape == (2,)
  assert not jnp.stack([jnp.asarray(2.0), jnp.asarray(np.float32(3.0))]).weak_type
  _same(jnp.vstack([x, a]), np.vstack([a, a]))
  with pytest.raises(ValueError, match="same shape"):
    jnp.stack([x, x[:2]])
  with pytest.raises(TypeError):
    jnp.vstack([x, [1.0, 2.0, 3.0]])
  m = _value(np.int32, (4, 6))
  z = jnp.asarray(m)
  for args in ((2,), ([1, 3],), ([1, 1, 5], 1), ([0, 6], -1), (np.array([2]),), (3, 1)):
    got, want = jnp.split(z, *args), np.split(m, *args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
      _same(g, w)
  for g, w in zip(jnp.array_split(z, 3, axis=1), np.array_split(m, 3, axis=1)):
    _same(g, w)
  with pytest.raises(ValueError, match="equal division"):
    jnp.split(z, 5, axis=1)
  pieces = lax.split(z, (1, 0, 5), axis=-1)
  assert [p.shape for p in pieces] == [(4, 1), (4, 0), (4, 5)]
  for p, w in zip(pieces, (m[:, :1], m[:, 1:1], m[:, 1:])):
    _same(p, w)
    assert not np.asarray(p).flags.writeable
  assert lax.split(jnp.zeros((0, 2)), (), axis=0) == []


def test_roll_shortcut():
  v = _value(np.float32, (3, 4))
  x = jnp.asarray(v)
  for shift, axis in ((1, None), (-5, None), (2, 1), ((1, 2), (0, 1)), (np.int32(3), 0),
                      (jnp.asarray(2), 1), (True, 0)):
    _same(jnp.roll(x, shift, axis), np.roll(v, np.asarray(shift), axis))


def test_asarray_of_numpy_arrays():
  """jnp.asarray of a NumPy array: a private read-only copy in the canonical
  dtype, never weak; x64 changes the dtype it is made in."""
  for dt, want in ((np.float64, np.float32), (np.int64, np.int32), (np.uint64, np.uint32),
                   (np.float16, np.float16), (np.bool_, np.bool_), (np.complex128, np.complex64),
                   (ml_dtypes.bfloat16, ml_dtypes.bfloat16)):
    v = np.arange(4).astype(dt)
    r = jnp.asarray(v)
    assert type(r) is Array and r.dtype == want and not r.weak_type and r.shape == (4,)
    v[0] = 1
    assert np.asarray(r)[0] == 0   # not aliased
    assert not np.asarray(r).flags.writeable
    with jax.enable_x64():
      assert jnp.asarray(v).dtype == np.dtype(dt)
  big = np.asarray([2 ** 40])
  assert jnp.asarray(big).dtype == np.int32
  assert jnp.asarray(np.zeros((2, 0, 3))).shape == (2, 0, 3)
  assert jnp.asarray(np.float64(2.5) * np.ones(())).shape == ()
  with pytest.raises(TypeError):
    jnp.asarray(np.array(["a"]))
  with pytest.raises(TypeError):
    jnp.asarray(np.array([object()]))
  assert jnp.asarray(np.arange(3), dtype=np.float32).dtype == np.float32


def test_asarray_of_an_array_is_the_array_and_array_copies():
  x = jnp.asarray(np.arange(3, dtype=np.float32))
  w = lax._convert_element_type(x, np.float32, weak_type=True)
  assert jnp.asarray(x) is x and jnp.asarray(w) is w and jnp.asarray(w).weak_type
  c = jnp.asarray(x, copy=True)
  assert c is not x and type(c) is Array
  _same(c, np.arange(3, dtype=np.float32))
  assert jnp.array(x) is not x
  r = jnp.asarray(x, dtype=np.int32)
  assert r.dtype == np.int32 and not r.weak_type
  # jnp.array of a NumPy array with a dtype: a private copy in that dtype
  v = np.arange(4, dtype=np.float64) - 1.5
  for dt in (np.int32, np.float16, ml_dtypes.bfloat16, np.bool_):
    r = jnp.array(v, dtype=dt)
    assert r.dtype == np.dtype(dt) and not r.weak_type
    _same(r, v.astype(dt))
  assert jnp.array(v, ndmin=3).shape == (1, 1, 4)
  with pytest.raises(NotImplementedError):
    jnp.array(v, order="F")
