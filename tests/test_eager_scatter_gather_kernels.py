"""The point scatter and gather eval kernels (primitives/index/scatter_kernels.py,
gather_kernels.py) against the general impls, bit for bit (decision 12):
every scatter kind and mode, repeated, negative and out-of-bounds indices,
broadcast and empty updates, every dtype family; the gather layouts of
``x[:, i, j]``, ``take_along_axis`` and unsorted index columns; and that
large operands keep the kernels (the eval trace checks them at size 1)."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.core.avals import ShapedArray
from openjax._src.core.trace import make_plan
from openjax._src.numpy import index_plans
from openjax._src.primitives.index import gather_scatter
from openjax._src.primitives.index.indexing_util import (GatherDimensionNumbers,
                                                         GatherScatterMode,
                                                         ScatterDimensionNumbers)

_SCATTERS = [gather_scatter.scatter_p, gather_scatter.scatter_add_p,
             gather_scatter.scatter_sub_p, gather_scatter.scatter_mul_p,
             gather_scatter.scatter_min_p, gather_scatter.scatter_max_p]
_MODES = [GatherScatterMode.FILL_OR_DROP, GatherScatterMode.CLIP,
          GatherScatterMode.PROMISE_IN_BOUNDS]
_DTYPES = [np.dtype(t) for t in (np.float32, np.float64, np.float16, ml_dtypes.bfloat16,
                                 np.int32, np.uint8, np.int8, np.int64, np.bool_, np.complex64,
                                 ml_dtypes.int4)]


def _draw(rng, dt, *shape):
  v = rng.standard_normal(shape) * 3
  if dt.kind == "c":
    v = v + 1j * rng.standard_normal(shape)
  v = v > 0 if dt == np.bool_ else v.astype(dt)
  if dt.kind == "f" and v.size:
    v.reshape(-1)[::7] = np.nan   # NaNs and repeats: the order of application shows
  return v


def _same_bits(got, want) -> None:
  want = np.ascontiguousarray(want)
  assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
  np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


def _lean_kernel(p, operands, params):
  kernel, lean, *_ = make_plan(p, [ShapedArray(a.shape, a.dtype) for a in operands], params)
  return kernel if lean else None


def _scatter_cases(dt, rng):
  """(operand, indices, updates, dimension numbers) of point scatters:
  elements, trailing rows, leading rows, two index columns in either order,
  batch dimensions, huge unsigned indices, empty operands and updates."""
  sd = ScatterDimensionNumbers
  matrix, cube = _draw(rng, dt, 6, 3), _draw(rng, dt, 3, 4, 5)
  pairs = np.stack([rng.integers(-1, 7, 9), rng.integers(-1, 5, 9)], 1)
  return [
      (_draw(rng, dt, 16), rng.integers(-3, 20, (40, 1)).astype(np.int32),
       _draw(rng, dt, 40), sd((), (0,), (0,))),                             # bincount
      (_draw(rng, dt, 16), rng.integers(-3, 20, (40, 1)).astype(np.int32),
       np.broadcast_to(_draw(rng, dt, 1).reshape(()), (40,)), sd((), (0,), (0,))),
      (matrix, rng.integers(-2, 8, (2, 5, 1)).astype(np.int64), _draw(rng, dt, 2, 5, 3),
       sd((2,), (0,), (0,))),                                               # x.at[rows]
      (matrix, rng.integers(-2, 8, (2, 5, 1)).astype(np.int64),
       np.broadcast_to(_draw(rng, dt, 3), (2, 5, 3)), sd((2,), (0,), (0,))),
      (matrix, rng.integers(0, 4, (4, 1)).astype(np.uint32), _draw(rng, dt, 4, 6),
       sd((1,), (1,), (1,))),                                               # x.at[:, cols]
      (matrix, rng.integers(0, 4, (4, 1)).astype(np.uint32), _draw(rng, dt, 6, 4),
       sd((0,), (1,), (1,))),
      (matrix, pairs.astype(np.int32), _draw(rng, dt, 9), sd((), (0, 1), (0, 1))),
      (matrix, pairs[:, ::-1].astype(np.int8), _draw(rng, dt, 9), sd((), (0, 1), (1, 0))),
      (cube, pairs[:7].astype(np.int16), _draw(rng, dt, 7, 4), sd((1,), (0, 2), (0, 2))),
      (cube, pairs[:7].astype(np.int16), _draw(rng, dt, 4, 7), sd((0,), (0, 2), (0, 2))),
      (cube, rng.integers(0, 5, (2, 3, 1)).astype(np.uint64), _draw(rng, dt, 2, 3, 3, 5),
       sd((2, 3), (1,), (1,))),
      (cube, np.array([[2**63 + 5]], np.uint64), _draw(rng, dt, 1, 3, 5), sd((1, 2), (1,), (1,))),
      (_draw(rng, dt, 0, 3), rng.integers(0, 2, (4, 1)).astype(np.int32), _draw(rng, dt, 4, 3),
       sd((1,), (0,), (0,))),
      (matrix, np.zeros((0, 1), np.int32), _draw(rng, dt, 0, 3), sd((1,), (0,), (0,))),
      (_draw(rng, dt, 5), np.array([[1], [1], [1], [4], [4]], np.int32), _draw(rng, dt, 5),
       sd((), (0,), (0,))),
  ]


@pytest.mark.parametrize("p", _SCATTERS, ids=lambda p: p.name)
@pytest.mark.parametrize("dt", _DTYPES, ids=str)
def test_point_scatter_kernel_gives_the_impls_bits(p, dt):
  rng = np.random.default_rng(0)
  checked = 0
  for operand, indices, updates, dn in _scatter_cases(dt, rng):
    for mode in _MODES:
      params = dict(dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
                    mode=mode, update_jaxpr=None, update_consts=())
      kernel = _lean_kernel(p, [operand, indices, updates], params)
      if p is gather_scatter.scatter_sub_p and dt == np.bool_:
        assert kernel is None   # NumPy has no bool subtract: the impl's error (or no-op) stays
        continue
      assert kernel is not None, (operand.shape, indices.shape, dn)
      with np.errstate(all="ignore"):
        want = p.impl(operand, indices, updates, **params)[0]
        _same_bits(kernel(operand, indices, updates), want)
      checked += 1
  assert checked == 45 or (p is gather_scatter.scatter_sub_p and dt == np.bool_)


def test_scatter_kernel_leaves_partial_and_batched_windows_and_apply_to_the_impl():
  f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
  base = dict(indices_are_sorted=False, unique_indices=False, mode=GatherScatterMode.CLIP,
              update_consts=())
  partial = dict(base, dimension_numbers=ScatterDimensionNumbers((1,), (), (0,)),
                 update_jaxpr=None)   # windows of 2 along the indexed dimension
  assert gather_scatter.scatter_add_p.eval_kernel(
      ShapedArray((5,), f32), ShapedArray((3, 1), i32), ShapedArray((3, 2), f32),
      **partial) is None
  batched = dict(base, dimension_numbers=ScatterDimensionNumbers((), (1,), (1,), (0,), (0,)),
                 update_jaxpr=None)
  assert gather_scatter.scatter_p.eval_kernel(
      ShapedArray((2, 5), f32), ShapedArray((2, 3, 1), i32), ShapedArray((2, 3), f32),
      **batched) is None
  x = jnp.arange(6, dtype=jnp.int32)
  i = np.array([1, 3, 1, 1])
  np.testing.assert_array_equal(x.at[i].apply(lambda v: v * 2 + 1), [0, 15, 2, 7, 4, 5])


@pytest.mark.parametrize("mode", [None, "clip", "drop", "promise_in_bounds"])
def test_large_scatters_keep_the_kernel(mode):
  """Operands past the eval trace's sampling size are checked at size 1:
  the kernels read sizes from the values, so 1e5 elements stay lean."""
  rng = np.random.default_rng(2)
  n = 100_000
  x = rng.standard_normal(n).astype(np.float32)
  i = rng.integers(-n - 5, n + 5, n)
  u = rng.standard_normal(n).astype(np.float32)
  wrapped = np.where(i < 0, i + n, i)
  keep = (wrapped >= 0) & (wrapped < n) if mode != "clip" else np.ones(n, bool)
  target = np.clip(wrapped, 0, n - 1)[keep]
  want = x.copy()
  np.add.at(want, target, u[keep])
  _same_bits(np.asarray(jnp.asarray(x).at[i].add(u, mode=mode)), want)
  want = x.copy()
  want[target] = 7.0
  _same_bits(np.asarray(jnp.asarray(x).at[i].set(7.0, mode=mode)), want)
  operand = rng.standard_normal((n // 4, 4)).astype(np.float32)
  params = dict(dimension_numbers=ScatterDimensionNumbers((1,), (0,), (0,)),
                indices_are_sorted=False, unique_indices=False,
                mode=GatherScatterMode.from_any(mode or "drop"), update_jaxpr=None,
                update_consts=())
  idx = rng.integers(-3, n // 4 + 3, (n // 8, 1)).astype(np.int32)
  upd = rng.standard_normal((n // 8, 4)).astype(np.float32)
  pairs = np.stack([rng.integers(-3, n // 4 + 3, n // 8), rng.integers(-1, 5, n // 8)], 1)
  for p in (gather_scatter.scatter_p, gather_scatter.scatter_max_p):
    kernel = _lean_kernel(p, [operand, idx, upd], params)
    assert kernel is not None
    _same_bits(kernel(operand, idx, upd), p.impl(operand, idx, upd, **params)[0])
    # two index columns: the plan's check at size 1 has a single column
    points = dict(params, dimension_numbers=ScatterDimensionNumbers((), (0, 1), (0, 1)))
    kernel = _lean_kernel(p, [operand, pairs, upd[:, 0]], points)
    assert kernel is not None
    _same_bits(kernel(operand, pairs, upd[:, 0]),
               p.impl(operand, pairs, upd[:, 0], **points)[0])


def _gather_cases(idt, rng):
  """(operand shape, indices, dimension numbers, slice sizes) of point gathers."""
  gd = GatherDimensionNumbers

  def ints(*shape):
    v = rng.integers(-5, 6, shape)
    return (np.abs(v) if np.dtype(idt).kind == "u" else v).astype(idt)
  return [
      ((2, 3, 4), ints(2, 2, 2), gd((0,), (1, 2), (1, 2)), (2, 1, 1)),          # x[:, i, j]
      ((3, 4), ints(3, 2, 1), gd((), (1,), (1,), (0,), (0,)), (1, 1)),          # take_along_axis
      ((3, 4, 2), ints(3, 5, 1), gd((2,), (1,), (1,), (0,), (0,)), (1, 1, 2)),
      ((4, 3), ints(3, 2, 1), gd((), (0,), (0,), (1,), (0,)), (1, 1)),
      ((2, 3, 4), ints(2, 2, 1), gd((2,), (1,), (1,), (0,), (0,)), (1, 1, 4)),
      ((4, 5), ints(2, 3, 2), gd((), (0, 1), (0, 1)), (1, 1)),
      ((4, 5), ints(2, 3, 2), gd((), (0, 1), (1, 0)), (1, 1)),                  # unsorted
      ((3, 4, 5), ints(2, 2), gd((1,), (0, 2), (0, 2)), (1, 4, 1)),
      ((3, 4, 5), ints(2, 2), gd((0,), (0, 2), (0, 2)), (1, 4, 1)),
      ((3, 4, 5), ints(2), gd((0,), (0, 2), (0, 2)), (1, 4, 1)),                # one vector
      ((3, 4, 5), ints(6, 1), gd((0, 2), (1,), (1,)), (3, 1, 5)),               # take, axis 1
      ((3, 4, 5), ints(2, 3, 1), gd((2, 3), (1,), (1,)), (3, 1, 5)),
      ((7,), ints(4, 1), gd((), (0,), (0,)), (1,)),
  ]


@pytest.mark.parametrize("idt", [np.int32, np.int8, np.uint8, np.int64, np.uint32], ids=str)
def test_point_gather_kernel_gives_the_impls_bits(idt):
  rng = np.random.default_rng(3)
  checked = 0
  for dt in [np.dtype(t) for t in (np.float32, ml_dtypes.bfloat16, np.int32, np.bool_,
                                   np.complex64)]:
    for shape, idx, dn, sizes in _gather_cases(idt, rng):
      x = _draw(rng, dt, *shape)
      for mode, fill in ((GatherScatterMode.CLIP, None), (GatherScatterMode.PROMISE_IN_BOUNDS,
                                                            None),
                         (GatherScatterMode.FILL_OR_DROP, None),
                         (GatherScatterMode.FILL_OR_DROP, 1)):
        params = dict(dimension_numbers=dn, slice_sizes=sizes, unique_indices=False,
                      indices_are_sorted=False, mode=mode, fill_value=fill)
        kernel = _lean_kernel(gather_scatter.gather_p, [x, idx], params)
        assert kernel is not None, (shape, idx.shape, dn, mode)
        _same_bits(kernel(x, idx), gather_scatter.gather_p.impl(x, idx, **params)[0])
        checked += 1
  assert checked == 5 * 13 * 4


def test_large_gathers_keep_the_kernel():
  rng = np.random.default_rng(4)
  m = rng.standard_normal((1000, 100)).astype(np.float32)
  i = rng.integers(-100, 100, (1000, 30))
  got = jnp.take_along_axis(jnp.asarray(m), i, axis=1)
  _same_bits(np.asarray(got), np.take_along_axis(m, np.where(i < 0, i + 100, i), axis=1))
  cube = m.reshape(10, 100, 100)
  a, b = rng.integers(-100, 100, (50, 1)), rng.integers(-100, 100, (40,))
  _same_bits(np.asarray(jnp.asarray(cube)[:, a, b]), cube[:, a, b])
  params = dict(dimension_numbers=GatherDimensionNumbers((0,), (1, 2), (1, 2)),
                slice_sizes=(10, 1, 1), unique_indices=False, indices_are_sorted=False,
                mode=GatherScatterMode.FILL_OR_DROP, fill_value=-1.0)
  idx = rng.integers(-3, 103, (50, 40, 2)).astype(np.int32)
  kernel = _lean_kernel(gather_scatter.gather_p, [cube, idx], params)
  assert kernel is not None
  _same_bits(kernel(cube, idx), gather_scatter.gather_p.impl(cube, idx, **params)[0])


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64])
def test_index_columns_wrap_negatives_as_the_general_path(dt):
  info = np.iinfo(dt)
  v = np.array([min(max(e, info.min), info.max)
                for e in (0, 1, -1, -7, 6, info.min, info.max, info.min + 3)], dtype=dt)
  for index_dtype in (np.dtype(np.int32), np.dtype(np.int64)):
    want = v.astype(index_dtype)
    if np.dtype(dt).kind != "u":
      want = np.where(want < 0, want + 7, want).astype(index_dtype)
    got = index_plans._index_column(v, 7, index_dtype)
    assert got.dtype == want.dtype and got is not v
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int32, ml_dtypes.int4, np.bool_,
                                np.float16, np.float32], ids=str)
def test_eager_updates_take_numpy_views_with_the_traced_values(dt):
  """Eagerly, ``.at[]`` passes a Python int/bool update and broadcast,
  squeezed or reversed updates to the scatter as NumPy views: values,
  dtypes and weak types as under jit (which binds broadcast/squeeze/rev)."""
  x = jnp.asarray((np.arange(12).reshape(3, 4) % 5).astype(dt))
  row = jnp.asarray((np.arange(4) % 2).astype(dt))
  col = jnp.asarray(np.array([[1], [0], [1]]).astype(dt))
  updates = [
      lambda a: a.at[1].set(True if dt == np.bool_ else 7),
      lambda a: a.at[np.array([0, 2, 0])].add(True if dt == np.bool_ else 1),
      lambda a: a.at[:, 1].set(True if dt == np.bool_ else -1 if dt != np.uint8 else 3),
      lambda a: a.at[1].set(300),                      # out of int8 range: the general path
      lambda a: a.at[0].set(2.5),                      # float into ints: promoted, cast back
      lambda a: a.at[::-1, None, 1:].max(row[1:]),     # reversed, new axis, broadcast
      lambda a: a.at[np.array([2, 0]), ::-2].min(col[:2]),
      lambda a: a.at[None, 1, np.array([3, 1])].multiply(row[:2]),
      lambda a: a.at[np.array([2, 0]), 1:3].set(np.ones((2, 1), dt)),   # NumPy, same dtype
      lambda a: a.at[1].add(np.arange(4, dtype=np.int64)),             # NumPy, promoted
  ]
  for f in updates:
    with np.errstate(all="ignore"), warnings.catch_warnings():
      warnings.simplefilter("ignore")
      try:
        eager = f(x)
      except Exception as err:   # noqa: BLE001 - no promotion of float with int4: the same error
        with pytest.raises(type(err)):
          jax.jit(f)(x)
        continue
      traced = jax.jit(f)(x)
    assert eager.dtype == traced.dtype and eager.weak_type == traced.weak_type
    np.testing.assert_array_equal(np.asarray(eager).astype(np.float32),
                                  np.asarray(traced).astype(np.float32))
  mine = np.ones((2, 1), dt)
  got = x.at[np.array([2, 0]), 1:3].set(mine)
  mine[...] = 0   # the caller's array is read during the call only
  assert np.asarray(got)[0, 1] == np.asarray(x.at[0, 1].set(np.ones((), dt)))[0, 1]
  with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
    x.at[1].set(np.ones(3, dt))
  weak = jnp.asarray(5)
  assert weak.at[()].set(7).weak_type and int(weak.at[()].set(7)) == 7


def test_take_along_axis_plans_once_per_signature_and_reads_each_calls_values():
  rng = np.random.default_rng(5)
  m = rng.standard_normal((3, 5)).astype(np.float32)
  for _ in range(3):   # one signature, new index values each call
    i = rng.integers(-5, 5, (3, 2))
    np.testing.assert_array_equal(jnp.take_along_axis(m, i, axis=1),
                                  np.take_along_axis(m, np.where(i < 0, i + 5, i), axis=1))
  i = np.array([[0, 7], [-9, 1], [2, 2]])
  np.testing.assert_array_equal(jnp.take_along_axis(m, i, axis=1, mode="one_hot"),
                                [[m[0, 0], 0], [0, m[1, 1]], [m[2, 2], m[2, 2]]])
  for _ in range(2):   # errors are raised every call (failed signatures are not kept)
    with pytest.raises(TypeError, match="integer type"):
      jnp.take_along_axis(m, i.astype(np.float32), axis=1)
    with pytest.raises(ValueError, match="same number of dimensions"):
      jnp.take_along_axis(m, i[0], axis=1)


@pytest.mark.parametrize("dt", _DTYPES, ids=str)
def test_few_replacing_writes_over_several_dimensions_give_the_impls_bits(dt):
  # A replacing scatter of at most _FEW_WRITES index vectors writes each by a
  # basic index (scatter_kernels._few_writes), also over two or three
  # indexed dimensions (x.at[1, 2].set(v)): out-of-bounds vectors dropped,
  # repeated ones the last write, rows taken whole.
  rng = np.random.default_rng(3)
  sd = ScatterDimensionNumbers
  cube = _draw(rng, dt, 3, 4, 5)
  repeated = np.array([[1, 2], [1, 2], [-1, 0], [2, 4], [3, 0], [0, 9]], np.int32)
  cases = [
      (cube, np.array([[1, 2]], np.int32), _draw(rng, dt, 1, 5), sd((1,), (0, 1), (0, 1))),
      (cube, np.array([1, 2], np.int64), _draw(rng, dt, 5), sd((0,), (0, 1), (0, 1))),
      (cube, repeated, _draw(rng, dt, 6, 5), sd((1,), (0, 1), (0, 1))),
      (cube, repeated, _draw(rng, dt, 5, 6), sd((0,), (0, 1), (0, 1))),
      (cube, repeated[:, ::-1].copy(), _draw(rng, dt, 6, 3), sd((1,), (1, 2), (2, 1))),
      (cube, np.array([[2, 3, 4], [0, 0, 0], [2, 3, 4], [3, 0, 0]], np.uint8),
       _draw(rng, dt, 4), sd((), (0, 1, 2), (0, 1, 2))),
      (cube, np.array([[2, 3, 4]], np.int16), np.broadcast_to(_draw(rng, dt, 1).reshape(()), (1,)),
       sd((), (0, 1, 2), (0, 1, 2))),
  ]
  for operand, indices, updates, dn in cases:
    params = dict(dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
                  mode=GatherScatterMode.FILL_OR_DROP, update_jaxpr=None, update_consts=())
    kernel = _lean_kernel(gather_scatter.scatter_p, [operand, indices, updates], params)
    assert kernel is not None
    want = gather_scatter.scatter_p.impl(operand, indices, updates, **params)[0]
    _same_bits(kernel(operand, indices, updates), want)
  x = jnp.asarray(cube)
  for idx in [(1, 2), (2, -1, 4), (0, 9), (-1, 3)]:
    got = x.at[idx].set(cube[0, 0, 0])
    want = jax.jit(lambda v: v.at[idx].set(cube[0, 0, 0]))(x)
    _same_bits(np.asarray(got), np.asarray(want))


def test_a_few_writes_over_two_dimensions_take_the_basic_index_writes(monkeypatch):
  from openjax._src.primitives.index import scatter_kernels
  calls = []
  few = scatter_kernels._few_writes
  monkeypatch.setattr(scatter_kernels, "_few_writes",
                      lambda *a: calls.append(a[1].shape) or few(*a))
  x = jnp.asarray(np.arange(12.0, dtype=np.float32).reshape(3, 4))
  for _ in range(2):
    out = x.at[1, 2].set(-5.0)
  assert calls and all(shape[-1] == 2 for shape in calls)
  want = np.arange(12.0, dtype=np.float32).reshape(3, 4)
  want[1, 2] = -5.0
  np.testing.assert_array_equal(np.asarray(out), want)


def test_a_few_combining_writes_take_the_basic_index_writes(monkeypatch):
  # add/multiply/min/max of a few index vectors: the ufunc on each write in
  # order (repeats accumulate, as ufunc.at does); not for complex numbers
  from openjax._src.primitives.index import scatter_kernels
  calls = []
  few = scatter_kernels._few_writes
  monkeypatch.setattr(scatter_kernels, "_few_writes",
                      lambda *a: calls.append(a[4:]) or few(*a))
  a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
  x = jnp.asarray(a)
  i = jnp.asarray(np.array([2, 0, 2, -1]))
  for _ in range(2):
    out = x.at[:, i].add(1.5)   # columns, repeated
  assert calls and calls[-1] == (np.add,)
  want = a.copy()
  np.add.at(want, (slice(None), np.array([2, 0, 2, 3])), np.float32(1.5))
  np.testing.assert_array_equal(np.asarray(out), want)
  calls.clear()
  for _ in range(2):
    out = x.at[1, 2].max(99.0)
  assert calls and calls[-1] == (np.maximum,)
  calls.clear()
  x.at[i].add(1.0)   # whole rows: ufunc.at
  x.at[i].add(1.0)
  assert not calls
  calls.clear()
  z = jnp.asarray(a.astype(np.complex64))
  z.at[1, 2].multiply(2j)
  z.at[1, 2].multiply(2j)
  assert not calls
