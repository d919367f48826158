"""``custom_jvp``, ``custom_vjp``, ``custom_gradient`` and ``closure_convert``.

Like JAX, a custom function is dispatched on the current trace: eagerly it
simply runs the function; under forward differentiation (``JVPTrace``, also
inside ``grad``) it runs the user's rule on the primal values as they are
(concrete ones stay concrete, so rules may branch on them); under every other
transformation the function is traced to a jaxpr and bound as
``custom_jvp_call``/``custom_vjp_call``, whose rules (primitives layer) carry
the custom rule through ``jit``, ``vmap``, ``checkpoint`` and nested calls.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import weakref
from typing import Any, Callable, Sequence

from openjax._src import dtypes, tree_util
from openjax._src.api.custom_eager import EagerPrimal
from openjax._src.api.shapes import abstractify
from openjax._src.core import (ClosedJaxpr, Tracer, current_trace, eval_jaxpr, eval_trace,
                               set_current_trace)
from openjax._src.errors import UnexpectedTracerError
from openjax._src.interpreters.jvp import JVPTrace, JVPTracer
from openjax._src.interpreters.partial_eval import PartialEvalTrace
from openjax._src.interpreters.batching import BatchTracer
from openjax._src.interpreters.staging import (DebugInfo, DynamicJaxprTracer, flat_arg_names,
                                               trace_to_jaxpr)
from openjax._src.primitives.base.ad_util import Zero, stop_gradient_p, tangent_aval
from openjax._src.control.custom_derivatives import (CustomJVPRule, CustomVJPBwd, CustomVJPFwd,
                                                     SymbolicZero, apply_custom_jvp_rule,
                                                     apply_custom_vjp_fwd, convert_constvars,
                                                     custom_jvp_call_p, custom_vjp_call_p)


# ------------------------------------------------------------------ helpers
def _fun_name(fun) -> str:
  return getattr(fun, "__name__", None) or type(fun).__name__


def _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames) -> tuple[int, ...]:
  nums = set(int(i) for i in (nondiff_argnums or ()))
  if nondiff_argnames:
    names = (nondiff_argnames,) if isinstance(nondiff_argnames, str) else nondiff_argnames
    params = list(inspect.signature(fun).parameters)
    for n in names:
      if n in params:
        nums.add(params.index(n))
  return tuple(sorted(nums))


# fun -> its signature: read once per function, not per call (inspect's
# signature costs several microseconds, as much as a small eager call).
_signatures: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_ANY_ARGS = inspect.signature(lambda *a, **k: None)


def _signature(fun) -> inspect.Signature:
  if isinstance(fun, functools.partial):
    return _ANY_ARGS
  try:
    return _signatures[fun]
  except (KeyError, TypeError):
    pass
  sig = inspect.signature(fun)
  try:
    _signatures[fun] = sig
  except TypeError:   # not weakly referenceable
    pass
  return sig


def _resolve_kwargs(fun, args, kwargs, what: str) -> tuple:
  """Bind ``kwargs`` (and defaults) to positions, as JAX's custom rules need."""
  try:
    sig = _signature(fun)
  except (TypeError, ValueError):
    return tuple(args)
  if not kwargs and len(args) == len(sig.parameters):
    return tuple(args)
  try:
    ba = sig.bind(*args, **kwargs)
    ba.apply_defaults()
    passed = [k for k in ba.kwargs if k in kwargs]
    if passed:
      raise TypeError("The following keyword arguments could not be resolved to "
                      f"positions: {', '.join(passed)}")
  except TypeError as e:
    raise TypeError(
        f"The input arguments to the {what}-decorated function {_fun_name(fun)} could not "
        "be resolved to positional-only arguments. Binding failed with the error:\n"
        f"{e}") from e
  return tuple(ba.args)


def _type_tree(tree, avals) -> str:
  return str(tree_util.tree_unflatten(tree, [a.str_short(short_dtypes=False) for a in avals])).replace("'", "")


