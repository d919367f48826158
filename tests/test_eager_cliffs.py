"""Eager formulations that read only what a result needs (issue 14's
large-size cliffs): each must give what the traced formulation (JAX's
equations, as ``jit`` stages them) or NumPy gives, for every layout it
takes a short cut for."""
import itertools
import math
import time

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src import lax
from openjax._src.core.avals import ShapedArray
from openjax._src.core.program import program_of
from openjax._src.core.trace import make_plan
from openjax._src.numpy.einsum import _contractions, _eager_contract, diagonal_take


def _same_bits(a, b) -> None:
  a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
  assert a.dtype == b.dtype and a.shape == b.shape
  np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


def _seconds(f) -> float:
  start = time.perf_counter()
  f()
  return time.perf_counter() - start


# ------------------------------------------------------------- diagonals
@pytest.mark.parametrize("shape", [(3, 4, 5), (4, 2, 3, 4), (5, 5), (2, 3, 1, 4, 2), (3, 1, 3),
                                   (4, 0, 4)], ids=str)
def test_diagonal_take_matches_numpy_diagonal_for_every_layout(shape):
  # adjacent axes (one strided slice), two apart (row slices + the last
  # step), either order, offsets running off either axis, empty results
  x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
  nd = len(shape)
  for a, b in itertools.permutations(range(nd), 2):
    for offset in (0, 1, -1, 2, -3, 7):
      want = np.diagonal(x, offset, a, b)
      offsets = (0, offset) if offset >= 0 else (-offset, 0)
      for position in range(nd - 1):
        got = diagonal_take(jnp.asarray(x), (a, b), offsets, position)
        _same_bits(got, np.moveaxis(want, -1, position))
      _same_bits(jnp.diagonal(x, offset, a, b), want)


def test_diagonal_take_of_three_axes_gathers():
  x = np.random.default_rng(1).standard_normal((3, 2, 3, 4, 3)).astype(np.float32)
  t = np.arange(3)
  got = diagonal_take(jnp.asarray(x), (0, 2, 4), (0, 0, 0), 1)
  _same_bits(got, np.moveaxis(x[t, :, t, :, t], 0, 1))


def test_diagonal_of_non_trailing_axes_reads_no_transposed_copy():
  # the eager program of diagonal over (2, 0) has no transpose of the whole
  # operand before it: every step's result is at most the diagonal's size
  x = jnp.zeros((6, 5, 7), bool)
  jaxpr = jax.make_jaxpr(lambda x: jnp.diagonal(x, -1, 2, 0))(x).jaxpr
  inner = jaxpr.eqns[0].params["jaxpr"].jaxpr
  assert [e.primitive.name for e in inner.eqns if e.primitive.name in ("transpose", "gather")]
  for e in inner.eqns:
    if e.primitive.name == "transpose":
      assert e.invars[0].aval.size <= 5 * 6


def test_diagonal_grad_and_vmap():
  x = np.random.default_rng(2).standard_normal((4, 3, 5)).astype(np.float32)
  g = jax.grad(lambda x: (jnp.diagonal(x, 1, 2, 0) ** 2).sum())(jnp.asarray(x))
  want = np.zeros_like(x)
  for i in range(3):   # rows along axis 2 (i), columns along axis 0 (i + 1)
    want[i + 1, :, i] = 2 * x[i + 1, :, i]
  np.testing.assert_allclose(g, want, rtol=1e-6)
  v = jax.vmap(lambda m: jnp.diagonal(m, -1, 1, 0))(jnp.asarray(x))
  _same_bits(v, np.stack([np.diagonal(m, -1, 1, 0) for m in x]))


# ---------------------------------------------------------------- einsum
_REPEATS = [("ii->i", [(40, 40)]), ("ii", [(40, 40)]), ("iji->j", [(20, 6, 20)]),
            ("iii->i", [(17, 17, 17)]), ("iij->ij", [(20, 20, 6)]), ("ijj->ji", [(6, 20, 20)]),
            ("ijiki->jk", [(9, 4, 9, 3, 9)]), ("iij,jk->ik", [(20, 20, 6), (6, 5)]),
            ("ii,jj->ij", [(40, 40), (33, 33)]), ("iijj->", [(9, 9, 9, 9)])]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64, np.bool_], ids=str)
