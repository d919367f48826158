"""Reductions of broadcasts and iotas, computed without making them.

``jnp.broadcast_to(x, (200000, 200000)).sum()`` stages ``reduce_sum`` of a
``broadcast_in_dim``: run as written, the interpreter and the compiled
program both make the 160 GB broadcast (IREE fails with RESOURCE_EXHAUSTED,
the interpreter loops over 4e10 elements), where XLA's algebraic simplifier
reduces the operand. ``fold_reductions`` rewrites, before a jitted jaxpr runs
(interpreted or lowered), each

* ``reduce_sum/max/min/and/or`` of a ``broadcast_in_dim`` (through
  ``convert_element_type``s) into the reduction of the broadcast's operand,
  a multiplication by the number of copies for a sum, and a broadcast of
  that smaller result;
* ``reduce_sum/max/min`` of an ``iota`` into its closed form: a constant
  (``n(n-1)/2`` times the other reduced sizes) when the counting dimension is
  reduced, else a smaller iota times the reduced size.

The results are those of the reduction up to reassociation (a sum of ``N``
copies of ``v`` is ``N * v``, rounded once; integer sums wrap as the adds
would), within decision 12's tolerance for sums. Jaxprs without such a
pattern are returned as they are (the same object).
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from openjax._src import dtypes
from openjax._src.core import (ClosedJaxpr, Jaxpr, JaxprEqn, Literal, ShapedArray, Var,
                               check_transformed, dce_jaxpr)
from openjax._src.primitives.base.structural import broadcast_in_dim_p, iota_p
from openjax._src.primitives.elementwise.arithmetic import mul_p

_SUM = "reduce_sum"
# Reductions whose value over copies of one element is that element.
_IDEMPOTENT = ("reduce_max", "reduce_min", "reduce_and", "reduce_or")
# Elementwise unary primitives that commute with a broadcast.
_THROUGH = ("convert_element_type",)


def _scalar(value, dtype, weak: bool) -> Literal:
  """``value`` as a rank-0 literal of ``dtype``; integers wrap modulo the
  dtype's range, as repeated integer adds do."""
  dt = np.dtype(dtype)
  if dtypes.kind(dt) in "iu":
    bits = dt.itemsize * 8
    value = int(value) % (1 << bits)
    if dtypes.kind(dt) == "i" and value >= 1 << (bits - 1):
      value -= 1 << bits
  val = np.array(value if dtypes.kind(dt) in "iub" else float(value)).astype(dt)
  return Literal(val, ShapedArray((), dt, weak))


class _Emitter:
  """New equations, each writing a fresh variable of its abstract result."""

  def __init__(self):
    self.eqns: list = []

  def __call__(self, primitive, invars, **params):
    avals = [a.aval for a in invars]
    out_aval, = primitive.rule("abstract_eval")(*avals, **params)
    out = Var(out_aval)
    self.eqns.append(JaxprEqn(invars, [out], primitive, params))
    return out


def _through_chain(var, producers):
  """The equation making ``var`` behind ``_THROUGH`` equations, and those
  equations from the source on."""
  chain = []
  src = producers.get(var)
  while src is not None and src.primitive.name in _THROUGH:
    chain.append(src)
    if not isinstance(src.invars[0], Var):
      return None, []
    src = producers.get(src.invars[0])
  return src, chain[::-1]


def _finish(emit: _Emitter, value, eqn, out_dims) -> list | None:
  """Broadcast ``value`` to the reduction's result (its dimensions going to
  ``out_dims``) and make the last equation write the reduction's variable."""
  out = eqn.outvars[0]
  aval = out.aval
  if not (emit.eqns and value is emit.eqns[-1].outvars[0] and value.aval.shape == aval.shape
          and tuple(out_dims) == tuple(range(len(aval.shape)))):
    value = emit(broadcast_in_dim_p, [value], shape=tuple(aval.shape),
                 broadcast_dimensions=tuple(out_dims), sharding=None)
  last = emit.eqns[-1]
  got = last.outvars[0].aval
  if (got.shape, got.dtype, got.weak_type) != (aval.shape, aval.dtype, aval.weak_type):
    return None
  emit.eqns[-1] = last.replace(outvars=[out])
  return emit.eqns


