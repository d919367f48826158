"""Op-table rows: the sort/top_k primitives and jnp sorting, searching,
counting and order statistics."""
import numpy as np

import openjax.numpy as jnp
from openjax import lax
from tests.ops.harness import OpRow

F32, F16, I32, U8, BOOL = (np.dtype(t) for t in (np.float32, np.float16, np.int32, np.uint8,
                                                 np.bool_))


def _sample(dtype, shape=(3, 5), nan=False, ties=True):
  def make(rng):
    if dtype == BOOL:
      return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
      lo = 0 if np.issubdtype(dtype, np.unsignedinteger) else -3
      return rng.integers(lo, 4, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if ties:  # repeated values exercise stability
      x = np.round(x * 2) / 2
    x = x.astype(dtype)
    if nan:
      x.flat[0] = np.nan
      x.flat[-3] = np.nan
    return x
  return make


def _one(dtype, shape=(3, 5), nan=False, ties=True):
  make = _sample(dtype, shape, nan, ties)
  return lambda rng: (make(rng),)


def _np_top_k(x, k, axis=-1):
  # JAX's reference: descending, NaN first, ties in index order.
  axis = axis % x.ndim
  rev = np.flip(x, axis)
  idx = (x.shape[axis] - 1 - np.flip(np.argsort(rev, axis=axis, kind="stable"), axis))
  idx = np.take(idx, np.arange(k), axis=axis).astype(np.int32)
  return np.take_along_axis(x, idx, axis=axis), idx


ROWS = []


def _add(name, fn, args, ref, **kw):
  ROWS.append(OpRow(name, fn, args, ref, **kw))


# ------------------------------------------------------------- primitives
for dt in (F32, I32, BOOL, F16):
  n = dt.name
  nan = dt in (F32, F16)
  _add(f"lax.sort_{n}", lambda x: lax.sort(x), _one(dt, nan=nan),
       lambda x: np.sort(x, axis=-1, kind="stable"))
  _add(f"lax.sort_dim0_{n}", lambda x: lax.sort(x, dimension=0), _one(dt, nan=nan),
       lambda x: np.sort(x, axis=0, kind="stable"))
  _add(f"lax.sort_key_val_{n}", lambda k, v: lax.sort_key_val(k, v),
       lambda rng, dt=dt, nan=nan: (_sample(dt, nan=nan)(rng),
                                    rng.integers(0, 100, (3, 5)).astype(np.int32)),
       lambda k, v: (np.sort(k, axis=-1, kind="stable"),
                     np.take_along_axis(v, np.argsort(k, axis=-1, kind="stable"), -1)))
  if dt != BOOL:
    _add(f"lax.top_k_{n}", lambda x: lax.top_k(x, 3), _one(dt, nan=nan),
         lambda x: _np_top_k(x, 3))
    _add(f"lax.top_k_axis0_{n}", lambda x: lax.top_k(x, 2, axis=0), _one(dt, nan=nan),
         lambda x: _np_top_k(x, 2, axis=0))
_add("lax.sort_multi_num_keys2", lambda a, b, c: lax.sort((a, b, c), num_keys=2),
     lambda rng: (rng.integers(0, 3, (2, 6)).astype(np.int32),
                  rng.integers(0, 3, (2, 6)).astype(np.float32),
                  np.arange(12, dtype=np.int32).reshape(2, 6)),
     lambda a, b, c: tuple(np.take_along_axis(o, np.lexsort((b, a), axis=-1), -1)
                           for o in (a, b, c)))
_add("lax.sort_signed_zero_stable", lambda x: lax.sort_key_val(x, np.arange(4, dtype=np.int32)),
     lambda rng: (np.array([0.0, -0.0, 0.0, -1.0], np.float32),),
     lambda x: (np.array([-1.0, 0.0, -0.0, 0.0], np.float32), np.array([3, 0, 1, 2], np.int32)))
_add("lax.sort_complex", lambda x: lax.sort(x),
     lambda rng: (np.array([1 + 2j, 1 + 1j, np.nan + 0j, 0 + 5j, 1 + np.nan * 1j],
                           np.complex64),),
     lambda x: np.sort(x))
_add("lax.top_k_k0", lambda x: lax.top_k(x, 0), _one(F32), lambda x: _np_top_k(x, 0))


# ------------------------------------------------------------------- sort
for dt in (F32, I32, BOOL, F16):
  n = dt.name
  nan = dt in (F32, F16)
  for aname, axis in (("none", None), ("0", 0), ("neg1", -1)):
    _add(f"jnp.sort_{n}_axis{aname}", lambda x, a=axis: jnp.sort(x, axis=a),
         _one(dt, nan=nan), lambda x, a=axis: np.sort(x, axis=a))
    _add(f"jnp.argsort_{n}_axis{aname}", lambda x, a=axis: jnp.argsort(x, axis=a),
         _one(dt, nan=nan), lambda x, a=axis: np.argsort(x, axis=a, kind="stable"))
  _add(f"jnp.sort_{n}_descending", lambda x: jnp.sort(x, descending=True), _one(dt, nan=nan),
       lambda x: np.flip(np.sort(x, axis=-1), -1))
  _add(f"jnp.argsort_{n}_descending", lambda x: jnp.argsort(x, axis=0, descending=True),
       _one(dt, nan=nan),
       lambda x: np.flip(x.shape[0] - 1 - np.argsort(np.flip(x, 0), axis=0, kind="stable"), 0))
  _add(f"jnp.sort_{n}_unstable", lambda x: jnp.sort(x, stable=False), _one(dt),
       lambda x: np.sort(x))
_add("jnp.sort_method", lambda x: jnp.asarray(x).sort(axis=0), _one(F32),
     lambda x: np.sort(x, axis=0))
_add("jnp.argsort_method", lambda x: jnp.asarray(x).argsort(), _one(F32),
     lambda x: np.argsort(x, kind="stable"))
_add("jnp.argsort_dtype", lambda x: jnp.argsort(x, dtype=jnp.int16), _one(F32),
     lambda x: np.argsort(x, kind="stable").astype(np.int16))
_add("jnp.lexsort", lambda a, b: jnp.lexsort((a, b)),
     lambda rng: (rng.integers(0, 3, (8,)).astype(np.int32),
                  rng.integers(0, 2, (8,)).astype(np.float32)),
     lambda a, b: np.lexsort((a, b)))
_add("jnp.lexsort_2d_axis0", lambda a, b: jnp.lexsort([a, b], axis=0),
     lambda rng: (rng.integers(0, 3, (6, 2)).astype(np.int32),
                  rng.integers(0, 2, (6, 2)).astype(np.int32)),
     lambda a, b: np.lexsort((a, b), axis=0))
_add("jnp.sort_complex", lambda x: jnp.sort_complex(x), _one(F32, (6,)),
     lambda x: np.sort_complex(x).astype(np.complex64))
_add("jnp.sort_complex_int", lambda x: jnp.sort_complex(x), _one(I32, (6,)),
     lambda x: np.sort_complex(x).astype(np.complex64))


def _np_partition(x, kth, axis=-1):
  # JAX's partition: the kth+1 smallest ascending, then the rest descending.
  s = np.sort(x, axis=axis)
  n = x.shape[axis]
  bottom = np.take(s, np.arange(kth + 1), axis=axis)
  top = np.flip(np.take(s, np.arange(kth + 1, n), axis=axis), axis)
  return np.concatenate([bottom, top], axis=axis)


def _np_argpartition(x, kth, axis=-1):
  x = np.moveaxis(x, axis, -1)
  order = np.argsort(x, axis=-1, kind="stable")
  bottom = order[..., :kth + 1]
  rest = np.sort(order[..., kth + 1:], axis=-1)
  return np.moveaxis(np.concatenate([bottom, rest], -1), -1, axis)


for dt in (F32, I32, U8):
  _add(f"jnp.partition_{dt.name}", lambda x: jnp.partition(x, 2), _one(dt, ties=False),
       lambda x: _np_partition(x, 2), grad=dt == F32)
  _add(f"jnp.partition_{dt.name}_axis0_negkth", lambda x: jnp.partition(x, -1, axis=0),
       _one(dt, ties=False), lambda x: _np_partition(x, 2, axis=0), grad=dt == F32)
  _add(f"jnp.argpartition_{dt.name}", lambda x: jnp.argpartition(x, 1), _one(dt, ties=False),
       lambda x: _np_argpartition(x, 1))
_add("jnp.argpartition_axis0", lambda x: jnp.argpartition(x, 0, axis=0), _one(F32, ties=False),
     lambda x: _np_argpartition(x, 0, axis=0))
_add("jnp.argpartition_method", lambda x: jnp.asarray(x).argpartition(3), _one(F32, ties=False),
     lambda x: _np_argpartition(x, 3))


# ---------------------------------------------------------- searchsorted
def _sorted_and_queries(dt, n=7, m=(2, 3), nan=False):
  def make(rng):
    a = np.sort(_sample(dt, (n,))(rng))
    v = _sample(dt, m)(rng)
    if nan:
      a[-1] = np.nan
      v.flat[0] = np.nan
    return a, v
  return make


for dt in (F32, I32, F16):
  for side in ("left", "right"):
    for method in ("scan", "scan_unrolled", "sort", "compare_all"):
      _add(f"jnp.searchsorted_{dt.name}_{side}_{method}",
           lambda a, v, s=side, m=method: jnp.searchsorted(a, v, side=s, method=m),
           _sorted_and_queries(dt, nan=dt != I32),
           lambda a, v, s=side: np.searchsorted(a, v, side=s).astype(np.int32))
_add("jnp.searchsorted_sorter", lambda a, v, s: jnp.searchsorted(a, v, sorter=s),
     lambda rng: (np.array([3.0, 1.0, 2.0, 5.0], np.float32),
                  np.array([0.5, 2.0, 4.0, 6.0], np.float32), np.array([1, 2, 0, 3])),
     lambda a, v, s: np.searchsorted(a, v, sorter=s).astype(np.int32))
_add("jnp.searchsorted_method_form", lambda a, v: jnp.asarray(a).searchsorted(v, side="right"),
     _sorted_and_queries(F32), lambda a, v: np.searchsorted(a, v, side="right").astype(np.int32))
_add("jnp.searchsorted_mixed_dtypes", lambda a, v: jnp.searchsorted(a, v),
     lambda rng: (np.array([0, 2, 4], np.int32), np.array([1.5, 2.0, -1.0], np.float32)),
     lambda a, v: np.searchsorted(a, v).astype(np.int32))
_add("jnp.searchsorted_large_sort_path", lambda a, v: jnp.searchsorted(a, v, side="right"),
     lambda rng: (np.sort(rng.integers(0, 50, 300)).astype(np.int32),
                  rng.integers(-5, 55, 400).astype(np.int32)),
     lambda a, v: np.searchsorted(a, v, side="right").astype(np.int32))
for right in (False, True):
  _add(f"jnp.digitize_increasing_right{right}", lambda x, b, r=right: jnp.digitize(x, b, r),
       lambda rng: (np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 4.0], np.float32),
                    np.array([0.0, 1.0, 2.5, 3.0], np.float32)),
       lambda x, b, r=right: np.digitize(x, b, r).astype(np.int32))
  _add(f"jnp.digitize_decreasing_right{right}", lambda x, b, r=right: jnp.digitize(x, b, r),
       lambda rng: (np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 3.0, 4.0], np.float32),
                    np.array([3.0, 2.5, 1.0, 0.0], np.float32)),
       lambda x, b, r=right: np.digitize(x, b, r).astype(np.int32))


