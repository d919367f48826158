"""``jax.pmap``: ``shard_map`` over a one-axis mesh of the first ``n``
devices, as in JAX 0.10.2. Each mapped argument's mapped axis moves to the
front and is split one row per device; the body squeezes that row, calls
the function, and gives each result its row back (or, for ``out_axes=None``,
returns device 0's value). Results are Arrays sharded over the devices
(``NamedSharding(Mesh(axis_name: n), P(axis_name))``)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from openjax._src import tree_util
from openjax._src.api.jit import jit
from openjax._src.api.shapes import abstractify
from openjax._src.api.shard_map import bind_shard_map, trace_shard_map
from openjax._src.api.vmap import (check_callable, flatten_axes, fun_name, mapped_axis_size,
                                   wraps)
from openjax._src.core import Array, Tracer
from openjax._src.core.array import ShardedBuffer
from openjax._src.core.devices import _check_backend, device_count, local_devices
from openjax._src.core.mesh import Mesh
from openjax._src.core.sharding import IndivisibleError, NamedSharding, PartitionSpec
from openjax._src.primitives.base.structural import expand_dims, moveaxis, squeeze
from openjax._src.primitives.collectives.collectives import current_axis_env

__all__ = ["pmap"]

# JAX's name for the axis of a pmap given no axis_name.
_UNNAMED_AXIS = "_internal_pmap_axis_name"


def _argnums(argnums, what: str) -> tuple:
  if isinstance(argnums, int):
    argnums = (argnums,)
  argnums = tuple(argnums)
  if not all(isinstance(i, int) for i in argnums):
    raise TypeError(f"pmap {what} must be an int or a collection of ints, got {argnums}")
  return argnums


def _pmap_devices(size: int, devices, backend) -> list:
  if devices is not None:
    return list(devices)[:size]
  _check_backend(backend)
  return list(local_devices(backend=backend))[:size]


def _delete_donated(donated_args, outs) -> None:
  """Donated arguments are deleted after the call, as in JAX (using one
  raises). A result that passes a donated argument's shards through keeps
  them: the argument is only marked deleted."""
  kept = {id(s) for o in outs if isinstance(o, Array) and type(o._buffer) is ShardedBuffer
          for s in o._buffer.shards}
  for x in tree_util.tree_leaves(donated_args):
    if type(x) is not Array or x.is_deleted() or any(x is o for o in outs):
      continue
    b = x._buffer
    if type(b) is ShardedBuffer and any(id(s) in kept for s in b.shards):
      x._deleted, x._buffer, x._np = True, None, None
    else:
      x.delete()


def _too_few_devices(name, mesh, size: int, leaves, dims) -> Exception:
  """JAX 0.10.2's error for a mapped size above the device count: pmap runs
  over the devices there are, so the mapped axis is split unevenly (JAX's
  IndivisibleError) or each device's block holds several rows (the squeeze
  of the row fails)."""
  n = mesh.devices.size
  x = next(x for x, d in zip(leaves, dims) if d is not None)
  shape = tuple(np.shape(x))
  if size % n:
    sharding = NamedSharding(mesh, PartitionSpec(name))
    factors = [n] + [1] * (len(shape) - 1)
    return IndivisibleError(
        f"Sharding {sharding} implies that array axis 0 is partitioned {n} times, but the "
        f"dimension size is {size} (full shape: {shape}, per-dimension tiling factors: "
        f"{factors} should evenly divide the shape)")
  block = (size // n,) + shape[1:]
  return ValueError("cannot select an axis to squeeze out which has size not equal to one, "
                    f"got shape={block} and dimensions=(0,)")


def pmap(fun: Callable, axis_name=None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums=(), devices=None, backend: str | None = None,
         axis_size: int | None = None, donate_argnums=()) -> Callable:
  """Map ``fun`` over the leading (or ``in_axes``) axis of its arguments, one
  slice per device, running the devices' programs in parallel; collectives
  over ``axis_name`` (``lax.psum``...) combine the devices' values."""
  check_callable(fun)
  static = _argnums(static_broadcasted_argnums, "static_broadcasted_argnums")
  donate = _argnums(donate_argnums, "donate_argnums")
  if isinstance(in_axes, list):
    in_axes = tuple(in_axes)
  name = _UNNAMED_AXIS if axis_name is None else axis_name
  cache: dict = {}
  dims_cache: dict = {}
  meshes: dict = {}   # (mapped size, device count) -> Mesh

  @wraps(fun)
  def pmap_f(*args, **kwargs):
    n_args = len(args)
    static_pos = tuple(i % n_args for i in static) if n_args else ()
    dyn_args = tuple(a for i, a in enumerate(args) if i not in static_pos)
    static_vals = tuple((i, args[i]) for i in sorted(static_pos))
    axes = in_axes
    if isinstance(axes, tuple):
      if len(axes) != n_args:
        raise ValueError(
            "pmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got len(in_axes)={len(axes)}, "
            f"len(args)={n_args}")
      axes = tuple(a for i, a in enumerate(axes) if i not in static_pos)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
    dims = dims_cache.get((in_tree, axes))
    if dims is None:
      dims = flatten_axes("pmap in_axes", in_tree, (axes, 0), kws=True)
      dims_cache[(in_tree, axes)] = dims
    size = mapped_axis_size(fun, in_tree, leaves, dims, "pmap", axis_size)
    dims = [None if d is None else d % np.ndim(x) if not isinstance(x, Tracer)
            else d % x.aval.ndim for x, d in zip(leaves, dims)]
    # (the device count can change between calls: jax_num_cpu_devices)
    mesh_key = (size, device_count() if devices is None else None)
    mesh = meshes.get(mesh_key)
    if mesh is None:
      mesh = meshes[mesh_key] = Mesh(np.array(_pmap_devices(size, devices, backend),
                                              dtype=object), (name,))
    if mesh.devices.size < size:
      raise _too_few_devices(name, mesh, size, leaves, dims)
    moved = [x if d in (None, 0) else moveaxis(x, d, 0) for x, d in zip(leaves, dims)]
    avals = [abstractify(x) for x in moved]
    key = (mesh, in_tree, tuple(dims), tuple((a.shape, a.dtype, a.weak_type) for a in avals),
           static_vals, current_axis_env())
    entry = cache.get(key)
    if entry is None:
      entry = cache[key] = _trace(fun, name, mesh, in_tree, dims, avals, static_vals,
                                  out_axes)
    jaxpr, out_tree, in_specs, out_specs, out_dims = entry
    outs = bind_shard_map(moved, jaxpr=jaxpr, mesh=mesh, in_specs=in_specs,
                          out_specs=out_specs, check_vma=False,
                          newly_manual_axes=frozenset([name]))
    outs = [o if d in (None, 0) else moveaxis(o, 0, d) for o, d in zip(outs, out_dims)]
    if donate and n_args:
      _delete_donated([a for i, a in enumerate(args) if i in {j % n_args for j in donate}
                       and i not in static_pos], outs)
    return tree_util.tree_unflatten(out_tree, outs)

  def lower(*args, **kwargs):
    """The ahead-of-time stages of the mapped computation: one module, the
    per-device program mapped over the devices (``as_text()``,
    ``compile()``)."""
    return jit(pmap_f, static_argnums=static).lower(*args, **kwargs)

  pmap_f.lower = lower
  return pmap_f


