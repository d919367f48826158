"""Eval kernels behind eager sorting/searching calls (branch sort12): each
gives the results of a plain NumPy oracle (integers bit for bit; decision 12)
on the paths it takes."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.numpy import reductions, searching
from openjax._src.primitives.sort import sort_kernels
from openjax._src.primitives.sort.sort import _sort_impl, _sort_keys, _sort_lexsort, _top_k_argsort


def _same_bits(a, b) -> None:
  a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
  assert a.dtype == b.dtype and a.shape == b.shape
  np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


def _oracle(operands, dimension, num_keys):
  """JAX's stable multi-key sort by np.lexsort along the last axis."""
  moved = [np.moveaxis(o, dimension, -1) for o in operands]
  keys = [k for o in moved[:num_keys] for k in _sort_keys(o)]
  perm = np.lexsort(keys[::-1], axis=-1)
  return [np.moveaxis(np.take_along_axis(o, perm, -1), -1, dimension) for o in moved]


def sort_keys(rng, dts, shape):
  """Sort keys of dtypes ``dts``: few distinct values (ties), and for floats
  -0.0 and NaN among them."""
  keys = []
  for dt in dts:
    if dt == np.bool_:
      k = rng.random(shape) < 0.5
    elif np.issubdtype(dt, np.integer):
      k = rng.integers(0, 4, shape).astype(dt)
    else:
      k = (np.round(rng.standard_normal(shape)) / 2).astype(dt)
      k.flat[::11] = -0.0
      k.flat[::13] = np.nan
    keys.append(k)
  return keys


def _broadcast_iota(dtype, shape, dimension):
  row = np.arange(shape[dimension], dtype=dtype)
  return np.broadcast_to(row.reshape([-1 if d == dimension else 1 for d in range(len(shape))]),
                         shape)


@pytest.mark.parametrize("dts", [(np.float32,), (np.int32, np.int32), (np.float32, np.bool_, np.int32),
                                 (np.uint8, np.float32)], ids=str)
@pytest.mark.parametrize("shape,dimension", [((1732, 7), 0), ((7, 1732), 1), ((60, 50), 0),
                                             ((6, 500, 3), 1), ((4, 3, 400), 0)], ids=str)
def test_several_keys_along_any_axis_with_iota_and_broadcast_operands(dts, shape, dimension):
  # From SEVERAL_KEYS_FROM elements the keys sort key by key with the
  # permutations laid out along the last axis and every take flat; an iota
  # operand (lexsort's, argsort's) permutes into the permutation itself.
  rng = np.random.default_rng(5)
  keys = sort_keys(rng, dts, shape)
  keys[0] = np.asfortranarray(keys[0])   # a key in another memory order
  iota = _broadcast_iota(np.int32, shape, dimension)
  reversed_row = iota[..., ::-1] if dimension != len(shape) - 1 else iota[::-1]
  not_iota = np.broadcast_to(np.flip(_broadcast_iota(np.int32, shape, dimension), dimension),
                             shape)
  payload = rng.standard_normal(shape).astype(np.float32)
  operands = (*keys, iota, not_iota, payload, reversed_row)
  params = dict(dimension=dimension, is_stable=True, num_keys=len(keys))
  got = _sort_impl(*operands, **params)
  for g, w in zip(got, _oracle(operands, dimension, len(keys))):
    _same_bits(g, w)
  assert sort_kernels._is_iota(iota, dimension)
  assert not sort_kernels._is_iota(not_iota, dimension)
  assert not sort_kernels._is_iota(payload.astype(np.int32), dimension)


@pytest.mark.parametrize("shape,dimension", [((6, 2), 0), ((3, 5, 2), 1), ((4, 3), 1),
                                             ((9,), 0), ((55, 18), 0)], ids=str)
def test_general_lexsort_path_along_any_axis(shape, dimension):
  rng = np.random.default_rng(6)
  keys = sort_keys(rng, (np.float32, np.int32, np.bool_), shape)
  iota = _broadcast_iota(np.int32, shape, dimension)
  operands = (*keys, iota)
  got = _sort_lexsort(*operands, dimension=dimension, is_stable=True, num_keys=3)
  for g, w in zip(got, _oracle(operands, dimension, 3)):
    _same_bits(g, w)