def _typematch(a, b) -> bool:
  return a.shape == b.shape and a.dtype == b.dtype


def _stage(fun_flat: Callable, leaves: Sequence, traced_for: str, fun: Callable,
           arg_names) -> tuple[ClosedJaxpr, list]:
  """Trace ``fun_flat`` on the avals of ``leaves``; closed-over values become
  leading operands. Returns (call_jaxpr without consts, const operands)."""
  avals = [abstractify(x) for x in leaves]
  jaxpr, consts = trace_to_jaxpr(fun_flat, avals, DebugInfo(traced_for, fun, arg_names))
  open_jaxpr, consts = convert_constvars(ClosedJaxpr(jaxpr, consts))
  return ClosedJaxpr(open_jaxpr, []), consts


def _jvp_trace_args(trace: JVPTrace, leaves):
  primals, tangents = [], []
  for x in leaves:
    p, t = trace.to_primal_tangent(x)
    primals.append(p)
    tangents.append(t)
  return primals, tangents


def _all_known(trace, leaves) -> bool:
  """Under partial evaluation with only known inputs the call runs in the
  parent trace (as JAX's JaxprTrace does), so concrete values stay concrete."""
  return isinstance(trace, PartialEvalTrace) and not any(trace.is_unknown(x) for x in leaves)


def _wrap_jvp_outputs(trace: JVPTrace, primals_out, tangents_out) -> list:
  return [JVPTracer(trace, p, t) if type(t) is not Zero else p
          for p, t in zip(primals_out, tangents_out)]


