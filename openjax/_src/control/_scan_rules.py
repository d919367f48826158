"""``scan_p``: the primitive of ``lax.scan`` with its evaluation, abstract
evaluation, batching and lowering rules (the autodiff rules are in
``_scan_autodiff.py``, the user-facing wrappers in ``scan.py``).

Operands are the loop constants, the initial carry and the scanned inputs
``xs``; parameters are JAX 0.10.2's::

  carry_out..., ys... = scan[jaxpr={...} length=L num_carry=C num_consts=K
                             reverse=False unroll=1] *consts *init *xs

``jaxpr`` maps (consts, carry, x) to (carry, y), where ``x`` is one slice of
``xs`` along its leading axis and ``ys`` stacks the ``y`` of every iteration
along a new leading axis of size ``length``. With ``reverse=True`` iteration
``i`` reads and writes index ``length - 1 - i``. ``unroll=k`` lowers ``k``
iterations per trip of the compiled loop (``0``: the whole loop unrolled).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.core import (ClosedJaxpr, Jaxpr, JaxprTypeError, Literal, Primitive, ShapedArray,
                               Tracer, Var, canonical_value, eval_jaxpr, eval_trace,
                               jaxprs_in_params, set_current_trace, typematch)
from openjax._src.core.sharding_rules import TYPED_BY_SUB_JAXPR
from openjax._src.interpreters.batching import batch_jaxpr
from openjax._src.interpreters.partial_eval import partial_eval_jaxpr
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.control.loop_dispatch import carry_in_place, fits_one_dispatch, in_one_dispatch
from openjax._src.control.nested_calls import loop_runner, scan_runner
from openjax._src.primitives.base.structural import broadcast_in_dim, moveaxis

scan_p = Primitive("scan", multiple_results=True)
# The vmapped axis's name must reach collectives inside the body even when no
# operand is batched (as for jit).
scan_p.batch_needs_axis = True


# ------------------------------------------------------------ list helpers
def split_list(xs: Sequence, sizes: Sequence[int]) -> list[list]:
  """``xs`` cut into consecutive pieces of ``sizes`` and the rest."""
  out, start = [], 0
  for n in sizes:
    out.append(list(xs[start:start + n]))
    start += n
  out.append(list(xs[start:]))
  return out


def merge_by_mask(mask: Sequence[bool], when_true: Sequence, when_false: Sequence) -> list:
  """Interleave two lists: position i takes the next of ``when_true`` where
  ``mask[i]``, else the next of ``when_false``."""
  t, f = iter(when_true), iter(when_false)
  return [next(t) if m else next(f) for m in mask]


def mapped_aval(aval: ShapedArray) -> ShapedArray:
  """The aval of one slice along the leading axis (varying over the same
  manual axes as the whole)."""
  return ShapedArray(aval.shape[1:], aval.dtype, aval.weak_type, vma=aval.vma)


def stacked_aval(length: int, aval: ShapedArray) -> ShapedArray:
  """The aval of ``length`` stacked values of ``aval``."""
  return ShapedArray((length,) + aval.shape, aval.dtype, aval.weak_type, vma=aval.vma)


# ------------------------------------------------------------ jaxpr helpers
def forwarded_inputs(jaxpr: Jaxpr) -> list[int | None]:
  """For each output, the index of the input it returns unchanged (or None)."""
  index = {v: i for i, v in enumerate(jaxpr.invars)}
  return [index.get(a) if isinstance(a, Var) else None for a in jaxpr.outvars]


def partial_eval_instantiate(jaxpr: Jaxpr, in_unknowns: Sequence[bool],
                             instantiate: Sequence[bool]):
  """``partial_eval_jaxpr`` where the outputs marked in
  ``instantiate`` are unknown even when computable from known inputs (they
  become residuals the unknown jaxpr returns). Returns (known, unknown,
  out_unknowns, num_residuals) like ``partial_eval_jaxpr``: ``known`` maps
  (constvars; known inputs) to (known outputs, residuals) and ``unknown``
  maps (residuals, unknown inputs) to the unknown outputs."""
  known, unknown, out_uk, n_res = partial_eval_jaxpr(jaxpr, list(in_unknowns))
  out_uk = list(out_uk)
  if not any(inst and not uk for inst, uk in zip(instantiate, out_uk)):
    return known, unknown, out_uk, n_res
  n_known_out = len(known.outvars) - n_res
  known_outs = known.outvars[:n_known_out]
  res, res_u = list(known.outvars[n_known_out:]), list(unknown.invars[:n_res])
  unknown_ins = unknown.invars[n_res:]
  k_it, u_it = iter(known_outs), iter(unknown.outvars)
  new_known_outs, new_unknown_outs = [], []
  for i, uk in enumerate(out_uk):
    if uk:
      new_unknown_outs.append(next(u_it))
      continue
    a = next(k_it)
    if not instantiate[i]:
      new_known_outs.append(a)
      continue
    out_uk[i] = True
    if isinstance(a, Literal):
      new_unknown_outs.append(a)
      continue
    if a not in res:
      res.append(a)
      res_u.append(Var(a.aval))
    new_unknown_outs.append(res_u[res.index(a)])
  known = known.replace(outvars=new_known_outs + res)
  unknown = unknown.replace(invars=res_u + list(unknown_ins), outvars=new_unknown_outs)
  return known, unknown, out_uk, len(res)


def checked_closed(jaxpr: Jaxpr, consts: Sequence) -> ClosedJaxpr:
  """A closed jaxpr whose constants are concrete (never tracers of an
  enclosing transformation: those must be operands of the scan)."""
  for c in consts:
    if isinstance(c, Tracer):
      raise AssertionError("scan: a traced value was captured as a constant of a loop body")
  return ClosedJaxpr(jaxpr, list(consts))


# --------------------------------------------------------------- abstract eval
@scan_p.def_abstract_eval
def _scan_abstract_eval(*avals, reverse, length, jaxpr, num_consts, num_carry, unroll):
  in_avals = jaxpr.in_avals
  if len(avals) != len(in_avals):
    raise JaxprTypeError(f"scan: called with {len(avals)} operands but its jaxpr takes "
                         f"{len(in_avals)} (constants, carry and scanned inputs)")
  consts, init, xs = split_list(avals, [num_consts, num_carry])
  for what, given, expected in (("constant", consts, in_avals[:num_consts]),
                                ("initial carry", init,
                                 in_avals[num_consts:num_consts + num_carry])):
    for i, (a, e) in enumerate(zip(given, expected)):
      if not typematch(a, e):
        raise JaxprTypeError(f"scan: {what} {i} is {a.str_short()} but the jaxpr takes "
                             f"{e.str_short()}")
  for i, (a, e) in enumerate(zip(xs, in_avals[num_consts + num_carry:])):
    if a.shape[:1] != (length,) or not typematch(mapped_aval(a), e):
      raise JaxprTypeError(f"scan: scanned input {i} is {a.str_short()} but the jaxpr takes "
                           f"slices {e.str_short()} of a length-{length} axis")
  out_avals = jaxpr.out_avals
  carry_out = out_avals[:num_carry]
  for i, (a, o) in enumerate(zip(jaxpr.in_avals[num_consts:num_consts + num_carry], carry_out)):
    if not typematch(a, o):
      raise JaxprTypeError(f"scan: carry {i} enters the body as {a.str_short()} but leaves "
                           f"it as {o.str_short()}")
  return list(carry_out) + [stacked_aval(length, a) for a in out_avals[num_carry:]]


scan_p.mark_not_applicable("sharding_rule", TYPED_BY_SUB_JAXPR)


# ------------------------------------------------------------------- impl
@scan_p.def_impl
def _scan_impl(*args, reverse, length, jaxpr, num_consts, num_carry, unroll):
  consts, carry, xs = split_list(args, [num_consts, num_carry])
  run_loop = scan_runner(jaxpr, num_consts, num_carry)
  if run_loop is not None:
    with set_current_trace(eval_trace):
      return run_loop(consts, carry, xs, length, reverse)
  run = loop_runner(jaxpr)   # the debug flags: checked steps
  # ys are written in place into preallocated stacks (no list of slices to
  # concatenate at the end).
  ys = [np.empty((length,) + a.shape, a.dtype) for a in jaxpr.out_avals[num_carry:]]
  with set_current_trace(eval_trace):
    for step in range(length):
      i = length - 1 - step if reverse else step
      outs = run([*consts, *carry, *(x[i] for x in xs)])
      carry = outs[:num_carry]
      for y, o in zip(ys, outs[num_carry:]):
        y[i] = o
  return [*carry, *ys]


# --------------------------------------------------------------- batching
def batch_body(closed: ClosedJaxpr, in_dims: Sequence, axis_data,
               force_batched: Sequence[bool]):
  """Batch a loop body whose batched inputs have their batch axis first.
  Outputs are batched at 0 when they depend on a batched input or are
  marked in ``force_batched`` (then broadcast), else unbatched. Returns
  (batched closed jaxpr, out_dims)."""
  batched, out_dims = batch_jaxpr(
      closed, list(in_dims), axis_data.size, axis_data.name,
      spmd_axis_name=axis_data.spmd_name, instantiate=False)
  out_dims = list(out_dims)
  grow = [d is None and f for d, f in zip(out_dims, force_batched)]
  if not any(grow):
    return batched, out_dims
  size = axis_data.size

  def broadcast_forced(*args):
    outs = eval_jaxpr(batched.jaxpr, batched.consts, *args)
    return [broadcast_in_dim(o, (size,) + v.aval.shape, tuple(range(1, v.aval.ndim + 1)))
            if g else o for o, g, v in zip(outs, grow, batched.jaxpr.outvars)]

  jaxpr, consts = trace_to_jaxpr(broadcast_forced, batched.in_avals)
  return checked_closed(jaxpr, consts), [0 if g else d for d, g in zip(out_dims, grow)]


@scan_p.def_batch
def _scan_batch(vals, dims, *, axis_data, reverse, length, jaxpr, num_consts, num_carry,
                unroll):
  num_ys = len(jaxpr.out_avals) - num_carry
  const_b, init_b, xs_b = split_list([d is not None for d in dims], [num_consts, num_carry])
  # A carry is batched when its initial value is or when the body makes it
  # so; iterate until the set stops growing (at most num_carry rounds).
  carry_b = init_b
  for _ in range(num_carry + 1):
    in_dims = [0 if b else None for b in const_b + carry_b + xs_b]
    body, out_dims = batch_body(jaxpr, in_dims, axis_data, carry_b + [False] * num_ys)
    carry_out_b = [d is not None for d in out_dims[:num_carry]]
    grown = [a or b for a, b in zip(carry_b, carry_out_b)]
    if grown == carry_b:
      break
    carry_b = grown
  consts, init, xs = split_list(vals, [num_consts, num_carry])
  const_d, init_d, xs_d = split_list(dims, [num_consts, num_carry])
  consts = [x if d is None else moveaxis(x, d, 0) for x, d in zip(consts, const_d)]
  size = axis_data.size
  new_init = []
  for x, d, b in zip(init, init_d, carry_b):
    if d is not None:
      x = moveaxis(x, d, 0)
    elif b:
      shape = tuple(getattr(x, "shape", np.shape(x)))
      x = broadcast_in_dim(x, (size,) + shape, tuple(range(1, len(shape) + 1)))
    new_init.append(x)
  # xs keep the scanned axis first: their batch axis goes to 1.
  xs = [x if d is None else moveaxis(x, d, 1) for x, d in zip(xs, xs_d)]
  outs = scan_p.bind(*consts, *new_init, *xs, reverse=reverse, length=length, jaxpr=body,
                     num_consts=num_consts, num_carry=num_carry, unroll=unroll)
  ys_dims = [None if d is None else 1 for d in out_dims[num_carry:]]
  return outs, [0 if b else None for b in carry_b] + ys_dims


# --------------------------------------------------------------- lowering
def _zeros(ctx, aval: ShapedArray):
  dtype = np.bool_ if aval.dtype == dtypes.float0 else aval.dtype
  return ctx.full(0, aval.shape, dtype)


def _index_type(length: int):
  return np.dtype(np.int32) if length < 2 ** 31 else np.dtype(np.int64)


def _read_slice(ctx, x, x_aval: ShapedArray, pos, idx_dtype):
  """Slice ``pos`` of ``x`` along its leading axis (the axis dropped)."""
  piece = mapped_aval(x_aval)
  if 0 in piece.shape:
    return _zeros(ctx, piece)
  zero = ctx.constant(np.zeros((), idx_dtype))
  sizes = (1,) + piece.shape
  one = ShapedArray(sizes, x_aval.dtype)
  sliced = ctx.op("stablehlo.dynamic_slice", [x, pos] + [zero] * piece.ndim, one,
                  attrs={"slice_sizes": sizes})
  return ctx.op("stablehlo.reshape", [sliced], piece)


def _write_slice(ctx, buf, buf_aval: ShapedArray, y, pos, idx_dtype):
  """``buf`` with slice ``pos`` of its leading axis replaced by ``y``."""
  piece = mapped_aval(buf_aval)
  if 0 in piece.shape:
    return buf
  zero = ctx.constant(np.zeros((), idx_dtype))
  y1 = ctx.op("stablehlo.reshape", [y], ShapedArray((1,) + piece.shape, buf_aval.dtype))
  return ctx.op("stablehlo.dynamic_update_slice", [buf, y1, pos] + [zero] * piece.ndim,
                buf_aval)


# A scan whose values are all small runs as one dispatch (loop_dispatch.py),
# one step a trip. Otherwise each trip of a compiled loop costs host work in
# IREE (the loop runs in its VM, a dispatch per fused group of body ops), and
# IREE copies a loop-carried buffer that the body updates in place (the
# stacked ys) once per trip. So the lowering runs several steps per trip: 10k
# steps of ``x * 0.999 + 0.5`` take 64 ms at one step a trip, 1.6 ms at 32;
# an RNN scan of 200 steps (32x256 state) 181 ms at one step a trip, 34 ms at
# 20. The budget bounds the unrolled body's size (compile time). Values stay
# the same: the same operations run in the same order.
_UNROLL_OP_BUDGET = 256
_UNROLL_MAX = 64


def _count_eqns(jaxpr) -> int:
  n = 0
  for eqn in jaxpr.eqns:
    n += 1
    for sub in jaxprs_in_params(eqn.params):
      n += _count_eqns(sub)
  return n


def _auto_unroll(body, length: int) -> int:
  if length <= 1:
    return 1
  k_max = max(1, min(length, _UNROLL_MAX, _UNROLL_OP_BUDGET // max(1, _count_eqns(body))))
  # Prefer a divisor of the length: no remainder steps emitted after the loop.
  for k in range(k_max, max(1, k_max // 2) - 1, -1):
    if length % k == 0:
      return k
  return k_max


@scan_p.def_lower
def _scan_lower(ctx, *args, reverse, length, jaxpr, num_consts, num_carry, unroll):
  body = jaxpr.jaxpr
  # The body's own constants become loop-invariant operands (emitted once,
  # not once per unrolled step).
  body_consts = [ctx.constant(np.asarray(canonical_value(c)), v.aval.dtype)
                 for v, c in zip(body.constvars, jaxpr.consts)]
  open_body = body.replace(constvars=[], invars=[*body.constvars, *body.invars])
  consts, carry, xs = split_list(args, [num_consts, num_carry])
  consts = body_consts + consts
  x_avals = ctx.avals_in[num_consts + num_carry:]
  y_avals = ctx.avals_out[num_carry:]
  ys = [_zeros(ctx, a) for a in y_avals]
  idx_dtype = _index_type(length)

  def step(s, consts, carry, xs, ys):
    """Iteration ``s`` (a scalar index Value, in iteration order)."""
    if reverse:
      s = ctx.op("stablehlo.subtract", [ctx.constant(np.asarray(length - 1, idx_dtype)), s],
                 s.type)
    x_slices = [_read_slice(ctx, x, a, s, idx_dtype) for x, a in zip(xs, x_avals)]
    outs = ctx.lower_jaxpr_inline(open_body, [*consts, *carry, *x_slices])
    ys = [_write_slice(ctx, buf, a, y, s, idx_dtype)
          for buf, a, y in zip(ys, y_avals, outs[num_carry:])]
    return outs[:num_carry], ys

  one_dispatch = fits_one_dispatch([jaxpr], [*ctx.avals_in, *ctx.avals_out])
  if unroll == 1 and not one_dispatch:
    unroll = _auto_unroll(body, length)
  if unroll == 0:
    trips, rest = 0, length
  else:
    trips, rest = divmod(length, unroll)
  if unroll != 1 and trips == 1 and rest == 0:
    trips, rest = 0, length        # one trip of the whole loop: no loop at all
  if trips:
    state = [ctx.constant(np.zeros((), idx_dtype)), *consts, *carry, *xs, *ys]
    types = [v.type for v in state]

    def loop(state):
      with ctx.region(types) as cond:
        pred = ctx.op("stablehlo.compare",
                      [cond.args[0], ctx.constant(np.asarray(trips, idx_dtype))], "tensor<i1>",
                      attrs={"comparison_direction": "#stablehlo<comparison_direction LT>"})
        ctx.ret([pred])
      with ctx.region(types) as body_region:
        i, c, car, x, y = split_list(body_region.args, [1, len(consts), num_carry, len(xs)])
        i = i[0]
        base = i
        if unroll != 1:
          base = ctx.op("stablehlo.multiply", [i, ctx.constant(np.asarray(unroll, idx_dtype))],
                        i.type)
        for k in range(unroll):
          s = base if k == 0 else ctx.op(
              "stablehlo.add", [base, ctx.constant(np.asarray(k, idx_dtype))], i.type)
          car, y = step(s, c, car, x, y)
        nxt = ctx.op("stablehlo.add", [i, ctx.constant(np.ones((), idx_dtype))], i.type)
        new = [nxt, *c, *car, *x, *y]
        if one_dispatch:
          new = carry_in_place(ctx, new, body_region.args)
        ctx.ret(new)
      return ctx.op("stablehlo.while", state, types, regions=[cond, body_region])

    outs = in_one_dispatch(ctx, state, types, loop) if one_dispatch else loop(state)
    _, _, carry, _, ys = split_list(outs, [1, len(consts), num_carry, len(xs)])
  for s in range(trips * max(unroll, 1), length):
    carry, ys = step(ctx.constant(np.asarray(s, idx_dtype)), consts, carry, xs, ys)
  return [*carry, *ys]


__all__ = ["scan_p"]
