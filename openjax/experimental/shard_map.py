"""``jax.experimental.shard_map.shard_map``: the older spelling of
``jax.shard_map`` (``check_rep`` for ``check_vma``; ``mesh`` positional)."""
import warnings

from openjax._src.api.shard_map import shard_map as _shard_map

__all__ = ["shard_map"]


def shard_map(f, mesh, in_specs, out_specs, check_rep: bool = True, auto=frozenset()):
  """``jax.shard_map(f, mesh=mesh, in_specs=..., out_specs=..., check_vma=check_rep)``."""
  warnings.warn("jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map "
                "instead.", DeprecationWarning, stacklevel=2)
  names = frozenset(mesh.axis_names) - frozenset(auto)
  return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                    axis_names=names, check_vma=check_rep)
