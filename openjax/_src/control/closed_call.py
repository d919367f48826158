"""``jit_p``: jit's closed call. It holds a closed jaxpr and is a primitive
like any other, so ``grad(jit(f))``, ``jit(grad(f))`` and ``vmap(jit(f))``
compose: each interpreter gives it a rule that transforms the inner jaxpr.

Its impl compiles the jaxpr and runs it with the runtime's executor (under
the ``iree`` executor, ``openjax_executor``) or interprets it. Its lowering
is a private ``func.func`` and a ``func.call`` (inlined with
``inline=True``). Inside a jaxpr that is partially evaluated (``grad`` of a
function calling a jitted one), ``partial_eval_jaxpr_custom`` splits a jit
equation with known and unknown inputs into a known and an unknown jit
equation, so the known outputs stay known.

``tiered=False`` marks a call whose results must not depend on the tier that
runs it (``jax.random``'s samplers: NumPy's and IREE's ``exp``/``log`` differ
in the last bits): it runs compiled even inside an interpreted first call of
an enclosing jitted function."""
from __future__ import annotations

from openjax._src.core import (ClosedJaxpr, Primitive, Var, get_aval, pp_eqn, program_of,
                               set_current_trace)
from openjax._src.core.placement import commit, committed_device
from openjax._src.core.sharding_rules import TYPED_BY_SUB_JAXPR
from openjax._src.interpreters.batching import batch_jaxpr
from openjax._src.interpreters.fold_reductions import folded
from openjax._src.interpreters.jvp import jvp_jaxpr
from openjax._src.interpreters.partial_eval import partial_eval_jaxpr
from openjax._src.interpreters.transpose import transpose_jaxpr
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal, tangent_aval
from openjax._src.primitives.base.structural import instantiate_zeros
from openjax._src.runtime.pipeline import compiling, executable_for_jaxpr

jit_p = Primitive("jit", multiple_results=True)




@jit_p.def_impl
def _jit_impl(*args, jaxpr: ClosedJaxpr, name: str, donated_invars: tuple = (),
              keep_unused: bool = False, inline: bool = False, tiered: bool = True):
  # Reached from transformations' known parts and nested evaluation (a
  # top-level jitted call dispatches its executable itself).
  if compiling(tiered):
    return executable_for_jaxpr(jaxpr, name, donated_invars).execute(args)
  return interpret_closed(jaxpr, args, committed_device(args, name))


def interpret_closed(jaxpr: ClosedJaxpr, args, device) -> list:
  """``jaxpr`` interpreted on ``args``, its results placed on ``device`` (the
  committed inputs' device; None: uncommitted), as a compiled call places
  them."""
  # Interpreted as lowered: reductions of broadcasts and iotas folded.
  run = folded(jaxpr)
  outs = program_of(run.jaxpr).runner(run.consts)(args)
  return outs if device is None else commit(outs, device)


@jit_p.def_abstract_eval
def _jit_abstract_eval(*avals, jaxpr: ClosedJaxpr, name: str, donated_invars: tuple = (),
                       keep_unused: bool = False, inline: bool = False,
                       tiered: bool = True):
  expected = jaxpr.in_avals
  if len(avals) != len(expected):
    raise TypeError(f"jit of {name}: called with {len(avals)} arguments, the jaxpr "
                    f"takes {len(expected)}")
  for i, (a, e) in enumerate(zip(avals, expected)):
    if a.shape != e.shape or a.dtype != e.dtype:
      raise TypeError(f"jit of {name}: argument {i} is {a.str_short()} but the "
                      f"jaxpr expects {e.str_short()}")
  return list(jaxpr.out_avals)


jit_p.mark_not_applicable("sharding_rule", TYPED_BY_SUB_JAXPR)


@jit_p.def_pp
def _jit_pp(eqn, ctx):
  params = {"name": eqn.params["name"], "jaxpr": eqn.params["jaxpr"]}
  if any(eqn.params.get("donated_invars", ())):
    params["donated_invars"] = eqn.params["donated_invars"]
  inner = eqn.params["jaxpr"].jaxpr
  if id(inner) not in ctx.shared_jaxprs:
    ctx.suggest_same_names(inner.invars, eqn.invars)
    ctx.suggest_same_names(inner.outvars, eqn.outvars)
  return pp_eqn(eqn, ctx, params=params)


@jit_p.def_lower
def _jit_lower(ctx, *args, jaxpr: ClosedJaxpr, name: str, donated_invars: tuple = (),
               keep_unused: bool = False, inline: bool = False, tiered: bool = True):
  jaxpr = folded(jaxpr)
  if inline:
    return ctx.lower_jaxpr_inline(jaxpr, args)
  symbol = ctx.lower_jaxpr_as_function(jaxpr, name)
  return ctx.call(symbol, args, ctx.avals_out)