@pytest.mark.parametrize("shape", [(6, 2), (300, 40)], ids=str)
def test_lexsort_axis0_matches_numpy(shape):
  rng = np.random.default_rng(7)
  a = rng.integers(0, 3, shape).astype(np.int32)
  b = rng.integers(-2, 2, shape).astype(np.int32)
  c = (rng.integers(0, 3, shape) - 1).astype(np.float32)
  np.testing.assert_array_equal(jnp.lexsort([a, b], axis=0),
                                np.lexsort((a, b), axis=0).astype(np.int32))
  np.testing.assert_array_equal(jnp.lexsort((c, a, b), axis=0),
                                np.lexsort((c, a, b), axis=0).astype(np.int32))
  np.testing.assert_array_equal(jnp.lexsort((a, b), axis=1),
                                np.lexsort((a, b), axis=1).astype(np.int32))


# --------------------------------------------------------------- unique
_UNIQUE_CASES = [
    np.array([1.0, np.nan, 1.0, -0.0, 0.0, np.nan, 2.0, -0.0], np.float32),
    np.array([True, True, False]),
    np.random.default_rng(8).integers(-3, 4, 50).astype(np.int32),
    np.array([3], np.int32),
    np.array([0.5 + 1j, np.nan, 0.5 + 1j, -1j, complex(0.5, np.nan)], np.complex64),
    np.resize(np.array([2.0, np.nan, -1.0], np.float32), 3000),   # past the compare-all limit
]
_UNIQUE_KWARGS = [
    dict(size=2), dict(size=9, fill_value=5), dict(return_counts=True, size=3),
    dict(return_counts=True, size=12, fill_value=0),
    dict(return_index=True, return_inverse=True, return_counts=True, size=4),
    dict(return_inverse=True, size=12), dict(equal_nan=False, size=5, return_counts=True),
]


@pytest.mark.parametrize("kw", _UNIQUE_KWARGS, ids=str)
@pytest.mark.parametrize("case", range(len(_UNIQUE_CASES)))
def test_unique_eager_program_gives_the_staged_bits(case, kw):
  # Eagerly jnp.unique runs a lean program (a values-only sort unless the
  # permutation is needed, one search for the values' and counts' bounds);
  # traced, JAX's equations. Both give the same bits.
  x = _UNIQUE_CASES[case]
  eager = jnp.unique(x, **kw)
  staged = jax.jit(lambda v: jnp.unique(v, **kw))(x)
  eager = eager if isinstance(eager, tuple) else (eager,)
  staged = staged if isinstance(staged, tuple) else (staged,)
  assert len(eager) == len(staged)
  for e, s in zip(eager, staged):
    _same_bits(np.asarray(e), np.asarray(s))


def test_unique_eager_program_is_lean_and_staging_is_jaxs():
  x = np.array([3, 6, 9, 3, 15, 0, 6, 8, 1, 2], np.int32)
  lean = jax.make_jaxpr(lambda v: searching._unique_lean(v, size=3, return_counts=True))(x)
  prims = [e.primitive.name for e in lean.jaxpr.eqns]
  # one single-operand sort (no iota permuted along), no index wrap-around
  assert prims.count("sort") == 1 and "rem" not in prims and len(prims) <= 24, prims
  sort_eqn = next(e for e in lean.jaxpr.eqns if e.primitive.name == "sort")
  assert len(sort_eqn.invars) == 1
  staged = jax.make_jaxpr(lambda v: jnp.unique(v, size=3, return_counts=True))(x)
  assert staged.jaxpr.eqns[0].params["name"] == "_unique_sorted_mask"
  values, counts = jnp.unique(x, size=8, return_counts=True)
  want_values, want_counts = np.unique(x, return_counts=True)
  np.testing.assert_array_equal(values, want_values)
  np.testing.assert_array_equal(counts, want_counts)
  np.testing.assert_array_equal(jnp.unique_values(np.array([1.0, np.nan, 1.0, np.nan])),
                                [1.0, np.nan, np.nan])