@pytest.mark.parametrize("subscripts,shapes", _REPEATS, ids=[s for s, _ in _REPEATS])
def test_eager_einsum_diagonals_match_the_traced_mask(subscripts, shapes, dtype):
  # eagerly (operands over 4 KiB) the diagonal is sliced or gathered; traced
  # (jit, interpreted) JAX's iota mask and sum run: the same values, and
  # for integers and bools the same bits
  rng = np.random.default_rng(3)
  if dtype == np.bool_:
    ops = [rng.random(s) > 0.5 for s in shapes]
  else:
    ops = [(rng.integers(-4, 5, s) + (1j * rng.integers(-4, 5, s) if dtype == np.complex64
                                      else 0)).astype(dtype) for s in shapes]
  ops = [jnp.asarray(o) for o in ops]
  eager = jnp.einsum(subscripts, *ops)
  traced = jax.jit(lambda *a: jnp.einsum(subscripts, *a))(*ops)
  _same_bits(eager, traced)   # small integers: float sums are exact too
  np.testing.assert_allclose(np.asarray(eager, np.complex128),
                             np.einsum(subscripts, *[np.asarray(o) for o in ops]), rtol=1e-6)


@pytest.mark.parametrize("subscripts", ["ii->i", "ii", "iji->j"])
def test_eager_einsum_diagonal_of_negative_zeros_is_positive_zero(subscripts):
  # the mask's sum adds +0.0 terms: -0.0 on the diagonal comes out +0.0
  shape = (40, 3, 40) if subscripts == "iji->j" else (40, 40)
  x = jnp.asarray(np.full(shape, -0.0, np.float32))
  eager = jnp.einsum(subscripts, x)
  _same_bits(eager, jax.jit(lambda x: jnp.einsum(subscripts, x))(x))
  assert not np.signbit(np.asarray(eager)).any()


def test_einsum_jaxpr_keeps_jax_mask():
  x = jnp.zeros((40, 40))
  names = [e.primitive.name for e in jax.make_jaxpr(lambda x: jnp.einsum("ii->i", x))(x).eqns]
  assert names == ["iota", "iota", "eq", "broadcast_in_dim", "select_n", "reduce_sum"]


@pytest.mark.parametrize("subscripts,shape", [("ii->i", (40, 40)), ("iji->j", (20, 6, 20)),
                                              ("ijiki->jk", (9, 4, 9, 3, 9))])
def test_eager_einsum_program_reads_no_mask(subscripts, shape):
  x = jnp.zeros(shape)
  contractions = _contractions(subscripts, (shape,), "auto")
  jaxpr = jax.make_jaxpr(lambda x: _eager_contract(
      contractions, None, None, lax.dot_general, x))(x).jaxpr
  names = {e.primitive.name for e in jaxpr.eqns[0].params["jaxpr"].jaxpr.eqns}
  assert not names & {"iota", "select_n"}, names


# ------------------------------------------------------------------ tile
@pytest.mark.parametrize("shape,reps", [((3,), (0,)), ((3,), (2,)), ((2, 3), (1, 1)),
                                        ((2, 3), (3, 0)), ((2, 0), (2, 2)), ((2, 3), (2, 3)),
                                        ((1,), (5,)), ((2, 1, 3), (1, 4, 2))], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.bool_, np.int8], ids=str)
def test_tile_matches_numpy(shape, reps, dtype):
  x = (np.arange(math.prod(shape)).reshape(shape) % 3).astype(dtype)
  _same_bits(lax.tile(jnp.asarray(x), reps), np.tile(x, reps))


