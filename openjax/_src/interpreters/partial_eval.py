"""Partial evaluation: split a computation into what can be computed now
(*known*: primal values) and what must be staged (*unknown*: tangents).

``linearize`` runs the JVP trace on top of a ``PartialEvalTrace``: primal
work executes in the enclosing trace, tangent work is recorded into a linear
jaxpr whose constants are the residuals. So reverse mode stores residuals and
never re-runs the forward pass. Higher-order primitives with a mix of known
and unknown inputs use their ``partial_eval`` rule (jit splits its jaxpr).
"""
from __future__ import annotations

from typing import Callable, Sequence

from openjax._src import dtypes
from openjax._src.core import (Jaxpr, Trace, Var, check_transformed, current_trace, dce_jaxpr,
                               set_current_trace)
from openjax._src.interpreters.jvp import JVPTrace, JVPTracer
from openjax._src.interpreters.staging import DynamicJaxprTrace, DynamicJaxprTracer
from openjax._src.primitives.base.ad_util import Zero


class PartialEvalTrace(Trace):
  """Known values belong to the parent trace; unknown values are tracers of
  ``self.builder``, which records the unknown part as a jaxpr."""

  def __init__(self, parent: Trace, debug_info=None):
    super().__init__()
    self.parent = parent
    self.builder = DynamicJaxprTrace(debug_info)

  def is_unknown(self, x) -> bool:
    return isinstance(x, DynamicJaxprTracer) and x._trace is self.builder

  def new_unknown(self, aval) -> DynamicJaxprTracer:
    return self.builder.new_arg(aval)

  def process_primitive(self, primitive, args, params):
    unknown = [self.is_unknown(x) for x in args]
    if not any(unknown):
      with set_current_trace(self.parent):
        return primitive.bind(*args, **params)
    rule = getattr(primitive, "partial_eval", None)
    if rule is not None:
      return rule(self, unknown, args, params)
    return self.builder.process_primitive(primitive, args, params)

  def invalidate(self):
    super().invalidate()
    self.builder.invalidate()


class LinearFunction:
  """The linear map of ``linearize``: a jaxpr over tangents whose constants
  are the residuals saved by the forward pass."""

  def __init__(self, jaxpr: Jaxpr, residuals: list, in_avals, out_avals):
    self.jaxpr = jaxpr
    self.residuals = residuals
    self.in_avals = in_avals
    self.out_avals = out_avals


def linearize_flat(fun: Callable[..., Sequence], primals: Sequence, tangent_avals,
                   *, has_aux: bool = False):
  """Primal outputs (computed now), the linear function of the tangents and
  the mask of outputs whose tangent is a symbolic zero. Tangents of integer
  inputs (float0) are symbolic zeros: their jaxpr inputs are unused. With
  ``has_aux`` ``fun`` returns ``(outs, aux_leaves)``; the aux leaves (primal
  values) come back fourth."""
  parent = current_trace()
  pe = PartialEvalTrace(parent)
  jvp_trace = JVPTrace(pe)
  tangent_in = [pe.new_unknown(a) for a in tangent_avals]
  tracers = [JVPTracer(jvp_trace, p, Zero(a) if a.dtype == dtypes.float0 else t)
             for p, t, a in zip(primals, tangent_in, tangent_avals)]
  try:
    with set_current_trace(jvp_trace):
      outs = fun(*tracers)
      if has_aux:
        outs, aux = outs
        aux = [jvp_trace.to_primal_tangent(a)[0] if isinstance(a, JVPTracer) else a
               for a in aux]
    primals_out, tangents_out = [], []
    for o in outs:
      p, t = jvp_trace.to_primal_tangent(o)
      primals_out.append(p)
      tangents_out.append(t)
    for p in primals_out:
      if pe.is_unknown(p):
        raise NotImplementedError(
            "linearize: a primal output depends on the tangents: a higher-order "
            "primitive in the function lacks a partial evaluation rule that keeps its "
            "primal outputs known")
    out_atoms, out_avals = [], []
    for p, t in zip(primals_out, tangents_out):
      if type(t) is Zero:
        out_atoms.append(t)
        out_avals.append(t.aval)
      else:
        tr = pe.builder.to_jaxpr_tracer(t)
        out_atoms.append(tr)
        out_avals.append(tr.aval)
    staged = [a for a in out_atoms if type(a) is not Zero]
    jaxpr, consts = pe.builder.to_jaxpr(staged)
  finally:
    jvp_trace.invalidate()
    pe.invalidate()
  jaxpr, consts = dce_jaxpr_consts(jaxpr, consts)
  zero_mask = [type(a) is Zero for a in out_atoms]
  lin = LinearFunction(jaxpr, consts, list(tangent_avals), out_avals)
  return (primals_out, lin, zero_mask, aux) if has_aux else (primals_out, lin, zero_mask)