# --------------------------------------------------------------- custom_jvp
class custom_jvp:
  """A function with a custom JVP rule (``jax.custom_jvp``).

  Decorate the function, then define its rule with ``defjvp`` (one rule for
  all arguments: ``rule(primals, tangents) -> (primal_out, tangent_out)``) or
  ``defjvps`` (one tangent function per argument). ``nondiff_argnums`` marks
  arguments that are not differentiated (they are passed first to the rule).
  Differentiation transformations use the rule; everything else (``jit``,
  ``vmap``, evaluation) uses the function.
  """
  # Slots keep this state out of ``__dict__``, which ``functools.wraps``
  # copies onto wrappers (``grad(f)``, ``jit(f)``) where it would clash.
  __slots__ = ("fun", "nondiff_argnums", "jvp", "symbolic_zeros", "_eager", "__dict__",
               "__weakref__")

  def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = (),
               nondiff_argnames: Sequence[str] = ()):
    functools.update_wrapper(self, fun)
    self.fun = fun
    self.nondiff_argnums = _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames)
    self.jvp: Callable | None = None
    self.symbolic_zeros = False
    self._eager = EagerPrimal(fun)   # eager calls: the primal function (api/custom_eager.py)

  def __get__(self, obj, objtype=None):
    if obj is None:
      return self
    return functools.partial(self, obj)

  def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
    """Define the JVP rule: ``jvp(primals, tangents) -> (primal_out, tangent_out)``
    (with ``nondiff_argnums``: ``jvp(*nondiff_args, primals, tangents)``).
    With ``symbolic_zeros=True`` unperturbed inputs get ``SymbolicZero``
    tangents. Returns ``jvp``, so it can be used as a decorator."""
    self.jvp = jvp
    self.symbolic_zeros = symbolic_zeros
    return jvp

  def defjvps(self, *jvps: Callable | None) -> None:
    """One tangent function per argument: ``jvp_i(t_i, primal_out, *primals)``
    (None: the output does not depend on that argument); contributions are
    summed."""
    if self.nondiff_argnums:
      raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

    def jvp(primals, tangents):
      primal_out = self(*primals)
      zeros = tree_util.tree_map(lambda x: _zeros_like(x), primal_out)
      all_tangents_out = [fn(t, primal_out, *primals) if fn else zeros
                          for t, fn in zip(tangents, jvps)]
      tangent_out = tree_util.tree_map(_sum_tangents, primal_out, *all_tangents_out)
      return primal_out, tangent_out

    self.defjvp(jvp)

  def __call__(self, *args, **kwargs):
    name = _fun_name(self.fun)
    if not self.jvp:
      raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
    args = _resolve_kwargs(self.fun, args, kwargs, "custom_jvp")
    nondiff = self.nondiff_argnums
    if nondiff:
      args = tuple(tree_util.tree_map(
          lambda x: stop_gradient_p.bind1(x) if isinstance(x, Tracer) else x, a)
          if i in nondiff else a for i, a in enumerate(args))
    return self._call(args)

  def _call(self, args: tuple):
    trace = current_trace()
    if trace is eval_trace:
      return self._eager(self.fun, self.nondiff_argnums, args)
    nondiff = self.nondiff_argnums
    static_args = [args[i] for i in nondiff]
    dyn_args = tuple(a for i, a in enumerate(args) if i not in nondiff)
    leaves, in_tree = tree_util.tree_flatten(dyn_args)
    info: dict = {}

    def full_args(dyn):
      it = iter(dyn)
      return [args[i] if i in nondiff else next(it) for i in range(len(args))]

    def fun_flat(*xs):
      out = self.fun(*full_args(tree_util.tree_unflatten(in_tree, xs)))
      out_leaves, out_tree = tree_util.tree_flatten(out)
      info["out"] = (out_tree, [abstractify(o) for o in out_leaves])
      return out_leaves

    if _all_known(trace, leaves):
      with set_current_trace(trace.parent):
        return self._call(args)
    rule = CustomJVPRule(self._flat_rule(static_args, in_tree, info), _fun_name(self.jvp))
    if isinstance(trace, JVPTrace):
      primals, tangents = _jvp_trace_args(trace, leaves)
      if all(type(t) is Zero for t in tangents):
        with set_current_trace(trace.parent):
          return self._call(tuple(full_args(tree_util.tree_unflatten(in_tree, primals))))
      with set_current_trace(trace.parent):
        p_out, t_out = apply_custom_jvp_rule(rule, primals, tangents, self.symbolic_zeros)
      return tree_util.tree_unflatten(info["rule_out_tree"],
                                      _wrap_jvp_outputs(trace, p_out, t_out))
    names = flat_arg_names(self.fun, dyn_args, {}, [
        tree_util.tree_structure(a).num_leaves for a in dyn_args])
    call_jaxpr, consts = _stage(fun_flat, leaves, "custom_jvp fun", self.fun, names)
    rule.closure = tuple(consts)
    outs = custom_jvp_call_p.bind(*consts, *leaves, call_jaxpr=call_jaxpr,
                                  jvp_jaxpr_fun=rule, num_consts=len(consts),
                                  symbolic_zeros=self.symbolic_zeros)
    return tree_util.tree_unflatten(info["out"][0], outs)

  def _flat_rule(self, static_args, in_tree, info) -> Callable:
    primal_name, jvp_name = _fun_name(self.fun), _fun_name(self.jvp)

    def rule(primals, tangents):
      py_primals = tree_util.tree_unflatten(in_tree, primals)
      py_tangents = tree_util.tree_unflatten(in_tree, tangents)
      pair_out = self.jvp(*static_args, py_primals, py_tangents)
      if not isinstance(pair_out, (list, tuple)) or len(pair_out) != 2:
        raise TypeError(
            f"Custom JVP rule {jvp_name} for function {primal_name} must produce a pair "
            "(list or tuple of length two) representing primal and tangent outputs, but "
            f"got {pair_out}.")
      primals_out, out_tree = tree_util.tree_flatten(pair_out[0])
      tangents_out, out_tree2 = tree_util.tree_flatten(
          pair_out[1], is_leaf=lambda x: type(x) is SymbolicZero)
      if out_tree != out_tree2:
        raise TypeError(
            f"Custom JVP rule {jvp_name} for function {primal_name} must produce primal "
            "and tangent outputs with equal container (pytree) structures, but got "
            f"{out_tree} and {out_tree2} respectively.")
      primal_avals = [abstractify(x) for x in primals_out]
      if "out" in info:
        _check_primal_out(info["out"], out_tree, primal_avals, jvp_name, primal_name)
      _check_tangents_out(primal_avals, tangents_out)
      info["rule_out_tree"] = out_tree
      return primals_out, tangents_out
    return rule


