"""Point-to-point collectives: ``psend_p`` and ``precv_p`` (JAX's
``lax.psend``/``lax.precv``, analogs of XLA's Send and Recv).

``psend(x, axis_name, perm)`` sends a device's ``x`` to the destination of
each pair ``(source, destination)`` of ``perm`` whose source it is, and
gives a token; ``precv(token, out_shape, axis_name, perm)`` gives on each
destination the value its source sent (zeros of ``out_shape`` on a device no
pair sends to). The k-th precv on a channel (source -> destination) gets
the k-th psend's value, in either program order on the two devices, so
both a ``psend`` then ``precv`` in every device's program and a
``precv`` before the ``psend`` (the destination waits) work.

JAX 0.10.2 runs them on GPUs only (on CPU every lowering raises
NotImplementedError, and cyclic pairs fail on GPU). openjax runs them
wherever devices run a ``shard_map`` or ``pmap`` body each in its own
thread (eager, interpreted or compiled ``jit``): the send posts to the
run's mailbox (``runtime.collectives``) and the receive takes from it, so
cycles work too; a precv no psend can ever match raises ("Expected send to
match recv", or a detected deadlock) on every device instead of hanging.
A program mapped over the axis in one place (``vmap`` with that
``axis_name``, where JAX 0.10.2 fails, or a shard_map nested in another
device run or inside a loop or branch of a jit, which openjax runs mapped)
has every member's value at hand: psend's batching rule queues the rows it
sends on their channels (per trace), and precv's takes them in the same
order, so the pair becomes a permutation of rows; a precv before its psend
cannot be expressed there and raises. They have effects, so dead code
elimination keeps them; like JAX, they have no derivative.
"""
from __future__ import annotations

import collections
import weakref

import numpy as np

from openjax._src import dtypes
from openjax._src.core import (AbstractToken, Effect, Primitive, ShapedArray, abstract_token,
                               get_aval)
from openjax._src.core.sharding_rules import MANUAL_AXES_ONLY
from openjax._src.primitives.base.structural import broadcast_in_dim, expand_dims, moveaxis
from openjax._src.primitives.shape.shape import concatenate, full, index_in_dim
from openjax._src.primitives.identity.tokens import create_token
from openjax._src.primitives.collectives.collectives import (_check_axis_names, _device_member,
                                                             _names, bound_axis_size)

__all__ = ["psend_p", "precv_p", "psend_array", "precv_array", "out_shape_aval",
           "single_side_collective_effect"]


class SingleSideCollectiveEffect(Effect):
  """The effect of psend and precv: a send or receive must run even when its
  result is unused, and in program order (the k-th receive on a channel
  matches the k-th send)."""

  def __str__(self):
    return "SingleSideCollective"


single_side_collective_effect = SingleSideCollectiveEffect()


def _effects(**params):
  return frozenset({single_side_collective_effect})


def _check_pairs(perm: tuple, names: tuple, api_name: str) -> None:
  srcs = [s for s, _ in perm]
  dsts = [t for _, t in perm]
  if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
    raise ValueError(f"{api_name} sources and destinations must be unique, got {perm}.")
  size = 1
  for n in names:
    size *= bound_axis_size(n)
  if not all(0 <= i < size for i in srcs + dsts):
    raise ValueError(f"{api_name}: the pairs {perm} name devices outside [0, {size}), the "
                     f"size of the axis {names}; give indices into the axis.")


def _one_mapped_axis(api_name: str, names: tuple, frame) -> None:
  if names != (frame,):
    raise NotImplementedError(
        f"{api_name} over the axes {names}, one of them ({frame!r}) mapped in one program "
        "(vmap, or a shard_map run mapped inside a loop or branch of a jit): only a single "
        "mapped axis is supported there; use lax.ppermute.")


# Rows sent by psend over a mapped axis, waiting for their precv: per
# mapping (the BatchTrace: they go with it, and one mapping's leftovers never
# reach another's precv), one queue per channel (source, destination).
_mapped_mail: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _channels(frame) -> dict:
  channels = _mapped_mail.get(frame.trace)
  if channels is None:
    channels = _mapped_mail[frame.trace] = collections.defaultdict(collections.deque)
  return channels


def _batched_front(x, d, size: int):
  if d is None:
    shape = x.aval.shape if hasattr(x, "aval") else np.shape(x)
    return broadcast_in_dim(x, (size, *shape), tuple(range(1, len(shape) + 1)))
  return x if d == 0 else moveaxis(x, d, 0)


# -------------------------------------------------------------------- psend
psend_p = Primitive("psend")
psend_p.batch_needs_axis = True


def psend_array(x, axis_name: tuple, perm):
  return psend_p.bind1(x, axis_name=tuple(axis_name), perm=tuple(tuple(p) for p in perm))


@psend_p.def_impl
def _psend_impl(x, *, axis_name, perm):
  names = _names(axis_name)
  # The value itself is posted (an Array may still be computing: the
  # receiver waits for it, not the sender).
  _device_member(names, "psend").send(names, perm, x, "psend")
  return [np.zeros((0,), np.bool_)]


@psend_p.def_abstract_eval
def _psend_abstract_eval(x, *, axis_name, perm):
  names = _names(axis_name)
  _check_axis_names(names, "psend")
  _check_pairs(perm, names, "psend")
  return [abstract_token]


