"""Sharding rules: the sharding of a primitive's results from its operands'.

A *spec* here is a tuple with one entry per dimension of a value: None (the
dimension is whole), a mesh axis name, or a tuple of names (major first).
Each primitive's ``sharding_rule(specs, avals, out_avals, **params)`` gives
one spec per result or raises ``ShardingTypeError`` with JAX's message
where JAX does. The families use the builders below; staging
(``apply_sharding_rule``) types results of operands split over Explicit mesh
axes, and the SPMD partitioner propagates every axis (Auto ones too) with
the same rules.
"""
from __future__ import annotations

import math

from openjax._src.core.avals import vma_str
from openjax._src.core.sharding import NamedSharding, PartitionSpec, dim_axes
from openjax._src.errors import ShardingTypeError


def spec_of(aval) -> tuple:
  """``aval``'s spec (all None when it has no sharding)."""
  s = aval.sharding
  if s is None:
    return (None,) * len(aval.shape)
  spec = tuple(s.spec)
  return spec + (None,) * (len(aval.shape) - len(spec))


def is_replicated(spec: tuple) -> bool:
  return all(p is None for p in spec)


def join_axes(entries) -> object:
  """One spec entry splitting a dimension over the axes of ``entries`` in order."""
  axes = tuple(a for e in entries for a in dim_axes(e))
  return None if not axes else axes[0] if len(axes) == 1 else axes


def type_str(aval, spec: tuple, short: bool = False) -> str:
  """``float32[8@x,4]`` (``f32[8@x,4]`` when ``short``): a sharded type, for
  messages."""
  dims = []
  for n, p in zip(aval.shape, spec):
    axes = dim_axes(p)
    dims.append(str(n) if not axes else f"{n}@{axes[0]}" if len(axes) == 1
                else f"{n}@({','.join(axes)})")
  name = aval.str_short().split("[")[0] if short else aval.dtype.name
  # Inside a check_vma shard_map the type also names its varying manual axes.
  return f"{name}[{','.join(dims)}]{vma_str(getattr(aval, 'vma', ()))}"


# Why a primitive has no rule (``mark_not_applicable("sharding_rule", ...)``).
TYPED_BY_SUB_JAXPR = ("higher-order: its results are typed by its sub-jaxpr, traced with the "
                      "operands' shardings")
MANUAL_AXES_ONLY = ("named-axis collective: runs over Manual axes (shard_map, pmap, vmap), "
                    "where values carry no Explicit sharding types")


# ----------------------------------------------------------------- rules
def is_elementwise_rule(rule) -> bool:
  """Whether ``rule`` (a primitive's sharding rule) is an ``elementwise_rule``."""
  return getattr(rule, "__qualname__", "").startswith("elementwise_rule")


def elementwise_rule(name: str):
  """Operands of the result's shape share one sharding (a whole dimension
  takes the other operands' split); rank-0 operands broadcast."""
  def rule(specs, avals, out_avals, **params):
    out_ndim = len(out_avals[0].shape)
    out = [None] * out_ndim
    shown = []
    for spec, aval in zip(specs, avals):
      if len(aval.shape) != out_ndim:
        continue
      shown.append(spec)
      for d, p in enumerate(spec):
        if p is None or aval.shape[d] != out_avals[0].shape[d]:
          continue
        if out[d] is None:
          out[d] = p
        elif out[d] != p:
          raise ShardingTypeError(f"{name} got incompatible shardings for broadcasting: "
                                  f"{', '.join(str(s) for s in shown)}.")
    used = [a for p in out for a in dim_axes(p)]
    if len(used) != len(set(used)):
      # Each dimension agrees, but together they split over one axis twice.
      result = out_avals[0].update(vma=frozenset())
      raise ShardingTypeError(
          f"{name} operation with inputs: {', '.join(a.str_short() for a in avals)} produces "
          f"an illegally sharded result: {type_str(result, tuple(out), short=True)}")
    return [tuple(out)] * len(out_avals)
  return rule


def replicated_rule(specs, avals, out_avals, **params):
  """Results whole on every device (the partitioner gathers the operands)."""
  return [(None,) * len(a.shape) for a in out_avals]


def same_as_operand_rule(specs, avals, out_avals, **params):
  """Each result laid out as the first operand (same-shaped results)."""
  return [specs[0] if len(a.shape) == len(specs[0]) else (None,) * len(a.shape)
          for a in out_avals]


def per_operand_rule(specs, avals, out_avals, **params):
  """Result i laid out as operand i (identities over several operands)."""
  return list(specs)


def reduce_axes_rule(specs, avals, out_avals, *, axes, **params):
  """A reduction over ``axes``: the other dimensions keep their split."""
  keep = tuple(p for d, p in enumerate(specs[0]) if d not in axes)
  return [keep] * len(out_avals)


def unsharded_axis_rule(message: str, param: str):
  """An operation along ``params[param]`` (a dimension) that JAX requires
  whole (``cumsum``, ``sort``); results keep the operand's layout."""
  def rule(specs, avals, out_avals, **params):
    axis = params[param]
    for spec, aval in zip(specs, avals):
      if len(spec) > axis and spec[axis] is not None:
        raise ShardingTypeError(message.format(type=type_str(aval, spec), axis=axis,
                                               sharding=aval.sharding))
    return same_as_operand_rule(specs, avals, out_avals)
  return rule


