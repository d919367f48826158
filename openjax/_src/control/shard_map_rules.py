"""Rules of ``shard_map_p`` besides its evaluation: the replication check
(``check_vma``), JVP, transpose, batching, partial evaluation and lowering.
Each transforms the per-device program and binds ``shard_map_p`` again."""
from __future__ import annotations

from openjax._src.control.shard_map import shard_map_p

__all__ = ["check_replication"]


def check_replication(jaxpr, mesh, in_specs, out_specs, name: str) -> None:
  pass
