"""Lowering jaxprs to StableHLO modules.

Each equation's primitive lowers itself through its ``lower`` rule
(``@foo_p.def_lower``), called as ``rule(ctx, *operands, **params)`` where
``operands`` are ``Value``s and ``ctx`` is a :class:`LoweringContext`; the
rule returns one ``Value`` per result. Higher-order primitives lower their
sub-jaxprs through ``ctx.lower_jaxpr_as_function`` (a private ``func.func``
called with ``ctx.call``) or ``ctx.lower_jaxpr_inline`` (into a region).
"""
from __future__ import annotations

import math
import re

from typing import Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.core import ClosedJaxpr, DropVar, Jaxpr, Literal, ShapedArray, Var
from openjax._src.lowering import mlir_types
from openjax._src.lowering.builder import (FunctionBuilder, ModuleBuilder, Region, Value,
                                           type_of)


def _missing_rule_error(name: str) -> NotImplementedError:
  return NotImplementedError(
      f"MLIR translation rule for primitive '{name}' not found: jit cannot compile "
      f"a function that uses '{name}' yet. Run it eagerly (jax.disable_jit()) or with "
      "the interpreter executor (OPENJAX_EXECUTOR=interpreter, or "
      "jax.config.update('openjax_executor', 'interpreter')).")


class LoweringContext:
  """What a lowering rule gets for one equation.

  ``avals_in``/``avals_out`` are the equation's abstract values; ``op``,
  ``constant``, ``broadcast_in_dim``, ``convert``, ``full``, ``region``,
  ``call`` and the sub-jaxpr helpers emit into the current block.
  """

  def __init__(self, fn: FunctionBuilder, avals_in: Sequence[ShapedArray],
               avals_out: Sequence[ShapedArray], primitive=None, params=None):
    self.fn = fn
    self.module = fn.module
    self.avals_in = list(avals_in)
    self.avals_out = list(avals_out)
    self.primitive = primitive
    self.params = params or {}

  # ---- types ----
  @staticmethod
  def tensor_type(shape, dtype) -> str:
    """``tensor<2x3xf32>``."""
    return mlir_types.tensor_type(shape, dtype)

  @staticmethod
  def aval_type(aval: ShapedArray) -> str:
    return mlir_types.aval_type(aval)

  @staticmethod
  def element_type(dtype) -> str:
    return mlir_types.element_type(dtype)

  # ---- operations ----
  def op(self, name: str, operands: Sequence[Value], result_types=None, *,
         attrs: dict | None = None, regions: Sequence[Region] = ()):
    """Emit an operation in generic form; see ``FunctionBuilder.op``.
    ``result_types`` may be type strings or ``ShapedArray``s."""
    return self.fn.op(name, operands, result_types, attrs=attrs, regions=regions)

  def constant(self, value, dtype=None) -> Value:
    """A ``stablehlo.constant`` holding ``value`` (any shape)."""
    return self.fn.constant(value, dtype)

  def full(self, value, shape, dtype) -> Value:
    """A tensor of ``shape`` filled with the scalar ``value``."""
    c = self.constant(np.asarray(value, dtype=dtype))
    if not tuple(shape):
      return c
    out = self.broadcast_in_dim(c, shape, ())
    if np.dtype(dtype) == np.complex128:
      # Each complex128 fill a value of its own (see broadcast_in_dim's rule).
      out = self.op("stablehlo.optimization_barrier", [out], out.type)
    return out

  def broadcast_in_dim(self, x: Value, shape, broadcast_dimensions) -> Value:
    """``stablehlo.broadcast_in_dim`` of ``x`` to ``shape`` (same element type)."""
    _, elt = mlir_types.split_tensor_type(x.type)
    out = f"tensor<{''.join(f'{int(d)}x' for d in shape)}{elt}>"
    return self.op("stablehlo.broadcast_in_dim", [x], out,
                   attrs={"broadcast_dimensions": tuple(int(d) for d in broadcast_dimensions)})

  def convert(self, x: Value, aval_or_dtype, shape=None) -> Value:
    """``stablehlo.convert`` of ``x`` to a dtype (keeping the shape of the
    operand's aval ``shape``) or to an aval's type."""
    if isinstance(aval_or_dtype, ShapedArray):
      ty = mlir_types.aval_type(aval_or_dtype)
    else:
      if shape is None:
        raise TypeError("ctx.convert: pass the shape with a dtype, or an aval")
      ty = mlir_types.tensor_type(shape, aval_or_dtype)
    if ty == x.type:
      return x
    return self.op("stablehlo.convert", [x], ty)

  def emit(self, line: str) -> None:
    """Append one raw line of MLIR to the current block (an escape hatch for
    syntax ``op`` cannot express; name its results with ``fresh_value``)."""
    self.fn.current.lines.append(line)

  def fresh_value(self, type_) -> Value:
    """A new SSA value name of ``type_``, for results written with ``emit``."""
    return Value(self.fn.fresh_name(), type_of(type_))

  def region(self, arg_types: Sequence) -> Region:
    """A new one-block region with block arguments of ``arg_types``; emit its
    body inside ``with ctx.region(...) as r:`` and pass it in ``regions=``."""
    return Region(self.fn, arg_types)

  def ret(self, values: Sequence[Value]) -> None:
    """``stablehlo.return`` (the terminator of a region)."""
    self.op("stablehlo.return", list(values), [])

  # ---- sub-jaxprs ----
  def lower_jaxpr_as_function(self, jaxpr: ClosedJaxpr | Jaxpr, name: str) -> str:
    """Lower ``jaxpr`` as a private ``func.func`` of this module (once per
    jaxpr object) and return its symbol, ``@name``; call it with ``ctx.call``."""
    return lower_jaxpr_as_function(self.module, jaxpr, name)

  def call(self, symbol: str, operands: Sequence[Value], result_types: Sequence) -> list[Value]:
    """``func.call @symbol(operands)``; returns the list of results."""
    if not symbol.startswith("@"):
      symbol = "@" + symbol
    return self.op("func.call", list(operands), [type_of(t) for t in result_types],
                   attrs={"callee": symbol})

  def call_import(self, symbol: str, operands: Sequence[Value],
                  result_types: Sequence) -> list[Value]:
    """Call ``@symbol`` (``module.function``), a function the runtime
    provides when the program is loaded (host calls), declaring it in the
    module; returns the list of results."""
    callee = self.module.declare_import(symbol, [o.type for o in operands], result_types)
    if operands:
      # Without the barrier, an import reading a value the program computes
      # and also returns leaves the program's signal fence unsignalled on
      # the local-task device (IREE 3.13; probed): the call never finishes.
      operands = self.op("stablehlo.optimization_barrier", list(operands),
                         [o.type for o in operands])
    return self.call(callee, operands, result_types)

  def lower_jaxpr_inline(self, jaxpr: ClosedJaxpr | Jaxpr, args: Sequence[Value],
                         consts: Sequence | None = None) -> list[Value]:
    """Lower ``jaxpr``'s equations into the current block (e.g. a region
    body) with ``args`` for its inputs; returns its outputs."""
    if isinstance(jaxpr, ClosedJaxpr):
      consts = jaxpr.consts if consts is None else consts
      jaxpr = jaxpr.jaxpr
    return lower_jaxpr_body(self.fn, jaxpr, list(consts or ()), list(args))


