"""The compiled per-device program of a ``shard_map`` run by one thread on
every device in lock step (``run_lockstep``), when every collective of its
``Plan`` sits at the top level: each segment is dispatched to every device's
stream, each collective is a small compiled program per device that reads its
peers' operands in place (CPU devices share the host's memory and one HAL
device; fences order the reads after the writes).
"""
from __future__ import annotations

import functools
import math

import numpy as np

from openjax._src.control.shard_map_plan import ALL_REDUCE_UFUNCS, COLLECTIVES, THREADED_ONLY, Plan
from openjax._src.core import Array, Literal, ShapedArray, eval_jaxpr, program_of
from openjax._src.core.jaxpr import DropVar, Jaxpr
from openjax._src.core.program import small_plain_steps
from openjax._src.interpreters.batching import batch_jaxpr
from openjax._src.interpreters.staging import trace_to_closed_jaxpr
from openjax._src.primitives.base.structural import expand_dims, reshape
from openjax._src.primitives.elementwise.arithmetic import add
from openjax._src.primitives.elementwise.arithmetic import max as max_
from openjax._src.primitives.elementwise.arithmetic import min as min_
from openjax._src.primitives.collectives.collectives import (
    extend_axis_env, pmax_p, pmin_p, psum_p, running_on_mesh_device)
from openjax._src.primitives.collectives.varying import psum_invariant_p
from openjax._src.primitives.shape.shape import concatenate, index_in_dim
from openjax._src.runtime.executable import execute_per_device
from openjax._src.runtime.pipeline import executable_for_jaxpr

__all__ = ["InStepMember", "device_groups", "group_devices", "interpretable", "lockstep_ok",
           "mesh_coords", "run_in_step", "run_interpreted", "run_lockstep"]


class _MeshPosition:
  """A device's place on the mesh, all an ``axis_index`` asks of its member
  (a lock-step run's devices, each in turn in one thread)."""
  __slots__ = ("coords", "sizes", "mesh_shape", "axis_names")

  def __init__(self, coords: dict, sizes: dict, mesh_shape: tuple):
    self.coords, self.sizes, self.mesh_shape = coords, sizes, mesh_shape
    self.axis_names = tuple(sizes)

  def size(self, names: tuple) -> int:
    return math.prod(self.sizes[n] for n in names)

  def index(self, names: tuple) -> int:
    index = 0
    for n in names:
      index = index * self.sizes[n] + self.coords[n]
    return index


def group_devices(coords: dict, names: tuple, sizes: dict, mesh_shape: tuple) -> tuple:
  """Flat device indices of ``coords``' group over ``names``, in the group's
  (row-major over ``names``) order."""
  axis_names = tuple(sizes)
  return _group_of(tuple(coords[a] for a in axis_names), tuple(names),
                   tuple(sizes.items()), tuple(mesh_shape))


@functools.lru_cache(maxsize=4096)
def _group_of(coords: tuple, names: tuple, sizes: tuple, mesh_shape: tuple) -> tuple:
  # (cached: a collective asks once per device on every call; NumPy's
  # ravel_multi_index took ~5 us a member, 180 us a pmap call of 4 devices)
  axis_names = [a for a, _ in sizes]
  size = dict(sizes)
  out = []
  for linear in range(math.prod(size[n] for n in names)):
    c = dict(zip(axis_names, coords))
    for n in reversed(names):
      c[n] = linear % size[n]
      linear //= size[n]
    flat = 0
    for a, extent in zip(axis_names, mesh_shape):
      flat = flat * extent + c[a]
    out.append(flat)
  return tuple(out)


@functools.lru_cache(maxsize=256)
@functools.lru_cache(maxsize=1024)
def device_groups(sizes: tuple, mesh_shape: tuple, names: tuple) -> tuple:
  """Every device's (in flat order) group over ``names``: ``group_devices``
  of each, for ``sizes`` given as (name, size) pairs."""
  size = dict(sizes)
  return tuple(group_devices(c, names, size, mesh_shape)
               for c in mesh_coords(tuple(size), mesh_shape))


