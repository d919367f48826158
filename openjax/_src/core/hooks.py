"""Jaxpr-level transformations, registered here by the interpreters layer.

Rules of higher-order primitives (jit's closed call, control flow) must
transform their inner jaxprs, but primitives sit below the interpreters. The
interpreters install their jaxpr transforms on this object when imported, so
imports still flow one way (like the Array hooks of the runtime).
"""
from __future__ import annotations

from typing import Callable


class _JaxprTransforms:
  # jvp_jaxpr(closed, nonzeros, instantiate) -> (closed_jvp, out_nonzeros)
  jvp_jaxpr: Callable | None = None
  # transpose_jaxpr(closed, linear_mask, ct_zero_mask) -> closed_transposed
  transpose_jaxpr: Callable | None = None
  # partial_eval_jaxpr(jaxpr, in_unknowns) -> (known, unknown, out_unknowns, n_res)
  partial_eval_jaxpr: Callable | None = None
  # batch_jaxpr(closed, in_dims, out_dims_hint, axis_size, axis_name) -> (closed, out_dims)
  batch_jaxpr: Callable | None = None
  # trace_to_jaxpr(fun, in_avals) -> (jaxpr, consts)
  trace_to_jaxpr: Callable | None = None


jaxpr_transforms = _JaxprTransforms()
