"""``device_put_p``: ``jax.device_put`` on traced values. Eager calls move
arrays in the runtime (``runtime/transfer.py``); a traced call binds this
primitive, so jaxprs show ``device_put`` as JAX's do. Its value is its
operands': openjax's compiled programs run on one device each, so the
placement it records is the runtime's business and the lowering is the
identity."""
from __future__ import annotations

import enum

import numpy as np

from openjax._src.core import Primitive
from openjax._src.core.sharding_rules import per_operand_rule
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal

__all__ = ["ArrayCopySemantics", "copy_semantics_of", "device_put_p"]


class ArrayCopySemantics(enum.Enum):
  """How ``device_put`` may treat its input's buffer (JAX's enum): copy it
  always, reuse it when the placement does not change, or donate it."""
  ALWAYS_COPY = 0
  REUSE_INPUT = 1
  DONATE_INPUT = 2

  def __repr__(self):
    return f"ArrayCopySemantics.{self.name}"


def copy_semantics_of(donate: bool, may_alias) -> ArrayCopySemantics:
  """JAX's choice from ``device_put``'s ``donate``/``may_alias`` arguments."""
  if donate and may_alias is False:
    raise ValueError("device_put: donate=True and may_alias=False contradict each other "
                     "(donating lets the result reuse the input's buffer); pass one of them.")
  if donate:
    return ArrayCopySemantics.DONATE_INPUT
  return ArrayCopySemantics.ALWAYS_COPY if may_alias is False else ArrayCopySemantics.REUSE_INPUT


# ------------------------------------------------------------------ device_put
device_put_p = Primitive("device_put", multiple_results=True, kind="linear")


@device_put_p.def_impl
def _device_put_impl(*xs, devices, srcs, copy_semantics):
  return [np.array(x, copy=True) if c is ArrayCopySemantics.ALWAYS_COPY else x
          for x, c in zip(xs, copy_semantics)]


@device_put_p.def_abstract_eval
def _device_put_abstract_eval(*avals, devices, srcs, copy_semantics):
  if not len(avals) == len(devices) == len(srcs) == len(copy_semantics):
    raise TypeError(f"device_put: {len(avals)} operands but {len(devices)} devices, "
                    f"{len(srcs)} srcs and {len(copy_semantics)} copy_semantics; pass one of "
                    "each per operand.")
  return list(avals)


device_put_p.def_sharding_rule(per_operand_rule)


@device_put_p.def_jvp
def _device_put_jvp(primals, tangents, *, devices, srcs, copy_semantics):
  outs = device_put_p.bind(*primals, devices=devices, srcs=srcs,
                           copy_semantics=copy_semantics)
  live = [i for i, t in enumerate(tangents) if type(t) is not Zero]
  t_outs = [Zero.from_primal_value(o) for o in outs]
  if live:
    moved = device_put_p.bind(*(tangents[i] for i in live),
                              devices=tuple(devices[i] for i in live),
                              srcs=tuple(srcs[i] for i in live),
                              copy_semantics=tuple(copy_semantics[i] for i in live))
    for i, t in zip(live, moved):
      t_outs[i] = t
  return outs, t_outs


@device_put_p.def_transpose
def _device_put_transpose(cts, *xs, devices, srcs, copy_semantics):
  # The cotangent goes back where the operand came from, into a new buffer.
  out = [None] * len(xs)
  live = [i for i, x in enumerate(xs) if is_undefined_primal(x)]
  for i in live:
    out[i] = Zero(xs[i].aval)
  moving = [i for i in live if type(cts[i]) is not Zero]
  if moving:
    moved = device_put_p.bind(*(cts[i] for i in moving),
                              devices=tuple(srcs[i] for i in moving),
                              srcs=tuple(devices[i] for i in moving),
                              copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,) * len(moving))
    for i, ct in zip(moving, moved):
      out[i] = ct
  return out


@device_put_p.def_batch
def _device_put_batch(vals, dims, **params):
  return device_put_p.bind(*vals, **params), list(dims)


@device_put_p.def_lower
def _device_put_lower(ctx, *xs, devices, srcs, copy_semantics):
  return list(xs)
