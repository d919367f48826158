"""``optimization_barrier_p`` (the compiler may not move computation across it)
and ``copy_p`` (a fresh buffer with the operand's value). Both are the identity
on values, so both are linear: tangents and cotangents pass through the same
primitive."""
from __future__ import annotations

import numpy as np

from openjax._src import tree_util
from openjax._src.core import Primitive
from openjax._src.core.sharding_rules import per_operand_rule, replicated_rule, same_as_operand_rule
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal
from openjax._src.primitives.base.structural import deflinear, instantiate_zeros

# ------------------------------------------------------- optimization_barrier
optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True, kind="linear")


def optimization_barrier(operand, /):
  """The identity on a pytree of arrays that keeps the compiler from moving
  computation across it (e.g. to stop rematerialised values being recomputed
  early, or to order two independent computations)."""
  leaves, treedef = tree_util.tree_flatten(operand)
  return tree_util.tree_unflatten(treedef, optimization_barrier_p.bind(*leaves))


@optimization_barrier_p.def_impl
def _optimization_barrier_impl(*xs):
  return list(xs)


@optimization_barrier_p.def_abstract_eval
def _optimization_barrier_abstract_eval(*avals):
  return list(avals)


optimization_barrier_p.def_sharding_rule(per_operand_rule)


def _optimization_barrier_transpose(cts, *xs):
  if not isinstance(cts, (list, tuple)):
    cts = [cts]
  if all(type(ct) is Zero for ct in cts):
    return [Zero(x.aval) for x in xs]
  return optimization_barrier_p.bind(*(instantiate_zeros(ct) for ct in cts))


deflinear(optimization_barrier_p, _optimization_barrier_transpose)
optimization_barrier_p.def_transpose(_optimization_barrier_transpose)


@optimization_barrier_p.def_batch
def _optimization_barrier_batch(vals, dims):
  return optimization_barrier_p.bind(*vals), list(dims)


@optimization_barrier_p.def_lower
def _optimization_barrier_lower(ctx, *xs):
  if not xs:
    return []
  outs = ctx.op("stablehlo.optimization_barrier", list(xs), list(ctx.avals_out))
  return list(outs) if isinstance(outs, (list, tuple)) else [outs]


# ----------------------------------------------------------------------- copy
copy_p = Primitive("copy", kind="linear")


@copy_p.def_impl
def _copy_impl(x):
  return [np.array(x, copy=True)]


@copy_p.def_abstract_eval
def _copy_abstract_eval(x):
  return [x]


copy_p.def_sharding_rule(same_as_operand_rule)


deflinear(copy_p, lambda ct, x: [copy_p.bind1(ct)])


@copy_p.def_batch
def _copy_batch(vals, dims):
  return [copy_p.bind1(vals[0])], [dims[0]]


@copy_p.def_lower
def _copy_lower(ctx, x):
  return [x]


# ---------------------------------------------------------------------- stage
stage_p = Primitive("stage", kind="linear")


@stage_p.def_impl
def _stage_impl(x):
  return [np.asarray(x)]


@stage_p.def_abstract_eval
def _stage_abstract_eval(x):
  return [x]


stage_p.def_sharding_rule(same_as_operand_rule)


deflinear(stage_p, lambda ct, x: [stage_p.bind1(ct)])


@stage_p.def_batch
def _stage_batch(vals, dims):
  return [stage_p.bind1(vals[0])], [dims[0]]


@stage_p.def_lower
def _stage_lower(ctx, x):
  return [x]


# ------------------------------------------------------------------- dce_sink
# Marks values as used. openjax's jit runs every equation it traced, and no
# primitive has side effects, so there is nothing for it to keep alive: it
# computes nothing, and dead-code elimination inside transformations may drop it.
dce_sink_p = Primitive("dce_sink", multiple_results=True, kind="linear")


@dce_sink_p.def_impl
def _dce_sink_impl(x, *, prevent_mlir_dce=False):
  return []


@dce_sink_p.def_abstract_eval
def _dce_sink_abstract_eval(x, *, prevent_mlir_dce=False):
  return []


dce_sink_p.def_sharding_rule(replicated_rule)   # no results


def _dce_sink_jvp(primals, tangents, **params):
  return [], []


def _dce_sink_transpose(cts, x, **params):
  return [Zero(x.aval)] if is_undefined_primal(x) else [None]


dce_sink_p.def_jvp(_dce_sink_jvp)
dce_sink_p.def_transpose(_dce_sink_transpose)


@dce_sink_p.def_batch
def _dce_sink_batch(vals, dims, **params):
  return [], []


@dce_sink_p.def_lower
def _dce_sink_lower(ctx, x, **params):
  return []


__all__ = ["copy_p", "dce_sink_p", "optimization_barrier", "optimization_barrier_p", "stage_p"]
