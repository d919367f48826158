"""``jnp.ufunc`` and ``jnp.frompyfunc``: a scalar function (of ``nin`` arrays)
made into a NumPy-style universal function with broadcasting calls and the
``reduce``, ``accumulate``, ``reduceat``, ``outer`` and ``at`` methods.

Methods without a specialised implementation loop with ``fori_loop``/``scan``
over the reduced axis, calling the function on whole slices, so any
jax.numpy-traceable function works (and the result is differentiable and jittable).
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from openjax._src import lax
from openjax._src.api.staged import eval_shape
from openjax._src.api.vmap import vmap
from openjax._src.control.scan import fori_loop, scan
from openjax._src.numpy import util
from openjax._src.numpy.creation import asarray
from openjax._src.numpy.indexing import take
from openjax._src.numpy.misc import where
from openjax._src.numpy.shape_joining import append
from openjax._src.numpy.shape_reshaping import broadcast_to, moveaxis
from openjax._src.numpy.vectorize import vectorize

__all__ = ["frompyfunc", "ufunc"]


class ufunc:
  """A universal function: ``ufunc(func, nin, nout, identity=...)``; the
  optional ``call``/``reduce``/``accumulate``/``at``/``reduceat`` replace the
  generic implementations."""

  def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *,
               name: str | None = None, nargs: int | None = None, identity: Any = None,
               call: Callable | None = None, reduce: Callable | None = None,
               accumulate: Callable | None = None, at: Callable | None = None,
               reduceat: Callable | None = None):
    self.__doc__ = func.__doc__
    self.__name__ = name or func.__name__
    self._func = func
    self.nin = operator.index(nin)
    self.nout = operator.index(nout)
    self.nargs = operator.index(nargs or nin)
    self.identity = identity
    self._overrides = dict(call=call, reduce=reduce, accumulate=accumulate, at=at,
                           reduceat=reduceat)

  def _key(self):
    return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

  def __hash__(self) -> int:
    return hash(self._key())

  def __eq__(self, other: Any) -> bool:
    return isinstance(other, ufunc) and self._key() == other._key()

  def __repr__(self) -> str:
    return f"<jnp.ufunc '{self.__name__}'>"

  def __call__(self, *args, out=None, where=None):
    util.check_arraylike(self.__name__, *args)
    if out is not None:
      raise NotImplementedError(f"out argument of {self}")
    if where is not None:
      raise NotImplementedError(f"where argument of {self}")
    call = self._overrides["call"] or vectorize(self._func)
    return call(*args)

  def _binary(self, method: str) -> None:
    if self.nin != 2:
      raise ValueError(f"{method} only supported for binary ufuncs")
    if self.nout != 1:
      raise ValueError(f"{method} only supported for functions returning a single value")

  def _result_dtype(self, *arrays):
    one = [lax.full((), 1, asarray(a).dtype) for a in arrays]
    return eval_shape(self._func, *one).dtype

  # ------------------------------------------------------------- reduce
  def reduce(self, a, axis: int | None = 0, dtype=None, out=None, keepdims: bool = False,
             initial=None, where=None):
    """Fold the function over ``axis`` (all axes for None), left to right."""
    util.check_arraylike(f"{self.__name__}.reduce", a)
    self._binary("reduce")
    if out is not None:
      raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
    if where is not None:
      if self.identity is None and initial is None:
        raise ValueError(f"reduction operation {self.__name__!r} does not have an identity, "
                         "so to use a where mask one has to specify 'initial'.")
      if asarray(where).dtype != np.bool_:
        raise ValueError(f"where argument must have dtype=bool; got dtype={asarray(where).dtype}")
    override = self._overrides["reduce"]
    if override is not None:
      return override(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                      where=where)
    return self._reduce_by_loop(a, axis, dtype, keepdims, initial, where)

  def _reduce_by_loop(self, arr, axis, dtype, keepdims, initial, mask):
    arr = asarray(arr)
    initial = self.identity if initial is None else initial
    dtype = self._result_dtype(arr, arr) if dtype is None else dtype
    if mask is not None:
      mask = broadcast_to(mask, arr.shape)
    if isinstance(axis, tuple):
      raise NotImplementedError(f"{self.__name__}.reduce: a tuple of axes")
    if axis is None:
      final_shape = (1,) * arr.ndim if keepdims else ()
      arr, axis = arr.ravel(), 0
      mask = None if mask is None else mask.ravel()
    else:
      axis = util.canonicalize_axis(axis, arr.ndim)
      final_shape = arr.shape[:axis] + ((1,) if keepdims else ()) + arr.shape[axis + 1:]
    arr = moveaxis(arr, axis, 0)
    mask = None if mask is None else moveaxis(mask, axis, 0)
    if arr.shape[0] == 0:
      if initial is None:
        raise ValueError(f"zero-size array to reduction operation {self.__name__} which has "
                         "no identity")
      return lax.full(final_shape, initial, dtype)

    def step(i, acc):
      new = self(acc, arr[i].astype(dtype))
      return new if mask is None else where(mask[i], new, acc)

    start = 1 if initial is None else 0
    first = arr[0] if initial is None else initial
    acc = broadcast_to(asarray(first).astype(dtype), arr.shape[1:])
    result = fori_loop(start, arr.shape[0], step, acc)
    return result.reshape(final_shape) if keepdims else result

  # --------------------------------------------------------- accumulate
  def accumulate(self, a, axis: int = 0, dtype=None, out=None):
    """Running fold along ``axis``: ``out[i] = f(out[i-1], a[i])``."""
    self._binary("accumulate")
    if out is not None:
      raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
    override = self._overrides["accumulate"]
    if override is not None:
      return override(a, axis=axis, dtype=dtype)
    util.check_arraylike(f"{self.__name__}.accumulate", a)
    arr = asarray(a)
    dtype = self._result_dtype(arr, arr) if dtype is None else dtype
    if axis is None or isinstance(axis, tuple):
      raise ValueError("accumulate does not allow multiple axes")
    axis = util.canonicalize_axis(axis, arr.ndim)
    if arr.size == 0:
      return lax.full(arr.shape, 0, dtype)
    arr = moveaxis(arr, axis, 0)

    def step(acc, x):
      acc = self(acc, x.astype(dtype))
      return acc, acc

    _, rest = scan(step, arr[0].astype(dtype), arr[1:])
    result = lax.concatenate([arr[:1].astype(dtype), rest], 0)
    return moveaxis(result, 0, axis)

  # ----------------------------------------------------------- reduceat
  def reduceat(self, a, indices, axis: int = 0, dtype=None, out=None):
    """Reduce the slices ``a[indices[i]:indices[i+1]]`` along ``axis``."""
    self._binary("reduceat")
    if out is not None:
      raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
    override = self._overrides["reduceat"]
    if override is not None:
      return override(a, indices, axis=axis, dtype=dtype)
    util.check_arraylike(f"{self.__name__}.reduceat", a, indices)
    a, indices = asarray(a), asarray(indices)
    if a.ndim == 0:
      raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={a.shape}")
    if indices.ndim != 1:
      raise ValueError(f"reduceat: indices must be one-dimensional, got "
                       f"indices.shape={indices.shape}")
    if axis is None or isinstance(axis, (tuple, list)):
      raise ValueError("reduceat requires a single integer axis.")
    axis = util.canonicalize_axis(axis, a.ndim)
    result = take(a, indices, axis=axis)
    bounds = append(indices, a.shape[axis])
    shape = [1] * result.ndim
    shape[axis] = bounds.shape[0]
    bounds = bounds.reshape(shape)
    starts = lax.slice_in_dim(bounds, 0, bounds.shape[axis] - 1, axis=axis)
    ends = lax.slice_in_dim(bounds, 1, bounds.shape[axis], axis=axis)

    def step(i, acc):
      inside = (i > starts) & (i < ends)
      return where(inside, self(acc, take(a, asarray(i).reshape(1), axis=axis)), acc)

    return fori_loop(0, a.shape[axis], step, result)

  # -------------------------------------------------------------- outer
  def outer(self, A, B, /):
    """``f(A[i...], B[j...])`` for every pair: shape ``A.shape + B.shape``."""
    self._binary("outer")
    util.check_arraylike(f"{self.__name__}.outer", A, B)
    A, B = asarray(A), asarray(B)
    result = vmap(vmap(self, (None, 0)), (0, None))(A.ravel(), B.ravel())
    return result.reshape(A.shape + B.shape)

  # ----------------------------------------------------------------- at
  def at(self, a, indices, b=None, /, *, inplace: bool = True):
    """``a`` with ``f(a[indices], b)`` at ``indices``, repeated indices applied
    repeatedly (pass ``inplace=False``: arrays are immutable)."""
    if inplace:
      raise NotImplementedError(
          "jax.numpy.ufunc.at does not support inplace=True, because JAX arrays are "
          "immutable. Use inplace=False, which returns the updated array.")
    override = self._overrides["at"]
    if override is not None:
      return override(a, indices) if b is None else override(a, indices, b)
    args = () if b is None else (b,)
    util.check_arraylike(f"{self.__name__}.at", a, *args)
    dtype = self._result_dtype(a, *args)
    a = asarray(a).astype(dtype)
    args = tuple(asarray(x).astype(dtype) for x in args)
    indices = indices if isinstance(indices, tuple) else (indices,)
    if not indices:
      return a
    shapes = [np.shape(i) for i in indices if not isinstance(i, slice)]
    shape = np.broadcast_shapes(*shapes) if shapes else ()
    if not shape:
      return a.at[indices].set(self(a.at[indices].get(), *args))
    count = math.prod(shape)
    if args:
      arg = args[0]
      arg = broadcast_to(arg, shape + arg.shape[len(shape):])
      args = (arg.reshape((count,) + arg.shape[len(shape):]),)
    flat = [i if isinstance(i, slice) else broadcast_to(asarray(i), shape).ravel()
            for i in indices]

    def step(a, k):
      idx = tuple(i if isinstance(i, slice) else i[k] for i in flat)
      return a.at[idx].set(self(a.at[idx].get(), *(x[k] for x in args))), None

    a, _ = scan(step, a, lax.iota(np.int32, count))
    return a


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None):
  """Make ``func`` (of ``nin`` arrays) a ``ufunc``."""
  return ufunc(func, nin, nout, identity=identity)
