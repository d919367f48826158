"""NumPy kernels of the ``sort`` primitive for keys of NumPy's own dtypes.

They give the results of the impl's general path (a stable ``np.lexsort`` of
JAX's sort keys) bit for bit, by faster NumPy calls:

- one operand: equal integers and bools are identical bits, so NumPy's
  quicksort (radix for one- and two-byte integers from ``_RADIX_FROM``
  elements) gives the stable result. Floats: small arrays and short rows take
  NumPy's stable sort; larger ones its SIMD quicksort, after which the runs
  that compare equal with different bits (-0.0/0.0, NaNs) are put back in
  input order. That sort also rewrites NaN bits and can duplicate a zero's
  sign through its min/max steps, so NaN runs are always rewritten and zero
  runs whenever both signs occur (arrays with neither pay ~4 O(n) passes).
- several operands, one key (``sort_key_val``, ``argsort``): a stable
  argsort. ``np.argsort(kind="stable")`` is a timsort (~15x NumPy's quicksort
  on 1e6 floats); keys of up to 32 bits instead become one uint64 per element,
  the key's order-preserving bits above its index, whose plain sort is stable
  (keys of up to 16 bits take NumPy's radix argsort).
- ``top_k``: the same packing with the key bits inverted, a partition and a
  sort of the first k.
"""
from __future__ import annotations

import functools

import numpy as np

from openjax._src.core import fused_steps

__all__ = ["is_numpy_key", "other_axes_index", "sort_one", "stable_argsort", "stable_argsort_keys", "take_sorted",
           "top_k"]

# Below these many elements NumPy's stable sort (argsort) costs less than the
# ~15 NumPy calls of the alternatives (measured on float32 with NaNs and zeros
# of both signs: the crossovers are near 500 (one row), 800 (several) and 2.5e3; NumPy's
# stable float sort costs ~10x its quicksort from ~2e3 elements on).
_SMALL_SORT_1D, _SMALL_SORT = 512, 768
_SMALL_ARGSORT = 2048
# From this many elements several keys of up to 32 bits sort key by key
# (stable_argsort_keys); below, np.lexsort (the impl's general path).
SEVERAL_KEYS_FROM = 2048
# From this many 1-d integer keys a permutation of 0..n-1 is looked for first
# (its inverse costs ~5 NumPy calls; a stable argsort of 1e3 int32 ~10 us).
_PERMUTATION_FROM = 256
# From this many elements one- and two-byte integers sort by radix.
_RADIX_FROM = 4096
# From this many elements the runs are checked before being restored.
_CHECK_RUNS_FROM = 16384
# Rows this short sort stably (an insertion sort) faster than unstably + restoring runs.
_SHORT_ROW = 64
# The uint32 half of a packed uint64 that holds the index (little-endian: the low word first).
_INDEX_WORD = 0 if np.little_endian else 1


_FLOAT_DTYPES = tuple(np.dtype(t) for t in (np.float16, np.float32, np.float64))
_UINT_OF = {dt: np.dtype(f"u{dt.itemsize}") for dt in _FLOAT_DTYPES}
_NEGATIVE_ZERO_BITS = {dt: np.array(-0.0, dt).view(_UINT_OF[dt])[()] for dt in _FLOAT_DTYPES}
_ZERO = {dt: dt.type(0) for dt in _FLOAT_DTYPES}


def _axis_last(x: np.ndarray, axis: int) -> np.ndarray:
  """``x`` with ``axis`` swapped with the last (its own inverse; a view).
  Kernels only need some order of the other axes, the same for every array:
  ``np.moveaxis`` costs ~5 us a call in argument handling."""
  last = x.ndim - 1
  return x if axis == last else x.swapaxes(axis, last)


# The same dtypes by type number (NumPy's two names of each 64-bit integer
# included): a dtype's hash costs ~1 us, an eager sort's own time at 10 elements.
_NUMPY_KEY_NUMS = frozenset(np.dtype(c).num for c in "?bBhHiIlLqQefd")


