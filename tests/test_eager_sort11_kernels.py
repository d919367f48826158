"""Eval kernels behind eager sorting/searching/reduction calls (branch sort11):
each gives the results of the general impl it stands in for (integers bit for
bit, floats within reassociation; decision 12) and is chosen where it applies."""
import importlib

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.control._reduce_computation import trace_computation
from openjax._src.control.reduce_variadic import _reduce_impl, reduce_p
from openjax._src.core.avals import ShapedArray
from openjax._src.core.trace import make_plan
from openjax._src.numpy import searching, setops, sorting
from openjax._src.primitives.base import structural
from openjax._src.primitives.reduce import reductions
from openjax._src.primitives.sort import sort_kernels
from openjax._src.primitives.sort.sort import _sort_impl, _sort_lexsort, _top_k_argsort
from openjax._src.tree_util import tree_structure
from tests.test_eager_sort12_kernels import sort_keys


def _aval(x) -> ShapedArray:
  x = np.asarray(x)
  return ShapedArray(x.shape, x.dtype)


def _same_bits(a, b) -> None:
  a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
  assert a.dtype == b.dtype and a.shape == b.shape
  np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


# ------------------------------------------------- lax.reduce, one monoid
def _reduce_params(computation, init, dimensions):
  init = np.asarray(init)
  closed, _ = trace_computation("lax.reduce", computation, [_aval(init)], tree_structure(0))
  return dict(computation=computation, jaxpr=closed, dimensions=dimensions)


def _plan(x, init, params):
  kernel, lean, *_ = make_plan(reduce_p, [_aval(x), _aval(init)], params)
  return kernel, lean


_INT_CASES = [
    (lambda a, b: a * b, np.int32, 1),
    (lambda a, b: b * a, np.uint8, 1),
    (lambda a, b: a + b, np.int16, 0),
    (lambda a, b: lax.max(a, b), np.int32, np.iinfo(np.int32).min),
    (lambda a, b: lax.min(a, b), np.uint32, np.iinfo(np.uint32).max),
    (lambda a, b: a & b, np.int8, -1),
    (lambda a, b: a | b, np.bool_, False),
    (lambda a, b: lax.bitwise_xor(a, b), np.uint16, 0),
]


@pytest.mark.parametrize("case", range(len(_INT_CASES)))
@pytest.mark.parametrize("dimensions", [(1,), (0, 2), (), (0, 1, 2)], ids=str)
def test_reduce_monoid_kernel_gives_the_impl_bits_for_integers(case, dimensions):
  computation, dt, identity = _INT_CASES[case]
  rng = np.random.default_rng(case)
  if dt == np.bool_:
    x = rng.random((4, 9, 3)) < 0.3
  else:
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, (4, 9, 3), endpoint=True).astype(dt)
  init = np.asarray(identity).astype(dt)
  params = _reduce_params(computation, init, dimensions)
  kernel, lean = _plan(x, init, params)
  assert lean, "one monoid equation: NumPy's reduction, not the impl's tree"
  _same_bits(kernel(x, init), _reduce_impl(x, init, **params)[0])
  # Wrapping products: the bits of NumPy's own reduction in the operand's dtype.
  if computation(np.int32(3), np.int32(5)) == 15 and dt != np.bool_:
    _same_bits(kernel(x, init), np.multiply.reduce(x, axis=dimensions, dtype=dt))


