"""Eager calls of library functions (``jnp`` functions that JAX jits:
``numpy/util.jit``, ``JitWrapped`` with ``eager=True``) outside any
transformation: each runs its cached jaxpr on the eval trace's kernels.

A call is keyed by ``config.state_key()`` and its arguments' kinds
(``eager_key``); the first call of a key takes jit's general path
(``JitWrapped._library_entry``), then the key holds a *runner*
(``Program.library_runner``) that decides once what the general path
decides per call: how each argument becomes a value, which results are
arguments as they are, whether the program runs as an interpreted call,
and the programs of nested calls (``control/nested_calls.nested_call_kernel``). A library call
costs its kernels plus ~2 us.
"""
from __future__ import annotations

from types import FunctionType
from typing import Callable

import numpy as np

from openjax._src import tree_util
from openjax._src.api.library_compile import NO_KEY, eager_leaf_key, library_outputs
from openjax._src.config import config
from openjax._src.control.nested_calls import inline_interpreted_calls, nested_call_kernel
from openjax._src.core import Array, jaxprs_in_params, program_of
from openjax._src.core.array import ShardedBuffer
from openjax._src.core.placement import commit, committed_device
from openjax._src.core.trace import SCALAR_TYPES, eager_config
from openjax._src.runtime.pipeline import interpreting_first_call

INLINE = object()   # an eager library call known to run inline (as the function itself)
# The cache's slot of the last call with positional arguments alone: (state key,
# key parts of its leaves, runner, None, ((position, value) of its static
# arguments and Nones, the other positions) or (), argument count); a key no call has (keys start with the state
# key, an int or a tuple of flags).
_LAST = ("last call",)
# ... and of the last call with static keyword arguments (those in the 4th place).
_LAST_KW = ("last call", "keywords")


def eager_key(wrapped, args, kwargs):
  """The key of an eager library call whose dynamic arguments have one
  (``eager_leaf_key``; static ones hashable), with the leaves in jit's flat
  order; (None, None) for other calls. Arrays and Python scalars, most
  arguments, are keyed inline."""
  statics = wrapped.static_argnums
  if len(args) == 1 and not kwargs and 0 not in statics:   # one Array: the key, spelled out
    a, = args
    if (type(a) is Array and a._np is not None and a._device is None
        and type(a._buffer) is not ShardedBuffer):
      return (config.state_key(), a.aval), [a]
  key = [config.state_key()]
  leaves = []
  for i, a in enumerate(args):
    if statics and i in statics:
      key.append(a)
      continue
    t = type(a)
    if t is Array and a._np is not None and a._device is None \
        and type(a._buffer) is not ShardedBuffer:
      key.append(a.aval)
      leaves.append(a)
      continue
    if t in SCALAR_TYPES:
      key.append(t)
      leaves.append(a)
      continue
    part = eager_leaf_key(a)
    if part is NO_KEY:
      part = _sequence_key(a)   # a list or tuple of leaves (jnp.select's condlist)
      if part is NO_KEY:
        return None, None
      key.append(part)
      leaves.extend(a)
      continue
    key.append(part)
    if a is not None:
      leaves.append(a)
  if kwargs:
    for k in sorted(kwargs):
      a = kwargs[k]
      if k in wrapped.static_argnames:
        key.append((k, a))
        continue
      part = eager_leaf_key(a)
      if part is NO_KEY:
        return None, None
      key.append((k, part))
      if a is not None:
        leaves.append(a)
  return tuple(key), leaves


def _sequence_key(a):
  """The key of a flat list or tuple of keyable leaves (none of them None: an
  empty pytree has no leaf), its leaves in jit's flat order; ``NO_KEY``
  otherwise. Such arguments took jit's general path on every call
  (jnp.select([c1, c2], [x, -x]) at 10 elements: 56 us)."""
  t = type(a)
  if t is not list and t is not tuple:
    return NO_KEY
  parts = []
  for x in a:
    part = eager_leaf_key(x)
    if part is NO_KEY or part is None:
      return NO_KEY
    parts.append(part)
  return (t, tuple(parts))


def _dynamic_args(args, fixed):
  """``args`` at the positions ``fixed[1]`` when those at the others hold
  the values ``fixed[0]`` holds ((position, value) pairs, of the same
  types), else None."""
  for i, v in fixed[0]:
    a = args[i]
    if type(a) is not type(v) or a != v:
      return None
  return [args[i] for i in fixed[1]]


def _keep_last(wrapped, args, kwargs, key, leaves, entry) -> None:
  """Store the runner of a keyed call as the last call when its other
  positional arguments are leaves and its keyword arguments static."""
  if kwargs and not all(k in wrapped.static_argnames for k in kwargs):
    return
  # static arguments and None (no leaf: searchsorted's sorter) by their values
  statics = wrapped.static_argnums
  fixed = [i for i, a in enumerate(args) if a is None or i in statics]
  static_items = tuple((i, key[1 + i]) for i in fixed)
  if len(leaves) + len(static_items) != len(args):
    return   # an argument of several leaves
  parts = (key[1:1 + len(args)] if not static_items else
           tuple(p for i, p in enumerate(key[1:1 + len(args)]) if i not in fixed))
  fixed = (static_items, tuple(i for i in range(len(args)) if i not in fixed)) if fixed else ()
  cache = wrapped._eager_fast
  if kwargs:
    cache[_LAST_KW] = (key[0], parts, entry, dict(kwargs), fixed, len(args))
  else:
    cache[_LAST] = (key[0], parts, entry, None, fixed, len(args))


