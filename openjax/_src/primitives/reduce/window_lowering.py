"""StableHLO for windowed operations: ``stablehlo.reduce_window`` with a
combiner region; the explicit pad the windowed ops use where a ``padding``
attribute would be negative (IREE accepts only non-negative window padding);
and the selection behind select_and_gather_add / select_and_scatter_add.

The selection keeps, in every window, the first largest (smallest) element,
NaN first: the impls' order, whatever order IREE reduces in. Small windows
are unrolled into one strided slice per window position and a running
compare-and-select (elementwise code IREE fuses and vectorises; a variadic
reduce_window runs ~50x slower there); large ones use a variadic
reduce_window over (value, flat position, payload) and a scatter.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.lowering.builder import dense_int_attr
from openjax._src.lowering.mlir_types import split_tensor_type
from openjax._src.primitives.base.reduce_lowering import (binary, compare, is_nan, order, select,
                                                          shape_of)
from openjax._src.primitives.reduce.window_util import (max_identity, min_identity, window_offsets,
                                                        window_shape)

#: Windows with at most this many positions are unrolled.
UNROLL_WINDOW_SIZE = 32


def lower_reduce_window(ctx, operands, inits, body, out_types, window_dimensions,
                        window_strides, padding, base_dilation, window_dilation):
  """``stablehlo.reduce_window`` over ``operands`` with the combiner region
  ``body``. Negative padding (a cut) is applied first as a pad-and-slice of
  the operands, which also takes the base dilation then."""
  if any(lo < 0 or hi < 0 for lo, hi in padding):
    operands = [explicit_pad(ctx, x, i, padding, base_dilation)
                for x, i in zip(operands, inits)]
    padding = ((0, 0),) * len(padding)
    base_dilation = (1,) * len(padding)
  rank = len(window_dimensions)
  attrs = {"window_dimensions": tuple(window_dimensions),
           "window_strides": tuple(window_strides)}
  if any(d != 1 for d in base_dilation):
    attrs["base_dilations"] = tuple(base_dilation)
  if any(d != 1 for d in window_dilation):
    attrs["window_dilations"] = tuple(window_dilation)
  if any(p != (0, 0) for p in padding):
    attrs["padding"] = dense_int_attr(np.asarray(padding, np.int64).reshape(-1), shape=(rank, 2))
  return ctx.op("stablehlo.reduce_window", [*operands, *inits], list(out_types), attrs=attrs,
                regions=[body])


def explicit_pad(ctx, x, init, padding, base_dilation):
  """``x`` with ``base_dilation - 1`` holes between elements and ``padding``
  at the edges, filled with the scalar ``init``: positive edges and interior
  in one ``stablehlo.pad``, negative edges (cuts) as a slice of its result,
  so IREE never sees a negative pad."""
  shape, elt = split_tensor_type(x.type)
  config = [(lo, hi, d - 1) for (lo, hi), d in zip(padding, base_dilation)]
  grown = [(max(lo, 0), max(hi, 0), i) for lo, hi, i in config]
  full = [d + lo + hi + (d - 1) * i if d else lo + hi for d, (lo, hi, i) in zip(shape, grown)]
  tensor = lambda dims: f"tensor<{''.join(f'{n}x' for n in dims)}{elt}>"   # noqa: E731
  out = ctx.op("stablehlo.pad", [x, init], tensor(full),
               attrs={"edge_padding_low": tuple(g[0] for g in grown),
                      "edge_padding_high": tuple(g[1] for g in grown),
                      "interior_padding": tuple(g[2] for g in grown)})
  starts = tuple(min(max(-lo, 0), n) for n, (lo, _, _) in zip(full, config))
  limits = tuple(max(n - max(-hi, 0), a) for n, (_, hi, _), a in zip(full, config, starts))
  return ctx.op("stablehlo.slice", [out], tensor([b - a for a, b in zip(starts, limits)]),
                attrs={"start_indices": starts, "limit_indices": limits,
                       "strides": (1,) * len(full)})


def _retyped(ty: str, shape) -> str:
  """The tensor type of ``shape`` with ``ty``'s element type."""
  _, elt = split_tensor_type(ty)
  return f"tensor<{''.join(f'{d}x' for d in shape)}{elt}>"


def _identity(dtype, largest: bool) -> np.ndarray:
  return (max_identity if largest else min_identity)(dtype)


def _beats(ctx, v, best, dtype, largest: bool):
  """Where ``v`` replaces the running choice ``best``: strictly larger
  (smaller), or NaN over a number."""
  better = compare(ctx, v, best, "GT" if largest else "LT", dtype)
  if dtypes.kind(np.dtype(dtype)) in "fc":
    nan_over_number = binary(ctx, "and", is_nan(ctx, v, dtype),
                             ctx.op("stablehlo.not", [is_nan(ctx, best, dtype)],
                                    better.type))
    better = binary(ctx, "or", better, nan_over_number)
  return better


