"""Lowering a convolution with few output positions and a large window (the
kernel gradient of a convolution is one: its "window" is the forward output,
its outputs the kernel taps) as one matrix product per output position, a
1-d convolution as one matrix product per kernel tap, a 3-d one as a sum of
2-d ones, and a grouped one as one convolution per group.

IREE compiles such a ``stablehlo.convolution`` into loops it runs slowly
(the kernel gradient of a 3x3 conv over 32x64x64x32: 5.6 s), while the same
sums as matrix products over the long contraction take 0.18 s.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from openjax._src.primitives.dot_conv import conv_rules

#: Lower by output position when there are at most this many positions and
#: the window is larger than the number of positions.
MAX_POSITIONS = 64


def use_positions(lhs_shape, rhs_shape, out_shape, dimension_numbers, *, lhs_dilation,
                  feature_group_count, batch_group_count) -> bool:
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  positions = math.prod(out_shape[d] for d in out_spec[2:])
  window = math.prod(rhs_shape[d] for d in rhs_spec[2:])
  return (len(out_spec) > 2 and feature_group_count == 1 and batch_group_count == 1
          and all(d == 1 for d in lhs_dilation) and 0 < positions <= MAX_POSITIONS
          and window > positions)


def _kept_dim_first(ctx, x, shape, spec, comp):
  """``x`` laid out as ``spec`` orders its dims, behind a barrier, when its
  first spec dim (kept by the product) is neither its first nor last dim."""
  if spec[0] in (0, len(shape) - 1):
    return x, shape, spec
  shape = tuple(shape[d] for d in spec)
  x = ctx.op("stablehlo.transpose", [x], ctx.tensor_type(shape, comp),
             attrs={"permutation": tuple(spec)})
  x = ctx.op("stablehlo.optimization_barrier", [x], x.type)
  return x, shape, tuple(range(len(shape)))


def emit_by_positions(ctx, lhs, rhs, lhs_shape, rhs_shape, out_shape, comp, *,
                      window_strides, padding, rhs_dilation, dimension_numbers):
  """The convolution as, for every output position, a ``dot_general`` of the
  lhs window at that position with the kernel (contracting input features and
  window), stacked and laid out as ``out_spec`` says."""
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  rank = len(lhs_shape)
  nsp = rank - 2
  # Operands whose kept dim sits between contracted ones (the kernel gradient
  # of an NCHW conv) are moved to (kept, contracted...) once: IREE otherwise
  # transposes every position's window apart (64x32x32x32 by 3x3 kernel
  # gradient: nine 8 ms transposes).
  lhs, lhs_shape, lhs_spec = _kept_dim_first(ctx, lhs, lhs_shape, lhs_spec, comp)
  rhs, rhs_shape, rhs_spec = _kept_dim_first(ctx, rhs, rhs_shape, rhs_spec, comp)
  # Pad (or crop, for negative padding) the spatial dims once.
  low, high = [0] * rank, [0] * rank
  for i, (lo, hi) in enumerate(padding):
    low[lhs_spec[2 + i]], high[lhs_spec[2 + i]] = int(lo), int(hi)
  padded = list(lhs_shape)
  for d in range(rank):
    padded[d] += low[d] + high[d]
  if any(low) or any(high):
    zero = ctx.constant(np.zeros((), comp))
    lhs = ctx.op("stablehlo.pad", [lhs, zero], ctx.tensor_type(tuple(padded), comp),
                 attrs={"edge_padding_low": tuple(low), "edge_padding_high": tuple(high),
                        "interior_padding": (0,) * rank})
  window = [rhs_shape[d] for d in rhs_spec[2:]]
  out_sp = [out_shape[d] for d in out_spec[2:]]
  n, o = out_shape[out_spec[0]], out_shape[out_spec[1]]
  contract_l = [lhs_spec[1]] + list(lhs_spec[2:])
  contract_r = [rhs_spec[1]] + list(rhs_spec[2:])
  dnums = (f"#stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
           f"lhs_contracting_dimensions = {contract_l}, "
           f"rhs_contracting_dimensions = {contract_r}>")
  pieces = []
  for pos in itertools.product(*(range(s) for s in out_sp)):
    start, limit, stride = [0] * rank, list(padded), [1] * rank
    slice_shape = list(padded)
    for i in range(nsp):
      d = lhs_spec[2 + i]
      start[d] = pos[i] * int(window_strides[i])
      stride[d] = int(rhs_dilation[i])
      limit[d] = start[d] + (window[i] - 1) * stride[d] + 1
      slice_shape[d] = window[i]
    win = ctx.op("stablehlo.slice", [lhs], ctx.tensor_type(tuple(slice_shape), comp),
                 attrs={"start_indices": tuple(start), "limit_indices": tuple(limit),
                        "strides": tuple(stride)})
    prod = ctx.op("stablehlo.dot_general", [win, rhs], ctx.tensor_type((n, o), comp),
                  attrs={"dot_dimension_numbers": dnums})
    pieces.append(ctx.op("stablehlo.reshape", [prod], ctx.tensor_type((1, n, o), comp)))
  stacked = pieces[0] if len(pieces) == 1 else ctx.op(
      "stablehlo.concatenate", pieces, ctx.tensor_type((len(pieces), n, o), comp),
      attrs={"dimension": 0})
  grid = ctx.op("stablehlo.reshape", [stacked], ctx.tensor_type((*out_sp, n, o), comp))
  # grid dims: spatial 0..nsp-1, then batch, then feature.
  perm = [0] * (nsp + 2)
  perm[out_spec[0]], perm[out_spec[1]] = nsp, nsp + 1
  for i in range(nsp):
    perm[out_spec[2 + i]] = i
  return ctx.op("stablehlo.transpose", [grid], ctx.tensor_type(tuple(out_shape), comp),
                attrs={"permutation": tuple(perm)})


#: Lower by kernel taps (1-d) or depth slices (3-d) up to this many of them
#: (a kernel gradient's "kernel" is the forward output: its taps are many).
MAX_SLICES = 64


def use_taps(lhs_shape, rhs_shape, dimension_numbers, *, padding, lhs_dilation,
             feature_group_count, batch_group_count) -> bool:
  """Whether to lower a 1-d convolution as one matrix product per kernel tap:
  IREE's 1-d convolution kernel runs at ~4 GFLOP/s (64x256x32 by 5x32x32:
  20 ms, 3x slower than the products' sum, 7 ms)."""
  rhs_spec = dimension_numbers[1]
  return (len(lhs_shape) == 3 and rhs_shape[rhs_spec[2]] <= MAX_SLICES
          and feature_group_count == 1 and batch_group_count == 1
          and all(d == 1 for d in lhs_dilation) and all(lo >= 0 and hi >= 0 for lo, hi in padding))


