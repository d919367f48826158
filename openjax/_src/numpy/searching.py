"""Searching and counting: ``searchsorted``, ``digitize``, ``interp``, ``bincount``,
``histogram`` and the ``unique`` family.

Comparisons use the sort order (NaN largest, every NaN equal, -0.0 == 0.0),
so ``searchsorted`` agrees with ``sort``. Every ``searchsorted`` method gives
the same result; ``compare_all`` costs O(len(a) * len(v)) memory (the scan
methods use it below ``_COMPARE_ALL_LIMIT`` comparisons), ``scan`` binary
searches in O(m log n) (used when n or m is small, else the co-sort) and
``sort`` co-sorts in O((n + m) log(n + m)).
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.config import config
from openjax._src.core import concrete_or_error, eval_trace, trace_state
from openjax._src.core.fused_steps import SORTED_COUNT_DTYPES
from openjax._src.core.trace import eager_config
from openjax._src.numpy import util
from openjax._src.numpy._ufunc_helpers import const, is_kind
from openjax._src.numpy.creation import asarray
from openjax._src.numpy.eager_programs import eager_program
from openjax._src.numpy.misc import clip, where
from openjax._src.numpy.reductions import (
    _const, _convert, _isnan, _ravel, _where, any as _any, cumsum, max as _max, min as _min,
    sum as _sum)
from openjax._src.numpy.shape_joining import concatenate

__all__ = ["searchsorted", "digitize", "interp", "bincount", "histogram", "histogram_bin_edges",
           "unique", "unique_values", "unique_counts", "unique_inverse", "unique_all"]

_SEARCH_METHODS = ("compare_all", "scan", "scan_unrolled", "sort")
# Up to this many comparisons the scan methods compare all pairs (a few
# vectorised steps) rather than loop; both give identical results.
_COMPARE_ALL_LIMIT = 1 << 16
# Past that, the scan methods binary-search when the queries number at most
# _SCAN_MAX_SIDE (a few queries a round) or the sorted array at most
# _SCAN_MAX_SORTED (a few rounds); else they co-sort (measured eagerly, one
# co-sort of n + m against ceil(log2(n + 1)) rounds over the m queries:
# n = 90, m = 1e3: 59 vs 136 us; n = 16, m = 1e4: 323 vs 573 us; n = 16,
# m = 1e6: 108 vs 123 ms).
_SCAN_MAX_SIDE = 256
_SCAN_MAX_SORTED = 8
# Eager bincount counts by comparing elements with bins up to this many pairs.
_BINCOUNT_COMPARE_ALL_LIMIT = 2048


# ------------------------------------------------------ total-order compares
def _real_keys(x) -> list:
  if dtypes.kind(util.dtype_of(x)) == "c":
    return [lax.real(x), lax.imag(x)]
  return [x]


def _key_lt(x, y, or_equal: bool):
  """``x < y`` (or ``<=``) for one real key in the sort order."""
  if dtypes.kind(util.dtype_of(x)) != "f":
    return lax.le(x, y) if or_equal else lax.lt(x, y)
  if or_equal:
    return lax.bitwise_or(lax.le(x, y), _isnan(y))
  # x < y is not (y <= x): four operations where the direct form takes six.
  return lax.bitwise_not(lax.bitwise_or(lax.le(y, x), _isnan(x)))


def _key_eq(x, y):
  if dtypes.kind(util.dtype_of(x)) != "f":
    return lax.eq(x, y)
  return lax.bitwise_or(lax.eq(x, y), lax.bitwise_and(_isnan(x), _isnan(y)))


def _sort_less(x, y, or_equal: bool):
  """Lexicographic ``x < y`` (or ``<=``) over real and imaginary parts."""
  xs, ys = _real_keys(x), _real_keys(y)
  p = _key_lt(xs[-1], ys[-1], or_equal)
  for xk, yk in zip(xs[-2::-1], ys[-2::-1]):
    p = lax.bitwise_or(_key_lt(xk, yk, False), lax.bitwise_and(_key_eq(xk, yk), p))
  return p


# ------------------------------------------------------------ searchsorted
def _searchsorted_compare_all(a, v, side: str, dtype):
  n, v_shape = np.shape(a)[0], np.shape(v)
  a_b = lax.broadcast_in_dim(a, (n,) + v_shape, (0,))
  v_b = lax.broadcast_in_dim(v, (n,) + v_shape, tuple(range(1, len(v_shape) + 1)))
  return _sum(_sort_less(a_b, v_b, or_equal=side == "right"), axis=0, dtype=dtype)


_GATHER_1D = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
                                        start_index_map=(0,))


def _searchsorted_sort(a, v, side: str, dtype):
  """Co-sorting: one stable sort of the queries with ``a`` (queries first for
  ``side='left'``, so they precede equal elements of ``a``; after them for
  ``'right'``). A query's index is the count of ``a``'s elements sorted before
  it: an exclusive cumulative count along the sorted order, read back at each
  query's sorted position (the inverse permutation). Two sorts of n + m
  elements, where ranking the queries apart took four."""
  n, m = np.shape(a)[0], int(np.size(v))
  work = np.dtype(np.int32) if n + m <= np.iinfo(np.int32).max else np.dtype(np.int64)
  q = _ravel(v)
  idx = lax.iota(work, n + m)
  if side == "left":
    perm = lax.sort_key_val(lax.concatenate([q, a], 0), idx)[1]
    from_a = lax.ge(perm, _const(perm, m))
  else:
    perm = lax.sort_key_val(lax.concatenate([a, q], 0), idx)[1]
    from_a = lax.lt(perm, _const(perm, n))
  from_a = _convert(from_a, work)
  before = lax.sub(lax.cumsum(from_a, 0), from_a)
  # The inverse permutation by a second sort: eagerly a stable argsort kernel,
  # ~2x faster at 1e3 elements than the general scatter impl JAX's .at[].set uses.
  position = lax.sort_key_val(perm, idx)[1]
  position = (lax.slice_in_dim(position, 0, m) if side == "left"
              else lax.slice_in_dim(position, n, n + m))
  # In-bounds positions: a plain gather (index_take would wrap negative ones).
  at = lax.gather(before, lax.broadcast_in_dim(position, (m, 1), (0,)), _GATHER_1D, (1,),
                  mode="promise_in_bounds")
  return _convert(lax.reshape(at, np.shape(v)), dtype)


def _searchsorted_scan(a, v, side: str, dtype):
  """Binary search of every query at once (JAX's "scan" method): ceil(log2(n + 1))
  rounds of a gather and a compare, O(m log n) where co-sorting is O((n + m) log(n + m))."""
  n, v_shape = np.shape(a)[0], np.shape(v)
  work = np.dtype(np.uint64) if np.dtype(dtype).itemsize == 8 else np.dtype(np.uint32)
  or_equal = side == "left"

  def body(_, bounds):
    low, high = bounds
    mid = lax.add(low, lax.shift_right_logical(lax.sub(high, low), lax.full((), 1, work)))
    at_mid = lax.gather(a, lax.broadcast_in_dim(mid, v_shape + (1,), tuple(range(len(v_shape)))),
                        _GATHER_1D, (1,), mode="clip")
    go_left = _sort_less(v, at_mid, or_equal=or_equal)
    return lax.select(go_left, low, mid), lax.select(go_left, mid, high)

  n_levels = int(np.ceil(np.log2(n + 1)))
  init = (lax.full(v_shape, 0, work), lax.full(v_shape, n, work))
  return _convert(lax.fori_loop(0, n_levels, body, init)[1], dtype)


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
  """Indices where ``v`` would be inserted into the sorted 1-D ``a`` to keep
  it sorted (``side='left'``: before equal values, ``'right'``: after)."""
  if trace_state.trace is eval_trace:
    if method == "scan":   # (the default) positional alone, as digitize
      return _searchsorted_eager(a, v, side, sorter)
    return _searchsorted_eager(a, v, side, sorter, method=method)
  return _searchsorted_staged(a, v, side, sorter, method=method)


def _searchsorted_jax(a, v, side="left", sorter=None, *, method="scan"):
  return _searchsorted(a, v, side, sorter, method)


def _searchsorted_lean(a, v, side="left", sorter=None, *, method="scan"):
  return _searchsorted(a, v, side, sorter, method, lean=True)


# Traced, JAX's jit[name=searchsorted] of the method asked for; eagerly, a
# library program that counts by comparing all pairs wherever they number at
# most _COMPARE_ALL_LIMIT, for method='sort' too: its co-sort's rank of a
# query is the count of a's elements sorted before it, for any ``a`` (the
# same bits; 10 elements: 12 steps -> 8).
_searchsorted_staged = util.jit(_searchsorted_jax, static_argnames=('side', 'method'))
_searchsorted_staged.name = "searchsorted"
_searchsorted_eager = util.jit(_searchsorted_lean, static_argnames=('side', 'method'))
_searchsorted_eager.name = "searchsorted"


def _compares_all(method, n: int, m: int, lean: bool, dtype=None) -> bool:
  """Whether ``_searchsorted`` counts by comparing all pairs. Eagerly, for
  the dtypes whose compare-all count a library program runs as one fused
  ``np.searchsorted(np.sort(a), v)`` (``core/fused_steps``: no n x m
  arrays), also wherever it would co-sort: the same counts (1e6 queries in
  2856 elements: two stable sorts of 1e6 elements ~45 ms -> ~20 ms). Not
  under debug flags or ``disable_jit`` (unfused, op by op), where the
  co-sort stays."""
  if method == "compare_all" or ((method != "sort" or lean) and n * m <= _COMPARE_ALL_LIMIT):
    return True
  return (lean and dtype in SORTED_COUNT_DTYPES and eager_config.flags_ok
          and (method == "sort" or (m > _SCAN_MAX_SIDE and n > _SCAN_MAX_SORTED))
          and not config.read("jax_disable_jit"))


def _searchsorted(a, v, side, sorter, method, lean: bool = False):
  """``searchsorted``'s equations, inline (eager library programs inline
  them: a nested jit call costs a few microseconds a call)."""
  if sorter is None:
    a, v = util.ensure_arraylike("searchsorted", a, v)
  else:
    a, v, sorter = util.ensure_arraylike("searchsorted", a, v, sorter)
  if np.ndim(a) != 1:
    raise ValueError("a should be 1-dimensional")
  if side not in ("left", "right"):
    raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
  if method not in _SEARCH_METHODS:
    raise ValueError(f"invalid argument method={method!r}, expected one of "
                     f"{list(_SEARCH_METHODS)}")
  a, v = util.promote_dtypes(a, v)
  if sorter is not None:
    a = lax.index_take(a, (sorter,), (0,))
  n = np.shape(a)[0]
  dtype = np.dtype(np.int64) if n > np.iinfo(np.int32).max else np.dtype(np.int32)
  if n == 0:
    return lax.full(np.shape(v), 0, dtype)
  if _compares_all(method, n, np.size(v), lean, util.dtype_of(a)):
    return _searchsorted_compare_all(a, v, side, dtype)
  if method == "sort" or (np.size(v) > _SCAN_MAX_SIDE and n > _SCAN_MAX_SORTED):
    return _searchsorted_sort(a, v, side, dtype)
  return _searchsorted_scan(a, v, side, dtype)


def digitize(x, bins, right=False, *, method=None):
  """Index of the bin of each ``x`` (bins increasing or decreasing)."""
  if trace_state.trace is eval_trace:
    if method is None:   # positional alone: the library call's last-call slot, no kwargs dict
      return _digitize_eager(x, bins, right)
    return _digitize_eager(x, bins, right, method=method)
  return _digitize_staged(x, bins, right, method=method)


def _digitize(x, bins, right, method, one_search: bool):
  x, bins_arr = util.ensure_arraylike("digitize", x, bins)
  right = concrete_or_error(bool, right, "right argument of jnp.digitize()")
  if np.ndim(bins_arr) != 1:
    raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins!r}")
  n = np.shape(bins_arr)[0]
  if n == 0:
    return lax.full(np.shape(x), 0, np.int32)
  side = "right" if not right else "left"
  kw = {} if method is None else {"method": method}
  ascending = lax.ge(lax.index_in_dim(bins_arr, n - 1, keepdims=False),
                     lax.index_in_dim(bins_arr, 0, keepdims=False))
  if one_search and _compares_all("scan" if method is None else method, n, np.size(x), True):
    # A count of bins on one side of each x, whatever their order: the
    # decreasing search's count over the reversed bins is the same count.
    x_arr, found_bins = util.promote_dtypes(x, bins_arr)
    dtype = np.dtype(np.int64) if n > np.iinfo(np.int32).max else np.dtype(np.int32)
    found = _searchsorted_compare_all(found_bins, x_arr, side, dtype)
    return _where(ascending, found, lax.sub(_const(found, n), found))
  if one_search:
    # The one of JAX's two searches its select keeps: the same bits, half the work.
    found = _searchsorted(_where(ascending, bins_arr, lax.rev(bins_arr, (0,))), x, side, None,
                          "scan" if method is None else method)
    return _where(ascending, found, lax.sub(_const(found, n), found))
  increasing = searchsorted(bins_arr, x, side=side, **kw)
  decreasing = lax.sub(_const(increasing, n),
                       searchsorted(lax.rev(bins_arr, (0,)), x, side=side, **kw))
  return _where(ascending, increasing, decreasing)


def _digitize_both_searches(x, bins, right=False, *, method=None):
  return _digitize(x, bins, right, method, one_search=False)


def _digitize_one_search(x, bins, right=False, *, method=None):
  return _digitize(x, bins, right, method, one_search=True)


# Traced, JAX's jaxpr (jit[name=digitize], both searches); eagerly, a program
# of one search (~45 -> ~25 us at 10 elements).
_digitize_staged = util.jit(_digitize_both_searches, static_argnames=('right', 'method'))
_digitize_staged.name = "digitize"
_digitize_eager = util.jit(_digitize_one_search, static_argnames=('right', 'method'))
_digitize_eager.name = "digitize"


def interp(x, xp, fp, left=None, right=None, period=None):
  """One-dimensional piecewise-linear interpolation of ``(xp, fp)`` at ``x``
  (``xp`` increasing); ``left``/``right`` may be ``'extrapolate'``."""
  x, xp, fp = util.ensure_arraylike("interp", x, xp, fp)
  if np.shape(xp) != np.shape(fp) or np.ndim(xp) != 1:
    raise ValueError("xp and fp must be one-dimensional arrays of equal size")
  x, xp = util.promote_dtypes_inexact(x, xp)
  fp, = util.promote_dtypes_inexact(fp)
  extrapolate = {}
  for name, value in (("left", left), ("right", right)):
    if isinstance(value, str) and value != "extrapolate":
      raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', "
                       f"but got: {value!r}")
    extrapolate[name] = isinstance(value, str)
  if is_kind(x, "c"):
    raise ValueError("jnp.interp: complex x values not supported.")
  if period is not None and np.ndim(period) != 0:
    raise ValueError(f"period must be a scalar; got {period}")
  run = _interp_eager if trace_state.trace is eval_trace else _interp
  return run(x, xp, fp, None if extrapolate["left"] else left,
             None if extrapolate["right"] else right, period,
             extrapolate_left=extrapolate["left"], extrapolate_right=extrapolate["right"])


# One library program: eager calls run it as one cached program, not the
# ~40 primitives op by op (10 elements: 4.7 ms -> see benchmarks/eager_sweep.py).
@util.jit(static_argnames=("extrapolate_left", "extrapolate_right"))
def _interp(x, xp, fp, left, right, period, *, extrapolate_left, extrapolate_right):
  return _interp_equations(x, xp, fp, left, right, period, extrapolate_left,
                           extrapolate_right, lean=False)


def _interp_lean(x, xp, fp, left, right, period, *, extrapolate_left, extrapolate_right):
  return _interp_equations(x, xp, fp, left, right, period, extrapolate_left,
                           extrapolate_right, lean=True)


# Eagerly, the search inline and lean (no nested searchsorted jit): past the
# compare-all limit its count is the fused np.searchsorted of the sorted xp
# where the staged search co-sorts the queries (the same indices; 1e6
# queries in 100 points, loaded machine: 280 -> 95 ms, NumPy 30 ms).
_interp_eager = util.jit(_interp_lean, static_argnames=("extrapolate_left", "extrapolate_right"))
_interp_eager.name = "_interp"


def _interp_equations(x, xp, fp, left, right, period, extrapolate_left, extrapolate_right,
                      lean: bool):
  if period is not None:
    period = _abs_of_period(period)
    x, xp = _mod(x, period), _mod(xp, period)
    xp, fp = lax.sort_key_val(xp, fp)
    xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
    fp = concatenate([fp[-1:], fp, fp[:1]])
  found = (_searchsorted(xp, x, "right", None, "scan", lean=True) if lean
           else searchsorted(xp, x, side="right"))
  i = clip(found, 1, np.shape(xp)[0] - 1)
  df = fp[i] - fp[i - 1]
  dx = xp[i] - xp[i - 1]
  delta = x - xp[i - 1]
  eps = np.spacing(dtypes.finfo(dtypes.dtype(xp)).eps)
  dx0 = lax.le(lax.abs(dx), const(dx, eps))
  f = where(dx0, fp[i - 1], fp[i - 1] + delta / where(dx0, 1, dx) * df)
  if not extrapolate_left and period is None:
    f = where(x < xp[0], fp[0] if left is None else left, f)
  if not extrapolate_right and period is None:
    f = where(x > xp[-1], fp[-1] if right is None else right, f)
  return f


def _abs_of_period(v):
  v = util.ensure_arraylike("interp", v)
  return v if is_kind(v, "u", "b") else lax.abs(v)


def _mod(x, period):
  return x % period   # dispatches to jnp.remainder


# ---------------------------------------------------------------- counting
def _scatter_add_1d(length: int, indices, updates, dtype):
  """``zeros(length).at[indices].add(updates)``, out-of-range indices dropped."""
  zeros = lax.full((length,), 0, dtype)
  idx = lax.broadcast_in_dim(indices, np.shape(indices) + (1,), tuple(range(np.ndim(indices))))
  dnums = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
  return lax.scatter_add(zeros, idx, updates, dnums, mode="drop")


def bincount(x, weights=None, minlength=0, *, length=None):
  """Count of each non-negative integer in ``x`` (weighted by ``weights``);
  ``length`` fixes the output size (needed under ``jit``)."""
  x = util.ensure_arraylike("bincount", x)
  dt = util.dtype_of(x)   # once: ~2 us a call eagerly
  if dt == np.bool_:
    if length is None:   # (else converted in the program: an eager bind costs ~3 us)
      x = _convert(x, np.int32)
  elif dtypes.kind(dt) not in "iu":
    raise TypeError(f"x argument to bincount must have an integer type; got {dt}")
  if np.ndim(x) != 1:
    raise ValueError("only 1-dimensional input supported.")
  minlength = concrete_or_error(operator.index, minlength,
                                "The error occurred because of argument 'minlength' of "
                                "jnp.bincount.")
  if length is None:
    concrete_or_error(None, x, "The error occurred because of argument 'x' of jnp.bincount. "
                      "To avoid this error, pass a static `length` argument.")
    top = int(_max(x, initial=0)) if np.size(x) else -1
    length = max(minlength, top + 1)
  else:
    length = concrete_or_error(operator.index, length, "The error occurred because of "
                               "argument 'length' of jnp.bincount.")
  if weights is not None:
    weights = util.ensure_arraylike("bincount", weights)
    if np.shape(x) != np.shape(weights):
      raise ValueError("type of weights must match type of x. Got "
                       f"typeof(x)={util.shape_of(x)} and "
                       f"typeof(weights)={util.shape_of(weights)}")
  if trace_state.trace is eval_trace:
    return _bincount_eager(x, weights, length=length)
  return _bincount(x, weights, length=length, lean=False)


def _bincount(x, weights, *, length: int, lean: bool):
  if util.dtype_of(x) == np.bool_:
    x = _convert(x, np.int32)
  counting = weights is None
  if counting:   # made here: a NumPy operand would take the program's slow path
    weights = np.array(1, dtype=dtypes.default_int_dtype())
  dt = util.dtype_of(weights)
  indices = lax.max(x, _const(x, 0))
  n = np.shape(x)[0]
  if lean and counting and 0 < length * n <= _BINCOUNT_COMPARE_ALL_LIMIT:
    # Counts by comparing every element with every bin, summed over
    # contiguous rows (exact: the scatter-add's bits): the scatter kernel's
    # own cost was half of a call at 10 elements (10.5 -> 8.6 us a call; equal
    # at 1e3 elements in 6 bins, and slower past that or with weights).
    hits = lax.eq(lax.broadcast_in_dim(indices, (length, n), (1,)),
                  lax.broadcasted_iota(util.dtype_of(x), (length, n), 0))
    return _sum(hits, axis=1, dtype=dt)
  updates = util.broadcast_to_shape(weights, np.shape(x))
  return _scatter_add_1d(length, indices, updates, dt)


def _bincount_lean(x, weights, *, length: int):
  return _bincount(x, weights, length=length, lean=True)


# Traced, JAX's equations inline (clip and scatter-add); eagerly, one library
# program that counts integers without the scatter (the same bits).
_bincount_eager = util.jit(_bincount_lean, static_argnames=("length",))
_bincount_eager.name = "bincount"


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - NumPy's name
  """The edges ``histogram`` uses: ``bins + 1`` evenly spaced values over
  ``range`` (default: the data's min and max), or ``bins`` itself if 1-D."""
  del weights
  if isinstance(bins, str):
    raise NotImplementedError("string values for `bins` not implemented.")
  util.check_arraylike("histogram_bin_edges", a, bins)
  arr = util.asarray_operand(a)
  dtype = util.to_inexact_dtype(util.dtype_of(arr))
  if np.ndim(bins) == 1:
    return asarray(bins, dtype=dtype)
  n_bins = concrete_or_error(operator.index, bins, "bins argument of histogram_bin_edges")
  if range is None:
    lo, hi = _min(arr), _max(arr)
  else:
    if np.shape(range) != (2,):
      raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    lo, hi = range
  lo, hi = _convert(lo, dtype), _convert(hi, dtype)
  same = lax.eq(lo, hi)
  half = np.array(0.5, dtype)
  lo = lax.select(same, lax.sub(lo, half), lo)
  hi = lax.select(same, lax.add(hi, half), hi)
  # JAX's linspace(lo, hi, n_bins + 1): lo*(1-t) + hi*t, then hi exactly.
  t = lax.div(lax.iota(dtype, n_bins), np.array(n_bins, dtype))
  one_minus_t = lax.sub(np.array(1, dtype), t)
  edges = lax.add(lax.mul(lo, one_minus_t), lax.mul(hi, t))
  return lax.concatenate([edges, lax.broadcast_in_dim(hi, (1,), ())], 0)


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
  """Counts of ``a`` in each bin and the bin edges (``numpy.histogram``)."""
  if not isinstance(bins, str) and np.ndim(bins) == 1:
    # Edges given as an array: an operand of the program, not a static argument.
    return _histogram_of_edges(a, bins, range, weights, density=density)
  return _histogram_of_count(a, bins, range, weights, density=density)


def _histogram(a, bins, range, weights, density):  # noqa: A002
  if weights is None:
    a, _ = util.ensure_arraylike("histogram", a, bins)
    (a,) = util.promote_dtypes_inexact(a)
    weights = lax.full(np.shape(a), 1, util.dtype_of(a))
  else:
    a, _, weights = util.ensure_arraylike("histogram", a, bins, weights)
    if np.shape(a) != np.shape(weights):
      raise ValueError("weights should have the same shape as a.")
    a, weights = util.promote_dtypes_inexact(a, weights)
  edges = histogram_bin_edges(a, bins, range, weights)
  n_edges = np.shape(edges)[0]
  idx = searchsorted(edges, a, side="right")
  # The last edge closes the last bin.
  at_end = lax.eq(a, lax.broadcast_in_dim(lax.index_in_dim(edges, n_edges - 1, keepdims=False),
                                          np.shape(a), ()))
  idx = _where(at_end, n_edges - 1, idx)
  counts = _scatter_add_1d(n_edges, _ravel(idx), _ravel(weights),
                           util.dtype_of(weights))
  counts = lax.slice_in_dim(counts, 1, n_edges)
  if density:
    widths = lax.sub(lax.slice_in_dim(edges, 1, n_edges), lax.slice_in_dim(edges, 0, n_edges - 1))
    counts = lax.div(lax.div(counts, widths), _sum(counts))
  return counts, edges


# Eager calls run as one library program (a range of arrays is no static
# argument: such calls run inline).
_histogram_of_count = eager_program(static_argnames=("bins", "range", "density"))(_histogram)
_histogram_of_edges = eager_program(static_argnames=("range", "density"))(_histogram)


# ------------------------------------------------------------------ unique
_UNIQUE_SIZE_HINT = (
    "To make jnp.unique() compatible with JIT and other transforms, you can specify "
    "a concrete value for the size argument, which will determine the output size.")


def _take0(x, idx):
  """``x[idx]`` along axis 0 for in-range integer ``idx``."""
  return lax.index_take(x, (idx,), (0,))


def _nonzero_1d(mask, size: int, int_dtype):
  """Positions of the first ``size`` True entries of 1-D ``mask`` (0 after)."""
  count = _sum(mask, dtype=int_dtype)
  targets = lax.add(lax.iota(int_dtype, size), _const(count, 1))
  pos = searchsorted(cumsum(mask, dtype=int_dtype), targets, side="left")
  pos = _convert(pos, int_dtype)
  return _where(lax.lt(lax.iota(int_dtype, size), count), pos, _const(pos, 0)), count


@util.jit(static_argnames=("equal_nan",))   # jitted as in JAX (its jaxprs name it)
def _unique_sorted_mask(aux, equal_nan: bool):
  """Rows of ``aux`` (unique axis first) sorted lexicographically, the mask
  of rows differing from their predecessor, and the sorting permutation."""
  n = np.shape(aux)[0]
  int_dtype = dtypes.default_int_dtype()
  if dtypes.kind(util.dtype_of(aux)) == "c":
    aux = _where(_isnan(aux), _const(aux, np.nan), aux)
  if np.ndim(aux) == 1:
    aux, perm = lax.sort_key_val(aux, lax.iota(int_dtype, n))
  else:
    # Rows sort lexicographically: one sort key per column, first column first.
    cols = int(np.prod(np.shape(aux)[1:], dtype=np.int64))
    flat = lax.reshape(aux, (n, cols))
    keys = [lax.reshape(lax.slice_in_dim(flat, j, j + 1, axis=1), (n,)) for j in range(cols)]
    perm = lax.sort((*keys, lax.iota(int_dtype, n)), num_keys=cols)[-1]
    aux = _take0(aux, perm)
  if n > 1:
    cur, prev = lax.slice_in_dim(aux, 1, n), lax.slice_in_dim(aux, 0, n - 1)
    neq = lax.ne(cur, prev)
    if dtypes.kind(util.dtype_of(aux)) in "fc" and equal_nan:
      both_nan = lax.bitwise_and(_isnan(cur), _isnan(prev))
      neq = lax.bitwise_and(neq, lax.bitwise_not(both_nan))
    differs = _any(neq, axis=tuple(range(1, np.ndim(aux))))
    mask = lax.concatenate([lax.full((1,), True, np.bool_), differs], 0)
  else:
    mask = lax.full((n,), True, np.bool_)
  return aux, mask, perm


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, size=None, fill_value=None, sorted=True):  # noqa: A002
  """Sorted unique elements (or slices along ``axis``) of ``ar``. Without
  ``size`` the input must be concrete; with it, the result has ``size``
  entries, padded with ``fill_value`` (default: the smallest unique value)."""
  if trace_state.trace is eval_trace:
    return _unique_eager(ar, return_index, return_inverse, return_counts, axis,
                         equal_nan=equal_nan, size=size, fill_value=fill_value, sorted=sorted)
  return _unique_front(ar, return_index, return_inverse, return_counts, axis, equal_nan=equal_nan,
                       size=size, fill_value=fill_value, sorted=sorted, lean=False)


