"""User reduction computations (``lax.reduce``, ``lax.reduce_window``):
tracing the binary ``computation`` to a scalar jaxpr, applying that jaxpr
elementwise to whole arrays, and the order-preserving tree reduction the impl
and JVP rules share.

The tree combines adjacent pairs, ``(x0 . x1), (x2 . x3), ...``, level after
level (an odd element left at the end waits for the next level), and folds
the init value in once at the end, ``init . (tree)``. Combining neighbours
keeps the order of the elements, so the result is exact for any associative
computation, commutative or not, and costs O(log n) whole-array
applications of the computation instead of n scalar calls.
"""
from __future__ import annotations

import weakref
from functools import partial
from typing import Callable, Sequence

import numpy as np

from openjax._src import dtypes, tree_util
from openjax._src.control.trace_cache import TraceCache, pure_fun_key
from openjax._src.core import (ClosedJaxpr, ShapedArray, Tracer, eval_jaxpr, eval_trace, get_aval,
                               program_of, set_current_trace)
from openjax._src.interpreters.batching import batch_jaxpr
from openjax._src.interpreters.jvp import jvp_jaxpr
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.base.structural import broadcast_in_dim, reshape, zeros_like_aval
from openjax._src.primitives.shape.shape import concatenate, slice_in_dim
from openjax._src.primitives.base.ad_util import Zero, tangent_aval


# ----------------------------------------------------------------- tracing
def trace_computation(fun: str, computation: Callable, init_avals: Sequence[ShapedArray],
                      init_tree) -> tuple[ClosedJaxpr, object]:
  """The jaxpr of ``computation(x, y)`` on two pytrees of scalars shaped like
  the init values, and the pytree structure of its result. Cached per
  (computation, avals, tree) when ``computation`` is hashable, as JAX does;
  an effect-free computation by what it reads (``trace_cache.pure_fun_key``),
  so a fresh ``lambda a, b: a + b`` each call reuses the trace and its
  batched forms (retracing and batching it again cost ~400 us a call)."""
  fkey = pure_fun_key(computation)
  key = (fun, computation if fkey is None else fkey, tuple(init_avals), init_tree)
  try:
    hit = _traces.find(key)
  except TypeError:
    return _trace_computation(fun, computation, tuple(init_avals), init_tree)
  if hit is None:
    hit = _trace_computation(fun, computation, tuple(init_avals), init_tree)
    _traces.put(key, hit, hit[0].consts)
    _first_computation[hit[0]] = computation
  return hit


def computation_of(closed: ClosedJaxpr, computation: Callable) -> Callable:
  """The function ``closed`` was first traced from (``computation`` when it
  was not cached): as a primitive's parameter it keeps the eval trace's plan
  for the primitive, which a fresh lambda each call would make anew."""
  return _first_computation.get(closed, computation)


def _trace_computation(fun, computation, init_avals, init_tree):
  k = len(init_avals)
  box = []

  def flat(*args):
    x = tree_util.tree_unflatten(init_tree, args[:k])
    y = tree_util.tree_unflatten(init_tree, args[k:])
    out_flat, out_tree = tree_util.tree_flatten(computation(x, y))
    box.append(out_tree)
    return out_flat

  jaxpr, consts = trace_to_jaxpr(flat, list(init_avals) * 2)
  if any(isinstance(c, Tracer) for c in consts):
    raise NotImplementedError(
        f"{fun}: the computation closes over a traced value (it uses an array computed "
        "inside a transformed function, e.g. under jit or vmap). Reduction computations "
        "can't close over Tracers: compute with the operands and init values only.")
  closed = ClosedJaxpr(jaxpr, consts)
  outs = closed.out_avals
  if len(outs) == k:
    for got, want in zip(outs, init_avals):
      if got.shape != want.shape or got.dtype != want.dtype:
        raise TypeError(
            f"{fun}: the computation must return values of the init values' types "
            f"({', '.join(a.str_short() for a in init_avals)}), got "
            f"{', '.join(a.str_short() for a in outs)}. Cast its result (e.g. with "
            "lax.convert_element_type) or pass init values of the result's dtype.")
  return closed, box[0]


# (API name, computation or its pure_fun_key, init avals, init tree) ->
# (closed jaxpr, out tree).
_traces = TraceCache()
_first_computation: "weakref.WeakKeyDictionary[ClosedJaxpr, Callable]" = (
    weakref.WeakKeyDictionary())


# ---------------------------------------------- elementwise application
_batched: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()
_jvps: "weakref.WeakKeyDictionary[ClosedJaxpr, tuple]" = weakref.WeakKeyDictionary()