# ---------------------------------------------------------------- jaxprs
def lower_jaxpr_body(fn: FunctionBuilder, jaxpr: Jaxpr, consts: Sequence,
                     args: Sequence[Value]) -> list[Value]:
  """Emit ``jaxpr``'s equations into ``fn``'s current block; return the
  values of its outputs."""
  if len(args) != len(jaxpr.invars):
    raise TypeError(f"lowering: jaxpr takes {len(jaxpr.invars)} inputs, got {len(args)}")
  env: dict[Var, Value] = {}

  def read(a) -> Value:
    if type(a) is Literal:
      return fn.constant(np.asarray(a.val, dtype=a.aval.dtype))
    return env[a]

  for v, c in zip(jaxpr.constvars, consts):
    env[v] = fn.constant(np.asarray(c), v.aval.dtype)
  for v, a in zip(jaxpr.invars, args):
    env[v] = a
  for eqn in jaxpr.eqns:
    prim = eqn.primitive
    rule = prim.lower
    if rule is None:
      raise _missing_rule_error(prim.name)
    avals_in = [a.aval for a in eqn.invars]
    avals_out = [v.aval for v in eqn.outvars]
    ctx = LoweringContext(fn, avals_in, avals_out, prim, eqn.params)
    outs = rule(ctx, *(read(a) for a in eqn.invars), **eqn.params)
    if isinstance(outs, Value):
      outs = [outs]
    outs = list(outs)
    if len(outs) != len(eqn.outvars):
      raise ValueError(f"lowering rule for '{prim.name}' returned {len(outs)} values; the "
                       f"equation has {len(eqn.outvars)} outputs")
    for i, (v, o) in enumerate(zip(eqn.outvars, outs)):
      expected = mlir_types.aval_type(v.aval)
      if not isinstance(o, Value) or o.type != expected:
        got = o.type if isinstance(o, Value) else repr(o)
        raise TypeError(f"lowering rule for '{prim.name}' returned {got} for output {i}; "
                        f"the equation's output is {expected}. Fix the rule's result type.")
      if not isinstance(v, DropVar):
        env[v] = o
  return [read(a) for a in jaxpr.outvars]


