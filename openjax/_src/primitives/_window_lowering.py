"""StableHLO for windowed operations: ``stablehlo.reduce_window`` with a
combiner region, and the explicit pad the windowed ops use where a
``padding`` attribute would be negative (IREE accepts only non-negative
window padding)."""
from __future__ import annotations

import numpy as np

from openjax._src.lowering.builder import dense_int_attr
from openjax._src.lowering.mlir_types import split_tensor_type


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


__all__ = ["lower_reduce_window", "explicit_pad"]