def test_tile_by_zero_copies_nothing():
  # np.tile's repeat copies a read-only operand (an Array's value) even for
  # a zero count: 1e6 elements took ~45 us for an empty result
  x = jnp.ones(10**6, bool)
  lax.tile(x, (0,))
  best = min(_seconds(lambda: lax.tile(x, (0,))) for _ in range(20))
  assert best < 20e-6, best


# ------------------------------------------------- broadcast-scalar operands
# (the n-ary primitives whose eval kernel is the generic one)
_BINARY = ["add", "sub", "mul", "rem", "nextafter", "eq", "ne", "and", "or", "xor", "complex"]


@pytest.mark.parametrize("name", _BINARY)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32,
                                   np.uint8, np.bool_, np.complex64], ids=str)
def test_nary_kernel_of_broadcast_scalars_is_one_element_broadcast(name, dtype):
  p = getattr(lax, f"{name}_p")
  shape = (200, 100)
  for a, b in [(-1.5, 0.0), (2.0, -0.0), (np.nan, 3.0), (7.0, 2.0), (-3.0, 64.0)]:
    try:
      with np.errstate(invalid="ignore"):   # NaN to an integer type
        x = np.broadcast_to(np.array(a).astype(dtype), shape)
        y = np.broadcast_to(np.array(b).astype(dtype), shape)
      kernel, lean, *_ = make_plan(p, [ShapedArray(shape, x.dtype)] * 2, {})
    except (TypeError, ValueError):   # a dtype the primitive does not take
      return
    assert lean
    with np.errstate(all="ignore"):
      got = kernel(x, y)
      want = p.impl(np.ascontiguousarray(x), np.ascontiguousarray(y))[0]
    assert not any(got.strides)
    _same_bits(got, want.astype(got.dtype))
    with np.errstate(all="ignore"):   # operands with strides: the plain kernel
      _same_bits(kernel(np.ascontiguousarray(x), y), want.astype(got.dtype))


def test_iscomplex_of_a_large_real_array_is_a_broadcast():
  x = jnp.ones(10**6, np.float32)
  r = jnp.iscomplex(x)
  assert r.dtype == np.bool_ and r.shape == x.shape and not np.asarray(r).any()
  assert not any(np.asarray(r).strides)


# ------------------------------------------------------------ fused steps
def _program_kernels(f, *args):
  jaxpr = jax.make_jaxpr(f)(*args).jaxpr
  if jaxpr.eqns and jaxpr.eqns[0].primitive.name == "jit":
    jaxpr = jaxpr.eqns[0].params["jaxpr"].jaxpr
  return [getattr(s[0], "__qualname__", "") for s in program_of(jaxpr).kernel_steps]


def _nan_samples(dtype):
  rng = np.random.default_rng(5)
  x = rng.standard_normal((60, 70)).astype(dtype)
  x[rng.random(x.shape) < 0.3] = np.nan
  x[:, 4] = np.nan                       # an all-NaN column
  x[7] = rng.choice(np.array([0.0, -0.0], dtype), 70)   # signed zeros only
  x[9, :5] = -np.inf
  return x