def lower_jaxpr_as_function(module: ModuleBuilder, jaxpr: ClosedJaxpr | Jaxpr,
                            name: str) -> str:
  """Lower ``jaxpr`` into a private function of ``module`` and return its
  ``@symbol``; the same jaxpr object is lowered only once per module."""
  if isinstance(jaxpr, ClosedJaxpr):
    inner, consts = jaxpr.jaxpr, jaxpr.consts
  else:
    inner, consts = jaxpr, []
  hit = module.lowered_jaxprs.get(id(jaxpr))
  if hit is not None:
    return "@" + hit[0]
  fn = module.new_function(name, [v.aval for v in inner.invars])
  outs = lower_jaxpr_body(fn, inner, consts, fn.args)
  fn.ret(outs)
  module.lowered_jaxprs[id(jaxpr)] = (fn.symbol, jaxpr)
  return "@" + fn.symbol


# -------------------------------------------------------------- donation
def plan_donation(jaxpr: Jaxpr, donated_invars: Sequence[bool]) -> tuple[dict[int, int], list[int]]:
  """Which donated inputs can hold which outputs.

  Returns ``(aliases, unusable)``: ``aliases`` maps an input index to the
  output index whose result is written into that input's buffer (same shape
  and dtype; each output used once); ``unusable`` lists donated inputs with no
  such output. Outputs that are inputs, constants or repeated are never
  aliased: their buffers are shared and must not be overwritten.
  """
  aliases: dict[int, int] = {}
  unusable: list[int] = []
  if not any(donated_invars):
    return aliases, unusable
  invars = set(jaxpr.invars) | set(jaxpr.constvars)
  counts: dict = {}
  for o in jaxpr.outvars:
    if isinstance(o, Var):
      counts[o] = counts.get(o, 0) + 1
  free = [j for j, o in enumerate(jaxpr.outvars)
          if isinstance(o, Var) and o not in invars and counts[o] == 1]
  for i, (v, d) in enumerate(zip(jaxpr.invars, donated_invars)):
    if not d:
      continue
    for j in free:
      oa = jaxpr.outvars[j].aval
      if oa.shape == v.aval.shape and oa.dtype == v.aval.dtype and oa.dtype != dtypes.float0:
        aliases[i] = j
        free.remove(j)
        break
    else:
      unusable.append(i)
  return aliases, unusable


# ---------------------------------------------------------------- modules
def lower_jaxpr_to_module(closed_jaxpr: ClosedJaxpr, name: str, *,
                          donated_invars: Sequence[bool] | None = None,
                          input_output_aliases: dict[int, int] | None = None,
                          host_kernels: bool = False) -> str:
  """The StableHLO module of a closed jaxpr, as text.

  ``module @jit_<name>`` holds ``func.func public @main`` taking the jaxpr's
  inputs and returning its outputs; consts become ``stablehlo.constant``s.
  A donated input whose buffer holds an output carries
  ``{iree.abi.output = j : index}``; the outputs then pass through one
  ``stablehlo.optimization_barrier``, so every read of a donated input
  happens before its buffer is overwritten (without it IREE may schedule a
  reader after the in-place write). With ``host_kernels`` lowering rules
  may call host kernels (``ModuleBuilder.host_kernels``).
  """
  jaxpr = closed_jaxpr.jaxpr
  if input_output_aliases is None:
    input_output_aliases = plan_donation(
        jaxpr, donated_invars or (False,) * len(jaxpr.invars))[0]
  module = ModuleBuilder(f"jit_{name}")
  module.host_kernels = host_kernels
  arg_attrs = [None] * len(jaxpr.invars)
  for i, j in input_output_aliases.items():
    arg_attrs[i] = {"iree.abi.output": f"{int(j)} : index"}
  main = module.new_function("main", [v.aval for v in jaxpr.invars], public=True,
                             arg_attrs=arg_attrs)
  outs = lower_jaxpr_body(main, jaxpr, closed_jaxpr.consts, main.args)
  if input_output_aliases and outs:
    outs = main.op("stablehlo.optimization_barrier", outs, [o.type for o in outs])
  main.ret(outs)
  # main first, then the private functions it calls, as JAX prints modules.
  return module.text()


