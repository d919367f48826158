"""Eager paths of session 13's index functions: ``nonzero``/``where``/
``argwhere``/``flatnonzero`` with ``size`` and an int ``fill_value`` (the
fills written on the host, no selects), ``.at[].power`` of large eager
arrays (the power only at the indexed positions: x ** 1 is x), and the
plan of an Array index kept per index object. Each against the general
path (jit, or the eager path with the new one switched off) bit for bit."""
import math

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.core import eval_trace
from openjax._src.numpy import index_update
from openjax._src.primitives.elementwise.logic import select_n_p
from openjax._src.primitives.elementwise.transcendental import pow_p

pytestmark = pytest.mark.filterwarnings("ignore:scatter inputs have incompatible types")


# ------------------------------------------------------------- nonzero fills
_MASKS = [np.array([True, False, True, False, True]),
          np.array([[1, 0, 2], [0, 0, 3]], np.int8),
          np.array([0.0, -0.0, np.nan, 1.5], np.float32),
          np.zeros((2, 3), bool),
          np.ones((3, 1, 2), np.uint8)]


@pytest.mark.parametrize("mask", _MASKS, ids=lambda m: f"{m.dtype}{m.shape}")
@pytest.mark.parametrize("size", [1, 4, 9])
@pytest.mark.parametrize("fill", [None, -1, 7, 2**31 - 1, -2**31, True, 2.5, np.int8(3)])
def test_nonzero_fills_match_jit(mask, size, fill):
  eval_trace.clear_cache()
  got = jnp.nonzero(jnp.asarray(mask), size=size, fill_value=fill)
  host_fill = fill is None or type(fill) is int
  # Python int fills are written on the host: no select runs eagerly
  assert (select_n_p in eval_trace._last) == (not host_fill)
  want = jax.jit(lambda m: jnp.nonzero(m, size=size, fill_value=fill))(jnp.asarray(mask))
  assert len(got) == len(want) == mask.ndim
  for g, w in zip(got, want):
    assert (g.dtype, g.weak_type, g.shape) == (w.dtype, w.weak_type, w.shape)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_nonzero_fill_tuples_and_errors():
  m = jnp.asarray(np.array([[1, 0], [0, 3]]))
  got = jnp.nonzero(m, size=4, fill_value=(-1, -2))
  np.testing.assert_array_equal(np.asarray(got[0]), [0, 1, -1, -1])
  np.testing.assert_array_equal(np.asarray(got[1]), [0, 1, -2, -2])
  np.testing.assert_array_equal(np.asarray(jnp.where(m, size=3, fill_value=5)[1]), [0, 1, 5])
  np.testing.assert_array_equal(np.asarray(jnp.argwhere(m, size=3, fill_value=9)),
                                [[0, 0], [1, 1], [9, 9]])
  np.testing.assert_array_equal(np.asarray(jnp.flatnonzero(m, size=3, fill_value=-4)),
                                [0, 3, -4])
  with pytest.raises(ValueError, match="fill_value must be a scalar or a tuple"):
    jnp.nonzero(m, size=3, fill_value=(1, 2, 3))
  with pytest.raises(ValueError, match="fill_value must be a scalar or a tuple"):
    jnp.nonzero(m, size=3, fill_value=np.array([1, 2]))
  with pytest.raises(OverflowError):
    jnp.nonzero(m, size=3, fill_value=2**40)


# ------------------------------------------------------------- .at[].power
def _power_all(x, idx, v, mode):
  """``.at[].power`` as the general path computes it (the power of the whole array)."""
  saved = index_update._POWER_WHERE_INDEXED_MIN
  index_update._POWER_WHERE_INDEXED_MIN = 10**12
  try:
    return x.at[idx].power(v, mode=mode)
  finally:
    index_update._POWER_WHERE_INDEXED_MIN = saved


_POWER_DTYPES = [np.float32, np.float64, np.float16, jnp.bfloat16, np.int32, np.int8,
                 np.uint8, np.int64]
