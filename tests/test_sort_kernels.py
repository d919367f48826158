"""The sort primitive's NumPy kernels (primitives/sort/sort_kernels.py) against
the general path (a stable lexsort of JAX's sort keys), bit for bit: NaNs of
both signs and several payloads, zeros of both signs, sizes on both sides of
the kernels' thresholds, every layout of rows; and the eager library programs
of unique/bincount against their op-by-op results and JAX's jaxprs."""
import warnings

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.primitives.sort import sort_kernels
from openjax._src.primitives.sort.sort import (_sort_impl, _sort_lexsort, _top_k_argsort,
                                               _top_k_impl)

_DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int16, np.uint8, np.uint16, np.int32,
           np.uint32, np.int64, np.bool_]


def _data(dt, n, rng, specials):
  v = np.round(rng.standard_normal(n) * 3)
  v[rng.random(n) < 0.2] = 0.0
  if np.dtype(dt).kind == "f" and specials:
    v[rng.random(n) < 0.1] = -0.0
    v[rng.random(n) < 0.1] = np.nan
    v[rng.random(n) < 0.05] = -np.nan
    v[rng.random(n) < 0.05] = -np.inf
  with warnings.catch_warnings(), np.errstate(all="ignore"):
    warnings.simplefilter("ignore")
    x = v.astype(dt)
  if np.dtype(dt).kind == "f" and specials and n:
    # NaNs with other payloads (and signalling ones): their input order must survive.
    bits = x.view(f"u{x.dtype.itemsize}").copy()
    bits[np.isnan(x) & (rng.random(n) < 0.3)] += 1
    x = bits.view(dt)
  return x


def _layouts(x):
  n = x.size
  yield x, 0
  yield np.resize(x, (3, n)), 1            # few long rows: restored row by row
  yield np.resize(x, (3, n)), 0            # short rows: NumPy's stable sort
  yield np.resize(x, (max(n // 50, 1), 50)), 1   # many rows: restored by masks
  yield np.resize(x, (50, max(n // 50, 1))), 0


def _same(got, want, what):
  assert len(got) == len(want), what
  for g, w in zip(got, want):
    assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes(), what


@pytest.mark.parametrize("dt", _DTYPES, ids=lambda d: np.dtype(d).name)
def test_sort_kernels_match_the_lexsort_path(dt):
  rng = np.random.default_rng(0)
  for n in (0, 1, 9, 300, 3000, 5000, 20000):
    for specials in (False, True):
      x = _data(dt, n, rng, specials)
      for shaped, axis in _layouts(x):
        values = np.arange(shaped.size, dtype=np.int32).reshape(shaped.shape)
        for ops in ((shaped,), (shaped, values), (shaped, values.astype(np.float32), shaped)):
          what = (np.dtype(dt).name, n, specials, shaped.shape, axis, len(ops))
          want = _sort_lexsort(*ops, dimension=axis, is_stable=True, num_keys=1)
          _same(_sort_impl(*ops, dimension=axis, is_stable=True, num_keys=1), want, what)
        _same([sort_kernels.sort_one(shaped, axis)],
              _sort_lexsort(shaped, dimension=axis, is_stable=True, num_keys=1), what)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.int8, np.uint8, np.int32, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_top_k_kernel_matches_the_argsort_path(dt):
  rng = np.random.default_rng(1)
  for n in (1, 9, 3000, 5000):
    x = _data(dt, n, rng, True)
    for shaped, axis in _layouts(x):
      m = shaped.shape[axis]
      for k in sorted({0, 1, m // 2, m}):
        _same(_top_k_impl(shaped, k=k, axis=axis), _top_k_argsort(shaped, k=k, axis=axis),
              (np.dtype(dt).name, shaped.shape, axis, k))


def test_large_eager_sorts_keep_zero_and_nan_order():
  # Past the kernels' thresholds, through jnp: the input order of -0.0/0.0
  # and of NaNs with different bits is kept (a plain np.sort loses it).
  x = np.zeros(6000, np.float32)
  x[::3] = -0.0
  x[1::7] = np.nan
  x[2::11] = -np.nan
  x[5::13] = 1.5
  got = np.asarray(jnp.sort(jnp.asarray(x)))
  want, = _sort_lexsort(x, dimension=0, is_stable=True, num_keys=1)
  assert got.tobytes() == want.tobytes()
  assert np.array_equal(np.asarray(jnp.argsort(jnp.asarray(x))), np.argsort(x, kind="stable"))


def _jaxpr_text(fn, *args):
  return str(jax.make_jaxpr(fn)(*args))


def test_unique_and_bincount_run_as_programs_and_stage_inline():
  x = jnp.asarray(np.array([3, 1, 2, 3, 1, 0, 5, 2, 2, 1], np.int32))
  w = jnp.asarray(np.linspace(0, 1, 10, dtype=np.float32))
  calls = [
      lambda a: jnp.unique(a, size=4, fill_value=-1),
      lambda a: jnp.unique(a, return_index=True, return_inverse=True, return_counts=True,
                           size=6),
      lambda a: jnp.unique_counts(a, size=3),
      lambda a: jnp.bincount(a, length=4),
      lambda a: jnp.bincount(a, w, length=7),
  ]
  for fn in calls:
    got = jax.tree_util.tree_leaves(fn(x))
    with jax.disable_jit():   # op by op
      want = jax.tree_util.tree_leaves(fn(x))
    for g, v in zip(got, want):
      assert g.dtype == v.dtype and g.shape == v.shape
      np.testing.assert_array_equal(g, v)
    # JAX does not jit these functions: no jit equation of theirs is staged.
    text = _jaxpr_text(fn, x)
    assert "name=unique\n" not in text and "name=_bincount_scatter" not in text
    assert "name=unique " not in text
  np.testing.assert_array_equal(jnp.bincount(x), np.bincount(np.asarray(x)))
  np.testing.assert_array_equal(jnp.unique(x), np.unique(np.asarray(x)))


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32, np.uint8],
                         ids=lambda d: np.dtype(d).name)
def test_searchsorted_binary_search_matches_co_sorting(dt):
  # Past the compare-all limit with one short operand, the scan methods
  # binary-search (JAX's algorithm); the co-sort gives the same indices.
  rng = np.random.default_rng(7)
  for n, m in ((1, 70000), (5, 20000), (4097, 50), (300, 300)):
    a = np.round(rng.standard_normal(n) * 3)
    v = np.round(rng.standard_normal(m) * 3)
    if np.dtype(dt).kind == "f":
      a[rng.random(n) < 0.1] = np.nan
      a[rng.random(n) < 0.1] = -0.0
      v[rng.random(m) < 0.1] = np.nan
      v[rng.random(m) < 0.1] = -0.0
      v[::11] = -np.inf
    with warnings.catch_warnings(), np.errstate(all="ignore"):
      warnings.simplefilter("ignore")
      a, v = np.sort(a.astype(dt)), v.astype(dt)
    for side in ("left", "right"):
      want = np.asarray(jnp.searchsorted(a, v, side=side, method="sort"))
      if np.dtype(dt).kind != "f":
        np.testing.assert_array_equal(want, np.searchsorted(a, v, side=side))
      for method in ("scan", "scan_unrolled"):
        got = np.asarray(jnp.searchsorted(a, v, side=side, method=method))
        assert got.dtype == want.dtype and np.array_equal(got, want), (n, m, side, method)