def emit_by_taps(ctx, lhs, rhs, lhs_shape, rhs_shape, out_shape, comp, *, window_strides,
                 padding, rhs_dilation, dimension_numbers):
  """A 1-d convolution whose kernel ``rhs`` is laid out (tap, in, out): the
  input moved to (batch, position, feature) and padded once, then for every
  tap a strided slice of it times that tap's (in, out) matrix, summed, and
  the (batch, position, feature) sum moved to ``out_spec``'s layout."""
  lhs_spec, _, out_spec = dimension_numbers
  order = (lhs_spec[0], lhs_spec[2], lhs_spec[1])
  n, w, c = (lhs_shape[d] for d in order)
  taps, o = rhs_shape[0], rhs_shape[2]
  if order != (0, 1, 2):
    lhs = ctx.op("stablehlo.transpose", [lhs], ctx.tensor_type((n, w, c), comp),
                 attrs={"permutation": order})
  lo, hi = (int(p) for p in padding[0])
  if lo or hi:
    zero = ctx.constant(np.zeros((), comp))
    w += lo + hi
    lhs = ctx.op("stablehlo.pad", [lhs, zero], ctx.tensor_type((n, w, c), comp),
                 attrs={"edge_padding_low": (0, lo, 0), "edge_padding_high": (0, hi, 0),
                        "interior_padding": (0, 0, 0)})
  wout = out_shape[out_spec[2]]
  stride, dilation = int(window_strides[0]), int(rhs_dilation[0])
  dnums = ("#stablehlo.dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [], "
           "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>")
  acc = None
  for k in range(taps):
    start = k * dilation
    part = ctx.op("stablehlo.slice", [lhs], ctx.tensor_type((n, wout, c), comp),
                  attrs={"start_indices": (0, start, 0),
                         "limit_indices": (n, start + (wout - 1) * stride + 1, c),
                         "strides": (1, stride, 1)})
    tap = ctx.op("stablehlo.slice", [rhs], ctx.tensor_type((1, c, o), comp),
                 attrs={"start_indices": (k, 0, 0), "limit_indices": (k + 1, c, o),
                        "strides": (1, 1, 1)})
    tap = ctx.op("stablehlo.reshape", [tap], ctx.tensor_type((c, o), comp))
    prod = ctx.op("stablehlo.dot_general", [part, tap], ctx.tensor_type((n, wout, o), comp),
                  attrs={"dot_dimension_numbers": dnums})
    acc = prod if acc is None else ctx.op("stablehlo.add", [acc, prod], prod.type)
  # acc dims: batch, position, feature.
  perm = [0] * 3
  perm[out_spec[0]], perm[out_spec[2]], perm[out_spec[1]] = 0, 1, 2
  if tuple(perm) == (0, 1, 2):
    return acc
  return ctx.op("stablehlo.transpose", [acc], ctx.tensor_type(tuple(out_shape), comp),
                attrs={"permutation": tuple(perm)})


