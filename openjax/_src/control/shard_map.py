"""``shard_map_p``: a function run once per device of a mesh on each
device's block of the arguments (JAX's ``shard_map``; ``pmap`` is built on
it, as in JAX 0.10.2).

Its jaxpr is the *per-device* program: inputs and outputs have the local
(block) shapes, and collectives over the mesh axes meet the other devices.
Its parameters: ``mesh``, ``in_specs``/``out_specs`` (a PartitionSpec per
operand/result: which mesh axes split which dimension), ``check_vma`` and
``newly_manual_axes``.

Evaluation (DESIGN decision 10), compiled (the ``iree`` executor): the
program is split at its collectives (``Plan``); each run of collective-free
equations is one compiled call per device. When every collective sits at
the top level, one thread runs the devices in lock step
(``run_lockstep``): it dispatches each segment to every device's stream and
each collective as a small compiled program per device that reads its
peers' operands in place (CPU devices share the host's memory and one HAL
device; fences order the reads after the writes), so a call only
dispatches. Measured against the host exchange of decision 10 (below) in
one session: a psum of 4 MB between 2 devices 2.9 ms instead of 11.8 ms, a
1 KB one no longer waits for its operands on the host. Otherwise (collectives
inside loops or branches, axis_index_groups), and always when interpreted,
every device runs the program in its own thread and a collective's impl is
an exchange through ``runtime.collectives`` (a rendezvous with a deadline,
aborted when any device's program fails, so no participant hangs).

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

from openjax._src.config import config
from openjax._src.control.shard_map_auto import (auto_axes, auto_in_spec, auto_out_specs,
                                                 with_auto_split)
from openjax._src.control.shard_map_lockstep import (interpretable, lockstep_ok, mesh_coords,
                                                     run_interpreted, run_lockstep)
from openjax._src.control.shard_map_plan import ALL_REDUCE_UFUNCS, Plan, plan_of
from openjax._src.core import (ClosedJaxpr, Literal, Primitive, ShapedArray, eval_jaxpr,
                               get_aval, program_of)
from openjax._src.core.array import Array, ShardedBuffer, sharded_array_of_shards
from openjax._src.core.jaxpr import DropVar
from openjax._src.core.placement import commit
from openjax._src.core.trace import eager_config
from openjax._src.core.mesh import AxisType, Mesh, MeshIdentityMap
from openjax._src.core.sharding import NamedSharding, PartitionSpec, aval_sharding, dim_axes
from openjax._src.interpreters.batching import batch_jaxpr
from openjax._src.primitives.base.structural import reshape, transpose
from openjax._src.primitives.collectives.collectives import (
    current_mesh_member, extend_axis_env, running_on_mesh_device)
from openjax._src.primitives.shape.shape import index_in_dim
from openjax._src.runtime.collectives import MeshRendezvous
from openjax._src.runtime.executable import execute_per_device
from openjax._src.runtime.pipeline import (compiling, executable_for_jaxpr,
                                           interpreting_first_call)
from openjax._src.runtime.sharded_arrays import put_sharded

__all__ = ["shard_map_p", "run_on_devices", "manual_submesh", "onto_whole_mesh",
           "partial_parents", "assemble", "named_sharding", "shards_for",
           "local_aval", "global_aval", "shard_map_as_vmap", "mesh_axis_sizes"]

shard_map_p = Primitive("shard_map", multiple_results=True)

shard_map_p.sub_jaxpr_env = lambda params: extend_axis_env(
    mesh_axis_sizes(params["mesh"]).items())



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
                             newly_manual_axes):
  sizes = mesh_axis_sizes(mesh)
  for i, (a, spec, e) in enumerate(zip(avals, in_specs, jaxpr.in_avals)):
    la = local_aval(a, spec, sizes)
    if la.shape != e.shape or la.dtype != e.dtype:
      raise TypeError(f"shard_map: argument {i} is {a.str_short()}, whose block "
                      f"{la.str_short()} differs from the program's input {e.str_short()}")
  return [global_aval(a, spec, sizes) for a, spec in zip(jaxpr.out_avals, out_specs)]


@shard_map_p.def_sharding_rule
def _shard_map_sharding_rule(specs, avals, out_avals, *, mesh, out_specs, jaxpr, **params):
  # Results are laid out as out_specs say; their types name the Explicit
  # mesh axes among those (Manual and Auto axes are not part of a type),
  # then the Explicit axes a partially manual body left its results split
  # over.
  explicit = set(mesh.explicit_axes)
  return [tuple(whole_spec(spec, body, len(aval.shape), explicit))
          for spec, body, aval in zip(out_specs, jaxpr.out_avals, out_avals)]


def whole_spec(spec, body: ShapedArray, ndim: int, keep=None) -> list:
  """A result's spec over the whole mesh: ``spec``'s entries (those naming
  axes in ``keep``, all when None) joined, per dimension, by the Explicit
  non-manual axes the body's result ``body`` is split over."""
  inner = list(body.sharding.spec) if body.sharding is not None else []
  inner += [None] * (ndim - len(inner))
  entries = []
  for e, b in zip(_spec_entries(spec, ndim), inner):
    names = tuple(a for a in dim_axes(e) if keep is None or a in keep) + dim_axes(b)
    entries.append(None if not names else names[0] if len(names) == 1 else names)
  return entries


