"""The pieces of ``jax.extend`` that openjax's own machinery does not already
provide under another name: opaque trace states, wrapped functions and the
source-info exclusion list."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from openjax._src import traceback_util
from openjax._src.core import Jaxpr, ShapedArray, current_trace, eval_jaxpr, get_aval
from openjax._src.interpreters.partial_eval import partial_eval_jaxpr
from openjax._src.interpreters.staging import DebugInfo, trace_to_jaxpr
from openjax._src.tree_util import tree_flatten, tree_unflatten

__all__ = ["OpaqueTraceState", "PartialVal", "WrappedFun", "debug_info", "flatten_fun",
           "flatten_fun_nokwargs", "get_opaque_trace_state", "mapped_aval", "register_exclusion",
           "trace_to_jaxpr_nounits", "unmapped_aval", "wrap_init"]


class OpaqueTraceState:
  """The current trace, for equality comparison only: libraries (flax) check
  that a value is used under the same transformation it was created under."""
  __slots__ = ("_trace",)

  def __init__(self, trace):
    self._trace = trace

  def __eq__(self, other):
    return isinstance(other, OpaqueTraceState) and self._trace is other._trace

  def __hash__(self):
    return id(self._trace)


def get_opaque_trace_state(convention: str | None = None) -> OpaqueTraceState:
  del convention  # JAX's callers name themselves; the state is the same for all
  return OpaqueTraceState(current_trace())


def mapped_aval(size: int, axis: int | None, aval: ShapedArray) -> ShapedArray:
  """``aval`` with its mapped ``axis`` (of ``size``) removed (None: unchanged)."""
  if axis is None:
    return aval
  if aval.shape[axis] != size:
    raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} has size "
                     f"{aval.shape[axis]}, not {size}")
  return ShapedArray(aval.shape[:axis] + aval.shape[axis + 1:], aval.dtype, aval.weak_type)


def unmapped_aval(size: int, axis: int | None, aval: ShapedArray,
                  explicit_mesh_axis=None) -> ShapedArray:
  """``aval`` with a new ``axis`` of ``size`` inserted (None: unchanged)."""
  if axis is None:
    return aval
  return ShapedArray(aval.shape[:axis] + (size,) + aval.shape[axis:], aval.dtype,
                     aval.weak_type)


class WrappedFun:
  """A function with fixed keyword parameters and debug info (``linear_util``):
  ``call_wrapped(*args)`` calls ``f(*args, **params)``."""
  __slots__ = ("f", "params", "debug_info")

  def __init__(self, f: Callable, params: dict, debug_info: Any = None):
    self.f = f
    self.params = params
    self.debug_info = debug_info

  @property
  def __name__(self):
    return getattr(self.f, "__name__", "<unnamed wrapped function>")

  def call_wrapped(self, *args, **kwargs):
    return self.f(*args, **self.params, **kwargs)

  def __repr__(self):
    return f"Wrapped function: {self.__name__}"

  def __eq__(self, other):
    return (isinstance(other, WrappedFun) and self.f is other.f
            and self.params == other.params)

  def __hash__(self):
    return hash((id(self.f), tuple(sorted(self.params.items()))))


def wrap_init(f: Callable, params: dict | None = None, *, debug_info: Any = None) -> WrappedFun:
  """Wrap ``f`` (with fixed keyword ``params``) as a ``WrappedFun``."""
  return WrappedFun(f, dict(params or {}), debug_info)


def register_exclusion(path: str) -> None:
  """Record a library source path (``source_info_util``'s and
  ``traceback_util``'s lists are one list in openjax)."""
  traceback_util.register_exclusion(path)


class PartialVal(tuple):
  """A value known now (``(None, const)``) or only by its aval (``(aval, None)``)."""

  @classmethod
  def known(cls, const) -> PartialVal:
    return tuple.__new__(cls, (None, const))

  @classmethod
  def unknown(cls, aval) -> PartialVal:
    return tuple.__new__(cls, (aval, None))

  def is_known(self) -> bool:
    return self[0] is None

  def get_known(self):
    return self[1] if self[0] is None else None

  def get_aval(self):
    return get_aval(self[1]) if self[0] is None else self[0]


def trace_to_jaxpr_nounits(fun: WrappedFun, pvals, instantiate: bool = False):
  """Partially evaluate ``fun`` on ``pvals``: run what depends only on known
  inputs now and stage the rest. Returns ``(jaxpr, out_pvals, residuals)``:
  the jaxpr takes the residuals (as constvars) and the unknown inputs and
  computes the unknown outputs; a known output's pval holds its value."""
  pvals = list(pvals)
  avals = [pv.get_aval() for pv in pvals]
  jaxpr, consts = trace_to_jaxpr(lambda *xs: list(fun.call_wrapped(*xs)), avals)
  unknowns = [not pv.is_known() for pv in pvals]
  known, unknown, out_unknowns, n_res = partial_eval_jaxpr(jaxpr, unknowns)
  if instantiate:
    raise NotImplementedError(
        "trace_to_jaxpr_nounits(instantiate=True) is not supported by openjax yet: call it "
        "with instantiate=False (known outputs come back as known PartialVals)")
  known_ins = [pv.get_known() for pv in pvals if pv.is_known()]
  known_outs = eval_jaxpr(known, consts, *known_ins)
  n_known = len(known_outs) - n_res
  residuals = known_outs[n_known:]
  n_unknown_in = sum(unknowns)
  res_vars = unknown.invars[:n_res]
  staged = Jaxpr(res_vars, unknown.invars[n_res:n_res + n_unknown_in], unknown.outvars,
                 unknown.eqns, unknown.debug_info)
  known_iter, out_avals = iter(known_outs[:n_known]), iter(v.aval for v in unknown.outvars)
  out_pvals = [PartialVal.unknown(next(out_avals)) if u else PartialVal.known(next(known_iter))
               for u in out_unknowns]
  return staged, out_pvals, list(residuals)



# ------------------------------------------------------------- jax.api_util
def debug_info(traced_for: str, fun: Callable, args, kwargs, *, static_argnums=(),
               static_argnames=(), result_paths_thunk=None, sourceinfo=None,
               signature=None) -> DebugInfo:
  """Where ``fun`` comes from (name, source) and its argument names, for errors."""
  del static_argnums, static_argnames, result_paths_thunk, sourceinfo, signature
  return DebugInfo(traced_for, fun, None)


class _OutTree:
  """The output treedef of a flattened function, known once it has run."""
  __slots__ = ("treedef",)

  def __init__(self):
    self.treedef = None

  def __call__(self):
    if self.treedef is None:
      raise ValueError("the output tree of a flattened function is known only after it "
                       "has been called")
    return self.treedef


def flatten_fun(fun: WrappedFun, in_tree):
  """``fun`` on flat leaves of ``(args, kwargs)`` (structure ``in_tree``),
  returning flat leaves; the second result gives the output treedef."""
  out_tree = _OutTree()

  def flat(*leaves):
    args, kwargs = tree_unflatten(in_tree, leaves)
    out_leaves, out_tree.treedef = tree_flatten(fun.call_wrapped(*args, **kwargs))
    return out_leaves

  return WrappedFun(flat, {}, fun.debug_info), out_tree


def flatten_fun_nokwargs(fun: WrappedFun, in_tree):
  """``flatten_fun`` for a function of positional arguments (``in_tree`` is
  the tuple of them)."""
  out_tree = _OutTree()

  def flat(*leaves):
    args = tree_unflatten(in_tree, leaves)
    out_leaves, out_tree.treedef = tree_flatten(fun.call_wrapped(*args))
    return out_leaves

  return WrappedFun(flat, {}, fun.debug_info), out_tree
