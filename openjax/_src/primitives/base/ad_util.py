"""Pieces of automatic differentiation that primitive rules use: symbolic
zero tangents, undefined primals (the linear inputs of a transpose rule),
``defjvp_zero`` and ``stop_gradient`` (as in JAX's ``ad_util``). What needs
primitives to build values (zeros of an aval, ``add_any`` for tangent
accumulation, the ``defjvp``/``deflinear`` builders) sits with the
structural primitives (``structural``).

JVP rule: ``jvp(primals, tangents, **params) -> (primals_out, tangents_out)``;
tangents may be ``Zero`` (no work should be done for them).
Transpose rule: ``transpose(cts_out, *invals, **params) -> cts_in``; a linear
input arrives as ``UndefinedPrimal(aval)``, its cotangent is returned in its
position (``None`` for non-linear inputs); cotangents may be ``Zero``.
"""
from __future__ import annotations

from openjax._src import dtypes, tree_util
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules import elementwise_rule


def tangent_aval(aval: ShapedArray) -> ShapedArray:
  """The aval of a tangent: float0 for integer/boolean primals; split over
  Explicit mesh axes as the primal is (as JAX's)."""
  if dtypes.kind(aval.dtype) in "biu" or aval.dtype == dtypes.float0:
    return ShapedArray(aval.shape, dtypes.float0, False, aval.sharding, vma=aval.vma)
  return ShapedArray(aval.shape, aval.dtype, aval.weak_type, aval.sharding, vma=aval.vma)


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


# ------------------------------------------------------------ rule builders
def defjvp_zero(prim: Primitive) -> None:
  """Outputs have zero tangents (integer/boolean results, piecewise-constant
  functions like floor and sign)."""
  def rule(primals, tangents, **params):
    outs = prim.bind(*primals, **params)
    return outs, [Zero.from_primal_value(o) for o in outs]
  prim.def_jvp(rule)


# ------------------------------------------------------------ stop_gradient
stop_gradient_p = Primitive("stop_gradient")


def stop_gradient(x):
  """Stops gradient computation: the identity on values, a constant to
  differentiation (``x`` may be a pytree of arrays)."""
  return tree_util.tree_map(stop_gradient_p.bind1, x)


@stop_gradient_p.def_impl
def _stop_gradient_impl(x):
  return [x]


@stop_gradient_p.def_abstract_eval
def _stop_gradient_abstract_eval(x):
  return [x]


stop_gradient_p.def_sharding_rule(elementwise_rule("stop_gradient"))


@stop_gradient_p.def_jvp
def _stop_gradient_jvp(primals, tangents):
  # Bind again so that every enclosing differentiation sees a constant too.
  x, = primals
  return [stop_gradient_p.bind1(x)], [Zero.from_primal_value(x)]


@stop_gradient_p.def_batch
def _stop_gradient_batch(vals, dims):
  return [stop_gradient_p.bind1(vals[0])], [dims[0]]


@stop_gradient_p.def_lower
def _stop_gradient_lower(ctx, x):
  return [x]