def _call_params(params: dict, jaxpr: ClosedJaxpr, name: str) -> dict:
  n = len(jaxpr.in_avals)
  return dict(params, jaxpr=jaxpr, name=name, donated_invars=(False,) * n)


@jit_p.def_jvp
def _jit_jvp(primals, tangents, *, jaxpr, name, **params):
  nonzeros = [type(t) is not Zero for t in tangents]
  jvp_closed, out_nonzeros = jvp_jaxpr(jaxpr, nonzeros, False)
  outs = jit_p.bind(*primals, *(t for t in tangents if type(t) is not Zero),
                    **_call_params(params, jvp_closed, name))
  n = len(jaxpr.out_avals)
  rest = iter(outs[n:])
  tangents_out = [next(rest) if nz else Zero(tangent_aval(a))
                  for a, nz in zip(jaxpr.out_avals, out_nonzeros)]
  return outs[:n], tangents_out


@jit_p.def_transpose
def _jit_transpose(cts, *invals, jaxpr, name, **params):
  linear = [is_undefined_primal(x) for x in invals]
  transposed = transpose_jaxpr(jaxpr, linear)
  nonlinear = [x for x, lin in zip(invals, linear) if not lin]
  outs = jit_p.bind(*nonlinear, *(instantiate_zeros(c) for c in cts),
                    **_call_params(params, transposed, name))
  rest = iter(outs)
  return [next(rest) if lin else None for lin in linear]


# The vmapped axis's name must reach collectives inside the call even when no
# operand is batched.
jit_p.batch_needs_axis = True


@jit_p.def_batch
def _jit_batch(vals, dims, *, axis_data, jaxpr, name, **params):
  axis_name, axis_size = axis_data.name, axis_data.size
  batched, out_dims = batch_jaxpr(jaxpr, list(dims), axis_size, axis_name,
                                  instantiate=False,
                                  in_shardings=[get_aval(v).sharding for v in vals])
  outs = jit_p.bind(*vals, **_call_params(params, batched, name))
  return outs, out_dims


@jit_p.def_partial_eval
def _jit_partial_eval(pe_trace, unknowns, args, params):
  # Known inputs run the known part now (still one jitted call); the unknown
  # part is staged as its own jit equation fed by the residuals.
  jaxpr = params["jaxpr"]
  known, unknown, out_unknowns, n_res = partial_eval_jaxpr(
      jaxpr.jaxpr, unknowns)
  known_closed = ClosedJaxpr(known, jaxpr.consts)
  known_args = [a for a, u in zip(args, unknowns) if not u]
  with set_current_trace(pe_trace.parent):
    known_outs = jit_p.bind(*known_args, **_call_params(params, known_closed, params["name"]))
  n_known = len(known_outs) - n_res
  residuals = known_outs[n_known:]
  unknown_closed = ClosedJaxpr(unknown, [])
  unknown_args = [a for a, u in zip(args, unknowns) if u]
  unknown_outs = pe_trace.builder.process_primitive(
      jit_p, [*residuals, *unknown_args], _call_params(params, unknown_closed, params["name"]))
  k, u = iter(known_outs[:n_known]), iter(unknown_outs)
  return [next(u) if unk else next(k) for unk in out_unknowns]


def _jit_partial_eval_jaxpr_custom(eqn, unknown_in):
  """A jit equation with known and unknown inputs as two jit equations: the
  known part (known inputs -> known outputs + residuals) and the unknown part
  (residuals + unknown inputs -> unknown outputs)."""
  closed = eqn.params["jaxpr"]
  known, unknown, out_unknowns, n_res = partial_eval_jaxpr(closed.jaxpr, unknown_in)
  res_vars = [Var(v.aval) for v in known.outvars[len(known.outvars) - n_res:]]
  known_ins = [a for a, u in zip(eqn.invars, unknown_in) if not u]
  unknown_ins = [a for a, u in zip(eqn.invars, unknown_in) if u]
  known_eqn = eqn.replace(
      invars=known_ins,
      outvars=[v for v, u in zip(eqn.outvars, out_unknowns) if not u] + res_vars,
      params=_call_params(eqn.params, ClosedJaxpr(known, closed.consts), eqn.params["name"]))
  unknown_eqn = eqn.replace(
      invars=res_vars + unknown_ins,
      outvars=[v for v, u in zip(eqn.outvars, out_unknowns) if u],
      params=_call_params(eqn.params, ClosedJaxpr(unknown, []), eqn.params["name"]))
  return known_eqn, unknown_eqn, out_unknowns


jit_p.partial_eval_jaxpr_custom = _jit_partial_eval_jaxpr_custom


__all__ = ["jit_p"]
