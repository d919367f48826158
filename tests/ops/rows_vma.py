"""Op-table rows: shard_map bodies typed by varying manual axes
(``check_vma``): ``lax.pcast(..., to='varying')`` (the ``pvary``
primitive, whose transpose sums the devices' cotangents) and a ``psum`` of a
replicated value (a ``pvary`` then ``psum_invariant``: n times the value).
Each row runs on 4 CPU devices."""
import functools

import numpy as np

import openjax as jax
from openjax import lax
from openjax.sharding import Mesh, PartitionSpec as P
from tests.ops.harness import OpRow
from tests.ops.rows_collectives import _arr
from tests.ops.rows_pmap import _four_devices

F32 = np.float32


def _replicated_in(f, out_spec):
  """``f`` on every device's copy of a replicated operand (in_specs P())."""
  @functools.wraps(f)
  def run(x):
    with _four_devices() as devs:
      mesh = Mesh(np.array(devs[:4]), ("i",))
      return jax.shard_map(f, mesh=mesh, in_specs=P(), out_specs=out_spec)(x)
  return run


def _scaled_by_device(b):
  varying = lax.pcast(b, "i", to="varying")
  return varying * (lax.axis_index("i") + 1).astype(b.dtype)


ROWS = [
    OpRow("lax.pcast_varying_shard_map", _replicated_in(_scaled_by_device, P("i")),
          _arr((3,)), lambda x: np.concatenate([x * k for k in (1, 2, 3, 4)]), grad=True),
    OpRow("lax.psum_replicated_shard_map", _replicated_in(lambda b: lax.psum(b, "i"), P()),
          _arr((2, 3)), lambda x: 4 * x, grad=True),
]