# ----------------------------------------------------- bincount / histogram
_add("jnp.bincount", lambda x: jnp.bincount(x, length=6),
     lambda rng: (rng.integers(0, 5, 10).astype(np.int32),),
     lambda x: np.bincount(x, minlength=6), jit=True)
_add("jnp.bincount_weights", lambda x, w: jnp.bincount(x, w, length=5),
     lambda rng: (rng.integers(0, 5, 10).astype(np.int32),
                  rng.standard_normal(10).astype(np.float32)),
     lambda x, w: np.bincount(x, w, minlength=5).astype(np.float32), grad=True)
_add("jnp.bincount_length_drops", lambda x: jnp.bincount(x, length=3),
     lambda rng: (np.array([0, 1, 4, 2, 2], np.int32),),
     lambda x: np.bincount(x, minlength=3)[:3])
_add("jnp.bincount_bool", lambda x: jnp.bincount(x, length=2),
     lambda rng: (np.array([True, False, True]),), lambda x: np.bincount(x))
_add("jnp.histogram", lambda x: jnp.histogram(x, bins=4),
     lambda rng: (rng.standard_normal(20).astype(np.float32),),
     lambda x: tuple(np.asarray(r, np.float32) for r in np.histogram(x, bins=4)), atol=1e-5)
_add("jnp.histogram_range_weights_density",
     lambda x, w: jnp.histogram(x, bins=5, range=(-2.0, 2.0), weights=w, density=True),
     lambda rng: (rng.standard_normal(20).astype(np.float32),
                  rng.random(20).astype(np.float32)),
     lambda x, w: tuple(np.asarray(r, np.float32) for r in np.histogram(
         x, bins=5, range=(-2.0, 2.0), weights=w, density=True)), atol=1e-5)
