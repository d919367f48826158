"""``out_sharding=`` of the samplers: as JAX, a sample is drawn whole and
then laid out (``reshard``), so its values are those of the unsharded
sample and its type is split as asked (``float32[8@x,4@y]``)."""
from __future__ import annotations

import functools

from openjax._src.sharding.api import reshard


def lays_out_result(sampler):
  """``sampler`` with its ``out_sharding`` keyword honoured: the result is
  resharded to it (a Sharding, or a PartitionSpec over the mesh of
  ``jax.set_mesh``)."""
  @functools.wraps(sampler)
  def laid_out(*args, out_sharding=None, **kwargs):
    out = sampler(*args, **kwargs)
    return out if out_sharding is None else reshard(out, out_sharding)
  return laid_out


__all__ = ["lays_out_result"]
