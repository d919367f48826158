"""Moving values between the host and devices: ``device_put``, ``device_get``,
``block_until_ready``."""
from __future__ import annotations

from typing import Any

import numpy as np

from openjax._src import dtypes, tree_util
from openjax._src.core import Array, Tracer, canonical_value, get_aval, make_array
from openjax._src.core.transfer_guard import guard_host_to_device


def _put_leaf(x: Any, device=None) -> Any:
  if isinstance(x, Tracer):
    return x
  if type(x) is Array:
    if x.is_deleted():
      x._check_alive()
    return x if device is None or device == x.device else Array(x._value, x.aval, device)
  weak = type(x) in dtypes.python_scalar_dtypes
  value = canonical_value(x)
  arr = make_array(value, weak_type=weak)
  return arr if device is None else Array(arr._np, arr.aval, device)


def device_put(x: Any, device=None, *, src=None, donate: bool = False, may_alias=None):
  """Transfer ``x`` (any pytree of arrays) to ``device`` (default: the first);
  NumPy inputs are copied, so later changes to them are not seen."""
  target = getattr(device, "_device", None) if hasattr(device, "device_set") else device
  guard_host_to_device(tree_util.tree_leaves(x), get_aval, explicit=True)
  return tree_util.tree_map(lambda leaf: _put_leaf(leaf, target), x)


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