_POWER_INDICES = [0, 1, 3, -2, np.array([5, 5, -1, 7000, -6000, 4]), slice(10, 20),
                  np.tile(np.array([True, False]), 2500), (np.array([2, 2, 9]),)]


@pytest.mark.parametrize("dtype", _POWER_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", [None, "clip", "drop"])
def test_at_power_where_indexed_same_bits(dtype, mode):
  rng = np.random.default_rng(3)
  base = rng.standard_normal(5000) * 3
  if np.dtype(dtype).kind in "fV":
    base[:4] = [np.nan, -0.0, np.inf, -np.inf]
  x = jnp.asarray(base.astype(dtype))
  for idx in _POWER_INDICES:
    for v in (2, 3, 0.5, -1, np.float32(1.5)):
      try:
        want = _power_all(x, idx, v, mode)
      except Exception as err:   # the same error on the new path
        with pytest.raises(type(err)):
          x.at[idx].power(v, mode=mode)
        continue
      eval_trace.clear_cache()
      got = x.at[idx].power(v, mode=mode)
      assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape)
      assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (idx, v)
      if np.dtype(dtype).kind == "f":
        # the power ran on the indexed elements only
        (sig,) = [e[0] for e in eval_trace._last[pow_p]]
        assert sig[0].shape != x.shape or x[idx].size == x.size


def test_at_power_small_weak_and_traced_keep_the_whole_power():
  x = jnp.asarray(np.linspace(-2, 2, 8, dtype=np.float32))
  eval_trace.clear_cache()
  x.at[1].power(3)
  (sig,) = [e[0] for e in eval_trace._last[pow_p]]
  assert sig[0].shape == (8,)   # under the size limit: the general path
  big = jnp.asarray(np.linspace(-2, 2, 4096, dtype=np.float32))
  f = jax.jit(lambda a: a.at[np.array([1, 1])].power(2.0))
  np.testing.assert_array_equal(np.asarray(f(big)), np.asarray(_power_all(big, np.array([1, 1]),
                                                                          2.0, None)))
  jaxpr = str(jax.make_jaxpr(lambda a: a.at[0].power(2.0))(big))
  assert "scatter-mul" in jaxpr and "pow" in jaxpr and "gather" not in jaxpr
  weak = jnp.linspace(0.0, 1.0, 4096) * 1.0
  np.testing.assert_array_equal(np.asarray(weak.at[2].power(2)),
                                np.asarray(_power_all(weak, 2, 2, None)))
  g = jax.grad(lambda a: a.at[3].power(3.0).sum())(big)
  np.testing.assert_allclose(np.asarray(g)[3], 3 * float(big[3]) ** 2, rtol=1e-6)


# ------------------------------------------------ plans of Array indices
def test_plan_of_an_array_index_is_kept_per_array():
  from openjax._src.numpy import index_plans
  x = jnp.asarray(np.arange(15.0, dtype=np.float32).reshape(5, 3))
  i = jnp.asarray(np.array([4, 0, -1], np.int32))
  j = jnp.asarray(np.array([1, -3, 2], np.int32))   # the same structure, other values
  index_plans._HELD_PLANS.clear()
  first = index_plans.gather_plan(i, x.shape)
  assert index_plans.gather_plan(i, x.shape) is first
  other = index_plans.gather_plan(j, x.shape)
  assert other is not first
  np.testing.assert_array_equal(np.asarray(other.indices).ravel(), [1, 2, 2])
  # NumPy indices may change between calls: planned from their values each time
  n = np.array([4, 0, -1], np.int32)
  assert index_plans.gather_plan(n, x.shape) is not index_plans.gather_plan(n, x.shape)
  n[0] = 2
  np.testing.assert_array_equal(np.asarray(x.at[n].get()), np.asarray(x)[[2, 0, -1]])
  # tuples of Arrays and static entries; a NumPy entry is not kept
  k = (i, slice(1, None))
  assert index_plans.gather_plan(k, x.shape) is index_plans.gather_plan(k, x.shape)
  assert index_plans._held_arrays((i, n)) is None
  assert index_plans._held_arrays((i, np.int32(1), None, Ellipsis)) == (i,)
  # results through the kept plan, for each index Array
  for idx in (i, j, (i, 1), (j, slice(None, None, -1)), (i, j)):
    for _ in range(2):
      np.testing.assert_array_equal(np.asarray(x[idx]), np.asarray(x)[tuple(
          np.asarray(e) if isinstance(e, jax.Array) else e for e in (
              idx if type(idx) is tuple else (idx,)))])
      want = np.asarray(x).copy()
      want[tuple(np.asarray(e) if isinstance(e, jax.Array) else e
                 for e in (idx if type(idx) is tuple else (idx,)))] = 7
      np.testing.assert_array_equal(np.asarray(x.at[idx].set(7)), want)
  # a large index is not held
  big = jnp.asarray(np.zeros(1 << 15, np.int32))
  assert index_plans._held_arrays(big) is None
  # a deleted index raises as before
  d = jnp.asarray(np.array([1, 2], np.int32))
  x[d]
  d.delete()
  with pytest.raises(RuntimeError):
    x[d]


