"""Eager calls of ``custom_jvp``/``custom_vjp`` functions.

Outside any transformation JAX runs a custom function's primal function as
it is, op by op (``jnp.logaddexp``: ten primitives, ~2.3 us a bind). Where
that cannot change what the call does, ``call_primal`` runs the primal
function's cached program instead, through the eager library runner
(``api/eager_call.py``: ~0.6 us a step plus ~3 us a call), which computes
the same bits with the same kernels. That holds when

* the function only computes (``trace_cache.pure_fun_key``: no print, no
  write to an outer variable, no unknown callee), so skipping its Python
  body loses nothing; its key also changes when a global it reads is
  rebound or a closed-over value is replaced, and a new key runs op by op
  again until it is seen twice in a row (a global reassigned every call, a
  custom function made afresh every call, never pays for a trace);
* its differentiable arguments are Arrays (a Python scalar stays a Python
  number op by op, where a program would make it an array) and its
  non-differentiable ones hash (they are the program's static arguments);
* every result is computed from the arguments (a constant result is
  returned as it is op by op, as a new array by a program);
* the program could be made: any error while tracing or running it runs
  the function op by op from then on, which raises the eager error, if any.

A body that needs an argument's value (``if x > 0``) runs op by op, as the
eager library runner runs such calls (its ``INLINE`` entries).
"""
from __future__ import annotations

import functools
from types import FunctionType

import numpy as np

from openjax._src import tree_util
from openjax._src.api.jit import jit
from openjax._src.control.loop_dispatch import has_loop
from openjax._src.control.trace_cache import pure_fun_key
from openjax._src.core import Array, Tracer, current_trace, eval_trace
from openjax._src.core.array import ShardedBuffer

# Closed-over values that cannot change what a library function computes.
_FIXED_TYPES = (bool, int, float, complex, str, bytes, type(None))
_MAX_DEPTH = 4
_MAX_MISSES = 8


class _ConstantOutput(Exception):
  """A primal function returned a value not computed from its arguments."""


def _fixed_library_function(fun, depth: int = 0) -> bool:
  """Whether ``fun`` is library code whose key cannot change: its globals are
  the library's and its closure holds only numbers, strings and such
  functions (``jnp.logaddexp``'s primal, made by a factory over ``lax.exp``
  and two floats). Its key is then computed once, not per call (~5 us)."""
  if type(fun) is not FunctionType or depth > _MAX_DEPTH:
    return False
  if not fun.__globals__.get("__name__", "").startswith("openjax."):
    return False
  for cell in fun.__closure__ or ():
    v = cell.cell_contents
    if not _fixed_value(v) and not _fixed_library_function(v, depth + 1):
      return False
  return all(_fixed_value(v) for v in fun.__defaults__ or ())


def _fixed_value(v) -> bool:
  """Whether a non-differentiable argument is a value a program may be
  keyed by (numbers, NumPy scalars and dtypes, strings, tuples of them); a
  function or an object may have effects or change, which no key would
  see."""
  t = type(v)
  if t is tuple:
    return all(_fixed_value(x) for x in v)
  return t in _FIXED_TYPES or isinstance(v, (np.generic, np.dtype))


def _checked_outputs(fun):
  """``fun`` for tracing: it raises ``_ConstantOutput`` where a result is not
  a tracer (a constant or a Python number it returns as it is)."""
  @functools.wraps(fun)
  def primal(*args):
    out = fun(*args)
    if current_trace() is not eval_trace:
      for leaf in tree_util.tree_leaves(out):
        if not isinstance(leaf, Tracer):
          raise _ConstantOutput
    return out
  return primal


class EagerPrimal:
  """The eager-call state of one custom function: the key its primal
  function had last call, the eager library function of that key, and how
  many calls in a row found no key or a new one (past ``_MAX_MISSES`` the
  function runs op by op without computing its key: ~2 us a call saved for
  a function with an effect or one reading a global replaced every call)."""
  __slots__ = ("key", "fixed", "jitted", "off", "misses")

  def __init__(self, fun):
    self.key = None
    self.fixed = _fixed_library_function(fun)
    self.jitted = None
    self.off = type(fun) is not FunctionType   # a jit wrapper runs its own program
    self.misses = 0

  def __call__(self, fun, nondiff: tuple, args: tuple):
    """The results of the eager call ``fun(*args)``."""
    if self.off:
      return fun(*args)
    for i, a in enumerate(args):
      if i in nondiff:
        if not _fixed_value(a):
          return fun(*args)
      elif type(a) is not Array or (a._np is None or a._device is not None
                                    or type(a._buffer) is ShardedBuffer):
        # The general path would decide per call (placement, pytrees): op by
        # op is cheaper.
        return fun(*args)
    jitted = self.jitted
    if jitted is None or not self.fixed:
      key = pure_fun_key(fun)
      if key is None or key != self.key:   # first seen: op by op, until it comes again
        self.key, self.jitted = key, None
        self.misses += 1
        self.off = self.misses > _MAX_MISSES
        return fun(*args)
      self.misses = 0
      if jitted is None:
        jitted = jit(_checked_outputs(fun), static_argnums=nondiff, _eager=True)
        try:
          loops = has_loop(jitted.trace(*args).jaxpr.jaxpr)
        except Exception:   # noqa: BLE001 - op by op decides, and raises the eager error
          loops = True
        if loops:
          # A loop inside the library program runs its body interpreted each
          # trip; op by op, the eager loop runs as its own cached program
          # (scipy.special.exp1 at 12 elements: 7 ms vs 0.1 ms).
          self.off = True
          return fun(*args)
        self.jitted = jitted
    try:
      return jitted(*args)
    except Exception:   # noqa: BLE001 - op by op decides, and raises the eager error
      self.off, self.jitted = True, None
      return fun(*args)