def is_numpy_key(dt: np.dtype) -> bool:
  """Whether these kernels cover keys of ``dt``: a real NumPy dtype (ml_dtypes'
  floats and sub-byte integers, and complex numbers, sort by the general path)."""
  return dt.num in _NUMPY_KEY_NUMS and dt.isnative


def _ordered_uint(x: np.ndarray) -> np.ndarray:
  """Unsigned integers of ``x``'s width whose order is the sort order of
  ``x``: -0.0 equal to 0.0, every NaN equal and above +inf."""
  dt = x.dtype
  kind = dt.kind
  if kind == "b":
    return x.view(np.uint8)
  if kind == "u":
    return x
  bits = 8 * dt.itemsize
  udt = np.dtype(f"u{dt.itemsize}")
  top = udt.type(1 << (bits - 1))
  if kind == "i":   # two's complement with the sign bit flipped orders as unsigned
    return x.view(udt) ^ top
  with np.errstate(invalid="ignore"):   # signalling NaNs
    x = x + dt.type(0)   # -0.0 + 0.0 == +0.0: one zero
  nans = np.isnan(x)
  if nans.any():      # one NaN (sign and payload bits would order NaNs apart)
    x[nans] = np.nan
  # IEEE bits order as unsigned once negatives have every bit flipped and
  # non-negatives their sign bit set.
  negative = (x.view(f"i{dt.itemsize}") >> (bits - 1)).view(udt)
  return x.view(udt) ^ (negative | top)


def stable_argsort(key: np.ndarray, axis: int) -> np.ndarray:
  """``np.argsort(key, axis, kind="stable")`` in sort's order (-0.0 == 0.0,
  NaNs last and equal); the indices' integer dtype varies."""
  n = key.shape[axis]
  if key.ndim == 1 and n >= _PERMUTATION_FROM and key.dtype.kind in "iu":
    inverse = _inverse_permutation(key)
    if inverse is not None:
      return inverse
  if key.size < _SMALL_ARGSORT or key.dtype.itemsize > 4 or n > np.iinfo(np.uint32).max:
    return key.argsort(axis=axis, kind="stable")
  if key.dtype.itemsize <= 2:   # NumPy's stable argsort of small integers is a radix sort
    return _ordered_uint(key).argsort(axis=axis, kind="stable")
  ordered = _axis_last(_ordered_uint(key), axis)
  packed = ordered.astype(np.uint64, order="C")
  packed <<= np.uint64(32)
  packed |= np.arange(n, dtype=np.uint64)
  packed.sort(axis=-1)
  return _axis_last(packed.view(np.uint32)[..., _INDEX_WORD::2], axis)


def stable_argsort_keys(keys, axis: int) -> np.ndarray:
  """The stable argsort by several keys along ``axis``, the first one primary
  (``np.lexsort`` of them reversed): one ``stable_argsort`` per key from the
  least significant, each of the key in the order so far (a radix sort by
  keys; np.lexsort's merge sorts cost ~4x more at 1e6 elements). The
  permutations live with ``axis`` last (the packed sort's layout); each key
  is read into that layout by one flat take, never transposed (a 2-d fancy
  index along axis 0 of (1732, 577) int32 cost ~4x that)."""
  perm = _argsort_rows(_axis_last(keys[-1], axis))
  for key in keys[-2::-1]:
    perm = _take_rows(perm, _argsort_rows(_take_into_rows(key, perm, axis)))
  return _axis_last(perm, axis)


def _argsort_rows(key: np.ndarray) -> np.ndarray:
  """``stable_argsort(key, -1)`` as C-ordered int64 (the index arithmetic
  of the flat takes runs on contiguous int64 at full speed, where the packed
  sort's strided uint32 view cost ~3x)."""
  n = key.shape[-1]
  if key.size < _SMALL_ARGSORT or key.dtype.itemsize > 4 or n > np.iinfo(np.uint32).max:
    return key.argsort(axis=-1, kind="stable").astype(np.int64, copy=False)
  if key.dtype.itemsize <= 2:   # NumPy's radix argsort
    return _ordered_uint(key).argsort(axis=-1, kind="stable").astype(np.int64, copy=False)
  packed = _ordered_uint(key).astype(np.uint64, order="C")
  packed <<= np.uint64(32)
  packed |= np.arange(n, dtype=np.uint64)
  packed.sort(axis=-1)
  packed &= np.uint64(0xFFFFFFFF)
  return packed.view(np.int64)