def concatenate_rule(specs, avals, out_avals, *, dimension, **params):
  """JAX's rule: the operands split over Explicit axes are split alike (a
  whole operand, one not on the mesh, takes their layout); differently split
  operands raise JAX's error rather than merging their splits."""
  return [operands_split_alike(specs, avals)]


def operands_split_alike(specs, avals) -> tuple:
  """The common spec of the operands split over Explicit axes (all None
  when none is), or JAX's ShardingTypeError "All operands should have the
  same sharding" naming every operand's sharding."""
  split = [s for s in specs if not is_replicated(s)]
  if all(s == split[0] for s in split[1:]):
    return tuple(split[0]) if split else tuple(specs[0])
  mesh = next((a.sharding.mesh for a in avals if a.sharding is not None), None)
  shown = ", ".join(str(PartitionSpec(*s)) if mesh is None else
                    str(NamedSharding(mesh.abstract_mesh, PartitionSpec(*s))) for s in specs)
  raise ShardingTypeError(f"All operands should have the same sharding. Got shardings {shown}")


def reshape_spec(spec: tuple, in_shape: tuple, out_shape: tuple, aval=None) -> tuple:
  """The spec of ``reshape`` to ``out_shape`` as JAX types it: dimensions
  grouped by equal products; a group of merged dimensions splits over the
  axes of its leading split ones, a split dimension gives its axes to the
  first new dimension (which they must divide). Raises ShardingTypeError
  otherwise."""
  def fail():
    shown = type_str(aval, spec) if aval is not None else str(spec)
    raise ShardingTypeError(
        "This reshape is not supported. Please specify the sharding of the output via "
        "the `out_sharding` argument of jax.lax.reshape. Got operand type: "
        f"{shown}, new sizes: {tuple(out_shape)}")
  if is_replicated(spec):
    return (None,) * len(out_shape)
  out = [None] * len(out_shape)
  i = j = 0
  n_in, n_out = len(in_shape), len(out_shape)
  while i < n_in or j < n_out:
    # Size-1 dimensions are never split.
    if i < n_in and in_shape[i] == 1 and spec[i] is None and (j >= n_out or out_shape[j] != 1):
      i += 1
      continue
    if j < n_out and out_shape[j] == 1 and (i >= n_in or in_shape[i] != 1):
      j += 1
      continue
    if i >= n_in or j >= n_out:
      if i < n_in and spec[i] is not None:
        fail()
      i, j = min(i + 1, n_in), min(j + 1, n_out)
      continue
    gi, gj = [i], [j]
    pi, pj = in_shape[i], out_shape[j]
    while pi != pj:
      if pi < pj:
        i += 1
        gi.append(i)
        pi *= in_shape[i]
      else:
        j += 1
        gj.append(j)
        pj *= out_shape[j]
    i += 1
    j += 1
    entries = [spec[d] for d in gi]
    if all(e is None for e in entries):
      continue
    if len(gi) > 1 and len(gj) > 1:   # neither a merge nor a split
      fail()
    # The split dimensions lead their group: whole ones follow.
    first_whole = next((k for k, e in enumerate(entries) if e is None), len(entries))
    if any(e is not None for e in entries[first_whole:]):
      fail()
    axes = join_axes(entries)
    parts = math.prod(_axis_sizes(aval, axes))
    if out_shape[gj[0]] % parts:
      fail()
    out[gj[0]] = axes
  return tuple(out)


def _axis_sizes(aval, axes) -> list:
  if aval is None or aval.sharding is None:
    return [1 for _ in dim_axes(axes)]
  sizes = aval.sharding.mesh.shape
  return [sizes[a] for a in dim_axes(axes)]


# -------------------------------------------------------------- staging
def apply_sharding_rule(primitive, avals: list, out_avals: list, params: dict) -> list:
  """``out_avals`` typed with the shardings ``primitive``'s rule gives for
  operands ``avals`` (some split over Explicit axes). Primitives without a
  rule (higher-order ones, typed by their sub-jaxprs) keep ``out_avals``."""
  rule = primitive.sharding_rule
  if rule is None:
    return out_avals
  mesh = next((a.sharding.mesh for a in avals if a.sharding is not None), None)
  if mesh is None:
    asked = params.get("sharding")
    if not isinstance(asked, NamedSharding):
      return out_avals
    mesh = asked.mesh.abstract_mesh
  specs = [spec_of(a) for a in avals]
  out_specs = rule(specs, avals, out_avals, **params)
  out = []
  for aval, spec in zip(out_avals, out_specs):
    if aval.sharding is not None or spec is None or is_replicated(spec):
      out.append(aval)
    else:
      out.append(aval.update(sharding=NamedSharding(mesh, PartitionSpec(*spec))))
  return out


__all__ = ["MANUAL_AXES_ONLY", "TYPED_BY_SUB_JAXPR", "apply_sharding_rule", "concatenate_rule",
           "elementwise_rule", "is_elementwise_rule", "is_replicated", "join_axes", "operands_split_alike",
           "reduce_axes_rule",
           "replicated_rule", "reshape_spec", "same_as_operand_rule", "spec_of", "type_str",
           "unsharded_axis_rule"]
