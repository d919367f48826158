"""Set operations on flattened arrays: ``isin``, ``union1d``, ``intersect1d``,
``setdiff1d`` and ``setxor1d``.

Each sorts, marks the wanted elements with a boolean mask and compacts them.
The compaction has a data-dependent length, so as in JAX the inputs must be
concrete unless a static ``size`` is given; then the result is truncated or
padded with ``fill_value`` and the functions trace under ``jit``. Eager calls
that trace (``isin``, and the others with ``size``) run as one cached library
program (~20-60 operations op by op); traced calls stage them inline.
"""
from __future__ import annotations

import operator

import numpy as np

from openjax._src import lax
from openjax._src.core import eval_trace, trace_state
from openjax._src.numpy import util
from openjax._src.numpy.creation import asarray, ones, zeros
from openjax._src.numpy.eager_programs import eager_program
from openjax._src.numpy.indexing import nonzero
from openjax._src.numpy.misc import where
from openjax._src.numpy.ranges import arange
from openjax._src.numpy.reductions import all as _all, any as _any, sum as _sum
from openjax._src.numpy.searching import searchsorted, unique
from openjax._src.numpy.shape_joining import concatenate
from openjax._src.numpy.shape_reshaping import ravel
from openjax._src.numpy.sorting import argsort, sort
from openjax._src.numpy.ufuncs import equal, not_equal

__all__ = ["isin", "union1d", "intersect1d", "setdiff1d", "setxor1d"]

_ISIN_METHODS = ("compare_all", "binary_search", "sort", "auto")
# Past this many element pairs an eager 'auto' membership looks the elements
# up in the sorted test values: the booleans of comparing every pair (JAX's
# 'auto', which traced calls keep), in O((n + m) log m) (intersect1d(size=)
# of 1e3 elements: ~430 -> see the sort11 report).
_EAGER_PAIRS_LIMIT = 1 << 16


def _membership(a, b) -> str:
  """The membership method of an ``'auto'`` call: JAX's under a trace."""
  if trace_state.trace is eval_trace and np.size(a) * np.size(b) > _EAGER_PAIRS_LIMIT:
    return "sort"
  return "auto"


def _in1d_flat(a, b, invert: bool, method: str):
  """Membership of each element of the flat ``a`` in the flat ``b``."""
  if method not in _ISIN_METHODS:
    raise ValueError(f"{method=} is not implemented; options are 'compare_all', "
                     "'binary_search', 'sort', and 'auto'")
  if a.size == 0 or b.size == 0:
    return (ones if invert else zeros)(a.shape, dtype=bool)
  if method == "compare_all" or method == "auto":
    if invert:
      return _all(not_equal(a[:, None], b[None, :]), axis=-1)
    return _any(equal(a[:, None], b[None, :]), axis=-1)
  # binary_search and sort: look each element up in the sorted test values.
  b_sorted = sort(b)
  pos = searchsorted(b_sorted, a)
  found = equal(b_sorted[lax.min(pos, asarray(b.size - 1, dtype=pos.dtype))], a)
  return lax.bitwise_not(found) if invert else found


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
  """Whether each element of ``element`` occurs in ``test_elements`` (any
  shape); ``invert`` negates the result. ``method`` picks the algorithm:
  ``'compare_all'`` (the default for ``'auto'``), ``'binary_search'`` or
  ``'sort'``."""
  if method == "auto":
    method = _membership(element, test_elements)
  return _isin(element, test_elements, assume_unique, invert, method=method)


def _in1d(element, test_elements, invert, method):
  """Membership of each element of ``element`` (flattened) in
  ``test_elements``: JAX's jitted ``_in1d`` (make_jaxpr prints
  ``jit[name=_in1d]``)."""
  a, b = util.promote_dtypes(element, test_elements)
  return _in1d_flat(ravel(a), ravel(b), invert, method)


_in1d_jit = util.jit(_in1d, static_argnames=("invert", "method"))


@eager_program(static_argnames=("assume_unique", "invert", "method"))
def _isin(element, test_elements, assume_unique, invert, *, method):
  del assume_unique   # only a speed hint
  element, test_elements = util.ensure_arraylike("isin", element, test_elements)
  return _in1d_jit(element, test_elements, invert, method).reshape(element.shape)


def _static_size(name: str, size):
  if size is None:
    return None
  try:
    return operator.index(size)
  except TypeError:
    raise TypeError(f"jnp.{name}: size must be a static Python int; got {size!r}.") from None


def _first_of_runs(sorted_values):
  """True where a sorted array starts a run of equal values."""
  if sorted_values.size == 0:
    return zeros((0,), bool)
  return concatenate([ones((1,), bool), not_equal(sorted_values[1:], sorted_values[:-1])])