def _check_primal_out(fun_out, out_tree, primal_avals, jvp_name, primal_name):
  fun_tree, fun_avals = fun_out
  head = (f"Custom JVP rule {jvp_name} for function {primal_name} must produce a pair "
          "(list or tuple of length two) where the first element represents the primal "
          "output (equal in value to the output of the custom_jvp-decorated function "
          f"{primal_name}, ")
  if fun_tree != out_tree:
    raise TypeError(
        head + "and in particular of the same container/pytree structure), but instead "
        "the JVP rule output's first element had container/pytree structure:\n"
        f"    {_type_tree(out_tree, primal_avals)}\nwhile the custom_jvp-decorated "
        f"function {primal_name} had output container/pytree structure:\n"
        f"    {_type_tree(fun_tree, fun_avals)}.")
  if not all(map(_typematch, primal_avals, fun_avals)):
    raise TypeError(
        head + "and in particular with leaves of the same shape/dtype), but instead the "
        "JVP rule output's first element had shapes/dtypes of:\n"
        f"    {_type_tree(out_tree, primal_avals)}\nwhile the custom_jvp-decorated "
        f"function {primal_name} had output shapes/dtypes of:\n"
        f"    {_type_tree(fun_tree, fun_avals)}")


def _check_tangents_out(primal_avals, tangents_out):
  p_avals = [a.strip_weak_type() for a in primal_avals]
  expected = [tangent_aval(a).strip_weak_type() for a in p_avals]
  got = [(t.aval if type(t) is SymbolicZero else abstractify(t)).strip_weak_type()
         for t in tangents_out]
  if all(map(_typematch, expected, got)):
    return
  if len(expected) == 1:
    raise TypeError(
        "Custom JVP rule must produce primal and tangent outputs with corresponding "
        f"shapes and dtypes. Expected {expected[0].str_short(short_dtypes=False)} (tangent type of "
        f"{p_avals[0].str_short(short_dtypes=False)}) but got {got[0].str_short(short_dtypes=False)}.")
  lines = "\n".join(
      f"  primal {p.str_short(short_dtypes=False)} with tangent {t.str_short(short_dtypes=False)}, expecting tangent {e}"
      for p, e, t in zip(p_avals, expected, got) if not _typematch(e, t))
  raise TypeError("Custom JVP rule must produce primal and tangent outputs with "
                  f"corresponding shapes and dtypes, but got:\n{lines}")


def _zeros_like(x):
  return Zero(tangent_aval(abstractify(x)))


def _sum_tangents(_, x, *xs):
  ts = [t for t in (x, *xs) if type(t) is not Zero]
  if not ts:
    return x
  total = ts[0]
  for t in ts[1:]:
    total = total + t
  return total


# --------------------------------------------------------------- custom_vjp
@dataclasses.dataclass
class CustomVJPPrimal:
  """A primal argument of a ``custom_vjp`` forward rule defined with
  ``symbolic_zeros=True``: its ``value`` and whether it is ``perturbed``."""
  value: Any
  perturbed: bool


def custom_vjp_primal_tree_values(tree):
  """Strip ``CustomVJPPrimal`` records from a forward rule's arguments."""
  def value(leaf):
    if type(leaf) is not CustomVJPPrimal:
      raise TypeError(f"unexpected leaf type {type(leaf)}")
    return leaf.value
  return tree_util.tree_map(value, tree)