def mesh_coords(axis_names: tuple, mesh_shape: tuple) -> list:
  """Each device's {axis name: coordinate} on a mesh of ``mesh_shape``, in
  flat (row-major) order."""
  return [{n: int(c) for n, c in zip(axis_names, np.unravel_index(k, mesh_shape))}
          for k in range(math.prod(mesh_shape))]


def lockstep_ok(plan: Plan) -> bool:
  for step in plan.steps:
    kind = step[0]
    if kind == "eqn":
      eqn = step[1]
      # (groups have no batching rule to build the device program from, a
      # ragged exchange's sizes are data, and psend/precv meet out of step:
      # the threaded run's impls handle them)
      if (eqn.primitive not in COLLECTIVES or eqn.params.get("axis_index_groups") is not None
          or eqn.primitive in THREADED_ONLY):
        return False
    elif kind == "inline":
      return False
  return True


def run_lockstep(plan: Plan, per_device_args: list, devices: list, mesh) -> list:
  """The compiled program on every device from this one thread: each
  segment is dispatched to every device's stream (they run concurrently)
  and so is each collective, as a small compiled program per device that
  reads its peers' operands where they are (all CPU devices share the
  host's memory and one HAL device; fences order the reads after the
  writes). Nothing waits here: no thread hand-offs, no barrier, no host
  copy; results are ready when the devices are."""
  sizes = dict(mesh.shape)
  shape = mesh.devices.shape
  coords = mesh_coords(tuple(mesh.axis_names), tuple(shape))
  envs = []
  for args in per_device_args:
    env = dict(zip(plan.jaxpr.constvars, plan.consts))
    env.update(zip(plan.jaxpr.invars, args))
    envs.append(env)

  def read(env, a):
    return a.operand if isinstance(a, Literal) else env[a]

  steps = plan.steps
  fused_call = -1   # the index of a call step run inside the all-reduce before it
  for i, step in enumerate(steps):
    kind = step[0]
    if i == fused_call:
      continue
    if kind == "allreduce" and _fuses_with_next(steps, i):
      # The all-reduce and the segment reading its results are one program
      # per device (a gradient's psum and the update that reads it: one
      # pass over the parameters instead of two, one dispatch less).
      _, prim, names, eqns, _ = step
      _, closed, ins, outs = steps[i + 1]
      n = len(group_devices(coords[0], names, sizes, shape))
      executable, rest, kept = _fused_executable(plan, i, prim, eqns, n, closed)
      args = []
      for k in range(len(devices)):
        group = group_devices(coords[k], names, sizes, shape)
        args.append([read(envs[m], e.invars[0]) for e in eqns for m in group]
                    + [envs[k][v] for v in rest])
      results = execute_per_device(executable, args, devices)
      for env, vals in zip(envs, results):
        env.update(zip(list(outs) + kept, vals))
      fused_call = i + 1
    elif kind == "call":
      _, closed, ins, outs = step
      executable = executable_for_jaxpr(closed, "shard_map", ())
      results = execute_per_device(executable, [[env[v] for v in ins] for env in envs], devices)
      for env, vals in zip(envs, results):
        env.update(zip(outs, vals))
    elif kind == "allreduce":
      # Every device's program reads its group's operands in place (CPU
      # devices share the host's memory; each waits on the writers' fences
      # on the device side): no host round trip.
      _, prim, names, eqns, _ = step
      executable = _all_reduce_executable(plan, i, prim, eqns, len(
          group_devices(coords[0], names, sizes, shape)))
      for k, device in enumerate(devices):
        group = group_devices(coords[k], names, sizes, shape)
        ins = [read(envs[m], e.invars[0]) for e in eqns for m in group]
        outs = executable.execute(ins, device)
        envs[k].update((e.outvars[0], o) for e, o in zip(eqns, outs))
    else:
      eqn = step[1]
      if not eqn.invars:   # axis_index: this device's coordinates
        for k, env in enumerate(envs):
          member = _MeshPosition(coords[k], sizes, shape)
          with running_on_mesh_device(member):
            outs = eqn.primitive.bind(**eqn.params)
          env.update((v, x) for v, x in zip(eqn.outvars, outs) if not isinstance(v, DropVar))
        continue
      operands = [read(env, eqn.invars[0]) for env in envs]
      for k, device in enumerate(devices):
        outs = _collective_executable(plan, i, eqn, mesh, k).execute(operands, device)
        envs[k].update((v, x) for v, x in zip(eqn.outvars, outs)
                       if not isinstance(v, DropVar))
  return [[read(env, a) for a in plan.jaxpr.outvars] for env in envs]


