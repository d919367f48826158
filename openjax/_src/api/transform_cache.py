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
from openjax._src.core import (Array, Tracer, array_of, canonical_value, eval_trace, get_aval,
                               trace_state)

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


# (config.state_key(), whether the call runs as the function itself) of the
# last call: four flag reads a call otherwise.
_flags_seen = (None, False)


def _traces_show() -> bool:
  """Whether a flag reports or forbids traces (the program's trace would
  show: ``jax_log_compiles``, ``jax_explain_cache_misses``,
  ``jax_no_tracing``) or ``jax_disable_jit`` is on (the program would run
  the function itself, as ``call_eager`` does then; a loop's carries are
  then all Arrays, as in JAX, none handed back as a scalar)."""
  global _flags_seen
  state = config.state_key()
  seen = _flags_seen
  if seen[0] == state:
    return seen[1]
  show = bool(config.read("jax_log_compiles") or config.read("jax_explain_cache_misses")
              or config.read("jax_no_tracing") or config.read("jax_disable_jit"))
  _flags_seen = (state, show)
  return show


# Python scalars a carry may hold: a while loop hands one its body passes
# through (and its cond does not read) back as itself, as JAX's does.
_PY_SCALARS = frozenset({bool, int, float, complex})
# (params, function key) -> {(flags' state, the carry's avals): the carry
# positions the loop forwards}, recorded by the program's trace.
_forwards = TraceCache()


def _scalar_array(x) -> Array:
  """A Python scalar as a new weakly typed Array of the aval its trace sees
  (its value made once per value and flags: ~3 us with the overflow check).
  New: the carries' Arrays are told apart by identity."""
  t = type(x)
  key = (t, repr(x) if t is float or t is complex else x, config.state_key())
  made = _scalar_arrays.get(key)
  if made is None:
    if len(_scalar_arrays) >= 256:
      _scalar_arrays.clear()
    made = _scalar_arrays[key] = (canonical_value(x), get_aval(x))
  return array_of(*made)


_scalar_arrays: dict = {}


def _scalar_positions(leaves) -> list | None:
  """The positions of the Python scalars among ``leaves``, or None when a
  leaf is neither one nor an Array."""
  scalars = []
  for i, leaf in enumerate(leaves):
    t = type(leaf)
    if t in _PY_SCALARS:
      scalars.append(i)
    elif t is not Array:
      return None
  return scalars


def call_forwarding_loop(params: tuple, fun, transformed: Callable, init):
  """``transformed(init)`` for a loop whose carry ``init`` holds Python
  scalars beside Arrays (``lax.while_loop(c, b, (0, x))``): as
  ``call_transformed``'s program with the scalars made weakly typed Arrays
  (the same avals their trace sees), then every carry the loop forwards
  (its result is its input: JAX's loop hands that input back) is the
  scalar again. Which carries a loop forwards is recorded when the program
  traces; a call run op by op returns the Array it was given. A carry of
  Arrays alone runs the same program; one with NumPy values,
  ``transformed(init)``. (``while_loop_affine_steps`` at 10
  elements went through the op-by-op loop's key and bind: 111-123 -> ~90 us
  process time on a loaded machine.)"""
  flat = type(init) is tuple   # the common carry, without flattening
  scalars = _scalar_positions(init) if flat else None
  if scalars is None:   # nested pytrees: flattened
    flat = False
    leaves, tree = tree_util.tree_flatten(init)
    scalars = _scalar_positions(leaves)
    if scalars is None:   # NumPy values: op by op
      return transformed(init)
  else:
    leaves, tree = init, len(init)
  if trace_state.trace is not eval_trace or _traces_show():
    return transformed(init)
  keyed = keys_arrays(fun)
  if keyed[0] is None:
    return transformed(init)
  try:
    arrays = list(leaves)
    for i in scalars:
      arrays[i] = _scalar_array(leaves[i])
  except (OverflowError, TypeError, ValueError):   # the op-by-op call raises JAX's error
    return transformed(init)
  # The program takes the carry's leaves (a dict argument would take jit's
  # general path every call: ~40 us more), so the structure joins its key.
  params = (*params, tree)

  def carry_of(ins):
    return tuple(ins) if flat else tree_util.tree_unflatten(tree, ins)
  if not scalars:
    return _call_keyed(params, fun, keyed, lambda *ins: transformed(carry_of(ins)), arrays, {})
  key = (params, keyed[0])
  try:
    record = _forwards.find(key)
  except TypeError:
    return transformed(init)
  if record is None:
    record = {}
    _forwards.put(key, record)

  def recording(*ins):
    out = transformed(carry_of(ins))
    record[(config.state_key(), tuple(x.aval for x in ins))] = frozenset(
        i for i, (a, b) in enumerate(zip(ins, tree_util.tree_leaves(out))) if a is b)
    return out
  out = _call_keyed(params, fun, keyed, recording, arrays, {})
  outs, out_tree = (list(out), None) if flat else tree_util.tree_flatten(out)
  if len(outs) != len(leaves):
    return out
  forwarded = record.get((config.state_key(), tuple(x.aval for x in arrays)), ())
  for i in scalars:
    if i in forwarded or outs[i] is arrays[i]:
      outs[i] = leaves[i]
  return tuple(outs) if flat else tree_util.tree_unflatten(out_tree, outs)


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
  return _call_keyed(params, fun, keys_arrays(fun), transformed, args, kwargs)


def _call_keyed(params: tuple, fun, keyed: tuple, transformed: Callable, args, kwargs):
  """``call_transformed`` past its checks of the call, with ``keyed``:
  ``keys_arrays(fun)``."""
  fkey, holds_arrays = keyed
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
  _forwards.clear()