def _check_for_tracers(x):
  for leaf in tree_util.tree_leaves(x):
    if isinstance(leaf, Tracer):
      raise UnexpectedTracerError(
          "Found a JAX Tracer object passed as an argument to a custom_vjp function in a "
          "position indicated by nondiff_argnums as non-differentiable. Tracers cannot be "
          "passed as non-differentiable arguments to custom_vjp functions; instead, "
          "nondiff_argnums should only be used for arguments that can't be or contain "
          "JAX tracers, e.g. function-valued arguments. In particular, array-valued "
          "arguments should typically not be indicated as nondiff_argnums.")


class custom_vjp:
  """A function with a custom VJP rule (``jax.custom_vjp``).

  Define the rule with ``defvjp(fwd, bwd)``: ``fwd(*args) -> (out, residuals)``
  and ``bwd(residuals, out_cotangent) -> tuple of input cotangents`` (None for
  zero). Reverse-mode differentiation uses the rule; forward mode raises.
  """
  __slots__ = ("fun", "nondiff_argnums", "fwd", "bwd", "symbolic_zeros", "optimize_remat",
               "_eager", "__dict__", "__weakref__")

  def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = (),
               nondiff_argnames: Sequence[str] = ()):
    functools.update_wrapper(self, fun)
    self.fun = fun
    self.nondiff_argnums = _nondiff_argnums(fun, nondiff_argnums, nondiff_argnames)
    self.fwd: Callable | None = None
    self.bwd: Callable | None = None
    self.symbolic_zeros = False
    self.optimize_remat = False
    self._eager = EagerPrimal(fun)   # eager calls: the primal function (api/custom_eager.py)

  def __get__(self, obj, objtype=None):
    if obj is None:
      return self
    return functools.partial(self, obj)

  def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False,
             optimize_remat: bool = False) -> None:
    """Define the forward and backward rules of the custom VJP."""
    if symbolic_zeros and optimize_remat:
      raise NotImplementedError(
          "remat optimization for custom_vjp does not support symbolic zeros")
    self.fwd = fwd
    self.bwd = bwd
    self.symbolic_zeros = symbolic_zeros
    self.optimize_remat = optimize_remat

  def __call__(self, *args, **kwargs):
    name = _fun_name(self.fun)
    if not self.fwd or not self.bwd:
      raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
    args = _resolve_kwargs(self.fun, args, kwargs, "custom_vjp")
    for i in self.nondiff_argnums:
      _check_for_tracers(args[i])
    return self._call(args)

  def _call(self, args: tuple):
    trace = current_trace()
    if trace is eval_trace:
      return self._eager(self.fun, self.nondiff_argnums, args)
    nondiff = self.nondiff_argnums
    static_args = [args[i] for i in nondiff]
    dyn_args = tuple(a for i, a in enumerate(args) if i not in nondiff)
    leaves, in_tree = tree_util.tree_flatten(dyn_args)
    in_avals = [abstractify(x) for x in leaves]
    info: dict = {}

    def full_args(dyn):
      it = iter(dyn)
      return [args[i] if i in nondiff else next(it) for i in range(len(args))]

    def fun_flat(*xs):
      out = self.fun(*full_args(tree_util.tree_unflatten(in_tree, xs)))
      out_leaves, out_tree = tree_util.tree_flatten(out)
      info["out"] = (out_tree, [abstractify(o) for o in out_leaves])
      return out_leaves

    if _all_known(trace, leaves):
      with set_current_trace(trace.parent):
        return self._call(args)
    fwd = CustomVJPFwd(self._flat_fwd(full_args, in_tree, info), _fun_name(self.fwd))
    bwd = CustomVJPBwd(self._flat_bwd(static_args, in_tree, in_avals, info),
                       _fun_name(self.bwd))
    if isinstance(trace, JVPTrace):
      primals, tangents = _jvp_trace_args(trace, leaves)
      if all(type(t) is Zero for t in tangents):
        with set_current_trace(trace.parent):
          return self._call(tuple(full_args(tree_util.tree_unflatten(in_tree, primals))))
      with set_current_trace(trace.parent):
        p_out, t_out = apply_custom_vjp_fwd(fwd, bwd, primals, tangents, self.symbolic_zeros)
      return tree_util.tree_unflatten(info["fwd_out"][0],
                                      _wrap_jvp_outputs(trace, p_out, t_out))
    names = flat_arg_names(self.fun, dyn_args, {}, [
        tree_util.tree_structure(a).num_leaves for a in dyn_args])
    call_jaxpr, consts = _stage(fun_flat, leaves, "custom_vjp fun", self.fun, names)
    fwd.closure = tuple(consts)
    outs = custom_vjp_call_p.bind(*consts, *leaves, call_jaxpr=call_jaxpr,
                                  fwd_jaxpr_thunk=fwd, bwd=bwd, num_consts=len(consts),
                                  out_trees=_OutTrees(info), symbolic_zeros=self.symbolic_zeros)
    return tree_util.tree_unflatten(info["out"][0], outs)

  def _flat_fwd(self, full_args, in_tree, info) -> Callable:
    primal_name, fwd_name = _fun_name(self.fun), _fun_name(self.fwd)

    def fwd(primals, in_zeros):
      if self.symbolic_zeros:
        primals = [CustomVJPPrimal(p, not z) for p, z in zip(primals, in_zeros)]
      pair_out = self.fwd(*full_args(tree_util.tree_unflatten(in_tree, primals)))
      head = (f"Custom VJP fwd rule {fwd_name} for function {primal_name} must produce a "
              "pair (list or tuple of length two) where the first element represents the "
              "primal output (equal to ")
      if not isinstance(pair_out, (list, tuple)) or len(pair_out) != 2:
        raise TypeError(
            head + f"those of the custom_vjp-decorated function {primal_name}) and the "
            "second element represents residuals (i.e. values stored from the forward "
            "pass for use on the backward pass), but instead of a pair the fwd rule "
            f"{fwd_name} produced {pair_out}.")
      primals_out, out_tree = tree_util.tree_flatten(pair_out[0])
      res, res_tree = tree_util.tree_flatten(pair_out[1])
      avals = [abstractify(x) for x in primals_out]
      if "out" in info:
        fun_tree, fun_avals = info["out"]
        mid = (f"the output of the custom_vjp-decorated function {primal_name}) and the "
               "second element represents residuals (i.e. values stored from the forward "
               "pass for use on the backward pass), but instead the fwd rule output's "
               "first element had ")
        if fun_tree != out_tree:
          raise TypeError(
              head + mid + "container/pytree structure:\n"
              f"    {_type_tree(out_tree, avals)}\nwhile the custom_vjp-decorated "
              f"function {primal_name} had output container/pytree structure:\n"
              f"    {_type_tree(fun_tree, fun_avals)}.")
        if not all(map(_typematch, avals, fun_avals)):
          raise TypeError(
              head + mid + "shapes/dtypes of:\n"
              f"    {_type_tree(out_tree, avals)}\nwhile the custom_vjp-decorated "
              f"function {primal_name} had output shapes/dtypes of:\n"
              f"    {_type_tree(fun_tree, fun_avals)}")
      info["fwd_out"] = (out_tree, res_tree)
      return res, primals_out
    return fwd

  def _flat_bwd(self, static_args, in_tree, in_avals, info) -> Callable:
    def bwd(res, cts):
      out_tree, res_tree = info["fwd_out"]
      py_res = tree_util.tree_unflatten(res_tree, res)
      py_cts = tree_util.tree_unflatten(out_tree, cts)
      py_cts_in = self.bwd(*static_args, py_res, py_cts)
      return _flatten_bwd_output(py_cts_in, in_tree, in_avals)
    return bwd