@pytest.mark.parametrize("dtype", [np.float16, np.float32], ids=str)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
def test_fused_nan_extrema_match_the_select_and_reduce(name, axis, dtype):
  x = _nan_samples(dtype)
  # JAX's equations (NaNs to the identity, then the max) give these values;
  # the fused kernel gives NumPy's nanmax bits (np.fmax.reduce: of +-0 it may
  # keep the other zero than np.maximum.reduce's order does)
  fill, chooser, nan_ignoring = ((-np.inf, np.maximum, np.fmax) if name == "nanmax"
                                 else (np.inf, np.minimum, np.fmin))
  ax = tuple(range(2)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
  selected = np.where(np.isnan(x), dtype(fill), x)
  want = chooser.reduce(selected, axis=ax, initial=fill).astype(dtype)
  all_nan = np.isnan(x).all(axis=ax)
  want = np.where(all_nan, dtype(np.nan), want)
  f = getattr(jnp, name)
  got = f(jnp.asarray(x), axis=axis)
  np.testing.assert_array_equal(got, want)
  kernels = _program_kernels(lambda x: f(x, axis=axis), jnp.asarray(x))
  if dtype == np.float16:   # (np.fmax of float16 is not vectorised: not fused)
    _same_bits(got, want)
    assert "_nan_chooser.<locals>.kernel" not in kernels
    return
  numpy_bits = np.where(all_nan, dtype(np.nan), nan_ignoring.reduce(x, axis=ax, initial=fill))
  _same_bits(got, numpy_bits.astype(dtype))
  assert "_nan_chooser.<locals>.kernel" in kernels and "_all_nan.<locals>.kernel" in kernels
  assert len(kernels) == 3


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.float32, np.uint8], ids=str)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)], ids=str)
def test_fused_count_nonzero_matches_numpy(dtype, axis):
  rng = np.random.default_rng(6)
  x = (rng.integers(0, 3, (50, 90)) * (rng.random((50, 90)) < 0.5)).astype(dtype)
  if dtype == np.float32:
    x[0, :6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, 0.0]
  got = jnp.count_nonzero(jnp.asarray(x), axis=axis)
  want = np.count_nonzero(x, axis=axis)
  np.testing.assert_array_equal(got, want)
  assert got.dtype == np.int32
  assert _program_kernels(lambda x: jnp.count_nonzero(x, axis=axis), jnp.asarray(x)) == [
      "_count.<locals>.kernel"]


def test_fused_count_wraps_in_the_sum_dtype():
  b = np.ones(300, bool)
  got = jnp.sum(jnp.asarray(b), dtype=jnp.int8)
  _same_bits(got, np.sum(b.astype(np.int8), dtype=np.int8))   # 300 wraps to 44


def test_fused_step_keeps_its_operand_until_it_runs():
  # x (a large intermediate) is last read by the select before the fusion;
  # the fused reduce, after an unrelated step, still reads it
  def f(y):
    x = y * 2
    e = lax.select_n(lax.ne(x, x), x, lax.full(x.shape, -np.inf, x.dtype))
    t = jnp.cos(y)
    return lax.reduce_max(e, (0,)), t

  y = _nan_samples(np.float32)
  m, t = jax.jit(f)(jnp.asarray(y))
  want = np.maximum.reduce(np.where(np.isnan(y), -np.inf, y * 2), axis=0,
                           initial=-np.inf).astype(np.float32)
  _same_bits(m, want)
  np.testing.assert_allclose(t, np.cos(y), rtol=1e-6)


def test_unfused_when_an_intermediate_has_other_readers():
  def f(x):
    c = lax.ne(x, x)
    e = lax.select_n(c, x, lax.full(x.shape, -np.inf, x.dtype))
    return lax.reduce_max(e, (0,)), c

  x = jnp.asarray(_nan_samples(np.float32))
  kernels = _program_kernels(f, x)
  assert "_nan_chooser.<locals>.kernel" not in kernels
  m, c = jax.jit(f)(x)
  np.testing.assert_array_equal(c, np.isnan(np.asarray(x)))


# ------------------------------------------------- eager programs of methods
_VIEWS = [(np.complex64, np.float32, (3,)), (np.float32, np.complex64, (2, 4)),
          (np.bool_, np.uint8, (5,)), (np.float32, np.uint32, ()), (np.float32, np.uint8, (2, 3)),
          (np.uint8, np.float32, (3, 8)), (np.float32, np.int32, (4,)), (np.uint8, np.bool_, (6,)),
          (np.float16, np.int16, (3,)), (np.int8, np.bool_, (2, 2))]


@pytest.mark.parametrize("src,dst,shape", _VIEWS, ids=str)
def test_view_program_matches_numpy_and_op_by_op(src, dst, shape):
  rng = np.random.default_rng(7)
  x = (rng.standard_normal(shape) * 3).astype(src) if src != np.bool_ else rng.random(shape) > .5
  if dst == np.bool_:
    x = (np.abs(x) % 2).astype(src)   # only 0/1 bytes view as bools
  for _ in range(2):   # the first call traces the program, the second runs it
    got = jnp.asarray(x).view(dst)
    _same_bits(got, x.view(dst))
  with jax.disable_jit():
    _same_bits(jnp.asarray(x).view(dst), x.view(dst))
  names = [e.primitive.name for e in jax.make_jaxpr(lambda v: v.view(dst))(x).eqns]
  assert "jit" not in names   # traced: inline, as JAX