def _compact(values, mask, size, fill_value, default_fill):
  """``values[mask]``, or with ``size`` its first ``size`` entries padded with
  ``fill_value`` (``default_fill(selected)`` when None)."""
  if size is None:
    return values[nonzero(mask)[0]]
  (idx,) = nonzero(mask, size=size, fill_value=0)
  picked = values[idx] if values.size else zeros((size,), values.dtype)
  count = _sum(mask, dtype=np.int32)
  if fill_value is None:
    fill = default_fill(picked, count)
  else:
    fill = lax.convert_element_type(asarray(fill_value), values.dtype)
  return where(arange(size) < count, picked, fill)


def _smallest(picked, count):
  """The default fill of intersect1d/setxor1d: the smallest selected value
  (0 when nothing is selected, as in JAX)."""
  zero = zeros((), picked.dtype)
  return where(count > 0, picked[0], zero) if picked.size else zero


@eager_program(static_argnames=("size",))
def union1d(ar1, ar2, *, size=None, fill_value=None):
  """Sorted unique values found in ``ar1`` or ``ar2`` (flattened)."""
  ar1, ar2 = util.ensure_arraylike("union1d", ar1, ar2)
  size = _static_size("union1d", size)
  both = concatenate((ravel(ar1), ravel(ar2)))
  return unique(both, size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
  """Sorted unique values of ``ar1`` not in ``ar2``; with ``size``, padded
  with ``fill_value`` (default 0, as in JAX)."""
  return _setdiff1d(ar1, ar2, assume_unique, size=size, fill_value=fill_value,
                    membership=_membership(ar1, ar2))


@eager_program(static_argnames=("assume_unique", "size", "membership"))
def _setdiff1d(ar1, ar2, assume_unique, *, size, fill_value, membership):
  ar1, ar2 = util.ensure_arraylike("setdiff1d", ar1, ar2)
  size = _static_size("setdiff1d", size)
  a = ravel(ar1)
  a = a if assume_unique else sort(a)
  keep = _in1d_flat(a, ravel(ar2), True, membership)
  if not assume_unique:
    keep = keep & _first_of_runs(a)
  return _compact(a, keep, size, fill_value, lambda p, count: zeros((), p.dtype))


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
  """Sorted values found in exactly one of ``ar1`` and ``ar2``; with ``size``,
  padded with ``fill_value`` (default: the smallest such value)."""
  return _setxor1d(ar1, ar2, assume_unique, size=size, fill_value=fill_value,
                   membership=_membership(ar1, ar2))


@eager_program(static_argnames=("assume_unique", "size", "membership"))
def _setxor1d(ar1, ar2, assume_unique, *, size, fill_value, membership):
  ar1, ar2 = util.ensure_arraylike("setxor1d", ar1, ar2)
  size = _static_size("setxor1d", size)
  a, b = util.promote_dtypes(sort(ravel(ar1)), sort(ravel(ar2)))
  only_a = _in1d_flat(a, b, True, membership)
  only_b = _in1d_flat(b, a, True, membership)
  if not assume_unique:
    only_a = only_a & _first_of_runs(a)
    only_b = only_b & _first_of_runs(b)
  # The selected values of a and b are disjoint, so one stable sort of both
  # (masks carried along) lists them in order.
  both = concatenate((a, b))
  order = argsort(both, stable=True)
  return _compact(both[order], concatenate((only_a, only_b))[order], size, fill_value,
                  _smallest)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
  """Sorted unique values found in both ``ar1`` and ``ar2``. With
  ``return_indices``, also the indices of their first occurrences in the
  flattened inputs; with ``size``, values are padded with ``fill_value``
  (default: the smallest common value) and indices with ``len(input)``."""
  return _intersect1d(ar1, ar2, assume_unique, return_indices, size=size,
                      fill_value=fill_value, membership=_membership(ar1, ar2))


@eager_program(static_argnames=("assume_unique", "return_indices", "size", "membership"))
def _intersect1d(ar1, ar2, assume_unique, return_indices, *, size, fill_value, membership):
  ar1, ar2 = util.ensure_arraylike("intersect1d", ar1, ar2)
  size = _static_size("intersect1d", size)
  a, b = util.promote_dtypes(ravel(ar1), ravel(ar2))
  order_a = argsort(a, stable=True)
  sa = a[order_a]
  keep = _in1d_flat(sa, b, False, membership)
  if not assume_unique:
    keep = keep & _first_of_runs(sa)
  values = _compact(sa, keep, size, fill_value, _smallest)
  if not return_indices:
    return values
  (pos,) = nonzero(keep) if size is None else nonzero(keep, size=size, fill_value=0)
  ind1 = order_a[pos] if a.size else zeros(pos.shape, order_a.dtype)
  order_b = argsort(b, stable=True)
  sb = b[order_b]
  ind2 = (order_b[lax.min(searchsorted(sb, values), asarray(max(b.size - 1, 0), np.int32))]
          if b.size else zeros(pos.shape, order_b.dtype))
  if size is not None:
    valid = arange(size) < _sum(keep, dtype=np.int32)
    ind1 = where(valid, ind1, a.size)
    ind2 = where(valid, ind2, b.size)
  return values, ind1, ind2