class _OutTrees:
  """The output and residual trees of a custom_vjp call (known once the
  function or its forward rule has run)."""
  __slots__ = ("info",)

  def __init__(self, info):
    self.info = info

  def __call__(self):
    return self.info.get("fwd_out")


def _flatten_bwd_output(py_cts_in, in_tree, in_avals) -> list:
  n_args = len(tree_util.treedef_children(in_tree))
  if isinstance(py_cts_in, list) and len(py_cts_in) == n_args:
    py_cts_in = tuple(py_cts_in)
  zero = object()
  dummy = tree_util.tree_unflatten(in_tree, [object()] * in_tree.num_leaves)
  keypaths = [kp for kp, _ in tree_util.tree_flatten_with_path(dummy)[0]]
  flat: list = []

  def append(x, d):
    n = len(tree_util.tree_leaves(d))
    if x is None and d is not None:
      flat.extend([zero] * n)
    elif x is not None:
      flat.extend([x] * n)
    return x

  try:
    if not isinstance(py_cts_in, tuple):
      raise ValueError
    tree_util.tree_map(append, py_cts_in, dummy, is_leaf=lambda x: x is None)
  except ValueError:
    in_tree2 = tree_util.tree_structure(py_cts_in)
    raise TypeError(
        "Custom VJP bwd rule must produce an output with the same container (pytree) "
        "structure as the args tuple of the primal function, and in particular must "
        "produce a tuple of length equal to the number of arguments to the primal "
        f"function, but got bwd output structure {in_tree2} for primal input structure "
        f"{in_tree}.") from None
  results = []
  for kp, a, ct in zip(keypaths, in_avals, flat):
    ct_aval = tangent_aval(a)
    if ct is zero or ct_aval.dtype == dtypes.float0:
      results.append(Zero(ct_aval))
    elif type(ct) is SymbolicZero:
      if not _typematch(ct_aval, ct.aval):
        raise ValueError(
            "Custom VJP bwd rule produced a SymbolicZero with a shape/dtype that does not "
            "match the corresponding input tangent shape/dtype: at output"
            f"{tree_util.keystr(kp)} the SymbolicZero had shape/dtype "
            f"{ct.aval.str_short(short_dtypes=False)} while the corresponding input had shape/dtype "
            f"{a.str_short(short_dtypes=False)}. Consider just returning a None here instead of a "
            "SymbolicZero object.")
      results.append(Zero(ct.aval))
    else:
      ca = abstractify(ct)
      same_shape_inexact = (ca.shape == ct_aval.shape
                            and dtypes.kind(ct_aval.dtype) in "fc")
      if not _typematch(ct_aval, ca) and not same_shape_inexact:
        raise ValueError(
            "Custom VJP bwd rule must produce an output with the same type as the args "
            f"tuple of the primal function, but at output{tree_util.keystr(kp)} the bwd "
            f"rule produced an output of type {ca.str_short(short_dtypes=False)} corresponding to an input "
            f"of type {a.str_short(short_dtypes=False)}{_mismatch_extra(a, ca)}")
      results.append(ct)
  return results