def _batched_computation(closed: ClosedJaxpr, size: int) -> ClosedJaxpr:
  # The scalar jaxpr mapped over one axis of ``size`` (the elementwise form
  # of any computation, custom_jvp calls and control flow included).
  per_size = _batched.get(closed)
  if per_size is None:
    per_size = _batched[closed] = {}
  hit = per_size.get(size)
  if hit is None:
    if len(per_size) > 64:
      per_size.clear()
    hit, _ = batch_jaxpr(closed, [0] * len(closed.in_avals), size)
    per_size[size] = hit
  return hit


def apply_elementwise(closed: ClosedJaxpr, args: Sequence) -> list:
  """``closed`` (scalars in, scalars out) applied to 1-D arrays of one length,
  in the current trace."""
  size = get_aval(args[0]).shape[0]
  batched = _batched_computation(closed, size)
  return eval_jaxpr(batched.jaxpr, batched.consts, *args)


def differentiable(dtype) -> bool:
  """Whether values of ``dtype`` have real tangents (not float0)."""
  return tangent_aval(ShapedArray((), dtype)).dtype != dtypes.float0


def jvp_computation(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[bool]]:
  """The JVP of a computation over pairs: inputs ``(x, y, x_dot, y_dot)``
  with tangents only for differentiable operands; outputs the results, then
  the tangents marked in the returned mask (every differentiable output's
  tangent is instantiated)."""
  hit = _jvps.get(closed)
  if hit is None:
    diff_in = [differentiable(a.dtype) for a in closed.in_avals]
    diff_out = [differentiable(a.dtype) for a in closed.out_avals]
    hit = jvp_jaxpr(closed, diff_in, diff_out)
    _jvps[closed] = hit
  return hit


# ------------------------------------------------------ NumPy tree (impl)
def _run_elementwise(closed: ClosedJaxpr, args: Sequence[np.ndarray]) -> list:
  """``apply_elementwise`` on NumPy values, by the batched computation's
  program (its kernels, as binding each equation would run them, without
  the binds)."""
  batched = _batched_computation(closed, args[0].shape[0])
  return program_of(batched.jaxpr).runner(batched.consts)(args)


def tree_reducer(closed: ClosedJaxpr, n: int, m: int, dts: Sequence[np.dtype]) -> Callable:
  """``tree_reduce_np`` for (n, m) operands of ``dts``, planned: each level's
  runner of the batched computation is built once (building it and finding
  the level's batched jaxpr cost ~2 us a level; lax.reduce of a logaddexp
  computation over 7 elements runs 4 levels)."""
  if m == 0 or n < 2:
    return partial(tree_reduce_np, closed)
  levels, k = [], n
  while k > 1:
    half, odd = k // 2, k % 2
    batched = _batched_computation(closed, half * m)
    levels.append((half, odd, program_of(batched.jaxpr).runner(batched.consts)))
    k = half + odd
  batched = _batched_computation(closed, m)
  final = program_of(batched.jaxpr).runner(batched.consts)

  def reduce(xs, inits):
    with set_current_trace(eval_trace):
      for half, odd, run in levels:
        pairs = [x[:2 * half].reshape(half, 2, m) for x in xs]
        outs = run([p[:, 0].reshape(half * m) for p in pairs]
                   + [p[:, 1].reshape(half * m) for p in pairs])
        outs = [o.astype(dt, copy=False).reshape(half, m) for o, dt in zip(outs, dts)]
        xs = [np.concatenate([o, x[-1:]]) for o, x in zip(outs, xs)] if odd else outs
      acc = [np.full((m,), i, dt) for i, dt in zip(inits, dts)]
      outs = final(acc + [x[0] for x in xs])
      return [o.astype(dt, copy=False) for o, dt in zip(outs, dts)]
  return reduce


def tree_reduce_np(closed: ClosedJaxpr, xs: Sequence[np.ndarray], inits) -> list[np.ndarray]:
  """Reduce each (n, m) array of ``xs`` over its first axis with the
  computation ``closed`` (as the module docstring describes): (m,) arrays."""
  n, m = xs[0].shape
  dts = [x.dtype for x in xs]
  if m == 0:
    return [np.empty((0,), dt) for dt in dts]
  with set_current_trace(eval_trace):
    while n > 1:
      half, odd = n // 2, n % 2
      left = [x[0:2 * half:2].reshape(half * m) for x in xs]
      right = [x[1:2 * half:2].reshape(half * m) for x in xs]
      outs = _run_elementwise(closed, left + right)
      outs = [np.asarray(o).astype(dt, copy=False).reshape(half, m) for o, dt in zip(outs, dts)]
      if odd:
        outs = [np.concatenate([o, x[n - 1:]]) for o, x in zip(outs, xs)]
      xs, n = outs, half + odd
    acc = [np.full((m,), np.asarray(i), dt) for i, dt in zip(inits, dts)]
    if n == 0:
      return acc
    outs = _run_elementwise(closed, acc + [x[0] for x in xs])
    return [np.asarray(o).astype(dt, copy=False) for o, dt in zip(outs, dts)]


