"""How a per-device program (``shard_map_p``'s jaxpr) is split at its
collectives for compiled evaluation (``Plan``): runs of collective-free
equations become one compiled call each; consecutive all-reduces over the
same axes meet the devices once (``_grouped_all_reduces``).
"""
from __future__ import annotations

import weakref

import numpy as np

from openjax._src.control.closed_call import jit_p
from openjax._src.core import ClosedJaxpr, Jaxpr, Literal
from openjax._src.core.jaxpr import DropVar, eqn_effects, jaxprs_in_params
from openjax._src.primitives.collectives.all_to_all import all_to_all_p
from openjax._src.primitives.collectives.collectives import (
    all_gather_p, axis_index_p, pbroadcast_p, pmax_p, pmin_p, ppermute_p, psum_p,
    reduce_scatter_p)
from openjax._src.primitives.collectives.ragged import ragged_all_to_all_p
from openjax._src.primitives.collectives.send_recv import precv_p, psend_p
from openjax._src.primitives.collectives.varying import psum_invariant_p

__all__ = ["COLLECTIVES", "THREADED_ONLY", "ALL_REDUCE_UFUNCS", "Plan", "plan_of",
           "has_collective", "is_all_reduce", "split_steps"]

COLLECTIVES = frozenset([psum_p, pmax_p, pmin_p, all_gather_p, reduce_scatter_p, ppermute_p,
                         pbroadcast_p, all_to_all_p, axis_index_p, psum_invariant_p,
                         ragged_all_to_all_p, psend_p, precv_p])
# Sends and receives pair up in whichever order the devices reach them: only
# devices running their programs each in its own thread can do that.
THREADED_ONLY = frozenset([ragged_all_to_all_p, psend_p, precv_p])


def has_collective(jaxpr: Jaxpr) -> bool:
  for eqn in jaxpr.eqns:
    if eqn.primitive in COLLECTIVES:
      return True
    if any(has_collective(j) for j in jaxprs_in_params(eqn.params)):
      return True
  return False


class Plan:
  """A per-device program split at its collectives: ``steps`` are
  ``("call", closed_segment, in_atoms, out_vars)`` (collective-free
  equations, one compiled call), ``["allreduce", primitive, axes, eqns,
  their outvars]`` (consecutive psums, pmaxes or pmins over the same axes:
  one meeting of the devices), ``("inline", eqn, inner_plan)`` (a jit call
  holding collectives, evaluated step by step) or ``("eqn", eqn)``."""
  __slots__ = ("jaxpr", "consts", "steps", "programs")

  def __init__(self, closed: ClosedJaxpr):
    self.programs: dict = {}   # the lock-step run's collective executables
    self.jaxpr = jaxpr = _grouped_all_reduces(closed.jaxpr)
    self.consts = closed.consts

    def own(eqn) -> bool:
      return eqn.primitive in COLLECTIVES or any(
          has_collective(j) for j in jaxprs_in_params(eqn.params))

    def add(steps: list, eqn) -> None:
      if eqn.primitive is jit_p:
        steps.append(("inline", eqn, plan_of(eqn.params["jaxpr"])))
      elif is_all_reduce(eqn):
        last = steps[-1] if steps else None
        names = tuple(eqn.params["axes"])
        if (last is not None and last[0] == "allreduce" and last[1] is eqn.primitive
            and last[2] == names and not any(v in last[4] for v in eqn.invars)):
          # Consecutive all-reduces (a gradient pytree's leaves) meet once.
          last[3].append(eqn)
          last[4].update(eqn.outvars)
        else:
          steps.append(["allreduce", eqn.primitive, names, [eqn], set(eqn.outvars)])
      else:
        steps.append(("eqn", eqn))
    self.steps = split_steps(jaxpr, own, add)


