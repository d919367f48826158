"""The eager indexing front end (issue 14's eager sweep): Arrays made from
host values share their aval objects (the eval trace's recent plans match
operands by aval identity); gathers of whole slices at point indices
(``jnp.median(x, axis, keepdims=True)``) run an eval kernel bit-identical to
the impl; ``x.at[]`` updates decide once per signature what depends on it."""
import re
import warnings

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core import eval_trace
from openjax._src.core.avals import ShapedArray, shaped_array
from openjax._src.core.trace import make_plan
from openjax._src.primitives.index import gather_scatter
from openjax._src.primitives.index.gather_scatter import gather_p
from openjax._src.primitives.index.indexing_util import (GatherDimensionNumbers, GatherScatterMode,
                                                         ScatterDimensionNumbers, gather_dnums,
                                                         scatter_dnums)


def test_asarray_of_host_values_shares_the_aval_of_its_type():
  a = np.arange(10, dtype=np.float32)
  x, y = jnp.asarray(a), jnp.asarray(a[::-1].copy())
  assert x.aval is y.aval is shaped_array((10,), np.dtype(np.float32), False)
  assert jnp.asarray(np.arange(3, dtype=np.int32)).aval is not jnp.asarray(
      np.arange(3, dtype=np.float32)).aval
  weak = jnp.asarray(2.0)
  assert weak.weak_type and weak.aval is shaped_array((), np.dtype(np.float32), True)
  assert jnp.array(2.0, dtype=jnp.float32).aval is shaped_array((), np.dtype(np.float32), False)


def test_asarray_then_an_operation_reuses_the_recent_plan():
  a = np.arange(10, dtype=np.float32)
  jnp.asarray(a) + 1
  eval_trace._plans.clear()   # a second call that misses the recent plan would make one
  out = jnp.asarray(a) + 1
  assert not eval_trace._plans
  np.testing.assert_array_equal(np.asarray(out), a + 1)


# ------------------------------------------------------ slice-gather kernel
def _same_bits(got, want) -> None:
  want = np.asarray(want)
  assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
  want = np.ascontiguousarray(want).reshape(-1)
  np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.view(np.uint8))


def _lean_kernel(operand, indices, params):
  kernel, lean, *_ = make_plan(gather_p, [ShapedArray(operand.shape, operand.dtype),
                                          ShapedArray(indices.shape, indices.dtype)], params)
  return kernel if lean else None


def _slice_layouts(rng):
  """Gathers that keep some indexed dimensions as size-1 windows: every
  subset of a rank-3 operand's dimensions indexed (in a random order), each
  indexed dimension collapsed or kept, with 0-2 batch dimensions placed at
  random among the offset dimensions; and take_along_axis-like batching
  pairs beside a kept window."""
  cases = []
  shape = (3, 4, 5)
  for mask in range(1, 8):
    points = [d for d in range(3) if mask >> d & 1]
    for keep_mask in range(1 << len(points)):
      kept = [d for k, d in enumerate(points) if keep_mask >> k & 1]
      if not kept:
        continue   # point layouts: test_eager_scatter_gather_kernels.py
      collapsed = tuple(d for d in points if d not in kept)
      order = tuple(rng.permutation(points).tolist())
      for batch_shape in ((), (2,), (2, 3)):
        nwin = 3 - len(collapsed)
        rank = len(batch_shape) + nwin
        offset_dims = tuple(sorted(rng.choice(rank, nwin, replace=False).tolist()))
        sizes = tuple(1 if d in points else shape[d] for d in range(3))
        dn = GatherDimensionNumbers(offset_dims, collapsed, order)
        cases.append((shape, batch_shape + (len(order),), dn, sizes))
  # batching pairs (operand dim 0 with indices dim 0) and a kept window on dim 2
  cases.append(((3, 4, 5), (3, 2, 1), GatherDimensionNumbers((2, 3), (), (2,), (0,), (0,)),
                (1, 4, 1)))
  cases.append(((3, 4, 5), (3, 1), GatherDimensionNumbers((1, 2), (), (1,), (0,), (0,)),
                (1, 1, 5)))
  return cases


_MODE_FILLS = ((GatherScatterMode.CLIP, None), (GatherScatterMode.PROMISE_IN_BOUNDS, None),
               (GatherScatterMode.FILL_OR_DROP, None), (GatherScatterMode.FILL_OR_DROP, 1))


