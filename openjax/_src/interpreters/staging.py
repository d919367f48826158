"""Staging: trace a Python function into a jaxpr (omnistaging: every primitive
applied while the staging trace is current is recorded)."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.config import config
from openjax._src.core.avals import ordered_axes
from openjax._src.core import (Array, ClosedJaxpr, Jaxpr, JaxprEqn, Literal, ShapedArray, Trace,
                               Tracer, Var, check_transformed, get_aval, set_current_trace)
from openjax._src.errors import UnexpectedTracerError
from openjax._src.core.jaxpr import jaxprs_in_params
from openjax._src.core.sharding_rules import apply_sharding_rule
from openjax._src.primitives.collectives.varying import pvary_p, vma_checked_axes


class DebugInfo:
  """Where a traced function came from, to name it and its arguments in errors."""
  __slots__ = ("traced_for", "func_src", "arg_names", "func_name")

  def __init__(self, traced_for: str, fun: Callable | None, arg_names: Sequence[str] | None):
    self.traced_for = traced_for
    self.func_name = getattr(fun, "__name__", type(fun).__name__) if fun is not None else "<unknown>"
    self.func_src = _func_src(fun)
    self.arg_names = tuple(arg_names) if arg_names is not None else None


def _func_src(fun) -> str:
  try:
    fn = inspect.unwrap(fun)
    code = fn.__code__
    return f"{fun.__name__} at {code.co_filename}:{code.co_firstlineno}"
  except Exception:  # noqa: BLE001 - best-effort description
    return getattr(fun, "__name__", repr(fun))


def flat_arg_names(fun: Callable, args: tuple, kwargs: dict, leaf_counts) -> list[str]:
  """A name per flattened argument leaf, like ``x`` or ``params[0]``."""
  try:
    sig = inspect.signature(fun)
    bound = sig.bind(*args, **kwargs)
    names = list(bound.arguments)
  except (TypeError, ValueError):
    names = [f"args[{i}]" for i in range(len(args))] + list(kwargs)
  out = []
  for name, n in zip(names, leaf_counts):
    out.extend([name] if n == 1 else [f"{name}[{i}]" for i in range(n)])
  return out


class DynamicJaxprTracer(Tracer):
  __slots__ = ("_aval", "atom")

  def __init__(self, trace: "DynamicJaxprTrace", aval: ShapedArray, atom):
    self._trace = trace
    self._aval = aval
    self.atom = atom

  @property
  def aval(self):
    return self._aval

  def to_concrete_value(self):
    if type(self.atom) is Literal:
      return self.atom.val
    val = self._trace.constvar_to_val.get(self.atom)
    if val is None or isinstance(val, Tracer):
      return None
    return np.asarray(getattr(val, "_value", val))

  def _provenance(self) -> str:
    return self._trace.provenance(self)

  def __repr__(self):
    # As JAX prints a tracer of jit (``~`` marks a weak type).
    weak = "~" if self._aval.weak_type else ""
    return f"JitTracer({weak}{self._aval.str_short(short_dtypes=False)})"


def _is_literalable(val) -> bool:
  if isinstance(val, Tracer):
    return False
  t = type(val)
  if t in dtypes.python_scalar_dtypes or isinstance(val, np.generic):
    return True
  return getattr(val, "shape", None) == () and (
      isinstance(val, np.ndarray) or t is Array)


class DynamicJaxprTrace(Trace):
  """Records every primitive applied to its tracers as a jaxpr equation."""

  def __init__(self, debug_info: DebugInfo | None = None):
    super().__init__()
    self.debug_info = debug_info
    self.invars: list[Var] = []
    self.eqns: list[JaxprEqn] = []
    self.constvar_to_val: dict[Var, Any] = {}
    self._const_tracers: dict[int, DynamicJaxprTracer] = {}
    self._keepalive: list = []

  def new_arg(self, aval: ShapedArray) -> DynamicJaxprTracer:
    v = Var(aval)
    self.invars.append(v)
    return DynamicJaxprTracer(self, aval, v)

  def new_const(self, val) -> DynamicJaxprTracer:
    t = self._const_tracers.get(id(val))
    if t is not None:
      return t
    aval = get_aval(val)
    if _is_literalable(val):
      if type(val) is Array:
        lit = val._value
      elif type(val) in dtypes.python_scalar_dtypes:
        lit = np.asarray(val, aval.dtype)[()]
      else:
        lit = np.asarray(val).astype(aval.dtype)[()]
      t = DynamicJaxprTracer(self, aval, Literal(lit, aval))
    else:
      if not isinstance(val, Tracer) and type(val) is not Array:
        arr = np.asarray(val)
        if arr.dtype != aval.dtype:
          val = arr.astype(aval.dtype)
      v = Var(aval)
      self.constvar_to_val[v] = val
      t = DynamicJaxprTracer(self, aval, v)
    self._const_tracers[id(val)] = t
    self._keepalive.append(val)   # ids stay unique while we hold the values
    return t

  def to_jaxpr_tracer(self, x) -> DynamicJaxprTracer:
    if isinstance(x, DynamicJaxprTracer) and x._trace is self:
      return x
    if isinstance(x, Tracer) and not x._trace.is_valid:
      raise UnexpectedTracerError(
          f"Encountered an unexpected tracer: {x!r}. It was created by a "
          "transformation that has already finished (for example, stored in a "
          "global or closure by a jitted function) and was then used inside "
          f"{self._where()}. Return values from transformed functions instead "
          "of storing them as side effects.")
    return self.new_const(x)

  def _where(self) -> str:
    d = self.debug_info
    return f"the trace of {d.func_src} for {d.traced_for}" if d else "a trace"

  def process_primitive(self, primitive, args, params) -> list:
    tracers = [self.to_jaxpr_tracer(x) for x in args]
    avals = [t._aval for t in tracers]
    typed = primitive.vma_rule is not None
    for a in avals:
      if a.vma:
        typed = True
        break
    if typed and vma_checked_axes():
      tracers, avals = self._match_vma(primitive, tracers, avals, params)
    out_avals = primitive.rule("abstract_eval")(*avals, **params)
    if typed:
      out_avals = _typed_results(primitive, avals, out_avals, params)
    for a in avals:
      if a.sharding is not None:   # operands split over Explicit mesh axes
        out_avals = apply_sharding_rule(primitive, avals, out_avals, params)
        break
    else:
      if params.get("sharding") is not None:   # a result layout asked for
        out_avals = apply_sharding_rule(primitive, avals, out_avals, params)
    outs = [DynamicJaxprTracer(self, a, Var(a)) for a in out_avals]
    self.eqns.append(JaxprEqn([t.atom for t in tracers], [o.atom for o in outs],
                              primitive, params))
    return outs

  def _match_vma(self, primitive, tracers: list, avals: list, params) -> tuple:
    """JAX's automatic ``pvary`` in a check_vma body: the operands of a
    first-order operation (literals too) are made to vary over the same
    axes, and a collective's operand over the axes it needs."""
    if jaxprs_in_params(params) or primitive is pvary_p:
      return tracers, avals
    target = frozenset()
    for a in avals:
      target |= a.vma
    if primitive.vma_needs is not None:
      target |= primitive.vma_needs(**params)
    target &= vma_checked_axes()
    if not config.read("jax_auto_pcast"):
      _check_vma_match(primitive, avals, target)
      return tracers, avals
    out_tracers, out_avals = [], []
    for t, a in zip(tracers, avals):
      missing = target - a.vma
      if missing and type(a) is ShapedArray:   # (tokens carry no vma)
        t = self.process_primitive(pvary_p, [t], {"axes": ordered_axes(missing)})[0]
        a = t._aval
      out_tracers.append(t)
      out_avals.append(a)
    return out_tracers, out_avals

  def to_jaxpr(self, out_tracers: Sequence[DynamicJaxprTracer]) -> tuple[Jaxpr, list]:
    constvars = list(self.constvar_to_val)
    consts = [self.constvar_to_val[v] for v in constvars]
    jaxpr = Jaxpr(constvars, self.invars, [t.atom for t in out_tracers], self.eqns,
                  debug_info=self.debug_info)
    return jaxpr, consts

  def provenance(self, tracer: DynamicJaxprTracer) -> str:
    d = self.debug_info
    if d is None:
      return ""
    head = (f"The error occurred while tracing the function {d.func_src} for "
            f"{d.traced_for}. ")
    if d.arg_names is None:
      return head + "\n"
    producers = {v: e for e in self.eqns for v in e.outvars}
    seen, stack, inputs = set(), [tracer.atom], set()
    invar_index = {v: i for i, v in enumerate(self.invars)}
    while stack:
      a = stack.pop()
      if not isinstance(a, Var) or a in seen:
        continue
      seen.add(a)
      if a in invar_index:
        inputs.add(invar_index[a])
      elif a in producers:
        stack.extend(producers[a].invars)
    names = [d.arg_names[i] for i in sorted(inputs) if i < len(d.arg_names)]
    if not names:
      return head + "\n"
    if len(names) == 1:
      dep = f"the value of the argument {names[0]}"
    else:
      dep = "the values of the arguments " + ", ".join(names[:-1]) + f" and {names[-1]}"
    return head + f"This concrete value was not available in Python because it depends on {dep}.\n"


