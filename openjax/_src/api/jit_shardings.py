"""The shardings ``jit`` is given (``in_shardings``/``out_shardings``): pytree
prefixes expanded to one per leaf, and results relabelled as asked."""
from __future__ import annotations

from openjax._src import tree_util
from openjax._src.core import Array
from openjax._src.core.array import ShardedBuffer, sharded_array_of_shards
from openjax._src.core.sharding import NamedSharding, PartitionSpec, Sharding, resolve_sharding


def is_sharding_leaf(s) -> bool:
  return s is None or isinstance(s, (Sharding, PartitionSpec))


def as_asked(x, sharding):
  """``x`` relabelled with ``sharding`` where that is the same layout as its
  own, written otherwise."""
  if (isinstance(sharding, NamedSharding) and type(x) is Array
      and type(x._buffer) is ShardedBuffer and x._buffer.sharding != sharding
      and x._buffer.sharding.mesh == sharding.mesh
      and x._buffer.sharding.is_equivalent_to(sharding, x.ndim)):
    return sharded_array_of_shards(x.aval, sharding, x._buffer.shards)
  return x


def prefix_leaves(shardings, tree, what: str) -> list:
  """One sharding (or None) per leaf of ``tree`` from ``shardings``, a
  pytree prefix of it."""
  n = tree.num_leaves
  if is_sharding_leaf(shardings):
    return [resolve_sharding(shardings, "jit")] * n
  placeholder = tree_util.tree_unflatten(tree, [object() for _ in range(n)])
  out = []

  def expand(s, sub):
    out.extend([resolve_sharding(s, "jit")] * tree_util.tree_structure(sub).num_leaves)
  try:
    tree_util.tree_map(expand, shardings, placeholder, is_leaf=is_sharding_leaf)
  except ValueError as e:
    raise ValueError(f"jit: {what} is not a pytree prefix of the values it describes: "
                     f"{e}") from None
  return out


__all__ = ["as_asked", "is_sharding_leaf", "prefix_leaves"]
