"""``sharding_constraint``: a value laid out as a sharding asks (the primitive
behind ``jax.lax.with_sharding_constraint``). Values never change; the SPMD
partition of a sharded ``jit`` relays the value to ``sharding`` there.
"""
from __future__ import annotations

from openjax._src.core import Primitive
from openjax._src.core.mesh import get_concrete_mesh
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


__all__ = ["constraint_spec", "sharding_constraint", "sharding_constraint_p"]
