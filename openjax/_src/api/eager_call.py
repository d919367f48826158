"""Eager calls of library functions (``jnp`` functions that JAX jits:
``numpy/util.jit``, ``JitWrapped`` with ``eager=True``) outside any
transformation: each runs its cached jaxpr on the eval trace's kernels.

A call is keyed by ``config.state_key()`` and its arguments' kinds
(``eager_key``); the first call of a key takes jit's general path
(``JitWrapped._library_entry``), then the key holds a *runner*
(``Program.library_runner``) that decides once what the general path
decides per call: how each argument becomes a value, which results are
arguments as they are, whether the program runs as an interpreted call,
and the programs of nested calls (``_nested_call_kernel``). A library call
costs its kernels plus ~2 us.
"""
from __future__ import annotations

from types import FunctionType
from typing import Callable

from openjax._src import tree_util
from openjax._src.api.library_compile import NO_KEY, eager_leaf_key, library_outputs
from openjax._src.config import config
from openjax._src.control.closed_call import jit_p
from openjax._src.control.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from openjax._src.core import (Array, ClosedJaxpr, Literal, Var, jaxprs_in_params,
                               program_of)
from openjax._src.core.array import ShardedBuffer
from openjax._src.core.jaxpr import DropVar
from openjax._src.core.placement import commit, committed_device
from openjax._src.core.trace import SCALAR_TYPES, eager_config
from openjax._src.interpreters.fold_reductions import folded
from openjax._src.runtime.pipeline import interpreting_first_call

INLINE = object()   # an eager library call known to run inline (as the function itself)
# The cache's slot of (state key, key parts, runner) of the last positional call: a
# key no call has (keys start with the state key, an int or a tuple of flags).
_LAST = ("last call",)


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
      return None, None
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


def call_eager(wrapped, args, kwargs):
  """An eager library call: its cached program, run on the eval trace's
  kernels (``Program.library_runner``); jit's general path on a miss.
  The cache is keyed by ``config.state_key()``, which changes with every
  flag: a runner found was stored under the flags of this call, which
  were checked then (no debug flag, no ``disable_jit``). The last
  runner called with positional arguments alone is checked first, by the
  identity of the arguments' avals (no key to build and hash)."""
  cache = wrapped._eager_fast
  if not kwargs:
    last = cache.get(_LAST)
    if last is not None and len(args) == len(last[1]) and last[0] == config.state_key():
      for a, s in zip(args, last[1]):
        if type(a) is Array:
          if (a.aval is not s or a._np is None or a._device is not None
              or type(a._buffer) is ShardedBuffer):
            break
        elif type(a) is not s:   # a Python or NumPy scalar of the type keyed
          break
      else:
        return last[2](args)   # every argument is a leaf
  try:
    key, leaves = eager_key(wrapped, args, kwargs)
    entry = cache.get(key) if key is not None else None
  except TypeError:   # an unhashable static argument: the general path decides
    key = entry = None
  if type(entry) is FunctionType:   # the runner of this call's program
    if not kwargs and len(leaves) == len(args):
      cache[_LAST] = (key[0], key[1:], entry)
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


_PRIMITIVES_PACKAGE = "openjax._src.primitives."


def _nested_call_kernel(impl, params):
  """The kernel of a nested call in an eager library program (``jnp.median``
  calls ``quantile``, ``jnp.frexp`` a custom_jvp function): the runner of
  its program, made once (with its own nested calls' kernels), where the
  call's impl looks up and builds it on every call. The program runs
  interpreted (``interpreting_first_call``), where jit's impl interprets
  such calls too; calls that must run compiled (``tiered=False``) keep the
  impl."""
  if impl is jit_p.impl:
    if not params["tiered"]:
      return None
    closed = folded(params["jaxpr"])   # interpreted as lowered, as jit's impl does
  elif impl is custom_jvp_call_p.impl or impl is custom_vjp_call_p.impl:
    closed = params["call_jaxpr"]   # the primal function, as their impls run it
  else:
    return None
  run = program_of(closed.jaxpr).runner(closed.consts, _nested_call_kernel)
  return lambda *values, **_: run(values)


def _interpreted_call(eqn):
  """The jaxpr a nested call of an eager library program runs interpreted,
  as ``_nested_call_kernel`` runs it; None for other equations."""
  p = eqn.primitive
  if p is jit_p:
    return folded(eqn.params["jaxpr"]) if eqn.params["tiered"] else None
  if p is custom_jvp_call_p or p is custom_vjp_call_p:
    return eqn.params["call_jaxpr"]
  return None


def inline_interpreted_calls(closed: ClosedJaxpr) -> ClosedJaxpr:
  """``closed`` with the nested calls its eager program interprets (jit,
  custom_jvp/vjp's primal) replaced by their equations: the same kernels
  run, without a nested program's entry and exit per call (~2-3 us each;
  ``jnp.ldexp`` makes 8 such calls). Inner constants become constants of
  the whole; the values of an inlined jaxpr get fresh variables (one jaxpr
  may be called twice)."""
  if not any(_interpreted_call(e) is not None for e in closed.jaxpr.eqns):
    return closed
  constvars, consts, eqns = list(closed.jaxpr.constvars), list(closed.consts), []

  def walk(jaxpr, env: dict, fresh: bool) -> list:
    def read(a):
      return a if type(a) is Literal else env.get(a, a)
    for eqn in jaxpr.eqns:
      ins = [read(a) for a in eqn.invars]
      inner = _interpreted_call(eqn)
      if inner is None:
        outs = eqn.outvars
        if fresh:
          outs = [v if type(v) is DropVar else Var(v.aval) for v in outs]
          env.update(zip(eqn.outvars, outs))
        eqns.append(eqn.replace(invars=ins, outvars=outs))
        continue
      sub = dict(zip(inner.jaxpr.invars, ins))
      for v, c in zip(inner.jaxpr.constvars, inner.consts):
        sub[v] = Var(v.aval)
        constvars.append(sub[v])
        consts.append(c)
      env.update((v, r) for v, r in zip(eqn.outvars, walk(inner.jaxpr, sub, True))
                 if type(v) is not DropVar)
    return [read(a) for a in jaxpr.outvars]
  outvars = walk(closed.jaxpr, {}, False)
  return ClosedJaxpr(closed.jaxpr.replace(constvars=constvars, eqns=eqns, outvars=outvars),
                     consts)


def _eager_runner(entry, leaves: list) -> Callable | None:
  """``leaves -> results`` for the eager calls of a library function keyed
  as this one (``Program.library_runner``), or None (``run_program``)."""
  flat = inline_interpreted_calls(entry.closed_jaxpr)
  made = program_of(flat.jaxpr).library_runner(flat.consts, leaves, entry.single,
                                               _nested_call_kernel)
  if made is None:
    return None
  run, impls = made
  # Impls of the primitives' modules run NumPy (that layer cannot call a
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
