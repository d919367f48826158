"""``remat2`` (the primitive of ``jax.checkpoint``) and ``name`` (``checkpoint_name``).

``remat2`` holds an open jaxpr (closed-over values are leading operands) and
the parameters ``prevent_cse``, ``differentiated`` and ``policy``. Evaluation,
batching and JVP just transform the jaxpr. Its partial-evaluation hook is
where rematerialisation happens: the known part runs now (inlined, as in
JAX), but only the values the ``policy`` calls saveable (and the known
inputs) become residuals; every other known value the tangent computation
needs is *recomputed* inside the staged ``remat2`` equation
(``differentiated=True``), and again inside its transpose, so the backward
pass recomputes it.

A policy is ``policy(prim, *in_avals, **params) -> bool``: True means the
outputs of that (known) equation may be saved. ``None`` saves nothing.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Callable, Sequence

from openjax._src.core import (ClosedJaxpr, Jaxpr, JaxprEqn, Primitive, Var, eqn_effects,
                               eval_jaxpr, program_of, set_current_trace)
from openjax._src.core.sharding_rules import TYPED_BY_SUB_JAXPR, same_as_operand_rule
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal, tangent_aval
from openjax._src.primitives.base.structural import instantiate_zeros
from openjax._src.control.closed_call import jit_p
from openjax._src.control.custom_derivatives import batch_closed, convert_constvars
from openjax._src.interpreters.jvp import jvp_flat, jvp_jaxpr
from openjax._src.interpreters.staging import DynamicJaxprTrace, trace_to_jaxpr
from openjax._src.interpreters.transpose import transpose_jaxpr

# ---------------------------------------------------------------------- name
name_p = Primitive("name")


@name_p.def_impl
def _name_impl(x, *, name):
  return [x]


@name_p.def_abstract_eval
def _name_abstract_eval(x, *, name):
  return [x]


name_p.def_sharding_rule(same_as_operand_rule)


@name_p.def_jvp
def _name_jvp(primals, tangents, *, name):
  x, = primals
  return [name_p.bind1(x, name=name)], [tangents[0]]   # the tangent stays unnamed


@name_p.def_batch
def _name_batch(vals, dims, *, name):
  return [name_p.bind1(vals[0], name=name)], [dims[0]]


@name_p.def_lower
def _name_lower(ctx, x, *, name):
  return [x]


# -------------------------------------------- source info for saved residuals
class _SourceState(threading.local):
  def __init__(self):
    # While print_saved_residuals records: id(eqn) -> (eqn, "file:line:col (fn)").
    self.sources: dict | None = None
    self.current: str | None = None    # the source of the equation being re-evaluated


source_state = _SourceState()


def source_of(eqn) -> str | None:
  sources = source_state.sources
  hit = sources.get(id(eqn)) if sources is not None else None
  return hit[1] if hit is not None and hit[0] is eqn else None


def record_source(eqn, src: str | None) -> None:
  sources = source_state.sources
  if sources is not None and src is not None:
    sources[id(eqn)] = (eqn, src)


@contextlib.contextmanager
def inheriting_sources():
  """While ``print_saved_residuals`` records: an ``on_step`` hook for
  ``eval_jaxpr`` under which equations bound while re-evaluating a recorded
  equation inherit its source; None otherwise (no hook, no cost)."""
  if source_state.sources is None:
    yield None
    return
  prev = source_state.current

  def on_step(eqn):
    source_state.current = source_of(eqn) or prev
  try:
    yield on_step
  finally:
    source_state.current = prev


# ------------------------------------------------------------------- remat2
remat_p = Primitive("remat2", multiple_results=True)
remat_p.batch_needs_axis = True   # to pass the axis name to batch_jaxpr


def nothing_saveable(*_, **__) -> bool:
  return False


@remat_p.def_impl
def _remat_impl(*args, jaxpr, prevent_cse, differentiated, policy):
  return program_of(jaxpr).runner(())(args)


@remat_p.def_abstract_eval
def _remat_abstract_eval(*avals, jaxpr, prevent_cse, differentiated, policy):
  return [v.aval for v in jaxpr.outvars]


remat_p.mark_not_applicable("sharding_rule", TYPED_BY_SUB_JAXPR)


# The source-recording trace of ``print_saved_residuals``.
_OPENJAX_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _user_frame() -> str | None:
  """``file:line:col (function)`` of the innermost frame outside openjax."""
  f = sys._getframe(1)
  while f is not None and os.path.abspath(f.f_code.co_filename).startswith(_OPENJAX_DIR):
    f = f.f_back
  if f is None:
    return None
  code = f.f_code
  line, col = f.f_lineno, 0
  try:
    pos = list(code.co_positions())[f.f_lasti // 2]
    line = pos[0] if pos[0] is not None else line
    col = pos[2] if pos[2] is not None else 0
  except (AttributeError, IndexError):
    pass
  return f"{code.co_filename}:{line}:{col} ({code.co_name})"


class RecordingTrace(DynamicJaxprTrace):
  """A staging trace that remembers where each equation came from."""

  def process_primitive(self, primitive, args, params):
    n = len(self.eqns)
    outs = super().process_primitive(primitive, args, params)
    if len(self.eqns) > n:
      record_source(self.eqns[-1], source_state.current or _user_frame())
    return outs


def trace_recording_sources(flat: Callable, avals, dbg) -> ClosedJaxpr:
  """``trace_to_jaxpr`` as a ClosedJaxpr, recording each equation's source
  while ``print_saved_residuals`` records."""
  if source_state.sources is None:
    jaxpr, consts = trace_to_jaxpr(flat, avals, dbg)
    return ClosedJaxpr(jaxpr, consts)
  trace = RecordingTrace(dbg)
  tracers = [trace.new_arg(a) for a in avals]
  try:
    with set_current_trace(trace):
      outs = [trace.to_jaxpr_tracer(o) for o in flat(*tracers)]
    jaxpr, consts = trace.to_jaxpr(outs)
  finally:
    trace.invalidate()
  return ClosedJaxpr(jaxpr, consts)


def _jvp_jaxpr_with_sources(closed: ClosedJaxpr, nonzeros, instantiate):
  """``jvp_jaxpr`` whose equations keep the sources of the equations they
  differentiate (used while recording for ``print_saved_residuals``)."""
  in_avals = closed.in_avals
  n = len(in_avals)
  box: list = []

  def fun(*args):
    tans = iter(args[n:])
    tangents = [next(tans) if nz else Zero(tangent_aval(a)) for a, nz in zip(in_avals, nonzeros)]
    with inheriting_sources() as on_step:
      p_out, t_out = jvp_flat(
          lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs, on_step=on_step),
          list(args[:n]), tangents, instantiate=instantiate)
    box.append([type(t) is not Zero for t in t_out])
    return p_out + [t for t in t_out if type(t) is not Zero]

  t_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzeros) if nz]
  out = trace_recording_sources(fun, list(in_avals) + t_avals, None)
  return out, box[0]


@remat_p.def_jvp
def _remat_jvp(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
  nonzeros = [type(t) is not Zero for t in tangents]
  jvp = jvp_jaxpr if source_state.sources is None else _jvp_jaxpr_with_sources
  closed, out_nz = jvp(ClosedJaxpr(jaxpr, []), nonzeros, False)
  body, consts = convert_constvars(closed)
  nz = [t for t in tangents if type(t) is not Zero]
  outs = remat_p.bind(*consts, *primals, *nz, jaxpr=body, prevent_cse=prevent_cse,
                      differentiated=differentiated, policy=policy)
  n = len(jaxpr.outvars)
  rest = iter(outs[n:])
  tangents_out = [next(rest) if z else Zero.from_primal_value(p)
                  for p, z in zip(outs[:n], out_nz)]
  return outs[:n], tangents_out


@remat_p.def_transpose
def _remat_transpose(cts, *invals, jaxpr, prevent_cse, differentiated, policy):
  linear = [is_undefined_primal(x) for x in invals]
  transposed = transpose_jaxpr(ClosedJaxpr(jaxpr, []), linear)
  t_jaxpr, consts = convert_constvars(transposed)
  nonlinear = [x for x, lin in zip(invals, linear) if not lin]
  outs = iter(remat_p.bind(*consts, *nonlinear, *(instantiate_zeros(c) for c in cts),
                           jaxpr=t_jaxpr, prevent_cse=prevent_cse, differentiated=True,
                           policy=policy))
  return [next(outs) if lin else None for lin in linear]


@remat_p.def_batch
def _remat_batch(vals, dims, *, axis_data, jaxpr, prevent_cse, differentiated,
                 policy):
  params = dict(prevent_cse=prevent_cse, differentiated=differentiated, policy=policy)
  if all(d is None for d in dims):
    return remat_p.bind(*vals, jaxpr=jaxpr, **params), [None] * len(jaxpr.outvars)
  b_jaxpr, consts, out_dims = batch_closed(ClosedJaxpr(jaxpr, []), dims, axis_data)
  outs = remat_p.bind(*consts, *vals, jaxpr=b_jaxpr, **params)
  return outs, out_dims


@remat_p.def_lower
def _remat_lower(ctx, *args, jaxpr, prevent_cse, differentiated, policy):
  if differentiated and prevent_cse and args:
    # Keep the compiler from merging the recomputation with the forward pass.
    args = ctx.op("stablehlo.optimization_barrier", list(args), list(ctx.avals_in))
  return ctx.lower_jaxpr_inline(jaxpr, args)


@remat_p.def_partial_eval
def _remat_partial_eval(pe_trace, unknowns, args, params):
  jaxpr = params["jaxpr"]
  policy = params["policy"] or nothing_saveable
  known, staged, out_unknowns, num_res, in_mask = partial_eval_jaxpr_policy(jaxpr, unknowns,
                                                                           policy)
  known_args = [a for a, u in zip(args, unknowns) if not u]
  with set_current_trace(pe_trace.parent), inheriting_sources() as on_step:
    known_outs = eval_jaxpr(known, [], *known_args, on_step=on_step)
  n_known = len(known_outs) - num_res
  residuals = known_outs[n_known:]
  staged_args = [a for a, m in zip(args, in_mask) if m]
  staged_outs = []
  if any(out_unknowns):
    staged_outs = pe_trace.builder.process_primitive(
        remat_p, [*residuals, *staged_args], dict(params, jaxpr=staged, differentiated=True))
  k, s = iter(known_outs[:n_known]), iter(staged_outs)
  return [next(s) if u else next(k) for u in out_unknowns]


# ------------------------------------------------ policy-driven partial eval
def _is_var(a) -> bool:
  return isinstance(a, Var)


def _split_call(eqn: JaxprEqn, ins_unknown, policy):
  """Split a mixed jit/remat2 equation into a known and a staged equation:
  (known_eqn, staged_eqn, out_unknowns) or None when it cannot be split."""
  p = eqn.primitive
  if p is jit_p:
    inner = eqn.params["jaxpr"]
    inner_jaxpr, consts = inner.jaxpr, inner.consts
  elif p is remat_p:
    inner_jaxpr, consts = eqn.params["jaxpr"], []
  else:
    # Other higher-order primitives (scan, ...) split by their own rule (the
    # residuals it keeps are saved whatever the policy).
    custom = getattr(p, "partial_eval_jaxpr_custom", None)
    return None if custom is None else custom(eqn, ins_unknown)
  known, staged, out_unk, n_res, in_mask = partial_eval_jaxpr_policy(inner_jaxpr, ins_unknown,
                                                                     policy)
  res_vars = [Var(v.aval) for v in known.outvars[len(known.outvars) - n_res:]]
  known_ins = [a for a, u in zip(eqn.invars, ins_unknown) if not u]
  staged_ins = [a for a, m in zip(eqn.invars, in_mask) if m]
  known_outs = [v for v, u in zip(eqn.outvars, out_unk) if not u] + res_vars
  unknown_outs = [v for v, u in zip(eqn.outvars, out_unk) if u]
  if p is jit_p:
    kp = dict(eqn.params, jaxpr=ClosedJaxpr(known, consts),
              donated_invars=(False,) * len(known_ins))
    sp = dict(eqn.params, jaxpr=ClosedJaxpr(staged, []),
              donated_invars=(False,) * (n_res + len(staged_ins)))
  else:
    kp = dict(eqn.params, jaxpr=known)
    sp = dict(eqn.params, jaxpr=staged, differentiated=True)
  return (JaxprEqn(known_ins, known_outs, p, kp),
          JaxprEqn(res_vars + staged_ins, unknown_outs, p, sp), out_unk)


def _remat_partial_eval_eqn(eqn: JaxprEqn, unknown_in: Sequence[bool]):
  """A remat2 equation with known and unknown inputs (inside a jaxpr being
  split, e.g. a jit's) as a known and a staged remat2 equation, by its own
  policy: (known_eqn, staged_eqn, out_unknowns), like jit's split. The
  staged equation may read known values of the enclosing jaxpr."""
  return _split_call(eqn, unknown_in, eqn.params["policy"] or nothing_saveable)


# JAX's partial_eval_jaxpr_custom_rules entry: jaxpr splitters
# (``partial_eval_jaxpr``) call it for a mixed equation so primal outputs stay known.
remat_p.partial_eval_jaxpr_custom = _remat_partial_eval_eqn


def partial_eval_jaxpr_policy(jaxpr: Jaxpr, in_unknowns: Sequence[bool], policy: Callable):
  """Split ``jaxpr`` into ``known`` (constvars, known inputs -> known outputs
  + residuals) and ``staged`` (residuals + the inputs it uses, known or
  unknown, in order -> unknown outputs). Known values the staged part needs
  are inputs, residuals (constants and outputs of equations ``policy`` calls
  saveable), or else are recomputed in ``staged``; residuals come in the
  order the staged part first reads them, as in JAX. Returns (known, staged,
  out_unknowns, num_residuals, staged_in_mask)."""
  unknown: set = {v for v, u in zip(jaxpr.invars, in_unknowns) if u}
  invars = set(jaxpr.invars)
  saveable: set = set(jaxpr.constvars)    # values that may be residuals
  producer: dict = {}          # known, non-saveable var -> its equation
  known_eqns: list = []
  order: list = []             # ("known"/"recompute"/"staged", eqn) in program order
  for eqn in jaxpr.eqns:
    ins_unknown = [_is_var(a) and a in unknown for a in eqn.invars]
    if not any(ins_unknown):
      known_eqns.append(eqn)
      if policy(eqn.primitive, *(a.aval for a in eqn.invars), **eqn.params):
        saveable.update(eqn.outvars)
        order.append(("known", eqn))
      else:
        producer.update((v, eqn) for v in eqn.outvars)
        order.append(("recompute", eqn))
      continue
    split = None if all(ins_unknown) else _split_call(eqn, ins_unknown, policy)
    if split is None:
      order.append(("staged", eqn))
      unknown.update(eqn.outvars)
      continue
    k_eqn, s_eqn, out_unk = split
    if k_eqn is not None:
      known_eqns.append(k_eqn)
      saveable.update(k_eqn.outvars)
    order.append(("staged", s_eqn))
    unknown.update(v for v, u in zip(eqn.outvars, out_unk) if u)
  out_unknowns = [_is_var(a) and a in unknown for a in jaxpr.outvars]

  # Live staged equations, then the known values they need (recomputing
  # non-saveable ones from their inputs).
  live: set = {a for a, u in zip(jaxpr.outvars, out_unknowns) if u}
  keep: set = set()
  for kind, eqn in reversed(order):
    if kind == "staged" and any(v in live for v in eqn.outvars):
      keep.add(id(eqn))
      live.update(a for a in eqn.invars if _is_var(a))
  needed, stack = set(), [a for a in live if a not in unknown]
  while stack:
    v = stack.pop()
    if v in needed:
      continue
    needed.add(v)
    if v not in saveable and v not in invars:
      eqn = producer[v]
      if id(eqn) not in keep:
        keep.add(id(eqn))
        stack.extend(a for a in eqn.invars if _is_var(a))
  first_reads: dict = {}
  for kind, eqn in order:
    if kind != "known":
      for a in eqn.invars:
        if _is_var(a) and a in saveable:
          first_reads.setdefault(a, None)
  residuals = [v for v in first_reads if v in needed]
  body = [e for kind, e in order if kind != "known" and id(e) in keep]
  used = live | needed | {a for a in jaxpr.outvars if _is_var(a) and a in unknown}
  staged_in_mask = [v in used for v in jaxpr.invars]

  known_outs = [a for a, u in zip(jaxpr.outvars, out_unknowns) if not u]
  known = _dce(Jaxpr(jaxpr.constvars, [v for v, u in zip(jaxpr.invars, in_unknowns) if not u],
                     known_outs + residuals, known_eqns, jaxpr.debug_info))
  staged_ins = [v for v, m in zip(jaxpr.invars, staged_in_mask) if m]
  staged = _fresh_copy(residuals + staged_ins,
                       [a for a, u in zip(jaxpr.outvars, out_unknowns) if u], body)
  return known, staged, out_unknowns, len(residuals), staged_in_mask


def _dce(jaxpr: Jaxpr) -> Jaxpr:
  live = {a for a in jaxpr.outvars if _is_var(a)}
  kept = []
  for eqn in reversed(jaxpr.eqns):
    if any(v in live for v in eqn.outvars) or eqn_effects(eqn):
      kept.append(eqn)
      live.update(a for a in eqn.invars if _is_var(a))
  kept.reverse()
  return jaxpr.replace(eqns=kept)


def _fresh_copy(invars, outvars, eqns) -> Jaxpr:
  """A jaxpr over fresh variables (a staged jaxpr shares none with the known one)."""
  env: dict = {}

  def new(v):
    nv = Var(v.aval)
    env[v] = nv
    return nv

  def read(a):
    return env.get(a, a) if _is_var(a) else a

  new_invars = [new(v) for v in invars]
  new_eqns = []
  for e in eqns:
    ne = e.replace(invars=[read(a) for a in e.invars], outvars=[new(v) for v in e.outvars])
    record_source(ne, source_of(e))
    new_eqns.append(ne)
  return Jaxpr([], new_invars, [read(a) for a in outvars], new_eqns)


__all__ = ["name_p", "remat_p", "partial_eval_jaxpr_policy"]