@pytest.mark.parametrize("idt", [np.int32, np.int8, np.uint8, np.int64], ids=str)
def test_slice_gather_kernel_gives_the_impls_bits(idt):
  rng = np.random.default_rng(5)
  checked = 0
  for dt in [np.dtype(t) for t in (np.float32, ml_dtypes.bfloat16, np.int32, np.bool_,
                                   np.complex64)]:
    for shape, ishape, dn, sizes in _slice_layouts(rng):
      x = rng.standard_normal(shape) * 3
      x = x > 0 if dt == np.bool_ else x.astype(dt)
      if dt.kind == "f":
        x.reshape(-1)[::5] = np.nan
        x.reshape(-1)[1::7] = -0.0
      # indices in and out of bounds on both sides
      idx = rng.integers(-6, 8, ishape)
      idx = (np.abs(idx) if np.dtype(idt).kind == "u" else idx).astype(idt)
      for mode, fill in _MODE_FILLS:
        params = dict(dimension_numbers=dn, slice_sizes=sizes, unique_indices=False,
                      indices_are_sorted=False, mode=mode, fill_value=fill)
        kernel = _lean_kernel(x, idx, params)
        assert kernel is not None, (shape, ishape, dn, mode)
        _same_bits(kernel(x, idx), gather_p.impl(x, idx, **params)[0])
        checked += 1
  assert checked == 5 * len(_slice_layouts(rng)) * 4


def test_slice_gather_kernel_reads_large_operands_and_declines_other_windows():
  rng = np.random.default_rng(6)
  m = rng.standard_normal((2000, 600)).astype(np.float32)
  params = dict(dimension_numbers=GatherDimensionNumbers((0, 1), (), (1,)),
                slice_sizes=(2000, 1), unique_indices=False, indices_are_sorted=False,
                mode=GatherScatterMode.PROMISE_IN_BOUNDS, fill_value=None)
  idx = np.array([599], np.int32)
  kernel = _lean_kernel(m, idx, params)   # the plan checks it on size-1 operands
  assert kernel is not None
  _same_bits(kernel(m, idx), m[:, 599:600])
  # a window wider than one position: the window-slice kernel (few index
  # vectors; the impl's values); a collapsed dimension no index addresses:
  # the impl's
  wide = dict(params, slice_sizes=(2000, 2))
  kernel = _lean_kernel(m, idx, wide)
  assert kernel is not None
  _same_bits(kernel(m, idx), gather_p.impl(m, idx, **wide)[0])
  many = np.arange(17, dtype=np.int32).reshape(17, 1)
  assert _lean_kernel(m, many, wide) is None   # more than 16 windows: the impl
  column = np.ascontiguousarray(m[:, :1])
  unaddressed = dict(params, dimension_numbers=GatherDimensionNumbers((0,), (1,), (0,)),
                     slice_sizes=(1, 1))
  assert _lean_kernel(column, idx, unaddressed) is None
  _same_bits(gather_p.impl(column, idx, **unaddressed)[0], column[599:600, 0])


def test_median_and_quantile_with_an_axis_or_keepdims_keep_their_values():
  rng = np.random.default_rng(7)
  x = rng.standard_normal((4, 5)).astype(np.float32)
  for axis in (0, 1):
    got = jnp.median(jnp.asarray(x), axis=axis, keepdims=True)
    assert got.shape == np.median(x, axis=axis, keepdims=True).shape
    np.testing.assert_allclose(np.asarray(got), np.median(x, axis=axis, keepdims=True),
                               rtol=1e-6)
    q = jnp.quantile(jnp.asarray(x), 0.3, axis=axis, keepdims=True)
    np.testing.assert_allclose(np.asarray(q), np.quantile(x, 0.3, axis=axis, keepdims=True),
                               rtol=1e-5, atol=1e-6)


# ------------------------------------------------- x.at[] eager updates
_UPDATE_METHODS = ("set", "add", "multiply", "min", "max")


def _eager_and_traced(x, idx, y, method, **kw):
  """The update run eagerly and traced (jit, ``y`` closed over as the eager
  call sees it: a Python scalar stays one)."""
  def update(x):
    return getattr(x.at[idx], method)(y, **kw)
  return update(x), jax.jit(update)(x)


def _same_array(got, want) -> None:
  assert got.dtype == want.dtype and got.weak_type == want.weak_type and got.shape == want.shape
  _same_bits(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("dt", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32, np.int8,
                                np.uint8, np.bool_, np.complex64], ids=str)
