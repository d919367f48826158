"""StableHLO helpers shared by the lowering rules of the reductions, the
cumulative reductions and the sorts: typed comparisons, ``stablehlo.reduce``
with a combiner region, and the inclusive scan the cumulative ops lower to.

Narrow ml_dtypes floats (bfloat16, float8) are computed in float32, as the
NumPy impls do; every other dtype is computed in its own type.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.lowering.builder import Value, dense_int_attr, enum_attr
from openjax._src.lowering.mlir_types import split_tensor_type
from openjax._src.primitives.base.convert import lower_convert

_COMPARE_TYPE = {"f": "FLOAT", "c": "FLOAT", "i": "SIGNED", "u": "UNSIGNED", "b": "UNSIGNED"}


def acc_dtype(dtype) -> np.dtype:
  """The dtype a reduction computes in: float32 for ml_dtypes floats."""
  dt = np.dtype(dtype)
  return np.dtype(np.float32) if dt in dtypes.custom_float_dtypes else dt


def shape_of(x: Value) -> tuple[int, ...]:
  return split_tensor_type(x.type)[0]


def compare(ctx, x: Value, y: Value, direction: str, dtype) -> Value:
  """``stablehlo.compare`` of two same-typed tensors of ``dtype``."""
  ctype = _COMPARE_TYPE[dtypes.kind(np.dtype(dtype))]
  return ctx.op("stablehlo.compare", [x, y], ctx.tensor_type(shape_of(x), np.bool_),
                attrs={"comparison_direction": enum_attr("comparison_direction", direction),
                       "compare_type": enum_attr("comparison_type", ctype)})


def binary(ctx, name: str, x: Value, y: Value) -> Value:
  """An elementwise ``stablehlo.<name>`` whose result has ``x``'s type."""
  return ctx.op(f"stablehlo.{name}", [x, y], x.type)


def select(ctx, pred: Value, x: Value, y: Value) -> Value:
  return ctx.op("stablehlo.select", [pred, x, y], x.type)


def is_nan(ctx, x: Value, dtype) -> Value:
  return compare(ctx, x, x, "NE", dtype)


def combiner(kind: str, dtype) -> Callable:
  """``fn(ctx, a, b) -> Value``: the monoid ``kind`` (``add``, ``mul``,
  ``max``, ``min``, ``and``, ``or``, ``xor``, ``logaddexp``) on tensors of
  ``dtype`` (any shape), with NumPy's semantics: max/min propagate NaN,
  bool max/min are or/and, complex max/min compare (real, imag)."""
  dt = np.dtype(dtype)
  k = dtypes.kind(dt)
  if kind == "add":
    return (lambda ctx, a, b: binary(ctx, "or", a, b)) if k == "b" else \
        (lambda ctx, a, b: binary(ctx, "add", a, b))
  if kind == "mul":
    return (lambda ctx, a, b: binary(ctx, "and", a, b)) if k == "b" else \
        (lambda ctx, a, b: binary(ctx, "multiply", a, b))
  if kind in ("and", "or", "xor"):
    return lambda ctx, a, b: binary(ctx, kind, a, b)
  if kind in ("max", "min"):
    if k == "b":
      return lambda ctx, a, b: binary(ctx, "or" if kind == "max" else "and", a, b)
    if k == "c":
      return lambda ctx, a, b: _complex_choose(ctx, a, b, dt, kind == "max")
    return lambda ctx, a, b: binary(ctx, "maximum" if kind == "max" else "minimum", a, b)
  if kind == "logaddexp":
    return lambda ctx, a, b: logaddexp(ctx, a, b, dt)
  raise ValueError(f"unknown combiner {kind!r}")


def _complex_choose(ctx, a, b, dt, largest: bool):
  # NumPy orders complex numbers by (real, imag); a NaN part propagates.
  fdt = np.finfo(dt).dtype
  shape = shape_of(a)
  ft = ctx.tensor_type(shape, fdt)
  ar, ai, br, bi = (ctx.op(f"stablehlo.{p}", [v], ft) for v in (a, b) for p in ("real", "imag"))
  d = "GT" if largest else "LT"
  pick_a = ctx.op("stablehlo.or", [
      compare(ctx, ar, br, d, fdt),
      ctx.op("stablehlo.and", [compare(ctx, ar, br, "EQ", fdt), compare(ctx, ai, bi, d, fdt)],
             ctx.tensor_type(shape, np.bool_))], ctx.tensor_type(shape, np.bool_))
  nan_a = ctx.op("stablehlo.or", [is_nan(ctx, ar, fdt), is_nan(ctx, ai, fdt)],
                 ctx.tensor_type(shape, np.bool_))
  nan_b = ctx.op("stablehlo.or", [is_nan(ctx, br, fdt), is_nan(ctx, bi, fdt)],
                 ctx.tensor_type(shape, np.bool_))
  pick_a = ctx.op("stablehlo.and", [ctx.op("stablehlo.or", [pick_a, nan_a], pick_a.type),
                                    ctx.op("stablehlo.not", [nan_b], nan_b.type)], pick_a.type)
  pick_a = ctx.op("stablehlo.or", [pick_a, nan_a], pick_a.type)
  return select(ctx, pick_a, a, b)