_add("jnp.histogram_edges", lambda x, b: jnp.histogram(x, bins=b),
     lambda rng: (rng.random(10).astype(np.float32), np.array([0.0, 0.3, 0.5, 1.0], np.float32)),
     lambda x, b: tuple(np.asarray(r, np.float32) for r in np.histogram(x, bins=b)))


# --------------------------------------------------------------- unique
def _dups(dt, shape=(10,)):
  return lambda rng: (_sample(dt, shape)(rng),)


_add("jnp.unique_size_fill", lambda x: jnp.unique(x, size=8, fill_value=-9), _dups(I32),
     lambda x: np.concatenate([np.unique(x), np.full(8 - len(np.unique(x)), -9)]))
_add("jnp.unique_size_returns",
     lambda x: jnp.unique(x, size=3, return_index=True, return_inverse=True,
                          return_counts=True),
     lambda rng: (np.array([2, 0, 2, 1, 0, 2], np.int32),),
     lambda x: np.unique(x, return_index=True, return_inverse=True, return_counts=True),
     check_dtype=False)
_add("jnp.unique_size_axis0", lambda x: jnp.unique(x, axis=0, size=3),
     lambda rng: (np.array([[1, 2], [0, 5], [1, 2], [0, 1]], np.int32),),
     lambda x: np.unique(x, axis=0))