def _mismatch_extra(a, b) -> str:
  mismatches = []
  if a.dtype != b.dtype:
    mismatches.append("the dtypes do not match")
  if a.shape != b.shape:
    mismatches.append("the shapes do not match")
  if not mismatches:
    return ""
  return ", so " + ", and ".join(mismatches)


# ----------------------------------------------------------- custom_gradient
def custom_gradient(fun: Callable | None = None):
  """``fun(*args) -> (out, vjp_fn)``, where ``vjp_fn(ct)`` returns the input
  cotangents (TensorFlow's ``tf.custom_gradient``)."""
  if fun is None:
    return custom_gradient

  @custom_vjp
  def wrapped_fun(*args, **kwargs):
    ans, _ = fun(*args, **kwargs)
    return ans

  def fwd(*args, **kwargs):
    ans, rule = fun(*args, **kwargs)
    ans_flat, out_tree = tree_util.tree_flatten((ans,))
    box: list = []

    def rule_flat(*cts):
      out = rule(*tree_util.tree_unflatten(out_tree, cts))
      leaves, tree = tree_util.tree_flatten(out)
      box.append(tree)
      return leaves

    jaxpr, consts = trace_to_jaxpr(rule_flat, [tangent_aval(abstractify(a)) for a in ans_flat])
    return ans, _Residuals(jaxpr, box[0], out_tree, consts)

  def bwd(res, cts):
    cts_flat, out_tree = tree_util.tree_flatten((cts,))
    if out_tree != res.out_tree:
      raise TypeError(f"{res.out_tree}\n!=\n{out_tree}")
    cts_out = tree_util.tree_unflatten(res.in_tree, eval_jaxpr(res.jaxpr, res.consts,
                                                               *cts_flat))
    return (cts_out,) if tree_util.treedef_is_leaf(res.in_tree) else cts_out

  wrapped_fun.defvjp(fwd, bwd)
  return wrapped_fun


