"""Moving values between the host and devices: ``device_put``, ``device_get``,
``block_until_ready``."""
from __future__ import annotations

from typing import Any

import numpy as np

from openjax._src import tree_util
from openjax._src.core import Array, Tracer, get_aval
from openjax._src.core.devices import Device
from openjax._src.core.sharding import PartitionSpec, Sharding, resolve_sharding
from openjax._src.core.transfer_guard import guard_host_to_device
from openjax._src.runtime.sharded_arrays import put_on_device, put_sharded


def _put_leaf(x: Any, target=None) -> Any:
  if isinstance(x, Tracer):
    return x
  if isinstance(target, Sharding):
    return put_sharded(x, target)
  return put_on_device(x, target)


def _is_target(t: Any) -> bool:
  return t is None or isinstance(t, (Device, Sharding, PartitionSpec))


def device_put(x: Any, device=None, *, src=None, donate: bool = False, may_alias=None):
  """Transfer ``x`` (any pytree of arrays) to ``device``: a Device (default:
  the first, uncommitted), a Sharding (``NamedSharding`` splits each array
  over its mesh), a PartitionSpec (over the mesh of ``jax.set_mesh``), or a
  pytree of those that is a prefix of ``x``'s. NumPy inputs are copied, so
  later changes to them are not seen."""
  guard_host_to_device(tree_util.tree_leaves(x), get_aval, explicit=True)
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
  for leaf in tree_util.tree_leaves(x):
    if isinstance(leaf, Array) and not isinstance(leaf, Tracer):
      leaf.block_until_ready()
  return x