_add("jnp.unique_values_size", lambda x: jnp.unique_values(x, size=2),
     lambda rng: (np.array([1.0, np.nan, 1.0], np.float32),),
     lambda x: np.unique(x, equal_nan=False)[:2])


def _np_unique_counts_padded(x, size, fill_value):
  values, counts = np.unique(x, return_counts=True, equal_nan=False)
  k = min(len(values), size)
  padded_values, padded_counts = np.full(size, fill_value, x.dtype), np.zeros(size, np.int32)
  padded_values[:k], padded_counts[:k] = values[:k], counts[:k]
  return padded_values, padded_counts


_add("jnp.unique_counts_size", lambda x: tuple(jnp.unique_counts(x, size=3, fill_value=0)),
     lambda rng: (np.array([True, True, False]),),
     lambda x: _np_unique_counts_padded(x, 3, 0))


# ------------------------------------------------------- order statistics
def _np_nearest(nf, x, q, scale):
  # JAX's 'nearest' rounds an exact half down (NumPy rounds half to even).
  lo = nf(x, q, axis=1, method="lower")
  hi = nf(x, q, axis=1, method="higher")
  n = (~np.isnan(x)).sum(axis=1) if nf in (np.nanquantile, np.nanpercentile) else x.shape[1]
  pos = (q / scale)[:, None].astype(np.float32) * (np.asarray(n, np.float32) - 1)
  return np.where(pos - np.floor(pos) <= 0.5, lo, hi).astype(np.float32)


