"""Eager calls of transformations (``vmap``, ``grad``, ``vectorize``, ...)
as cached programs.

JAX traces the user's function on every eager ``jax.vmap(f)(x)`` or
``jax.grad(f)(x)`` and binds the transformed operations one by one: a few
hundred microseconds for a small function, a millisecond and more for the
gradient of a ``cond``. When the function cannot do anything but compute its
result (``control/trace_cache.pure_fun_key``: no prints, no writes outside
the call, no unknown objects), tracing it again gives the same jaxpr for the
same argument types, so the transformed function runs as an eager library
program instead (``jit(..., _eager=True)``: traced once per signature, its
jaxpr run on the eval trace's kernels, op by op as the eager call would, so
the bits are the eager call's). The key is the function's code and what it
reads (closure values, defaults, globals) plus the transformation's
parameters: a closure over new values, or a rebound global, traces again.
A key that holds arrays by identity builds its program the second time it
is seen: one that never comes back (a closure over arrays made afresh each
call) runs op by op and costs no trace.

Calls that cannot be traced abstractly (Python control flow on values, as
``grad`` allows) run op by op: jit runs those inline (its ``_INLINE``), and
any other failure of the program's trace falls back to the op-by-op call,
which raises the error the user would see; a function whose trace fails
where its op-by-op call works runs op by op from then on.
"""
from __future__ import annotations

from typing import Callable

from openjax._src import tree_util
from openjax._src.config import config
from openjax._src.api.jit import jit as api_jit
from openjax._src.control.trace_cache import TraceCache, keys_arrays
from openjax._src.core import Array, Tracer, eval_trace, trace_state

# (transformation parameters, pure_fun_key(fun)) -> an eager jit of the
# transformed function, or _OP_BY_OP.
_programs = TraceCache()
_OP_BY_OP = object()
_SEEN = object()


def _closure_arrays(fun) -> list:
  """The arrays ``fun`` closes over (what its programs hold as constants),
  for the cache's byte bound."""
  return [c.cell_contents for c in getattr(fun, "__closure__", None) or ()
          if type(c.cell_contents) is Array]


class _NotAnArray(Exception):
  """A transformed function returned a value that is not an array."""


def _arrays_out(transformed: Callable) -> Callable:
  """``transformed`` for the program's trace, refusing results that are not
  arrays: JAX's eager call hands back such a value (``1.0`` as an unmapped
  output, a Python number in ``has_aux``'s aux) as it is, where a program
  would turn it into an array. The refusal sends the call op by op."""
  def arrays_out(*args, **kwargs):
    out = transformed(*args, **kwargs)
    for leaf in tree_util.tree_leaves(out):
      if not isinstance(leaf, (Array, Tracer)):
        raise _NotAnArray
    return out
  return arrays_out


# (config.state_key(), whether a flag reports or forbids traces) of the last
# call: three flag reads a call otherwise.
_flags_seen = (None, False)


def _traces_show() -> bool:
  """Whether a flag reports or forbids traces (the program's trace would
  show): ``jax_log_compiles``, ``jax_explain_cache_misses``,
  ``jax_no_tracing``."""
  global _flags_seen
  state = config.state_key()
  seen = _flags_seen
  if seen[0] == state:
    return seen[1]
  show = bool(config.read("jax_log_compiles") or config.read("jax_explain_cache_misses")
              or config.read("jax_no_tracing"))
  _flags_seen = (state, show)
  return show


def call_transformed(params: tuple, fun, transformed: Callable, args, kwargs):
  """``transformed(*args, **kwargs)``, where ``transformed`` is ``fun`` (a
  function, or a tuple of them) under the transformation described by the
  hashable ``params``: as a cached program when the call is eager, every
  argument leaf is an Array and ``fun`` is effect-free; op by op otherwise.
  Other leaves run op by op because the program would change them: ``vmap``
  hands unmapped arguments to the function as they are, and loops return a
  Python scalar carry the body only passes along as that scalar."""
  if trace_state.trace is not eval_trace or _traces_show():
    return transformed(*args, **kwargs)
  for leaf in args:   # flat Arrays (most calls) without flattening
    if type(leaf) is not Array:
      break
  else:
    leaf = None
  if leaf is not None or kwargs:
    for leaf in tree_util.tree_leaves((args, kwargs)):
      if type(leaf) is not Array:
        return transformed(*args, **kwargs)
  fkey, holds_arrays = keys_arrays(fun)
  if fkey is None:
    return transformed(*args, **kwargs)
  key = (params, fkey)
  try:
    program = _programs.find(key)
  except TypeError:   # unhashable parameters (a dict of in_axes)
    return transformed(*args, **kwargs)
  if program is _OP_BY_OP:
    return transformed(*args, **kwargs)
  if program is None and holds_arrays:
    # A key holding arrays by identity may never come back (a closure over
    # arrays made afresh each call): op by op until it is seen again, so
    # such calls pay for no trace and no program.
    _programs.put(key, _SEEN, _closure_arrays(fun))
    return transformed(*args, **kwargs)
  if program is None or program is _SEEN:
    program = api_jit(_arrays_out(transformed), _eager=True)
    _programs.put(key, program, _closure_arrays(fun))
  try:
    return program(*args, **kwargs)
  except Exception:   # noqa: BLE001 - the op-by-op call raises the user's error
    out = transformed(*args, **kwargs)
    _programs.put(key, _OP_BY_OP)
    return out


def clear() -> None:
  _programs.clear()