psend_p.mark_not_applicable("sharding_rule", MANUAL_AXES_ONLY)
psend_p.mark_not_applicable("jvp", "JAX defines no derivative of psend")
# The result is a token (no vma); the operand must vary over the axes, as
# JAX's psend inserts a pvary on it.
psend_p.vma_rule = lambda in_vma, *, axis_name, perm: frozenset()
psend_p.vma_needs = lambda *, axis_name, perm: frozenset(_names(axis_name))


@psend_p.def_batch
def _psend_batch(vals, dims, axis_data, *, axis_name, perm):
  # Over another axis every member sends its whole batch (an unbatched value
  # broadcast), so the matching precv always receives a batch.
  (x,), (d,) = vals, dims
  names = _names(axis_name)
  x = _batched_front(x, d, axis_data.size)
  if axis_data.name not in names:
    return psend_p.bind(x, axis_name=axis_name, perm=perm), [None]
  # Every member's value is here: each pair's row waits for its precv.
  _one_mapped_axis("psend", names, axis_data.name)
  _check_pairs(perm, names, "psend")
  channels = _channels(axis_data)
  for s, t in perm:
    channels[(s, t)].append(index_in_dim(x, s, 0, keepdims=False))
  return [create_token()], [None]


psend_p.mark_not_applicable(
    "lower", "psend runs between the devices of a shard_map or pmap run (each device's "
    "program is split there); JAX lowers it on GPUs only")
psend_p.def_effects(_effects)


# -------------------------------------------------------------------- precv
precv_p = Primitive("precv")
precv_p.batch_needs_axis = True


def precv_array(token, out_shape: ShapedArray, axis_name: tuple, perm):
  return precv_p.bind1(token, out_shape=out_shape, axis_name=tuple(axis_name),
                       perm=tuple(tuple(p) for p in perm))


@precv_p.def_impl
def _precv_impl(token, *, out_shape, axis_name, perm):
  names = _names(axis_name)
  value = _device_member(names, "precv").recv(names, perm, "precv")
  if value is None:   # no pair sends to this device
    return [np.zeros(out_shape.shape, out_shape.dtype)]
  value = np.asarray(value)
  if value.shape != out_shape.shape or value.dtype != out_shape.dtype:
    got = ShapedArray(value.shape, value.dtype).str_short()
    raise TypeError(f"precv: received {got} from the matching psend, but out_shape is "
                    f"{out_shape.str_short()}; pass the shape and dtype of the value sent "
                    "(jax.ShapeDtypeStruct.like(x)).")
  return [value]


@precv_p.def_abstract_eval
def _precv_abstract_eval(token, *, out_shape, axis_name, perm):
  names = _names(axis_name)
  _check_axis_names(names, "precv")
  if type(token) is not AbstractToken:
    raise TypeError(f"precv: the first argument must be a token (from psend or "
                    f"lax.create_token()), got {token.str_short()}.")
  _check_pairs(perm, names, "precv")
  return [ShapedArray(out_shape.shape, out_shape.dtype, False)]


precv_p.mark_not_applicable("sharding_rule", MANUAL_AXES_ONLY)
precv_p.mark_not_applicable("jvp", "JAX defines no derivative of precv")


@precv_p.def_batch
def _precv_batch(vals, dims, axis_data, *, out_shape, axis_name, perm):
  (token,), (d,) = vals, dims
  names = _names(axis_name)
  if axis_data.name in names:
    _one_mapped_axis("precv", names, axis_data.name)
    return [_received_rows(axis_data, out_shape, perm)], [0]
  if d is not None:
    raise ValueError("precv: a token cannot be batched (vmap mapped over a token); pass "
                     "tokens with in_axes=None.")
  batched = ShapedArray((axis_data.size, *out_shape.shape), out_shape.dtype)
  return precv_p.bind(token, out_shape=batched, axis_name=axis_name, perm=perm), [0]


def _received_rows(frame, out_shape: ShapedArray, perm: tuple):
  """Every member's precv result over a mapped axis (leading dimension): the
  row queued on its channel by the psend before, zeros without a pair."""
  _check_pairs(perm, (frame.name,), "precv")
  channels = _channels(frame)
  source = {t: s for s, t in perm}
  rows = []
  for t in range(frame.size):
    if t not in source:
      rows.append(full(out_shape.shape, 0, out_shape.dtype))
      continue
    queue = channels.get((source[t], t))
    if not queue:
      raise ValueError(
          f"precv over the axis {frame.name!r} mapped in one program (vmap, or a shard_map "
          "run mapped inside a loop or branch of a jit): no psend with the pair "
          f"{(source[t], t)} came before it in this program. There a psend must come "
          "before its precv, in the same function (not in another loop iteration or branch).")
    row = queue.popleft()
    got = get_aval(row)
    if got.shape != out_shape.shape or got.dtype != out_shape.dtype:
      raise TypeError(f"precv: received {got.str_short()} from the matching psend, but "
                      f"out_shape is {out_shape.str_short()}; pass the shape and dtype of the "
                      "value sent (jax.ShapeDtypeStruct.like(x)).")
    rows.append(row)
  return concatenate([expand_dims(r, (0,)) for r in rows], 0)


precv_p.mark_not_applicable(
    "lower", "precv runs between the devices of a shard_map or pmap run (each device's "
    "program is split there); JAX lowers it on GPUs only")
precv_p.def_effects(_effects)


def out_shape_aval(out_shape) -> ShapedArray:
  """``precv``'s ``out_shape`` (a ShapeDtypeStruct or anything with
  ``shape`` and ``dtype``) as the ShapedArray parameter JAX binds."""
  return ShapedArray(tuple(int(n) for n in out_shape.shape),
                     dtypes.canonicalize_dtype(np.dtype(out_shape.dtype)))