def _fuses_with_next(steps: list, i: int) -> bool:
  nxt = steps[i + 1] if i + 1 < len(steps) else None
  return nxt is not None and nxt[0] == "call" and any(v in steps[i][4] for v in nxt[2])


def _reads_from(plan: Plan, j: int) -> frozenset:
  """The variables read by the plan's steps from ``j`` on or returned."""
  key = ("reads from", j)
  reads = plan.programs.get(key)
  if reads is None:
    found = set(a for a in plan.jaxpr.outvars if not isinstance(a, Literal))
    for step in plan.steps[j:]:
      if step[0] == "call":
        found.update(step[2])
      elif step[0] == "allreduce":
        found.update(e.invars[0] for e in step[3])
      else:
        found.update(a for a in step[1].invars if not isinstance(a, Literal))
    reads = plan.programs[key] = frozenset(found)
  return reads


def _combined(prim, eqns: list, group_size: int, xs) -> list:
  """Each of ``eqns``' all-reduce over its group's operands ``xs`` (grouped
  per equation, in group order: every device adds in the same order, so
  replicated results have the same bits everywhere)."""
  combine = {psum_p: add, pmax_p: max_, pmin_p: min_, psum_invariant_p: add}[prim]
  outs = []
  for j in range(len(eqns)):
    acc = xs[j * group_size]
    for m in range(1, group_size):
      acc = combine(acc, xs[j * group_size + m])
    outs.append(acc)
  return outs


def _fused_executable(plan: Plan, i: int, prim, eqns: list, group_size: int, segment):
  """The all-reduce step ``i`` followed by the call ``segment`` that reads it,
  as one program: its arguments are the group's operands, then ``rest`` (the
  segment's other inputs); its results the segment's, then the reduced
  values ``kept`` that later steps read."""
  key = ("fused", i)
  got = plan.programs.get(key)
  if got is None:
    reduced = [e.outvars[0] for e in eqns]
    rest = [v for v in segment.jaxpr.invars if v not in reduced]
    later = _reads_from(plan, i + 2)
    kept = [v for v in reduced if v in later]
    avals = [e.invars[0].aval for e in eqns for _ in range(group_size)] + [v.aval for v in rest]
    n_in = len(eqns) * group_size

    def fused(*xs):
      sums = _combined(prim, eqns, group_size, xs[:n_in])
      env = dict(zip(reduced, sums))
      env.update(zip(rest, xs[n_in:]))
      outs = eval_jaxpr(segment.jaxpr, segment.consts, *[env[v] for v in segment.jaxpr.invars])
      return list(outs) + [env[v] for v in kept]
    closed = trace_to_closed_jaxpr(fused, avals)
    got = plan.programs[key] = (executable_for_jaxpr(closed, "shard_map", ()),
                                rest, kept)
    plan.programs[key + ("jaxpr",)] = closed   # the executable cache is keyed weakly on it
  return got


def _all_reduce_executable(plan: Plan, i: int, prim, eqns: list, group_size: int):
  key = ("allreduce", i)
  ex = plan.programs.get(key)
  if ex is None:
    avals = [e.invars[0].aval for e in eqns for _ in range(group_size)]
    closed = trace_to_closed_jaxpr(lambda *xs: _combined(prim, eqns, group_size, xs), avals)
    ex = plan.programs[key] = executable_for_jaxpr(closed, prim.name)
    plan.programs[key + ("jaxpr",)] = closed   # the executable cache is keyed weakly on it
  return ex