@pytest.mark.parametrize("dt", [np.float16, np.float32])
def test_reduce_monoid_kernel_floats_and_edges(dt):
  rng = np.random.default_rng(1)
  x = rng.standard_normal((6, 5)).astype(dt)
  x[0, 0], x[1, 1], x[2, 2] = np.nan, -0.0, np.inf
  for computation, init, ref in [(lambda a, b: a + b, 0.0, np.add),
                                 (lambda a, b: a * b, 1.0, np.multiply),
                                 (lambda a, b: lax.max(a, b), -np.inf, np.maximum),
                                 (lambda a, b: lax.min(a, b), np.inf, np.minimum)]:
    init = np.asarray(init, dt)
    params = _reduce_params(computation, init, (0,))
    kernel, lean = _plan(x, init, params)
    assert lean
    got, want = kernel(x, init), _reduce_impl(x, init, **params)[0]
    assert got.dtype == want.dtype == dt
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                               rtol=2e-3 if dt == np.float16 else 1e-6)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref.reduce(x, axis=0)))
  # Empty reductions give the init value (max and min have no NumPy identity).
  empty = np.zeros((0, 3), dt)
  init = np.asarray(-np.inf, dt)
  params = _reduce_params(lambda a, b: lax.max(a, b), init, (0,))
  kernel, _ = _plan(empty, init, params)
  _same_bits(kernel(empty, init), np.full((3,), -np.inf, dt))
  _same_bits(lax.reduce(empty, init, lambda a, b: lax.max(a, b), (0,)), np.full((3,), -np.inf, dt))


def test_reduce_kernel_only_for_one_monoid_equation():
  x, init = np.ones((3, 4), np.float32), np.asarray(0.0, np.float32)

  def logaddexp(a, b):
    return lax.max(a, b) + lax.log1p(lax.exp(-lax.abs(a - b)))
  # Other computations run the impl's tree reduction (planned once per shape
  # since session 12): the impl's bits, never a NumPy ufunc's reassociation.
  x = np.random.default_rng(0).standard_normal((7, 4)).astype(np.float32)
  for computation in (logaddexp, lambda a, b: a - b, lambda a, b: a + a,
                      lambda a, b: a * b + 0.0):
    for dims in ((0,), (1,), (0, 1)):
      params = _reduce_params(computation, init, dims)
      kernel, _ = _plan(x, init, params)
      _same_bits(kernel(x, init), reduce_p.impl(x, init, **params)[0])
      assert kernel is not None
  # Booleans under max (no NumPy ufunc shortcut): the impl's tree, planned.
  b, b0 = np.eye(3, 4, dtype=np.bool_), np.asarray(False)
  params = _reduce_params(lambda a, c: lax.max(a, c), b0, (0,))
  kernel, _ = _plan(b, b0, params)
  _same_bits(kernel(b, b0), reduce_p.impl(b, b0, **params)[0])


def test_reduce_eager_results_and_errors():
  x = np.arange(1, 25, dtype=np.int32).reshape(4, 6) * 100003
  _same_bits(lax.reduce(x, np.int32(1), lambda a, b: a * b, (1,)),
             np.multiply.reduce(x, axis=1, dtype=np.int32))
  with pytest.raises(TypeError, match="initial"):
    lax.reduce(x, np.float32(1), lambda a, b: a * b, (1,))


# ------------------------------------------------------------ iota, sort keys
@pytest.mark.parametrize("dt", [np.int32, np.uint8, np.float16, np.bool_], ids=str)
@pytest.mark.parametrize("shape,dimension", [((3, 5), 0), ((3, 5), 1), ((300, 2), 0),
                                             ((2, 1, 4), 2), ((0, 3), 1)], ids=str)
def test_iota_nd_kernel_gives_the_impl_bits(dt, shape, dimension):
  dt = np.dtype(dt)
  params = dict(dtype=dt, shape=shape, dimension=dimension, sharding=None)
  kernel, lean, *_ = make_plan(structural.iota_p, [], params)
  assert lean, "a small iota of any rank: the eval kernel, not the impl's broadcast_to"
  first, second = kernel(), kernel()
  _same_bits(first, structural.iota_p.impl(**params)[0])
  assert first.flags.writeable and not np.shares_memory(first, second)   # fresh each call
  _same_bits(lax.broadcasted_iota(dt, shape, dimension), first)