@functools.lru_cache(maxsize=64)
def _flat_offsets(shape: tuple[int, ...], axis: int) -> tuple[int, np.ndarray]:
  """``(step, base)`` for a C-ordered array of ``shape``: element ``k`` along
  ``axis`` of the row at ``base`` (laid out as ``_axis_last`` does, size 1
  along the last axis) sits at flat position ``k * step + base``."""
  last = len(shape) - 1
  strides = [1] * len(shape)
  for d in range(last - 1, -1, -1):
    strides[d] = strides[d + 1] * shape[d + 1]
  base = np.zeros(1, np.int64).reshape([1] * len(shape))
  for e in range(last):   # each axis of the layout but its last, from axis d of ``shape``
    d = last if e == axis else e
    base = base + (np.arange(shape[d], dtype=np.int64) * strides[d]).reshape(
        [shape[d] if f == e else 1 for f in range(len(shape))])
  base.setflags(write=False)
  return strides[axis], base


def _take_into_rows(x: np.ndarray, perm_rows: np.ndarray, axis: int) -> np.ndarray:
  """``x`` permuted along ``axis`` by ``perm_rows`` (laid out with ``axis``
  last), in that layout: one flat take from ``x``'s own C order."""
  if x.ndim == 1:
    return x[perm_rows]
  step, base = _flat_offsets(x.shape, axis)
  flat = np.multiply(perm_rows, step, dtype=np.int64)
  flat += base
  return np.take(np.ascontiguousarray(x).reshape(-1), flat)


def _inverse_permutation(key: np.ndarray) -> np.ndarray | None:
  """The argsort of ``key`` when it holds each of 0..n-1 once (the inverse
  of a permutation: ``argsort(argsort(x))``, the rank of each element), by
  one scatter, ~3x faster than sorting; None for any other integers (two
  O(n) passes spent)."""
  n = key.shape[0]
  if key.min() != 0 or key.max() != n - 1:
    return None
  inverse = np.full(n, -1, np.intp)
  inverse[key] = np.arange(n)
  # n in-range keys fill n slots exactly when no two are equal.
  return inverse if inverse.min() >= 0 else None


@functools.lru_cache(maxsize=64)
def other_axes_index(shape: tuple[int, ...], axis: int) -> tuple:
  """Index arrays of every axis but ``axis``, shaped to broadcast against a
  permutation along ``axis`` (cached: made once per shape)."""
  index = []
  for d, n in enumerate(shape):
    if d != axis:
      i = np.arange(n).reshape([n if e == d else 1 for e in range(len(shape))])
      i.setflags(write=False)
      index.append(i)
  return tuple(index)


def take_sorted(operands, perm: np.ndarray, axis: int) -> list[np.ndarray]:
  """Every operand permuted along ``axis`` by ``perm``: one fancy index each
  (``np.take_along_axis`` costs ~4 us an operand in argument handling).
  From ``_SMALL_ARGSORT`` elements on, an operand that is an iota along
  ``axis`` seen through zero strides (argsort's, lexsort's) permutes into
  ``perm`` itself, and the others permute by one flat take each (of flat
  positions computed once)."""
  if perm.ndim == 1:
    return [o[perm] for o in operands]
  if perm.size < _SMALL_ARGSORT:
    others = other_axes_index(perm.shape, axis)
    index = others[:axis] + (perm,) + others[axis:]
    return [o[index] for o in operands]
  step, base = _flat_offsets(perm.shape, axis)
  flat = np.multiply(perm, step, dtype=np.int64)
  flat += _axis_last(base, axis)   # in perm's own layout (a C-ordered perm: no strided pass)
  return [perm.astype(o.dtype) if _is_iota(o, axis)
          else np.take(np.ascontiguousarray(o).reshape(-1), flat) for o in operands]


