"""``eq_to_p``, ``le_to_p``, ``lt_to_p``: comparisons in IEEE 754's total order
(XLA's TOTALORDER), where floats compare by their bits:
``-NaN < -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN`` and NaNs with equal bits
are equal. Integers and booleans compare as usual. They sit with sorting,
whose keys use the same bit trick."""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.primitives.base.reduce_lowering import binary, compare, shape_of
from openjax._src.primitives.elementwise.elementwise_lowering import operands_to_out
from openjax._src.primitives.elementwise.elementwise_rules import ORDERED, bool_dtype, naryop

__all__ = ["eq_to_p", "le_to_p", "lt_to_p"]


def _total_key(x: np.ndarray) -> np.ndarray:
  """Signed integers ordered like ``x`` in the total order."""
  x = np.asarray(x)
  if dtypes.kind(x.dtype) != "f":
    return x
  idt = np.dtype(f"i{x.dtype.itemsize}")
  i = x.view(idt)
  # Negative floats: flip the magnitude bits so larger magnitudes order lower.
  return i ^ ((i >> (8 * idt.itemsize - 1)) & np.iinfo(idt).max)


def _total_key_lower(ctx, x, dtype):
  dt = np.dtype(dtype)
  if dtypes.kind(dt) != "f":
    return x, dt
  idt = np.dtype(f"i{dt.itemsize}")
  shape = shape_of(x)
  i = ctx.op("stablehlo.bitcast_convert", [x], ctx.tensor_type(shape, idt))
  sign = binary(ctx, "shift_right_arithmetic", i, ctx.full(8 * idt.itemsize - 1, shape, idt))
  mask = binary(ctx, "and", sign, ctx.full(np.iinfo(idt).max, shape, idt))
  return binary(ctx, "xor", i, mask), idt


def _total_order_rule(direction: str):
  def rule(ctx, x, y):
    dt = ctx.avals_in[0].dtype
    x, y = operands_to_out(ctx, [x, y])
    (kx, kdt), (ky, _) = _total_key_lower(ctx, x, dt), _total_key_lower(ctx, y, dt)
    return [compare(ctx, kx, ky, direction, kdt)]
  return rule


eq_to_p = naryop("eq_to", lambda x, y: np.equal(_total_key(x), _total_key(y)), ORDERED,
                 result_dtype=bool_dtype, kind="nondifferentiable",
                 lower=_total_order_rule("EQ"))
le_to_p = naryop("le_to", lambda x, y: np.less_equal(_total_key(x), _total_key(y)), ORDERED,
                 result_dtype=bool_dtype, kind="nondifferentiable",
                 lower=_total_order_rule("LE"))
lt_to_p = naryop("lt_to", lambda x, y: np.less(_total_key(x), _total_key(y)), ORDERED,
                 result_dtype=bool_dtype, kind="nondifferentiable",
                 lower=_total_order_rule("LT"))