def _fold_broadcast(eqn, bcast, chain, axes) -> list | None:
  x = bcast.invars[0]
  shape, bdims = bcast.params["shape"], bcast.params["broadcast_dimensions"]
  if math.prod(shape) == math.prod(x.aval.shape):
    return None   # adds size-1 dimensions only: nothing is repeated
  name = eqn.primitive.name
  emit = _Emitter()
  y = x
  for c in chain:
    y = emit(c.primitive, [y], **c.params)
  in_axes = tuple(i for i, d in enumerate(bdims) if d in axes)
  if in_axes:
    y = emit(eqn.primitive, [y], **dict(eqn.params, axes=in_axes))
  copies = math.prod(shape[d] for d in axes) // math.prod(x.aval.shape[i] for i in in_axes)
  if name == _SUM and copies != 1:
    if y.aval.dtype == np.bool_:
      return None
    y = emit(mul_p, [y, _scalar(copies, y.aval.dtype, True)], out_dtype=None)
  kept = [d for d in range(len(shape)) if d not in axes]
  out_dims = [kept.index(d) for d in bdims if d not in axes]
  return _finish(emit, y, eqn, out_dims)


def _fold_iota(eqn, iota, chain, axes) -> list | None:
  name = eqn.primitive.name
  if name not in (_SUM, "reduce_max", "reduce_min"):
    return None
  dtype, shape, dim = iota.params["dtype"], iota.params["shape"], iota.params["dimension"]
  out_dtype = eqn.invars[0].aval.dtype
  # Through converts only to inexact dtypes: the closed form is the exact
  # sum of the counts, which a float result rounds once.
  if any(dtypes.kind(c.outvars[0].aval.dtype) not in "fc" for c in chain):
    return None
  emit = _Emitter()
  weak = eqn.outvars[0].aval.weak_type
  n = shape[dim]
  if dim in axes:
    others = math.prod(shape[d] for d in axes if d != dim)
    value = {_SUM: n * (n - 1) // 2 * others, "reduce_max": n - 1, "reduce_min": 0}[name]
    return _finish(emit, _scalar(value, out_dtype, weak), eqn, ())
  kept = [d for d in range(len(shape)) if d not in axes]
  y = emit(iota_p, [], dtype=dtype, shape=tuple(shape[d] for d in kept),
           dimension=kept.index(dim), sharding=None)
  for c in chain:
    y = emit(c.primitive, [y], **c.params)
  copies = math.prod(shape[d] for d in axes)
  if name == _SUM and copies != 1:
    y = emit(mul_p, [y, _scalar(copies, out_dtype, True)], out_dtype=None)
  return _finish(emit, y, eqn, range(len(kept)))


def _fold(eqn, producers) -> list | None:
  operand = eqn.invars[0]
  if not isinstance(operand, Var) or 0 in operand.aval.shape:
    return None   # empty reductions give their identity
  axes = set(eqn.params["axes"])
  if not axes:
    return None
  src, chain = _through_chain(operand, producers)
  if src is None:
    return None
  if src.primitive is broadcast_in_dim_p:
    return _fold_broadcast(eqn, src, chain, axes)
  if src.primitive is iota_p:
    return _fold_iota(eqn, src, chain, axes)
  return None


def fold_reductions(jaxpr: Jaxpr) -> Jaxpr:
  """``jaxpr`` with its reductions of broadcasts and iotas folded (the
  same object when there are none)."""
  producers: dict = {}
  eqns: list = []
  changed = False
  for eqn in jaxpr.eqns:
    name = eqn.primitive.name
    if name == _SUM or name in _IDEMPOTENT:
      folded = _fold(eqn, producers)
      if folded is not None:
        eqns.extend(folded)
        for e in folded:   # a reduction of this result folds on
          producers[e.outvars[0]] = e
        changed = True
        continue
    eqns.append(eqn)
    for v in eqn.outvars:
      producers[v] = eqn
  if not changed:
    return jaxpr
  out = dce_jaxpr(jaxpr.replace(eqns=eqns))
  check_transformed(out, "fold_reductions")
  return out


_folded: "weakref.WeakKeyDictionary[ClosedJaxpr, ClosedJaxpr]" = weakref.WeakKeyDictionary()


def folded(closed: ClosedJaxpr) -> ClosedJaxpr:
  """``fold_reductions`` of a closed jaxpr, made once per ``closed``."""
  hit = _folded.get(closed)
  if hit is None:
    jaxpr = fold_reductions(closed.jaxpr)
    hit = closed if jaxpr is closed.jaxpr else ClosedJaxpr(jaxpr, closed.consts)
    _folded[closed] = hit
  return hit


__all__ = ["fold_reductions", "folded"]