def test_large_iota_nd_stays_a_broadcast_view():
  params = dict(dtype=np.dtype(np.int32), shape=(300, 1000), dimension=1, sharding=None)
  assert not make_plan(structural.iota_p, [], params)[1]   # the impl: no 1.2 MB copy
  assert make_plan(structural.iota_p, [], dict(params, shape=(30, 100)))[1]


def test_sort_kernels_cover_numpy_dtypes_only():
  for c in "?bBhHiIlLqQefd":
    assert sort_kernels.is_numpy_key(np.dtype(c)), c
  for t in (ml_dtypes.bfloat16, ml_dtypes.int4, ml_dtypes.float8_e4m3fn, np.complex64,
            np.longdouble, np.dtype(">f4"), np.dtype("V4")):
    assert not sort_kernels.is_numpy_key(np.dtype(t)), t


@pytest.mark.parametrize("shape,axis", [((3, 5), 0), ((3, 5), 1), ((2, 3, 4), 1), ((7,), 0)],
                         ids=str)
def test_argsort_small_nd_matches_numpy_stable(shape, axis):
  rng = np.random.default_rng(3)
  x = (np.round(rng.standard_normal(shape) * 2) / 2).astype(np.float32)
  x.flat[0] = np.nan
  _same_bits(jnp.argsort(x, axis=axis), np.argsort(x, axis=axis, kind="stable").astype(np.int32))
  _same_bits(jnp.argsort(x, axis=axis, descending=True),
             np.flip(shape[axis] - 1 - np.argsort(np.flip(x, axis), axis=axis, kind="stable"),
                     axis).astype(np.int32))


# ------------------------------------------------------ set operations
def _program_ran(fun) -> bool:
  # the library program behind eager_program, reached through the closure
  program = next(c.cell_contents for c in fun.__closure__
                 if type(c.cell_contents).__name__ == "JitWrapped")
  return any(callable(r) for r in program._eager_fast.values()) or bool(program._cache)


_A = np.array([3, -1, 2, 2, 7, 0, -1, 5, 9, 3], np.int32)
_B = np.array([2, 2, 8, 0, 5, 11, -4], np.int32)


def _padded(values, size, fill):
  out = np.full(size, fill, values.dtype)
  out[:min(size, values.size)] = values[:size]
  return out


def test_set_operations_with_size_run_as_programs_with_op_by_op_values():
  calls = [
      (setops._intersect1d, lambda: jnp.intersect1d(_A, _B, size=6),
       _padded(np.intersect1d(_A, _B), 6, np.intersect1d(_A, _B)[0])),
      (setops._setxor1d, lambda: jnp.setxor1d(_A, _B, size=12),
       _padded(np.setxor1d(_A, _B), 12, np.setxor1d(_A, _B)[0])),
      (setops._setdiff1d, lambda: jnp.setdiff1d(_A, _B, size=7, fill_value=-9),
       _padded(np.setdiff1d(_A, _B), 7, -9)),
      (setops.union1d, lambda: jnp.union1d(_A, _B, size=5), np.union1d(_A, _B)[:5]),
      (setops._isin, lambda: jnp.isin(_A, _B, invert=True), np.isin(_A, _B, invert=True)),
      (setops._isin, lambda: jnp.isin(_A.reshape(2, 5), _B, method="sort"),
       np.isin(_A.reshape(2, 5), _B)),
  ]
  for fun, call, want in calls:
    got = call()
    with jax.disable_jit():   # op by op
      inline = call()
    _same_bits(got, inline)
    _same_bits(got, want.astype(np.asarray(got).dtype))
    assert _program_ran(fun), fun.__name__
  values, i1, i2 = jnp.intersect1d(_A, _B, return_indices=True, size=4)
  common = np.intersect1d(_A, _B)   # 3 values: one padding entry
  _same_bits(values, _padded(common, 4, common[0]))
  np.testing.assert_array_equal(_A[np.asarray(i1)[:3]], common)
  np.testing.assert_array_equal(_B[np.asarray(i2)[:3]], common)
  np.testing.assert_array_equal(np.asarray(i1)[3:], [_A.size])
  np.testing.assert_array_equal(np.asarray(i2)[3:], [_B.size])