@pytest.mark.parametrize("case", [0, 1, 2, 3])   # NumPy orders complex NaNs unlike JAX
def test_unique_without_size_matches_numpy(case):
  x = _UNIQUE_CASES[case]
  got = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
  want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
  for g, w in zip(got, want):
    np.testing.assert_array_equal(np.asarray(g), w.astype(np.asarray(g).dtype))
  np.testing.assert_array_equal(jnp.unique(x), np.unique(x))


# ------------------------------------------------ reductions of Python scalars
# JAX 0.10.2's dtype and value of jnp.<f>(scalar) (none weakly typed).
_SCALAR_REDUCTIONS = {
    ("sum", 2.5): (np.float32, 2.5), ("sum", 3): (np.int32, 3), ("sum", True): (np.int32, 1),
    ("max", True): (np.bool_, True), ("min", 3): (np.int32, 3), ("prod", 2.5): (np.float32, 2.5),
    ("mean", 2.5): (np.float32, 2.5), ("mean", 3): (np.float32, 3.0),
    ("mean", True): (np.float32, 1.0), ("all", 2.5): (np.bool_, True),
    ("any", 0.0): (np.bool_, False),
}


@pytest.mark.parametrize("fname,value", sorted(_SCALAR_REDUCTIONS, key=str), ids=str)
def test_reduction_of_a_python_scalar_replays_its_plan(fname, value):
  # A Python scalar becomes its weakly typed 0-d Array first, so the plan
  # recorded by the first call keys every later one (it took the general
  # path, checks and dtype logic included, on every call).
  dtype, want = _SCALAR_REDUCTIONS[fname, value]
  plans = reductions._MEAN_PLANS if fname == "mean" else reductions._REDUCTION_PLANS
  plans.clear()
  for _ in range(2):
    got = getattr(jnp, fname)(value)
    assert got.dtype == dtype and not got.aval.weak_type and got.shape == ()
    assert got.item() == want
  assert len(plans) == 1
  staged = jax.make_jaxpr(lambda: getattr(jnp, fname)(value))()
  assert staged.out_avals[0].dtype == dtype


def test_float16_zero_and_nan_masks_from_bits_cover_every_pattern():
  # The run restoring of float16 sorts reads zeros and NaNs off the bits
  # (NumPy's float16 compares run in software): every one of the 65536 patterns.
  x = np.arange(1 << 16, dtype=np.uint16).view(np.float16).reshape(256, 256)
  zeros, nans = sort_kernels._zeros_and_nans(x)
  np.testing.assert_array_equal(zeros, x == 0)
  np.testing.assert_array_equal(nans, np.isnan(x))
  x32 = np.array([0.0, -0.0, np.nan, 1.0, -np.inf], np.float32)
  zeros, nans = sort_kernels._zeros_and_nans(x32)
  np.testing.assert_array_equal(zeros, [True, True, False, False, False])
  np.testing.assert_array_equal(nans, [False, False, True, False, False])


# ------------------------------------------------------------- bincount
_BINCOUNT_CASES = [
    (np.array([0, 1, 4, 2, 2, -3, 7], np.int32), None, 3),    # negatives count in 0, 7 dropped
    (np.array([True, False, True]), None, 2),
    (np.array([True, False, True]), None, 5),
    (np.array([3, 0, 250, 3], np.uint8), None, 6),
    (np.random.default_rng(3).integers(-2, 9, 1000).astype(np.int32), None, 6),
    (np.random.default_rng(3).integers(-2, 9, 1000).astype(np.int32), None, 3),   # past the limit
    (np.array([0, 1, 1, 2], np.int32), np.array([3, 4, 5, 6], np.int32), 4),
    (np.array([0, 1, 1, 2], np.int32), np.array([0.5, 1.5, 2.5, 3.0], np.float32), 2),
    (np.zeros((0,), np.int32), None, 3),
    (np.array([1, 2], np.int32), None, 0),
]


@pytest.mark.parametrize("case", range(len(_BINCOUNT_CASES)))
def test_bincount_eager_program_gives_the_staged_bits(case):
  # Eagerly bincount without weights counts by comparing elements with
  # bins (up to _BINCOUNT_COMPARE_ALL_LIMIT pairs); traced, JAX's clip and
  # scatter-add. The same bits, and NumPy's counts.
  x, w, length = _BINCOUNT_CASES[case]
  eager = jnp.bincount(x, w, length=length)
  staged = jax.jit(lambda v, u: jnp.bincount(v, u, length=length))(x, w)
  _same_bits(np.asarray(eager), np.asarray(staged))
  want = np.bincount(np.maximum(x.astype(np.int64), 0), w, minlength=length)[:length]
  np.testing.assert_allclose(np.asarray(eager), want, rtol=1e-6)


