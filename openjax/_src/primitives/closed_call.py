"""``jit_p``: jit's closed call. It holds a closed jaxpr and is a primitive
like any other, so ``grad(jit(f))``, ``jit(grad(f))`` and ``vmap(jit(f))``
compose: each interpreter gives it a rule that transforms the inner jaxpr."""
from __future__ import annotations

from openjax._src.core import ClosedJaxpr, Primitive, eval_jaxpr, pp_eqn

jit_p = Primitive("jit", multiple_results=True)


@jit_p.def_impl
def _jit_impl(*args, jaxpr: ClosedJaxpr, name: str, donated_invars: tuple = (),
              keep_unused: bool = False, inline: bool = False):
  # The interpreter path; the compiler replaces this executor.
  return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


@jit_p.def_abstract_eval
def _jit_abstract_eval(*avals, jaxpr: ClosedJaxpr, name: str, donated_invars: tuple = (),
                       keep_unused: bool = False, inline: bool = False):
  expected = jaxpr.in_avals
  if len(avals) != len(expected):
    raise TypeError(f"jit of {name}: called with {len(avals)} arguments, the jaxpr "
                    f"takes {len(expected)}")
  for i, (a, e) in enumerate(zip(avals, expected)):
    if a.shape != e.shape or a.dtype != e.dtype:
      raise TypeError(f"jit of {name}: argument {i} is {a.str_short()} but the "
                      f"jaxpr expects {e.str_short()}")
  return list(jaxpr.out_avals)


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


__all__ = ["jit_p"]