@pytest.mark.parametrize("n", [9, 300, 1000])
def test_set_operations_eager_membership_by_lookup_gives_compare_all_booleans(n):
  # Past _EAGER_PAIRS_LIMIT pairs an eager 'auto' call looks elements up in
  # the sorted test values; traced calls compare every pair (JAX's 'auto').
  rng = np.random.default_rng(n)
  a = (np.round(rng.standard_normal(n) * 3) / 2).astype(np.float32)
  b = (np.round(rng.standard_normal(n - 2) * 3) / 2).astype(np.float32)
  a[::7], b[::5], a[1::9], b[2::11] = np.nan, np.nan, -0.0, 0.0
  big = n * (n - 2) > setops._EAGER_PAIRS_LIMIT
  assert setops._membership(a, b) == ("sort" if big else "auto")
  for invert in (False, True):
    got = jnp.isin(a, b, invert=invert)
    _same_bits(got, jax.jit(lambda p, q: jnp.isin(p, q, invert=invert))(a, b))
    _same_bits(got, np.isin(a, b, invert=invert))
  ai, bi = (np.nan_to_num(a) * 2).astype(np.int32), (np.nan_to_num(b) * 2).astype(np.int32)
  for fun in (lambda p, q: jnp.intersect1d(p, q, size=7), lambda p, q: jnp.setxor1d(p, q, size=9),
              lambda p, q: jnp.setdiff1d(p, q, size=8)):
    _same_bits(fun(ai, bi), jax.jit(fun)(ai, bi))
  _same_bits(jnp.setdiff1d(ai, bi), np.setdiff1d(ai, bi))
  _same_bits(jnp.intersect1d(ai, bi), np.intersect1d(ai, bi))
  text = str(jax.make_jaxpr(lambda p, q: jnp.isin(p, q))(a, b))
  assert "sort" not in text   # traced: every pair compared


def test_set_operations_without_size_and_traced_run_inline():
  _same_bits(jnp.setdiff1d(_A, _B), np.setdiff1d(_A, _B))
  _same_bits(jnp.intersect1d(_A, _B), np.intersect1d(_A, _B))
  text = str(jax.make_jaxpr(lambda a, b: jnp.setxor1d(a, b, size=9))(_A, _B))
  assert "name=setxor1d" not in text   # inline, as before (jnp.sort is its own jit)
  got = jax.jit(lambda a, b: jnp.intersect1d(a, b, size=6))(_A, _B)
  _same_bits(got, _padded(np.intersect1d(_A, _B), 6, np.intersect1d(_A, _B)[0]))


# ------------------------------------- cumulative rows, associative_scan
_CUMULATIVE = [(reductions.cumsum_p, np.add), (reductions.cumprod_p, np.multiply),
               (reductions.cummax_p, np.maximum), (reductions.cummin_p, np.minimum)]


@pytest.mark.parametrize("case", range(len(_CUMULATIVE)))
@pytest.mark.parametrize("dt", [np.int32, np.uint8, np.float32, np.float16], ids=str)
@pytest.mark.parametrize("shape,axis", [((3, 600), 0), ((5, 2, 300), 1), ((70, 3), 0),
                                        ((4, 64), 1), ((40, 40), 0)], ids=str)
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_row_loop_kernel_gives_numpys_accumulate(case, dt, shape, axis, reverse):
  p, ufunc = _CUMULATIVE[case]
  rng = np.random.default_rng(case)
  if np.issubdtype(dt, np.integer):
    x = rng.integers(0 if dt == np.uint8 else -100, 100, shape).astype(dt)
  else:
    x = rng.standard_normal(shape).astype(dt)
    x.flat[3], x.flat[7] = np.nan, -0.0
  params = dict(axis=axis, reverse=reverse)
  kernel, lean, *_ = make_plan(p, [_aval(x)], params)
  assert lean
  flip = (lambda v: np.flip(v, axis)) if reverse else (lambda v: v)
  want = flip(ufunc.accumulate(flip(x), axis=axis, dtype=x.dtype))
  got = kernel(x)
  if dt == np.float16 and ufunc in (np.add, np.multiply):   # NumPy sums halves in float
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2)
  else:
    _same_bits(got, want)
  rows = x.size // shape[axis] >= reductions._ROW_LOOP_MIN_ROW and axis != x.ndim - 1
  chosen = p.eval_kernel(_aval(x), **params)
  assert (getattr(chosen, "func", None) is reductions._accumulate_rows) == rows