def test_bincount_eager_program_counts_without_a_scatter():
  x = np.array([0, 1, 4, 2, 2], np.int32)
  lean = jax.make_jaxpr(lambda v: searching._bincount_lean(v, None, length=3))(x)
  assert "scatter" not in str(lean) and "eq" in str(lean)
  large = np.zeros(searching._BINCOUNT_COMPARE_ALL_LIMIT, np.int32)
  assert "scatter-add" in str(jax.make_jaxpr(
      lambda v: searching._bincount_lean(v, None, length=2))(large))
  assert "scatter-add" in str(jax.make_jaxpr(lambda v: jnp.bincount(v, length=3))(x))


# --------------------------------------------------------- searchsorted
def _search_cases():
  rng = np.random.default_rng(4)
  f = (np.round(rng.standard_normal(9) * 2) / 2).astype(np.float32)
  f[[2, 5]] = [-0.0, np.nan]
  q = np.array([[0.0, -0.0, np.nan], [1.5, -7.0, 0.5]], np.float32)
  yield np.sort(f), q
  yield f, q                                   # unsorted: JAX's sort method counts all the same
  yield np.sort(rng.integers(-3, 4, 12)).astype(np.int32), rng.integers(-5, 6, 7).astype(np.int32)
  yield (np.array([1 + 1j, 1 + 2j, 2 + 0j, 3 - 1j], np.complex64),
         np.array([1 + 1.5j, 2 + 0j, np.nan, 5 + 0j], np.complex64))
  yield np.sort(rng.standard_normal(300)).astype(np.float32), rng.standard_normal(200).astype(
      np.float32)   # past the compare-all limit: the co-sort


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("case", range(5))
def test_searchsorted_sort_method_eagerly_gives_the_staged_bits(case, side):
  a, v = list(_search_cases())[case]
  eager = jnp.searchsorted(a, v, side=side, method="sort")
  staged = jax.jit(lambda p, q: jnp.searchsorted(p, q, side=side, method="sort"))(a, v)
  _same_bits(np.asarray(eager), np.asarray(staged))
  if case in (0, 2, 4):   # sorted real a: NumPy's indices
    np.testing.assert_array_equal(np.asarray(eager), np.searchsorted(a, v, side=side))


def test_searchsorted_eager_program_compares_all_pairs_when_few():
  a, v = np.arange(7, dtype=np.float32), np.arange(6, dtype=np.float32).reshape(2, 3)
  lean = jax.make_jaxpr(lambda p, q: searching._searchsorted_lean(p, q, method="sort"))(a, v)
  assert " sort[" not in str(lean) and "reduce_sum" in str(lean)
  staged = str(jax.make_jaxpr(lambda p, q: jnp.searchsorted(p, q, method="sort"))(a, v))
  assert "name=searchsorted" in staged and staged.count(" sort[") == 2


@pytest.mark.parametrize("shape,axis,k", [((3, 5), 1, 3), ((4, 6, 3), 1, 2), ((7,), 0, 7),
                                          ((5, 4), 0, 1)], ids=str)
def test_small_top_k_general_path_matches_a_stable_numpy_oracle(shape, axis, k):
  rng = np.random.default_rng(11)
  x = (np.round(rng.standard_normal(shape) * 2) / 2).astype(np.float32)
  x.flat[::5] = np.nan
  values, idx = _top_k_argsort(x, k=k, axis=axis)
  moved = np.moveaxis(x, axis, -1)
  n = moved.shape[-1]
  # descending, NaN first, ties by lowest index: a stable ascending sort of the reversal
  want_idx = (n - 1 - np.flip(np.argsort(np.flip(moved, -1), axis=-1, kind="stable"), -1))[
      ..., :k].astype(np.int32)
  _same_bits(np.moveaxis(idx, axis, -1), want_idx)
  _same_bits(np.moveaxis(values, axis, -1), np.take_along_axis(moved, want_idx, -1))