def _unique_lean(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
                 *, equal_nan=True, size=None, fill_value=None, sorted=True):  # noqa: A002
  return _unique_front(ar, return_index, return_inverse, return_counts, axis, equal_nan=equal_nan,
                       size=size, fill_value=fill_value, sorted=sorted, lean=True)


# Traced, JAX's equations inline (jit[name=_unique_sorted_mask], nonzero's
# cumsum and search per result); eagerly, one library program of a lean
# formulation with the same bits: a values-only sort when no result needs
# the permutation, one search for the values' and the counts' bounds, plain
# in-bounds gathers (unique_counts(size=3) at 10 elements: ~60 -> ~30 steps).
_unique_eager = util.jit(_unique_lean, static_argnames=(
    "return_index", "return_inverse", "return_counts", "axis", "equal_nan", "size", "sorted"))
_unique_eager.name = "unique"


def _unique_front(ar, return_index, return_inverse, return_counts, axis, *, equal_nan, size,
                  fill_value, sorted, lean: bool):  # noqa: A002
  del sorted
  arr = util.ensure_arraylike("unique", ar)
  if size is None:
    concrete_or_error(None, arr, "The error arose for the first argument of jnp.unique(). "
                      + _UNIQUE_SIZE_HINT)
  else:
    size = concrete_or_error(operator.index, size, "The error arose for the size argument "
                             "of jnp.unique(). " + _UNIQUE_SIZE_HINT)
  arr_shape = np.shape(arr)
  if axis is None:
    axis_int = 0
    arr = _ravel(arr)
  else:
    axis_int = util.canonicalize_axis(axis, np.ndim(arr))
  unique_of = _unique_lean_1d if lean and np.ndim(arr) == 1 else _unique
  result = unique_of(arr, axis_int, return_index, return_inverse, return_counts,
                     equal_nan=equal_nan, size=size, fill_value=fill_value)
  if return_inverse and axis is None:
    i = 2 if return_index else 1
    result = (*result[:i], lax.reshape(result[i], arr_shape), *result[i + 1:])
  return result


