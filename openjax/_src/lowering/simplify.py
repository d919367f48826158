"""Rewrites of a jaxpr just before lowering, where IREE would otherwise
compile a slower program than the one JAX's compiler makes.

``transpose(dot_general(a, b))`` that only swaps the two operands' free
dimensions becomes ``dot_general(b, a)``: vmap over a matrix product's right
operand produces exactly this (batch dim last, then moved to the front), and
IREE materializes the transpose (or reads it strided) where XLA's layout
assignment makes it free (vmap_logprob 10000x1000: 48 ms -> 24 ms).
"""
from __future__ import annotations

from openjax._src.core import ClosedJaxpr, Jaxpr, Var, check_transformed


def _use_counts(jaxpr: Jaxpr) -> dict:
  counts: dict = {}
  for eqn in jaxpr.eqns:
    for a in eqn.invars:
      if isinstance(a, Var):
        counts[a] = counts.get(a, 0) + 1
  for a in jaxpr.outvars:
    if isinstance(a, Var):
      counts[a] = counts.get(a, 0) + 1
  return counts


def _swapped_dot(dot_eqn, perm) -> dict | None:
  """The params of ``dot_general(rhs, lhs)`` when ``perm`` applied to the
  dot's result equals it, else None."""
  (lc, rc), (lb, rb) = dot_eqn.params["dimension_numbers"]
  if lb or rb:
    return None
  lhs, rhs = (a.aval for a in dot_eqn.invars)
  nl, nr = lhs.ndim - len(lc), rhs.ndim - len(rc)
  if tuple(perm) != tuple(range(nl, nl + nr)) + tuple(range(nl)):
    return None
  params = dict(dot_eqn.params, dimension_numbers=((tuple(rc), tuple(lc)), ((), ())))
  precision = params.get("precision")
  if isinstance(precision, tuple) and len(precision) == 2:
    params["precision"] = (precision[1], precision[0])
  return params


def fold_transposed_dots(jaxpr: Jaxpr) -> Jaxpr:
  producers = {}
  for i, eqn in enumerate(jaxpr.eqns):
    if eqn.primitive.name == "dot_general":
      producers[eqn.outvars[0]] = i
  if not producers:
    return jaxpr
  counts = _use_counts(jaxpr)
  eqns = list(jaxpr.eqns)
  dropped = set()
  for i, eqn in enumerate(eqns):
    if eqn.primitive.name != "transpose" or not isinstance(eqn.invars[0], Var):
      continue
    j = producers.get(eqn.invars[0])
    if j is None or counts.get(eqn.invars[0]) != 1:
      continue
    params = _swapped_dot(eqns[j], eqn.params["permutation"])
    if params is None:
      continue
    dot = eqns[j]
    # The dot moves to the transpose's place (its operands are defined by
    # then) and writes the transpose's result.
    eqns[i] = dot.replace(invars=[dot.invars[1], dot.invars[0]], outvars=eqn.outvars,
                          params=params)
    dropped.add(j)
  if not dropped:
    return jaxpr
  return jaxpr.replace(eqns=[e for k, e in enumerate(eqns) if k not in dropped])


def simplify_for_lowering(closed: ClosedJaxpr) -> ClosedJaxpr:
  jaxpr = fold_transposed_dots(closed.jaxpr)
  if jaxpr is closed.jaxpr:
    return closed
  check_transformed(jaxpr, "simplify_for_lowering")
  return ClosedJaxpr(jaxpr, closed.consts)


__all__ = ["simplify_for_lowering", "fold_transposed_dots"]
