"""Moving values between the host and devices: ``device_put``, ``device_get``,
``block_until_ready``."""
from __future__ import annotations

from typing import Any

import numpy as np

from openjax._src import tree_util
from openjax._src.core import Array, Tracer, get_aval
from openjax._src.core.devices import Device, MemorySpace
from openjax._src.core.sharding import PartitionSpec, Sharding, resolve_sharding
from openjax._src.core.transfer_guard import guard_host_to_device
from openjax._src.primitives.identity.device_put import copy_semantics_of, device_put_p
from openjax._src.runtime.sharded_arrays import put_on_device, put_sharded


def _put_leaf(x: Any, target=None) -> Any:
  if isinstance(x, Tracer):
    return x
  if isinstance(target, Sharding):
    return put_sharded(x, target)
  return put_on_device(x, target)


def _is_target(t: Any) -> bool:
  return t is None or isinstance(t, (Device, Sharding, PartitionSpec, MemorySpace))


def _per_leaf(arg, x: Any, n: int) -> list:
  # ``device``/``src`` is one target for every leaf or a prefix tree of ``x``'s.
  if _is_target(arg):
    return [arg] * n
  out = []
  tree_util.tree_map(lambda t, sub: out.extend([t] * len(tree_util.tree_leaves(sub))),
                     arg, x, is_leaf=_is_target)
  return out


def _bind_device_put(leaves, x, device, src, donate, may_alias) -> list:
  # A traced call: one device_put equation over every leaf, as JAX stages it.
  n = len(leaves)
  devices = tuple(resolve_sharding(t, "device_put") if isinstance(t, PartitionSpec) else t
                  for t in _per_leaf(device, x, n))
  srcs = tuple(_per_leaf(src, x, n))
  semantics = (copy_semantics_of(donate, may_alias),) * n
  return device_put_p.bind(*leaves, devices=devices, srcs=srcs, copy_semantics=semantics)


def device_put(x: Any, device=None, *, src=None, donate: bool = False, may_alias=None):
  """Transfer ``x`` (any pytree of arrays) to ``device``: a Device (default:
  the first, uncommitted), a Sharding (``NamedSharding`` splits each array
  over its mesh), a PartitionSpec (over the mesh of ``jax.set_mesh``), or a
  pytree of those that is a prefix of ``x``'s. NumPy inputs are copied, so
  later changes to them are not seen."""
  leaves, treedef = tree_util.tree_flatten(x)
  guard_host_to_device(leaves, get_aval, explicit=True)
  if any(isinstance(leaf, Tracer) for leaf in leaves):
    return tree_util.tree_unflatten(treedef, _bind_device_put(leaves, x, device, src, donate,
                                                              may_alias))
  if isinstance(device, MemorySpace):
    # openjax's devices have one memory: every space is the default device's.
    device = None
  if _is_target(device):
    target = resolve_sharding(device, "device_put")
    return tree_util.tree_map(lambda leaf: _put_leaf(leaf, target), x)

  def put_subtree(target, sub):
    target = resolve_sharding(target, "device_put")
    return tree_util.tree_map(lambda leaf: _put_leaf(leaf, target), sub)
  return tree_util.tree_map(put_subtree, device, x, is_leaf=_is_target)


def device_get(x: Any):
  """Transfer a pytree of Arrays to the host as NumPy arrays (scalars stay)."""
  def get(leaf):
    if isinstance(leaf, Array):
      return np.asarray(leaf)
    return leaf
  return tree_util.tree_map(get, x)


def block_until_ready(x: Any):
  """Wait until every Array in the pytree ``x`` is computed; returns ``x``."""
  if type(x) is Array:
    # One Array, the common call (timing loops): the tree walk cost 1.3 of its 1.5 us.
    return x.block_until_ready()
  for leaf in tree_util.tree_leaves(x):
    if isinstance(leaf, Array) and not isinstance(leaf, Tracer):
      leaf.block_until_ready()
  return x