_SCANS = [(lax.add, np.add), (lax.mul, np.multiply), (lax.max, np.maximum),
          (lax.min, np.minimum)]


@pytest.mark.parametrize("case", range(len(_SCANS)))
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_associative_scan_of_a_monoid_eagerly_matches_the_traced_levels(case, reverse, axis):
  fn, ufunc = _SCANS[case]
  rng = np.random.default_rng(case)
  xi = jnp.asarray(rng.integers(-100000, 100000, (5, 9)).astype(np.int32))
  xf = jnp.asarray(rng.standard_normal((5, 9)).astype(np.float32))
  for x in (xi, xf):
    got = lax.associative_scan(fn, x, reverse=reverse, axis=axis)
    traced = jax.jit(lambda v: lax.associative_scan(fn, v, reverse=reverse, axis=axis))(x)
    flip = (lambda v: np.flip(v, axis)) if reverse else (lambda v: v)
    want = flip(ufunc.accumulate(flip(np.asarray(x)), axis=axis, dtype=x.dtype))
    assert got.dtype == traced.dtype == x.dtype and got.shape == x.shape
    if x.dtype == np.int32:   # wrapping products included: the same bits
      _same_bits(got, want)
      _same_bits(got, traced)
    else:
      np.testing.assert_allclose(got, traced, rtol=1e-5, atol=1e-5)
      np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
  # The eager call is the cumulative primitive, one bind; traced, JAX's levels.
  text = str(jax.make_jaxpr(lambda v: lax.associative_scan(fn, v, reverse=reverse))(xf))
  assert "slice" in text and "cum" not in text


# (the package exports the function under the module's name)
associative_scan_module = importlib.import_module("openjax._src.lax.associative_scan")


def test_associative_scan_of_a_monoid_eagerly_is_one_cumulative_call(monkeypatch):
  def levels(*args, **kwargs):
    raise AssertionError("eager lax.add scans need no levels")
  monkeypatch.setattr(associative_scan_module, "_associative_scan", levels)
  x = jnp.asarray(np.arange(12, dtype=np.int32).reshape(3, 4))
  _same_bits(lax.associative_scan(lax.add, x, axis=1), np.cumsum(np.asarray(x), 1, dtype=np.int32))
  _same_bits(lax.associative_scan(lax.max, x, reverse=True),
             np.flip(np.maximum.accumulate(np.flip(np.asarray(x), 0), 0), 0))


def test_associative_scan_eager_shortcut_leaves_other_calls_alone():
  x = jnp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
  pair = lax.associative_scan(lambda a, b: (a[0] + b[0], a[1] * b[1]), (x, x + 1))
  np.testing.assert_allclose(pair[0], np.cumsum(x, 0))
  np.testing.assert_allclose(pair[1], np.cumprod(np.asarray(x) + 1, 0))
  with pytest.raises(ValueError, match="axis"):
    lax.associative_scan(lax.add, x, axis=2)