# ----------------------------------------------------- lax tree (JVP)
def _combine_jvp(jvp, diff, left, right):
  # left/right: (primals, tangents) with tangents None where not differentiable.
  jvp_closed, out_nz = jvp
  (lp, lt), (rp, rt) = left, right
  shape = get_aval(lp[0]).shape
  size = int(np.prod(shape, dtype=np.int64))
  flat = lambda v: reshape(v, (size,))    # noqa: E731
  args = [flat(v) for v in (*lp, *rp)]
  args += [flat(t) for t, d in zip(lt, diff) if d] + [flat(t) for t, d in zip(rt, diff) if d]
  outs = [reshape(o, shape) for o in apply_elementwise(jvp_closed, args)]
  k = len(lp)
  tans = iter(outs[k:])
  tangents = [next(tans) if nz else None for nz in out_nz]
  return outs[:k], [t if d else None for t, d in zip(tangents, diff)]


def tree_reduce_jvp(closed: ClosedJaxpr, xs: Sequence, ts: Sequence, inits: Sequence):
  """The reduction of ``tree_reduce_np`` written with lax operations on
  (primal, tangent) pairs: ``xs`` are (n, m) arrays, ``ts`` their tangents
  (None for non-differentiable operands; the init values' tangents are
  zero). Returns the (m,) results and their tangents (None where not
  differentiable); linear in ``ts``, so it transposes (reverse mode)."""
  jvp = jvp_computation(closed)
  diff = [t is not None for t in ts]
  n, m = get_aval(xs[0]).shape
  xs, ts = list(xs), list(ts)
  while n > 1:
    half, odd = n // 2, n % 2

    def rows(vs, start):
      return [None if v is None else slice_in_dim(v, start, 2 * half, 2) for v in vs]

    ps, qs = _combine_jvp(jvp, diff, (rows(xs, 0), rows(ts, 0)), (rows(xs, 1), rows(ts, 1)))
    if odd:
      last = lambda v: slice_in_dim(v, n - 1, n)    # noqa: E731
      ps = [concatenate([p, last(x)], 0) for p, x in zip(ps, xs)]
      qs = [None if q is None else concatenate([q, last(t)], 0) for q, t in zip(qs, ts)]
    xs, ts, n = ps, qs, half + odd
  dts = [get_aval(x).dtype for x in xs]
  acc = [broadcast_in_dim(i, (m,), ()) for i in inits]
  acc_t = [zeros_like_aval(ShapedArray((m,), dt)) if d else None for dt, d in zip(dts, diff)]
  if n == 0:
    return acc, acc_t
  last_x = [reshape(x, (m,)) for x in xs]
  last_t = [None if t is None else reshape(t, (m,)) for t in ts]
  return _combine_jvp(jvp, diff, (acc, acc_t), (last_x, last_t))


def tangent_or_zero(t, aval: ShapedArray):
  """``t``, or the symbolic zero tangent of ``aval`` for None."""
  return Zero(tangent_aval(aval)) if t is None else t


def flatten_operands_and_inits(operands, init_values) -> tuple[list, list, object]:
  """The leaves of ``operands`` and ``init_values`` and the operands' tree,
  with lax's errors when the two trees differ (``lax.reduce``,
  ``lax.reduce_window``)."""
  flat_ops, op_tree = tree_util.tree_flatten(operands)
  flat_inits, init_tree = tree_util.tree_flatten(init_values)
  if op_tree != init_tree:
    raise ValueError("Operands must have the same tree structure as init_values: "
                     f"{op_tree} vs. {init_tree}")
  if len(flat_ops) != len(flat_inits):
    raise ValueError("Must have same total number of operands as init_values: "
                     f" {len(flat_ops)} vs. {len(flat_inits)}")
  return flat_ops, flat_inits, op_tree


__all__ = ["flatten_operands_and_inits", "trace_computation",
           "apply_elementwise", "differentiable", "jvp_computation",
           "tree_reduce_np", "tree_reduce_jvp", "tangent_or_zero"]