@tree_util.register_pytree_node_class
class _Residuals:
  """custom_gradient's residuals: the traced gradient function; only its
  constants are pytree leaves."""

  def __init__(self, jaxpr, in_tree, out_tree, consts):
    self.jaxpr, self.in_tree, self.out_tree, self.consts = jaxpr, in_tree, out_tree, consts

  def tree_flatten(self):
    return list(self.consts), (self.jaxpr, self.in_tree, self.out_tree)

  @classmethod
  def tree_unflatten(cls, aux, consts):
    return cls(*aux, list(consts))


def _maybe_perturbed(x) -> bool:
  """False when ``x`` cannot carry a nontrivial tangent (JAX's heuristic)."""
  if not isinstance(x, Tracer):
    return False
  if isinstance(x, DynamicJaxprTracer):
    return tangent_aval(x.aval).dtype != dtypes.float0
  if isinstance(x, BatchTracer):
    return _maybe_perturbed(x.val)
  return True


def closure_convert(fun: Callable, *example_args):
  """``(converted_fun, consts)``: the closed-over values of ``fun`` that may
  be differentiated (tracers) become explicit trailing arguments of
  ``converted_fun``, as custom_vjp rules of higher-order functions need."""
  leaves, in_tree = tree_util.tree_flatten(example_args)
  box: list = []

  def flat(*xs):
    out = fun(*tree_util.tree_unflatten(in_tree, xs))
    out_leaves, out_tree = tree_util.tree_flatten(out)
    box.append(out_tree)
    return out_leaves

  jaxpr, consts = trace_to_jaxpr(flat, [abstractify(x) for x in leaves])
  out_tree = box[0]
  hoist = [_maybe_perturbed(c) for c in consts]
  closed = [c for c, h in zip(consts, hoist) if not h]
  hoisted = [c for c, h in zip(consts, hoist) if h]

  def converted_fun(*args_hconsts):
    n_args = len(args_hconsts) - len(hoisted)
    args, hconsts = args_hconsts[:n_args], args_hconsts[n_args:]
    a_leaves, a_tree = tree_util.tree_flatten(tuple(args))
    if a_tree != in_tree:
      raise TypeError(
          "The inputs to the closure produced by closure_convert must have the same Pytree "
          "structure as the example arguments passed when closure_convert was called. "
          f"Expected {in_tree}, but got {a_tree}")
    h, c = iter(hconsts), iter(closed)
    all_consts = [next(h) if is_h else next(c) for is_h in hoist]
    outs = eval_jaxpr(jaxpr, all_consts, *a_leaves)
    return tree_util.tree_unflatten(out_tree, outs)

  return converted_fun, hoisted


__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "closure_convert",
           "CustomVJPPrimal", "custom_vjp_primal_tree_values", "SymbolicZero"]