def _collective_executable(plan: Plan, i: int, eqn, mesh, k: int):
  """Device ``k``'s result of the collective ``eqn`` from every device's
  operand: the operands stacked over the mesh axes, the collective mapped
  over them (its batching rule over named axes), device ``k``'s entry."""
  key = ("collective", i, k)
  ex = plan.programs.get(key)
  if ex is None:
    sizes = dict(mesh.shape)
    names = tuple(mesh.axis_names)
    # A value's type along non-manual Explicit axes (a partially manual
    # body's) says nothing about moving one device's block: stacked over the
    # devices it is plain data.
    a = eqn.invars[0].aval
    aval = ShapedArray(a.shape, a.dtype, a.weak_type, vma=a.vma)
    n = math.prod(sizes.values())
    with extend_axis_env(sizes.items()):
      mapped = trace_to_closed_jaxpr(lambda x: eqn.primitive.bind(x, **eqn.params), [aval])
      for name in reversed(names):
        mapped, _ = batch_jaxpr(mapped, [0], sizes[name], name)
    coords = np.unravel_index(k, mesh.devices.shape)

    def device_k(*xs):
      stacked = concatenate([expand_dims(x, (0,)) for x in xs], 0)
      stacked = reshape(stacked, tuple(mesh.devices.shape) + aval.shape)
      outs = eval_jaxpr(mapped.jaxpr, mapped.consts, stacked)
      picked = []
      for o in outs:
        for c in coords:
          o = index_in_dim(o, int(c), 0, keepdims=False)
        picked.append(o)
      return picked
    closed = trace_to_closed_jaxpr(device_k, [aval] * n)
    ex = plan.programs[key] = executable_for_jaxpr(closed, eqn.primitive.name)
    plan.programs[key + ("jaxpr",)] = closed
  return ex


# ------------------------------------------------ on the host, one thread
class _Posted(Exception):
  """A device's impl reached its exchange in the recording pass."""


class _ExchangedTwice(Exception):
  """An impl exchanged more than once: not for an in-step run."""


_NOT_POSTED = object()


class InStepMember(_MeshPosition):
  """A device's member in ``run_in_step``: recording, its exchange posts the
  device's value and stops the impl; serving, it returns the group's posted
  values (an all-reduce combines them in group order, as the threaded
  rendezvous and the compiled all-reduce do)."""
  __slots__ = ("k", "posted", "serving", "used", "reduced")

  def __init__(self, coords: dict, sizes: dict, mesh_shape: tuple, k: int, posted: list,
               serving: bool, reduced: dict):
    super().__init__(coords, sizes, mesh_shape)
    self.k, self.posted, self.serving, self.used = k, posted, serving, False
    self.reduced = reduced   # group -> its all-reduce results, shared by the run's members

  def _group(self, names: tuple, value) -> tuple:
    if not self.serving:
      self.posted[self.k] = value
      raise _Posted
    if self.used:
      raise _ExchangedTwice
    self.used = True
    return device_groups(tuple(self.sizes.items()), self.mesh_shape, tuple(names))[self.k]

  def exchange(self, names: tuple, value, api_name: str) -> list:
    return [self.posted[m] for m in self._group(names, value)]

  def all_reduce(self, names: tuple, arrays: list, ufunc, api_name: str) -> list:
    group = self._group(names, [np.asarray(a) for a in arrays])
    outs = self.reduced.get(group)
    if outs is None:   # once per group: its members share the read-only results
      outs = self.reduced[group] = [_reduced(ufunc, [self.posted[m][j] for m in group])
                                    for j in range(len(arrays))]
    return outs


def _reduced(ufunc, values: list) -> np.ndarray:
  out = np.array(values[0], copy=True)
  for v in values[1:]:
    ufunc(out, v, out=out)
  out.setflags(write=False)
  return out


def run_in_step(bind_one, coords: list, sizes: dict, mesh_shape: tuple) -> list | None:
  """Every device's results of one collective, from this thread:
  ``bind_one(k, member)`` binds device ``k``'s equation with ``member``
  current. A recording pass posts what each device's impl hands its
  exchange, a serving pass returns each its group's values. None when an
  impl exchanges twice."""
  n = len(coords)
  posted: list = [_NOT_POSTED] * n
  results: list = [None] * n
  reduced: dict = {}
  for serving in (False, True):
    for k in range(n):
      if serving and posted[k] is _NOT_POSTED:
        continue   # finished without an exchange (axis_index)
      try:
        results[k] = bind_one(k, InStepMember(coords[k], sizes, mesh_shape, k, posted, serving,
                                              reduced))
      except _Posted:
        continue
      except _ExchangedTwice:
        return None
  return results