def _is_iota(x: np.ndarray, axis: int) -> bool:
  """Whether ``x`` is 0, 1, ..., n-1 along ``axis`` and repeats it along
  every other axis by zero strides (a broadcast iota): one row checked."""
  if any(s for d, s in enumerate(x.strides) if d != axis) or x.dtype.kind not in "iu":
    return False
  n = x.shape[axis]
  row = x[tuple(slice(None) if d == axis else 0 for d in range(x.ndim))]
  return n <= np.iinfo(x.dtype).max and np.array_equal(row, np.arange(n))


def _restore_runs(x: np.ndarray, out: np.ndarray, axis: int) -> np.ndarray:
  """``out`` (``x`` sorted along ``axis`` by NumPy's unstable sort) with its
  runs of NaNs, and of zeros of both signs, as in ``x`` (in input order).
  Zeros of one sign need nothing: the SIMD sorts' min/max steps return one of
  their operands, so such a run is already right."""
  moved_x, moved_out = _axis_last(x, axis), _axis_last(out, axis)
  # Counts first, extractions only when needed (a boolean index costs ~10x a
  # compare). A row's run of zeros (NaNs) in ``out`` is exactly where ``out``
  # is zero (NaN), and both arrays are read row by row in the same order.
  bits = moved_x.view(_UINT_OF[x.dtype])
  zeros, nans = _zeros_and_nans(moved_x)
  n_zeros = np.count_nonzero(zeros)
  n_nans = np.count_nonzero(nans)
  # Small arrays copy their runs back unchecked: the checks cost more there.
  check = x.size > _CHECK_RUNS_FROM
  mixed_zeros = n_zeros and (
      not check or 0 < np.count_nonzero(bits == _NEGATIVE_ZERO_BITS[x.dtype]) < n_zeros)
  one_nan = nan_value = None
  if n_nans and check:
    first = bits.flat[nans.argmax()]   # flat: in the view's C order
    one_nan = np.count_nonzero(bits == first) == n_nans   # one NaN bit pattern: the usual case
    nan_value = first.view(x.dtype)
  if moved_x.ndim == 1:   # slices: the runs' bounds are known
    n = len(moved_x)
    if mixed_zeros:
      lo = int(np.searchsorted(moved_out, _ZERO[x.dtype]))   # after the negatives
      moved_out[lo:lo + n_zeros] = np.compress(zeros, moved_x)
    if n_nans:
      moved_out[n - n_nans:] = nan_value if one_nan else np.compress(nans, moved_x)
    return out
  out_zeros, out_nans = _zeros_and_nans(moved_out)
  if mixed_zeros:
    moved_out[out_zeros] = (np.compress(zeros.ravel(), moved_x)
                            if moved_x.flags.c_contiguous else moved_x[zeros])
  if n_nans:
    if one_nan:
      np.copyto(moved_out, nan_value, where=out_nans)
    else:
      moved_out[out_nans] = moved_x[nans]
  return out


# float16's magnitude bits: +inf's, above which every pattern is a NaN.
_F16_MAGNITUDE, _F16_INF = np.uint16(0x7FFF), np.uint16(0x7C00)