def _moveaxis(x, src: int, dst: int):
  if src == dst:
    return x
  perm = [i for i in range(np.ndim(x)) if i != src]
  perm.insert(dst, src)
  return lax.transpose(x, tuple(perm))


def _unique(ar, axis: int, return_index, return_inverse, return_counts, *, equal_nan, size,
            fill_value):
  n = np.shape(ar)[axis]
  int_dtype = dtypes.default_int_dtype()
  if n == 0 and size and fill_value is None:
    raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                     "fill_value must be specified")
  aux = _moveaxis(ar, axis, 0)
  rest = np.shape(aux)[1:]
  if n == 0 or 0 in rest:
    return _unique_empty(aux, axis, n, return_index, return_inverse, return_counts, size,
                         fill_value)
  aux, mask, perm = _unique_sorted_mask(aux, equal_nan)
  if size is None:
    size = int(_sum(mask))   # the input is concrete here
    fill_value = None
  ind, count = _nonzero_1d(mask, size, int_dtype)
  result = _take0(aux, ind)
  if fill_value is not None:
    fill = _convert(fill_value, util.dtype_of(result))
    valid = lax.lt(lax.iota(int_dtype, size), count)
    valid = lax.broadcast_in_dim(valid, np.shape(result), (0,))
    result = lax.select(valid, result, lax.broadcast_in_dim(fill, np.shape(result), ()))
  ret = (_moveaxis(result, 0, axis),)
  if return_index:
    ret += (_take0(perm, ind),)
  if return_inverse:
    imask = lax.sub(cumsum(mask, dtype=int_dtype), _const(count, 1))
    ret += (lax.sort_key_val(perm, imask)[1],)   # scatter imask to perm's positions
  if return_counts:
    # Slice boundaries: the first size+1 True positions, then n (JAX pads
    # nonzero's result with 0 and replaces every padded entry after the first).
    bounds, _ = _nonzero_1d(mask, size + 1, int_dtype)
    padded = lax.bitwise_and(lax.eq(bounds, _const(bounds, 0)),
                             lax.gt(lax.iota(int_dtype, size + 1), _const(bounds, 0)))
    bounds = _where(padded, _const(bounds, n), bounds)
    ret += (lax.sub(lax.slice_in_dim(bounds, 1, size + 1), lax.slice_in_dim(bounds, 0, size)),)
  return ret[0] if len(ret) == 1 else ret


