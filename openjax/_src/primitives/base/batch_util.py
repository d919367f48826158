"""Helpers for batching rules: moving batch dimensions, materialising them
for unbatched operands, and the standard rules for elementwise and
axis-parameterised primitives. Rules receive ``vals`` and ``dims`` (an int
batch dimension, or ``None`` for an unbatched operand)."""
from __future__ import annotations

from typing import Callable, Sequence

from openjax._src.core import Primitive, get_aval
from openjax._src.primitives.base.structural import broadcast_in_dim, moveaxis, reshape


def bdim_at_front(x, d: int | None, size: int):
  """``x`` with its batch dimension first; unbatched values are broadcast."""
  if d is None:
    aval = get_aval(x)
    return broadcast_in_dim(x, (size,) + aval.shape, tuple(range(1, aval.ndim + 1)))
  return moveaxis(x, d, 0)


def axis_size(vals: Sequence, dims: Sequence) -> int:
  for v, d in zip(vals, dims):
    if d is not None:
      return get_aval(v).shape[d]
  raise ValueError("no batched operand")


def broadcast_batcher(prim: Primitive) -> Callable:
  """Batching rule for an n-ary elementwise primitive (lax broadcasting: rank-0
  operands broadcast, equal-rank size-1 dims broadcast). Operands batched at
  the same dim with equal rank pass straight through; otherwise batch dims
  move to the front and unbatched operands of positive rank get a leading 1."""
  def rule(vals, dims, **params):
    ranks = [get_aval(v).ndim for v in vals]
    batched = [(r, d) for r, d in zip(ranks, dims) if d is not None]
    first = batched[0]
    if all((r, d) == first if d is not None else r == 0 for r, d in zip(ranks, dims)):
      outs = prim.bind(*vals, **params)
      return outs, [first[1]] * len(outs)
    out_rank = max(r - (d is not None) for r, d in zip(ranks, dims)) + 1
    new = []
    for v, r, d in zip(vals, ranks, dims):
      if d is None:
        if r == 0:
          new.append(v)
          continue
        shape = get_aval(v).shape
        v = reshape(v, (1,) * (out_rank - r) + shape)
      else:
        v = moveaxis(v, d, 0)
        shape = get_aval(v).shape
        if r < out_rank:
          v = reshape(v, shape[:1] + (1,) * (out_rank - r) + shape[1:])
      new.append(v)
    outs = prim.bind(*new, **params)
    return outs, [0] * len(outs)
  return rule


def defbroadcasting(*prims: Primitive) -> None:
  """Install ``broadcast_batcher`` on elementwise primitives."""
  for p in prims:
    if p.multiple_results:
      raise ValueError(f"defbroadcasting: {p} has multiple results")
    p.def_batch(broadcast_batcher(p))


def defvectorized(*prims: Primitive) -> None:
  """Unary primitives that act elementwise: the batch dim passes through."""
  for p in prims:
    def rule(vals, dims, _p=p, **params):
      x, = vals
      d, = dims
      outs = _p.bind(x, **params)
      return outs, [d] * len(outs)
    p.def_batch(rule)