def order(ctx, a: Value, b: Value, dtype, largest: bool) -> tuple[Value, Value]:
  """``(a beats b, a ties b)`` in NumPy's argmax (``largest``) or argmin
  order: NaN beats every number and ties other NaNs; complex numbers
  compare by (real, imag), NaN when either part is."""
  dt = np.dtype(dtype)
  k = dtypes.kind(dt)
  if k in "iub":
    return compare(ctx, a, b, "GT" if largest else "LT", dt), compare(ctx, a, b, "EQ", dt)
  bool_t = ctx.tensor_type(shape_of(a), np.bool_)

  def both(name, x, y):
    return ctx.op(f"stablehlo.{name}", [x, y], bool_t)

  if k == "c":
    fdt = np.finfo(dt).dtype
    ft = ctx.tensor_type(shape_of(a), fdt)
    (ar, ai), (br, bi) = ([ctx.op(f"stablehlo.{p}", [v], ft) for p in ("real", "imag")]
                          for v in (a, b))
    d = "GT" if largest else "LT"
    better = both("or", compare(ctx, ar, br, d, fdt),
                  both("and", compare(ctx, ar, br, "EQ", fdt), compare(ctx, ai, bi, d, fdt)))
    eq = both("and", compare(ctx, ar, br, "EQ", fdt), compare(ctx, ai, bi, "EQ", fdt))
    na = both("or", is_nan(ctx, ar, fdt), is_nan(ctx, ai, fdt))
    nb = both("or", is_nan(ctx, br, fdt), is_nan(ctx, bi, fdt))
  else:
    better = compare(ctx, a, b, "GT" if largest else "LT", dt)
    eq = compare(ctx, a, b, "EQ", dt)
    na, nb = is_nan(ctx, a, dt), is_nan(ctx, b, dt)
  not_nb = ctx.op("stablehlo.not", [nb], bool_t)
  not_na = ctx.op("stablehlo.not", [na], bool_t)
  better = both("or", both("and", both("and", better, not_na), not_nb), both("and", na, not_nb))
  eq = both("or", both("and", eq, not_na), both("and", na, nb))
  return better, eq


def logaddexp(ctx, x: Value, y: Value, dtype) -> Value:
  """``max + log1p(exp(-|x - y|))``; NaN or same-signed infinities: ``x + y``
  (JAX's logaddexp, as its cumlogsumexp lowers)."""
  hi = binary(ctx, "maximum", x, y)
  delta = binary(ctx, "subtract", x, y)
  neg = ctx.op("stablehlo.negate", [ctx.op("stablehlo.abs", [delta], delta.type)], delta.type)
  big = binary(ctx, "add", hi, ctx.op("stablehlo.log_plus_one",
                                      [ctx.op("stablehlo.exponential", [neg], neg.type)],
                                      neg.type))
  return select(ctx, is_nan(ctx, delta, dtype), binary(ctx, "add", x, y), big)


def scalar_region(ctx, dtype, fn: Callable):
  """A two-argument scalar region returning ``fn(ctx, a, b)``."""
  t = ctx.tensor_type((), dtype)
  with ctx.region([t, t]) as body:
    a, b = body.args
    ctx.ret([fn(ctx, a, b)])
  return body


# A long reduction to few outputs runs on one core in IREE (one workgroup per
# output): split the axis into rows reduced in parallel, then reduce the rows
# (the sum of 10M products: 70 ms -> ~35 ms on 2 cores). IREE vectorizes a
# reduction over the innermost axis well only while there are at most ~16
# rows in all (beyond, the sum of 10M floats takes 2.8 ms instead of 1.0, and
# 8 sums of 1.25M 4.5-19 ms instead of 2.5); a reduction over an outer axis
# wants 16 rows.
_SPLIT_MIN_LENGTH = 1 << 16
_SPLIT_MAX_OUTPUTS = 64
_SPLIT_ROWS = 16