def _check_vma_match(primitive, avals: list, target: frozenset) -> None:
  """Without auto_pcast, operands must already vary as the operation needs
  (JAX's errors)."""
  if primitive.vma_needs is not None:
    if any(target - a.vma for a in avals):
      raise ValueError(
          f"Collective {primitive.name} must be applied to a device-varying  type, but got "
          f"{avals[0].vma} for collective acting over axis name {tuple(sorted(target))}. "
          "Please open an issue at https://github.com/jax-ml/jax/issues and as a temporary "
          "workaround pass the check_vma=False argument to `jax.shard_map`")
    return
  vmas = [a.vma for a in avals]
  if any(v != vmas[0] for v in vmas):
    raise ValueError(
        f"Primitive {primitive.name} requires varying manual axes to match, but got {vmas}. "
        "Please open an issue at https://github.com/jax-ml/jax/issues and as a temporary "
        "workaround pass the check_vma=False argument to `jax.shard_map`")


def _typed_results(primitive, avals: list, out_avals: list, params) -> list:
  """The results' varying manual axes: a collective's rule, a higher-order
  primitive's typed sub-jaxpr, else the union of the operands'."""
  in_vma = frozenset()
  for a in avals:
    in_vma |= a.vma
  if primitive.vma_rule is not None:
    vma = primitive.vma_rule(in_vma, **params)
    if type(vma) is list:   # one per result
      return [a.with_vma(v) for a, v in zip(out_avals, vma)]
    return [a.with_vma(vma) for a in out_avals]
  for j in jaxprs_in_params(params):
    if any(v.aval.vma for v in j.invars) or any(a.vma for a in out_avals):
      return out_avals   # traced with its operands' types
  return [a.with_vma(in_vma) for a in out_avals]


