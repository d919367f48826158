"""Layouts along the Auto axes a partially manual ``shard_map`` leaves to the
compiler (``axis_names`` a subset of an all-Auto or mixed mesh).

JAX types nothing along Auto axes inside the body (``f32[4,4]{V:i}``), but
its results come back laid out over the whole mesh as XLA's sharding
propagation carries the arguments' splits through the body: an argument
split over ``j`` along a dimension the body keeps gives a result split over
``j`` there too (``P('i', 'j')`` for ``out_specs=P('i')``). Here the same
propagation runs through the primitives' sharding rules (the ones that type
Explicit axes), treating the Auto axes as if they were typed; where a rule
has no per-device form (or refuses) the value is whole along them, as a
compiler gathers it. The body's computation itself is unchanged: every
device along an Auto axis computes the whole block, and the result is laid
out afterwards.
"""
from __future__ import annotations

from typing import Sequence

from openjax._src.core import Jaxpr, Literal, ShapedArray
from openjax._src.core.mesh import AxisType
from openjax._src.core.sharding import NamedSharding, PartitionSpec, dim_axes
from openjax._src.core.sharding_rules import is_replicated
from openjax._src.primitives.collectives.collectives import (pbroadcast_p, pmax_p, pmin_p,
                                                             ppermute_p, psum_p)
from openjax._src.primitives.collectives.varying import psum_invariant_p, pvary_p

__all__ = ["auto_axes", "auto_in_spec", "auto_out_specs", "auto_step", "with_auto_split"]

# Collectives over the manual axes (and pvary, their type cast) that keep
# each operand's shape: the Auto-axis layout of each operand carries to its
# result.
_SHAPE_KEEPING = frozenset([psum_p, pmax_p, pmin_p, ppermute_p, pbroadcast_p, psum_invariant_p,
                            pvary_p])


def auto_axes(whole, manual) -> frozenset:
  """The whole mesh's Auto axes that the body leaves non-manual."""
  return frozenset(a for a, t in zip(whole.axis_names, whole.axis_types)
                   if t is AxisType.Auto and a not in manual)


def auto_in_spec(x, whole, auto: frozenset, ndim: int) -> tuple | None:
  """The split of argument ``x`` along the Auto axes ``auto`` (None: whole
  along all of them)."""
  sharding = getattr(x, "sharding", None)
  if not auto or not isinstance(sharding, NamedSharding) or \
      sharding.mesh.axis_names != whole.axis_names:
    return None
  entries = []
  for e in list(sharding.spec)[:ndim] + [None] * (ndim - len(sharding.spec)):
    names = tuple(a for a in dim_axes(e) if a in auto)
    entries.append(None if not names else names[0] if len(names) == 1 else names)
  return None if all(e is None for e in entries) else tuple(entries)


def _typed(aval: ShapedArray, spec, typing_mesh) -> ShapedArray:
  if spec is None:
    return aval.update(sharding=None)
  return aval.update(sharding=NamedSharding(typing_mesh, PartitionSpec(*spec)))


def auto_step(primitive, specs: Sequence, avals: Sequence, out_avals: Sequence, params,
              typing_mesh) -> list:
  """The Auto-axis splits (tuples, or None for whole) of one primitive's
  results from its operands' ``specs``."""
  n = len(out_avals)
  if all(s is None for s in specs):
    return [None] * n
  if primitive in _SHAPE_KEEPING:
    return [s if s is not None and len(s) == len(o.shape) else None
            for s, o in zip(list(specs) + [None] * n, out_avals)][:n]
  rule = primitive.sharding_rule
  if rule is None:
    return [None] * n
  full = [s if s is not None else (None,) * len(a.shape) for s, a in zip(specs, avals)]
  typed = [_typed(a, s, typing_mesh) for a, s in zip(avals, specs)]
  try:
    outs = rule(full, typed, list(out_avals), **params)
  except Exception:   # noqa: BLE001 - no per-device form: whole along the Auto axes
    return [None] * n
  return [None if s is None or len(s) != len(o.shape) or is_replicated(s) else tuple(s)
          for s, o in zip(outs, out_avals)]


def auto_out_specs(jaxpr: Jaxpr, in_specs: Sequence, typing_mesh) -> list:
  """The Auto-axis splits of a body's results, its arguments split as
  ``in_specs``, through every equation (``auto_step``)."""
  env = {v: s for v, s in zip(jaxpr.invars, in_specs) if s is not None}

  def read(a):
    return None if isinstance(a, Literal) else env.get(a)

  for eqn in jaxpr.eqns:
    specs = [read(a) for a in eqn.invars]
    if all(s is None for s in specs):
      continue
    outs = auto_step(eqn.primitive, specs, [a.aval for a in eqn.invars],
                     [v.aval for v in eqn.outvars], eqn.params, typing_mesh)
    env.update((v, s) for v, s in zip(eqn.outvars, outs) if s is not None)
  return [read(a) for a in jaxpr.outvars]


def with_auto_split(body_aval: ShapedArray, spec, whole) -> ShapedArray:
  """``body_aval`` carrying the Auto-axis split ``spec`` as its sharding
  (what ``onto_whole_mesh`` lays the result out by)."""
  if spec is None:
    return body_aval
  return body_aval.update(sharding=NamedSharding(whole.abstract_mesh, PartitionSpec(*spec)))