def test_eager_updates_give_the_traced_values_dtypes_and_weak_types(dt):
  """Python scalars (in and out of an int dtype's range), NumPy arrays of
  other dtypes, weak and strong Arrays, broadcast updates: the eager path's
  one-time conversion against the general (traced) path's asarray,
  promotion and converts."""
  dt = np.dtype(dt)
  rng = np.random.default_rng(8)
  base = (rng.standard_normal((5, 3)) * 4)
  x = jnp.asarray(base > 0 if dt == np.bool_ else base.astype(dt))
  updates = [True, 3, -1, 300, -129, 2**31 - 1, 2.5, 1e30, -0.0, float("nan"), 1.5 - 2j,
             np.arange(3, dtype=np.float64) * 0.3, np.arange(3, dtype=np.int64) - 1,
             np.arange(3, dtype=np.float32), np.array([True, False, True]),
             np.full((2, 1), 0.7, np.float16), jnp.asarray(2.0), jnp.asarray(3),
             jnp.arange(3, dtype=jnp.int8), jnp.ones((2, 3), jnp.bfloat16)]
  compared = 0
  for y in updates:
    for idx in ((0, slice(None)), np.array([4, 0, -1]), (np.array([1, 3]), slice(None))):
      for method in _UPDATE_METHODS:
        if method in ("min", "max") and dt.kind == "c":
          continue
        with warnings.catch_warnings(record=True) as eager_warned:
          warnings.simplefilter("always")
          try:
            eager, traced = _eager_and_traced(x, idx, y, method)
          except (TypeError, ValueError, OverflowError) as err:
            # both paths refuse it (shape mismatch, int overflow) in the same words
            with pytest.raises(type(err), match=re.escape(str(err)[:40])):
              jax.jit(lambda x: getattr(x.at[idx], method)(y))(x)
            continue
        _same_array(eager, traced)
        # the unsafe casts still warn (both paths)
        unsafe = [w for w in eager_warned if issubclass(w.category, FutureWarning)]
        assert len(unsafe) in (0, 2), [str(w.message) for w in eager_warned]
        compared += 1
  assert compared >= 150


@pytest.mark.parametrize("mode", [None, "clip", "drop", "promise_in_bounds"])
def test_eager_updates_keep_modes_masks_and_newaxes(mode):
  x = jnp.arange(24, dtype=jnp.float32).reshape(2, 3, 4)
  for idx in (np.array([5, -7, 1]), (Ellipsis, np.array([0, 9])), (None, 1, slice(None, None, -1)),
              np.array([True, False]), (1, np.array([[0], [2]]), np.array([3, -1])), True,
              (0, None, slice(1, 3), None)):
    for y in (7, 2.5, np.float32(1.5), np.arange(4, dtype=np.float32)):
      try:
        eager, traced = _eager_and_traced(x, idx, y, "add", mode=mode)
      except (TypeError, ValueError, IndexError):
        continue
      _same_array(eager, traced)


def test_eager_update_of_an_empty_selection_and_weak_arrays():
  x = jnp.asarray(np.zeros((3, 0), np.float32))
  assert x.at[1].set(2.0) is x
  w = jnp.asarray(1.5)   # a weak scalar Array: the result stays weak
  eager, traced = _eager_and_traced(w, (), np.float32(2.0), "set")
  _same_array(eager, traced)
  eager, traced = _eager_and_traced(w, (), 2, "add")
  _same_array(eager, traced)
  assert eager.weak_type


def test_eager_updates_follow_x64_and_the_dtype_promotion_flag():
  x = jnp.arange(4, dtype=jnp.int32)
  with jax.enable_x64(True):
    eager, traced = _eager_and_traced(x, 1, 2**40, "set")
    _same_array(eager, traced)
  with jax.numpy_dtype_promotion("strict"):
    with pytest.raises(Exception):
      x.at[1].set(np.float32(2.5))
  eager, traced = _eager_and_traced(x, 1, np.int64(2**33 + 5), "set")
  _same_array(eager, traced)


