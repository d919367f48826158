"""Vectorisation: the batching trace behind ``vmap``.

A ``BatchTracer`` holds a value with one extra (batch) dimension at
``batch_dim`` (``None``: not batched). ``BatchTrace.process_primitive`` reads
exactly one slot, ``batch``: ``rule(vals, dims, **params) -> (outs, out_dims)``.
Primitives that need the named axis (collectives, and higher-order primitives
that batch inner jaxprs) set ``batch_needs_axis`` and receive
``axis_data=AxisData(name, size, spmd_name, trace)`` too.
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.core import (ClosedJaxpr, ShapedArray, Trace, Tracer, current_trace, eval_jaxpr,
                               get_aval, set_current_trace)
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.collectives.collectives import extend_axis_env
from openjax._src.primitives.base.structural import broadcast_in_dim, canonicalize_axis, moveaxis

not_mapped = None


class AxisData(NamedTuple):
  """The axis a BatchTrace maps over, as batch rules of collectives see it
  (``trace``: that BatchTrace, for rules that keep state for one mapping,
  as psend's rows waiting for their precv)."""
  name: object
  size: int
  spmd_name: object = None
  trace: object = None


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
        outs, out_dims = rule(vals, dims, axis_data=AxisData(
            self.axis_name, self.axis_size, self.spmd_axis_name, self), **params)
      else:
        outs, out_dims = rule(vals, dims, **params)
    return [BatchTracer(self, o, d) if d is not None else o for o, d in zip(outs, out_dims)]


class SpecMatchError(Exception):
  """An output batched at ``src`` whose out_axes entry ``dst`` is None; the
  vmap API turns it into an error naming the output's key path."""

  def __init__(self, leaf_idx, src, dst):
    super().__init__(leaf_idx, src, dst)
    self.leaf_idx, self.src, self.dst = leaf_idx, src, dst


def _broadcast(x, axis_size: int, dst: int):
  aval = get_aval(x)
  dst = canonicalize_axis(dst, aval.ndim + 1)
  shape = aval.shape[:dst] + (axis_size,) + aval.shape[dst:]
  if aval.dtype == dtypes.float0:   # float0 carries no data: a fresh zero array
    return np.zeros(shape, dtypes.float0)
  dims = tuple(i if i < dst else i + 1 for i in range(aval.ndim))
  return broadcast_in_dim(x, shape, dims)


def matchaxis(x, src: int | None, dst: int | None, axis_size: int, axis_name=None):
  """Put the batch dim of ``x`` at ``dst``, broadcasting unbatched values."""
  if src == dst:
    return x
  if dst is None:
    if axis_name is not None:
      raise ValueError(f"vmap has mapped output (axis_name={axis_name}) but out_axes is {dst}")
    raise SpecMatchError(None, src, dst)
  try:
    get_aval(x)
  except TypeError as e:
    raise TypeError(f"Output from batched function {x!r} with type {type(x)} is not a "
                    "valid JAX type") from e
  if src is None:
    return _broadcast(x, axis_size, dst)
  aval = get_aval(x)
  if aval.dtype == dtypes.float0:
    shape = list(aval.shape)
    n = shape.pop(canonicalize_axis(src, aval.ndim))
    shape.insert(canonicalize_axis(dst, aval.ndim), n)
    return np.zeros(tuple(shape), dtypes.float0)
  return moveaxis(x, src, dst)


def batch_flat(fun: Callable[..., Sequence], args: Sequence, in_dims: Sequence,
               out_dims, axis_size: int, axis_name=None, spmd_axis_name=None) -> list:
  """Run ``fun`` (flat in, flat list out) with ``args`` batched along
  ``in_dims``; outputs have their batch dims at ``out_dims`` (a sequence, or
  a thunk giving one once ``fun`` has run: the output tree is known only
  then). An output batched where ``out_dims`` says None raises
  ``SpecMatchError`` with the output's index."""
  trace = BatchTrace(current_trace(), axis_size, axis_name, spmd_axis_name)
  tracers = [BatchTracer(trace, a, d) if d is not None else a for a, d in zip(args, in_dims)]
  frames = [(axis_name, axis_size)] if axis_name is not None else []
  try:
    with set_current_trace(trace), extend_axis_env(frames):
      outs = fun(*tracers)
    vals_dims = [trace.to_batch_info(o) for o in outs]
  finally:
    trace.invalidate()
  if callable(out_dims):
    out_dims = out_dims()
  results = []
  for i, ((v, d), od) in enumerate(zip(vals_dims, out_dims)):
    try:
      results.append(matchaxis(v, d, od, axis_size, axis_name))
    except SpecMatchError as e:
      raise SpecMatchError(i, e.src, e.dst) from None
  return results


def batch_jaxpr(closed: ClosedJaxpr, in_dims: Sequence, axis_size: int, axis_name=None,
                out_dims: Sequence | None = None, spmd_axis_name=None,
                instantiate: bool = True, in_shardings: Sequence | None = None):
  """A closed jaxpr mapping ``closed`` over an axis: inputs batched at
  ``in_dims`` (None: unbatched); outputs at ``out_dims`` (default: all at 0).
  With ``instantiate=False`` outputs that do not depend on a batched input
  stay unbatched (their out dim is None) instead of being broadcast.
  ``in_shardings``: the batched values' shardings (their avals'), so the
  batched program is typed as they are split. Returns (closed_batched,
  out_dims)."""
  in_avals = []
  for i, (a, d) in enumerate(zip(closed.in_avals, in_dims)):
    if d is None:
      in_avals.append(a)
    else:
      shape = a.shape[:d] + (axis_size,) + a.shape[d:]
      sharding = in_shardings[i] if in_shardings is not None else None
      in_avals.append(ShapedArray(shape, a.dtype, a.weak_type, sharding))
  want = [0] * len(closed.out_avals) if out_dims is None else list(out_dims)
  box: list = []

  def fun(*args):
    trace = BatchTrace(current_trace(), axis_size, axis_name, spmd_axis_name)
    tracers = [BatchTracer(trace, a, d) if d is not None else a for a, d in zip(args, in_dims)]
    try:
      with set_current_trace(trace), extend_axis_env(
          [(axis_name, axis_size)] if axis_name is not None else []):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *tracers)
      vals_dims = [trace.to_batch_info(o) for o in outs]
    finally:
      trace.invalidate()
    dims = [w if (instantiate or d is not None) else None
            for (_, d), w in zip(vals_dims, want)]
    box.append(dims)
    return [matchaxis(v, d, od, axis_size, axis_name)
            for (v, d), od in zip(vals_dims, dims)]

  jaxpr, consts = trace_to_jaxpr(fun, in_avals)
  return ClosedJaxpr(jaxpr, consts), box[0]