@pytest.mark.parametrize("a,b", [((1, 3), (2, 3)), ((3,), (2, 3)), ((2, 3), (2, 2)), ((), (4,))],
                         ids=str)
def test_array_equiv_program_matches_numpy(a, b):
  rng = np.random.default_rng(8)
  x = rng.integers(0, 2, a).astype(np.int32)
  try:
    tiled = np.broadcast_to(x, b).copy()
  except ValueError:   # shapes that do not broadcast
    tiled = None
  for y in (tiled, rng.integers(0, 2, b).astype(np.int32)):
    if y is None:
      continue
    for _ in range(2):
      got = jnp.array_equiv(jnp.asarray(x), jnp.asarray(y))
      assert got.dtype == np.bool_ and bool(got) == np.array_equiv(x, y)


def test_array_equiv_of_shapes_that_do_not_broadcast_is_false():
  assert not jnp.array_equiv(jnp.ones((2, 3)), jnp.ones((2, 2)))
  assert "jit" not in str(jax.make_jaxpr(jnp.array_equiv)(jnp.ones((1, 3)), jnp.ones((2, 3))))


# ----------------------------------------------- fused searchsorted counts
def _total_order_count(a, v, side):
  """The count of ``a``'s elements before each ``v`` in the sort order (NaN
  largest, -0.0 == 0.0), for any ``a``."""
  def less(x, y):
    if x.dtype.kind == "f":
      return (x < y) | (np.isnan(y) & ~np.isnan(x))
    return x < y
  x, y = a[:, None], v.reshape(-1)[None]
  flags = less(x, y) if side == "left" else ~less(y, x)
  return flags.sum(0).reshape(v.shape).astype(np.int32)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int32,
                                   np.uint8, np.bool_], ids=str)
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("n,m", [(1, ()), (7, (2, 3)), (40, (50,)), (6, (0,)), (90, (3, 4, 5))],
                         ids=str)
def test_fused_searchsorted_count_matches_compare_all(dtype, side, n, m):
  rng = np.random.default_rng(n + len(m))
  a = rng.integers(-3, 4, n).astype(dtype)            # unsorted, with ties
  v = rng.integers(-4, 5, m).astype(dtype)
  if a.dtype.kind == "f":
    a[rng.random(n) < 0.3] = np.nan
    a[rng.random(n) < 0.3] = -0.0
    a[rng.random(n) < 0.2] = np.inf
    if v.size:
      v.flat[0], v.flat[-1] = np.nan, -0.0
  f = lambda a, v: jnp.searchsorted(a, v, side=side, method="compare_all")   # noqa: E731
  got = f(jnp.asarray(a), jnp.asarray(v))
  want = _total_order_count(a, v, side)
  _same_bits(got, want)
  # the same bits as the equations op by op and compiled
  with jax.disable_jit():
    _same_bits(f(jnp.asarray(a), jnp.asarray(v)), want)
  _same_bits(jax.jit(f)(a, v), want)
  assert "_sorted_count.<locals>.kernel" in _program_kernels(f, a, v)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8], ids=str)
