"""StableHLO for XLA:CPU's summation orders (``_xla_orders`` says which).

IREE reassociates a ``stablehlo.reduce`` whose region is a plain add (the
compiler runs with ``--iree-llvmcpu-reassociate-fp-reductions``), so the
ordered sums and fused multiply-add chains reduce two operands at once with
both results computed from the second accumulator: the first is then no
reduction IREE recognizes, which keeps it to one in-order loop over the
reduced axis (measured: bit-identical to the sequential sum and to the chain
of fused multiply-adds, LLVM contracting the product and the add).
"""
from __future__ import annotations

import numpy as np

from openjax._src.primitives import _xla_orders as _xo


def _in_order(ctx, a, b, dim: int, shape, dtype, step):
  """``stablehlo.reduce`` of ``(a, b)`` over ``dim`` from +0: each step
  ``acc = step(acc, x_a, x_b)``, kept in order (see the module docstring)."""
  out_type = ctx.tensor_type(tuple(d for i, d in enumerate(shape) if i != dim), dtype)
  t = ctx.tensor_type((), dtype)
  with ctx.region([t, t, t, t]) as body:
    _, acc, xa, xb = body.args
    # Both results are the step from the second accumulator: the first is
    # then no reduction IREE recognizes, so none of it is reassociated.
    new = step(acc, xa, xb)
    ctx.ret([new, new])
  zero = ctx.constant(np.zeros((), dtype))
  both = ctx.op("stablehlo.reduce", [a, b, zero, zero], [out_type, out_type],
                attrs={"dimensions": (dim,)}, regions=[body])
  # Both results stay live: IREE drops an unused one and then either
  # reassociates the rest or, with a transpose fused in, fails to compile.
  return ctx.op("stablehlo.optimization_barrier", list(both), [out_type, out_type])[0]


def _sum_in_order(ctx, x, shape, dim, dtype):
  def step(acc, value, _same):
    return ctx.op("stablehlo.add", [acc, value], acc.type)
  return _in_order(ctx, x, x, dim, shape, dtype, step)


def lower_ordered_sum(ctx, x, shape, dtype, axes, axis: int):
  """``x`` (of ``shape``) summed over ``axes`` in XLA's order, ``axis`` the
  long one (``_xo.compiled_sum_axis``). The axis stays in place (IREE fails
  on some transposes fused into these reductions)."""
  # XLA sums a materialized operand (no product contracted into the adds).
  x = ctx.op("stablehlo.optimization_barrier", [x], x.type)
  # Other reduced axes have length 1: drop them.
  shape = tuple(d for i, d in enumerate(shape) if i not in axes or i == axis)
  axis -= sum(1 for a in axes if a < axis)
  x = ctx.op("stablehlo.reshape", [x], ctx.tensor_type(shape, dtype))
  before, n, after = shape[:axis], shape[axis], shape[axis + 1:]
  if n == 1:
    return ctx.op("stablehlo.reshape", [x], ctx.tensor_type(before + after, dtype))
  zero = ctx.constant(np.zeros((), dtype))
  rank = len(shape)
  for windows, low, high in _xo.window_levels(n):
    padded = before + (windows * _xo.WINDOW,) + after
    pad_low, pad_high = [0] * rank, [0] * rank
    pad_low[axis], pad_high[axis] = low, high
    x = ctx.op("stablehlo.pad", [x, zero], ctx.tensor_type(padded, dtype),
               attrs={"edge_padding_low": tuple(pad_low), "edge_padding_high": tuple(pad_high),
                      "interior_padding": (0,) * rank})
    split = before + (windows, _xo.WINDOW) + after
    x = ctx.op("stablehlo.reshape", [x], ctx.tensor_type(split, dtype))
    x = _sum_in_order(ctx, x, split, axis + 1, dtype)
    n = windows
  return _sum_in_order(ctx, x, before + (n,) + after, axis, dtype)


def lower_ordered_dot(ctx, lhs, rhs, lhs_shape, rhs_shape, chain, dtype):
  """The vector product ``_xo.dot_chain`` described, as chains of fused
  multiply-adds in order."""
  side, axis = chain
  # XLA's dot reads materialized operands (none of their producers fuses in).
  lhs, rhs = ctx.op("stablehlo.optimization_barrier", [lhs, rhs], [lhs.type, rhs.type])
  vector, matrix = (lhs, rhs) if side == 0 else (rhs, lhs)
  mshape = tuple(rhs_shape if side == 0 else lhs_shape)
  dim = 0 if axis == -1 else axis
  if axis != -1:
    vector = ctx.broadcast_in_dim(vector, mshape, (dim,))

  def step(acc, v, m):
    product = ctx.op("stablehlo.multiply", [v, m], v.type)
    return ctx.op("stablehlo.add", [acc, product], acc.type)
  return _in_order(ctx, vector, matrix, dim, mshape, dtype, step)


def lower_ordered_fma_sum(ctx, a, b, shape, dtype, axes):
  """``sum(a * b, axes)`` (operands of ``shape``) as one chain of fused
  multiply-adds per output, in order (``_xo.ordered_fma_sum``)."""
  axis = _xo.fma_sum_axis(shape, dtype, axes)
  kept = tuple(d for i, d in enumerate(shape) if i not in axes or i == axis)
  axis -= sum(1 for a_ in axes if a_ < axis)
  a, b = (ctx.op("stablehlo.reshape", [v], ctx.tensor_type(kept, dtype)) for v in (a, b))

  def step(acc, x, y):
    return ctx.op("stablehlo.add", [acc, ctx.op("stablehlo.multiply", [x, y], x.type)],
                  acc.type)
  return _in_order(ctx, a, b, axis, kept, dtype, step)
