"""``lax.scaled_dot``: ``(lhs * lhs_scale) @ (rhs * rhs_scale)`` where each
scale holds one value per *subchannel* (a run of contracted entries), the
microscaling formats' block scales. Computed by expanding the scales along the
contracting dimensions and contracting in float32, then rounding to
``preferred_element_type`` (bfloat16 by default, as JAX)."""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import get_aval

__all__ = ["scaled_dot"]

_F32 = np.dtype(np.float32)


def _expanded_scale(operand_shape, scale, contracting, fn: str, which: str):
  scale_shape = get_aval(scale).shape
  if len(scale_shape) != len(operand_shape):
    raise TypeError(f"{fn}: {which}_scale must have the operand's rank {len(operand_shape)}, "
                    f"got shape {scale_shape}")
  scale = lax.convert_element_type(scale, _F32)
  for d, (size, scale_size) in enumerate(zip(operand_shape, scale_shape)):
    if d in contracting:
      if scale_size == 0 or size % scale_size:
        raise TypeError(f"{fn}: the contracting dimension {d} of {which} has size {size}, not a "
                        f"multiple of its scale's size {scale_size}")
      if scale_size != size:
        # Repeat each scale over its subchannel: (.., s, ..) -> (.., s, k/s, ..) -> (.., k, ..).
        sub = size // scale_size
        shape = get_aval(scale).shape
        wide = shape[:d + 1] + (sub,) + shape[d + 1:]
        scale = lax.broadcast_in_dim(scale, wide, tuple(i if i <= d else i + 1
                                                        for i in range(len(shape))))
        scale = lax.reshape(scale, shape[:d] + (size,) + shape[d + 1:])
    elif size != scale_size:
      raise TypeError(f"{fn}: non-contracting dimension {d} of {which} has size {size} but its "
                      f"scale has {scale_size}")
  return scale


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
  """``dot_general(lhs * lhs_scale, rhs * rhs_scale)`` with scales given per
  subchannel of the contracting dimensions (None: scale 1)."""
  lhs_shape, rhs_shape = get_aval(lhs).shape, get_aval(rhs).shape
  if dimension_numbers is None:
    n = len(lhs_shape)
    if n < 2:
      raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
    dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
  (lhs_contract, rhs_contract), _ = dimension_numbers
  out_dtype = dtypes.canonicalize_dtype(
      dtypes.bfloat16 if preferred_element_type is None else preferred_element_type)
  scaled = []
  for operand, shape, scale, contract, which in (
      (lhs, lhs_shape, lhs_scale, lhs_contract, "lhs"),
      (rhs, rhs_shape, rhs_scale, rhs_contract, "rhs")):
    value = lax.convert_element_type(operand, _F32)
    if scale is not None:
      value = lax.mul(value, _expanded_scale(shape, scale, tuple(contract), "scaled_dot", which))
    scaled.append(value)
  out = lax.dot_general(scaled[0], scaled[1], dimension_numbers,
                        precision=lax.Precision.HIGHEST, preferred_element_type=_F32)
  return lax.convert_element_type(out, out_dtype)
