"""``ragged_all_to_all``: an all_to_all of ragged slices (JAX's
``lax.ragged_all_to_all``; XLA:CPU has no kernel for it, openjax runs it).

Every member sends, for each ``i`` of its ``K`` offsets, the rows
``operand[input_offsets[i]:input_offsets[i] + send_sizes[i]]`` to member
``i // (K / n)``, which writes them at ``output_offsets[i]`` of its
``output``; a receiver's ``recv_sizes[j]`` is the size of the ``j``-th slice
it gets (from member ``j // (K / n)``). Rows nothing is written to keep
``output``'s values.

Per device (pmap/shard_map runs) the members exchange their operands
through the run's rendezvous and each writes its slices with NumPy. Mapped
over the axis itself (shard_map inside a compiled program) the same result
is computed from the stacked operands with ordinary array operations: each
output row finds the slice covering it and reads its source row.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, get_aval
from openjax._src.core.sharding_rules import MANUAL_AXES_ONLY
from openjax._src.primitives.base import ad_util
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.base.structural import (broadcast_in_dim, instantiate_zeros, iota,
                                                     moveaxis, reduce_sum, reshape, transpose,
                                                     zeros_like_aval)
from openjax._src.primitives.collectives.all_to_all import all_to_all_array
from openjax._src.primitives.collectives.collectives import (_check_axis_names, _device_member,
                                                             _group_values, _names)
from openjax._src.primitives.collectives.varying import vma_checked_axes
from openjax._src.primitives.elementwise.arithmetic import add, div, mul, sub
from openjax._src.primitives.elementwise.logic import bitwise_and, eq, ge, lt, select_n
from openjax._src.primitives.reduce.reductions import reduce_or

__all__ = ["ragged_all_to_all_p", "ragged_all_to_all_array"]

ragged_all_to_all_p = Primitive("ragged_all_to_all", kind="linear")
ragged_all_to_all_p.batch_needs_axis = True


def ragged_all_to_all_array(operand, output, input_offsets, send_sizes, output_offsets,
                            recv_sizes, *, axis_name: tuple, axis_index_groups=None):
  return ragged_all_to_all_p.bind1(operand, output, input_offsets, send_sizes, output_offsets,
                                   recv_sizes, axis_name=tuple(axis_name),
                                   axis_index_groups=axis_index_groups)


@ragged_all_to_all_p.def_impl
def _ragged_all_to_all_impl(operand, output, input_offsets, send_sizes, output_offsets,
                            recv_sizes, *, axis_name, axis_index_groups):
  names = _names(axis_name)
  member = _device_member(names, "ragged_all_to_all")
  sent = (np.asarray(operand), np.asarray(input_offsets), np.asarray(output_offsets))
  peers, me = _group_values(member, names, sent, axis_index_groups, "ragged_all_to_all")
  result = np.array(output, copy=True)
  k = len(recv_sizes)
  per_member = k // len(peers)
  for j in range(k):
    src, slot = divmod(j, per_member)
    src_operand, src_in, src_out = peers[src]
    i = me * per_member + slot
    size = int(recv_sizes[j])
    start, at = int(src_in[i]), int(src_out[i])
    result[at:at + size] = src_operand[start:start + size]
  return [result]


@ragged_all_to_all_p.def_abstract_eval
def _ragged_all_to_all_abstract_eval(operand, output, input_offsets, send_sizes,
                                     output_offsets, recv_sizes, *, axis_name,
                                     axis_index_groups):
  for what, a in (("input_offsets", input_offsets), ("send_sizes", send_sizes),
                  ("output_offsets", output_offsets), ("recv_sizes", recv_sizes)):
    if dtypes.kind(a.dtype) not in "iu":
      raise ValueError(f"ragged_all_to_all {what} must be integer type.")
    if len(a.shape) != 1 or a.shape[0] < 1:
      raise ValueError(f"ragged_all_to_all {what} must be rank 1 with positive dimension "
                       f"size, but got shape {a.shape}")
  _check_axis_names(_names(axis_name), "ragged_all_to_all")
  return [output.update(weak_type=False)]


ragged_all_to_all_p.mark_not_applicable("sharding_rule", MANUAL_AXES_ONLY)
# The result varies over the exchange's (checked) axes, as JAX types it.
ragged_all_to_all_p.vma_rule = lambda in_vma, *, axis_name, axis_index_groups: (
    in_vma | (frozenset(_names(axis_name)) & vma_checked_axes()))
ragged_all_to_all_p.vma_needs = lambda *, axis_name, axis_index_groups: frozenset(
    _names(axis_name))


@ragged_all_to_all_p.def_jvp
def _ragged_all_to_all_jvp(primals, tangents, *, axis_name, axis_index_groups):
  # Linear in (operand, output) together, for fixed offsets and sizes.
  operand, output, *ragged = primals
  params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups)
  out = ragged_all_to_all_p.bind(operand, output, *ragged, **params)
  t_operand, t_output = tangents[:2]
  if type(t_operand) is ad_util.Zero and type(t_output) is ad_util.Zero:
    return out, [ad_util.Zero(ad_util.tangent_aval(get_aval(out[0])))]
  t_out = ragged_all_to_all_p.bind(instantiate_zeros(t_operand),
                                   instantiate_zeros(t_output), *ragged, **params)
  return out, t_out


@ragged_all_to_all_p.def_transpose
def _ragged_all_to_all_transpose(cts, operand, output, input_offsets, send_sizes,
                                 output_offsets, recv_sizes, *, axis_name, axis_index_groups):
  # The received rows go back to their senders (a ragged all_to_all the
  # other way); output's cotangent is ct where nothing was written.
  ct, = cts
  if type(ct) is ad_util.Zero:
    return [ad_util.Zero(operand.aval) if ad_util.is_undefined_primal(operand) else None,
            ad_util.Zero(output.aval) if ad_util.is_undefined_primal(output) else None,
            None, None, None, None]
  names = _names(axis_name)
  written_at = all_to_all_array(output_offsets, names, 0, 0, axis_index_groups, True)
  read_from = all_to_all_array(input_offsets, names, 0, 0, axis_index_groups, True)
  zero = zeros_like_aval(operand.aval)
  t_operand = ragged_all_to_all_p.bind1(ct, zero, written_at, recv_sizes, read_from, send_sizes,
                                        axis_name=axis_name,
                                        axis_index_groups=axis_index_groups)
  shape = get_aval(ct).shape
  hit = reduce_or(_covers(shape[0], written_at, recv_sizes), (1,))
  hit = broadcast_in_dim(hit, shape, (0,))
  t_output = select_n(hit, ct, zeros_like_aval(get_aval(ct)))
  return [t_operand, t_output, None, None, None, None]


def _covers(rows: int, offsets, sizes):
  """``mask[r, j]``: row ``r`` lies in slice ``j`` (``offsets[j]`` on, ``sizes[j]`` long)."""
  k, dt = get_aval(offsets).shape[0], get_aval(offsets).dtype
  r = broadcast_in_dim(iota(dt, rows), (rows, k), (0,))
  start = broadcast_in_dim(offsets, (rows, k), (1,))
  end = broadcast_in_dim(add(offsets, convert_element_type(sizes, dt)), (rows, k), (1,))
  return bitwise_and(ge(r, start), lt(r, end))


@ragged_all_to_all_p.def_batch
def _ragged_all_to_all_batch(vals, dims, axis_data, *, axis_name, axis_index_groups):
  names = _names(axis_name)
  params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups)
  if all(d is None for d in dims) and axis_data.name not in names:
    return ragged_all_to_all_p.bind(*vals, **params), [None]
  if axis_index_groups is not None:
    raise NotImplementedError("ragged_all_to_all: axis_index_groups under vmap is not "
                              "supported; use shard_map or pmap without groups.")
  size = axis_data.size
  vals = [_at_front(v, d, size) for v, d in zip(vals, dims)]
  if axis_data.name in names:
    if names != (axis_data.name,):
      raise NotImplementedError("ragged_all_to_all over several axes, one of them mapped "
                                "by vmap, is not supported.")
    return [_mapped_over_members(*vals)], [0]
  # A batch of independent exchanges: the batch becomes more slices of one.
  operand, output, *ragged = vals
  n_rows, m_rows = operand.aval.shape[1], output.aval.shape[1]
  ragged = [transpose(x, (1, 0)) for x in ragged]   # (K, batch)
  k, dt = ragged[0].aval.shape[0], ragged[0].aval.dtype
  shift = broadcast_in_dim(iota(dt, size), (k, size), (1,))
  in_off, send, out_off, recv = ragged
  in_off = add(in_off, mul(shift, np.asarray(n_rows, dt)))
  out_off = add(out_off, mul(shift, np.asarray(m_rows, dt)))
  merge = lambda x: reshape(x, (x.aval.shape[0] * x.aval.shape[1], *x.aval.shape[2:]))
  out = ragged_all_to_all_p.bind1(merge(operand), merge(output), merge(in_off), merge(send),
                                  merge(out_off), merge(recv), **params)
  return [reshape(out, (size, m_rows, *out.aval.shape[1:]))], [0]


def _at_front(x, d, size: int):
  if d is None:
    shape = x.aval.shape
    return broadcast_in_dim(x, (size, *shape), tuple(range(1, len(shape) + 1)))
  return x if d == 0 else moveaxis(x, d, 0)


def _mapped_over_members(operand, output, input_offsets, send_sizes, output_offsets,
                         recv_sizes):
  """Every member's result from the members' stacked operands (leading
  dimension ``n``): output row ``r`` of member ``d`` reads the row of the
  slice covering it from that slice's sender."""
  n, n_rows = operand.aval.shape[:2]
  m_rows, features = output.aval.shape[1], output.aval.shape[2:]
  k = recv_sizes.aval.shape[1]
  per_member = k // n
  dt = recv_sizes.aval.dtype

  def received(x):
    # [d, src * per_member + s] = x[src, d * per_member + s] (all_to_all, tiled).
    x = convert_element_type(x, dt)
    return reshape(transpose(reshape(x, (n, n, per_member)), (1, 0, 2)), (n, k))
  written_at, read_from = received(output_offsets), received(input_offsets)
  shape = (n, m_rows, k)
  row = broadcast_in_dim(iota(dt, m_rows), shape, (1,))
  start = broadcast_in_dim(written_at, shape, (0, 2))
  end = add(start, broadcast_in_dim(recv_sizes, shape, (0, 2)))
  covers = bitwise_and(ge(row, start), lt(row, end))
  sender = div(iota(dt, k), np.asarray(per_member, dt))
  source = add(mul(broadcast_in_dim(sender, shape, (2,)), np.asarray(n_rows, dt)),
               add(broadcast_in_dim(read_from, shape, (0, 2)), sub(row, start)))
  zeros = broadcast_in_dim(np.asarray(0, dt), shape, ())
  source = reduce_sum(select_n(covers, zeros, source), (2,))          # (n, m)
  hit = reduce_or(covers, (2,))                                       # (n, m)
  flat = n * n_rows
  pick = eq(broadcast_in_dim(source, (n, m_rows, flat), (0, 1)),
            broadcast_in_dim(iota(dt, flat), (n, m_rows, flat), (2,)))
  full = (n, m_rows, flat, *features)
  rest = tuple(range(3, 3 + len(features)))
  rows = broadcast_in_dim(reshape(operand, (flat, *features)), full, (2, *rest))
  picked = select_n(broadcast_in_dim(pick, full, (0, 1, 2)),
                    broadcast_in_dim(np.asarray(0, operand.aval.dtype), full, ()), rows)
  gathered = reduce_sum(picked, (2,))
  hit = broadcast_in_dim(hit, output.aval.shape, (0, 1))
  return select_n(hit, output, gathered)


def _ragged_all_to_all_lower(ctx, *args, axis_name, axis_index_groups):
  raise NotImplementedError(
      "ragged_all_to_all cannot be compiled on its own: it runs inside shard_map or pmap "
      "(per device, or mapped over the mesh axis inside a compiled program).")


ragged_all_to_all_p.def_lower(_ragged_all_to_all_lower)
