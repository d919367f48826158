"""How JAX's jit labels results laid out over Auto mesh axes.

The compiler hands back each result's layout; JAX labels a result laid out
as the call's first argument is (equivalently, at the same rank) with that
argument's sharding itself, and the others with the layout, trailing whole
dimensions left out. So ``jit(lambda v: v * 2)`` of an argument placed with
``P('i', None)`` gives ``P('i', None)``, of one placed with ``P('i')`` gives
``P('i')``, and a rank-changing reduction gives ``P('i')`` from either.
"""
from __future__ import annotations

from typing import Sequence

from openjax._src.core.array import Array, ShardedBuffer, sharded_array_of_shards
from openjax._src.core.sharding import NamedSharding, dim_axes

__all__ = ["as_first_argument", "compiler_spec"]


def compiler_spec(spec: tuple, mesh) -> tuple:
  """A result's layout ``spec`` as the compiler reports it over Auto axes:
  without the axes of size 1 (they split nothing); Explicit axes are types,
  kept as written."""
  if mesh._any_axis_explicit or not any(mesh.shape[a] == 1 for a in mesh.axis_names):
    return spec
  entries = []
  for p in spec:
    kept = tuple(a for a in dim_axes(p) if mesh.shape[a] != 1)
    entries.append(None if not kept else kept[0] if len(kept) == 1 else kept)
  return tuple(entries)


def as_first_argument(outs: list, first, mesh, candidates: Sequence[bool] | None = None) -> list:
  """``outs`` with those laid out as ``first`` (the call's first argument,
  split over ``mesh``) relabelled with its sharding; ``candidates``: which
  results may be (all when None)."""
  orig = (first._buffer.sharding if type(first) is Array
          and type(first._buffer) is ShardedBuffer else None)
  if not isinstance(orig, NamedSharding) or orig.mesh != mesh or mesh._any_axis_explicit:
    return outs
  placed = []
  for j, x in enumerate(outs):
    if ((candidates is None or candidates[j]) and type(x) is Array
        and type(x._buffer) is ShardedBuffer and x.ndim == first.ndim
        and x.sharding.spec != orig.spec and _equivalent(x.sharding, orig, x.ndim)):
      x = sharded_array_of_shards(x.aval, orig, x._buffer.shards)
    placed.append(x)
  return placed


_equivalents: dict = {}


def _equivalent(a: NamedSharding, b: NamedSharding, ndim: int) -> bool:
  # (is_equivalent_to compares device maps: ~20 us, on every call otherwise)
  key = (a, b, ndim)
  same = _equivalents.get(key)
  if same is None:
    if len(_equivalents) > 4096:
      _equivalents.clear()
    same = _equivalents[key] = a.is_equivalent_to(b, ndim)
  return same