#: Split a grouped convolution into at most this many convolutions.
MAX_SPLIT_GROUPS = 64


def use_group_split(rhs_shape, dimension_numbers, feature_group_count) -> bool:
  """Whether to lower a grouped convolution as one convolution per group:
  IREE compiles grouped convolutions (but depthwise ones, one input feature
  per group) into a generic loop nest 13x slower than the groups apart
  (NHWC 8x32x32x32 by 3x3x8x32, 4 groups: 19.8 -> 1.5 ms)."""
  rhs_spec = dimension_numbers[1]
  return 1 < feature_group_count <= MAX_SPLIT_GROUPS and rhs_shape[rhs_spec[1]] > 1


def emit_by_groups(ctx, lhs, rhs, lhs_shape, rhs_shape, out_shape, comp, attrs, *,
                   dimension_numbers, groups):
  """The grouped convolution as ``groups`` ungrouped ones, each of a slice of
  the input features with a slice of the kernel's output features,
  concatenated along the output features."""
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  cin, cout = rhs_shape[rhs_spec[1]], rhs_shape[rhs_spec[0]] // groups
  attrs = dict(attrs, feature_group_count=1)

  def part(x, shape, dim, size, g):
    start, limit = [0] * len(shape), list(shape)
    start[dim], limit[dim] = g * size, (g + 1) * size
    sliced = list(shape)
    sliced[dim] = size
    return ctx.op("stablehlo.slice", [x], ctx.tensor_type(tuple(sliced), comp),
                  attrs={"start_indices": tuple(start), "limit_indices": tuple(limit),
                         "strides": (1,) * len(shape)})
  piece_shape = list(out_shape)
  piece_shape[out_spec[1]] = cout
  pieces = [conv_rules.emit_convolution(
      ctx, part(lhs, lhs_shape, lhs_spec[1], cin, g), part(rhs, rhs_shape, rhs_spec[0], cout, g),
      tuple(piece_shape), comp, attrs) for g in range(groups)]
  return ctx.op("stablehlo.concatenate", pieces, ctx.tensor_type(tuple(out_shape), comp),
                attrs={"dimension": out_spec[1]})


def use_depth_slices(lhs_shape, rhs_shape, dimension_numbers, *, padding, lhs_dilation,
                     feature_group_count, batch_group_count) -> bool:
  """Whether to lower a 3-d convolution as a sum of 2-d ones, one per kernel
  tap along the first spatial axis (folded into the batch): IREE's 3-d
  convolutions are generic loop nests 20x slower (NDHWC 8x16x16x16x8 by
  3x3x3x8x16: 84 -> 3.7 ms)."""
  rhs_spec = dimension_numbers[1]
  return (len(lhs_shape) == 5 and rhs_shape[rhs_spec[2]] <= MAX_SLICES
          and feature_group_count == 1 and batch_group_count == 1
          and all(d == 1 for d in lhs_dilation) and padding[0][0] >= 0 and padding[0][1] >= 0)


