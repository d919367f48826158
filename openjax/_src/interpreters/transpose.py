"""Transposition of linear jaxprs (the backward pass of reverse mode).

Equations whose inputs are all known run forward first; the linear ones are
then visited in reverse, each primitive's ``transpose`` rule mapping output
cotangents to cotangents of its linear inputs, accumulated with ``add_any``.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from openjax._src.core import ClosedJaxpr, Jaxpr, Literal, Var, array_of
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.base.ad_util import UndefinedPrimal, Zero, is_undefined_primal
from openjax._src.primitives.base.structural import add_tangents, instantiate_zeros


def literal_value(lit: Literal):
  """A literal's value, keeping its weak type (a bare NumPy scalar would
  lose it, and with it the weak type of every cotangent it touches)."""
  if lit.aval.weak_type:
    return array_of(np.array(lit.val, lit.aval.dtype), lit.aval)
  return lit.val


def backward_pass(jaxpr: Jaxpr, consts: Sequence, args: Sequence, cts_out: Sequence) -> list:
  """Cotangents for the inputs of ``jaxpr`` given as ``UndefinedPrimal``
  (other entries of ``args`` are known values); ``cts_out`` may hold Zeros."""
  known: dict[Var, object] = {}
  linear: set[Var] = set()
  for v, c in zip(jaxpr.constvars, consts):
    known[v] = c
  for v, a in zip(jaxpr.invars, args):
    if is_undefined_primal(a):
      linear.add(v)
    else:
      known[v] = a

  def read(a):
    return literal_value(a) if type(a) is Literal else known[a]

  # Forward: non-linear equations (all inputs known).
  linear_eqns = []
  for eqn in jaxpr.eqns:
    if any(isinstance(a, Var) and a in linear for a in eqn.invars):
      linear_eqns.append(eqn)
      linear.update(eqn.outvars)
    else:
      outs = eqn.primitive.bind(*(read(a) for a in eqn.invars), **eqn.params)
      for v, o in zip(eqn.outvars, outs):
        known[v] = o

  ct_env: dict[Var, object] = {}

  def write_ct(v, ct):
    if ct is None or type(v) is Literal or v not in linear:
      return
    ct_env[v] = add_tangents(ct_env[v], ct) if v in ct_env else ct

  for a, ct in zip(jaxpr.outvars, cts_out):
    if isinstance(a, Var):
      write_ct(a, ct)
  for eqn in reversed(linear_eqns):
    cts = [ct_env.pop(v, None) for v in eqn.outvars]
    cts = [Zero(v.aval) if c is None else c for v, c in zip(eqn.outvars, cts)]
    if all(type(c) is Zero for c in cts):
      continue
    invals = [UndefinedPrimal(a.aval) if isinstance(a, Var) and a in linear else read(a)
              for a in eqn.invars]
    cts_in = eqn.primitive.rule("transpose")(cts, *invals, **eqn.params)
    for a, ct in zip(eqn.invars, cts_in):
      if isinstance(a, Var) and a in linear and ct is not None and type(ct) is not Zero:
        write_ct(a, ct)
  return [ct_env.get(v, Zero(v.aval)) if is_undefined_primal(a) else None
          for v, a in zip(jaxpr.invars, args)]


def transpose_jaxpr(closed: ClosedJaxpr, linear_mask: Sequence[bool]) -> ClosedJaxpr:
  """A jaxpr taking (non-linear inputs, output cotangents) to the cotangents
  of the linear inputs (zeros instantiated)."""
  jaxpr = closed.jaxpr
  in_avals = [v.aval for v in jaxpr.invars]
  nonlin_avals = [a for a, lin in zip(in_avals, linear_mask) if not lin]
  ct_avals = [v.aval for v in jaxpr.outvars]

  def transposed(*args):
    nonlin, cts = args[:len(nonlin_avals)], args[len(nonlin_avals):]
    it = iter(nonlin)
    full = [UndefinedPrimal(a) if lin else next(it) for a, lin in zip(in_avals, linear_mask)]
    outs = backward_pass(jaxpr, closed.consts, full, list(cts))
    return [instantiate_zeros(o) for o, lin in zip(outs, linear_mask) if lin]

  new_jaxpr, consts = trace_to_jaxpr(transposed, nonlin_avals + ct_avals)
  return ClosedJaxpr(new_jaxpr, consts)

