"""Vectorisation: the batching trace behind ``vmap``.

A ``BatchTracer`` holds a value with one extra (batch) dimension at
``batch_dim`` (``None``: not batched). ``BatchTrace.process_primitive`` reads
exactly one slot, ``batch``: ``rule(vals, dims, **params) -> (outs, out_dims)``.
Primitives that need the named axis (collectives) set ``batch_needs_axis`` and
receive ``axis_name=`` and ``axis_size=`` too.
"""
from __future__ import annotations

from typing import Callable, Sequence

from openjax._src.core import (ClosedJaxpr, ShapedArray, Trace, Tracer, current_trace,
                               eval_jaxpr, get_aval, jaxpr_transforms, set_current_trace)
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.shape import broadcast_in_dim, transpose

not_mapped = None


class BatchTracer(Tracer):
  __slots__ = ("val", "batch_dim")

  def __init__(self, trace: "BatchTrace", val, batch_dim: int | None):
    self._trace = trace
    self.val = val
    self.batch_dim = batch_dim

  @property
  def aval(self):
    a = get_aval(self.val)
    if self.batch_dim is None:
      return a
    shape = a.shape[:self.batch_dim] + a.shape[self.batch_dim + 1:]
    return ShapedArray(shape, a.dtype, a.weak_type)

  def _provenance(self):
    v = self.val
    return v._provenance() if isinstance(v, Tracer) else ""


class BatchTrace(Trace):
  """Maps every primitive over one named (or anonymous) axis."""

  def __init__(self, parent: Trace, axis_size: int, axis_name=None, spmd_axis_name=None):
    super().__init__()
    self.parent = parent
    self.axis_size = axis_size
    self.axis_name = axis_name
    self.spmd_axis_name = spmd_axis_name

  def to_batch_info(self, x):
    if isinstance(x, BatchTracer) and x._trace is self:
      return x.val, x.batch_dim
    return x, not_mapped

  def process_primitive(self, primitive, args, params):
    vals, dims = [], []
    for x in args:
      v, d = self.to_batch_info(x)
      vals.append(v)
      dims.append(d)
    needs_axis = getattr(primitive, "batch_needs_axis", False)
    if all(d is None for d in dims) and not needs_axis:
      with set_current_trace(self.parent):
        return primitive.bind(*vals, **params)
    rule = primitive.rule("batch")
    with set_current_trace(self.parent):
      if needs_axis:
        outs, out_dims = rule(vals, dims, axis_name=self.axis_name,
                              axis_size=self.axis_size, **params)
      else:
        outs, out_dims = rule(vals, dims, **params)
    return [BatchTracer(self, o, d) if d is not None else o for o, d in zip(outs, out_dims)]


def moveaxis(x, src: int, dst: int):
  """Move axis ``src`` of ``x`` to ``dst`` (no-op when equal)."""
  nd = len(get_aval(x).shape)
  src, dst = src % nd, dst % nd
  if src == dst:
    return x
  perm = [i for i in range(nd) if i != src]
  perm.insert(dst, src)
  return transpose(x, tuple(perm))


def matchaxis(x, src: int | None, dst: int | None, axis_size: int, *, what: str = "output"):
  """Put the batch dim of ``x`` at ``dst``, broadcasting unbatched values."""
  if dst is None:
    if src is None:
      return x
    raise ValueError(f"vmap has mapped {what} but out_axes is None")
  if src is None:
    aval = get_aval(x)
    dst = dst % (aval.ndim + 1)
    shape = aval.shape[:dst] + (axis_size,) + aval.shape[dst:]
    dims = tuple(i if i < dst else i + 1 for i in range(aval.ndim))
    return broadcast_in_dim(x, shape, dims)
  return moveaxis(x, src, dst)


def batch_flat(fun: Callable[..., Sequence], args: Sequence, in_dims: Sequence,
               out_dims: Sequence, axis_size: int, axis_name=None, spmd_axis_name=None) -> list:
  """Run ``fun`` (flat in, flat list out) with ``args`` batched along
  ``in_dims``; outputs have their batch dims at ``out_dims``."""
  trace = BatchTrace(current_trace(), axis_size, axis_name, spmd_axis_name)
  tracers = [BatchTracer(trace, a, d) if d is not None else a for a, d in zip(args, in_dims)]
  try:
    with set_current_trace(trace):
      outs = fun(*tracers)
    vals_dims = [trace.to_batch_info(o) for o in outs]
  finally:
    trace.invalidate()
  return [matchaxis(v, d, od, axis_size) for (v, d), od in zip(vals_dims, out_dims)]


def batch_jaxpr(closed: ClosedJaxpr, in_dims: Sequence, axis_size: int, axis_name=None,
                out_dims: Sequence | None = None, spmd_axis_name=None):
  """A closed jaxpr mapping ``closed`` over an axis: inputs batched at
  ``in_dims`` (None: unbatched); outputs at ``out_dims`` (default: all at 0,
  unbatched outputs broadcast). Returns (closed_batched, out_dims)."""
  in_avals = []
  for a, d in zip(closed.in_avals, in_dims):
    if d is None:
      in_avals.append(a)
    else:
      shape = a.shape[:d] + (axis_size,) + a.shape[d:]
      in_avals.append(ShapedArray(shape, a.dtype, a.weak_type))
  out_dims = [0] * len(closed.out_avals) if out_dims is None else list(out_dims)

  def fun(*args):
    return batch_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs), args,
                      in_dims, out_dims, axis_size, axis_name, spmd_axis_name)

  jaxpr, consts = trace_to_jaxpr(fun, in_avals)
  return ClosedJaxpr(jaxpr, consts), out_dims


jaxpr_transforms.batch_jaxpr = batch_jaxpr
