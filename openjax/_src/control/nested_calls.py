"""Nested calls in interpreted programs: the kernels that run a ``jit`` or a
custom-derivative call inside a program's steps without the call's impl.

A nested call's impl builds its program's runner on every call (jit's impl
also folds its jaxpr's reductions and decides its tier each time): ~2-3 us
for a call in an eager library program, and ~50 us for a nested ``jit`` in
a loop body, paid on every trip. The kernels here make the nested program's
runner once, when the calling program's runner is made, and run the same
steps: an eager library program (``api/eager_call``) and the loop bodies and
branches of ``while``, ``scan`` and ``cond`` (``loop_runner``) use them.
"""
from __future__ import annotations

import weakref
from typing import Callable

from openjax._src.config import config
from openjax._src.control.closed_call import jit_p
from openjax._src.control.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from openjax._src.core import ClosedJaxpr, Literal, Var, program_of
from openjax._src.core.program import kernel_scan_runner, kernel_while_runner
from openjax._src.core.jaxpr import DropVar
from openjax._src.core.trace import eager_config
from openjax._src.interpreters.fold_reductions import folded
from openjax._src.runtime.pipeline import compiling


def _call_kernels(interpret_jits: bool) -> Callable:
  """The ``step_kernel`` of ``Program.runner`` for nested calls:
  custom_jvp/vjp calls run their primal function's runner, as their impls
  do; with ``interpret_jits``, tiered ``jit`` calls run their folded
  jaxpr's runner, as jit's impl does when it interprets (calls marked
  ``tiered=False`` keep the impl, which compiles them). Without it every
  ``jit`` keeps its impl (which compiles it under the ``iree`` executor)."""
  def kernel(impl, params):
    if impl is jit_p.impl:
      if not (interpret_jits and params["tiered"]):
        return None
      closed = folded(params["jaxpr"])   # interpreted as lowered, as jit's impl does
    elif impl is custom_jvp_call_p.impl or impl is custom_vjp_call_p.impl:
      closed = params["call_jaxpr"]   # the primal function, as their impls run it
    else:
      return None
    run = program_of(closed.jaxpr).runner(closed.consts, kernel)
    return lambda *values, **_: run(values)
  return kernel


#: Nested calls of a program that runs interpreted (an eager library
#: program under ``interpreting_first_call``, where jit's impl interprets
#: tiered calls too).
nested_call_kernel = _call_kernels(True)
#: Nested calls of a program run where jit's impl compiles tiered calls:
#: custom-derivative calls alone are replaced.
custom_call_kernel = _call_kernels(False)


def interpreted_call(eqn):
  """The jaxpr a nested call of an eager library program runs interpreted,
  as ``nested_call_kernel`` runs it; None for other equations."""
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
  if not any(interpreted_call(e) is not None for e in closed.jaxpr.eqns):
    return closed
  constvars, consts, eqns = list(closed.jaxpr.constvars), list(closed.consts), []

  def walk(jaxpr, env: dict, fresh: bool) -> list:
    def read(a):
      return a if type(a) is Literal else env.get(a, a)
    for eqn in jaxpr.eqns:
      ins = [read(a) for a in eqn.invars]
      inner = interpreted_call(eqn)
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


# ClosedJaxpr -> {(flags' state key, whether tiered jits interpret): runner}
_loop_runners: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def loop_runner(closed: ClosedJaxpr) -> Callable:
  """The runner (``Program.runner``) of a loop's cond or body, or a cond's
  branch, for its impl: made once per jaxpr, flags and tier. Where jit's
  impl would interpret a tiered call now (inside an interpreted call: an
  eager library program), the nested calls' equations are inlined
  (``inline_interpreted_calls``), so a loop whose body calls a library
  function (``jnp.where`` is one) runs that function's steps each trip, not
  its impl; elsewhere custom-derivative calls run their primal's runner
  and ``jit`` calls keep their impl (compiled). With the debug flags on,
  nested calls are not inlined (each step is checked as before). The debug
  flags (read when a runner is made) are part of the key through
  ``config.state_key()``."""
  interpret = not compiling()

  def make():
    jaxpr, consts, kernel = _loop_program(closed, interpret)
    return program_of(jaxpr).runner(consts, kernel)
  return _cached_runner(_loop_runners, closed, (config.state_key(), interpret), make)


def _cached_runner(table, closed: ClosedJaxpr, key, make: Callable):
  """``table[closed][key]``, made by ``make()`` on a miss; a jaxpr keeps the
  newest few runners (flags set and reset many times)."""
  runners = table.get(closed)
  if runners is None:
    runners = table[closed] = {}
  if key in runners:
    return runners[key]
  if len(runners) >= 8:
    runners.clear()
  run = runners[key] = make()
  return run


def _loop_program(closed: ClosedJaxpr, interpret: bool) -> tuple:
  """(jaxpr, constants, step kernel) a loop runs for ``closed``, as
  ``loop_runner`` describes."""
  if interpret and eager_config.flags_ok:
    # The nested calls' steps inlined: ~1 us a step where a nested
    # program's entry costs ~3 us (a loop body of ``jnp.where`` calls).
    flat = inline_interpreted_calls(closed)
    return flat.jaxpr, flat.consts, nested_call_kernel
  return closed.jaxpr, closed.consts, custom_call_kernel


# body ClosedJaxpr -> {(flags' state key, tier, cond ClosedJaxpr): runner or None}
_while_runners: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def while_runner(cond: ClosedJaxpr, body: ClosedJaxpr) -> Callable | None:
  """``run(cond_consts, body_consts, carry) -> carry``: the trips of a
  ``while`` with a scalar predicate, on the programs ``loop_runner`` would
  run for ``cond`` and ``body`` (``kernel_while_runner``: one set of slots
  per loop, not two runner calls a trip); None with the debug flags on."""
  interpret = not compiling()

  def make():
    parts = []
    for closed in (cond, body):
      jaxpr, consts, kernel = _loop_program(closed, interpret)
      parts.append((program_of(jaxpr), consts, kernel))
    return kernel_while_runner(*parts, len(body.jaxpr.outvars))
  return _cached_runner(_while_runners, body, (config.state_key(), interpret, cond), make)


# body ClosedJaxpr -> {(flags' state key, tier, consts, carries): runner or None}
_scan_runners: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def scan_runner(body: ClosedJaxpr, num_consts: int, num_carry: int) -> Callable | None:
  """``run(consts, carry, xs, length, reverse) -> carry + ys``: the trips
  of a ``scan`` on the program ``loop_runner`` would run for ``body``
  (``kernel_scan_runner``: one set of slots per loop, not a runner call a
  trip); None with the debug flags on."""
  interpret = not compiling()

  def make():
    jaxpr, consts, kernel = _loop_program(body, interpret)
    return kernel_scan_runner((program_of(jaxpr), consts, kernel), num_consts, num_carry)
  return _cached_runner(_scan_runners, body,
                        (config.state_key(), interpret, num_consts, num_carry), make)


__all__ = ["nested_call_kernel", "custom_call_kernel", "interpreted_call",
           "inline_interpreted_calls", "loop_runner", "scan_runner",
           "while_runner"]