def test_scatter_and_gather_dimension_numbers_stay_checked():
  x = jnp.zeros((3,))
  idx = np.array([[1]], np.int32)
  ok = lax.ScatterDimensionNumbers((), (0,), (0,))
  np.testing.assert_array_equal(np.asarray(lax.scatter(x, idx, jnp.ones(1), ok)), [0, 1, 0])
  for bad in (lax.ScatterDimensionNumbers((), (0.0,), (0,)),
              lax.ScatterDimensionNumbers((), ("a",), (0,))):
    with pytest.raises(TypeError, match="must be a sequence of integers"):
      lax.scatter(x, idx, jnp.ones(1), bad)
  with pytest.raises(TypeError, match="must be a lax.ScatterDimensionNumbers"):
    lax.scatter(x, idx, jnp.ones(1), ((), (0,), (0,)))
  listed = lax.GatherDimensionNumbers([], [0], [np.int64(0)])
  np.testing.assert_array_equal(np.asarray(lax.gather(x + 2, idx, listed, (1,))), [2])


def test_eager_updates_bind_only_the_scatter():
  """Scalar, NumPy and Array updates of other dtypes go to the scatter as
  NumPy values in its layout: no asarray, convert or broadcast binds."""
  x16 = jnp.arange(6, dtype=jnp.float16).reshape(2, 3)
  for y in (2.0, 3, np.arange(3, dtype=np.uint8), jnp.arange(3, dtype=jnp.int8), True):
    x16.at[1].set(y)
    eval_trace._last.clear()
    out = x16.at[1].set(y)
    assert sorted(p.name for p in eval_trace._last) == ["scatter"], y
    assert out.dtype == np.float16 and not out.weak_type


def test_canonical_dimension_numbers_are_passed_through():
  dn = lax.ScatterDimensionNumbers((1,), (0,), (0,))
  canonical = scatter_dnums(dn)
  assert canonical == dn and scatter_dnums(dn) is canonical
  assert scatter_dnums(canonical) is canonical
  typed = lax.GatherDimensionNumbers((0,), (1,), (np.int64(1),))
  canonical = gather_dnums(typed)
  assert canonical == ((0,), (1,), (1,), (), ())
  assert all(type(d) is int for field in canonical for d in field)
  assert gather_dnums(canonical) is canonical and gather_dnums(typed) is canonical
  # dimension numbers holding lists are checked on every call (a list may change)
  fields = [0]
  listed = lax.GatherDimensionNumbers(fields, [1], [1])
  assert gather_dnums(listed) == ((0,), (1,), (1,), (), ())
  fields[0] = "a"
  with pytest.raises(TypeError, match="must be a sequence of integers"):
    gather_dnums(listed)


def test_broadcast_updates_small_and_large():
  """Broadcast updates are written out up to 4096 elements and viewed
  beyond: both give the traced values."""
  for n in (7, 4096, 5000):
    x = jnp.arange(2 * n, dtype=jnp.float32).reshape(2, n)
    for idx, y in ((np.array([1, 1, 0]), np.float32(2.5)), (slice(None), np.arange(n) * 0.5),
                   ((0, slice(None)), 3), (np.array([[1], [0]]), np.ones((1, n), np.float16))):
      eager, traced = _eager_and_traced(x, idx, y, "add")
      _same_array(eager, traced)


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32,
                                np.uint64, ml_dtypes.int4], ids=str)
def test_dynamic_slice_start_indices_of_every_integer_dtype(dt):
  x = jnp.arange(24, dtype=jnp.float32).reshape(4, 6)
  xs = np.arange(24, dtype=np.float32).reshape(4, 6)
  signed = np.dtype(dt).kind == "i" or dt is ml_dtypes.int4
  for a, b in ((1, 2), (3, 5), (-1, -2) if signed else (7, 200)):
    got = lax.dynamic_slice(x, (np.array(a, dt), np.array(b, dt)), (2, 3))
    ra = min(max(a + 4 if a < 0 else a, 0), 2)
    rb = min(max(b + 6 if b < 0 else b, 0), 3)
    np.testing.assert_array_equal(np.asarray(got), xs[ra:ra + 2, rb:rb + 3])
    np.testing.assert_array_equal(np.asarray(x[np.array(a, dt)]), xs[min(max(
        a + 4 if a < 0 else a, 0), 3)])
  with pytest.raises(TypeError, match="must be integers"):
    lax.dynamic_slice(x, (np.array(1.0, np.float32), np.array(1, dt)), (2, 3))


# ------------------------------------------------ one-window scatter kernel
_SCATTERS = [gather_scatter.scatter_p, gather_scatter.scatter_add_p,
             gather_scatter.scatter_sub_p, gather_scatter.scatter_mul_p,
             gather_scatter.scatter_min_p, gather_scatter.scatter_max_p]


