"""Op-table rows: the named-axis collectives under ``pmap`` (one program per
device, the collectives meeting across devices) and ``shard_map``; each row
runs with 4 CPU devices. The harness's columns then run them eagerly (per
device), under jit (the program mapped over the mesh inside one compiled
module), vmap (shard_map's batching rule), JVP/VJP (its transpose and
partial evaluation) and compiled."""
import contextlib
import functools

import numpy as np

import openjax as jax
from openjax import lax
from openjax.sharding import Mesh, PartitionSpec as P
from tests.ops.harness import OpRow
from tests.ops.rows_collectives import _CYCLE, _all_to_all_ref, _arr, _bcast

F32, I32 = np.float32, np.int32


@contextlib.contextmanager
def _four_devices():
  before = jax.config.read("jax_num_cpu_devices")
  jax.config.update("jax_num_cpu_devices", 4)
  try:
    yield jax.devices()
  finally:
    jax.config.update("jax_num_cpu_devices", -1 if before is None else before)


def pmap_i(f):
  mapped = jax.pmap(f, axis_name="i")

  @functools.wraps(f)
  def run(x):
    with _four_devices():
      return mapped(x)
  return run


def shard_map_i(f):
  @functools.wraps(f)
  def run(x):
    with _four_devices() as devs:
      mesh = Mesh(np.array(devs[:4]), ("i",))
      return jax.shard_map(lambda b: f(b[0])[None], mesh=mesh, in_specs=P("i"),
                           out_specs=P("i"))(x)
  return run


ROWS = [
    OpRow("lax.psum_pmap", pmap_i(lambda v: lax.psum(v, "i")), _arr((4, 3)),
          _bcast(lambda x: x.sum(0)), grad=True),
    OpRow("lax.psum_pmap_int32", pmap_i(lambda v: lax.psum(v, "i")), _arr((4, 3), I32),
          _bcast(lambda x: x.sum(0, dtype=I32))),
    OpRow("lax.pmean_pmap", pmap_i(lambda v: lax.pmean(v, "i")), _arr((4, 3)),
          _bcast(lambda x: x.mean(0)), grad=True),
    OpRow("lax.pmax_pmap", pmap_i(lambda v: lax.pmax(v, "i")), _arr((4, 3)),
          _bcast(lambda x: x.max(0))),
    OpRow("lax.pmin_pmap", pmap_i(lambda v: lax.pmin(v, "i")), _arr((4, 3), I32),
          _bcast(lambda x: x.min(0))),
    OpRow("lax.all_gather_pmap", pmap_i(lambda v: lax.all_gather(v, "i", axis=1)),
          _arr((4, 3)), _bcast(lambda x: x.T), grad=True),
    OpRow("lax.all_gather_pmap_tiled", pmap_i(lambda v: lax.all_gather(v, "i", tiled=True)),
          _arr((4, 2, 3)), _bcast(lambda x: x.reshape(-1, 3)), grad=True),
    OpRow("lax.psum_scatter_pmap", pmap_i(lambda v: lax.psum_scatter(v, "i")), _arr((4, 4, 2)),
          lambda x: x.sum(0), grad=True),
    OpRow("lax.psum_scatter_pmap_tiled",
          pmap_i(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True)),
          _arr((4, 3, 8)), lambda x: x.sum(0).reshape(3, 4, 2).transpose(1, 0, 2), grad=True),
    OpRow("lax.ppermute_pmap", pmap_i(lambda v: lax.ppermute(v, "i", _CYCLE)), _arr((4, 3)),
          lambda x: np.roll(x, 1, axis=0), grad=True),
    OpRow("lax.ppermute_pmap_partial", pmap_i(lambda v: lax.ppermute(v, "i", [(0, 1), (2, 3)])),
          _arr((4, 3)), lambda x: np.stack([0 * x[0], x[0], 0 * x[0], x[2]]), grad=True),
    OpRow("lax.pshuffle_pmap", pmap_i(lambda v: lax.pshuffle(v, "i", [3, 2, 1, 0])),
          _arr((4, 3)), lambda x: x[::-1], grad=True),
    OpRow("lax.pbroadcast_pmap", pmap_i(lambda v: lax.pbroadcast(v, "i", 1)), _arr((4, 3)),
          _bcast(lambda x: x[1]), grad=True),
    OpRow("lax.all_to_all_pmap", pmap_i(lambda v: lax.all_to_all(v, "i", 0, 1)),
          _arr((4, 4, 2)), _all_to_all_ref(0, 1), grad=True),
    OpRow("lax.axis_index_pmap", pmap_i(lambda v: v * lax.axis_index("i")), _arr((4, 3)),
          lambda x: x * np.arange(4, dtype=F32)[:, None], grad=True),
    OpRow("lax.psum_shard_map", shard_map_i(lambda v: lax.psum(v, "i")), _arr((4, 3)),
          _bcast(lambda x: x.sum(0)), grad=True),
    OpRow("lax.all_gather_shard_map", shard_map_i(lambda v: lax.all_gather(v, "i")),
          _arr((4, 3)), _bcast(lambda x: x), grad=True),
    OpRow("lax.ppermute_shard_map", shard_map_i(lambda v: lax.ppermute(v, "i", _CYCLE)),
          _arr((4, 3)), lambda x: np.roll(x, 1, axis=0), grad=True),
]