_QFUNCS = {"quantile": (jnp.quantile, np.quantile), "nanquantile": (jnp.nanquantile,
                                                                   np.nanquantile),
           "percentile": (jnp.percentile, np.percentile),
           "nanpercentile": (jnp.nanpercentile, np.nanpercentile)}
for fname, (jf, nf) in _QFUNCS.items():
  scale = 100.0 if "percentile" in fname else 1.0
  nan = fname.startswith("nan")
  for method in ("linear", "lower", "higher", "midpoint", "nearest"):
    _add(f"jnp.{fname}_{method}", lambda x, q, jf=jf, m=method: jf(x, q, axis=1, method=m),
         lambda rng, s=scale, nan=nan: (_sample(F32, (3, 6), nan=nan, ties=False)(rng),
                                        np.array([0.0, 0.3, 0.5, 0.9, 1.0], np.float32) * s),
         (lambda x, q, nf=nf, m=method: nf(x, q, axis=1, method=m).astype(np.float32))
         if method != "nearest" else
         (lambda x, q, nf=nf, s=scale: _np_nearest(nf, x, q, s)))
  for aname, axis in (("none", None), ("0", 0), ("tuple", (0, 2)), ("neg", -1)):
    for keepdims in (False, True):
      _add(f"jnp.{fname}_axis{aname}{'_keepdims' if keepdims else ''}",
           lambda x, jf=jf, a=axis, k=keepdims, s=scale: jf(x, 0.4 * s, axis=a, keepdims=k),
           _one(F32, (2, 3, 4), nan=nan, ties=False),
           lambda x, nf=nf, a=axis, k=keepdims, s=scale: np.asarray(
               nf(x, 0.4 * s, axis=a, keepdims=k), np.float32))
  _add(f"jnp.{fname}_int_input", lambda x, jf=jf, s=scale: jf(x, 0.5 * s, axis=0),
       _one(I32, (4, 3)), lambda x, nf=nf, s=scale: nf(x, 0.5 * s, axis=0).astype(np.float32))
  _add(f"jnp.{fname}_f16", lambda x, jf=jf, s=scale: jf(x, 0.25 * s, axis=1),
       _one(F16, (2, 5), nan=nan), lambda x, nf=nf, s=scale: nf(x, 0.25 * s, axis=1))
_add("jnp.quantile_nan_slice", lambda x: jnp.quantile(x, 0.5, axis=1), _one(F32, nan=True),
     lambda x: np.quantile(x, 0.5, axis=1))
_add("jnp.nanquantile_all_nan_slice", lambda x: jnp.nanquantile(x, 0.5, axis=0),
     lambda rng: (np.array([[np.nan, 1.0], [np.nan, 3.0]], np.float32),),
     lambda x: np.nanquantile(x, 0.5, axis=0).astype(np.float32))
_add("jnp.quantile_q_matrix_axis_keepdims", lambda x, q: jnp.quantile(x, q, axis=(1,),
                                                                       keepdims=True),
     lambda rng: (rng.standard_normal((3, 4)).astype(np.float32),
                  np.array([0.1, 0.7], np.float32)),
     lambda x, q: np.quantile(x, q, axis=(1,), keepdims=True).astype(np.float32))
for fname, (jf, nf) in (("median", (jnp.median, np.median)),
                        ("nanmedian", (jnp.nanmedian, np.nanmedian))):
  nan = fname == "nanmedian"
  for aname, axis in (("none", None), ("0", 0), ("neg1", -1), ("tuple", (0, 1))):
    _add(f"jnp.{fname}_axis{aname}", lambda x, jf=jf, a=axis: jf(x, axis=a),
         _one(F32, (4, 5), nan=nan), lambda x, nf=nf, a=axis: nf(x, axis=a))
  _add(f"jnp.{fname}_keepdims", lambda x, jf=jf: jf(x, axis=1, keepdims=True),
       _one(F32, (4, 5), nan=nan), lambda x, nf=nf: nf(x, axis=1, keepdims=True))
  _add(f"jnp.{fname}_int", lambda x, jf=jf: jf(x, axis=0), _one(I32, (4, 3)),
       lambda x, nf=nf: nf(x, axis=0).astype(np.float32))
  _add(f"jnp.{fname}_bool", lambda x, jf=jf: jf(x), _one(BOOL, (5,)),
       lambda x, nf=nf: np.float32(nf(x.astype(np.float32))))