def call_eager(wrapped, args, kwargs):
  """An eager library call: its cached program, run on the eval trace's
  kernels (``Program.library_runner``); jit's general path on a miss.
  The cache is keyed by ``config.state_key()``, which changes with every
  flag: a runner found was stored under the flags of this call, which
  were checked then (no debug flag, no ``disable_jit``). The last
  runner called with positional arguments alone is checked first, by the
  identity of the arguments' avals (no key to build and hash)."""
  cache = wrapped._eager_fast
  # The last call with these positional leaves and static arguments equal to
  # these (jnp.sort(x, axis=0), jnp.partition(x, 2): their keys cost ~2-3 us
  # to build and hash, a fifth of a 10-element sort).
  last = cache.get(_LAST_KW if kwargs else _LAST)
  if (last is not None and len(args) == last[5] and last[0] == config.state_key()
      and (not kwargs or kwargs == last[3])):
    leaves = args if not last[4] else _dynamic_args(args, last[4])
    if leaves is not None:
      for a, s in zip(leaves, last[1]):
        if type(a) is Array:
          if (a.aval is not s or a._np is None or a._device is not None
              or type(a._buffer) is ShardedBuffer):
            break
        elif type(a) is not s:   # a Python or NumPy scalar of the type keyed
          # a NumPy array of the shape and dtype keyed (jnp.take(x, np_idx))
          if type(a) is not np.ndarray or s != (np.ndarray, a.shape, a.dtype):
            break
      else:
        return last[2](leaves)   # every other positional argument is a leaf
  try:
    key, leaves = eager_key(wrapped, args, kwargs)
    entry = cache.get(key) if key is not None else None
  except TypeError:   # an unhashable static argument: the general path decides
    key = entry = None
  if type(entry) is FunctionType:   # the runner of this call's program
    _keep_last(wrapped, args, kwargs, key, leaves, entry)
    return entry(leaves)
  if not eager_config.flags_ok or config.read("jax_disable_jit"):
    # Debugging flags: op by op, each eager operation checks itself.
    return wrapped.fun(*args, **kwargs)
  if entry is None:
    if key is None and any(type(x) is Array and type(x._buffer) is ShardedBuffer
                           for x in tree_util.tree_leaves((args, kwargs))):
      # Arrays split over devices run op by op: each operation lays its
      # results out by its sharding rule (the program's kernels would not).
      return wrapped.fun(*args, **kwargs)
    entry, leaves, _ = wrapped._library_entry(args, kwargs)
    if key is not None:
      if len(wrapped._eager_fast) >= 256:
        wrapped._eager_fast.clear()
      wrapped._eager_fast[key] = INLINE if entry is None else entry
  if entry is None or entry is INLINE:
    return wrapped.fun(*args, **kwargs)
  if entry.exact is not False:   # an integer program: the same bits compiled
    outs = library_outputs(wrapped, entry, leaves)
    if outs is not None:
      return entry.unflatten(outs)
  if entry.exact is False and key is not None:
    run = _eager_runner(entry, leaves)
    if run is not None:
      wrapped._eager_fast[key] = run
      return run(leaves)
  # Arrays committed to a device (keyed calls have none): the results are
  # committed there too, and Arrays on two devices raise, as in JAX.
  device = None if key is not None else committed_device(leaves, wrapped.name)
  outs = entry.run_program(leaves)
  return entry.unflatten(outs if device is None else commit(outs, device))


# modules whose kernels run NumPy alone: the primitives' and the fused
# kernels of library patterns (``core/fused_steps``, ``core/fused_templates``)
_PRIMITIVES_PACKAGE = ("openjax._src.primitives.", "openjax._src.core.fused_")


def _eager_runner(entry, leaves: list) -> Callable | None:
  """``leaves -> results`` for the eager calls of a library function keyed
  as this one (``Program.library_runner``), or None (``run_program``)."""
  flat = inline_interpreted_calls(entry.closed_jaxpr)
  made = program_of(flat.jaxpr).library_runner(flat.consts, leaves, entry.single,
                                               nested_call_kernel)
  if made is None:
    return None
  run, impls = made
  # Impls of the primitives' modules (and fused kernels) run NumPy (that layer cannot call a
  # jitted function) unless they evaluate a sub-jaxpr (a scatter's combiner);
  # others (control flow, nested calls) may: the program then runs as an
  # interpreted call, as ``run_program`` runs it.
  impls = any(not getattr(k, "__module__", "").startswith(_PRIMITIVES_PACKAGE)
              or jaxprs_in_params(params) for k, params in impls)
  if entry.single and not impls:
    return run
  out_tree = entry.out_tree

  def call(leaves):
    # Library functions calling library functions (jnp.std calls jnp.var)
    # interpret those calls too (``_CacheEntry.run_program``).
    with interpreting_first_call():
      outs = run(leaves)
    return outs if entry.single else tree_util.tree_unflatten(out_tree, outs)
  if impls:
    return call
  return lambda leaves: tree_util.tree_unflatten(out_tree, run(leaves))