def _position_slices(ctx, xp, out_shape, window_dimensions, window_strides, window_dilation):
  """Per window position (row-major), the strided slice of the padded,
  dilated ``xp`` holding that position of every window."""
  out = []
  ty = _retyped(xp.type, out_shape)
  for k in window_offsets(window_dimensions):
    starts = tuple(j * r for j, r in zip(k, window_dilation))
    limits = tuple(a + (n - 1) * s + 1 for a, n, s in zip(starts, out_shape, window_strides))
    out.append(ctx.op("stablehlo.slice", [xp], ty,
                      attrs={"start_indices": starts, "limit_indices": limits,
                             "strides": tuple(window_strides)}))
  return out


def _running_select(ctx, xp, payloads, dtype, largest, out_shape, window_dimensions,
                    window_strides, window_dilation):
  """Unrolled selection over the windows of ``xp`` (already padded and
  dilated): per window, the payload values (one array per window position
  each) at the chosen position."""
  values = _position_slices(ctx, xp, out_shape, window_dimensions, window_strides,
                            window_dilation)
  best, chosen = values[0], [p[0] for p in payloads]
  for k in range(1, len(values)):
    better = _beats(ctx, values[k], best, dtype, largest)
    best = select(ctx, better, values[k], best)
    chosen = [select(ctx, better, p[k], c) for p, c in zip(payloads, chosen)]
  return chosen


def _reduce_window_select(ctx, x, dtype, largest: bool, extra, extra_inits, window_dimensions,
                          window_strides, padding, base_dilation, window_dilation):
  """One variadic ``stablehlo.reduce_window`` over (value, flat position,
  *extra) keeping the selected element of every window (ties: the lowest
  position). Returns the reduced (value, position, *extra)."""
  shape = shape_of(x)
  n = int(np.prod(shape, dtype=np.int64))
  idt = np.dtype(np.int32 if n < 2 ** 31 - 1 else np.int64)
  flat = ctx.op("stablehlo.iota", [], ctx.tensor_type((n,), idt), attrs={"iota_dimension": 0})
  places = ctx.op("stablehlo.reshape", [flat], ctx.tensor_type(shape, idt))
  scalar = [ctx.tensor_type((), dtype), ctx.tensor_type((), idt),
            *(_retyped(e.type, ()) for e in extra)]
  with ctx.region(scalar + scalar) as body:
    a, b = body.args[:len(scalar)], body.args[len(scalar):]
    better, eq = order(ctx, a[0], b[0], dtype, largest)
    first = binary(ctx, "and", eq, compare(ctx, a[1], b[1], "LT", idt))
    pick_a = binary(ctx, "or", better, first)
    ctx.ret([select(ctx, pick_a, u, v) for u, v in zip(a, b)])
  inits = [ctx.constant(_identity(dtype, largest)),
           ctx.constant(np.asarray(np.iinfo(idt).max, idt)), *extra_inits]
  out_shape = window_shape(shape, window_dimensions, window_strides, padding, base_dilation,
                           window_dilation)
  out_types = [ctx.tensor_type(out_shape, dtype), ctx.tensor_type(out_shape, idt),
               *(_retyped(e.type, out_shape) for e in extra)]
  return lower_reduce_window(ctx, [x, places, *extra], inits, body, out_types,
                             window_dimensions, window_strides, padding, base_dilation,
                             window_dilation)


def select_in_windows(ctx, x, dtype, largest: bool, t, t_dtype, window_dimensions,
                      window_strides, padding, base_dilation, window_dilation):
  """select_and_gather_add: the value of ``t`` (of ``t_dtype``) at the
  selected element of every window of ``x`` (of ``dtype``); padding and
  dilation holes hold the identity, with a zero ``t``."""
  size = int(np.prod(window_dimensions, dtype=np.int64))
  shape = shape_of(x)
  out_shape = window_shape(shape, window_dimensions, window_strides, padding, base_dilation,
                           window_dilation)
  zero = ctx.constant(np.zeros((), t_dtype))
  if size > UNROLL_WINDOW_SIZE or 0 in out_shape or not shape:
    return _reduce_window_select(ctx, x, dtype, largest, [t], [zero], window_dimensions,
                                 window_strides, padding, base_dilation, window_dilation)[2]
  xp = explicit_pad(ctx, x, ctx.constant(_identity(dtype, largest)), padding, base_dilation)
  tp = explicit_pad(ctx, t, zero, padding, base_dilation)
  ts = _position_slices(ctx, tp, out_shape, window_dimensions, window_strides, window_dilation)
  return _running_select(ctx, xp, [ts], dtype, largest, out_shape, window_dimensions,
                         window_strides, window_dilation)[0]