_add("jnp.average", lambda x: jnp.average(x), _one(F32), lambda x: np.average(x), grad=True)
_add("jnp.average_axis_int", lambda x: jnp.average(x, axis=1), _one(I32),
     lambda x: np.average(x, axis=1).astype(np.float32))
_add("jnp.average_weights_full", lambda x, w: jnp.average(x, axis=0, weights=w),
     lambda rng: (rng.standard_normal((3, 4)).astype(np.float32),
                  rng.random((3, 4)).astype(np.float32)),
     lambda x, w: np.average(x, axis=0, weights=w), grad=True)
_add("jnp.average_weights_1d_returned", lambda x, w: jnp.average(x, axis=1, weights=w,
                                                                 returned=True),
     lambda rng: (rng.standard_normal((3, 4)).astype(np.float32),
                  rng.random(4).astype(np.float32)),
     lambda x, w: np.average(x, axis=1, weights=w, returned=True), grad=True)
_add("jnp.average_weights_tuple_axis_keepdims",
     lambda x, w: jnp.average(x, axis=(2, 0), weights=w, keepdims=True),
     lambda rng: (rng.standard_normal((2, 3, 4)).astype(np.float32),
                  rng.random((4, 2)).astype(np.float32)),
     lambda x, w: np.average(x, axis=(2, 0), weights=w, keepdims=True), atol=1e-5, grad=True)
_add("jnp.average_returned_no_weights", lambda x: jnp.average(x, axis=0, returned=True),
     _one(F32), lambda x: tuple(np.asarray(r, np.float32) for r in np.average(
         x, axis=0, returned=True)), grad=True)
_add("jnp.average_f16_weights_int", lambda x, w: jnp.average(x, weights=w),
     lambda rng: (rng.standard_normal(6).astype(np.float16), np.arange(1, 7, dtype=np.int32)),
     lambda x, w: np.average(x.astype(np.float32), weights=w).astype(np.float16))


# inverted_cdf, with and without weights
def _weighted(rng, nan=False):
  x = rng.standard_normal((3, 5)).astype(np.float32)
  if nan:
    x[1, 2] = np.nan
  return x, rng.random((3, 5)).astype(np.float32)


for fname, (jf, nf) in _QFUNCS.items():
  scale = 100.0 if "percentile" in fname else 1.0
  nan = fname.startswith("nan")
  q = np.array([0.1, 0.5, 0.8], np.float32) * scale
  _add(f"jnp.{fname}_inverted_cdf_weights", lambda x, w, jf=jf, q=q: jf(
      x, q, axis=1, method="inverted_cdf", weights=w),
       lambda rng, nan=nan: _weighted(rng, nan),
       lambda x, w, nf=nf, q=q: nf(x, q, axis=1, method="inverted_cdf", weights=w))
  _add(f"jnp.{fname}_inverted_cdf_none_keepdims", lambda x, jf=jf, s=scale: jf(
      x, 0.3 * s, method="inverted_cdf", keepdims=True),
       lambda rng, nan=nan: _weighted(rng, nan)[:1],
       lambda x, nf=nf, s=scale: nf(x, 0.3 * s, method="inverted_cdf", keepdims=True))
_add("jnp.quantile_inverted_cdf_weights_1d_axis0",
     lambda x, w: jnp.quantile(x, 0.6, axis=0, method="inverted_cdf", weights=w),
     lambda rng: (rng.standard_normal((4, 2)).astype(np.float32),
                  rng.random(4).astype(np.float32)),
     lambda x, w: np.quantile(x, 0.6, axis=0, method="inverted_cdf",
                              weights=np.broadcast_to(w[:, None], x.shape)))


