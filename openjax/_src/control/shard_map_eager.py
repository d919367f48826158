"""``shard_map`` called eagerly (not under ``jit`` or another
transformation): as in JAX, the function runs op by op on every device's
concrete block, so ``print`` inside it shows each device's values.

A ``ShardMapTracer`` holds one block per mesh device (in the mesh's
device order) and the mesh axes its value varies over. Each primitive runs
on every device's blocks; one holding a collective runs on all devices at
once, one thread per device meeting at the run's rendezvous (the same
impls as a per-device program). The varying axes follow the replication
rules of ``check_vma``, so an out_spec that claims replication wrongly fails
as it does when the function is traced.
"""
from __future__ import annotations

import numpy as np

from openjax._src.control.shard_map import _pool, mesh_axis_sizes
from openjax._src.control.shard_map_lockstep import mesh_coords, run_in_step
from openjax._src.control.shard_map_plan import COLLECTIVES, THREADED_ONLY, has_collective
from openjax._src.control.shard_map_auto import auto_step
from openjax._src.control.shard_map_rules import varying_after
from openjax._src.core import Array, ShapedArray, Trace, Tracer, get_aval, set_current_trace
from openjax._src.core.jaxpr import jaxprs_in_params
from openjax._src.core.placement import commit
from openjax._src.core.sharding import NamedSharding
from openjax._src.core.sharding_rules import apply_sharding_rule
from openjax._src.primitives.collectives.collectives import (extend_axis_env,
                                                             running_on_mesh_device)
from openjax._src.runtime.collectives import MeshRendezvous

__all__ = ["ShardMapTrace", "ShardMapTracer"]

#: Collectives of larger blocks meet in the threaded rendezvous, which
#: splits an all-reduce's work over the devices' threads (a 4-device psum of
#: 1e6 float32 each: ~1.5 ms threaded, ~4 ms in step on this thread).
IN_STEP_MAX_ELEMENTS = 65536


class ShardMapTracer(Tracer):
  """``split``: in a partially manual body, the non-manual Explicit axes
  the value is split over (its type's ``f32[4,4@j]``, a NamedSharding), else
  None. (Not ``sharding``: a tracer has none to give, as in JAX.) ``auto``:
  its split along the non-manual Auto axes, untyped (``shard_map_auto.py``),
  a tuple per dimension, or None when whole along them."""
  __slots__ = ("blocks", "varying", "split", "auto")

  def __init__(self, trace: "ShardMapTrace", blocks: list, varying: frozenset, sharding=None,
               auto=None):
    self._trace = trace
    self.blocks = blocks
    self.varying = varying
    self.split = sharding
    self.auto = auto

  @property
  def aval(self) -> ShapedArray:
    a = get_aval(self.blocks[0])
    return ShapedArray(a.shape, a.dtype, a.weak_type, self.split,
                       vma=self.varying if self._trace.check_vma else frozenset())

  def __str__(self) -> str:
    mesh = self._trace.mesh
    axis_names = f"({', '.join(map(str, mesh.axis_names))},)"
    return "\n".join(
        f"On {device} at mesh coordinates {axis_names} = {idx}:\n{np.asarray(block)}\n"
        for (idx, device), block in zip(np.ndenumerate(mesh.devices), self.blocks))

  __repr__ = __str__


