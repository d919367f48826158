"""Mutable array references (``jax.Ref``) in control-flow bodies: ``scan``,
``fori_loop``, ``cond`` and ``switch`` thread the refs their bodies use
through the loop as extra carries (branch operands and results), then write
the final values back, so ``ref[...] += x`` in a loop body accumulates as in
JAX.

Each body is traced inside a ref scope (``core/ref.py``); a body that uses a
ref from outside raises ``RefDiscovered`` for that scope, and the operation
is traced again with the ref threaded. Bodies that use no outside refs trace
once, as before.
"""
from __future__ import annotations

from typing import Any, Callable

from openjax._src.core.ref import Ref, RefDiscovered, access, open_scope, run_in_scope

__all__ = ["RefThreading", "run_threading_refs"]


class RefThreading:
  """The refs one control-flow operation threads, and the scopes its body
  traces opened (to tell its own discoveries from an enclosing one's)."""
  __slots__ = ("refs", "scopes")

  def __init__(self):
    self.refs: list[Ref] = []
    self.scopes: list = []

  def owns(self, err: RefDiscovered) -> bool:
    return any(err.scope is s for s in self.scopes)

  def open(self, refs=()):
    scope = open_scope(refs)
    self.scopes.append(scope)
    return scope

  def call(self, fn: Callable, ref_values, *args) -> tuple[Any, list]:
    """``fn(*args)`` with the refs bound to ``ref_values``: ``(out, finals)``,
    the refs' values at the end. The refs keep their values outside."""
    return run_in_scope(self.open(self.refs), self.refs, ref_values, fn, *args)

  def values(self) -> list:
    return [access(r) for r in self.refs]

  def write_back(self, finals) -> None:
    for r, v in zip(self.refs, finals):
      r._value = v


def run_threading_refs(plain: Callable[[RefThreading], Any],
                       threaded: Callable[[RefThreading], Any]):
  """``plain(state)`` (bodies traced in ``state``'s scopes), or, once a body
  uses outside refs, ``threaded(state)`` with ``state.refs`` to thread
  (retried as more refs are found)."""
  state = RefThreading()
  try:
    return plain(state)
  except RefDiscovered as err:
    if not state.owns(err):
      raise
    state.refs.append(err.ref)
  return rerun_threading_refs(state, threaded)


def rerun_threading_refs(state: RefThreading, threaded: Callable[[RefThreading], Any]):
  """``threaded(state)``, tracing again while its bodies find more refs."""
  while True:
    state.scopes = []
    try:
      return threaded(state)
    except RefDiscovered as err:
      if not state.owns(err):
        raise
      state.refs.append(err.ref)