#: A lock-step plan runs on the host by the program evaluator when every
#: per-device value is at most this many bytes (jit's tiered bound) and its
#: segments hold at most INTERPRET_MAX_STEPS equations: a compiled segment or
#: collective costs ~20 us a device a call, an evaluated step ~1 us (a pmap
#: psum of f32[3] on 4 devices: 240 -> 105 us a call, JAX 288; sin/mul
#: chains and a psum of f32[64], host vs compiled: 8 steps 96 vs 158 us on 2
#: devices, 181 vs 425 on 8; 16 steps equal on both: the crossover).
INTERPRET_MAX_BYTES = 16384
INTERPRET_MAX_STEPS = 16


def interpretable(plan: Plan) -> bool:
  """Whether the host evaluator runs ``plan`` (a lock-step one) faster than
  its compiled programs: small values, few plain steps, no effects."""
  segments = [step[1].jaxpr for step in plan.steps if step[0] == "call"]
  return small_plain_steps(segments, (*plan.jaxpr.invars, *plan.jaxpr.constvars),
                           INTERPRET_MAX_BYTES, INTERPRET_MAX_STEPS)


def _host(x):
  return x._value if type(x) is Array else x


def run_interpreted(plan: Plan, per_device_args: list, mesh) -> list | None:
  """``run_lockstep``'s results by the program evaluator on the host, every
  device in turn in this thread (``interpretable`` plans); None when a
  collective cannot run in step (the compiled run takes it)."""
  sizes = dict(mesh.shape)
  shape = tuple(mesh.devices.shape)
  coords = mesh_coords(tuple(mesh.axis_names), shape)
  envs = []
  for args in per_device_args:
    env = dict(zip(plan.jaxpr.constvars, plan.consts))
    env.update(zip(plan.jaxpr.invars, map(_host, args)))
    envs.append(env)

  def read(env, a):
    return a.operand if isinstance(a, Literal) else env[a]

  for i, step in enumerate(plan.steps):
    kind = step[0]
    if kind == "call":
      _, closed, ins, outs = step
      key = ("host", i)
      run = plan.programs.get(key)
      if run is None:
        run = plan.programs[key] = program_of(closed.jaxpr).runner(closed.consts)
      for env in envs:
        env.update(zip(outs, run([env[v] for v in ins])))
    elif kind == "allreduce":
      _, prim, names, eqns, _ = step
      ufunc = ALL_REDUCE_UFUNCS[prim]
      groups = device_groups(tuple(sizes.items()), shape, tuple(names))
      done: dict = {}
      for group, env in zip(groups, envs):
        reduced = done.get(group)
        if reduced is None:
          reduced = done[group] = [
              _reduced(ufunc, [np.asarray(read(envs[m], e.invars[0])) for m in group])
              for e in eqns]
        env.update((e.outvars[0], r) for e, r in zip(eqns, reduced))
    else:
      eqn = step[1]
      key = ("host", i)
      run = plan.programs.get(key)
      if run is None:
        # The equation as a one-step program on host values (a bind through
        # the eval trace cost ~10 us more a device).
        ins = [a for a in eqn.invars if not isinstance(a, Literal)]
        outs = [v for v in eqn.outvars if not isinstance(v, DropVar)]
        run = plan.programs[key] = (program_of(Jaxpr([], ins, outs, [eqn])).runner([]), ins,
                                    outs)

      def bind_one(k, member, run=run):
        with running_on_mesh_device(member):
          return run[0]([envs[k][a] for a in run[1]])
      results = run_in_step(bind_one, coords, sizes, shape)
      if results is None:
        return None
      for env, outs in zip(envs, results):
        env.update(zip(run[2], outs))
  return [[read(env, a) for a in plan.jaxpr.outvars] for env in envs]
