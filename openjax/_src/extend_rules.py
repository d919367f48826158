"""Primitives defined by libraries with JAX's conventions (``jax.extend.core.Primitive``)
and JAX's per-interpreter rule tables (``jax.interpreters.ad.primitive_jvps``,
``batching.primitive_batchers``, ``mlir.register_lowering``).

openjax keeps every rule on its primitive and passes lists everywhere; JAX's
rules return a bare value for a single-result primitive. ``ExtendPrimitive``
wraps an openjax ``Primitive``, and assigning a rule in one of the tables
installs it on that primitive through an adapter that converts between the
two conventions. Lowerings written with ``mlir.lower_fun`` are traced and
inlined; a lowering written against JAX's MLIR Python API cannot run here
(openjax emits StableHLO text) and raises when a program needs it.
"""
from __future__ import annotations

from collections.abc import Callable

from openjax._src.core import ClosedJaxpr, Primitive
from openjax._src.interpreters.staging import trace_to_jaxpr

__all__ = ["ExtendPrimitive", "LoweredFun", "axis_primitive_batchers", "lower_fun",
           "primitive_batchers", "primitive_jvps", "primitive_transposes", "register_lowering"]


class ExtendPrimitive:
  """``jax.extend.core.Primitive``: rules and ``bind`` with JAX's conventions
  (a single result is returned bare), over an openjax ``Primitive``."""

  def __init__(self, name: str):
    self.name = name
    self.primitive = Primitive(name)

  @property
  def multiple_results(self) -> bool:
    return self.primitive.multiple_results

  @multiple_results.setter
  def multiple_results(self, value: bool) -> None:
    self.primitive.multiple_results = bool(value)

  def __repr__(self):
    return self.name

  def bind(self, *args, **params):
    outs = self.primitive.bind(*args, **params)
    return outs if self.multiple_results else outs[0]

  def _as_list(self, out) -> list:
    return list(out) if self.multiple_results else [out]

  def def_impl(self, impl: Callable) -> Callable:
    self.primitive.def_impl(lambda *args, **params: self._as_list(impl(*args, **params)))
    return impl

  def def_abstract_eval(self, abstract_eval: Callable) -> Callable:
    self.primitive.def_abstract_eval(
        lambda *avals, **params: self._as_list(abstract_eval(*avals, **params)))
    return abstract_eval

  def def_effectful_abstract_eval(self, abstract_eval: Callable) -> Callable:
    # openjax tracks no effects: keep the avals, drop the effect set.
    self.primitive.def_abstract_eval(
        lambda *avals, **params: self._as_list(abstract_eval(*avals, **params)[0]))
    return abstract_eval


def _openjax_primitive(prim) -> Primitive:
  return prim.primitive if isinstance(prim, ExtendPrimitive) else prim


def _returns_list(prim, out) -> list:
  return list(out) if _openjax_primitive(prim).multiple_results else [out]


class _RuleTable(dict):
  """A JAX rule table: assigning ``table[prim] = rule`` installs the rule."""

  def __init__(self, install: Callable):
    super().__init__()
    self._install = install

  def __setitem__(self, prim, rule):
    super().__setitem__(prim, rule)
    self._install(prim, rule)


def _install_jvp(prim, rule):
  def jvp(primals, tangents, **params):
    out, tangent_out = rule(list(primals), list(tangents), **params)
    return _returns_list(prim, out), _returns_list(prim, tangent_out)
  _openjax_primitive(prim).def_jvp(jvp)


def _install_transpose(prim, rule):
  def transpose(cts, *args, **params):
    multiple = _openjax_primitive(prim).multiple_results
    return list(rule(cts if multiple else cts[0], *args, **params))
  _openjax_primitive(prim).def_transpose(transpose)


def _install_batch(prim, rule):
  def batch(vals, dims, **params):
    out, out_dims = rule(list(vals), list(dims), **params)
    return _returns_list(prim, out), _returns_list(prim, out_dims)
  _openjax_primitive(prim).def_batch(batch)


def _install_axis_batch(prim, rule):
  def batch(vals, dims, *, axis_data, **params):
    out, out_dims = rule(axis_data, list(vals), list(dims), **params)
    return _returns_list(prim, out), _returns_list(prim, out_dims)
  target = _openjax_primitive(prim)
  target.batch_needs_axis = True
  target.def_batch(batch)


primitive_jvps = _RuleTable(_install_jvp)
primitive_transposes = _RuleTable(_install_transpose)
primitive_batchers = _RuleTable(_install_batch)
axis_primitive_batchers = _RuleTable(_install_axis_batch)


class LoweredFun:
  """``mlir.lower_fun(fun)``: lower a primitive by tracing ``fun`` (written
  with jax.numpy/lax) on the equation's operands and inlining the jaxpr."""

  def __init__(self, fun: Callable, multiple_results: bool):
    self.fun = fun
    self.multiple_results = multiple_results

  def __call__(self, ctx, *args, **params):
    def flat(*xs):
      out = self.fun(*xs, **params)
      return list(out) if self.multiple_results else [out]
    jaxpr, consts = trace_to_jaxpr(flat, list(ctx.avals_in))
    return ctx.lower_jaxpr_inline(ClosedJaxpr(jaxpr, consts), list(args))


def lower_fun(fun: Callable, multiple_results: bool = True) -> LoweredFun:
  return LoweredFun(fun, multiple_results)


def register_lowering(prim, rule: Callable, platform: str | None = None, **_):
  """Install ``rule`` as ``prim``'s lowering (``platform``: only 'cpu'/None apply)."""
  if platform not in (None, "cpu"):
    return rule
  if not isinstance(rule, LoweredFun):
    name = _openjax_primitive(prim).name

    def rule_needs_mlir(ctx, *args, **params):
      raise NotImplementedError(
          f"the lowering of primitive '{name}' is written with JAX's MLIR Python API, which "
          "openjax cannot run (it emits StableHLO text): register it with "
          "mlir.lower_fun(...) instead")
    _openjax_primitive(prim).def_lower(rule_needs_mlir)
    return rule
  _openjax_primitive(prim).def_lower(rule)
  return rule
