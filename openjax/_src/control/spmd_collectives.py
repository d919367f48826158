"""The collectives between the parts of a split SPMD program (control/spmd.py),
done on the host with NumPy on the parts' per-device results: all-reduce of
partial sums, all-gather, and any relayout (reduce-scatter, all-to-all) as
a gather then each device's piece. CPU devices share the host's memory, so
this costs copies, never transfers."""
from __future__ import annotations

import numpy as np

from openjax._src.core.memory import aligned_empty
from openjax._src.core.sharding import NamedSharding, PartitionSpec

_HOST_REDUCE = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply,
                "and": np.logical_and, "or": np.logical_or}


def _replicated(spec: tuple) -> bool:
  return all(p is None for p in spec)


def host_relayout(pieces: list, mesh, spec: tuple, partial: frozenset, op: str | None,
                  dst_spec: tuple, aval) -> list:
  """Each device's piece (in ``mesh``'s device order) of the value whose
  pieces ``pieces`` are laid out by ``spec`` and still to be combined with
  ``op`` over the mesh axes ``partial``, laid out by ``dst_spec``."""
  values = [np.asarray(p) for p in pieces]
  sizes = dict(mesh.shape)
  if partial and len(partial) == len(sizes) and spec == dst_spec:
    # Every device holds a partial result of the whole: one total, shared
    # (read-only, aligned so each device imports it without a copy).
    total = aligned_empty(values[0].shape, values[0].dtype)
    combine = _HOST_REDUCE[op]
    combine(values[0], values[1], out=total)
    for v in values[2:]:
      combine(total, v, out=total)
    total.setflags(write=False)
    return [total] * len(values)
  if partial:
    names = list(sizes)
    stacked = np.stack(values).reshape(tuple(sizes[a] for a in names) + values[0].shape)
    axes = tuple(names.index(a) for a in partial)
    total = _HOST_REDUCE[op].reduce(stacked, axis=axes, keepdims=True)
    total = np.broadcast_to(total, stacked.shape).reshape((-1,) + values[0].shape)
    values = [np.array(v) for v in total]
    if spec == dst_spec:
      return values
  # All-gather to the whole value, then each device's piece of ``dst_spec``.
  whole = _whole(values, mesh, spec, aval)
  if _replicated(dst_spec):
    return [whole] * len(values)
  indices = NamedSharding(mesh, PartitionSpec(*dst_spec))._indices(aval.shape)
  return [np.array(whole[index]) for index in indices]


def _whole(values: list, mesh, spec: tuple, aval) -> np.ndarray:
  if _replicated(spec):
    return values[0]
  out = np.empty(aval.shape, aval.dtype)
  for v, index in zip(values, NamedSharding(mesh, PartitionSpec(*spec))._indices(aval.shape)):
    out[index] = v
  return out


__all__ = ["host_relayout"]