# ------------------------------------------------ gather: window slices
def _random_window_gathers(rng, count):
  """(operand, indices, dimension numbers, slice sizes) of gathers without
  batching dimensions whose windows are wider than a point along some
  indexed dimension or narrower than some other dimension."""
  out = []
  while len(out) < count:
    ndim = int(rng.integers(1, 4))
    shape = tuple(int(d) for d in rng.integers(1, 6, ndim))
    k = int(rng.integers(1, ndim + 1))
    points = tuple(sorted(rng.choice(ndim, k, replace=False).tolist()))
    sizes = [int(rng.integers(0 if d > 1 else 1, d + 1)) or 1 for d in shape]
    collapsed = tuple(d for d in points if sizes[d] == 1 and rng.random() < 0.6)
    if all(sizes[d] == 1 for d in points) and all(sizes[d] == shape[d] for d in range(ndim)
                                                   if d not in points):
      continue   # a point layout (the point kernels)
    batch_shape = tuple(int(b) for b in rng.integers(1, 4, int(rng.integers(0, 3))))
    nwin = ndim - len(collapsed)
    offset_dims = tuple(sorted(rng.choice(len(batch_shape) + nwin, nwin,
                                          replace=False).tolist()))
    dt = rng.choice([np.int32, np.int8, np.uint8, np.int64])
    idx = rng.integers(-3, 8, batch_shape + (k,))
    if np.dtype(dt).kind == "u":
      idx = np.abs(idx)
    dn = jax.lax.GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=collapsed,
                                        start_index_map=points)
    x = rng.standard_normal(shape).astype(np.float32)
    out.append((x, idx.astype(dt), dn, tuple(sizes)))
  return out


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
def test_window_gathers_match_the_impl(mode):
  from openjax._src.primitives.index.gather_scatter import gather_p
  from openjax._src.primitives.index.indexing_util import GatherScatterMode
  rng = np.random.default_rng({"clip": 1, "fill": 2, "promise_in_bounds": 3}[mode])
  for x, idx, dn, sizes in _random_window_gathers(rng, 150):
    eval_trace.clear_cache()
    got = jax.lax.gather(jnp.asarray(x), jnp.asarray(idx), dn, sizes, mode=mode,
                         fill_value=-7.0 if mode == "fill" else None)
    (want,) = gather_p.impl(x, idx, dimension_numbers=dn, slice_sizes=sizes,
                            unique_indices=False, indices_are_sorted=False,
                            mode=GatherScatterMode.from_any(mode),
                            fill_value=-7.0 if mode == "fill" else None)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)
    # the eager call ran the window kernel, not the impl (up to 16 windows)
    (entry,) = [e for p, es in eval_trace._last.items() if p is gather_p for e in es]
    assert entry[4] == (math.prod(idx.shape[:-1]) <= 16)