@pytest.mark.parametrize("side", ["left", "right"])
def test_fused_searchsorted_of_many_keys_in_key_order(dtype, side, monkeypatch):
  # past the caches the keys are searched in their sort order (fused_steps.
  # _search_in_key_order): the counts of the search in the keys' own order
  from openjax._src.core import fused_steps
  calls = []
  reorder = fused_steps._search_in_key_order
  monkeypatch.setattr(fused_steps, "_search_in_key_order",
                      lambda *a: calls.append(1) or reorder(*a))
  rng = np.random.default_rng(7)
  n, m = fused_steps.SEARCH_SORTED_KEYS_FROM + 5, (fused_steps.SEARCH_SORTED_KEYS_MIN // 64, 65)
  a = rng.integers(-3000, 3000, n).astype(dtype)        # unsorted, with ties
  v = rng.integers(-3500, 3500, m).astype(dtype)
  if a.dtype.kind == "f":
    a[rng.random(n) < 0.05] = np.nan
    a[rng.random(n) < 0.05] = -0.0
    v[rng.random(m) < 0.05] = np.nan
    v[rng.random(m) < 0.05] = -0.0
  f = lambda a, v: jnp.searchsorted(a, v, side=side, method="compare_all")   # noqa: E731
  got = np.asarray(f(jnp.asarray(a), jnp.asarray(v)))
  assert calls
  s = np.sort(a)
  want = np.array([s.searchsorted(k, side) for k in v.reshape(-1)[:500]])   # key by key
  np.testing.assert_array_equal(got.reshape(-1)[:500], want)
  np.testing.assert_array_equal(got, s.searchsorted(v, side).astype(np.int32))
  assert got.dtype == np.int32 and got.shape == m
  # keys of a few values walk the same search paths in any order: searched as they come
  calls.clear()
  few = v % 50 if v.dtype != np.bool_ else v
  got = np.asarray(f(jnp.asarray(a), jnp.asarray(few)))
  assert not calls
  np.testing.assert_array_equal(got, s.searchsorted(few, side).astype(np.int32))


def test_fused_searchsorted_leaves_complex_and_plain_float_compares():
  # complex keys compare real and imaginary parts; a float ``lt`` without the
  # NaN terms is not the sort order: neither is fused
  a = np.array([1 + 2j, np.nan, 0j, 1 - 1j], np.complex64)
  v = np.array([1 + 0j, np.nan + 0j], np.complex64)
  f = lambda a, v: jnp.searchsorted(a, v, method="compare_all")   # noqa: E731
  assert "_sorted_count.<locals>.kernel" not in _program_kernels(f, a, v)
  np.testing.assert_array_equal(f(jnp.asarray(a), jnp.asarray(v)), jax.jit(f)(a, v))

  def g(a, v):
    x = lax.broadcast_in_dim(a, (a.shape[0],) + v.shape, (0,))
    y = lax.broadcast_in_dim(v, (a.shape[0],) + v.shape, (1,))
    return jnp.sum(lax.lt(x, y), axis=0, dtype=jnp.int32)
  a = np.array([np.nan, 1.0, 3.0, -0.0], np.float32)
  v = np.array([np.nan, 0.0, 2.0], np.float32)
  assert "_sorted_count.<locals>.kernel" not in _program_kernels(g, a, v)
  np.testing.assert_array_equal(jax.jit(g)(a, v), [0, 0, 2])


def test_fused_searchsorted_of_digitize_and_the_sorter_form():
  bins = np.array([0.0, 1.0, 2.5, 4.0], np.float32)
  x = np.array([-1.0, 0.0, 1.0, 2.6, 4.0, np.nan, -0.0], np.float32)
  for right in (False, True):
    np.testing.assert_array_equal(jnp.digitize(jnp.asarray(x), jnp.asarray(bins), right),
                                  np.digitize(x, bins, right))
  s = np.array([1, 2, 0, 3])
  a = np.array([3.0, 1.0, 2.0, 5.0], np.float32)
  v = np.array([0.5, 2.0, 4.0, 6.0], np.float32)
  np.testing.assert_array_equal(jnp.searchsorted(jnp.asarray(a), jnp.asarray(v), sorter=s),
                                np.searchsorted(a, v, sorter=s))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8], ids=str)
