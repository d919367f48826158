"""Donated arguments of a sharded ``jit`` (``donate_argnums`` on Arrays split
over devices).

As in JAX, donation is decided per device on the local pieces: a donated
argument is consumed (deleted after the call, each of its shards too) when
some result's piece can take its buffer, one of the same shape and dtype, or
else (XLA's buffer donors) one of the same byte size; each result takes one
argument. Other donated arguments stay alive and JAX's warning names their
piece (``Some donated buffers were not usable: float32[2].``).

The memory is really reused where the partition allows: a part (segment)
of the per-device program that is the last to read a consumed argument
donates its piece to a same-typed result of that part.
"""
from __future__ import annotations

import warnings

from openjax._src.core import Array
from openjax._src.lowering.context import plan_donation


def _resolved(plan) -> dict:
  """Each alias key (a result forwarded unchanged) mapped to its source."""
  source = {}
  for kind, *rest in plan.steps:
    if kind != "segment":
      continue
    for op in rest[0].ops:
      if op[0] == "alias":
        source[op[2]] = source.get(op[1], op[1])
  return source


def consumed_inputs(plan, donated: tuple) -> frozenset:
  """The positions of donated arguments the call consumes; warns (as JAX)
  about the rest."""
  source = _resolved(plan)
  inputs = set(plan.in_keys)
  seen, free = set(), []
  for k in plan.out_keys:
    k = source.get(k, k)
    # Constants (not laid out) and arguments passed through take no buffer.
    if k not in plan.layouts or k in inputs or k in seen:
      continue
    seen.add(k)
    free.append(plan._local_aval(k))
  consumed, unusable = set(), []
  wanted = [i for i, d in enumerate(donated) if d]
  for exact in (True, False):
    for i in list(wanted):
      a = plan._local_aval(plan.in_keys[i])
      for j, o in enumerate(free):
        if (o.shape == a.shape and o.dtype == a.dtype) if exact else \
            o.size * o.dtype.itemsize == a.size * a.dtype.itemsize:
          consumed.add(i)
          wanted.remove(i)
          del free[j]
          break
  unusable = [plan._local_aval(plan.in_keys[i]).str_short(short_dtypes=False) for i in wanted]
  if unusable:
    warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}.\n"
                  "See an explanation at "
                  "https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
                  UserWarning, stacklevel=5)
  return frozenset(consumed)


def segment_donations(plan, consumed: frozenset) -> dict:
  """For each segment (by id), which of its inputs it donates: a consumed
  argument that no later step reads and that is no result, lent to a result
  of the segment of the same piece shape and dtype."""
  keys = {plan.in_keys[i] for i in consumed}
  if not keys:
    return {}
  source = _resolved(plan)
  results = {source.get(k, k) for k in plan.out_keys}
  read_later: set = set()
  out = {}
  for kind, *rest in reversed(plan.steps):
    if kind == "host":
      read_later.add(rest[0])
      continue
    seg = rest[0]
    flags = tuple(k in keys and k not in read_later and k not in results
                  for k in seg.inputs)
    if any(flags):
      if seg.closed is None:
        plan._compile(seg)
      aliases, _ = plan_donation(seg.closed.jaxpr, flags + (False,) * seg.needs_coords)
      flags = tuple(i in aliases for i in range(len(seg.inputs)))
    out[id(seg)] = flags if any(flags) else None
    read_later.update(seg.inputs)
  return out


def own_pieces(x, pieces: list) -> bool:
  """Whether ``pieces`` are ``x``'s own per-device Arrays (one each), which a
  device may consume; otherwise (a replicated argument passed whole to
  every device, NumPy slices) a donating program gets a copy."""
  return (type(x) is Array and len({id(p) for p in pieces}) == len(pieces)
          and all(type(p) is Array and p is not x for p in pieces))


__all__ = ["consumed_inputs", "own_pieces", "segment_donations"]
