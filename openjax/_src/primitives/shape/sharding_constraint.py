"""``sharding_constraint``: a value laid out as a sharding asks (the primitive
behind ``jax.lax.with_sharding_constraint``), and ``reshard`` (behind
``jax.sharding.reshard`` on traced values), which also changes the value's
type over Explicit axes. Values never change; the SPMD partition of a
sharded ``jit`` relays the value to the sharding there.
"""
from __future__ import annotations

from openjax._src.core import Primitive, ShapedArray, pp_eqn
from openjax._src.core.mesh import AxisType, get_concrete_mesh
from openjax._src.core.sharding import NamedSharding, PartitionSpec
from openjax._src.core.sharding_rules import same_as_operand_rule
from openjax._src.primitives.base.ad_util import Zero

sharding_constraint_p = Primitive("sharding_constraint", kind="linear")


def sharding_constraint(x, sharding: NamedSharding):
  """``x`` (traced) constrained to ``sharding`` (a NamedSharding over Auto axes)."""
  return sharding_constraint_p.bind1(x, sharding=sharding, layout=None,
                                     unconstrained_dims=frozenset(),
                                     context_mesh=get_concrete_mesh())


def constraint_spec(sharding: NamedSharding, ndim: int) -> tuple:
  """The spec the constraint asks of an ``ndim``-d value (one entry per dimension)."""
  return tuple(sharding.spec._normalized_spec_for_aval(ndim))


@sharding_constraint_p.def_impl
def _sharding_constraint_impl(x, **params):
  return [x]


@sharding_constraint_p.def_abstract_eval
def _sharding_constraint_abstract_eval(x, *, sharding, layout, unconstrained_dims,
                                       context_mesh):
  sharding.check_compatible_aval(x.shape)
  return [x]


# Over Auto axes the type does not change; the partition reads ``sharding``.
sharding_constraint_p.def_sharding_rule(same_as_operand_rule)


@sharding_constraint_p.def_jvp
def _sharding_constraint_jvp(primals, tangents, **params):
  x, = primals
  t, = tangents
  out = sharding_constraint_p.bind1(x, **params)
  if type(t) is Zero:
    return [out], [t]
  return [out], [sharding_constraint_p.bind1(t, **params)]


@sharding_constraint_p.def_transpose
def _sharding_constraint_transpose(cts, x, **params):
  ct, = cts
  if type(ct) is Zero:
    return [ct]
  return [sharding_constraint_p.bind1(ct, **params)]


@sharding_constraint_p.def_batch
def _sharding_constraint_batch(vals, dims, *, sharding, **params):
  x, = vals
  d, = dims
  if d is None:
    return [sharding_constraint_p.bind1(x, sharding=sharding, **params)], [None]
  # The mapped dimension is whole on every device.
  spec = list(constraint_spec(sharding, x.ndim - 1))
  spec.insert(d, None)
  batched = NamedSharding(sharding.mesh, PartitionSpec(*spec),
                          memory_kind=sharding.memory_kind)
  return [sharding_constraint_p.bind1(x, sharding=batched, **params)], [d]


@sharding_constraint_p.def_lower
def _sharding_constraint_lower(ctx, x, **params):
  return [x]


# ------------------------------------------------------------------ reshard
reshard_p = Primitive("reshard", kind="linear")


def reshard_to(x, sharding: NamedSharding):
  """Traced ``x`` laid out by ``sharding`` (a NamedSharding over a mesh,
  its spec one entry per dimension of ``x``); over Explicit axes the result's
  type is split so (``float32[8@x]``)."""
  return reshard_p.bind1(x, sharding=sharding)


def explicit_spec(sharding: NamedSharding, ndim: int) -> tuple:
  """The spec ``sharding`` gives an ``ndim``-d value's type: its Explicit
  axes (Auto ones are the partitioner's choice, not part of types)."""
  types = sharding.mesh._name_to_type
  out = []
  for p in constraint_spec(sharding, ndim):
    axes = tuple(a for a in ((p,) if isinstance(p, str) else p or ())
                 if types[a] is AxisType.Explicit)
    out.append(None if not axes else axes[0] if len(axes) == 1 else axes)
  return tuple(out)


@reshard_p.def_impl
def _reshard_impl(x, *, sharding):
  return [x]   # eager results are laid out by the sharding rule


@reshard_p.def_abstract_eval
def _reshard_abstract_eval(x, *, sharding):
  sharding.check_compatible_aval(x.shape)
  return [ShapedArray(x.shape, x.dtype, x.weak_type)]   # typed by the rule


@reshard_p.def_sharding_rule
def _reshard_sharding_rule(specs, avals, out_avals, *, sharding):
  return [explicit_spec(sharding, len(avals[0].shape))]


@reshard_p.def_pp
def _reshard_pp(eqn, ctx):
  return pp_eqn(eqn, ctx, params={})   # JAX prints ``c:f32[8@x] = reshard b``


@reshard_p.def_jvp
def _reshard_jvp(primals, tangents, *, sharding):
  x, = primals
  t, = tangents
  out = reshard_to(x, sharding)
  return [out], [t if type(t) is Zero else reshard_to(t, sharding)]


@reshard_p.def_transpose
def _reshard_transpose(cts, x, *, sharding):
  # The cotangent goes back to the operand's layout (whole when it had none).
  ct, = cts
  if type(ct) is Zero:
    return [ct]
  src = x.aval.sharding
  if src is None:
    src = NamedSharding(sharding.mesh, PartitionSpec())
  return [reshard_to(ct, src)]


@reshard_p.def_batch
def _reshard_batch(vals, dims, *, sharding):
  x, = vals
  d, = dims
  if d is None:
    return [reshard_to(x, sharding)], [None]
  spec = list(constraint_spec(sharding, x.ndim - 1))
  spec.insert(d, None)   # the mapped dimension is whole
  return [reshard_to(x, sharding.update(spec=PartitionSpec(*spec)))], [d]


@reshard_p.def_lower
def _reshard_lower(ctx, x, *, sharding):
  return [x]


__all__ = ["constraint_spec", "explicit_spec", "reshard_p", "reshard_to", "sharding_constraint",
           "sharding_constraint_p"]