# ------------------------------------------------- per-device execution
def _run_plan(plan: Plan, args: list, call) -> list:
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
    if kind == "allreduce":
      _, prim, names, eqns, _ = step
      arrays = [np.asarray(read(e.invars[0])) for e in eqns]   # waits for the segment
      outs = current_mesh_member().all_reduce(names, arrays, ALL_REDUCE_UFUNCS[prim],
                                              prim.name)
      for e, o in zip(eqns, outs):
        # An Array over the aligned result: the next segment imports it in place.
        env[e.outvars[0]] = Array(o, e.outvars[0].aval)
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
  plan = plan_of(closed)

  def call(seg: ClosedJaxpr, vals: list) -> list:
    # Straight to the device's stream: results stay on it, not waited for.
    return executable_for_jaxpr(seg, "shard_map").execute(vals, device)
  return lambda args: _run_plan(plan, args, call)


_pool = concurrent.futures.ThreadPoolExecutor(max_workers=64,
                                              thread_name_prefix="openjax-device")


def shards_for(x, sharding: NamedSharding, shape: tuple) -> list:
  buffer = getattr(x, "_buffer", None)
  if type(buffer) is ShardedBuffer and (
      buffer.sharding is sharding or buffer.sharding == sharding or
      (buffer.sharding._device_assignment == sharding._device_assignment
       and buffer.indices == sharding._indices(shape))):
    # Laid out as needed already (a pmap result fed to the next pmap).
    return buffer.shards
  return put_sharded(x, sharding)._buffer.shards


#: A partially manual shard_map runs over its manual axes' sub-mesh; JAX
#: prints the whole mesh it was given.
partial_parents = MeshIdentityMap()


def manual_submesh(mesh: Mesh, manual: frozenset) -> Mesh:
  """The devices of ``mesh`` at coordinate 0 of its non-manual axes, over
  the manual axes."""
  keep = [i for i, a in enumerate(mesh.axis_names) if a in manual]
  index = tuple(slice(None) if i in keep else 0 for i in range(len(mesh.axis_names)))
  sub = Mesh(mesh.devices[index], tuple(mesh.axis_names[i] for i in keep),
             tuple(mesh.axis_types[i] for i in keep))
  partial_parents[sub] = mesh
  return sub


def onto_whole_mesh(outs: list, sub: Mesh, body_avals: list) -> list:
  """Results of a run over a partially manual shard_map's sub-mesh laid out
  over the whole mesh, as JAX's: split along the non-manual Explicit axes
  the body's results ``body_avals`` are typed with, replicated along the
  others."""
  full = partial_parents[sub]
  placed = []
  for x, b in zip(outs, body_avals):
    entries = whole_spec(x.sharding.spec, b, x.ndim)
    # Over a mesh with Explicit axes JAX gives one entry per dimension
    # (P('i', None)); over an all-Auto one, out_specs as written.
    while not full._any_axis_explicit and entries and entries[-1] is None:
      entries.pop()
    placed.append(put_sharded(x, NamedSharding(full, PartitionSpec(*entries))))
  return placed


_shardings: dict = {}


def named_sharding(mesh, spec) -> NamedSharding:
  key = (mesh, spec)
  s = _shardings.get(key)
  if s is None:
    if len(_shardings) > 4096:
      _shardings.clear()
    s = _shardings[key] = NamedSharding(mesh, spec)
  return s


class _Layout:
  """What a run over ``mesh`` needs besides the values, computed once per
  (program, mesh, specs): the input shardings, each output's sharding,
  global aval and per-device indices."""
  __slots__ = ("sizes", "devices", "in_shardings", "outs", "plan", "lockstep", "interpret")

  def __init__(self, jaxpr: ClosedJaxpr, mesh, in_specs, out_specs):
    self.sizes = mesh_axis_sizes(mesh)
    self.devices = list(mesh.devices.flat)
    self.in_shardings = [named_sharding(mesh, spec) for spec in in_specs]
    self.outs = []
    for aval, spec in zip(jaxpr.out_avals, out_specs):
      sharding = named_sharding(mesh, spec)
      g = global_aval(aval, spec, self.sizes)
      g = ShapedArray(g.shape, g.dtype, g.weak_type, aval_sharding(sharding, g.shape))
      self.outs.append((sharding, g, sharding._indices(g.shape)))
    self.plan = None
    self.lockstep = False
    self.interpret = False   # (run_on_devices sets it with the plan)


_layouts: dict = {}