def _window_scatters(rng):
  """(operand shape, indices, updates shape, dimension numbers) of scatters
  of one index vector writing one window: indexed dimensions in any order,
  some inserted (extent 1), windows partial along any dimension, starts in
  and out of bounds on both sides."""
  shape = (4, 5, 3)
  cases = []
  for _ in range(40):
    k = int(rng.integers(1, 4))
    index_dims = tuple(rng.permutation(3)[:k].tolist())
    inserted = tuple(sorted(d for d in index_dims if rng.random() < 0.4))
    sizes = [1 if d in inserted else int(rng.integers(1, shape[d] + 1)) for d in range(3)]
    upd_shape = tuple(z for d, z in enumerate(sizes) if d not in inserted)
    dn = ScatterDimensionNumbers(tuple(range(len(upd_shape))), inserted, index_dims)
    idx = rng.integers(-2, 7, (k,))
    cases.append((shape, idx, upd_shape, dn))
  return cases


@pytest.mark.parametrize("p", _SCATTERS, ids=lambda p: p.name)
def test_window_scatter_kernel_gives_the_impls_bits(p):
  rng = np.random.default_rng(9)
  checked = 0
  for dt in [np.dtype(t) for t in (np.float32, np.float16, ml_dtypes.bfloat16, np.int8,
                                   np.uint8, np.int32, np.bool_, np.complex64, ml_dtypes.int4)]:
    if dt == np.bool_ and p is gather_scatter.scatter_sub_p:
      continue   # the impl's error: NumPy has no bool subtract
    if dt.kind == "c" and p in (gather_scatter.scatter_min_p, gather_scatter.scatter_max_p):
      continue
    for shape, idx, upd_shape, dn in _window_scatters(rng):
      x = _draw(rng, dt, shape)
      u = _draw(rng, dt, upd_shape)
      for idt in (np.int32, np.uint8, np.int64):
        i = (np.abs(idx) if np.dtype(idt).kind == "u" else idx).astype(idt)
        for mode in (GatherScatterMode.FILL_OR_DROP, GatherScatterMode.CLIP,
                     GatherScatterMode.PROMISE_IN_BOUNDS):
          params = dict(dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
                        mode=mode, update_jaxpr=None, update_consts=())
          kernel, lean, *_ = make_plan(p, [ShapedArray(a.shape, a.dtype) for a in (x, i, u)],
                                       params)
          assert lean, (shape, dn, mode)
          with np.errstate(all="ignore"):
            _same_bits(kernel(x, i, u), p.impl(x, i, u, **params)[0])
          checked += 1
  assert checked >= 6 * 40 * 3 * 3


def _draw(rng, dt, shape):
  v = rng.standard_normal(shape) * 3
  if dt.kind == "c":
    v = v + 1j * rng.standard_normal(shape)
  v = v > 0 if dt == np.bool_ else v.astype(dt)
  if dt.kind == "f" and v.size:
    v.reshape(-1)[::5] = np.nan
    v.reshape(-1)[1::6] = -0.0
  return v


def test_window_scatter_kernel_on_large_operands_and_through_at():
  rng = np.random.default_rng(10)
  x = rng.standard_normal((300, 40)).astype(np.float32)
  u = rng.standard_normal((299,)).astype(np.float32)
  for mode in (None, "clip", "drop"):
    got = jnp.asarray(x).at[1:, 3].add(u, mode=mode)
    want = x.copy()
    want[1:, 3] += u
    _same_bits(np.asarray(got), want)
  eager, traced = _eager_and_traced(jnp.asarray(x), (slice(2, 5), 7), np.float32(2.0), "max")
  _same_array(eager, traced)
  eager, traced = _eager_and_traced(jnp.asarray(x), (-1, slice(None, None, 3)), 1, "multiply")
  _same_array(eager, traced)


def test_slice_sizes_are_still_checked():
  x = jnp.arange(6.0)
  idx = np.array([1], np.int32)
  dn = lax.GatherDimensionNumbers((0,), (), (0,))
  np.testing.assert_array_equal(np.asarray(lax.gather(x, idx, dn, (2,))), [1, 2])
  np.testing.assert_array_equal(np.asarray(lax.gather(x, idx, dn, [np.int64(2)])), [1, 2])
  for bad, match in (((2.0,), "must be a sequence of integers"), ((-1,), "must be non-negative"),
                     (("2",), "must be a sequence of integers")):
    with pytest.raises(TypeError, match=match):
      lax.gather(x, idx, dn, bad)
  with pytest.raises(TypeError, match="must be non-negative"):
    lax.dynamic_slice(x, (1,), (-2,))