def _unique_lean_1d(ar, axis: int, return_index, return_inverse, return_counts, *, equal_nan,
                    size, fill_value):
  """``_unique`` of a 1-D array in fewer, cheaper equations, bit for bit."""
  n = np.shape(ar)[0]
  int_dtype = dtypes.default_int_dtype()
  if n == 0:
    return _unique(ar, axis, return_index, return_inverse, return_counts, equal_nan=equal_nan,
                   size=size, fill_value=fill_value)
  aux = ar
  if dtypes.kind(util.dtype_of(aux)) == "c":
    aux = _where(_isnan(aux), _const(aux, np.nan), aux)
  perm = None
  if return_index or return_inverse:
    aux, perm = lax.sort_key_val(aux, lax.iota(int_dtype, n))
  else:   # the same sorted values (a stable sort): no permutation made
    aux = lax.sort(aux)
  if n > 1:
    cur, prev = lax.slice_in_dim(aux, 1, n), lax.slice_in_dim(aux, 0, n - 1)
    neq = lax.ne(cur, prev)
    if dtypes.kind(util.dtype_of(aux)) in "fc" and equal_nan:
      neq = lax.bitwise_and(neq, lax.bitwise_not(lax.bitwise_and(_isnan(cur), _isnan(prev))))
    mask = lax.concatenate([lax.full((1,), True, np.bool_), neq], 0)
  else:
    mask = lax.full((n,), True, np.bool_)
  rank = lax.cumsum(_convert(mask, int_dtype), 0)
  if size is None:
    size = int(rank[-1])   # the input is concrete here
    fill_value = None
  # The positions of the first size (+1 for the counts) True entries, n past
  # the last: the counts' bounds and, below n, the values' positions.
  n_bounds = size + 1 if return_counts else size
  targets = lax.add(lax.iota(int_dtype, n_bounds), _const(rank, 1))
  if n * n_bounds <= _COMPARE_ALL_LIMIT:
    # Every (target, rank) pair, the ranks along the last axis: the count
    # sums contiguous rows (summing over the first axis of (1000, 2) cost ~5x).
    below = lax.lt(lax.broadcast_in_dim(rank, (n_bounds, n), (1,)),
                   lax.broadcast_in_dim(targets, (n_bounds, n), (0,)))
    bounds = _sum(below, axis=1, dtype=int_dtype)
  else:
    bounds = _convert(_searchsorted(rank, targets, "left", None, "scan"), int_dtype)
  first = lax.slice_in_dim(bounds, 0, size) if return_counts else bounds
  valid = lax.lt(first, _const(first, n))
  ind = lax.select(valid, first, lax.full((size,), 0, int_dtype))
  result = _take_in_bounds(aux, ind)
  if fill_value is not None:
    fill = lax.broadcast_in_dim(_convert(fill_value, util.dtype_of(result)), (size,), ())
    result = lax.select(valid, result, fill)
  ret = (result,)
  if return_index:
    ret += (_take_in_bounds(perm, ind),)
  if return_inverse:
    ret += (lax.sort_key_val(perm, lax.sub(rank, _const(rank, 1)))[1],)
  if return_counts:
    ret += (lax.sub(lax.slice_in_dim(bounds, 1, size + 1), first),)
  return ret[0] if len(ret) == 1 else ret


