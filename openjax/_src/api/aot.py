"""The ahead-of-time stages after ``jit(f).trace(...)``: ``Lowered`` (the
StableHLO module) and ``Compiled`` (the IREE executable), as in JAX:
``jit(f).lower(x, y).compile()(x, y)``.

They work whatever the default executor is: lowering and compiling are
explicit requests. A ``Compiled`` is specialised to the argument types it
was lowered for; calling it with other types raises ``TypeError`` naming
the expected signature, and it cannot be transformed (tracers raise).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from openjax._src import tree_util
from openjax._src.api.shapes import to_shape_dtype_struct
from openjax._src.core import ClosedJaxpr, Tracer, default_device, get_aval
from openjax._src.core.sharding import SingleDeviceSharding
from openjax._src.lowering.cost import cost_analysis as _jaxpr_cost
from openjax._src.runtime.executable import Executable
from openjax._src.runtime.pipeline import (LoweredModule, compile_lowered, parse_module,
                                           pretty_text)


class Lowered:
  """A function lowered to StableHLO for specific argument types."""

  def __init__(self, module: LoweredModule, in_tree, out_tree, args_info,
               compiler_options: dict | None = None, spmd=None):
    # spmd: the SPMD partition (control/spmd.py's SpmdPlan) of a function
    # whose arguments or shardings split over several devices, else None.
    self._spmd = spmd
    self._module = module
    self.in_tree = in_tree
    self.out_tree = out_tree
    self.args_info = args_info
    self._compiler_options = dict(compiler_options or {})

  @property
  def out_info(self):
    """The outputs as a pytree of ``ShapeDtypeStruct``."""
    return tree_util.tree_unflatten(
        self.out_tree, [to_shape_dtype_struct(a) for a in self._module.closed_jaxpr.out_avals])

  @property
  def jaxpr(self) -> ClosedJaxpr:
    return self._module.closed_jaxpr

  def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
    """The module as StableHLO text (MLIR's readable syntax)."""
    _check_dialect(dialect)
    text = pretty_text(self._module.portable_text)
    return text if self._spmd is None else self._spmd.annotate(text)

  def compiler_ir(self, dialect: str | None = None):
    """The module as an MLIR ``ir.Module`` (IREE's MLIR bindings), or its
    text when it cannot be parsed."""
    _check_dialect(dialect)
    mod = parse_module(self._module.portable_text)
    return mod if mod is not None else self._module.portable_text

  def compile(self, compiler_options: dict | None = None) -> "Compiled":
    """Compile with IREE (through the compilation caches)."""
    opts = dict(self._compiler_options)
    opts.update(compiler_options or {})
    ex = compile_lowered(self._module, opts or None)
    return Compiled(ex, self._module, self.in_tree, self.out_tree, self.args_info, self._spmd)

  def cost_analysis(self) -> dict:
    """Flops, transcendentals and bytes accessed, estimated from the jaxpr."""
    return _jaxpr_cost(self._module.closed_jaxpr)

  def __repr__(self):
    return f"<Lowered {self._module.name}>"


def _check_dialect(dialect) -> None:
  if dialect not in (None, "stablehlo", "mhlo"):
    raise ValueError(f"Lowered.as_text: unknown dialect {dialect!r}; openjax lowers to "
                     "'stablehlo'")


@dataclasses.dataclass(frozen=True)
class CompiledMemoryStats:
  """Sizes in bytes, like JAX's ``compiled.memory_analysis()``."""
  argument_size_in_bytes: int
  output_size_in_bytes: int
  alias_size_in_bytes: int
  temp_size_in_bytes: int
  generated_code_size_in_bytes: int
  host_argument_size_in_bytes: int = 0
  host_output_size_in_bytes: int = 0
  host_alias_size_in_bytes: int = 0
  host_temp_size_in_bytes: int = 0


def _nbytes(aval) -> int:
  return aval.size * aval.dtype.itemsize if aval.dtype.itemsize else 0


class Compiled:
  """A compiled function for specific argument types; call it with arrays
  of exactly those types (static arguments are not passed again)."""

  def __init__(self, executable: Executable, module: LoweredModule, in_tree, out_tree,
               args_info, spmd=None):
    self._spmd = spmd
    self._executable = executable
    self._module = module
    self.in_tree = in_tree
    self.out_tree = out_tree
    self.args_info = args_info

  @property
  def out_info(self):
    return tree_util.tree_unflatten(
        self.out_tree, [to_shape_dtype_struct(a) for a in self._module.closed_jaxpr.out_avals])

  def as_text(self) -> str:
    """The module this executable was compiled from: the lowered StableHLO,
    where large matrix products on the CPU call the host's BLAS (host
    kernels, ``openjax_host_k...``) as XLA's CPU code calls its own."""
    text = pretty_text(self._module.text)
    return text if self._spmd is None else self._spmd.annotate(text)

  def cost_analysis(self) -> dict:
    """``{'flops', 'transcendentals', 'bytes accessed'}`` estimated from the
    jaxpr by per-primitive cost rules."""
    return _jaxpr_cost(self._module.closed_jaxpr)

  def memory_analysis(self) -> CompiledMemoryStats:
    jaxpr = self._module.closed_jaxpr.jaxpr
    arg = sum(_nbytes(v.aval) for v in jaxpr.invars)
    out = sum(_nbytes(v.aval) for v in jaxpr.outvars)
    alias = sum(_nbytes(jaxpr.invars[i].aval) for i in self._module.aliases)
    return CompiledMemoryStats(arg, out, alias, 0, len(self._executable.vmfb))

  @property
  def input_shardings(self):
    if self._spmd is not None:
      return tree_util.tree_unflatten(self.in_tree, self._spmd.input_shardings())
    sh = SingleDeviceSharding(default_device())
    return tree_util.tree_unflatten(self.in_tree, [sh] * self.in_tree.num_leaves)

  @property
  def output_shardings(self):
    if self._spmd is not None:
      return tree_util.tree_unflatten(self.out_tree, self._spmd.output_shardings())
    sh = SingleDeviceSharding(default_device())
    return tree_util.tree_unflatten(self.out_tree, [sh] * self.out_tree.num_leaves)

  def runtime_executable(self) -> Executable:
    return self._executable

  def __call__(self, *args, **kwargs):
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    for x in leaves:
      if isinstance(x, Tracer):
        raise TypeError(
            "Cannot apply JAX transformations to a function lowered and compiled for a "
            f"particular signature. Detected argument of Tracer type {type(x)}: "
            "AOT-compiled functions cannot be transformed (jit, grad, vmap, ...). "
            "Transform the original function and lower that instead, e.g. "
            "jax.jit(jax.grad(f)).lower(...).compile().")
    if in_tree != self.in_tree:
      raise TypeError(
          "Function compiled with input pytree does not match the input pytree it was "
          f"called with.\nCompiled for: {self.in_tree}\nCalled with:  {in_tree}\n"
          "(Static arguments are fixed at lowering time and are not passed to the "
          "compiled function.)")
    expected = self._executable.in_avals
    bad = []
    for i, (x, e) in enumerate(zip(leaves, expected)):
      a = get_aval(x)
      if a.shape != e.shape or a.dtype != e.dtype:
        bad.append(f"Argument {i} compiled with {e.str_short()} and called with "
                   f"{a.str_short()}")
    if bad:
      sig = _signature(self.in_tree, expected)
      raise TypeError("Argument types differ from the types for which this computation "
                      "was compiled. The mismatches are:\n" + "\n".join(bad)
                      + f"\nThe compiled signature is (args, kwargs) = {sig}.\nLower and compile again for the new types, or call the jitted "
                      "function, which compiles for each signature.")
    if self._spmd is not None:   # one program per device, as the partition says
      return tree_util.tree_unflatten(self.out_tree, self._spmd.run(leaves))
    outs = self._executable.execute(leaves)
    return tree_util.tree_unflatten(self.out_tree, outs)

  def __repr__(self):
    return f"<Compiled {self._module.name}>"


def _signature(in_tree, avals) -> Any:
  return tree_util.tree_unflatten(in_tree, [a.str_short() for a in avals])


__all__ = ["Lowered", "Compiled", "CompiledMemoryStats"]