def module_has_complex_dot(text: str) -> bool:
  """Whether a module multiplies complex matrices, or makes complex numbers
  in a module with matrix products (IREE's data tiling cannot compile those:
  it fuses a product's unpacking into the ``stablehlo.complex`` reading it and
  fails on a complex padding value, e.g. jit(jnp.fft.rfft) of 1e6 points,
  whose 25 x 40 x 1000 real DFT products make complex values; the compiler
  turns data tiling off for such modules)."""
  products = makes_complex = False
  for line in text.splitlines():
    if "dot_general" in line:
      if "complex<" in line:
        return True
      products = True
    elif "stablehlo.complex " in line or '"stablehlo.complex"' in line:
      makes_complex = True
  return products and makes_complex


_CONTRACTION_TYPES = re.compile(
    r":\s*\(tensor<([^>]*)>,\s*tensor<([^>]*)>\)\s*->\s*tensor<([^>]*)>")


def _elements(tensor_type: str) -> int:
  n = 1
  for d in tensor_type.split("x")[:-1]:
    n *= int(d) if d.isdigit() else 1
  return n


def _contractions(text: str):
  """``(flops, depth, out, line)`` of every ``dot_general`` and ``convolution``
  of a module, estimated from operand and result types: an op's depth is
  sqrt(lhs * rhs / out) (the contracted size K of a matrix product) and its
  flops 2 * out * depth."""
  for line in text.splitlines():
    if "stablehlo.dot_general" not in line and "stablehlo.convolution" not in line:
      continue
    m = _CONTRACTION_TYPES.search(line)
    if m is None:
      continue
    lhs, rhs, out = (_elements(t) for t in m.groups())
    if out:
      depth = math.sqrt(lhs * rhs / out)
      yield 2.0 * out * depth, depth, out, line


def contraction_stats(text: str) -> tuple[float, float]:
  """``(largest flops, mean depth)`` of a module's ``dot_general`` and
  ``convolution`` ops (see ``_contractions``); the mean depth is all ops'
  flops over twice all their output elements. ``(0, 0)`` without such an op."""
  largest = total = outputs = 0.0
  for flops, _, out, _ in _contractions(text):
    largest = max(largest, flops)
    total += flops
    outputs += out
  return largest, (total / (2.0 * outputs) if outputs else 0.0)


_CONV_KERNEL_LABELS = re.compile(r"\]x\[([^\]]*)\]->")


def _window_taps(line: str) -> int:
  """Kernel taps (product of the window sizes) of a ``convolution`` line."""
  labels = [s.strip() for s in _CONV_KERNEL_LABELS.search(line).group(1).split(",")]
  sizes = _CONTRACTION_TYPES.search(line).group(2).split("x")[:-1]
  return math.prod(int(n) for label, n in zip(labels, sizes) if label.isdigit())


def convolution_module_depths(text: str) -> list[float] | None:
  """For a module with a ``convolution``: the depths (see ``_contractions``)
  of its matrix products and single-tap (1x1) convolutions, the ops IREE
  can data-tile; None for a module without a convolution."""
  if "stablehlo.convolution" not in text:
    return None
  return [depth for _, depth, _, line in _contractions(text)
          if "stablehlo.dot_general" in line or _window_taps(line) == 1]


def max_contraction_flops(text: str) -> float:
  """The largest flop count of one ``dot_general``/``convolution`` in a module
  (see ``contraction_stats``)."""
  return contraction_stats(text)[0]


__all__ = ["LoweringContext", "lower_jaxpr_to_module", "lower_jaxpr_body",
           "lower_jaxpr_as_function", "plan_donation", "module_has_complex_dot",
           "max_contraction_flops", "contraction_stats",
           "convolution_module_depths"]