# ------------------------------------------------------------ histogram
def test_histogram_with_edge_array_runs_as_a_program():
  rng = np.random.default_rng(5)
  x = rng.random(40).astype(np.float32)
  edges = np.array([0.0, 0.3, 0.5, 1.0], np.float32)
  w = rng.random(40).astype(np.float32)
  for kw in ({}, {"weights": w}, {"density": True}, {"weights": w, "density": True}):
    counts, got_edges = jnp.histogram(x, bins=edges, **kw)
    with jax.disable_jit():   # op by op
      want_counts, _ = jnp.histogram(x, bins=edges, **kw)
    np.testing.assert_array_equal(np.asarray(counts), np.asarray(want_counts))
    ref, ref_edges = np.histogram(x, bins=edges, **kw)
    np.testing.assert_allclose(np.asarray(counts), ref, rtol=1e-5)
    _same_bits(got_edges, ref_edges)
  assert _program_ran(searching._histogram_of_edges)
  # Traced: inline, as before.
  text = str(jax.make_jaxpr(lambda v, e: jnp.histogram(v, bins=e))(x, edges))
  assert "name=_histogram" not in text and "name=histogram" not in text


# ---------------------------------------------------------------- top_k
@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32, np.uint8], ids=str)
@pytest.mark.parametrize("shape,axis", [((3000,), 0), ((40, 120), 1), ((40, 120), 0),
                                        ((6, 50, 11), 1)], ids=str)
