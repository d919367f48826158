"""``lax.ragged_dot`` / ``ragged_dot_general``: matrix products whose rows (or
contracted entries) are split into groups of given sizes, written with masks on
``dot_general`` (the reference semantics; JAX lowers them to one grouped kernel).

Three modes, by where ``lhs_ragged_dimensions`` lies:
- a free (non-contracting) lhs dimension: rows of group ``g`` multiply rhs's
  ``g``-th slice along ``rhs_group_dimensions``; rows past the groups give 0;
- a contracting dimension: one product per group over its own entries, the
  group index leading the result;
- a batch dimension: an ordinary ``dot_general``.
Gradients follow from the masked products.
"""
from __future__ import annotations

import numpy as np

from openjax._src import lax
from openjax._src.core import get_aval
from openjax._src.lax.extra import RaggedDotDimensionNumbers

__all__ = ["ragged_dot", "ragged_dot_general"]


def _group_masks(group_sizes, num_groups: int, length: int, dtype):
  """``mask[g, i]``: position ``i`` of the ragged dimension belongs to group ``g``."""
  ends = lax.cumsum(lax.convert_element_type(group_sizes, np.int32), 0)
  starts = lax.sub(ends, lax.convert_element_type(group_sizes, np.int32))
  pos = lax.broadcasted_iota(np.int32, (num_groups, length), 1)
  inside = lax.bitwise_and(lax.ge(pos, lax.broadcast_in_dim(starts, (num_groups, length), (0,))),
                           lax.lt(pos, lax.broadcast_in_dim(ends, (num_groups, length), (0,))))
  return lax.convert_element_type(inside, dtype)


def _masked(x, mask, axis: int):
  """``x`` repeated along a new leading group axis, zero outside each group."""
  shape = get_aval(x).shape
  out_shape = (get_aval(mask).shape[0],) + shape
  return lax.mul(lax.broadcast_in_dim(x, out_shape, tuple(range(1, len(shape) + 1))),
                 lax.broadcast_in_dim(mask, out_shape, (0, axis + 1)))


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
  """Grouped ``dot_general``; see the module docstring for the three modes."""
  if group_offset is not None:
    raise NotImplementedError("ragged_dot_general: group_offset is not supported yet")
  dn = ragged_dot_dimension_numbers
  if not isinstance(dn, RaggedDotDimensionNumbers):
    raise TypeError(f"ragged_dot_general: ragged_dot_dimension_numbers must be a "
                    f"RaggedDotDimensionNumbers, got {dn!r}")
  (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dn.dot_dimension_numbers
  lhs_contract, rhs_contract = tuple(lhs_contract), tuple(rhs_contract)
  lhs_batch, rhs_batch = tuple(lhs_batch), tuple(rhs_batch)
  if len(dn.lhs_ragged_dimensions) != 1:
    raise ValueError("ragged_dot_general: exactly one lhs ragged dimension is supported, got "
                     f"{dn.lhs_ragged_dimensions}")
  ragged = dn.lhs_ragged_dimensions[0]
  lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
  num_groups = get_aval(group_sizes).shape[0]
  kw = dict(precision=precision, preferred_element_type=preferred_element_type)
  if ragged in lhs_batch:
    return lax.dot_general(lhs, rhs, ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)), **kw)
  lhs_dtype = get_aval(lhs).dtype
  mask = _group_masks(group_sizes, num_groups, lhs_shape[ragged], lhs_dtype)
  masked = _masked(lhs, mask, ragged)
  shift = tuple(d + 1 for d in lhs_contract), tuple(d + 1 for d in lhs_batch)
  if ragged in lhs_contract:
    # One product per group; the group axis is a free lhs dimension, moved first.
    out = lax.dot_general(masked, rhs, ((shift[0], rhs_contract), (shift[1], rhs_batch)), **kw)
    nb = len(lhs_batch)
    perm = (nb,) + tuple(range(nb)) + tuple(range(nb + 1, len(get_aval(out).shape)))
    return lax.transpose(out, perm)
  if len(dn.rhs_group_dimensions) != 1:
    raise ValueError("ragged_dot_general: a ragged free lhs dimension needs exactly one rhs "
                     f"group dimension, got {dn.rhs_group_dimensions}")
  group_dim = dn.rhs_group_dimensions[0]
  if rhs_shape[group_dim] != num_groups:
    raise ValueError(f"ragged_dot_general: rhs group dimension has size {rhs_shape[group_dim]} "
                     f"but group_sizes has {num_groups} groups")
  # The group axis is a batch dimension of the product, then summed away.
  out = lax.dot_general(masked, rhs, ((shift[0], rhs_contract),
                                      ((0,) + shift[1], (group_dim,) + rhs_batch)), **kw)
  return lax.reduce_sum(out, (0,))


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
  """``lhs[m, k]`` times ``rhs[g, k, n]``: rows of group ``i`` (sizes in
  ``group_sizes[g]``) use ``rhs[i]``; rows past the last group are zero."""
  dn = RaggedDotDimensionNumbers(dot_dimension_numbers=(((1,), (1,)), ((), ())),
                                 lhs_ragged_dimensions=(0,), rhs_group_dimensions=(0,))
  return ragged_dot_general(lhs, rhs, group_sizes, dn, precision=precision,
                            preferred_element_type=preferred_element_type,
                            group_offset=group_offset, out_sharding=out_sharding)
