"""Pieces of automatic differentiation that primitive rules use: symbolic
zero tangents, undefined primals (the linear inputs of a transpose rule),
``add_any`` (tangent accumulation) and builders for common rule shapes.

JVP rule: ``jvp(primals, tangents, **params) -> (primals_out, tangents_out)``;
tangents may be ``Zero`` (no work should be done for them).
Transpose rule: ``transpose(cts_out, *invals, **params) -> cts_in``; a linear
input arrives as ``UndefinedPrimal(aval)``, its cotangent is returned in its
position (``None`` for non-linear inputs); cotangents may be ``Zero``.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval, registry


def tangent_aval(aval: ShapedArray) -> ShapedArray:
  """The aval of a tangent: float0 for integer/boolean primals."""
  if dtypes.kind(aval.dtype) in "biu" or aval.dtype == dtypes.float0:
    return ShapedArray(aval.shape, dtypes.float0, False)
  return ShapedArray(aval.shape, aval.dtype, aval.weak_type)


class Zero:
  """A symbolic zero tangent or cotangent of a given aval."""
  __slots__ = ("aval",)

  def __init__(self, aval: ShapedArray):
    self.aval = aval

  @staticmethod
  def from_primal_value(x) -> "Zero":
    return Zero(tangent_aval(get_aval(x)))

  def __repr__(self):
    return f"Zero({self.aval.str_short()})"


class UndefinedPrimal:
  """A linear input of a transpose rule: only its aval is known."""
  __slots__ = ("aval",)

  def __init__(self, aval: ShapedArray):
    self.aval = aval

  def __repr__(self):
    return f"UndefinedPrimal({self.aval.str_short()})"


def is_undefined_primal(x) -> bool:
  return type(x) is UndefinedPrimal


def zeros_like_aval(aval: ShapedArray):
  """An array of zeros for ``aval`` (staged as ``broadcast_in_dim 0.0`` under
  tracing, like JAX)."""
  if aval.dtype == dtypes.float0:
    return np.zeros(aval.shape, dtypes.float0)
  return _zeros_maker(aval)


def _no_zeros_maker(aval):
  raise AssertionError("primitives.shape registers the zeros maker at import")


_zeros_maker: Callable = _no_zeros_maker


def register_zeros_maker(fn: Callable) -> None:
  """Set by the module that owns ``broadcast_in_dim`` (imported after this one)."""
  global _zeros_maker
  _zeros_maker = fn


def instantiate_zeros(t):
  """A real array for a possibly symbolic zero."""
  return zeros_like_aval(t.aval) if type(t) is Zero else t


def add_tangents(x, y):
  if type(x) is Zero:
    return y
  if type(y) is Zero:
    return x
  return add_any_p.bind1(x, y)


# ----------------------------------------------------------------- add_any
add_any_p = Primitive("add_any", kind="linear")


@add_any_p.def_impl
def _add_any_impl(x, y):
  if x.dtype == dtypes.float0:
    return [x]
  return [np.add(x, y).astype(x.dtype)]


@add_any_p.def_abstract_eval
def _add_any_abstract_eval(x, y):
  if x.shape != y.shape:
    raise TypeError(f"add_any: shapes differ, {x.str_short()} and {y.str_short()}")
  return [ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)]


@add_any_p.def_jvp
def _add_any_jvp(primals, tangents):
  return [add_any_p.bind1(*primals)], [add_tangents(*tangents)]


@add_any_p.def_transpose
def _add_any_transpose(cts, x, y):
  ct, = cts
  return [ct, ct]


@add_any_p.def_batch
def _add_any_batch(vals, dims):
  x, y = vals
  dx, dy = dims
  if dx == dy:
    return [add_any_p.bind1(x, y)], [dx]
  if dx is None:
    x, y, dx, dy = y, x, dy, dx          # symmetric: let x be the batched operand
  # y (unbatched, or batched at another dim) follows x's batch dim. The shape
  # family sits above this module, so its primitives are found by name.
  if dy is None:
    aval = get_aval(y)
    shape = aval.shape[:dx] + (get_aval(x).shape[dx],) + aval.shape[dx:]
    bdims = tuple(i if i < dx else i + 1 for i in range(aval.ndim))
    y = registry["broadcast_in_dim"].bind1(y, shape=shape, broadcast_dimensions=bdims,
                                            sharding=None)
  else:
    perm = [i for i in range(get_aval(y).ndim) if i != dy]
    perm.insert(dx, dy)
    y = registry["transpose"].bind1(y, permutation=tuple(perm))
  return [add_any_p.bind1(x, y)], [dx]


@add_any_p.def_lower
def _add_any_lower(ctx, x, y):
  if ctx.avals_out[0].dtype == dtypes.float0:
    return [x]          # float0 tangents carry no values (lowered as i1)
  if ctx.avals_out[0].dtype == np.bool_:
    return [ctx.op("stablehlo.or", [x, y], ctx.avals_out[0])]
  return [ctx.op("stablehlo.add", [x, y], ctx.avals_out[0])]


# ------------------------------------------------------------ rule builders
def defjvp(prim: Primitive, *jvp_fns: Callable | None) -> None:
  """JVP from one function per operand: ``fn(g, *primals, **params)`` is the
  tangent contribution of operand ``i`` (None: not differentiable there).
  Contributions are summed; zero tangents cost nothing."""
  def rule(primals, tangents, **params):
    out = prim.bind1(*primals, **params)
    total = None
    for fn, t in zip(jvp_fns, tangents):
      if fn is None or type(t) is Zero:
        continue
      contrib = fn(t, *primals, **params)
      total = contrib if total is None else add_any_p.bind1(total, contrib)
    return [out], [Zero.from_primal_value(out) if total is None else total]
  prim.def_jvp(rule)


def defjvp2(prim: Primitive, *jvp_fns: Callable | None) -> None:
  """Like ``defjvp`` but each function also receives the output:
  ``fn(g, ans, *primals, **params)`` (e.g. exp's tangent is ``g * ans``)."""
  def rule(primals, tangents, **params):
    out = prim.bind1(*primals, **params)
    total = None
    for fn, t in zip(jvp_fns, tangents):
      if fn is None or type(t) is Zero:
        continue
      contrib = fn(t, out, *primals, **params)
      total = contrib if total is None else add_any_p.bind1(total, contrib)
    return [out], [Zero.from_primal_value(out) if total is None else total]
  prim.def_jvp(rule)


def defjvp_zero(prim: Primitive) -> None:
  """Outputs have zero tangents (integer/boolean results, piecewise-constant
  functions like floor and sign)."""
  def rule(primals, tangents, **params):
    outs = prim.bind(*primals, **params)
    return outs, [Zero.from_primal_value(o) for o in outs]
  prim.def_jvp(rule)


def deflinear(prim: Primitive, transpose_fn: Callable) -> None:
  """A primitive linear in all operands: its JVP applies it to the tangents,
  and ``transpose_fn(ct, *invals, **params) -> list`` transposes it."""
  def jvp(primals, tangents, **params):
    outs = prim.bind(*primals, **params)
    if all(type(t) is Zero for t in tangents):
      return outs, [Zero.from_primal_value(o) for o in outs]
    return outs, prim.bind(*(instantiate_zeros(t) for t in tangents), **params)

  def transpose(cts, *invals, **params):
    ct = cts[0] if len(cts) == 1 else cts
    if type(ct) is Zero:
      return [Zero(x.aval) if is_undefined_primal(x) else None for x in invals]
    return transpose_fn(ct, *invals, **params)
  prim.def_jvp(jvp)
  prim.def_transpose(transpose)