def test_top_k_kernel_most_of_each_row_and_flat_take(dt, shape, axis):
  # k past half the row sorts whole rows (no partition); values come from one
  # flat take for rows along the last axis: both must give the argsort path's bits.
  rng = np.random.default_rng(7)
  if np.issubdtype(dt, np.integer):
    x = rng.integers(0, 50, shape).astype(dt)
  else:
    x = (np.round(rng.standard_normal(shape) * 2) / 2).astype(dt)
    x.flat[::17] = -0.0
    x.flat[::23] = np.nan
    x.flat[5::29] = -np.nan
  m = shape[axis]
  for k in sorted({m // 2, m // 2 + 1, m - 1, m}):
    got = sort_kernels.top_k(x, k, axis)
    want = _top_k_argsort(x, k=k, axis=axis)
    assert got is not None
    for g, w in zip(got, want):
      _same_bits(g, w)


# ---------------------------------------------------- searchsorted, co-sort
@pytest.mark.parametrize("dt", [np.float32, np.int32, np.uint8, np.float16], ids=str)
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("n,m", [(1, 5), (7, (2, 3)), (300, 400), (3000, 5000)], ids=str)
def test_searchsorted_sort_method_counts_elements_before_each_query(dt, side, n, m):
  rng = np.random.default_rng(11)
  if np.issubdtype(dt, np.integer):
    a = np.sort(rng.integers(0, 40, n)).astype(dt)
    v = rng.integers(0, 45, m).astype(dt)
  else:
    a = (np.round(rng.standard_normal(n) * 2) / 2).astype(dt)
    v = (np.round(rng.standard_normal(m) * 2) / 2).astype(dt)
    a.flat[::5] = -0.0
    v.flat[::3] = -0.0
    a.flat[-1:] = np.nan
    v.flat[1::4] = np.nan
    a = np.sort(a)
  want = np.searchsorted(a, v, side=side).astype(np.int32)
  for method in ("sort", "scan"):
    got = jnp.searchsorted(a, v, side=side, method=method)
    _same_bits(got, want)
  _same_bits(jax.jit(lambda p, q: jnp.searchsorted(p, q, side=side, method="sort"))(a, v), want)


def test_searchsorted_sort_method_co_sorts_once():
  a, v = np.sort(np.arange(50, dtype=np.float32) % 7), np.arange(40, dtype=np.float32) / 3
  for side in ("left", "right"):
    text = str(jax.make_jaxpr(lambda p, q: jnp.searchsorted(p, q, side=side, method="sort"))(a, v))
    # the co-sort and the inverse permutation: two sorts (ranking the queries apart took four)
    assert text.count(" sort[") == 2 and "cumsum" in text, text


def test_searchsorted_sort_method_empty_and_complex():
  a = np.array([1 + 1j, 1 + 2j, 2 + 0j, 3 - 1j], np.complex64)
  v = np.array([[1 + 1.5j, 2 + 0j], [0j, 5 + 0j]], np.complex64)
  for side in ("left", "right"):
    _same_bits(jnp.searchsorted(a, v, side=side, method="sort"),
               np.searchsorted(a, v, side=side).astype(np.int32))
  _same_bits(jnp.searchsorted(a, np.zeros((0,), np.complex64), method="sort"),
             np.zeros((0,), np.int32))


def test_stable_argsort_of_a_permutation_is_its_inverse():
  rng = np.random.default_rng(2)
  for dt in (np.int32, np.int64, np.uint32):
    perm = rng.permutation(5000).astype(dt)
    got = sort_kernels.stable_argsort(perm, 0)
    np.testing.assert_array_equal(got, np.argsort(perm, kind="stable"))
    assert sort_kernels._inverse_permutation(perm) is not None
    # 0..n-1 as bounds but a repeated value: not a permutation, sorted instead
    dup = perm.copy()
    dup[np.argmax(perm == 7)] = 8
    assert sort_kernels._inverse_permutation(dup) is None
    np.testing.assert_array_equal(sort_kernels.stable_argsort(dup, 0),
                                  np.argsort(dup, kind="stable"))


# -------------------------------------------------------------- lexsort
def test_lexsort_keys_are_the_programs_own_arguments():
  rng = np.random.default_rng(4)
  a, b = rng.integers(0, 3, (6, 2)).astype(np.int32), rng.integers(0, 2, (6, 2)).astype(np.int32)
  a1, b1 = rng.integers(0, 3, 9).astype(np.int32), rng.integers(0, 2, 9).astype(np.float32)
  _same_bits(jnp.lexsort((a1, b1)), np.lexsort((a1, b1)).astype(np.int32))
  _same_bits(jnp.lexsort([a, b], axis=0), np.lexsort((a, b), axis=0).astype(np.int32))
  _same_bits(jnp.lexsort(np.stack([a1, a1[::-1]])),
             np.lexsort(np.stack([a1, a1[::-1]])).astype(np.int32))
  # Each key array is an argument the eager call keys directly (its runner is
  # cached: a tuple argument took jit's general path every call).
  jnp.lexsort((jnp.asarray(a1), jnp.asarray(b1)))
  assert any(callable(r) for r in sorting._lexsort_of_keys._eager_fast.values())
  # JAX's jaxpr: jit[name=lexsort] of the key arrays.
  text = str(jax.make_jaxpr(lambda p, q: jnp.lexsort([p, q], axis=0))(a, b))
  assert "name=lexsort" in text and "num_keys=2" in text and "] b a d" in text
  with pytest.raises(TypeError, match="len > 0"):
    jnp.lexsort(())


def test_reduce_lax_monoids_and_non_identity_inits():
  x = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
  xf = x.astype(np.float32) / 3
  cases = [(x, np.int32(-1), lax.bitwise_and, np.bitwise_and), (x, np.int32(0), lax.bitwise_or,
                                                                np.bitwise_or),
           (x, np.int32(0), lax.bitwise_xor, np.bitwise_xor), (xf, -np.inf, lax.max, np.maximum),
           (xf, np.inf, lax.min, np.minimum), (x, np.int32(1), lax.mul, np.multiply)]
  for v, init, op, ufunc in cases:
    want = ufunc.reduce(v, axis=1)
    _same_bits(lax.reduce(v, init, op, (1,)), want.astype(v.dtype))
    text = str(jax.make_jaxpr(lambda a: lax.reduce(a, init, op, (1,)))(v))
    assert "reduce[" not in text, text   # the dedicated reduction (reduce_and, ...)
  # An init that is no identity: a general reduce, the init folded in once.
  for init in (1.0, -0.5):
    got = lax.reduce(xf, init, lax.max, (1,))
    np.testing.assert_array_equal(got, np.maximum(xf.max(1), np.float32(init)))
    np.testing.assert_array_equal(jax.jit(lambda a: lax.reduce(a, init, lax.max, (1,)))(xf), got)
    assert "reduce[" in str(jax.make_jaxpr(lambda a: lax.reduce(a, init, lax.max, (1,)))(xf))
  np.testing.assert_array_equal(lax.reduce(xf, 2.0, lax.add, (1,)), xf.sum(1) + 2)


# ------------------------------------------------------ several sort keys
@pytest.mark.parametrize("dts", [(np.int32, np.float32), (np.float32, np.float16, np.bool_),
                                 (np.uint8, np.int32), (np.float32, np.uint32)], ids=str)
@pytest.mark.parametrize("shape,dimension", [((5000,), 0), ((40, 120), 1), ((120, 40), 0),
                                             ((6, 500, 3), 1)], ids=str)
def test_several_keys_sort_key_by_key_like_lexsort(dts, shape, dimension, monkeypatch):
  calls = []
  by_keys = sort_kernels.stable_argsort_keys
  monkeypatch.setattr(sort_kernels, "stable_argsort_keys",
                      lambda *a: calls.append(1) or by_keys(*a))
  keys = sort_keys(np.random.default_rng(9), dts, shape)
  payload = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
  operands = (*keys, payload)
  params = dict(dimension=dimension, is_stable=True, num_keys=len(keys))
  got = _sort_impl(*operands, **params)
  want = _sort_lexsort(*operands, **params)
  for g, w in zip(got, want):
    _same_bits(g, w)
  assert calls, "keys of up to 32 bits from SEVERAL_KEYS_FROM elements: sorted key by key"


# ------------------------------------------------------------- digitize
@pytest.mark.parametrize("right", [False, True])
def test_digitize_eagerly_searches_once_with_jaxs_bits(right):
  rng = np.random.default_rng(12)
  x = (np.round(rng.standard_normal(40) * 2) / 2).astype(np.float32)
  x[::9] = np.nan
  bins_cases = [np.array([-1.0, 0.0, 0.5, 2.0], np.float32),
                np.array([2.0, 0.5, 0.5, -1.0], np.float32),     # decreasing, a tie
                np.array([0.5, -1.0, 2.0, 0.0], np.float32),     # unsorted: JAX's garbage, same
                np.array([np.nan, 0.0, 1.0], np.float32), np.array([3.0], np.float32)]
  staged = jax.jit(lambda v, b: jnp.digitize(v, b, right))
  for bins in bins_cases:
    got = jnp.digitize(x, bins, right)
    _same_bits(got, staged(x, bins))
    if np.all(np.diff(bins) >= 0) or np.all(np.diff(bins) <= 0):
      _same_bits(got, np.digitize(x, bins, right).astype(np.int32))
  assert any(callable(r) for r in searching._digitize_eager._eager_fast.values())
  ints = rng.integers(0, 10, 30).astype(np.int32)
  _same_bits(jnp.digitize(ints, np.array([2, 4, 4, 8], np.int32), right),
             np.digitize(ints, [2, 4, 4, 8], right).astype(np.int32))
  # Traced: JAX's jaxpr, both searches.
  text = str(jax.make_jaxpr(lambda v, b: jnp.digitize(v, b, right))(x, bins_cases[0]))
  assert "name=digitize" in text and text.count("name=searchsorted") == 2


def test_associative_scan_with_an_unhashable_callable():
  class Add:
    __hash__ = None

    def __eq__(self, other):
      return False

    def __call__(self, a, b):
      return a + b
  x = jnp.asarray(np.arange(6, dtype=np.float32))
  np.testing.assert_allclose(lax.associative_scan(Add(), x), np.cumsum(np.arange(6)))
