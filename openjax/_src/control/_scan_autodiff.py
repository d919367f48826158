"""Autodiff rules of ``scan_p``: JVP, partial evaluation (trace level, for
``linearize``, and jaxpr level, for a scan inside a jaxpr being split) and
transpose.

Reverse mode of a scan is: the JVP scan is split by partial evaluation into a
*known* scan (primal carries and ys, plus the residuals the tangent part
needs, stacked per iteration) and an *unknown* (linear) scan reading those
residuals; transposition turns the linear scan into a reverse scan. A
residual that depends only on loop constants is the same in every
iteration, so it is hoisted out of the known scan and passed to the linear
scan as an unstacked constant: ``grad`` of a scan then costs O(length)
memory, not O(length x size of every loop-invariant value).
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

from openjax._src.core import (ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, dce_jaxpr, eval_jaxpr,
                               set_current_trace)
from openjax._src.control._scan_rules import (checked_closed, merge_by_mask,
                                                 partial_eval_instantiate, scan_p, split_list,
                                                 stacked_aval)
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal, tangent_aval
from openjax._src.primitives.base.structural import add_tangents, instantiate_zeros, zeros_like_aval
from openjax._src.control.closed_call import jit_p
from openjax._src.interpreters.jvp import jvp_jaxpr
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.interpreters.transpose import transpose_jaxpr


def _or(a: Sequence[bool], b: Sequence[bool]) -> list[bool]:
  return [x or y for x, y in zip(a, b)]


# -------------------------------------------------------------------- JVP
@scan_p.def_jvp
def _scan_jvp(primals, tangents, *, reverse, length, jaxpr, num_consts, num_carry, unroll):
  num_xs = len(jaxpr.in_avals) - num_consts - num_carry
  num_ys = len(jaxpr.out_avals) - num_carry
  const_nz, init_nz, xs_nz = split_list([type(t) is not Zero for t in tangents],
                                        [num_consts, num_carry])
  # A carry tangent is nonzero when its initial tangent is or when the body
  # makes it so; iterate until the set stops growing.
  carry_nz = init_nz
  for _ in range(num_carry + 1):
    jvp_closed, out_nz = jvp_jaxpr(
        jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * num_ys)
    grown = _or(carry_nz, out_nz[:num_carry])
    if grown == carry_nz:
      break
    carry_nz = grown
  ys_nz = out_nz[num_carry:]
  # jvp_jaxpr's order is (primals, tangents) -> (primals, tangents); the scan
  # needs each group's tangents right after its primals.
  j = jvp_closed.jaxpr
  p_in, t_in = split_list(j.invars, [num_consts + num_carry + num_xs])
  pc, pcar, pxs = split_list(p_in, [num_consts, num_carry])
  tc, tcar, txs = split_list(t_in, [sum(const_nz), sum(carry_nz)])
  p_out, t_out = split_list(j.outvars, [num_carry + num_ys])
  pcar_o, pys_o = split_list(p_out, [num_carry])
  tcar_o, tys_o = split_list(t_out, [sum(carry_nz)])
  body = ClosedJaxpr(j.replace(invars=[*pc, *tc, *pcar, *tcar, *pxs, *txs],
                               outvars=[*pcar_o, *tcar_o, *pys_o, *tys_o]), jvp_closed.consts)

  consts, init, xs = split_list(primals, [num_consts, num_carry])
  t_consts, t_init, t_xs = split_list(tangents, [num_consts, num_carry])
  consts_dot = [t for t, nz in zip(t_consts, const_nz) if nz]
  init_dot = [instantiate_zeros(t) for t, nz in zip(t_init, carry_nz) if nz]
  xs_dot = [t for t, nz in zip(t_xs, xs_nz) if nz]
  outs = scan_p.bind(*consts, *consts_dot, *init, *init_dot, *xs, *xs_dot,
                     reverse=reverse, length=length, jaxpr=body,
                     num_consts=num_consts + len(consts_dot),
                     num_carry=num_carry + len(init_dot), unroll=unroll)
  carry, carry_dot, ys, ys_dot = split_list(outs, [num_carry, len(init_dot), num_ys])
  primals_out = carry + ys
  out_avals = [*jaxpr.out_avals[:num_carry],
               *(stacked_aval(length, a) for a in jaxpr.out_avals[num_carry:])]
  t_iter = iter(carry_dot + ys_dot)
  tangents_out = [next(t_iter) if nz else Zero(tangent_aval(a))
                  for a, nz in zip(out_avals, carry_nz + ys_nz)]
  return primals_out, tangents_out


# --------------------------------------------------------- partial evaluation
class _Residual(NamedTuple):
  kind: str     # "hoisted" (a loop-invariant value), "stacked" or "xs" (a known xs operand)
  index: int    # into the hoisted values, the stacked values or the known inputs


class ScanSplit(NamedTuple):
  """How a scan with some unknown inputs splits into a known scan and an
  unknown one (see ``plan_partial_eval``)."""
  in_unknowns: list[bool]      # per operand (carries made unknown by the body included)
  out_unknowns: list[bool]     # per output
  hoist: ClosedJaxpr           # known consts -> (hoisted residuals, known loop consts)
  num_hoisted: int
  known_loop: ClosedJaxpr      # (loop consts, known carry, known xs) -> (known outs, stacked res)
  num_known_carry: int
  residuals: list[_Residual]   # in the order of the unknown body's residual inputs
  unknown: ClosedJaxpr         # (hoisted res, unknown consts, unknown carry, unknown xs, rest)
  unknown_num_consts: int
  unknown_num_carry: int


def plan_partial_eval(jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
                      unknowns: Sequence[bool]) -> ScanSplit:
  """Split a scan body for known and unknown operands.

  Carries become unknown when the body makes them so (a fixpoint). Known
  values the unknown part needs (residuals) are either known ``xs``
  operands (passed on as they are), values computed from loop constants
  only (hoisted: computed once, outside the known scan, and passed to the
  unknown scan as constants) or per-iteration values (stacked outputs of the
  known scan, scanned over by the unknown scan)."""
  body = jaxpr.jaxpr
  num_ys = len(body.outvars) - num_carry
  const_uk, init_uk, xs_uk = split_list(list(unknowns), [num_consts, num_carry])
  carry_uk = init_uk
  for _ in range(num_carry + 1):
    known, unknown, out_uk, n_res = partial_eval_instantiate(
        body, const_uk + carry_uk + xs_uk, carry_uk + [False] * num_ys)
    grown = _or(carry_uk, out_uk[:num_carry])
    if grown == carry_uk:
      break
    carry_uk = grown
  in_uk = const_uk + carry_uk + xs_uk
  n_kc = num_consts - sum(const_uk)
  n_kcar = num_carry - sum(carry_uk)
  n_kout = len(known.outvars) - n_res
  res_vars = known.outvars[n_kout:]

  # Residuals that are known xs operands are passed on, not re-stacked.
  known_in_index = {v: i for i, v in enumerate(known.invars)}
  xs_start = n_kc + n_kcar
  kinds: list[tuple[str, int]] = []
  loop_res = []
  for r in res_vars:
    i = known_in_index.get(r)
    if i is not None and i >= xs_start:
      kinds.append(("xs", i))
    else:
      kinds.append(("loop", len(loop_res)))
      loop_res.append(r)
  known = dce_jaxpr(known.replace(outvars=known.outvars[:n_kout] + loop_res))

  # Hoisting: the part of the known body that reads only loop constants
  # runs once, before the loop. Its outputs are loop-invariant residuals and
  # the constants of the remaining loop body.
  n_loop_in = len(known.invars) - n_kc
  hoist, loop, h_out_uk, n_loop_consts = partial_eval_instantiate(
      known, [False] * n_kc + [True] * n_loop_in, [True] * n_kout + [False] * len(loop_res))
  res_is_stacked = h_out_uk[n_kout:]
  hoisted_pos, stacked_pos = {}, {}
  for j, stacked in enumerate(res_is_stacked):
    (stacked_pos if stacked else hoisted_pos)[j] = len(stacked_pos if stacked else hoisted_pos)
  residuals = []
  for kind, j in kinds:
    if kind == "xs":
      residuals.append(_Residual("xs", j))
    elif res_is_stacked[j]:
      residuals.append(_Residual("stacked", stacked_pos[j]))
    else:
      residuals.append(_Residual("hoisted", hoisted_pos[j]))

  # The unknown body takes its residuals as (hoisted ones, its own inputs,
  # per-iteration ones): hoisted residuals are constants of the unknown scan.
  res_u, uk_ins = split_list(unknown.invars, [n_res])
  hoisted_u = [v for v, r in zip(res_u, residuals) if r.kind == "hoisted"]
  ext_u = [v for v, r in zip(res_u, residuals) if r.kind != "hoisted"]
  unknown = dce_jaxpr(unknown.replace(invars=[*hoisted_u, *uk_ins, *ext_u]))
  return ScanSplit(
      in_unknowns=in_uk, out_unknowns=out_uk,
      hoist=ClosedJaxpr(dce_jaxpr(hoist), jaxpr.consts), num_hoisted=len(hoisted_pos),
      known_loop=ClosedJaxpr(dce_jaxpr(loop), []), num_known_carry=n_kcar,
      residuals=residuals, unknown=ClosedJaxpr(unknown, []),
      unknown_num_consts=len(hoisted_u) + sum(const_uk),
      unknown_num_carry=sum(carry_uk))


def run_known(split: ScanSplit, known_ins: Sequence, *, reverse, length, unroll):
  """Run the known part in the current trace: returns (known outputs,
  hoisted residuals, stacked residuals)."""
  n_kc = len(split.hoist.jaxpr.invars)
  kc, rest = split_list(known_ins, [n_kc])
  h = eval_jaxpr(split.hoist.jaxpr, split.hoist.consts, *kc)
  hoisted, loop_consts = split_list(h, [split.num_hoisted])
  outs = []
  if split.known_loop.jaxpr.outvars:
    outs = scan_p.bind(*loop_consts, *rest, reverse=reverse, length=length,
                       jaxpr=split.known_loop, num_consts=len(loop_consts),
                       num_carry=split.num_known_carry, unroll=unroll)
  n_known_out = len(split.out_unknowns) - sum(split.out_unknowns)
  return outs[:n_known_out], hoisted, outs[n_known_out:]


def residual_operands(split: ScanSplit, known_ins: Sequence, hoisted: Sequence,
                      stacked: Sequence) -> tuple[list, list]:
  """The unknown scan's residual operands: (its leading constants, its
  trailing scanned inputs)."""
  leading, trailing = [], []
  for r in split.residuals:
    if r.kind == "hoisted":
      leading.append(hoisted[r.index])
    elif r.kind == "stacked":
      trailing.append(stacked[r.index])
    else:
      trailing.append(known_ins[r.index])
  return leading, trailing


def _unknown_params(split: ScanSplit, params: dict) -> dict:
  return dict(params, jaxpr=split.unknown, num_consts=split.unknown_num_consts,
              num_carry=split.unknown_num_carry)


@scan_p.def_partial_eval
def _scan_partial_eval(pe_trace, unknowns, args, params):
  split = plan_partial_eval(params["jaxpr"], params["num_consts"], params["num_carry"],
                            unknowns)
  known_ins = [a for a, u in zip(args, split.in_unknowns) if not u]
  loop = dict(reverse=params["reverse"], length=params["length"], unroll=params["unroll"])
  with set_current_trace(pe_trace.parent):
    known_outs, hoisted, stacked = run_known(split, known_ins, **loop)
  leading, trailing = residual_operands(split, known_ins, hoisted, stacked)
  unknown_ins = [a for a, u in zip(args, split.in_unknowns) if u]
  unknown_outs = []
  if any(split.out_unknowns):
    unknown_outs = pe_trace.builder.process_primitive(
        scan_p, [*leading, *unknown_ins, *trailing], _unknown_params(split, params))
  return merge_by_mask(split.out_unknowns, unknown_outs, known_outs)


def _scan_partial_eval_jaxpr_custom(eqn: JaxprEqn, unknowns: Sequence[bool]):
  """A scan equation with known and unknown inputs (inside a jaxpr being
  split, e.g. a jit's under ``grad``) as a known and an unknown equation:
  (known_eqn, unknown_eqn, out_unknowns). The known equation is the known
  scan, or a jit call running the hoisted part and the known scan; the
  unknown equation is a scan reading its residuals (and known operands of
  the enclosing jaxpr)."""
  params = eqn.params
  split = plan_partial_eval(params["jaxpr"], params["num_consts"], params["num_carry"],
                            unknowns)
  known_atoms = [a for a, u in zip(eqn.invars, split.in_unknowns) if not u]
  loop = dict(reverse=params["reverse"], length=params["length"], unroll=params["unroll"])
  counts: list = []

  def known_fun(*known_ins):
    outs, hoisted, stacked = run_known(split, known_ins, **loop)
    counts.extend([len(outs), len(hoisted)])
    return [*outs, *hoisted, *stacked]

  kj, kconsts = trace_to_jaxpr(known_fun, [a.aval for a in known_atoms])
  n_out, n_hoisted = counts
  # Outer variables for the known jaxpr's outputs: the equation's own known
  # outputs, and fresh variables for residuals, except residuals that are
  # just known inputs (forwarded constants), which the unknown equation
  # reads directly.
  in_index = {v: i for i, v in enumerate(kj.invars)}
  known_outvars = [v for v, u in zip(eqn.outvars, split.out_unknowns) if not u]
  res_atoms, kept_outs, kept_vars = [], [], []
  for i, o in enumerate(kj.outvars):
    if i < n_out:
      kept_outs.append(o)
      kept_vars.append(known_outvars[i])
    elif isinstance(o, Var) and o in in_index:
      res_atoms.append(known_atoms[in_index[o]])
    else:
      v = Var(o.aval)
      res_atoms.append(v)
      kept_outs.append(o)
      kept_vars.append(v)
  kj = kj.replace(outvars=kept_outs)
  known_eqn = _as_single_eqn(kj, kconsts, known_atoms, kept_vars)

  hoisted_atoms, stacked_atoms = split_list(res_atoms, [n_hoisted])
  leading, trailing = residual_operands(split, known_atoms, hoisted_atoms, stacked_atoms)
  unknown_atoms = [a for a, u in zip(eqn.invars, split.in_unknowns) if u]
  unknown_eqn = JaxprEqn([*leading, *unknown_atoms, *trailing],
                         [v for v, u in zip(eqn.outvars, split.out_unknowns) if u],
                         scan_p, _unknown_params(split, params))
  return known_eqn, unknown_eqn, split.out_unknowns


def _as_single_eqn(jaxpr: Jaxpr, consts: list, in_atoms: list, out_vars: list) -> JaxprEqn:
  """One equation computing ``jaxpr`` on ``in_atoms`` into ``out_vars``: the
  jaxpr's only equation when it is a scan on the jaxpr's inputs whose results
  are the outputs, else an inlined jit call."""
  if not consts and len(jaxpr.eqns) == 1 and jaxpr.eqns[0].primitive is scan_p:
    e = jaxpr.eqns[0]
    to_outer = dict(zip(jaxpr.invars, in_atoms))
    if (all(isinstance(a, Literal) or a in to_outer for a in e.invars)
        and all(isinstance(o, Var) and o in e.outvars for o in jaxpr.outvars)
        and len(set(jaxpr.outvars)) == len(jaxpr.outvars)):
      out_map = dict(zip(jaxpr.outvars, out_vars))
      return e.replace(invars=[a if isinstance(a, Literal) else to_outer[a] for a in e.invars],
                       outvars=[out_map.get(o, Var(o.aval)) for o in e.outvars])
  closed = checked_closed(jaxpr, consts)
  return JaxprEqn(in_atoms, out_vars, jit_p,
                  dict(jaxpr=closed, name="scan_known", donated_invars=(False,) * len(in_atoms),
                       keep_unused=False, inline=True))


scan_p.partial_eval_jaxpr_custom = _scan_partial_eval_jaxpr_custom


# -------------------------------------------------------------- transpose
@scan_p.def_transpose
def _scan_transpose(cts, *args, reverse, length, jaxpr, num_consts, num_carry, unroll):
  consts, init, xs = split_list(args, [num_consts, num_carry])
  const_lin = [is_undefined_primal(x) for x in consts]
  xs_lin = [is_undefined_primal(x) for x in xs]
  # Every carry is linear: a known carry operand of a linear scan is an
  # instantiated zero tangent (its cotangent is dropped).
  ires = [x for x, lin in zip(consts, const_lin) if not lin]
  eres = [x for x, lin in zip(xs, xs_lin) if not lin]
  lin_const_avals = [x.aval for x, lin in zip(consts, const_lin) if lin]
  ct_carry, ct_ys = split_list(cts, [num_carry])
  ct_carry = [instantiate_zeros(c) for c in ct_carry]
  ct_ys = [instantiate_zeros(c) for c in ct_ys]
  ct_consts = [zeros_like_aval(tangent_aval(a)) for a in lin_const_avals]
  body_t = _transpose_body(jaxpr, num_consts, num_carry, const_lin, xs_lin)
  outs = scan_p.bind(*ires, *ct_consts, *ct_carry, *ct_ys, *eres,
                     reverse=not reverse, length=length, jaxpr=body_t,
                     num_consts=len(ires), num_carry=len(ct_consts) + num_carry,
                     unroll=unroll)
  ct_lin_consts, ct_init, ct_lin_xs = split_list(outs, [len(ct_consts), num_carry])
  return [*merge_by_mask(const_lin, ct_lin_consts, [None] * len(ires)),
          *[c if is_undefined_primal(x) else None for c, x in zip(ct_init, init)],
          *merge_by_mask(xs_lin, ct_lin_xs, [None] * len(eres))]


def _transpose_body(jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
                    const_lin: list[bool], xs_lin: list[bool]) -> ClosedJaxpr:
  """The body of the transposed scan: (non-linear consts; cotangents of the
  linear consts and of the carry; cotangents of the ys, non-linear xs) ->
  (accumulated cotangents of the linear consts and the carry; cotangents of
  the linear xs)."""
  linear = const_lin + [True] * num_carry + xs_lin
  transposed = transpose_jaxpr(jaxpr, linear)
  in_avals = jaxpr.in_avals
  const_avals, _, x_avals = split_list(in_avals, [num_consts, num_carry])
  ires_avals = [a for a, lin in zip(const_avals, const_lin) if not lin]
  eres_avals = [a for a, lin in zip(x_avals, xs_lin) if not lin]
  ct_const_avals = [tangent_aval(a) for a, lin in zip(const_avals, const_lin) if lin]
  ct_carry_avals = [tangent_aval(a) for a in jaxpr.out_avals[:num_carry]]
  ct_y_avals = [tangent_aval(a) for a in jaxpr.out_avals[num_carry:]]
  n_lc = len(ct_const_avals)

  def body(*args):
    ires, ct_consts, ct_carry, ct_ys, eres = split_list(
        args, [len(ires_avals), n_lc, num_carry, len(ct_y_avals)])
    outs = eval_jaxpr(transposed.jaxpr, transposed.consts, *ires, *eres, *ct_carry, *ct_ys)
    new_ct_consts, ct_carry_in, ct_xs = split_list(outs, [n_lc, num_carry])
    return [*(add_tangents(a, b) for a, b in zip(ct_consts, new_ct_consts)),
            *ct_carry_in, *ct_xs]

  body_jaxpr, consts = trace_to_jaxpr(
      body, [*ires_avals, *ct_const_avals, *ct_carry_avals, *ct_y_avals, *eres_avals])
  return checked_closed(body_jaxpr, consts)


__all__: list[str] = []
