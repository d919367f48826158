"""Sorting: ``jnp.sort``, ``argsort``, ``lexsort``, ``sort_complex``,
``partition`` and ``argpartition``, built on the ``sort`` and ``top_k``
primitives (NaNs sort to the end; equal keys keep their order when stable).
"""
from __future__ import annotations

import operator

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import concrete_or_error
from openjax._src.numpy import util
from openjax._src.numpy.reductions import _const, _convert, _ravel

__all__ = ["sort", "argsort", "lexsort", "sort_complex", "partition", "argpartition"]


def _check_sort_args(name: str, kind, order) -> None:
  if kind is not None:
    raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or "
                    "stable=False to specify sort stability.")
  if order is not None:
    raise TypeError(f"'order' argument to {name} is not supported.")


def _static_axis(name: str, axis):
  return concrete_or_error(lambda a: None if a is None else operator.index(a), axis,
                           f"The axis argument of jnp.{name} must be static.")


@util.jit(static_argnames=('axis', 'kind', 'order', 'stable', 'descending'))
def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
  """Sorted copy of ``a`` along ``axis`` (flattened when None). NaNs sort to
  the end (to the front when ``descending``)."""
  arr = util.ensure_arraylike("sort", a)
  _check_sort_args("sort", kind, order)
  axis = _static_axis("sort", axis)
  if axis is None:
    arr = _ravel(arr)
    axis = 0
  dimension = util.canonicalize_axis(axis, np.ndim(arr))
  result = lax.sort(arr, dimension=dimension, is_stable=bool(stable))
  return lax.rev(result, (dimension,)) if descending else result


@util.jit(static_argnames=('axis', 'kind', 'order', 'stable', 'descending', 'dtype'))
def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
  """Indices that sort ``a`` along ``axis``; with ``stable`` equal elements
  keep their order (also when ``descending``)."""
  arr = util.ensure_arraylike("argsort", a)
  _check_sort_args("argsort", kind, order)
  axis = _static_axis("argsort", axis)
  if axis is None:
    arr = _ravel(arr)
    axis = 0
  dimension = util.canonicalize_axis(axis, np.ndim(arr))
  if dtype is not None:
    idx_dtype = dtypes.explicit_dtype(dtype, "argsort")
  else:
    idx_dtype = _index_dtype(np.shape(arr)[dimension])
  iota = lax.broadcasted_iota(idx_dtype, np.shape(arr), dimension)
  if descending and stable:
    # Reversing first keeps equal elements in input order after the final
    # reversal.
    arr = lax.rev(arr, (dimension,))
    iota = lax.rev(iota, (dimension,))
  _, indices = lax.sort_key_val(arr, iota, dimension=dimension, is_stable=bool(stable))
  return lax.rev(indices, (dimension,)) if descending else indices


def _index_dtype(n: int) -> np.dtype:
  """The default integer, unless the axis is too long for int32."""
  if n > np.iinfo(np.int32).max:
    return np.dtype(np.int64)
  return dtypes.default_int_dtype()


def lexsort(keys, axis=-1):
  """Indirect stable sort by several keys; the LAST key is the primary one."""
  if type(keys) is tuple or type(keys) is list:
    # The keys as the program's own arguments (its jaxpr, jit[name=lexsort] of
    # the key arrays, is the same): a tuple argument takes jit's general
    # path, its pytree flattened on every call (~30 us at 10 elements).
    return _lexsort_of_keys(*keys, axis=axis)
  return _lexsort_of_array(keys, axis=axis)


def _lexsort_keys_program(*keys, axis=-1):
  return _lexsort(keys, axis)


def _lexsort_array_program(keys, axis=-1):
  return _lexsort(keys, axis)


# Both stage JAX's jit[name=lexsort].
_lexsort_of_keys = util.jit(_lexsort_keys_program, static_argnames=('axis',))
_lexsort_of_keys.name = "lexsort"
_lexsort_of_array = util.jit(_lexsort_array_program, static_argnames=('axis',))
_lexsort_of_array.name = "lexsort"


