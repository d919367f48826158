"""Forward-mode differentiation: the JVP trace.

A ``JVPTracer`` carries a primal and a tangent (possibly a symbolic ``Zero``).
``JVPTrace.process_primitive`` reads exactly one slot, ``jvp``; rules run in
the parent trace, so their primal and tangent computations are themselves
traced by whatever encloses the ``jvp`` (eval, jit staging, linearize, ...).
"""
from __future__ import annotations

from typing import Callable, Sequence

from openjax._src.core import (ClosedJaxpr, Trace, Tracer, current_trace, eval_jaxpr, get_aval,
                               set_current_trace)
from openjax._src.errors import ConcretizationTypeError, TracerArrayConversionError
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.base.ad_util import Zero, tangent_aval
from openjax._src.primitives.base.structural import instantiate_zeros


class JVPTracer(Tracer):
  __slots__ = ("primal", "tangent")

  def __init__(self, trace: "JVPTrace", primal, tangent):
    self._trace = trace
    self.primal = primal
    self.tangent = tangent

  @property
  def aval(self):
    return get_aval(self.primal)

  def to_concrete_value(self):
    p = self.primal
    return p.to_concrete_value() if isinstance(p, Tracer) else getattr(p, "_value", p)

  def _provenance(self):
    p = self.primal
    return p._provenance() if isinstance(p, Tracer) else ""

  # As in JAX, a differentiated value may steer Python control flow (bool,
  # int, indexing, ``item``) when its primal is concrete, but never becomes a
  # NumPy array or a Python float: the derivative would be silently lost.
  def __array__(self, dtype=None, copy=None):
    raise TracerArrayConversionError(self)

  def __float__(self):
    raise ConcretizationTypeError(self, "The problem arose with the `float` function. ")

  def __complex__(self):
    raise ConcretizationTypeError(self, "The problem arose with the `complex` function. ")

  def tolist(self):
    raise ConcretizationTypeError(
        self, f"The tolist() method was called on {self.aval.str_short(short_dtypes=False)}.\n")


class JVPTrace(Trace):
  """Differentiates every primitive applied to its tracers."""

  def __init__(self, parent: Trace):
    super().__init__()
    self.parent = parent

  def to_primal_tangent(self, x):
    if isinstance(x, JVPTracer) and x._trace is self:
      return x.primal, x.tangent
    return x, Zero.from_primal_value(x)

  def process_primitive(self, primitive, args, params):
    primals, tangents = [], []
    for x in args:
      p, t = self.to_primal_tangent(x)
      primals.append(p)
      tangents.append(t)
    if all(type(t) is Zero for t in tangents):
      with set_current_trace(self.parent):
        return primitive.bind(*primals, **params)
    if primitive.jvp is None and primitive.kind == "nondifferentiable":
      with set_current_trace(self.parent):
        outs = primitive.bind(*primals, **params)
      return outs
    rule = primitive.rule("jvp")
    with set_current_trace(self.parent):
      primals_out, tangents_out = rule(primals, tangents, **params)
    return [JVPTracer(self, p, t) if type(t) is not Zero else p
            for p, t in zip(primals_out, tangents_out)]


def jvp_flat(fun: Callable[..., Sequence], primals: Sequence, tangents: Sequence,
             *, instantiate: bool | Sequence[bool] = True, has_aux: bool = False):
  """Run ``fun`` (flat in, flat list out) on JVP tracers; returns the primal
  outputs and their tangents (zeros instantiated where asked). With
  ``has_aux`` ``fun`` returns ``(outs, aux_leaves)`` and the aux leaves come
  back third, as primal values (never tracers of this JVP)."""
  parent = current_trace()
  trace = JVPTrace(parent)
  tracers = [JVPTracer(trace, p, t) if type(t) is not Zero else p
             for p, t in zip(primals, tangents)]
  try:
    with set_current_trace(trace):
      outs = fun(*tracers)
      if has_aux:
        outs, aux = outs
        aux = [trace.to_primal_tangent(a)[0] if isinstance(a, JVPTracer) else a for a in aux]
    primals_out, tangents_out = [], []
    for o in outs:
      p, t = trace.to_primal_tangent(o)
      primals_out.append(p)
      tangents_out.append(t)
  finally:
    trace.invalidate()
  if isinstance(instantiate, bool):
    instantiate = [instantiate] * len(tangents_out)
  tangents_out = [instantiate_zeros(t) if inst else t
                  for t, inst in zip(tangents_out, instantiate)]
  return (primals_out, tangents_out, aux) if has_aux else (primals_out, tangents_out)


def jvp_jaxpr(closed, nonzeros: Sequence[bool], instantiate: bool | Sequence[bool]):
  """The JVP of a closed jaxpr: inputs are the primals then the tangents of
  the inputs marked in ``nonzeros``; outputs the primals then the nonzero
  tangents. Returns (closed_jvp, out_nonzeros)."""
  from_avals = closed.in_avals
  tan_avals = [tangent_aval(a) for a, nz in zip(from_avals, nonzeros) if nz]
  n = len(from_avals)
  out_nz_box: list = []
  if isinstance(instantiate, bool):
    instantiate = [instantiate] * len(closed.out_avals)

  def fun(*args):
    primals, tans = args[:n], iter(args[n:])
    tangents = [next(tans) if nz else Zero(tangent_aval(a)) for a, nz in zip(from_avals, nonzeros)]
    p_out, t_out = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                            primals, tangents, instantiate=False)
    t_out = [instantiate_zeros(t) if inst else t for t, inst in zip(t_out, instantiate)]
    out_nz = [type(t) is not Zero for t in t_out]
    out_nz_box.append(out_nz)
    return p_out + [t for t in t_out if type(t) is not Zero]

  jaxpr, consts = trace_to_jaxpr(fun, list(from_avals) + tan_avals)
  return ClosedJaxpr(jaxpr, consts), out_nz_box[0]