def test_getitem_int_array_and_slice_reads_slices():
  x = jnp.asarray(np.arange(37 * 27, dtype=np.int32).reshape(37, 27))
  for i in (np.array([2]), np.array([-1]), np.array([30]), np.array([[3], [-27]])):
    eval_trace.clear_cache()
    with np.errstate(all="ignore"):
      want = np.asarray(x)[1:, np.clip(np.where(i < 0, i + 27, i), 0, 26)]
    np.testing.assert_array_equal(np.asarray(x[1:, jnp.asarray(i)]), want)
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda a, b: a[1:, b])(x, i)), want)


# ------------------------------------------------ take(mode="wrap")
@pytest.mark.parametrize("idt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                 np.uint32], ids=lambda d: np.dtype(d).name)
def test_take_wrap_indices_match_jit(idt):
  # (eagerly jnp.take runs as one library program, ``_take``: the same
  # equations as under jit, wrapped in the index dtype)
  rng = np.random.default_rng(5)
  info = np.iinfo(idt)
  for size in (1, 3, 7, 127, 128, 255, 300, 70000):
    x = jnp.asarray(rng.standard_normal((size, 2)).astype(np.float32))
    i = rng.integers(max(info.min, -10**6), min(info.max, 10**6), 40).astype(idt)
    i = np.concatenate([i, np.array([info.min, info.max, 0], idt)])
    jitted = jax.jit(lambda a, b: jnp.take(a, b, axis=0, mode="wrap"))
    for idx in (i, jnp.asarray(i)):
      got = jnp.take(x, idx, axis=0, mode="wrap")
      want = jitted(x, idx)
      assert got.dtype == want.dtype
      np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
  np.testing.assert_array_equal(np.asarray(jnp.take(jnp.arange(5.0), jnp.asarray([-1, 7, 12]),
                                                    mode="wrap")), [4.0, 2.0, 2.0])


# ------------------------------------- arrays beside partial slices: slices first
_SLICE_ENTRIES = [slice(1, None, 2), slice(None, None, -2), slice(4, 0, -3), slice(None),
                  slice(1, 3), slice(5, 1), 2, -1, np.array([3, 0, -1]), np.array([[0], [9]]),
                  np.array([1, -7, 2], np.int8), np.array([], np.int32)]


@pytest.mark.parametrize("first", range(len(_SLICE_ENTRIES)))
@pytest.mark.parametrize("mode", [None, "fill", "clip"])
def test_arrays_beside_partial_slices_match_jit(first, mode, monkeypatch):
  import itertools
  from openjax._src.numpy import index_plans
  monkeypatch.setattr(index_plans, "_SLICES_FIRST_MIN", 0)   # every size splits
  x = jnp.asarray(np.random.default_rng(0).standard_normal((4, 5, 6)).astype(np.float32))
  as_array = lambda e: jnp.asarray(e) if type(e) is np.ndarray and e.dtype == np.int8 else e
  for rest in itertools.chain([()], itertools.product(_SLICE_ENTRIES, repeat=1),
                              itertools.product(_SLICE_ENTRIES[::3], repeat=2)):
    idx = tuple(as_array(e) for e in (_SLICE_ENTRIES[first],) + rest)
    try:
      want = jax.jit(lambda a: a.at[idx].get(mode=mode, fill_value=-3))(x)
    except Exception as err:
      with pytest.raises(type(err)):
        x.at[idx].get(mode=mode, fill_value=-3)
      continue
    got = x.at[idx].get(mode=mode, fill_value=-3)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), idx


