"""``jit`` of functions that use mutable array references (``jax.Ref``).

A jitted function may read and write refs it closes over or is given as
arguments; each call sees the refs' current values and leaves them holding
the values the function wrote, as in JAX. openjax keeps programs functional:
``RefJit`` wraps the function as ``traced(ref_values, *args)``, which binds
each ref to its traced value while the function runs and returns the refs'
final values beside the results; an ordinary inner jit compiles that, and
the call writes the values back. Refs the function closes over are found
while tracing (``core.ref.RefDiscovered``), added, and the function traced
again; refs in the arguments are replaced by ``RefSlot`` markers (pytree
structure, so the inner jit's cache tells ref positions apart).

Unlike JAX's, the printed jaxpr shows the refs' values as ordinary inputs
and outputs (no ``Ref{...}`` invars, no get/swap equations).
"""
from __future__ import annotations

import threading
from typing import Callable

from openjax._src import tree_util
from openjax._src.core import Tracer, trace_state
from openjax._src.core.ref import (Ref, RefDiscovered, access, close_scope, current_scope,
                                   open_scope, run_in_scope)
from openjax._src.interpreters.staging import DynamicJaxprTrace

__all__ = ["NeedsRefs", "RefJit", "check_no_refs_returned", "trace_in_ref_scope"]


class NeedsRefs(Exception):
  """Raised by jit's ordinary path when the function uses refs (``ref``: the
  closed-over one found, or None for a ref argument); jit then switches to
  ``RefJit``."""

  def __init__(self, ref: Ref | None = None):
    # Seen by users only from the AOT stages (jit(f).trace/lower/eval_shape).
    super().__init__(
        "the jitted function uses mutable array references (jax.Ref): openjax stages such "
        "functions when they are called, but not through jit(f).trace/.lower/.eval_shape; "
        "call the jitted function, or pass the refs' values in and return the new ones.")
    self.ref = ref


class RefSlot:
  """Where the ``index``-th ref stood in the arguments (no leaves)."""
  __slots__ = ("index",)

  def __init__(self, index: int):
    self.index = index


tree_util.register_pytree_node(RefSlot, lambda s: ((), s.index), lambda i, _: RefSlot(i))


def check_no_refs_returned(name: str, outs) -> None:
  for leaf in tree_util.tree_leaves(outs):
    if isinstance(leaf, Ref):
      raise ValueError(f"function {name} traced for jit returned a mutable array reference of "
                       f"type {leaf.aval}, but mutable array references cannot be returned. "
                       "Return its value (ref[...] or jax.freeze(ref)) instead.")


def trace_in_ref_scope(trace: Callable, *args):
  """``trace(*args)`` (jit's trace of a function) inside a ref scope: a use
  of an outside ref becomes ``NeedsRefs`` for that ref."""
  scope = open_scope()
  try:
    return trace(*args)
  except RefDiscovered as err:
    if err.scope is not scope:
      raise
    raise NeedsRefs(err.ref) from None
  finally:
    close_scope(scope)


class RefJit:
  """The call path of a jitted function that uses refs (module docstring)."""

  def __init__(self, jitted, first: Ref | None):
    self.fun = jitted.fun
    self.name = jitted.name
    self.closed: list[Ref] = [] if first is None else [first]
    self._tls = threading.local()
    self.inner = type(jitted)(
        self._traced, static_argnums=tuple(i + 1 for i in jitted.static_argnums),
        static_argnames=jitted.static_argnames,
        donate_argnums=tuple(i + 1 for i in jitted.donate_argnums),
        donate_argnames=jitted.donate_argnames, keep_unused=jitted.keep_unused,
        inline=jitted.inline, compiler_options=jitted.compiler_options, name=jitted.name,
        tiered=jitted.tiered)

  def _traced(self, ref_values, *args, **kwargs):
    refs = self._tls.refs
    is_slot = lambda x: isinstance(x, RefSlot)    # noqa: E731
    args, kwargs = tree_util.tree_map(lambda x: refs[x.index] if is_slot(x) else x,
                                      (args, kwargs), is_leaf=is_slot)
    scope = self._tls.scope = open_scope(refs)
    outs, finals = run_in_scope(scope, refs, ref_values, self.fun, *args, **kwargs)
    check_no_refs_returned(self.name, outs)
    return outs, finals

  def __call__(self, args, kwargs):
    while True:
      leaves, tree = tree_util.tree_flatten((args, kwargs))
      refs = list({id(r): r for r in [x for x in leaves if isinstance(x, Ref)] + self.closed}
                  .values())
      slot = {id(r): i for i, r in enumerate(refs)}
      stripped = [RefSlot(slot[id(x)]) if isinstance(x, Ref) else x for x in leaves]
      s_args, s_kwargs = tree_util.tree_unflatten(tree, stripped)
      # Reading the values checks them against an enclosing jit's scope.
      values = [access(r) for r in refs]
      self._tls.refs, self._tls.scope = refs, None
      try:
        outs, finals = self.inner(values, *s_args, **s_kwargs)
      except RefDiscovered as err:
        if err.scope is not self._tls.scope:
          raise
        self.closed.append(err.ref)
        continue
      if current_scope() is None and any(isinstance(v, Tracer) and not r._made_traced
                                         for r, v in zip(refs, finals)):
        # Called while tracing outside any jit that owns these refs (refs made
        # inside the transformation, like grad's, take its traced values).
        if isinstance(trace_state.trace, DynamicJaxprTrace):
          return outs   # make_jaxpr: tracing shows the program, mutates nothing
        raise ValueError(
            f"{self.name}: a jitted function that writes mutable array references was "
            "called inside a transformation (grad, vmap, ...) of a function that does not "
            "own those refs; the refs would keep traced values. Pass the refs as arguments "
            "of the transformed function, or call it outside the transformation.")
      for r, v in zip(refs, finals):
        r._value = v
      return outs