def _take_in_bounds(x, idx):
  """``x[idx]`` for 1-D ``x`` and in-bounds ``idx``: one gather (index_take
  adds the wrap of negative indices, three more equations)."""
  return lax.gather(x, lax.broadcast_in_dim(idx, np.shape(idx) + (1,), (0,)), _GATHER_1D, (1,),
                    mode="promise_in_bounds")


def _unique_empty(aux, axis, n, return_index, return_inverse, return_counts, size, fill_value):
  int_dtype = dtypes.default_int_dtype()
  rest = np.shape(aux)[1:]
  rows = 0 if n == 0 else 1
  out_rows = rows if size is None else size
  result = lax.full((out_rows,) + rest, 0 if fill_value is None else fill_value,
                    util.dtype_of(aux))
  ret = (_moveaxis(result, 0, axis),)
  if return_index:
    ret += (lax.full((rows,), 0, int_dtype),)
  if return_inverse:
    ret += (lax.full((n,), 0, int_dtype),)
  if return_counts:
    ret += (lax.full((rows,), n, int_dtype),)
  return ret[0] if len(ret) == 1 else ret


class _UniqueAllResult(NamedTuple):
  values: object
  indices: object
  inverse_indices: object
  counts: object


class _UniqueCountsResult(NamedTuple):
  values: object
  counts: object


