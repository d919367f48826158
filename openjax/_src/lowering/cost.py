"""Cost analysis of a jaxpr (``Compiled.cost_analysis()``): flops,
transcendentals and bytes accessed, summed over equations.

A primitive's own ``cost`` rule (``@foo_p.def_cost``, called as
``cost(*avals_in, avals_out=..., **params) -> dict``) wins; otherwise the
table below (by primitive name) or the default applies: an elementwise op
costs one flop per output element, a transcendental one counts in
'transcendentals' instead, data movement costs no flops. 'bytes accessed'
is the bytes of every equation's operands and results (before fusion).
Higher-order primitives add up the costs of their sub-jaxprs (loops count
their body once: the trip count is not known statically).
"""
from __future__ import annotations

import math
from typing import Callable

from openjax._src import dtypes
from openjax._src.core import ClosedJaxpr, Jaxpr, jaxprs_in_params

#: Evaluated by libm-style routines rather than a few instructions.
TRANSCENDENTAL = frozenset({
    "exp", "exp2", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "logistic",
    "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "sqrt",
    "rsqrt", "cbrt", "pow", "erf", "erfc", "erf_inv", "lgamma", "digamma", "igamma",
    "igammac", "igamma_grad_a", "random_gamma_grad", "bessel_i0e", "bessel_i1e",
    "polygamma", "zeta", "regularized_incomplete_beta",
})

#: Move or reinterpret data without arithmetic.
DATA_MOVEMENT = frozenset({
    "broadcast_in_dim", "reshape", "squeeze", "expand_dims", "transpose", "rev", "pad",
    "concatenate", "split", "tile", "slice", "dynamic_slice", "dynamic_update_slice",
    "gather", "iota", "copy", "copy_p", "bitcast_convert_type", "real", "imag",
    "select_and_gather_add", "device_put", "optimization_barrier", "stop_gradient",
})


def _size(aval) -> int:
  return int(math.prod(aval.shape))


def _nbytes(aval) -> int:
  if aval.dtype == dtypes.float0:
    return 0
  return _size(aval) * aval.dtype.itemsize


def _dot_general_cost(lhs, rhs, *, avals_out, dimension_numbers, **_):
  (lc, _rc), _ = dimension_numbers
  contract = math.prod(lhs.shape[d] for d in lc)
  return {"flops": 2.0 * _size(avals_out[0]) * contract}


def _reduce_cost(x, *, avals_out, **_):
  return {"flops": float(max(_size(x) - _size(avals_out[0]), 0))}


def _sort_cost(*operands, avals_out, **params):
  x = operands[0]
  n = x.shape[params.get("dimension", -1)] if x.shape else 1
  return {"flops": float(_size(x) * max(1.0, math.log2(max(n, 2))))}


#: Cost rules by primitive name, for primitives without their own ``cost``.
COST_RULES: dict[str, Callable] = {
    "dot_general": _dot_general_cost,
    "reduce_sum": _reduce_cost, "reduce_prod": _reduce_cost, "reduce_max": _reduce_cost,
    "reduce_min": _reduce_cost, "reduce_and": _reduce_cost, "reduce_or": _reduce_cost,
    "reduce_xor": _reduce_cost, "argmax": _reduce_cost, "argmin": _reduce_cost,
    "sort": _sort_cost,
}


def _default_cost(prim, avals_in, avals_out) -> dict:
  out = sum(_size(a) for a in avals_out)
  if prim.name in DATA_MOVEMENT:
    return {}
  if prim.name in TRANSCENDENTAL:
    return {"transcendentals": float(out)}
  return {"flops": float(out)}


def cost_analysis(jaxpr: ClosedJaxpr | Jaxpr) -> dict:
  """``{'flops', 'transcendentals', 'bytes accessed'}`` of a jaxpr (floats)."""
  if isinstance(jaxpr, ClosedJaxpr):
    jaxpr = jaxpr.jaxpr
  total = {"flops": 0.0, "transcendentals": 0.0, "bytes accessed": 0.0}
  _accumulate(jaxpr, total)
  return total


def _accumulate(jaxpr: Jaxpr, total: dict) -> None:
  for eqn in jaxpr.eqns:
    subs = jaxprs_in_params(eqn.params)
    if subs:
      for sub in subs:
        _accumulate(sub, total)
      continue
    prim = eqn.primitive
    avals_in = [a.aval for a in eqn.invars]
    avals_out = [v.aval for v in eqn.outvars]
    rule = prim.cost or COST_RULES.get(prim.name)
    if rule is not None:
      c = rule(*avals_in, avals_out=avals_out, **eqn.params)
    else:
      c = _default_cost(prim, avals_in, avals_out)
    total["flops"] += float(c.get("flops", 0.0))
    total["transcendentals"] += float(c.get("transcendentals", 0.0))
    if "bytes accessed" in c:
      total["bytes accessed"] += float(c["bytes accessed"])
    else:
      total["bytes accessed"] += float(sum(_nbytes(a) for a in avals_in)
                                       + sum(_nbytes(a) for a in avals_out))


__all__ = ["cost_analysis", "COST_RULES", "TRANSCENDENTAL", "DATA_MOVEMENT"]
