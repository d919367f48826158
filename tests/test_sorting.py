"""Sorting, searching, counting and order statistics: errors, dtypes, the sort
order (NaN, signed zeros, stability), jit/eager agreement for the
size-dependent functions (the op table checks values)."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.lax import _convert_element_type
from openjax.errors import ConcretizationTypeError

F32 = np.float32


# ---------------------------------------------------------------- lax.sort
def test_sort_errors():
  with pytest.raises(TypeError, match="Arguments to sort must have equal shapes"):
    lax.sort((np.ones(3, F32), np.ones(4, F32)))
  with pytest.raises(ValueError, match="num_keys=3 must be between 1 and len"):
    lax.sort((np.ones(3, F32), np.ones(3, F32)), num_keys=3)
  with pytest.raises(ValueError, match="num_keys=2 must equal 1 for a single operand"):
    lax.sort(np.ones(3, F32), num_keys=2)
  with pytest.raises(TypeError, match="Sort requires at least one operand"):
    lax.sort(())
  with pytest.raises(ValueError, match="out of bounds"):
    lax.sort(np.ones(3, F32), dimension=1)


def test_sort_order_nan_and_signed_zero():
  x = np.array([np.nan, 1.0, -np.inf, 0.0, -0.0, -np.nan, np.inf], F32)
  out = np.asarray(lax.sort(x))
  np.testing.assert_array_equal(out[:5], [-np.inf, 0.0, -0.0, 1.0, np.inf])
  # -0.0 and 0.0 compare equal: the stable sort keeps their input order.
  assert not np.signbit(out[1]) and np.signbit(out[2])
  assert np.isnan(out[5:]).all()


def test_sort_tuple_returns_tuple_and_is_stable():
  keys = np.array([1, 0, 1, 0], np.int32)
  vals = np.array([10, 20, 30, 40], np.int32)
  out = lax.sort([keys, vals])
  assert isinstance(out, tuple) and len(out) == 2
  np.testing.assert_array_equal(out[1], [20, 40, 10, 30])
  k, v = lax.sort_key_val(keys, vals)
  np.testing.assert_array_equal(v, [20, 40, 10, 30])


def test_sort_keeps_weak_type_and_prints():
  w = lax.broadcast_in_dim(_convert_element_type(2.0, F32, weak_type=True), (3,), ())
  assert lax.sort(w).weak_type
  text = str(jax.make_jaxpr(lambda x: lax.sort(x, 0))(np.ones((2, 3), F32)))
  assert "sort[dimension=0 is_stable=True num_keys=1] a" in text


# ---------------------------------------------------------------- top_k
def test_top_k_values_indices_and_ties():
  x = np.array([1.0, 3.0, 3.0, np.nan, 2.0], F32)
  v, i = lax.top_k(x, 3)
  assert i.dtype == np.int32
  np.testing.assert_array_equal(i, [3, 1, 2])
  assert np.isnan(v[0]) and list(np.asarray(v[1:])) == [3.0, 3.0]


def test_top_k_errors_and_params():
  with pytest.raises(ValueError, match="k argument to top_k must be no larger than size"):
    lax.top_k(np.ones(3, F32), 4)
  with pytest.raises(ValueError, match="k argument to top_k must be nonnegative"):
    lax.top_k(np.ones(3, F32), -1)
  with pytest.raises(ValueError, match="top_k is not compatible with complex inputs"):
    lax.top_k(np.ones(3, np.complex64), 1)
  with pytest.raises(ValueError, match="out of bounds"):
    lax.top_k(np.float32(1.0), 1)
  text = str(jax.make_jaxpr(lambda x: lax.top_k(x, 2))(np.ones((2, 3), F32)))
  assert "top_k[axis=1 k=2] a" in text


# ---------------------------------------------------------------- jnp.sort
def test_jnp_sort_errors():
  x = np.ones(3, F32)
  with pytest.raises(TypeError, match="'kind' argument to sort is not supported"):
    jnp.sort(x, kind="stable")
  with pytest.raises(TypeError, match="'order' argument to argsort is not supported"):
    jnp.argsort(x, order="a")
  with pytest.raises(ValueError, match="out of bounds"):
    jnp.sort(x, axis=1)
  with pytest.raises(TypeError, match="need sequence of keys with len > 0"):
    jnp.lexsort([])
  with pytest.raises(ValueError, match="all keys need to be the same shape"):
    jnp.lexsort([np.ones(2), np.ones(3)])
  with pytest.raises(NotImplementedError, match="complex"):
    jnp.partition(np.ones(3, np.complex64), 1)


def test_argsort_descending_stable_and_dtypes():
  x = np.array([2, 1, 2, 3, 1], np.int32)
  np.testing.assert_array_equal(jnp.argsort(x, descending=True), [3, 0, 2, 1, 4])
  assert jnp.argsort(x).dtype == np.int32
  with jax.enable_x64(True):
    assert jnp.argsort(x).dtype == np.int64
    assert jnp.searchsorted(x, x).dtype == np.int32
  assert jnp.sort_complex(np.array([3, 1], np.int32)).dtype == np.complex64


def test_sort_descending_puts_nan_first():
  out = jnp.sort(np.array([1.0, np.nan, 3.0], F32), descending=True)
  assert np.isnan(out[0]) and list(np.asarray(out[1:])) == [3.0, 1.0]


# ------------------------------------------------------------ searchsorted
def test_searchsorted_errors():
  a = np.arange(4, dtype=F32)
  with pytest.raises(ValueError, match="a should be 1-dimensional"):
    jnp.searchsorted(np.ones((2, 2)), 1.0)
  with pytest.raises(ValueError, match="invalid argument side='middle'"):
    jnp.searchsorted(a, 1.0, side="middle")
  with pytest.raises(ValueError, match="invalid argument method='bisect'"):
    jnp.searchsorted(a, 1.0, method="bisect")


@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "sort", "compare_all"])
def test_searchsorted_methods_agree_under_jit(method):
  a = np.array([0.0, 1.0, 1.0, 2.0, np.nan], F32)
  v = np.array([[-1.0, 1.0], [np.nan, 5.0]], F32)
  f = lambda a, v: jnp.searchsorted(a, v, side="right", method=method)  # noqa: E731
  np.testing.assert_array_equal(f(a, v), [[0, 3], [5, 4]])
  np.testing.assert_array_equal(jax.jit(f)(a, v), f(a, v))
  assert f(a, np.float32(1.0)).shape == ()


def test_digitize_and_histogram_edges():
  np.testing.assert_array_equal(jnp.digitize(np.array([0.2, 6.4, 3.0, 1.6], F32),
                                             np.array([0.0, 1.0, 2.5, 4.0, 10.0], F32)),
                                [1, 4, 3, 2])
  with pytest.raises(ValueError, match="bins must be a 1-dimensional array"):
    jnp.digitize(np.ones(3), np.ones((2, 2)))
  assert jnp.digitize(np.ones(3, F32), np.zeros(0, F32)).dtype == np.int32
  np.testing.assert_allclose(jnp.histogram_bin_edges(np.array([0.0, 1.0], F32), bins=4),
                             [0.0, 0.25, 0.5, 0.75, 1.0])


# ------------------------------------------------------------ bincount
def test_bincount():
  x = np.array([0, 1, 1, 3], np.int32)
  np.testing.assert_array_equal(jnp.bincount(x), [1, 2, 0, 1])
  np.testing.assert_array_equal(jnp.bincount(x, minlength=6), [1, 2, 0, 1, 0, 0])
  np.testing.assert_array_equal(jnp.bincount(np.array([-1, 0], np.int32)), [2])  # clipped
  with pytest.raises(TypeError, match="must have an integer type"):
    jnp.bincount(np.ones(3, F32))
  with pytest.raises(ValueError, match="only 1-dimensional input supported"):
    jnp.bincount(np.ones((2, 2), np.int32))
  with pytest.raises(ConcretizationTypeError):
    jax.jit(jnp.bincount)(x)
  np.testing.assert_array_equal(jax.jit(lambda x: jnp.bincount(x, length=4))(x), [1, 2, 0, 1])


# ------------------------------------------------------------ unique
def test_unique_needs_size_under_jit():
  x = np.array([3, 1, 3], np.int32)
  with pytest.raises(ConcretizationTypeError, match="size argument"):
    jax.jit(jnp.unique)(x)
  f = jax.jit(lambda x: jnp.unique(x, size=4, fill_value=0, return_counts=True))
  vals, counts = f(x)
  np.testing.assert_array_equal(vals, [1, 3, 0, 0])
  np.testing.assert_array_equal(counts, [1, 2, 0, 0])


def test_unique_default_padding_and_dtypes():
  x = np.array([5, 2, 5], np.int32)
  np.testing.assert_array_equal(jnp.unique(x, size=4), [2, 5, 2, 2])
  vals, idx, inv, cnt = jnp.unique(x, return_index=True, return_inverse=True,
                                   return_counts=True)
  assert idx.dtype == inv.dtype == cnt.dtype == np.int32
  np.testing.assert_array_equal(inv, [1, 0, 1])
  res = jnp.unique_all(x)
  assert res._fields == ("values", "indices", "inverse_indices", "counts")


def test_unique_nan_and_zero_size():
  x = np.array([np.nan, 1.0, np.nan], F32)
  assert np.asarray(jnp.unique(x)).shape == (2,)
  assert np.asarray(jnp.unique(x, equal_nan=False)).shape == (3,)
  assert np.asarray(jnp.unique(np.zeros(0, F32))).shape == (0,)
  with pytest.raises(ValueError, match="fill_value must be specified"):
    jnp.unique(np.zeros(0, F32), size=2)


# ------------------------------------------------------------ statistics
def test_quantile_errors():
  x = np.ones((3, 4), F32)
  with pytest.raises(ValueError, match="method can only be"):
    jnp.quantile(x, 0.5, method="closest")
  with pytest.raises(ValueError, match="does not support complex input"):
    jnp.quantile(np.ones(3, np.complex64), 0.5)
  with pytest.raises(ValueError, match="q must be have rank <= 1"):
    jnp.quantile(x, np.ones((2, 2), F32))
  with pytest.raises(ValueError, match="does not support overwrite_input=True or out != None"):
    jnp.median(x, overwrite_input=True)
  with pytest.raises(ValueError, match="repeated axis"):
    jnp.quantile(x, 0.5, axis=(0, 0))


def test_statistics_dtypes_and_nan():
  x = np.array([[1, 2, 3, 4]], np.int32)
  assert jnp.median(x).dtype == np.float32
  assert jnp.percentile(np.ones(4, np.float16), 50).dtype == np.float16
  y = np.array([1.0, np.nan, 3.0], F32)
  assert np.isnan(jnp.median(y))
  assert float(jnp.nanmedian(y)) == 2.0
  assert jnp.quantile(y, np.array([0.1, 0.9], F32), keepdims=True).shape == (2, 1)


def test_average_errors_and_returned():
  x = np.ones((2, 3), F32)
  with pytest.raises(ValueError, match="Axis must be specified when shapes of a and weights"):
    jnp.average(x, weights=np.ones(3, F32))
  with pytest.raises(ValueError, match="Shape of weights must be consistent"):
    jnp.average(x, axis=1, weights=np.ones(2, F32))
  avg, wsum = jnp.average(x, axis=1, weights=np.array([1.0, 2.0, 3.0], F32), returned=True)
  np.testing.assert_allclose(wsum, [6.0, 6.0])
  np.testing.assert_allclose(avg, [1.0, 1.0])


# Eager-only unique (no size=): not traceable, so checked here, not in the op table.
_UNIQUE_INPUTS = {
    "int": np.array([3, 1, 2, 1, 3, 3, 0, -2, 2, 1], np.int32),
    "float2d": np.array([[0.5, 1.0, 0.5, -1.0], [2.0, 1.0, 1.0, 0.5], [0.0, 0.0, 3.0, 2.0]], F32),
    "bool": np.array([True, False, True, True]),
}


@pytest.mark.parametrize("name", sorted(_UNIQUE_INPUTS))
def test_unique_eager_matches_numpy(name):
  x = _UNIQUE_INPUTS[name]
  got = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
  want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
  for g, w in zip(got, want):
    assert isinstance(g, jax.Array)
    np.testing.assert_array_equal(g, w)
  np.testing.assert_array_equal(jnp.unique(x), np.unique(x))
  np.testing.assert_array_equal(jnp.unique_values(x), np.unique(x))
  for g, w in zip(jnp.unique_all(x), np.unique_all(x)):
    np.testing.assert_array_equal(g, w)
  for g, w in zip(jnp.unique_inverse(x), np.unique_inverse(x)):
    np.testing.assert_array_equal(g, w)
  for g, w in zip(jnp.unique_counts(x), np.unique_counts(x)):
    np.testing.assert_array_equal(g, w)


def test_unique_axis_eager():
  x = np.array([[1, 0, 1], [2, 5, 2]], F32)
  got = jnp.unique(x, axis=1, return_inverse=True, return_counts=True)
  want = np.unique(x, axis=1, return_inverse=True, return_counts=True)
  for g, w in zip(got, want):
    np.testing.assert_array_equal(g, w)
  y = np.array([[1, 2], [0, 5], [1, 2], [0, 1]], np.int32)
  np.testing.assert_array_equal(jnp.unique(y, axis=0), np.unique(y, axis=0))


def test_quantile_weights_errors():
  x = np.ones((2, 3), F32)
  with pytest.raises(NotImplementedError, match="linear doesn't support weights"):
    jnp.quantile(x, 0.5, weights=x)
  with pytest.raises(ValueError, match="Weights cannot be complex types"):
    jnp.quantile(x, 0.5, method="inverted_cdf", weights=np.ones((2, 3), np.complex64))
  with pytest.raises(ValueError, match="Weights shape must match 'a' shape when axis is None"):
    jnp.quantile(x, 0.5, method="inverted_cdf", weights=np.ones(3, F32))
  with pytest.raises(ValueError, match=r"Weights shape \(2,\) must match reduction axes \(3,\)"):
    jnp.quantile(x, 0.5, axis=1, method="inverted_cdf", weights=np.ones(2, F32))
  bad = np.array([[1.0, -1.0, 1.0], [1.0, 1.0, 1.0]], F32)
  out = jnp.quantile(np.arange(6, dtype=F32).reshape(2, 3), 0.5, axis=1,
                     method="inverted_cdf", weights=bad)
  assert np.isnan(out[0]) and float(out[1]) == 4.0


# ------------------------------------------------------------ transformations
# Expected values are JAX 0.10.2's (printed by the JAX venv), stored as data.
_X = np.array([[.5, -1., 2., .25, 1.5], [3., 1., -.5, 1., 0.]], F32)   # ties in row 1
_W = np.arange(1., 11.).reshape(2, 5).astype(F32)
_T = np.arange(10.).reshape(2, 5).astype(F32)


@pytest.mark.parametrize("name,fn,expected", [
    ("sort", lambda x: jnp.sort(x), [[3., 1., 5., 2., 4.], [10., 8., 6., 9., 7.]]),
    ("sort_axis0", lambda x: jnp.sort(x, axis=0), [[1., 2., 8., 4., 10.], [6., 7., 3., 9., 5.]]),
    ("sort_descending", lambda x: jnp.sort(x, descending=True),
     [[3., 5., 1., 4., 2.], [6., 8., 10., 7., 9.]]),
    ("partition", lambda x: jnp.partition(x, 2), [[3., 1., 4., 2., 5.], [9., 18., 6., 0., 7.]]),
])
def test_grad_of_sort_permutes_cotangents(name, fn, expected):
  np.testing.assert_array_equal(jax.grad(lambda x: (fn(x) * _W).sum())(_X), expected)


def test_grad_of_median_and_quantile():
  np.testing.assert_array_equal(jax.grad(jnp.median)(_X), [[.5, 0, 0, 0, 0], [0, .5, 0, 0, 0]])
  np.testing.assert_array_equal(
      jax.grad(lambda x: (jnp.median(x, axis=1) * jnp.array([1., 2.])).sum())(_X),
      [[1., 0, 0, 0, 0], [0, 2., 0, 0, 0]])
  np.testing.assert_array_equal(
      jax.grad(lambda x: (jnp.median(x, axis=0) * jnp.arange(1., 6.)).sum())(_X),
      [[.5, 1., 1.5, 2., 2.5]] * 2)
  np.testing.assert_allclose(jax.grad(lambda x: jnp.quantile(x, 0.3))(_X),
                             [[0, 0, 0, .70000005, 0], [0, 0, 0, 0, .29999995]], rtol=1e-6)


def test_jvp_of_sort_with_ties_follows_the_stable_permutation():
  _, t = jax.jvp(jnp.sort, (_X,), (_T,))
  np.testing.assert_array_equal(t, [[1., 3., 0., 4., 2.], [7., 9., 6., 8., 5.]])
  _, (tk, tv) = jax.jvp(lambda k, v: lax.sort_key_val(k, v), (_X, 2 * _X), (_T, -_T))
  np.testing.assert_array_equal(tk, [[1., 3., 0., 4., 2.], [7., 9., 6., 8., 5.]])
  np.testing.assert_array_equal(tv, -tk)
  # an integer operand sorted along gets no tangent work and a float0 tangent
  _, (_, ti) = jax.jvp(lambda k: lax.sort_key_val(k, np.ones((2, 5), np.int32)), (_X,),
                      (_T,))
  assert np.asarray(ti).dtype == jax.dtypes.float0


def test_jvp_and_grad_of_top_k():
  (v, i), (tv, ti) = jax.jvp(lambda x: lax.top_k(x, 2), (_X,), (_T,))
  np.testing.assert_array_equal(v, [[2., 1.5], [3., 1.]])
  np.testing.assert_array_equal(i, [[2, 4], [0, 1]])
  np.testing.assert_array_equal(tv, [[2., 4.], [5., 6.]])
  assert np.asarray(ti).dtype == jax.dtypes.float0
  g = jax.grad(lambda x: (lax.top_k(x, 3)[0] * jnp.array([1., 2., 3.])).sum())(_X)
  np.testing.assert_array_equal(g, [[3., 0., 1., 0., 2.], [1., 2., 0., 3., 0.]])


def test_top_k_jvp_jaxpr_like_jax():
  text = str(jax.make_jaxpr(lambda x, t: jax.jvp(lambda x: lax.top_k(x, 2), (x,), (t,)))(_X, _T))
  assert "top_k[axis=1 k=2]" in text
  assert "reshape[dimensions=None new_sizes=(2, 2, 1)" in text
  assert ("operand_batching_dims=(0,), start_indices_batching_dims=(0,)" in text)


def _loop(f, x, axis):
  outs = [f(np.take(x, i, axis=axis)) for i in range(x.shape[axis])]
  return jax.tree_util.tree_map(lambda *o: np.stack([np.asarray(a) for a in o]), *outs)


@pytest.mark.parametrize("in_axis", [0, -1, 1])
@pytest.mark.parametrize("name,fn", [
    ("sort_last", lambda x: jnp.sort(x)),
    ("sort_axis0", lambda x: jnp.sort(x, axis=0)),
    ("argsort_last", lambda x: jnp.argsort(x)),
    ("argsort_axis0_desc", lambda x: jnp.argsort(x, axis=0, descending=True)),
    ("top_k", lambda x: lax.top_k(x, 2)),
    ("top_k_axis0", lambda x: lax.top_k(x, 2, axis=0)),
    ("sort_key_val_unbatched_values",   # the unbatched operand is broadcast
     lambda x: lax.sort_key_val(x, jnp.arange(x.size, dtype=F32).reshape(x.shape))),
    ("median", lambda x: jnp.median(x, axis=-1)),
])
def test_vmap_of_sorting_matches_loop(name, fn, in_axis):
  x = np.round(np.random.default_rng(1).standard_normal((3, 5, 4)) * 2).astype(F32) / 2
  got = jax.vmap(fn, in_axes=in_axis)(x)
  want = _loop(fn, x, in_axis)
  for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
    np.testing.assert_array_equal(g, w)


def test_vmap_of_grad_of_sort_and_jit():
  x = np.random.default_rng(2).standard_normal((3, 6)).astype(F32)
  f = lambda v: (jnp.sort(v) * jnp.arange(6.)).sum()   # noqa: E731
  got = jax.vmap(jax.grad(f))(x)
  want = np.stack([np.asarray(jax.grad(f)(r)) for r in x])
  np.testing.assert_array_equal(got, want)
  np.testing.assert_array_equal(jax.jit(jax.vmap(jax.grad(f)))(x), want)


# ------------------------------------------------------ compiled (IREE)
# IREE's own sort costs O(n^2) per row: long rows lower to the radix sort
# (a while loop of prefix sums and scatters), short rows to stablehlo.sort
# with the index as the last key. Both must equal the stable NumPy impl bit
# for bit (NaN payloads, signed zeros, tie order).
def _iree(fn, *args):
  with jax.config.override("openjax_executor", "iree"):
    return jax.jit(fn)(*args)


def _assert_same_bits(got, want):
  for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
    g, w = np.ascontiguousarray(g), np.ascontiguousarray(w)
    assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
    np.testing.assert_array_equal(g.view(np.uint8), w.view(np.uint8))


def _ties_and_nans(rng, shape):
  x = (np.round(rng.standard_normal(shape) * 2) / 2).astype(F32)
  flat = x.reshape(-1)
  flat[::7] = np.nan
  flat[3::11] = -0.0
  flat[5::13] = np.inf
  flat[6::17] = -np.inf
  flat[9::19] = -np.nan
  return x


def _complex(re, im, dtype):
  out = np.empty(re.shape, dtype)
  out.real, out.imag = re, im
  return out


@pytest.mark.parametrize("fn,marker", [
    (lax.sort, "stablehlo.while"), (jnp.argsort, "stablehlo.while"),
    (lambda x: lax.sort_key_val(x, x), "stablehlo.while"),
    (lambda x: lax.top_k(x, 100), "stablehlo.while"),
    # a small k selects the top elements by k min-reductions instead
    (lambda x: lax.top_k(x, 5), "stablehlo.reduce"),
])
def test_long_sort_lowers_without_stablehlo_sort(fn, marker):
  long_text = jax.jit(fn).lower(np.zeros((5000,), F32)).as_text()
  assert "stablehlo.sort" not in long_text and marker in long_text
  assert "stablehlo.sort" in jax.jit(fn).lower(np.zeros((160,), F32)).as_text()


def test_compiled_long_sorts_match_eager():
  rng = np.random.default_rng(0)
  x = _ties_and_nans(rng, (5000,))
  x2 = _ties_and_nans(rng, (700, 3))
  keys = rng.integers(0, 4, (5000,)).astype(np.int32)
  x3 = _ties_and_nans(rng, (3, 9000))

  def f(x, x2, keys, x3):
    return {"sort": lax.sort(x), "argsort": jnp.argsort(x),
            "argsort_desc": jnp.argsort(x, descending=True),
            "top_k": lax.top_k(x, 50), "top_k_all": lax.top_k(x2, 700, axis=0),
            "top_k_select": lax.top_k(x, 7), "top_k_select_dim0": lax.top_k(x2, 3, axis=0),
            # long rows: the k best 1024-chunks first
            "top_k_chunks": lax.top_k(x, 1), "top_k_chunks_rows": lax.top_k(x3, 2),
            "sort_dim0": lax.sort(x2, dimension=0), "argsort_dim0": jnp.argsort(x2, axis=0),
            "two_keys": lax.sort((keys, x, jnp.arange(5000)), num_keys=2),
            "key_val": lax.sort_key_val(x, keys)}

  _assert_same_bits(_iree(f, x, x2, keys, x3), f(x, x2, keys, x3))


def test_compiled_sorts_of_every_dtype_match_eager():
  rng = np.random.default_rng(1)
  samples = {
      "int8": rng.integers(-128, 128, (2, 900)).astype(np.int8),
      "uint8": rng.integers(0, 256, (2, 900)).astype(np.uint8),
      "int32": np.r_[np.iinfo(np.int32).max, np.iinfo(np.int32).min,
                     rng.integers(-5, 5, 898)].astype(np.int32),
      "uint32": np.r_[2 ** 32 - 1, 2 ** 31, 0, rng.integers(0, 2 ** 32, 897)].astype(np.uint32),
      "bool": rng.random(900) < 0.5,
      "float16": _ties_and_nans(rng, (900,)).astype(np.float16),
      "bfloat16": _ties_and_nans(rng, (900,)).astype(jnp.bfloat16),
      "complex64": _complex(_ties_and_nans(rng, (900,)), _ties_and_nans(rng, (900,)),
                            np.complex64),
  }

  def f(xs):
    out = {}
    for name, x in xs.items():
      out[name] = (lax.sort(x), jnp.argsort(x[..., :40]))   # radix and comparator
      if name != "complex64":
        out[name + "_top_k"] = lax.top_k(x, 3)
    return out

  _assert_same_bits(_iree(f, samples), f(samples))


def test_compiled_sorts_x64_match_eager():
  rng = np.random.default_rng(2)
  with jax.enable_x64():
    i64 = np.r_[2 ** 63 - 1, -2 ** 63, 0, -1, rng.integers(-2 ** 62, 2 ** 62, 996)]
    samples = {"float64": _ties_and_nans(rng, (1000,)).astype(np.float64), "int64": i64,
               "uint64": i64.astype(np.uint64),
               "complex128": _complex(_ties_and_nans(rng, (1000,)),
                                      _ties_and_nans(rng, (1000,)), np.complex128)}

    def f(xs):
      rows = xs["float64"][:960].reshape(15, 64)
      c = xs["complex128"][:256].reshape(2, 128)
      return {name: (lax.sort(x), jnp.argsort(x[:30])) for name, x in xs.items()} | {
          "top_k": lax.top_k(xs["float64"], 9),
          # several keys: IREE's comparator sort would overflow its stack
          "two_keys_many_rows": lax.sort((rows, rows[::-1]), num_keys=2),
          # one operand as several keys (IREE fails on the repeated key)
          "repeated_complex_key": lax.sort((c, c, c), num_keys=3)}

    _assert_same_bits(_iree(f, samples), f(samples))
