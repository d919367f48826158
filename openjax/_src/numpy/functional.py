"""Functional programming helpers of ``jax.numpy``: ``piecewise``,
``apply_along_axis`` and ``apply_over_axes``.

NumPy runs these as Python loops over slices; here they are transformations:
``apply_along_axis`` is a stack of ``vmap``s and ``piecewise`` is a
``lax.switch`` vectorized over the elements of ``x``, so all of them trace
once and work under ``jit``, ``grad`` and ``vmap``.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from openjax._src import lax
from openjax._src.api.transform_cache import call_transformed
from openjax._src.api.vmap import vmap
from openjax._src.control.trace_cache import fun_key
from openjax._src.numpy import util
from openjax._src.numpy.creation import array, asarray
from openjax._src.numpy.reductions import argmax, cumsum
from openjax._src.numpy.vectorize import vectorize

__all__ = ["piecewise", "apply_along_axis", "apply_over_axes"]


def piecewise(x, condlist, funclist: Sequence[Any], *args, **kw):
  """Evaluate a function defined piecewise over the domain of ``x``
  (``numpy.piecewise``), as a ``lax.switch`` per element.

  Args:
    x: the input array.
    condlist: a boolean array, or a sequence of boolean arrays broadcastable
      to ``x``'s shape, one per piece. Where several conditions hold, the last
      one wins (as in NumPy).
    funclist: one entry per condition, or one more: the last entry is then the
      default used where no condition holds (otherwise the default is 0). An
      entry is a function, called as ``f(x_element, *args, **kw)``, or a
      constant. Results are cast to ``x``'s dtype.
    args, kw: extra arguments passed to every function of ``funclist``.

  Returns:
    an array with the shape and dtype of ``x``.

  Unlike NumPy, every function is traced (on scalars) and must be
  traceable; all of them are evaluated, and ``lax.switch`` picks per element.
  """
  x = util.ensure_arraylike("piecewise", x)
  n_cond, n_fun = len(condlist), len(funclist)
  if n_fun == n_cond + 1:
    # Branch 0 is the default: branch i + 1 belongs to condition i.
    branches = [funclist[-1], *funclist[:-1]]
  elif n_fun == n_cond:
    branches = [0, *funclist]
  else:
    raise ValueError(f"with {n_cond} condition(s), either {n_cond} or {n_cond + 1} "
                     f"functions are expected; got {n_fun}")
  const_at = tuple(i for i, c in enumerate(branches) if not callable(c))
  funcs = frozenset((i, _SameTrace(f)) for i, f in enumerate(branches) if callable(f))
  # The constants and extra arguments go positionally, each a leaf: an eager
  # call is then keyed by their types alone (a dict or tuple of them would
  # send every call through jit's general path: ~60 us more).
  return _piecewise(x, asarray(condlist, dtype=bool), *(branches[i] for i in const_at), *args,
                    funcs=funcs, const_at=const_at, **kw)


class _SameTrace:
  """A function as a static argument, equal to another that traces the same
  (``control/trace_cache.fun_key``): ``jnp.piecewise(x, c, [lambda t: ...])``
  called again with fresh lambdas reuses the traced program."""
  __slots__ = ("fun", "key")

  def __init__(self, fun: Callable):
    self.fun, self.key = fun, fun_key(fun)

  def __hash__(self):
    return hash(self.key)

  def __eq__(self, other):
    return type(other) is _SameTrace and self.key == other.key


@util.jit(static_argnames=("funcs", "const_at"))
def _piecewise(x, conds, *consts_and_args, funcs: frozenset, const_at: tuple, **kw):
  # ``funcs`` is a static argument (the functions shape the trace); the
  # constants (of the branches ``const_at``) and extra arguments are traced
  # operands of the jit.
  consts = dict(zip(const_at, consts_and_args))
  args = consts_and_args[len(const_at):]
  by_index = {i: f.fun for i, f in funcs}
  dtype = x.dtype

  def calling(f: Callable) -> Callable:
    return lambda xi: lax.convert_element_type(f(xi, *args, **kw), dtype)

  def constant(c) -> Callable:
    return lambda xi: array(c, dtype=dtype)

  branches = [calling(by_index[i]) if i in by_index else constant(consts[i])
              for i in range(conds.shape[0] + 1)]
  # Index of the last true condition, plus one (0 where none holds): the
  # running count of true conditions first reaches its final value there.
  no_cond = lax.full((1,) + tuple(conds.shape[1:]), False, bool)
  counts = cumsum(lax.concatenate([no_cond, conds], 0), axis=0)
  which = argmax(counts, axis=0)
  return vectorize(lax.switch, excluded=(1,))(which, branches, x)


def apply_along_axis(func1d: Callable, axis: int, arr, *args, **kwargs):
  """Apply ``func1d`` to the 1-D slices of ``arr`` along ``axis``
  (``numpy.apply_along_axis``), by ``vmap`` over the other axes.

  ``func1d(slice, *args, **kwargs)`` sees one slice of length
  ``arr.shape[axis]``; its result's dimensions replace ``axis`` in the output
  (a scalar result removes it). ``func1d`` must be traceable.
  """
  util.check_arraylike("apply_along_axis", arr)
  return call_transformed(("apply_along_axis", axis), func1d,
                          functools.partial(_apply_along_axis, func1d, axis), (arr, *args),
                          kwargs)


def _apply_along_axis(func1d: Callable, axis: int, arr, *args, **kwargs):
  ndim = np.ndim(arr)
  axis = util.canonicalize_axis(axis, ndim)
  fun = lambda a: func1d(a, *args, **kwargs)  # noqa: E731
  # The axes after ``axis`` go last in the output, in order: the outermost of
  # these vmaps maps the last axis and appends it, each inner one the axis
  # before, so the innermost (mapping ``axis + 1``) appends first.
  for i in range(1, ndim - axis):
    fun = vmap(fun, in_axes=i, out_axes=-1)
  # The axes before ``axis``: ordinary leading-axis maps.
  for _ in range(axis):
    fun = vmap(fun, in_axes=0, out_axes=0)
  return fun(arr)


def apply_over_axes(func: Callable, a, axes: Sequence[int]):
  """Apply ``func(a, axis)`` repeatedly, once per axis in ``axes``
  (``numpy.apply_over_axes``); a result that lost ``axis`` gets it back as a
  size-1 axis, so the output keeps ``a``'s rank (like ``keepdims=True``)."""
  # Op by op, not a cached program (``call_transformed``): ``func`` is
  # typically one library program already (``jnp.sum``), and a program
  # calling it costs more than calling it (measured: 14 us against 22 us).
  a = util.ensure_arraylike("apply_over_axes", a)
  for axis in (axes,) if np.ndim(axes) == 0 else axes:
    b = func(a, axis)
    if b.ndim == a.ndim:
      a = b
    elif b.ndim == a.ndim - 1:
      a = lax.expand_dims(b, (axis,))
    else:
      raise ValueError("function is not returning an array of the correct shape")
  return a