# ------------------------------------------------- splitting a jaxpr in two
def partial_eval_jaxpr(jaxpr: Jaxpr, in_unknowns: Sequence[bool]):
  """Split ``jaxpr`` into a known jaxpr (known inputs -> known outputs +
  residuals; it keeps ``jaxpr``'s constvars) and an unknown jaxpr (residuals +
  unknown inputs -> unknown outputs). An equation with an unknown input is
  unknown, except one of a primitive with a ``partial_eval_jaxpr_custom(eqn,
  unknowns) -> (known_eqn, unknown_eqn, out_unknowns)`` splitter (jit splits
  its jaxpr in two the same way, recursively; remat, cond, scan and while
  have theirs; known_eqn None: nothing is known), whose known outputs stay
  known. Returns
  (known, unknown, out_unknowns, num_residuals)."""
  unknown_vars: set[Var] = {v for v, u in zip(jaxpr.invars, in_unknowns) if u}
  known_eqns, unknown_eqns = [], []
  for eqn in jaxpr.eqns:
    unknown_in = [isinstance(a, Var) and a in unknown_vars for a in eqn.invars]
    if not any(unknown_in):
      known_eqns.append(eqn)
    elif not all(unknown_in) and getattr(
        eqn.primitive, "partial_eval_jaxpr_custom", None) is not None:
      known_eqn, unknown_eqn, out_unknowns = eqn.primitive.partial_eval_jaxpr_custom(
          eqn, unknown_in)
      if known_eqn is not None:
        known_eqns.append(known_eqn)
      unknown_eqns.append(unknown_eqn)
      unknown_vars.update(v for v, u in zip(eqn.outvars, out_unknowns) if u)
    else:
      unknown_eqns.append(eqn)
      unknown_vars.update(eqn.outvars)
  out_unknowns = [isinstance(a, Var) and a in unknown_vars for a in jaxpr.outvars]
  # Residuals: known vars (known invars, constvars, known eqn outputs) that
  # unknown equations read.
  defined_known = set(jaxpr.constvars) | {v for v, u in zip(jaxpr.invars, in_unknowns) if not u}
  for e in known_eqns:
    defined_known.update(e.outvars)
  residuals: list[Var] = []
  seen = set()
  for e in unknown_eqns:
    for a in e.invars:
      if isinstance(a, Var) and a in defined_known and a not in seen:
        seen.add(a)
        residuals.append(a)
  known_outs = [a for a, u in zip(jaxpr.outvars, out_unknowns) if not u]
  known = Jaxpr(jaxpr.constvars, [v for v, u in zip(jaxpr.invars, in_unknowns) if not u],
                known_outs + residuals, known_eqns)
  # In the unknown jaxpr, residuals are fresh inputs.
  res_vars = [Var(r.aval) for r in residuals]
  rename = dict(zip(residuals, res_vars))
  unknown_in = [v for v, u in zip(jaxpr.invars, in_unknowns) if u]
  new_eqns = [e.replace(invars=[rename.get(a, a) if isinstance(a, Var) else a for a in e.invars])
              for e in unknown_eqns]
  unknown_outs = [rename.get(a, a) if isinstance(a, Var) else a
                  for a, u in zip(jaxpr.outvars, out_unknowns) if u]
  unknown = Jaxpr([], res_vars + unknown_in, unknown_outs, new_eqns)
  check_transformed(known, "partial_eval_jaxpr (known part)")
  check_transformed(unknown, "partial_eval_jaxpr (unknown part)")
  return known, unknown, out_unknowns, len(residuals)


def dce_jaxpr_consts(jaxpr: Jaxpr, consts: Sequence) -> tuple[Jaxpr, list]:
  """``dce_jaxpr`` that also drops the constvars (and their values) no live
  equation reads, so dead residuals are not kept alive."""
  jaxpr = dce_jaxpr(jaxpr)
  used = {a for e in jaxpr.eqns for a in e.invars if isinstance(a, Var)}
  used.update(a for a in jaxpr.outvars if isinstance(a, Var))
  keep = [v in used for v in jaxpr.constvars]
  pruned = jaxpr.replace(constvars=[v for v, k in zip(jaxpr.constvars, keep) if k])
  check_transformed(pruned, "dce_jaxpr_consts")
  return pruned, [c for c, k in zip(consts, keep) if k]



__all__ = ["PartialEvalTrace", "LinearFunction", "linearize_flat", "partial_eval_jaxpr",
           "dce_jaxpr", "dce_jaxpr_consts"]