def _split_long_axis(ctx, x, shape, a, init, acc):
  n = shape[a]
  outputs = int(np.prod(shape[:a] + shape[a + 1:]))
  if n < _SPLIT_MIN_LENGTH or outputs > _SPLIT_MAX_OUTPUTS:
    return x, shape, [a]
  inner = int(np.prod(shape[a + 1:]))
  rows = _SPLIT_ROWS if inner > 1 else max(2, _SPLIT_ROWS // outputs)
  m = -(-n // rows)
  if m * rows != n:   # pad with the identity to a whole number of rows
    padded = shape[:a] + [m * rows] + shape[a + 1:]
    low, high = [0] * len(shape), [0] * len(shape)
    high[a] = m * rows - n
    x = ctx.op("stablehlo.pad", [x, ctx.constant(np.asarray(init).astype(acc))],
               ctx.tensor_type(tuple(padded), acc),
               attrs={"edge_padding_low": tuple(low), "edge_padding_high": tuple(high),
                      "interior_padding": (0,) * len(shape)})
  split = shape[:a] + [rows, m] + shape[a + 1:]
  x = ctx.op("stablehlo.reshape", [x], ctx.tensor_type(tuple(split), acc))
  return x, split, [a, a + 1]


def reduce(ctx, x: Value, axes: Sequence[int], kind: str, init, in_dtype, out_aval) -> Value:
  """``x`` (of ``in_dtype``) reduced over ``axes`` by the monoid ``kind``
  with identity ``init``, computed in ``acc_dtype(in_dtype)``; the result has
  ``out_aval``'s type."""
  acc = acc_dtype(in_dtype)
  if not axes:
    return lower_convert(ctx, x, in_dtype, out_aval.dtype)
  x = lower_convert(ctx, x, in_dtype, acc)
  axes = sorted(int(a) for a in axes)
  shape = list(shape_of(x))
  # IREE fuses a product with a broadcast operand and a reduction over
  # several axes into a contraction it then fails to vectorize
  # ('vector.contract op invalid accumulator/result vector shape'), so
  # reductions run over one axis: contiguous axes merged by a reshape,
  # others one after another (highest first).
  if len(axes) > 1 and axes == list(range(axes[0], axes[-1] + 1)):
    merged = shape[:axes[0]] + [int(np.prod([shape[a] for a in axes]))] + shape[axes[-1] + 1:]
    x = ctx.op("stablehlo.reshape", [x], ctx.tensor_type(tuple(merged), acc))
    shape, axes = merged, [axes[0]]
  if len(axes) == 1:
    x, shape, axes = _split_long_axis(ctx, x, shape, axes[0], init, acc)
  for a in reversed(axes):
    body = scalar_region(ctx, acc, combiner(kind, acc))
    shape = shape[:a] + shape[a + 1:]
    x = ctx.op("stablehlo.reduce", [x, ctx.constant(np.asarray(init).astype(acc))],
               ctx.tensor_type(tuple(shape), acc), attrs={"dimensions": (a,)}, regions=[body])
  return lower_convert(ctx, x, acc, out_aval.dtype)


__all__ = ["acc_dtype", "shape_of", "compare", "binary", "select", "is_nan", "combiner", "order",
           "logaddexp", "scalar_region", "reduce"]


def reduce_window_scan(ctx, x: Value, axis: int, reverse: bool, kind: str, init, dtype) -> Value:
  """The inclusive scan as one ``stablehlo.reduce_window`` whose window spans
  the whole axis (JAX's CPU lowering; O(n * window))."""
  shape = shape_of(x)
  n = shape[axis]
  rank = len(shape)
  window = [1] * rank
  window[axis] = n
  pad = np.zeros((rank, 2), np.int64)
  pad[axis, 0 if reverse else 1] = 0
  pad[axis, 1 if reverse else 0] = n - 1
  body = scalar_region(ctx, dtype, combiner(kind, dtype))
  return ctx.op("stablehlo.reduce_window", [x, ctx.constant(np.asarray(init).astype(dtype))],
                x.type, attrs={"window_dimensions": tuple(window),
                               "window_strides": (1,) * rank,
                               "padding": dense_int_attr(pad.reshape(-1), shape=(rank, 2))},
                regions=[body])


def cumulative(ctx, x: Value, axis: int, reverse: bool, kind: str, init, dtype) -> Value:
  """Inclusive scan of ``x`` (of ``dtype``) along ``axis`` by the monoid
  ``kind`` (from the end when ``reverse``), computed in ``acc_dtype``."""
  acc = acc_dtype(dtype)
  shape = shape_of(x)
  if 0 in shape or shape[axis] == 1:
    return x
  if dtypes.kind(acc) == "u":
    # IREE cannot compile reduce_window on unsigned types: scan the bits as
    # the signed type of the same width (wrapping add/mul are the same
    # bits); for max/min flip the top bit first, so signed order is the
    # unsigned order.
    sdt = np.dtype(f"i{acc.itemsize}")
    st = ctx.tensor_type(shape, sdt)
    y = ctx.op("stablehlo.bitcast_convert", [x], st)
    init = np.asarray(init).astype(acc).view(sdt)
    if kind in ("max", "min"):
      top = ctx.full(np.iinfo(sdt).min, shape, sdt)
      y = binary(ctx, "xor", y, top)
      init = init ^ np.iinfo(sdt).min
    y = reduce_window_scan(ctx, y, axis, reverse, kind, init, sdt)
    if kind in ("max", "min"):
      y = binary(ctx, "xor", y, top)
    return ctx.op("stablehlo.bitcast_convert", [y], x.type)
  y = lower_convert(ctx, x, dtype, acc)
  y = reduce_window_scan(ctx, y, axis, reverse, kind, init, acc)
  return lower_convert(ctx, y, acc, dtype)