def _lexsort(keys, axis):
  key_arrays = tuple(util.ensure_arraylike("lexsort", k) for k in keys)
  if len(key_arrays) == 0:
    raise TypeError("need sequence of keys with len > 0 in lexsort")
  if len({np.shape(k) for k in key_arrays}) > 1:
    raise ValueError("all keys need to be the same shape")
  shape = np.shape(key_arrays[0])
  if len(shape) == 0:
    return lax.full((), 0, dtypes.default_int_dtype())
  axis = util.canonicalize_axis(_static_axis("lexsort", axis), len(shape))
  iota = lax.broadcasted_iota(_index_dtype(shape[axis]), shape, axis)
  return lax.sort((*key_arrays[::-1], iota), dimension=axis, num_keys=len(key_arrays))[-1]


@util.jit
def sort_complex(a):
  """``a`` sorted by real part then imaginary part, as a complex array."""
  a = util.ensure_arraylike("sort_complex", a)
  a = lax.sort(a)
  dt = util.dtype_of(a)
  if dtypes.kind(dt) != "c":
    dt = dtypes.complex128 if dt == np.float64 else dtypes.default_complex_dtype()
    dt = dtypes.canonicalize_dtype(dt)
  return _convert(a, dt)


def _kth(kth, n: int) -> int:
  kth = concrete_or_error(operator.index, kth, "The kth argument of jnp.partition must be "
                          "static.")
  return util.canonicalize_axis(kth, n)


def _negate_for_bottom(arr):
  """An array whose top_k is ``arr``'s bottom k (unsigned ints wrap, so they
  are shifted first, as JAX does)."""
  if dtypes.kind(util.dtype_of(arr)) == "u":
    return lax.neg(lax.add(arr, _const(arr, 1)))
  return lax.neg(arr)


@util.jit(static_argnames=('kth', 'axis'))
def partition(a, kth, axis=-1):
  """``a`` rearranged along ``axis`` so the ``kth`` element is in sorted
  position, smaller ones before it and larger ones after it."""
  arr = util.ensure_arraylike("partition", a)
  if dtypes.kind(util.dtype_of(arr)) == "c":
    raise NotImplementedError("jnp.partition for complex dtype is not implemented.")
  axis = util.canonicalize_axis(_static_axis("partition", axis), np.ndim(arr))
  n = np.shape(arr)[axis]
  kth = _kth(kth, n)
  bottom = lax.top_k(_negate_for_bottom(arr), kth + 1, axis=axis)[0]
  if dtypes.kind(util.dtype_of(arr)) == "u":
    bottom = lax.sub(lax.neg(bottom), _const(bottom, 1))
  else:
    bottom = lax.neg(bottom)
  top = lax.top_k(arr, n - kth - 1, axis=axis)[0]
  return lax.concatenate([bottom, top], axis)


@util.jit(static_argnames=('kth', 'axis'))
def argpartition(a, kth, axis=-1):
  """Indices that would ``partition`` ``a`` along ``axis``."""
  arr = util.ensure_arraylike("partition", a)
  if dtypes.kind(util.dtype_of(arr)) == "c":
    raise NotImplementedError("jnp.argpartition for complex dtype is not implemented.")
  axis = util.canonicalize_axis(_static_axis("argpartition", axis), np.ndim(arr))
  shape = np.shape(arr)
  n = shape[axis]
  kth = _kth(kth, n)
  bottom_ind = lax.top_k(_negate_for_bottom(arr), kth + 1, axis=axis)[1]
  # The rest, in index order: top_k of a proxy that is 0 at the bottom
  # indices and 1 elsewhere (stable, so ties keep index order).
  nd = len(shape)
  ind_b = lax.broadcast_in_dim(bottom_ind, shape[:axis] + (kth + 1, 1) + shape[axis + 1:],
                               tuple(i if i <= axis else i + 1 for i in range(nd)))
  iota = lax.broadcasted_iota(np.dtype(np.int32), shape[:axis] + (1, n) + shape[axis + 1:],
                              axis + 1)
  hit = lax.reduce_or(lax.eq(ind_b, iota), (axis,))
  proxy = lax.select(hit, lax.full(shape, 0.0, np.float32), lax.full(shape, 1.0, np.float32))
  top_ind = lax.top_k(proxy, n - kth - 1, axis=axis)[1]
  return lax.concatenate([bottom_ind, top_ind], axis)
