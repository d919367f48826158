"""``shard_map_p``: a function run once per device of a mesh on each
device's block of the arguments (JAX's ``shard_map``; ``pmap`` is built on
it, as in JAX 0.10.2).

Its jaxpr is the *per-device* program: inputs and outputs have the local
(block) shapes, and collectives over the mesh axes meet the other devices.
Its parameters: ``mesh``, ``in_specs``/``out_specs`` (a PartitionSpec per
operand/result: which mesh axes split which dimension), ``check_vma`` and
``manual_axes``.

Evaluation (DESIGN decision 10): every device runs the program in its own
thread on its own stream; a collective is an exchange through
``runtime.collectives`` (a rendezvous with a deadline, aborted when any
device's program fails). Compiled (the ``iree`` executor), the program is
split at its collectives: each run of collective-free equations is one
compiled call on the device, and the collectives run between them on the
host (``_device_plan``). Interpreted, the jaxpr is evaluated op by op and
the collectives' impls exchange the same way.

Everywhere the per-device run cannot happen (lowered inside an enclosing
``jit``, nested inside another device run) the same values come from the
program mapped over the mesh axes with the batching interpreter
(``shard_map_as_vmap``): each mesh axis is a named vmap axis, so every
collective has its exact meaning.
"""
from __future__ import annotations

import concurrent.futures
import math
import weakref

import numpy as np

from openjax._src.control.closed_call import jit_p
from openjax._src.core import (ClosedJaxpr, Jaxpr, Literal, Primitive, ShapedArray, eval_jaxpr,
                               get_aval, program_of)
from openjax._src.core.array import Array, ShardedBuffer, sharded_array_of_shards
from openjax._src.core.jaxpr import DropVar, jaxprs_in_params
from openjax._src.core.placement import commit
from openjax._src.core.sharding import NamedSharding, aval_sharding, dim_axes
from openjax._src.interpreters.batching import batch_jaxpr
from openjax._src.primitives.base.structural import reshape, transpose
from openjax._src.primitives.collectives.collectives import (
    all_gather_p, all_to_all_p, axis_index_p, current_mesh_member, extend_axis_env, pbroadcast_p,
    pmax_p, pmin_p, ppermute_p, psum_p, reduce_scatter_p, running_on_mesh_device)
from openjax._src.primitives.shape.shape import index_in_dim
from openjax._src.runtime.collectives import MeshRendezvous
from openjax._src.runtime.pipeline import compiling, interpreting_first_call
from openjax._src.runtime.sharded_arrays import put_sharded

__all__ = ["shard_map_p", "run_on_devices", "local_aval", "global_aval", "shard_map_as_vmap", "mesh_axis_sizes"]

shard_map_p = Primitive("shard_map", multiple_results=True)

shard_map_p.sub_jaxpr_env = lambda params: extend_axis_env(
    mesh_axis_sizes(params["mesh"]).items())

COLLECTIVES = frozenset([psum_p, pmax_p, pmin_p, all_gather_p, reduce_scatter_p, ppermute_p,
                         pbroadcast_p, all_to_all_p, axis_index_p])


# ------------------------------------------------------------ shapes
def mesh_axis_sizes(mesh) -> dict:
  return dict(zip(mesh.axis_names, mesh.devices.shape))


def _split_factor(entry, sizes: dict) -> int:
  return math.prod(sizes[a] for a in dim_axes(entry))


def _spec_entries(spec, ndim: int) -> list:
  entries = list(spec)
  return entries + [None] * (ndim - len(entries))