def trace_to_jaxpr(fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray],
                   debug_info: DebugInfo | None = None) -> tuple[Jaxpr, list]:
  """Trace ``fun`` (flat arguments -> flat list of outputs) to a jaxpr and the
  values of its constvars. Every jaxpr-to-jaxpr transformation that re-traces
  (``jvp_jaxpr``, ``transpose_jaxpr``, ``batch_jaxpr``, control-flow rules) and
  ``make_jaxpr``/``jit`` come through here, so this is where
  ``jax_enable_checks`` checks what they build."""
  trace = DynamicJaxprTrace(debug_info)
  args = [trace.new_arg(a) for a in in_avals]
  try:
    with set_current_trace(trace):
      outs = fun(*args)
      out_tracers = [trace.to_jaxpr_tracer(o) for o in outs]
    jaxpr, consts = trace.to_jaxpr(out_tracers)
  finally:
    trace.invalidate()
  check_transformed(ClosedJaxpr(jaxpr, consts), "trace_to_jaxpr" if debug_info is None else
                    f"trace_to_jaxpr ({debug_info.traced_for} of {debug_info.func_src})")
  return jaxpr, consts


def trace_to_closed_jaxpr(fun, in_avals, debug_info=None) -> ClosedJaxpr:
  jaxpr, consts = trace_to_jaxpr(fun, in_avals, debug_info)
  return ClosedJaxpr(jaxpr, consts)

