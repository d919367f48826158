"""Loops over small values compiled as one IREE dispatch.

IREE runs a ``stablehlo.while`` in its VM on the host: every trip allocates
its results, records a command buffer with one dispatch per fused group of
body ops and waits for the predicate (~3 us a trip here, against ~5 ns for
XLA's compiled loop). When every value the loop touches is small, a
dispatch per op buys no parallelism, so the lowering wraps the whole loop in
one ``flow.dispatch.region``: IREE outlines it into one executable and the
loop runs as machine code on one worker (10k steps of ``x * 0.999 + 0.5``:
one FMA a step, ~4 us in all).

Inside a dispatch every loop-carried tensor must be updated in its own
buffer (IREE's bufferization rejects a loop that yields a new buffer), so
each new carry is copied into the old one at the end of the body
(``linalg.copy``; for scalars LLVM keeps the carry in a register).

Only primitives whose lowering is plain tensor code that IREE's CPU and GPU
code generators handle inside a loop qualify; loops with host calls,
collectives, effects, large values or large matrix products keep the
per-trip lowering.
"""
from __future__ import annotations

from typing import Callable, Sequence

from openjax._src.core import ClosedJaxpr, Jaxpr, ShapedArray, eqn_effects, jaxpr_effects
from openjax._src.lowering import Value

#: Primitives that lower to tensor code IREE compiles inside a dispatch loop
#: (probed one by one, see tests/test_loop_dispatch.py).
DISPATCH_SAFE = frozenset({
    # elementwise arithmetic, comparisons, bit operations
    "abs", "add", "add_any", "and", "ceil", "clamp", "clz", "div", "eq", "floor", "ge", "gt",
    "integer_pow", "is_finite", "le", "lt", "max", "min", "mul", "ne", "neg", "nextafter",
    "not", "or", "population_count", "pow", "rem", "round", "select_n", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "sign", "square", "sub", "xor",
    "convert_element_type", "bitcast_convert_type", "stop_gradient", "copy",
    # transcendental functions
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "cos", "cosh", "erf",
    "erfc", "erf_inv", "exp", "exp2", "expm1", "log", "log1p", "logistic", "rsqrt", "sin",
    "sinh", "sqrt", "tan", "tanh",
    # structure
    "broadcast_in_dim", "iota", "reshape", "squeeze", "transpose", "concatenate", "pad", "rev",
    "slice", "dynamic_slice", "dynamic_update_slice",
    # reductions and small products
    "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or",
    "argmax", "argmin", "dot_general",
})

#: The largest value (elements) a one-dispatch loop may hold: it runs on one
#: worker, so it pays only while a trip's work stays below IREE's per-trip
#: host cost.
MAX_ELEMENTS = 4096
#: The most multiply-adds one matrix product in the loop may do per trip.
MAX_DOT_FLOPS = 1 << 16


def _avals_small(avals) -> bool:
  return all(isinstance(a, ShapedArray) and a.size <= MAX_ELEMENTS for a in avals)


def _dot_small(eqn) -> bool:
  lhs, rhs = (v.aval for v in eqn.invars)
  out, = (v.aval for v in eqn.outvars)
  (contract, _), _ = eqn.params["dimension_numbers"]
  k = 1
  for d in contract:
    k *= lhs.shape[d]
  return out.size * k <= MAX_DOT_FLOPS


def _jaxpr_fits(jaxpr: Jaxpr) -> bool:
  if not _avals_small(v.aval for v in (*jaxpr.constvars, *jaxpr.invars)):
    return False
  for eqn in jaxpr.eqns:
    if eqn.primitive.name not in DISPATCH_SAFE:
      return False
    if eqn_effects(eqn) or not _avals_small(v.aval for v in (*eqn.invars, *eqn.outvars)):
      return False
    if any(v.aval.dtype.kind == "c" for v in eqn.outvars):
      return False   # complex values lower through stablehlo.complex pairs
    if eqn.primitive.name == "dot_general" and not _dot_small(eqn):
      return False
  return True


def fits_one_dispatch(jaxprs: Sequence[ClosedJaxpr], avals: Sequence[ShapedArray]) -> bool:
  """Whether a loop over ``jaxprs`` (cond and body, or a scan's body) whose
  operands and results are ``avals`` should run as one dispatch."""
  if not _avals_small(avals):
    return False
  return all(not jaxpr_effects(j) and _jaxpr_fits(j.jaxpr) for j in jaxprs)


def carry_in_place(ctx, new: Sequence[Value], old: Sequence[Value]) -> list[Value]:
  """Each new carry copied into its old one's buffer (``linalg.copy``), so
  the loop yields the buffers it was given; a carry the body returns
  unchanged stays as it is."""
  out = []
  for n, o in zip(new, old):
    if n is o or n.name == o.name:
      out.append(n)
      continue
    r = ctx.fresh_value(o.type)
    ctx.emit(f"{r.name} = linalg.copy ins({n.name} : {n.type}) outs({o.name} : {o.type}) "
             f"-> {o.type}")
    out.append(r)
  return out


def in_one_dispatch(ctx, result_types: Sequence[str], build: Callable[[], list[Value]]
                    ) -> list[Value]:
  """Emit ``build()`` (a loop; returns its results) inside a
  ``flow.dispatch.region``, which IREE compiles as one dispatch."""
  with ctx.region([]) as region:
    outs = build()
    ctx.op("flow.return", list(outs), [])
  # The second region (the workgroup count) stays empty: IREE computes it.
  return ctx.op("flow.dispatch.region", [], list(result_types), regions=[region, ctx.region([])],
                attrs={"operandSegmentSizes": "array<i32: 0, 0>"})


__all__ = ["fits_one_dispatch", "carry_in_place", "in_one_dispatch", "DISPATCH_SAFE"]