def _trace(fun, name, mesh, in_tree, dims, avals, static_vals, out_axes):
  mapped = [d is not None for d in dims]
  box: list = []

  def body(*blocks):
    xs = [squeeze(b, (0,)) if m else b for b, m in zip(blocks, mapped)]
    dyn_args, kwargs = tree_util.tree_unflatten(in_tree, xs)
    args = list(dyn_args)
    for i, v in static_vals:
      args.insert(i, v)
    leaves, out_tree = tree_util.tree_flatten(fun(*args, **kwargs))
    out_dims = flatten_axes("pmap out_axes", out_tree, out_axes)
    for d, leaf in zip(out_dims, leaves):
      ndim = np.ndim(leaf) if not isinstance(leaf, Tracer) else leaf.aval.ndim
      if d is not None and not -ndim - 1 <= d <= ndim:
        raise ValueError(f"pmap out_axes {d} is out of bounds for an output of rank {ndim} "
                         f"of {fun_name(fun)}")
    box.append((out_tree, out_dims))
    return [leaf if d is None else expand_dims(leaf, (0,)) for leaf, d in zip(leaves, out_dims)]

  in_specs = tuple(PartitionSpec(name) if m else PartitionSpec() for m in mapped)

  def out_specs(out_tree):
    return [PartitionSpec() if d is None else PartitionSpec(name) for d in box[0][1]]

  flat_tree = tree_util.tree_structure(tuple(avals))
  jaxpr, _, flat_specs = trace_shard_map(body, mesh, flat_tree, avals, in_specs, out_specs,
                                         False)
  out_tree, out_dims = box[0]
  out_dims = [None if d is None else d % a.ndim for d, a in zip(out_dims, jaxpr.out_avals)]
  return jaxpr, out_tree, in_specs, tuple(flat_specs), out_dims