def _layout_of(jaxpr, mesh, in_specs, out_specs) -> _Layout:
  key = (jaxpr, mesh, in_specs, out_specs)
  layout = _layouts.get(key)
  if layout is None:
    if len(_layouts) > 1024:
      _layouts.clear()
    layout = _layouts[key] = _Layout(jaxpr, mesh, in_specs, out_specs)
  return layout


def run_on_devices(args, jaxpr: ClosedJaxpr, mesh, in_specs, out_specs) -> list:
  layout = _layout_of(jaxpr, mesh, tuple(in_specs), tuple(out_specs))
  sizes, devices = layout.sizes, layout.devices
  shards = [shards_for(x, sharding, np.shape(x))
            for x, sharding in zip(args, layout.in_shardings)]
  results: list = [None] * len(devices)
  errors: list = [None] * len(devices)
  frames = list(sizes.items())
  if compiling():
    if layout.plan is None:
      layout.plan = plan_of(jaxpr)
      layout.lockstep = lockstep_ok(layout.plan)
      layout.interpret = layout.lockstep and interpretable(layout.plan)
    if layout.lockstep:
      per_device = [[s[k] for s in shards] for k in range(len(devices))]
      outs = None
      with extend_axis_env(frames):
        # Small programs run on the host while tiered execution is on (as
        # jit's do), not under the debugging flags (checked by the compiled run).
        if (layout.interpret and eager_config.flags_ok
            and config.read("openjax_tiered_compilation")):
          outs = run_interpreted(layout.plan, per_device, mesh)
        if outs is None:
          outs = run_lockstep(layout.plan, per_device, devices, mesh)
      results = [commit([_as_array(o, a) for o, a in zip(r, jaxpr.out_avals)], d)
                 for r, d in zip(outs, devices)]
      return _whole(_assembled(results, layout), mesh, jaxpr, args)
  rendezvous = MeshRendezvous(sizes)

  all_coords = mesh_coords(tuple(mesh.axis_names), mesh.devices.shape)

  def run(k: int):
    device = devices[k]
    coords = all_coords[k]
    member = rendezvous.member(coords, f"{device} (mesh coordinates {coords})")
    try:
      with running_on_mesh_device(member), extend_axis_env(frames):
        outs = _device_runner(jaxpr, device)([s[k] for s in shards])
        results[k] = commit([_as_array(o, a) for o, a in zip(outs, jaxpr.out_avals)], device)
      rendezvous.finish(coords)   # (a precv waiting for its psend fails at once)
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
    first = next((e for e in failed if type(e).__name__ != "CollectiveError"), None)
    raise first or next((e for e in failed if e is rendezvous.cause()), failed[0])
  return _whole(_assembled(results, layout), mesh, jaxpr, args)


def _whole(outs: list, mesh, jaxpr: ClosedJaxpr, args) -> list:
  if mesh not in partial_parents:
    return outs
  body_avals = jaxpr.out_avals
  whole = partial_parents[mesh]
  auto = auto_axes(whole, mesh.axis_names)
  if auto:
    in_specs = tuple(auto_in_spec(x, whole, auto, v.aval.ndim)
                     for x, v in zip(args, jaxpr.jaxpr.invars))
    if any(s is not None for s in in_specs):
      known = _auto_specs.setdefault(jaxpr, {})
      specs = known.get(in_specs)
      if specs is None:
        typing_mesh = whole.abstract_mesh.update_axis_types(
            {a: AxisType.Explicit for a in auto})
        specs = known[in_specs] = auto_out_specs(jaxpr.jaxpr, in_specs, typing_mesh)
      body_avals = [with_auto_split(a, s, whole) if a.sharding is None else a
                    for a, s in zip(body_avals, specs)]
  return onto_whole_mesh(outs, mesh, body_avals)


#: body -> {its arguments' Auto-axis splits: its results'} (shard_map_auto.py)
_auto_specs: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _assembled(results: list, layout: _Layout) -> list:
  return [Array(None, g, None, ShardedBuffer(sharding, indices, shards=[r[i] for r in results]))
          for i, (sharding, g, indices) in enumerate(layout.outs)]


def assemble(results: list, out_avals, mesh, out_specs, sizes: dict) -> list:
  """The global Arrays from each device's results (one shard per device)."""
  outs = []
  for i, (aval, spec) in enumerate(zip(out_avals, out_specs)):
    sharding = named_sharding(mesh, spec)
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
def _shard_map_impl(*args, jaxpr, mesh, in_specs, out_specs, check_vma,
                    newly_manual_axes):
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
  # Every mesh axis stays bound while the inner ones are mapped (the
  # program still names the outer ones; its jaxprs are checked as built).
  with extend_axis_env(sizes.items()):
    for name in reversed(names):
      dims = [0 if name in u else None for u in used]
      mapped, _ = batch_jaxpr(mapped, dims, sizes[name], name)
  outs = eval_jaxpr(mapped.jaxpr, mapped.consts, *blocked)
  return [_unblocked(y, spec, names, sizes) for y, spec in zip(outs, out_specs)]