def emit_by_depth_slices(ctx, lhs, rhs, lhs_shape, rhs_shape, out_shape, comp, attrs, *,
                         dimension_numbers):
  """A 3-d convolution whose kernel ``rhs`` is laid out (d, h, w, in, out):
  the input moved channels last and padded along d once, then per kernel tap
  along d a strided slice of it, its d axis folded into the batch, convolved
  (2-d) with that tap's (h, w, in, out) kernel; the sum moved to
  ``out_spec``'s layout."""
  lhs_spec, _, out_spec = dimension_numbers
  order = (lhs_spec[0], *lhs_spec[2:], lhs_spec[1])
  n, d, h, w, c = (lhs_shape[i] for i in order)
  if order != tuple(range(5)):
    lhs = ctx.op("stablehlo.transpose", [lhs], ctx.tensor_type((n, d, h, w, c), comp),
                 attrs={"permutation": order})
  (lo, hi), plane_padding = (int(p) for p in attrs["padding_pairs"][0]), attrs["padding_pairs"][1:]
  if lo or hi:
    zero = ctx.constant(np.zeros((), comp))
    d += lo + hi
    lhs = ctx.op("stablehlo.pad", [lhs, zero], ctx.tensor_type((n, d, h, w, c), comp),
                 attrs={"edge_padding_low": (0, lo, 0, 0, 0), "edge_padding_high": (0, hi, 0, 0, 0),
                        "interior_padding": (0,) * 5})
  kd, kh, kw, _, o = rhs_shape
  dout, hout, wout = (out_shape[i] for i in out_spec[2:])
  stride, dilation = attrs["window_strides"][0], attrs["rhs_dilation"][0]
  plane = {
      "batch_group_count": 1, "feature_group_count": 1,
      "dimension_numbers": conv_rules.conv_dimension_numbers_attr(
          ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))),
      "lhs_dilation": (1, 1), "padding": conv_rules.padding_attr(plane_padding),
      "precision_config": attrs["precision_config"],
      "rhs_dilation": tuple(attrs["rhs_dilation"][1:]),
      "window_strides": tuple(attrs["window_strides"][1:])}
  acc = None
  for k in range(kd):
    start = k * dilation
    part = ctx.op("stablehlo.slice", [lhs], ctx.tensor_type((n, dout, h, w, c), comp),
                  attrs={"start_indices": (0, start, 0, 0, 0),
                         "limit_indices": (n, start + (dout - 1) * stride + 1, h, w, c),
                         "strides": (1, stride, 1, 1, 1)})
    part = ctx.op("stablehlo.reshape", [part], ctx.tensor_type((n * dout, h, w, c), comp))
    tap = ctx.op("stablehlo.slice", [rhs], ctx.tensor_type((1, kh, kw, c, o), comp),
                 attrs={"start_indices": (k, 0, 0, 0, 0), "limit_indices": (k + 1, kh, kw, c, o),
                        "strides": (1,) * 5})
    tap = ctx.op("stablehlo.reshape", [tap], ctx.tensor_type((kh, kw, c, o), comp))
    out = conv_rules.emit_convolution(ctx, part, tap, (n * dout, hout, wout, o), comp, plane)
    out = ctx.op("stablehlo.reshape", [out], ctx.tensor_type((n, dout, hout, wout, o), comp))
    acc = out if acc is None else ctx.op("stablehlo.add", [acc, out], out.type)
  role = {out_spec[0]: 0, out_spec[1]: 4}
  role.update({dim: 1 + i for i, dim in enumerate(out_spec[2:])})
  perm = tuple(role[i] for i in range(5))
  if perm == tuple(range(5)):
    return acc
  return ctx.op("stablehlo.transpose", [acc], ctx.tensor_type(tuple(out_shape), comp),
                attrs={"permutation": perm})


__all__ = ["use_positions", "emit_by_positions", "use_taps", "emit_by_taps", "use_group_split",
           "emit_by_groups", "use_depth_slices", "emit_by_depth_slices", "MAX_POSITIONS",
           "MAX_SLICES", "MAX_SPLIT_GROUPS"]