def local_aval(aval: ShapedArray, spec, sizes: dict, what: str = "argument") -> ShapedArray:
  """The block of ``aval`` one device holds under ``spec``."""
  entries = _spec_entries(spec, aval.ndim)
  if len(entries) > aval.ndim:
    raise ValueError(f"shard_map: the {what} spec {spec} has {len(entries)} entries but the "
                     f"{what} is {aval.str_short()}, of rank {aval.ndim}; give at most one "
                     "entry per dimension.")
  shape = []
  for d, (n, e) in enumerate(zip(aval.shape, entries)):
    k = _split_factor(e, sizes)
    if n % k:
      raise ValueError(
          f"shard_map: the {what} of shape {aval.str_short()} has dimension {d} of size {n}, "
          f"which the spec {spec} splits {k} ways (mesh axes {dim_axes(e)}); it must divide "
          "evenly. Pad the array or choose another spec.")
    shape.append(n // k)
  return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def global_aval(aval: ShapedArray, spec, sizes: dict) -> ShapedArray:
  entries = _spec_entries(spec, aval.ndim)
  shape = tuple(n * _split_factor(e, sizes) for n, e in zip(aval.shape, entries))
  return ShapedArray(shape, aval.dtype, aval.weak_type)


# ------------------------------------------------------ abstract eval
@shard_map_p.def_abstract_eval
def _shard_map_abstract_eval(*avals, jaxpr, mesh, in_specs, out_specs, check_vma,
                             manual_axes):
  sizes = mesh_axis_sizes(mesh)
  for i, (a, spec, e) in enumerate(zip(avals, in_specs, jaxpr.in_avals)):
    la = local_aval(a, spec, sizes)
    if la.shape != e.shape or la.dtype != e.dtype:
      raise TypeError(f"shard_map: argument {i} is {a.str_short()}, whose block "
                      f"{la.str_short()} differs from the program's input {e.str_short()}")
  return [global_aval(a, spec, sizes) for a, spec in zip(jaxpr.out_avals, out_specs)]


# ------------------------------------------------- per-device execution
def _has_collective(jaxpr: Jaxpr) -> bool:
  for eqn in jaxpr.eqns:
    if eqn.primitive in COLLECTIVES:
      return True
    if any(_has_collective(j) for j in jaxprs_in_params(eqn.params)):
      return True
  return False


class _Plan:
  """A per-device program split at its collectives: ``steps`` are
  ``("call", closed_segment, in_atoms, out_vars)`` (collective-free
  equations, one compiled call), ``("inline", eqn, inner_plan)`` (a jit call
  holding collectives, evaluated step by step) or ``("eqn", eqn)``."""
  __slots__ = ("jaxpr", "consts", "steps")

  def __init__(self, closed: ClosedJaxpr):
    self.jaxpr = closed.jaxpr
    self.consts = closed.consts
    jaxpr = closed.jaxpr
    steps: list = []
    run: list = []
    later_reads = _reads_after(jaxpr)
    for i, eqn in enumerate(jaxpr.eqns):
      nested = eqn.primitive in COLLECTIVES or any(
          _has_collective(j) for j in jaxprs_in_params(eqn.params))
      if not nested:
        run.append(i)
        continue
      if run:
        steps.append(_segment(jaxpr, run, later_reads[run[-1]]))
        run = []
      if eqn.primitive is jit_p:
        steps.append(("inline", eqn, _plan_of(eqn.params["jaxpr"])))
      else:
        steps.append(("eqn", eqn))
    if run:
      steps.append(_segment(jaxpr, run, later_reads[run[-1]]))
    self.steps = steps


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


_plans: "weakref.WeakKeyDictionary[ClosedJaxpr, _Plan]" = weakref.WeakKeyDictionary()


def _plan_of(closed: ClosedJaxpr) -> _Plan:
  plan = _plans.get(closed)
  if plan is None:
    plan = _plans[closed] = _Plan(closed)
  return plan


def _run_plan(plan: _Plan, args: list, call) -> list:
  env = {}
  for v, x in zip(plan.jaxpr.constvars, plan.consts):
    env[v] = x
  for v, x in zip(plan.jaxpr.invars, args):
    env[v] = x

  def read(a):
    return a.operand if isinstance(a, Literal) else env[a]

  for step in plan.steps:
    kind = step[0]
    if kind == "call":
      _, closed, ins, outs = step
      vals = call(closed, [env[v] for v in ins])
      env.update(zip(outs, vals))
      continue
    eqn = step[1]
    invals = [read(a) for a in eqn.invars]
    if kind == "inline":
      outvals = _run_plan(step[2], invals, call)
    else:
      # A loop or branch holding collectives is interpreted: its compiled
      # form could not exchange values mid-program.
      with interpreting_first_call():
        outvals = eqn.primitive.bind(*invals, **eqn.params)
    for v, x in zip(eqn.outvars, outvals):
      if not isinstance(v, DropVar):
        env[v] = x
  return [read(a) for a in plan.jaxpr.outvars]


def _device_runner(closed: ClosedJaxpr, device):
  """Runs the per-device program on ``device`` (in the calling thread)."""
  if not compiling():
    run = program_of(closed.jaxpr).runner(closed.consts)
    return lambda args: run(args)
  plan = _plan_of(closed)

  def call(seg: ClosedJaxpr, vals: list) -> list:
    return jit_p.bind(*vals, jaxpr=seg, name="shard_map", donated_invars=(False,) * len(vals))
  return lambda args: _run_plan(plan, args, call)


_pool = concurrent.futures.ThreadPoolExecutor(max_workers=64,
                                              thread_name_prefix="openjax-device")


def _shards_for(x, sharding: NamedSharding) -> list:
  buffer = getattr(x, "_buffer", None)
  if type(buffer) is ShardedBuffer and buffer.sharding == sharding:
    return buffer.shards
  return put_sharded(x, sharding)._buffer.shards


def run_on_devices(args, jaxpr: ClosedJaxpr, mesh, in_specs, out_specs) -> list:
  sizes = mesh_axis_sizes(mesh)
  devices = list(mesh.devices.flat)
  shards = [_shards_for(x, NamedSharding(mesh, spec)) for x, spec in zip(args, in_specs)]
  rendezvous = MeshRendezvous(sizes)
  frames = list(sizes.items())
  results: list = [None] * len(devices)
  errors: list = [None] * len(devices)

  def run(k: int):
    device = devices[k]
    coords = dict(zip(mesh.axis_names, np.unravel_index(k, mesh.devices.shape)))
    coords = {n: int(c) for n, c in coords.items()}
    member = rendezvous.member(coords, f"{device} (mesh coordinates {coords})")
    try:
      with running_on_mesh_device(member), extend_axis_env(frames):
        outs = _device_runner(jaxpr, device)([s[k] for s in shards])
        results[k] = commit([_as_array(o, a) for o, a in zip(outs, jaxpr.out_avals)], device)
    except BaseException as e:   # noqa: BLE001 - every peer must hear of it, then re-raised
      errors[k] = e
      rendezvous.abort(member.description, e)

  futures = [_pool.submit(run, k) for k in range(1, len(devices))]
  run(0)
  for f in futures:
    f.result()
  failed = [e for e in errors if e is not None]
  if failed:
    # The device that failed first, not a peer that only heard of it.
    first = next((e for e in failed if type(e).__name__ != "CollectiveError"), failed[0])
    raise first
  outs = []
  for i, (aval, spec) in enumerate(zip(jaxpr.out_avals, out_specs)):
    sharding = NamedSharding(mesh, spec)
    g = global_aval(aval, spec, sizes)
    g = ShapedArray(g.shape, g.dtype, g.weak_type, aval_sharding(sharding, g.shape))
    outs.append(sharded_array_of_shards(g, sharding, [r[i] for r in results]))
  return outs


def _as_array(x, aval: ShapedArray):
  if type(x) is Array:
    return x
  value = np.asarray(x, aval.dtype)
  value.setflags(write=False)
  return Array(value, aval)


@shard_map_p.def_impl
def _shard_map_impl(*args, jaxpr, mesh, in_specs, out_specs, check_vma, manual_axes):
  if current_mesh_member() is not None:
    # Nested inside another device run: this thread is one device already.
    return shard_map_as_vmap(args, jaxpr, mesh, in_specs, out_specs)
  return run_on_devices(args, jaxpr, mesh, in_specs, out_specs)


# ------------------------------------------ the program mapped over the mesh
def _blocked(x, spec, axis_names: tuple, sizes: dict):
  """``x`` (global) with one leading dimension per mesh axis that ``spec``
  splits it over (in mesh order), then the block's dimensions; and the set
  of those axes."""
  shape = get_aval(x).shape
  entries = _spec_entries(spec, len(shape))
  new_shape, axis_pos, local_pos = [], {}, []
  for n, e in zip(shape, entries):
    names = dim_axes(e)
    for a in names:
      axis_pos[a] = len(new_shape)
      new_shape.append(sizes[a])
    local_pos.append(len(new_shape))
    new_shape.append(n // _split_factor(e, sizes))
  used = [a for a in axis_names if a in axis_pos]
  if not used:
    return x, used
  y = reshape(x, tuple(new_shape))
  perm = tuple([axis_pos[a] for a in used] + local_pos)
  if perm != tuple(range(len(perm))):
    y = transpose(y, perm)
  return y, used


def _unblocked(y, spec, axis_names: tuple, sizes: dict):
  """The inverse of ``_blocked`` for a result with every mesh axis leading:
  axes ``spec`` does not name are replicated (device 0's block is taken)."""
  k = len(axis_names)
  used_all = set(a for e in spec for a in dim_axes(e))
  for j in range(k - 1, -1, -1):
    if axis_names[j] not in used_all:
      y = index_in_dim(y, 0, j, keepdims=False)
  kept = [a for a in axis_names if a in used_all]
  shape = get_aval(y).shape
  local = shape[len(kept):]
  entries = _spec_entries(spec, len(local))
  perm, out_shape = [], []
  for d, (n, e) in enumerate(zip(local, entries)):
    names = dim_axes(e)
    perm.extend(kept.index(a) for a in names)
    perm.append(len(kept) + d)
    out_shape.append(n * _split_factor(e, sizes))
  if perm != list(range(len(perm))):
    y = transpose(y, tuple(perm))
  return reshape(y, tuple(out_shape)) if kept else y


def shard_map_as_vmap(args, jaxpr: ClosedJaxpr, mesh, in_specs, out_specs) -> list:
  """The values of ``shard_map`` computed in one program: the per-device
  program mapped over each mesh axis (a named vmap axis) by the batching
  interpreter, with blocks moved to and from leading mesh dimensions."""
  sizes = mesh_axis_sizes(mesh)
  names = tuple(mesh.axis_names)
  blocked, used = [], []
  for x, spec in zip(args, in_specs):
    y, u = _blocked(x, spec, names, sizes)
    blocked.append(y)
    used.append(u)
  mapped = jaxpr
  for name in reversed(names):
    dims = [0 if name in u else None for u in used]
    mapped, _ = batch_jaxpr(mapped, dims, sizes[name], name)
  outs = eval_jaxpr(mapped.jaxpr, mapped.consts, *blocked)
  return [_unblocked(y, spec, names, sizes) for y, spec in zip(outs, out_specs)]
