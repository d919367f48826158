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
each new carry is written into the old one at the end of the body
(``bufferization.materialize_in_destination``; for scalars LLVM keeps the
carry in a register).

IREE compiles such a dispatch to scalar code (no vectorisation) and copies
its operands into stack buffers, so only loops whose values are small
qualify: every value the body computes fits one vector register (past ~32
float32 elements the per-trip lowering, whose unrolled steps fuse into
vectorised dispatches, is faster), and a scan's stacked inputs and outputs
fit well within the 32 KB a dispatch may allocate on the stack. Only
primitives whose lowering is plain tensor code that IREE compiles inside a
dispatch loop qualify; loops with host calls, collectives or effects keep
the per-trip lowering.
"""
from __future__ import annotations

import threading
from typing import Callable, Sequence

from openjax._src.core import ClosedJaxpr, ShapedArray, jaxpr_effects, jaxprs_in_params
from openjax._src.lowering import Value
from openjax._src.runtime.compiler import native_vector_bytes

#: Elementwise primitives: IREE compiles them inside a dispatch loop at any
#: shape (probed; see tests/test_loop_dispatch.py).
ELEMENTWISE = frozenset({
    # arithmetic, comparisons, bit operations
    "abs", "add", "add_any", "and", "ceil", "clamp", "clz", "div", "eq", "floor", "ge", "gt",
    "integer_pow", "is_finite", "le", "lt", "max", "min", "mul", "ne", "neg", "nextafter",
    "not", "or", "population_count", "pow", "rem", "round", "select_n", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "sign", "square", "sub", "xor",
    "convert_element_type", "bitcast_convert_type", "stop_gradient", "copy", "iota",
    # transcendental functions
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "cos", "cosh", "erf",
    "erfc", "erf_inv", "exp", "exp2", "expm1", "log", "log1p", "logistic", "rsqrt", "sin",
    "sinh", "sqrt", "tan", "tanh",
})
#: Primitives that move or combine elements. Inside a dispatch loop IREE
#: (3.13) compiles them only while every value has at most one axis, 64
#: bytes and as many elements as one vector of float32s holds (16 with
#: AVX-512, 8 with AVX2): past that it vectorises the value in a loop of
#: vector tiles, which breaks bufferization ("cannot avoid RaW conflict",
#: "operand does not dominate this use"). Probed with AVX-512: 16 float32s
#: compile, 32 float32s, 32 int16s, 64 int8s do not; with AVX2 (znver3):
#: 8 float32s, float64s, int16s or int8s compile, 16 of any do not.
#: ``pad``, ``rev`` and ``dynamic_update_slice`` fail even then ("op was not
#: bufferized"; a scan's own updates of its stacked outputs compile).
FLAT_ONLY = frozenset({
    "broadcast_in_dim", "reshape", "squeeze", "transpose", "concatenate", "slice",
    "dynamic_slice", "reduce_sum", "reduce_max", "reduce_min",
    "reduce_prod", "reduce_and", "reduce_or", "argmax", "argmin", "dot_general",
})
#: The most bytes and elements FLAT_ONLY ops take (see above).
VECTOR_BYTES = 64
VECTOR_ELEMENTS = native_vector_bytes() // 4
#: The largest value (bytes) the body of a one-dispatch scan may compute:
#: one vector register. A scan's trip count is static: past that, its
#: per-trip lowering (unrolled steps fused into vectorised dispatches) is
#: faster (1000 trips in one dispatch, measured: 32 float32s 0.4-0.9x, 128
#: 1.0-1.6x, 4096 3-7x the per-trip time).
VALUE_BYTES = 64
#: The same for a while loop, whose per-trip lowering cannot fuse its
#: guarded steps: measured, 1000 trips of ``tanh(x * 1.01 + 0.1)`` run
#: 0.05x (16 float32s), 0.23x (1024) and 0.55x (2048) the per-trip time.
WHILE_VALUE_BYTES = 4096
#: The most bytes of a one-dispatch loop's operands (a scan's stacked inputs
#: and outputs, ...): IREE copies them into the dispatch's stack, which holds
#: 32 KB ("exceeded stack allocation limit").
LOOP_BYTES = 16384


def _nbytes(aval) -> int:
  return aval.size * aval.dtype.itemsize


def _loop_values(jaxprs):
  for j in jaxprs:
    yield from (v.aval for v in (*j.constvars, *j.invars))
    for eqn in j.eqns:
      yield from (v.aval for v in (*eqn.invars, *eqn.outvars))
      yield from _loop_values(jaxprs_in_params(eqn.params))


def has_loop(jaxpr) -> bool:
  """Whether ``jaxpr`` (or a sub-jaxpr) has a ``while`` or ``scan``."""
  return any(e.primitive.name in ("while", "scan") or
             any(has_loop(j) for j in jaxprs_in_params(e.params)) for e in jaxpr.eqns)


def _allowed(eqn, flat: bool) -> bool:
  name = eqn.primitive.name
  if name in ELEMENTWISE:
    return True
  if name == "broadcast_in_dim" and eqn.invars[0].aval.ndim == 0:
    return True   # a scalar filled out: elementwise too
  if name in FLAT_ONLY:
    return flat
  subs = jaxprs_in_params(eqn.params)
  if name == "jit" and not eqn.params.get("inline"):
    # A called function is lowered once per module and may be called outside
    # the dispatch too: no loop inside it, whose lowering would differ.
    if has_loop(subs[0]):
      return False
  elif name == "while":
    if eqn.params["cond_jaxpr"].out_avals[0].ndim > 0 and not flat:
      return False   # its batched predicate is reduced
  elif name not in ("jit", "cond", "scan", "custom_jvp_call"):
    return False
  return all(_allowed(e, flat) for j in subs for e in j.eqns)


def fits_one_dispatch(jaxprs: Sequence[ClosedJaxpr], avals: Sequence[ShapedArray], *,
                      reduces_lanes: bool = False, static_trips: bool = True) -> bool:
  """Whether a loop over ``jaxprs`` (cond and body, or a scan's body) whose
  operands and results are ``avals`` should run as one dispatch (or, inside
  one already, keep its carries in place); ``reduces_lanes``: the lowering
  reduces a batched predicate; ``static_trips``: a scan (False: a while
  loop)."""
  value_bytes = VALUE_BYTES if static_trips else WHILE_VALUE_BYTES
  if any(jaxpr_effects(j) for j in jaxprs):
    return False
  if not all(isinstance(a, ShapedArray) for a in avals) or \
      sum(_nbytes(a) for a in avals) > LOOP_BYTES:
    return False
  inner = [j.jaxpr for j in jaxprs]
  values = list(_loop_values(inner))
  if not all(isinstance(a, ShapedArray) and _nbytes(a) <= value_bytes and a.dtype.kind != "c"
             for a in values):
    return False   # complex values lower through stablehlo.complex pairs
  flat = all(a.ndim <= 1 and a.size <= VECTOR_ELEMENTS and _nbytes(a) <= VECTOR_BYTES
             for a in values)
  if reduces_lanes and not flat:
    return False
  return all(_allowed(e, flat) for j in inner for e in j.eqns)


def _signless(ty: str) -> str:
  return ty.replace("xui", "xi").replace("<ui", "<i")


def carry_in_place(ctx, new: Sequence[Value], old: Sequence[Value]) -> list[Value]:
  """Each new carry written into its old one's buffer, so the loop yields
  the buffers it was given; a carry the body returns unchanged stays as it
  is. (``linalg.copy`` does not do: IREE fuses it into its producer, which
  then writes a fresh buffer again.)"""
  out = []
  for n, o in zip(new, old):
    if n.name == o.name:
      out.append(n)
      continue
    # Unsigned tensors pass as signless ones (see in_one_dispatch).
    o_type = o.type
    ty = _signless(o_type)
    if ty != o_type:
      n, o = (ctx.op("stablehlo.bitcast_convert", [v], ty) for v in (n, o))
    r = ctx.fresh_value(ty)
    ctx.emit(f"{r.name} = bufferization.materialize_in_destination {n.name} in {o.name} : "
             f"({ty}, {ty}) -> {ty}")
    out.append(r if ty == o_type else ctx.op("stablehlo.bitcast_convert", [r], o_type))
  return out


_state = threading.local()


def in_one_dispatch(ctx, operands: Sequence[Value], result_types: Sequence[str],
                    build: Callable[[list[Value]], list[Value]]) -> list[Value]:
  """Emit ``build(operands)`` (a loop over ``operands``; returns its results)
  inside a ``flow.dispatch.region``, which IREE compiles as one dispatch; a
  loop nested in such a loop is emitted as it is."""
  if getattr(_state, "inside", False):
    return build(list(operands))
  # A loop over constants alone would be hoisted into a module initializer,
  # where IREE (3.13) gets the sizes of a multi-result dispatch wrong
  # (OUT_OF_RANGE at the first call): the barrier keeps it in the program.
  operands = ctx.op("stablehlo.optimization_barrier", list(operands),
                    [o.type for o in operands])
  # IREE converts unsigned tensors to signless ones inside StableHLO ops but
  # not in a dispatch region's result types ("failed to legalize operation
  # 'flow.dispatch.region'"): unsigned results leave it bitcast.
  inner_types = [_signless(t) for t in result_types]
  with ctx.region([]) as region:
    _state.inside = True
    try:
      outs = build(operands)
    finally:
      _state.inside = False
    outs = [o if o.type == t else ctx.op("stablehlo.bitcast_convert", [o], t)
            for o, t in zip(outs, inner_types)]
    ctx.op("flow.return", outs, [])
  # The second region (the workgroup count) stays empty: IREE computes it.
  outs = ctx.op("flow.dispatch.region", [], inner_types, regions=[region, ctx.region([])],
                attrs={"operandSegmentSizes": "array<i32: 0, 0>"})
  return [o if o.type == t else ctx.op("stablehlo.bitcast_convert", [o], t)
          for o, t in zip(outs, result_types)]


__all__ = ["fits_one_dispatch", "carry_in_place", "in_one_dispatch", "has_loop"]