def test_array_beside_a_strided_slice_gathers_one_column():
  from openjax._src.primitives.index.gather_scatter import gather_p
  x = jnp.asarray(np.arange(2000.0, dtype=np.float32).reshape(40, 50))
  i = jnp.asarray(np.random.default_rng(1).integers(-40, 40, (8, 8)).astype(np.int32))
  eval_trace.clear_cache()
  got = x[i, 1::2]
  np.testing.assert_array_equal(np.asarray(got), np.asarray(x)[np.asarray(i), 1::2])
  (entry,) = eval_trace._last[gather_p]
  assert entry[0][1].shape == (8, 8, 1)   # the array's column alone, not one per element
  # few index entries: JAX's one gather (an extra slice costs more there)
  small = jnp.asarray(np.arange(20.0, dtype=np.float32).reshape(4, 5))
  j = jnp.asarray(np.array([[3, -1], [0, 2]], np.int32))
  eval_trace.clear_cache()
  np.testing.assert_array_equal(np.asarray(small[j, 1::2]),
                                np.asarray(small)[np.asarray(j), 1::2])
  (entry,) = eval_trace._last[gather_p]
  assert entry[0][1].shape == (2, 2, 2, 2)
  # a few rows of a large array: the one gather reads less than the block
  rows = jnp.asarray(np.arange(200000.0, dtype=np.float32).reshape(400, 500))
  eval_trace.clear_cache()
  np.testing.assert_array_equal(np.asarray(rows[np.array([3, 0]), ::-2]),
                                np.asarray(rows)[[3, 0], ::-2])
  (entry,) = eval_trace._last[gather_p]
  assert entry[0][1].shape == (2, 250, 2)
  x = small
  # traced: JAX's gather of both columns (the printed jaxpr is JAX's)
  jaxpr = str(jax.make_jaxpr(lambda a, b: a[b, 1::2])(x, i))
  assert "concatenate" in jaxpr and "slice_sizes=(1, 1)" in jaxpr


# ------------------------- combining scatters with unique indices: rows that do not repeat
def test_checked_combine_uses_the_vector_ufunc_where_rows_do_not_repeat():
  from openjax._src.primitives.index import scatter_kernels
  calls = []
  combine = scatter_kernels._checked_combine(
      np.multiply, lambda t, lin, v: (calls.append(lin.shape), np.multiply.at(t, lin, v)))
  target = np.arange(10000.0).reshape(1000, 10)
  lin = np.random.default_rng(0).permutation(1000)[:600]
  vals = np.full((600, 10), 3.0)
  want = target.copy()
  np.multiply.at(want, lin, vals)
  combine(target, lin, vals)
  assert calls == [] and np.array_equal(target, want)
  repeated = np.concatenate([lin, lin[:5]])
  vals = np.full((605, 10), 3.0)
  np.multiply.at(want, repeated, vals)
  combine(target, repeated, vals)
  assert calls == [(6050,)] and np.array_equal(target, want)   # flattened to elements


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float16, np.int8],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op,ufunc", [("add", np.add), ("multiply", np.multiply),
                                      ("min", np.minimum), ("max", np.maximum),
                                      ("subtract", np.subtract)])
def test_large_combining_scatters_match_ufunc_at(dtype, op, ufunc):
  rng = np.random.default_rng(9)
  for shape in ((5000,), (700, 40), (3, 3000)):
    x = (rng.standard_normal(shape) * 20).astype(dtype)
    for idx in (rng.permutation(shape[0])[: shape[0] // 2], rng.integers(0, 3, shape[0]),
                rng.integers(-shape[0], shape[0], shape[0])):
      u = (rng.standard_normal(x[idx].shape) * 3).astype(dtype)
      want = x.copy()
      with np.errstate(all="ignore"):
        ufunc.at(want, np.where(idx < 0, idx + shape[0], idx), u)
      # unique_indices: the vector path where the rows do not repeat; a
      # broken promise accumulates as ufunc.at (and XLA's CPU scatter) does
      for unique in (False, True):
        got = getattr(jnp.asarray(x).at[idx], op)(u, unique_indices=unique)
        assert np.asarray(got).tobytes() == want.tobytes(), (shape, op, unique)


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32],
                         ids=lambda d: np.dtype(d).name)
def test_host_floor_mod_is_numpy_mod(dt):
  from openjax._src.numpy.indexer import host_floor_mod
  rng = np.random.default_rng(2)
  info = np.iinfo(dt)
  for size in (1, 2, 3, 7, 50, 127, 1000, 30000):
    if size > info.max:
      continue
    for lo, hi in ((-size, 2 * size), (info.min, info.max), (0, size), (-size, 0)):
      lo, hi = max(lo, info.min), min(hi, info.max)
      if lo >= hi:
        continue
      v = np.concatenate([rng.integers(lo, hi, 1000).astype(dt), np.array([lo, hi], dt)])
      got = host_floor_mod(v, size)
      want = np.mod(v, dt(size))
      assert got.dtype == want.dtype and not got.flags.writeable
      np.testing.assert_array_equal(got, want)