def _grouped_all_reduces(jaxpr: Jaxpr) -> Jaxpr:
  """``jaxpr`` with the equations that read an all-reduce's result moved after
  the all-reduces that follow it (same axes, not reading them), so those meet
  the devices once: ``pmean`` of a gradient pytree is psum, divide, psum, ...
  (jit(shard_map)'s MLP train step: 13 programs, grouped 2). An effect, another
  collective or a call holding collectives closes the group first."""
  out: list = []
  group: list = []      # the open all-reduce group's equations
  held: list = []       # equations reading its results, after it
  touched: set = set()  # the group's and the held equations' results

  def flush():
    out.extend(group + held)
    group.clear(), held.clear(), touched.clear()

  for eqn in jaxpr.eqns:
    reads = any(not isinstance(a, Literal) and a in touched for a in eqn.invars)
    if is_all_reduce(eqn):
      if group and not reads and group[0].primitive is eqn.primitive and \
          tuple(group[0].params["axes"]) == tuple(eqn.params["axes"]):
        group.append(eqn)
        touched.update(eqn.outvars)
        continue
      flush()
      group.append(eqn)
      touched.update(eqn.outvars)
      continue
    if not group:
      out.append(eqn)
      continue
    special = (eqn.primitive in COLLECTIVES or eqn_effects(eqn)
               or any(has_collective(j) for j in jaxprs_in_params(eqn.params)))
    if special:
      flush()
      out.append(eqn)
    elif reads:
      held.append(eqn)
      touched.update(eqn.outvars)
    else:
      out.append(eqn)
  flush()
  return jaxpr if out == jaxpr.eqns else jaxpr.replace(eqns=out)


ALL_REDUCE_UFUNCS = {psum_p: np.add, pmax_p: np.maximum, pmin_p: np.minimum,
                      psum_invariant_p: np.add}


def is_all_reduce(eqn) -> bool:
  return (eqn.primitive in ALL_REDUCE_UFUNCS and eqn.params.get("axis_index_groups") is None
          and not any(isinstance(a, int) for a in eqn.params["axes"]))


def _reads_after(jaxpr: Jaxpr) -> list:
  """For each equation index i, the vars read by equations after i or
  returned."""
  reads = set(v for v in jaxpr.outvars if not isinstance(v, Literal))
  out = [None] * len(jaxpr.eqns)
  for i in range(len(jaxpr.eqns) - 1, -1, -1):
    out[i] = frozenset(reads)
    reads.update(v for v in jaxpr.eqns[i].invars if not isinstance(v, Literal))
  return out


def _segment(jaxpr: Jaxpr, indices: list, read_later) -> tuple:
  eqns = [jaxpr.eqns[i] for i in indices]
  defined, ins = set(), []
  for eqn in eqns:
    for v in eqn.invars:
      if not isinstance(v, Literal) and v not in defined and v not in ins:
        ins.append(v)
    defined.update(eqn.outvars)
  outs = [v for eqn in eqns for v in eqn.outvars
          if not isinstance(v, DropVar) and v in read_later]
  closed = ClosedJaxpr(Jaxpr([], ins, outs, eqns), [])
  return ("call", closed, ins, outs)


def split_steps(jaxpr: Jaxpr, own, add) -> list:
  """``jaxpr``'s equations as steps: each run of equations ``own`` rejects as
  one ``("call", closed_segment, in_vars, out_vars)`` (its outputs: the vars
  read later or returned), each equation ``own`` accepts handed to
  ``add(steps, eqn)``, which appends (or merges into) its step."""
  later_reads = _reads_after(jaxpr)
  steps: list = []
  run: list = []
  for i, eqn in enumerate(jaxpr.eqns):
    if not own(eqn):
      run.append(i)
      continue
    if run:
      steps.append(_segment(jaxpr, run, later_reads[run[-1]]))
      run = []
    add(steps, eqn)
  if run:
    steps.append(_segment(jaxpr, run, later_reads[run[-1]]))
  return steps


plans: "weakref.WeakKeyDictionary[ClosedJaxpr, Plan]" = weakref.WeakKeyDictionary()


def plan_of(closed: ClosedJaxpr) -> Plan:
  plan = plans.get(closed)
  if plan is None:
    plan = plans[closed] = Plan(closed)
  return plan
