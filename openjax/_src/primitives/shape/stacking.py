"""``stack_p`` / ``unstack_p``: join arrays along a new axis and split an
array into its slices along one (``lax.stack`` / ``lax.unstack``). Each is the
other's transpose; both are linear."""
from __future__ import annotations

import numpy as np

from openjax._src.core import Primitive, ShapedArray
from openjax._src.core.sharding_rules_ops import stack_rule, unstack_rule
from openjax._src.primitives.base.ad_util import Zero
from openjax._src.primitives.base.batch_util import axis_size, bdim_at_front
from openjax._src.primitives.base.structural import (
    canonicalize_axis, deflinear, instantiate_zeros, moveaxis)

# ---------------------------------------------------------------------- stack
stack_p = Primitive("stack", kind="linear")


def stack(operands, axis: int = 0):
  """Join equally shaped arrays along a new axis ``axis`` of the result."""
  operands = list(operands)
  if not operands:
    raise ValueError("lax.stack: needs at least one array to stack, got an empty sequence")
  axis = canonicalize_axis(axis, np.ndim(operands[0]) + 1)
  return stack_p.bind1(*operands, axis=axis)


@stack_p.def_impl
def _stack_impl(*xs, axis):
  # np.stack's own steps (each operand with a new axis, one concatenate)
  # without its Python checks (~3 us a call).
  index = (slice(None),) * axis + (None, ...)
  return [np.concatenate([x[index] for x in xs], axis=axis)]


@stack_p.def_abstract_eval
def _stack_abstract_eval(*avals, axis):
  first = avals[0]
  for i, a in enumerate(avals):
    if a.shape != first.shape or a.dtype != first.dtype:
      raise TypeError(
          "lax.stack: all arrays must have the same shape and dtype, got "
          f"{first.str_short()} (operand 0) and {a.str_short()} (operand {i})")
  if not 0 <= axis <= first.ndim:
    raise ValueError(f"lax.stack: axis {axis} is out of bounds for a result of rank "
                     f"{first.ndim + 1}")
  shape = first.shape[:axis] + (len(avals),) + first.shape[axis:]
  return [ShapedArray(shape, first.dtype, all(a.weak_type for a in avals))]


stack_p.def_sharding_rule(stack_rule)


def _stack_transpose(ct, *xs, axis):
  return list(unstack(ct, axis))


deflinear(stack_p, _stack_transpose)


@stack_p.def_batch
def _stack_batch(vals, dims, *, axis):
  size = axis_size(vals, dims)
  return [stack_p.bind1(*(bdim_at_front(v, d, size) for v, d in zip(vals, dims)),
                        axis=axis + 1)], [0]


@stack_p.def_lower
def _stack_lower(ctx, *xs, axis):
  out = ctx.avals_out[0]
  piece = ctx.tensor_type(out.shape[:axis] + (1,) + out.shape[axis + 1:], out.dtype)
  pieces = [ctx.op("stablehlo.reshape", [x], piece) for x in xs]
  if len(pieces) == 1:
    return [ctx.op("stablehlo.reshape", pieces, out)]
  return [ctx.op("stablehlo.concatenate", pieces, out, attrs={"dimension": axis})]


# -------------------------------------------------------------------- unstack
unstack_p = Primitive("unstack", multiple_results=True, kind="linear")


def unstack(x, axis: int = 0) -> tuple:
  """The slices of ``x`` along ``axis``, as a tuple of arrays of rank ``ndim - 1``."""
  axis = canonicalize_axis(axis, np.ndim(x))
  return tuple(unstack_p.bind(x, axis=axis))


@unstack_p.def_impl
def _unstack_impl(x, *, axis):
  # Views of the operand (immutable once it is an Array's value), as
  # ``list(x)`` gives: a copy per slice cost 15 ms for 1000 slices of 1000.
  return list(np.moveaxis(x, axis, 0) if axis else x)


@unstack_p.def_abstract_eval
def _unstack_abstract_eval(x, *, axis):
  if not 0 <= axis < x.ndim:
    raise ValueError(f"lax.unstack: axis {axis} is out of bounds for {x.str_short()}")
  shape = x.shape[:axis] + x.shape[axis + 1:]
  return [ShapedArray(shape, x.dtype, x.weak_type) for _ in range(x.shape[axis])]


unstack_p.def_sharding_rule(unstack_rule)


def _unstack_transpose(cts, x, *, axis):
  # Called with the list of cotangents (deflinear would unwrap a single one).
  if all(type(ct) is Zero for ct in cts):
    return [Zero(x.aval)]
  return [stack_p.bind1(*(instantiate_zeros(ct) for ct in cts), axis=axis)]


deflinear(unstack_p, _unstack_transpose)
unstack_p.def_transpose(_unstack_transpose)


@unstack_p.def_batch
def _unstack_batch(vals, dims, *, axis):
  x, = vals
  d, = dims
  x = moveaxis(x, d, 0)
  outs = unstack_p.bind(x, axis=axis + 1)
  return outs, [0] * len(outs)


@unstack_p.def_lower
def _unstack_lower(ctx, x, *, axis):
  shape = ctx.avals_in[0].shape
  outs = []
  for i, aval in enumerate(ctx.avals_out):
    start = [0] * len(shape)
    limit = list(shape)
    start[axis], limit[axis] = i, i + 1
    piece = ctx.op("stablehlo.slice", [x],
                   ctx.tensor_type(shape[:axis] + (1,) + shape[axis + 1:], aval.dtype),
                   attrs={"start_indices": tuple(start), "limit_indices": tuple(limit),
                          "strides": (1,) * len(shape)})
    outs.append(ctx.op("stablehlo.reshape", [piece], aval))
  return outs


__all__ = ["stack", "stack_p", "unstack", "unstack_p"]