# ------------------------------------------------------- differentiable rows
# Distinct values (no ties, no NaN), so the sort permutation is locally
# constant and finite differences see the same order.
def _distinct(shape=(3, 5)):
  return _one(F32, shape, ties=False)


def _distinct_pair(rng):
  return _sample(F32, ties=False)(rng), _sample(F32, ties=False)(rng)


_add("lax.sort_float32_grad", lambda x: lax.sort(x), _distinct(),
     lambda x: np.sort(x, axis=-1), grad=True)
_add("lax.sort_dim0_float32_grad", lambda x: lax.sort(x, dimension=0), _distinct((4, 3)),
     lambda x: np.sort(x, axis=0), grad=True)
_add("lax.sort_3d_dim1_grad", lambda x: lax.sort(x, dimension=1), _distinct((2, 4, 3)),
     lambda x: np.sort(x, axis=1), grad=True)
_add("lax.sort_key_val_float32_grad", lambda k, v: lax.sort_key_val(k, v), _distinct_pair,
     lambda k, v: (np.sort(k, axis=-1),
                   np.take_along_axis(v, np.argsort(k, axis=-1), -1)), grad=True)
_add("lax.sort_two_keys_grad", lambda a, b: lax.sort((a, b), num_keys=2), _distinct_pair,
     lambda a, b: tuple(np.take_along_axis(o, np.argsort(a, axis=-1), -1) for o in (a, b)),
     grad=True)
_add("lax.top_k_values_grad", lambda x: lax.top_k(x, 3)[0], _distinct(),
     lambda x: _np_top_k(x, 3)[0], grad=True)
_add("lax.top_k_axis0_values_grad", lambda x: lax.top_k(x, 2, axis=0)[0], _distinct((4, 3)),
     lambda x: _np_top_k(x, 2, axis=0)[0], grad=True)
for aname, axis in (("none", None), ("0", 0), ("neg1", -1)):
  _add(f"jnp.sort_grad_axis{aname}", lambda x, a=axis: jnp.sort(x, axis=a), _distinct(),
       lambda x, a=axis: np.sort(x, axis=a), grad=True)
  _add(f"jnp.median_grad_axis{aname}", lambda x, a=axis: jnp.median(x, axis=a),
       _distinct((4, 5)), lambda x, a=axis: np.median(x, axis=a), grad=True)
_add("jnp.sort_grad_descending", lambda x: jnp.sort(x, axis=0, descending=True), _distinct(),
     lambda x: np.flip(np.sort(x, axis=0), 0), grad=True)
_add("jnp.median_grad_odd_keepdims", lambda x: jnp.median(x, axis=1, keepdims=True),
     _distinct((2, 5)), lambda x: np.median(x, axis=1, keepdims=True), grad=True)
_add("jnp.nanmedian_grad", lambda x: jnp.nanmedian(x, axis=1), _one(F32, (3, 6), nan=True,
                                                                   ties=False),
     lambda x: np.nanmedian(x, axis=1), grad=True)
for method in ("linear", "lower", "higher", "midpoint", "nearest"):
  _add(f"jnp.quantile_grad_{method}",
       # q as a default-float array: float64 in the x64 gradient columns
       lambda x, m=method: jnp.quantile(x, jnp.array([0.1, 0.35, 0.8]), axis=1, method=m),
       _distinct((3, 6)),
       lambda x, m=method: np.quantile(x, np.array([0.1, 0.35, 0.8]), axis=1,
                                       method=m).astype(np.float32), grad=True)
_add("jnp.percentile_grad_axis_none", lambda x: jnp.percentile(x, 40.0), _distinct(),
     lambda x: np.float32(np.percentile(x, 40.0)), grad=True)
_add("jnp.nanquantile_grad", lambda x: jnp.nanquantile(x, 0.3, axis=0),
     _one(F32, (6, 3), nan=True, ties=False),
     lambda x: np.nanquantile(x, 0.3, axis=0).astype(np.float32), grad=True)