def test_default_fill_value_per_dtype():
  from openjax._src.primitives.index.indexing_util import default_fill_value
  import ml_dtypes
  for dt, want in ((np.float32, np.nan), (ml_dtypes.bfloat16, np.nan), (np.complex64, np.nan),
                   (np.int8, -128), (np.int32, -2**31), (np.uint16, 65535), (np.bool_, True)):
    for key in (dt, np.dtype(dt)):
      got = default_fill_value(key)
      assert (np.isnan(got) if want is np.nan else got == want and type(got) is type(want))
  with pytest.raises(ValueError, match="Unsupported dtype for gather fill_value"):
    default_fill_value(np.dtype("U3"))
  x = jnp.asarray(np.arange(4, dtype=np.int16))
  np.testing.assert_array_equal(np.asarray(jnp.take(x, jnp.asarray([1, 9]))), [1, -2**15])


def test_scalar_array_beside_a_slice_stays_one_dynamic_slice():
  from openjax._src.primitives.shape.shape import slice_p
  x = jnp.asarray(np.arange(12, dtype=np.int32).reshape(4, 3))
  i = jnp.asarray(np.int32(2))
  eval_trace.clear_cache()
  np.testing.assert_array_equal(np.asarray(x[1:, i]), np.asarray(x)[1:, 2])
  (entry,) = eval_trace._last[slice_p]   # one static slice of x (the host start)
  assert entry[0][0].shape == (4, 3)


# ------------------------------------------------ compress / extract (no size)
def test_compress_and_extract_with_a_host_condition_match_jit():
  from openjax._src.primitives.index.gather_scatter import gather_p
  rng = np.random.default_rng(4)
  n = 0
  for shape in ((6,), (3, 4), (2, 3, 5), (1, 7)):
    x = jnp.asarray(rng.standard_normal(shape).astype(np.float32))
    for axis in (None, *range(len(shape)), -1):
      length = int(np.prod(shape)) if axis is None else shape[axis]
      for cond in (rng.random(length) < 0.5, np.ones(length, bool), np.zeros(length, bool),
                   rng.random(max(length - 2, 1)) < 0.6, np.array([1, 0, 3][:length])):
        want = jax.jit(lambda a: jnp.compress(cond, a, axis=axis))(x)
        got = jnp.compress(cond, x, axis=axis)
        assert (got.shape, got.dtype) == (want.shape, want.dtype)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        n += 1
    c = rng.random(shape) < 0.5
    np.testing.assert_array_equal(np.asarray(jnp.extract(c, x)), np.extract(c, np.asarray(x)))
  assert n > 60
  with pytest.raises(ValueError, match="out of bounds"):
    jnp.compress(np.array([0, 0, 0, 1]), jnp.arange(3))
  # one static take: [T, F, T] is a strided slice, no gather
  eval_trace.clear_cache()
  np.testing.assert_array_equal(
      np.asarray(jnp.compress(np.array([True, False, True]), jnp.arange(8.0).reshape(2, 4),
                              axis=1)), [[0.0, 2.0], [4.0, 6.0]])
  assert gather_p not in eval_trace._last


def test_compress_of_numpy_values_reads_one_static_take():
  from openjax._src.primitives.index.gather_scatter import gather_p
  x = np.arange(8.0, dtype=np.float32).reshape(2, 4)
  for cond in ([True, False, True], [False, True, True, False]):
    eval_trace.clear_cache()
    got = jnp.compress(np.array(cond), x, axis=1)
    assert isinstance(got, jax.Array) and got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), np.compress(cond, x, axis=1))
    assert gather_p not in eval_trace._last
  np.testing.assert_array_equal(np.asarray(jnp.extract(x > 2, x)), np.extract(x > 2, x))