@pytest.mark.parametrize("method", ["scan", "sort"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_eager_searchsorted_past_the_compare_all_limit_counts_as_the_co_sort(dtype, method, side):
  # eagerly the co-sort's counts come from the fused compare-all count (no
  # n x m arrays); op by op (disable_jit) and compiled they co-sort
  rng = np.random.default_rng(3)
  a = np.resize(np.sort(rng.integers(-20, 20, 7)).astype(dtype), 300)   # unsorted, ties
  v = rng.integers(-25, 25, (20, 30)).astype(dtype)
  if a.dtype.kind == "f":
    a[::13], a[5::17], v[0, :5] = np.nan, -0.0, [np.nan, -0.0, 0.0, np.inf, -np.inf]
  f = lambda a, v: jnp.searchsorted(a, v, side=side, method=method)   # noqa: E731
  got = f(jnp.asarray(a), jnp.asarray(v))
  _same_bits(got, _total_order_count(a, v, side))
  with jax.disable_jit():
    _same_bits(f(jnp.asarray(a), jnp.asarray(v)), np.asarray(got))
  from openjax._src.numpy.searching import _searchsorted_lean
  lean = _program_kernels(lambda a, v: _searchsorted_lean(a, v, side, method=method), a, v)
  assert lean == ["_sorted_count.<locals>.kernel"]
  if method == "sort":
    _same_bits(jax.jit(f)(a, v), np.asarray(got))


def test_eager_searchsorted_of_complex_past_the_limit_co_sorts():
  rng = np.random.default_rng(4)
  a = np.sort_complex(rng.integers(-3, 3, 300) + 1j * rng.integers(-2, 2, 300)).astype(
      np.complex64)
  v = (rng.integers(-4, 4, (20, 30)) + 1j * rng.integers(-3, 3, (20, 30))).astype(np.complex64)
  got = jnp.searchsorted(jnp.asarray(a), jnp.asarray(v), method="sort")
  np.testing.assert_array_equal(got, np.searchsorted(a, v))


@pytest.mark.parametrize("period", [None, 2.5])
def test_eager_interp_searches_by_the_fused_count(period):
  # eagerly interp's search is inline and lean: past the compare-all limit
  # the fused count where the staged search co-sorts (the same indices)
  rng = np.random.default_rng(8)
  xp = np.sort(rng.integers(-30, 30, 300)).astype(np.float32)   # repeated points
  fp = rng.standard_normal(300).astype(np.float32)
  x = (rng.standard_normal(1000) * 20).astype(np.float32)
  x[:4] = [np.nan, -0.0, xp[0], xp[-1]]
  f = lambda x, xp, fp: jnp.interp(x, xp, fp, period=period)   # noqa: E731
  got = f(jnp.asarray(x), jnp.asarray(xp), jnp.asarray(fp))
  with jax.disable_jit():
    _same_bits(got, f(jnp.asarray(x), jnp.asarray(xp), jnp.asarray(fp)))
  if period is None:
    np.testing.assert_allclose(got[4:], np.interp(x, xp, fp)[4:], rtol=1e-5, atol=1e-5)
  from openjax._src.numpy.searching import _interp_lean
  kernels = _program_kernels(
      lambda x, xp, fp: _interp_lean(x, xp, fp, None, None, period, extrapolate_left=False,
                                     extrapolate_right=False), x, xp, fp)
  assert "_sorted_count.<locals>.kernel" in kernels


def test_eager_searchsorted_op_by_op_never_compares_all_pairs_past_the_limit():
  # under disable_jit (or debug flags) nothing is fused: the co-sort stays,
  # not n x m compares (here 4e10 pairs)
  from openjax._src.numpy import searching
  a, v = jnp.arange(200_000, dtype=jnp.int32), jnp.arange(200_000, dtype=jnp.int32)
  with jax.disable_jit():
    assert not searching._compares_all("scan", 200_000, 200_000, True, np.dtype(np.int32))
    np.testing.assert_array_equal(jnp.searchsorted(a, v), np.arange(200_000))
  with jax.debug_nans(True):
    assert not searching._compares_all("sort", 200_000, 200_000, True, np.dtype(np.int32))
  assert searching._compares_all("scan", 200_000, 200_000, True, np.dtype(np.int32))
