"""Fused kernel steps of ``sort`` and ``top_k`` equations in library programs
(``core/fused_steps.add_pattern``): the jaxpr is JAX's, the kernel skips the
work of results nothing reads.

* ``sort((*keys, iota), num_keys=len(keys))`` whose sorted keys are unread
  (``argsort``, ``lexsort``): the permutation alone, written into the iota's
  sorted slot; the iota is never made and nothing is permuted by it (what
  the impl gives: its takes of an iota are the permutation itself).
* ``top_k`` whose indices are unread (``partition``'s two): the values alone,
  by a stable sort of the reversed rows read backwards (descending, equal
  keys in index order, NaN largest: top_k's order), where the impl packs
  each key with its index into a uint64 and sorts those; a few of many by
  a partition of the values when no zero or NaN is among them.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.core.fused_steps import add_pattern
from openjax._src.core.jaxpr import Literal
from openjax._src.primitives.sort import sort_kernels

__all__ = ["numpy_sort_keys", "permutation"]


def numpy_sort_keys(x: np.ndarray) -> list[np.ndarray]:
  """NumPy key arrays whose lexicographic order is JAX's total order for ``x``.

  NumPy's own sorts already place NaN last and treat -0.0 == 0.0; complex
  values become two keys so NaN parts order like JAX's (real, imag) keys.
  """
  if dtypes.kind(x.dtype) == "c":
    return [np.real(x), np.imag(x)]
  if x.dtype in dtypes.custom_float_dtypes:
    return [x.astype(np.float32)]
  if x.dtype == np.bool_:
    return [x.astype(np.uint8)]
  return [x]


def permutation(keys, dimension: int) -> np.ndarray:
  """The stable sort permutation of ``keys`` along ``dimension`` (the first
  key primary): what the sort impl permutes its operands by (an integer
  array; its dtype varies)."""
  key = keys[0]
  if len(keys) == 1 and sort_kernels.is_numpy_key(key.dtype):
    return sort_kernels.stable_argsort(key, dimension)
  if (len(keys) > 1 and key.size >= sort_kernels.SEVERAL_KEYS_FROM
      and all(sort_kernels.is_numpy_key(k.dtype) and k.dtype.itemsize <= 4 for k in keys)):
    return sort_kernels.stable_argsort_keys(keys, dimension)
  # np.lexsort is stable, takes its primary key last and sorts along any axis
  # (NaN last, -0.0 == 0.0, False < True: keys of NumPy's dtypes as they are).
  if all(sort_kernels.is_numpy_key(k.dtype) for k in keys):
    return np.lexsort(keys[::-1], axis=dimension)
  return np.lexsort([k for o in keys for k in numpy_sort_keys(o)][::-1], axis=dimension)


# ------------------------------------------------------------- argsort
def _argsort_pattern(k, eqn, eqns, only_use, uses):
  """``sort`` of keys and an iota along the sorted dimension whose results
  other than the iota's are unread: the permutation, one kernel (jnp.argsort
  of f32[3, 3]: iota, sort impl, two takes -> one np.argsort)."""
  params = eqn.params
  num_keys, dimension = params["num_keys"], params["dimension"]
  *keys, index = eqn.invars
  if len(keys) != num_keys or any(type(k) is Literal for k in keys):
    return None
  if any(uses.get(v, 0) for v in eqn.outvars[:-1]):
    return None
  k_iota = only_use(index, "iota")
  if k_iota is None:
    return None
  iota = eqns[k_iota].params
  shape = tuple(index.aval.shape)
  if (iota["dimension"] != dimension or iota.get("sharding") is not None or not shape
      or np.dtype(iota["dtype"]).kind not in "iu" or shape[dimension] > np.iinfo(iota["dtype"]).max
      or any(tuple(k.aval.shape) != shape for k in keys)):
    return None
  dt = np.dtype(iota["dtype"])

  def kernel(*key_values):
    return [permutation(key_values, dimension).astype(dt, copy=False)]
  return kernel, tuple((k, i) for i in range(num_keys)), {k_iota}, ((k, num_keys),)


# --------------------------------------------------------------- top_k
def _top_k_values_pattern(k_eqn, eqn, eqns, only_use, uses):
  """``top_k`` whose indices are unread: the values alone (partition of 1e6
  float32, the upper part: a packed uint64 sort -> one float sort)."""
  x, = eqn.invars
  if type(x) is Literal or uses.get(eqn.outvars[1], 0):
    return None
  if not sort_kernels.is_numpy_key(x.aval.dtype) or not x.aval.shape:
    return None
  k, axis = eqn.params["k"], eqn.params["axis"]
  if 0 in x.aval.shape:
    return None

  def kernel(v):
    return top_k_values(v, k, axis)
  return kernel, ((k_eqn, 0),), set()


def top_k_values(x: np.ndarray, k: int, axis: int) -> np.ndarray:
  """``top_k(x, k, axis)``'s values: a stable ascending sort of the rows
  reversed, read backwards (descending; equal keys, -0.0 and 0.0 or NaNs
  of other bits, in index order); a few of many by a partition."""
  rows = sort_kernels._axis_last(x, axis)
  n = rows.shape[-1]
  if k and 2 * k <= n and x.size >= sort_kernels._SMALL_ARGSORT:
    few = _largest_few(rows, k)
    if few is not None:
      return sort_kernels._axis_last(few, axis)
    packed = sort_kernels.top_k(x, k, axis)
    if packed is not None:
      return packed[0]
  rows = rows[..., ::-1]
  values = sort_kernels.sort_one(rows, rows.ndim - 1)[..., :-k - 1:-1] if k else rows[..., :0]
  return sort_kernels._axis_last(values, axis)


# dtypes np.partition selects by vectorised compares (float16's are in software)
_PARTITIONED = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16,
                                               np.int32, np.int64, np.uint8, np.uint16,
                                               np.uint32, np.uint64))


def _largest_few(rows: np.ndarray, k: int) -> np.ndarray | None:
  """The ``k`` largest of each row, descending, by one ``np.partition`` and a
  sort of those k (partition's bottom of 1e6 float32: the packed uint64 keys'
  ~6 passes and partition -> one float partition); None when they hold a
  zero or a NaN, whose bits the order of equal elements decides."""
  if rows.dtype not in _PARTITIONED:
    return None
  n = rows.shape[-1]
  few = np.partition(rows, n - k, axis=-1)[..., n - k:]
  if rows.dtype.kind == "f" and (np.count_nonzero(few == 0) or np.isnan(few).any()):
    return None
  few.sort(axis=-1)   # equal values have equal bits: any order of them is JAX's
  return few[..., ::-1]


add_pattern("sort", _argsort_pattern)
add_pattern("top_k", _top_k_values_pattern)