class _UniqueInverseResult(NamedTuple):
  values: object
  inverse_indices: object


def unique_all(x, /, *, size=None, fill_value=None):
  """Unique values with their first indices, inverse indices and counts."""
  x = util.ensure_arraylike("unique_all", x)
  vals, idx, inv, counts = unique(x, return_index=True, return_inverse=True, return_counts=True,
                                  equal_nan=False, size=size, fill_value=fill_value)
  return _UniqueAllResult(values=vals, indices=idx, inverse_indices=inv, counts=counts)


def unique_counts(x, /, *, size=None, fill_value=None):
  """Unique values and their counts."""
  x = util.ensure_arraylike("unique_counts", x)
  vals, counts = unique(x, return_counts=True, equal_nan=False, size=size,
                        fill_value=fill_value)
  return _UniqueCountsResult(values=vals, counts=counts)


def unique_inverse(x, /, *, size=None, fill_value=None):
  """Unique values and the indices that rebuild ``x`` from them."""
  x = util.ensure_arraylike("unique_inverse", x)
  vals, inv = unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value)
  return _UniqueInverseResult(values=vals, inverse_indices=inv)


def unique_values(x, /, *, size=None, fill_value=None):
  """Unique values of ``x``."""
  x = util.ensure_arraylike("unique_values", x)
  return unique(x, equal_nan=False, size=size, fill_value=fill_value)