def _spread_to_chosen(ctx, chosen, src, zero, add, shape, window_dimensions, window_strides):
  # Window o's position k = q * stride + r (per axis, 0 <= r < stride) is the
  # operand place (o + q) * stride + r. So for each block shift q, an array
  # over (o, r) blocks -- the source value where the window chose k -- is
  # reshaped to the operand grid and shifted by q * stride with an edge pad:
  # broadcasts, compares and selects IREE fuses (pads with interior holes,
  # one per window position, run ~10x slower there).
  src_shape, _ = split_tensor_type(src.type)
  nd = len(shape)
  i32 = np.dtype(np.int32)
  blocks = tuple(d for n, st in zip(src_shape, window_strides) for d in (n, st))
  outer = tuple(range(0, 2 * nd, 2))
  chosen_b = ctx.broadcast_in_dim(chosen, blocks, outer)
  src_b = ctx.broadcast_in_dim(src, blocks, outer)
  zeros_b = ctx.broadcast_in_dim(zero, blocks, ())
  rems = [ctx.op("stablehlo.iota", [], ctx.tensor_type(blocks, i32),
                 attrs={"iota_dimension": 2 * ax + 1}) for ax in range(nd)]
  row_major = np.cumprod((1,) + tuple(window_dimensions[::-1]))[:-1][::-1]
  grid = tuple(n * st for n, st in zip(src_shape, window_strides))
  total = None
  for q in window_offsets([-(-w // st) for w, st in zip(window_dimensions,
                                                           window_strides)]):
    flat, valid = None, None
    for ax in range(nd):
      k_ax = binary(ctx, "add", rems[ax], ctx.full(q[ax] * window_strides[ax], blocks, i32))
      inside = compare(ctx, k_ax, ctx.full(window_dimensions[ax], blocks, i32), "LT", i32)
      term = binary(ctx, "multiply", k_ax, ctx.full(int(row_major[ax]), blocks, i32))
      flat = term if flat is None else binary(ctx, "add", flat, term)
      valid = inside if valid is None else binary(ctx, "and", valid, inside)
    hit = binary(ctx, "and", valid, compare(ctx, chosen_b, flat, "EQ", i32))
    part = ctx.op("stablehlo.reshape", [select(ctx, hit, src_b, zeros_b)],
                  _retyped(src.type, grid))
    pads = tuple((qq * st, n - qq * st - g) for qq, st, n, g in
                 zip(q, window_strides, shape, grid))
    part = explicit_pad(ctx, part, zero, pads, (1,) * nd)
    total = part if total is None else binary(ctx, add, total, part)
  return total


def scatter_to_selected(ctx, x, dtype, largest: bool, src, src_dtype, window_dimensions,
                        window_strides):
  """select_and_scatter_add on an already padded ``x`` (of ``dtype``): every
  window adds its ``src`` value (of ``src_dtype``) at its selected element."""
  shape = shape_of(x)
  src_shape = shape_of(src)
  size = int(np.prod(window_dimensions, dtype=np.int64))
  zero = ctx.constant(np.zeros((), src_dtype))
  add = "or" if np.dtype(src_dtype) == np.bool_ else "add"
  if 0 in src_shape:
    return ctx.broadcast_in_dim(zero, shape, ())
  ones = (1,) * len(shape)
  if size <= UNROLL_WINDOW_SIZE and shape:
    i32 = np.dtype(np.int32)
    ks = [ctx.full(k, src_shape, i32) for k in range(size)]
    chosen, = _running_select(ctx, x, [ks], dtype, largest, src_shape, window_dimensions,
                              window_strides, ones)
    return _spread_to_chosen(ctx, chosen, src, zero, add, shape, window_dimensions,
                             window_strides)
  # Large windows: the selected flat positions, then one scatter-add.
  _, places = _reduce_window_select(ctx, x, dtype, largest, [], [], window_dimensions,
                                    window_strides, ((0, 0),) * len(shape), ones, ones)
  n = int(np.prod(shape, dtype=np.int64))
  m = int(np.prod(src_shape, dtype=np.int64))
  _, idt = split_tensor_type(places.type)
  places = ctx.op("stablehlo.reshape", [places], f"tensor<{m}x1x{idt}>")
  updates = ctx.op("stablehlo.reshape", [src], _retyped(src.type, (m,)))
  st = _retyped(src.type, ())
  with ctx.region([st, st]) as body:
    a, b = body.args
    ctx.ret([binary(ctx, add, a, b)])
  res = ctx.op("stablehlo.scatter", [ctx.broadcast_in_dim(zero, (n,), ()), places, updates],
               _retyped(src.type, (n,)),
               attrs={"scatter_dimension_numbers":
                      "#stablehlo.scatter<inserted_window_dims = [0], "
                      "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>",
                      "indices_are_sorted": False, "unique_indices": False},
               regions=[body])
  return ctx.op("stablehlo.reshape", [res], _retyped(src.type, shape))


__all__ = ["lower_reduce_window", "explicit_pad", "select_in_windows", "scatter_to_selected",
           "UNROLL_WINDOW_SIZE"]
