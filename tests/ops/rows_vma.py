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


def ragged_layout(n: int, per_member: int, seed: int = 0):
  """A valid ragged_all_to_all layout for ``n`` members, ``2 * n *
  per_member`` rows each: each sends 0-2 rows to each slot; receivers pack
  what they get in (sender, slot) order. Every array has a leading member
  dimension."""
  rng = np.random.default_rng(seed)
  k = n * per_member
  send = rng.integers(0, 3, size=(n, k)).astype(np.int32)
  in_off = np.zeros((n, k), np.int32)
  for s in range(n):
    in_off[s] = np.concatenate([[0], np.cumsum(send[s])[:-1]])
  recv = np.zeros((n, k), np.int32)
  out_off = np.zeros((n, k), np.int32)
  for d in range(n):
    at = 0
    for src in range(n):
      for slot in range(per_member):
        i = d * per_member + slot
        recv[d, src * per_member + slot] = send[src, i]
        out_off[src, i] = at
        at += send[src, i]
  return in_off, send, out_off, recv


def ragged_reference(operand, output, in_off, send, out_off, recv):
  """NumPy's ragged_all_to_all over stacked members (leading dimension)."""
  n, k = send.shape
  per_member = k // n
  result = np.array(output, copy=True)
  for src in range(n):
    for i in range(k):
      d = i // per_member
      size = send[src, i]
      result[d, out_off[src, i]:out_off[src, i] + size] = \
          operand[src, in_off[src, i]:in_off[src, i] + size]
  return result


def _ragged_row(n: int = 4, per_member: int = 2):
  rows = 2 * n * per_member
  layout = ragged_layout(n, per_member)

  def fn(operand, output):
    with _four_devices() as devs:
      mesh = Mesh(np.array(devs[:n]), ("i",))
      f = jax.shard_map(lambda *a: lax.ragged_all_to_all(*(b[0] for b in a), axis_name="i")[None],
                        mesh=mesh, in_specs=P("i"), out_specs=P("i"))
      return f(operand, output, *layout)

  def args(rng):
    return (rng.standard_normal((n, rows, 2)).astype(F32),
            rng.standard_normal((n, rows, 2)).astype(F32))
  return OpRow("lax.ragged_all_to_all_shard_map", fn, args,
               lambda operand, output: ragged_reference(operand, output, *layout), grad=True)


ROWS.append(_ragged_row())
