"""A ``jit`` whose program calls ``shard_map`` (or ``pmap``) at its top
level runs each such call as a bare ``shard_map`` does, compiled or
interpreted (so both give the same sharded results): one program per
device of the mesh, each on its own block (``run_on_devices``), rather than
the call mapped over the mesh axes inside one program on one device (its
lowering rule, still used where the call sits inside a loop or a branch).

The program is split at those calls (``SplitProgram``): each run of the
other equations is one compiled (or interpreted) call on the arguments'
device, and jit calls holding such calls are split the same way.
"""
from __future__ import annotations

import weakref

from openjax._src.control.closed_call import interpret_closed, jit_p
from openjax._src.control.shard_map import partial_parents, run_on_devices, shard_map_p
from openjax._src.control.shard_map_plan import split_steps
from openjax._src.control.spmd_labels import as_first_argument
from openjax._src.core import Array, ClosedJaxpr, Jaxpr, Literal
from openjax._src.core.array import ShardedBuffer, sharded_array_of_shards
from openjax._src.core.jaxpr import DropVar
from openjax._src.core.placement import committed_device
from openjax._src.core.sharding import NamedSharding, PartitionSpec, dim_axes
from openjax._src.runtime.pipeline import compiling, executable_for_jaxpr

__all__ = ["SplitProgram", "compiler_labelled", "split_program"]


def _calls_shard_map(jaxpr: Jaxpr) -> bool:
  for eqn in jaxpr.eqns:
    if eqn.primitive is shard_map_p:
      return True
    if eqn.primitive is jit_p and _calls_shard_map(eqn.params["jaxpr"].jaxpr):
      return True
  return False


class SplitProgram:
  """``steps``: ``("call", segment, ins, outs)`` (other equations, compiled
  together), ``("shard_map", eqn)`` or ``("inline", eqn, SplitProgram)``."""
  __slots__ = ("jaxpr", "consts", "steps", "name", "__weakref__")

  def __init__(self, closed: ClosedJaxpr, name: str):
    self.jaxpr, self.consts, self.name = closed.jaxpr, closed.consts, name

    def own(eqn) -> bool:
      return eqn.primitive is shard_map_p or (
          eqn.primitive is jit_p and _calls_shard_map(eqn.params["jaxpr"].jaxpr))

    def add(steps: list, eqn) -> None:
      if eqn.primitive is shard_map_p:
        steps.append(("shard_map", eqn))
      else:
        steps.append(("inline", eqn, SplitProgram(eqn.params["jaxpr"], eqn.params["name"])))
    self.steps = split_steps(closed.jaxpr, own, add)

  def run(self, args: list, device=None) -> list:
    if device is None:
      # The other equations run on the committed single-device Arrays'
      # device; arrays split over several devices are read where they are.
      device = committed_device([x for x in args if type(x) is not Array
                                 or type(x._buffer) is not ShardedBuffer], self.name)
    env = dict(zip(self.jaxpr.constvars, self.consts))
    env.update(zip(self.jaxpr.invars, args))

    def read(a):
      return a.operand if isinstance(a, Literal) else env[a]

    for step in self.steps:
      if step[0] == "call":
        _, closed, ins, outs = step
        vals = [env[v] for v in ins]
        vals = (executable_for_jaxpr(closed, self.name).execute(vals, device) if compiling()
                else interpret_closed(closed, vals, device))
        env.update(zip(outs, vals))
        continue
      eqn = step[1]
      vals = [read(a) for a in eqn.invars]
      if step[0] == "shard_map":
        p = eqn.params
        outs = [compiler_labelled(x, p["mesh"]) for x in
                run_on_devices(vals, p["jaxpr"], p["mesh"], p["in_specs"], p["out_specs"])]
        first = next((k for k, a in enumerate(eqn.invars) if self.jaxpr.invars
                      and a is self.jaxpr.invars[0]), None)
        if first is not None:
          # (a result not computed from it, such as a constant, keeps its
          # out_specs label, as in JAX)
          outs = as_first_argument(outs, args[0], _whole_mesh(p["mesh"]),
                                   _flows_from(p["jaxpr"], first))
      else:
        outs = step[2].run(vals, device)
      env.update((v, x) for v, x in zip(eqn.outvars, outs) if not isinstance(v, DropVar))
    return [read(a) for a in self.jaxpr.outvars]


def compiler_labelled(x, mesh):
  """``x`` labelled as JAX's jit labels a shard_map result split over Auto
  mesh axes: by the layout XLA hands back, which leaves out axes of size 1
  (``P('i')`` over an ``i`` of size 1 is ``P()``). Explicit axes are types,
  kept as written, and over a mesh with Explicit axes the spec names every
  dimension, as jit's typed results do (``P()`` of a vector is ``P(None,)``)."""
  if type(x) is not Array or type(x._buffer) is not ShardedBuffer:
    return x
  sharding = x._buffer.sharding
  dropped = {a for a in mesh.axis_names
             if mesh.shape[a] == 1 and a not in mesh.explicit_axes}
  if not dropped or not any(a in dropped for e in sharding.spec for a in dim_axes(e)):
    if sharding.mesh.explicit_axes and len(sharding.spec) < x.ndim:
      typed = NamedSharding(sharding.mesh, sharding.spec._normalized_spec_for_aval(x.ndim),
                            memory_kind=sharding.memory_kind)
      return sharded_array_of_shards(x.aval, typed, x._buffer.shards)
    return x
  entries = []
  for e in sharding.spec:
    kept = tuple(a for a in dim_axes(e) if a not in dropped)
    entries.append(None if not kept else kept[0] if len(kept) == 1 else kept)
  while entries and entries[-1] is None:
    entries.pop()
  relabelled = NamedSharding(sharding.mesh, PartitionSpec(*entries),
                             memory_kind=sharding.memory_kind)
  return sharded_array_of_shards(x.aval, relabelled, x._buffer.shards)


def _whole_mesh(mesh):
  return partial_parents.get(mesh, mesh)


def _flows_from(closed: ClosedJaxpr, k: int) -> list:
  """Per result of ``closed``: whether it is computed from its ``k``-th
  input (kept per body: asked on every call)."""
  known = _flows.setdefault(closed, {})
  flows = known.get(k)
  if flows is None:
    jaxpr = closed.jaxpr
    reached = {jaxpr.invars[k]}
    for eqn in jaxpr.eqns:
      if any(not isinstance(a, Literal) and a in reached for a in eqn.invars):
        reached.update(eqn.outvars)
    flows = known[k] = [not isinstance(a, Literal) and a in reached for a in jaxpr.outvars]
  return flows


_flows: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


_splits: "weakref.WeakKeyDictionary[ClosedJaxpr, SplitProgram | bool]" = \
    weakref.WeakKeyDictionary()


def split_program(closed: ClosedJaxpr, name: str) -> SplitProgram | None:
  """The program split at its top-level shard_map calls, or None when it
  has none."""
  split = _splits.get(closed)
  if split is None:
    split = _splits[closed] = (SplitProgram(closed, name) if _calls_shard_map(closed.jaxpr)
                               else False)
  return split or None