class ShardMapTrace(Trace):
  """Runs every primitive on each device's block of a mesh."""

  def __init__(self, parent: Trace, mesh, check_vma: bool = True):
    super().__init__()
    self.parent = parent
    self.mesh = mesh
    self.check_vma = check_vma
    self.devices = list(mesh.devices.flat)
    self.sizes = mesh_axis_sizes(mesh)
    # psend's posts, kept across this body's collectives for its precvs
    self.mailbox: dict = {}
    # A partially manual body's mesh with its Auto axes typed, to carry the
    # arguments' splits along them through the sharding rules (or None).
    self.typing_mesh = None

  def to_blocks(self, x) -> tuple:
    if isinstance(x, ShardMapTracer) and x._trace is self:
      return x.blocks, x.varying
    return [x] * len(self.devices), frozenset()

  def process_primitive(self, primitive, args, params):
    blocks, varying = [], frozenset()
    for x in args:
      b, v = self.to_blocks(x)
      blocks.append(b)
      varying |= v
    n = len(self.devices)
    per_device = [[b[k] for b in blocks] for k in range(n)]
    needs_peers = primitive in COLLECTIVES or any(
        has_collective(j) for j in jaxprs_in_params(params))
    if needs_peers:
      outs = None
      if (primitive in COLLECTIVES and primitive not in THREADED_ONLY
          and all(np.size(b) <= IN_STEP_MAX_ELEMENTS for b in per_device[0])):
        outs = self._run_in_step(primitive, per_device, params)
      if outs is None:
        outs = self._run_together(primitive, per_device, params)
    else:
      with set_current_trace(self.parent):
        outs = [primitive.bind(*vals, **params) for vals in per_device]
    out_varying = varying_after(primitive, params, varying, len(outs[0]))
    if self.check_vma and primitive.vma_rule is None and jaxprs_in_params(params):
      out_varying = self._typed_varying(primitive, args, params, out_varying)
    shardings = [None] * len(outs[0])
    # (typed when an operand is, or when asked: ``jnp.zeros(..., out_sharding=)``)
    if isinstance(params.get("sharding"), NamedSharding) or any(
        isinstance(x, ShardMapTracer) and x._trace is self and x.split is not None
        for x in args):
      shardings = self._typed_shardings(primitive, args, params)
    autos = [None] * len(outs[0])
    if self.typing_mesh is not None and any(
        isinstance(x, ShardMapTracer) and x._trace is self and x.auto is not None for x in args):
      avals = self._avals(args)
      autos = auto_step(primitive, [x.auto if isinstance(x, ShardMapTracer) and x._trace is self
                                    else None for x in args],
                        avals, primitive.rule("abstract_eval")(*avals, **params), params,
                        self.typing_mesh)
    return [ShardMapTracer(self, [o[j] for o in outs], v, s, a)
            for j, (v, s, a) in enumerate(zip(out_varying, shardings, autos))]

  def _avals(self, args) -> list:
    return [x.aval if isinstance(x, ShardMapTracer) and x._trace is self else get_aval(x)
            for x in args]

  def _typed_shardings(self, primitive, args, params) -> list:
    """The results' types along the non-manual Explicit axes, from the
    primitive's sharding rule, as staging types a traced body."""
    avals = self._avals(args)
    out_avals = primitive.rule("abstract_eval")(*avals, **params)
    return [a.sharding for a in apply_sharding_rule(primitive, avals, out_avals, params)]

  def _typed_varying(self, primitive, args, params, untyped: list) -> list:
    """A loop or cond traced with vma types (its body saw its operands'
    varying axes) says per result what it varies over, as staging types it:
    a scan's invariant carry stays invariant beside a varying ``ys``."""
    avals = self._avals(args)
    typed = any(v.aval.vma for j in jaxprs_in_params(params) for v in j.invars)
    out_avals = primitive.rule("abstract_eval")(*avals, **params)
    if not typed and not any(a.vma for a in out_avals):
      return untyped
    return [frozenset(a.vma) for a in out_avals]

  def _run_in_step(self, primitive, per_device: list, params) -> list | None:
    """A collective run for every device from this thread (``run_in_step``:
    a 4-device psum of f32[2,3] 772 -> 314 us a call, no thread hand-offs);
    None when an impl exchanges more than once (the threaded run then
    handles it)."""
    shape = tuple(self.mesh.devices.shape)
    frames = list(self.sizes.items())

    def bind_one(k, member):
      with set_current_trace(self.parent), running_on_mesh_device(member), \
          extend_axis_env(frames):
        return primitive.bind(*per_device[k], **params)
    return run_in_step(bind_one, mesh_coords(tuple(self.mesh.axis_names), shape), self.sizes,
                       shape)

  def _run_together(self, primitive, per_device: list, params) -> list:
    rendezvous = MeshRendezvous(self.sizes, mailbox=self.mailbox)
    shape = self.mesh.devices.shape
    frames = list(self.sizes.items())
    results: list = [None] * len(self.devices)
    errors: list = [None] * len(self.devices)

    all_coords = mesh_coords(tuple(self.mesh.axis_names), tuple(shape))

    def run(k: int):
      coords = all_coords[k]
      member = rendezvous.member(coords, f"{self.devices[k]} (mesh coordinates {coords})")
      try:
        with set_current_trace(self.parent), running_on_mesh_device(member), \
            extend_axis_env(frames):
          results[k] = primitive.bind(*per_device[k], **params)
        rendezvous.finish(coords)
      except BaseException as e:   # noqa: BLE001 - every peer must hear of it, then re-raised
        errors[k] = e
        rendezvous.abort(member.description, e)

    futures = [_pool.submit(run, k) for k in range(1, len(self.devices))]
    run(0)
    for f in futures:
      f.result()
    failed = [e for e in errors if e is not None]
    if failed:
      raise next((e for e in failed if type(e).__name__ != "CollectiveError"), failed[0])
    return results


def eager_blocks(trace: ShardMapTrace, x, aval: ShapedArray | None = None) -> tuple:
  """The per-device Arrays of a result (a constant is every device's) and
  its varying axes."""
  blocks, varying = trace.to_blocks(x)
  out = []
  for b, device in zip(blocks, trace.devices):
    if type(b) is not Array:
      v = np.asarray(b)
      v.setflags(write=False)
      b = Array(v, get_aval(b) if aval is None else aval)
    out.append(commit([b], device)[0])
  return out, varying