def _zeros_and_nans(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """``(x == 0, isnan(x))``; float16's from its bits (NumPy computes float16
  comparisons in software: ~10x an integer compare, 5 of 7 ms of a 1e6 sort's
  run restoring)."""
  if x.dtype == np.float16:
    magnitude = x.view(np.uint16) & _F16_MAGNITUDE
    return magnitude == 0, magnitude > _F16_INF
  return x == 0, np.isnan(x)


def sort_one(x: np.ndarray, axis: int) -> np.ndarray:
  """``x`` sorted stably along ``axis`` in sort's order."""
  if x.dtype.kind != "f":
    # Equal integers (bools) are identical: any sort gives the stable result.
    # One- and two-byte ones sort by radix (their quicksort is ~10x slower).
    radix = x.dtype.itemsize <= 2 and x.size >= _RADIX_FROM
    return _sorted_copy(x, axis, "stable" if radix else None)
  if x.size < (_SMALL_SORT_1D if x.ndim == 1 else _SMALL_SORT) or x.shape[axis] <= _SHORT_ROW:
    # NumPy's stable sort is as fast here (an insertion sort) and needs no fixing.
    return _sorted_copy(x, axis, "stable")
  if x.dtype == np.float16:
    # NumPy compares float16 in software (no SIMD sort): 1e6 ~125 ms. Their
    # float32 values (exact both ways) sort by the SIMD sort, ~10x faster; a
    # conversion may quiet a NaN, whose runs are rewritten from x's bits below.
    out = x.astype(np.float32)
    out.sort(axis=axis)
    return _restore_runs(x, out.astype(np.float16), axis)
  return _restore_runs(x, _sorted_copy(x, axis, None), axis)


def _sorted_copy(x: np.ndarray, axis: int, kind: str | None) -> np.ndarray:
  """``np.sort(x, axis, kind)`` without its wrapper's argument handling
  (~0.7 us of a 10-element sort's ~2 us)."""
  out = x.copy()
  out.sort(axis=axis, kind=kind)
  return out


def top_k(x: np.ndarray, k: int, axis: int,
          descending: bool = True) -> tuple[np.ndarray, np.ndarray] | None:
  """``top_k``'s values and int32 indices for ``x`` of a NumPy dtype of up to
  32 bits with at least ``_SMALL_ARGSORT`` elements (else None): descending,
  NaN first, ties in index order (``descending=False``: the ``k`` smallest,
  ascending, NaN last, ties in index order). Each element becomes one uint64,
  its key's bits (inverted for descending) above its index, so an ascending
  partition and sort of the first ``k`` give JAX's order in O(n + k log k)."""
  n = x.shape[axis]
  if (x.size < _SMALL_ARGSORT or not is_numpy_key(x.dtype) or x.dtype.itemsize > 4
      or n > np.iinfo(np.uint32).max):
    return None
  key = _ordered_uint(x)
  if descending:
    key = np.invert(key)
  packed = _axis_last(key, axis).astype(np.uint64, order="C")
  packed <<= np.uint64(32)
  packed |= np.arange(n, dtype=np.uint64)
  if 2 * k <= n:   # a partition finds the first k in O(n); only they are sorted
    if 0 < k < n:
      packed = np.partition(packed, k - 1, axis=-1)[..., :k]
    packed = np.ascontiguousarray(packed[..., :k])   # a strided sort costs ~2x
    packed.sort(axis=-1)
  else:   # most of each row (jnp.partition's upper part): one sort of the rows
    packed.sort(axis=-1)
    packed = packed[..., :k]
  idx = packed.view(np.uint32)[..., _INDEX_WORD::2].astype(np.int32)
  return _axis_last(_take_rows(_axis_last(x, axis), idx), axis), _axis_last(idx, axis)


def _take_rows(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
  """``np.take_along_axis(x, idx, axis=-1)``; for a C-ordered ``x``, one take
  of flat indices (~2x faster at 1e6 elements)."""
  if x.ndim == 1:
    return x[idx]
  if not x.flags.c_contiguous or x.size >= np.iinfo(np.int64).max:
    return np.take_along_axis(x, idx, axis=-1)
  n = x.shape[-1]
  rows = np.arange(0, x.size, n, dtype=np.int64).reshape(x.shape[:-1] + (1,))
  flat = np.add(idx, rows, dtype=np.int64)   # idx may be a strided uint32 view
  return np.take(x.reshape(-1), flat)


# searchsorted's fused count orders its keys by the packed-key argsort
fused_steps.set_key_argsort(lambda keys: stable_argsort(keys, 0))
