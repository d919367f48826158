"""A small builder for StableHLO text: SSA values, blocks and regions,
operations, functions and the module around them.

Operations are written in MLIR's *generic* form,
``%3 = "stablehlo.add"(%1, %2) : (tensor<f32>, tensor<f32>) -> tensor<f32>``,
which every operation accepts, so a lowering rule needs to know an op's
operands, attributes, regions and result types, never its custom syntax.
``Lowered.as_text()`` pretty-prints the module through MLIR when it can.
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

import numpy as np

from openjax._src.core import ShapedArray
from openjax._src.lowering import mlir_types


class Value:
  """An SSA value: its name (``%4``, ``%5#1``, ``%arg0``) and tensor type."""
  __slots__ = ("name", "type")

  def __init__(self, name: str, type: str):
    self.name = name
    self.type = type

  def __str__(self):
    return self.name

  def __repr__(self):
    return f"Value({self.name} : {self.type})"


# ------------------------------------------------------------- attributes
def attr_text(value) -> str:
  """An attribute value in MLIR syntax.

  ``str`` is taken as MLIR text already (``#stablehlo<comparison_direction LT>``,
  ``dense<...>``); ``bool`` -> ``true``; ``int`` -> ``3 : i64``; ``float`` ->
  ``0.5 : f32``; a tuple/list of ints -> ``array<i64: 0, 1>``; a tuple/list of
  bools -> ``array<i1: true, false>``.
  """
  if isinstance(value, str):
    return value
  if isinstance(value, (bool, np.bool_)):
    return "true" if value else "false"
  if isinstance(value, (int, np.integer)):
    return f"{int(value)} : i64"
  if isinstance(value, (float, np.floating)):
    return f"{mlir_types._float_literal(np.float64(value))} : f64"
  if isinstance(value, (tuple, list)):
    if all(isinstance(v, (bool, np.bool_)) for v in value) and value:
      return "array<i1: " + ", ".join("true" if v else "false" for v in value) + ">"
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
      return "array<i64" + (": " + ", ".join(str(int(v)) for v in value) if value else "") + ">"
  raise TypeError(f"lowering: cannot write {value!r} (type {type(value).__name__}) as an "
                  "MLIR attribute; pass the attribute's MLIR text as a str")


def string_attr(s: str) -> str:
  """A quoted string attribute (``"foo"``)."""
  return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def dense_int_attr(values: Sequence[int], shape=None, dtype=np.int64) -> str:
  """``dense<[1, 2]> : tensor<2xi64>`` (older StableHLO attributes use it)."""
  arr = np.asarray(values, dtype=dtype)
  if shape is not None:
    arr = arr.reshape(shape)
  return mlir_types.dense_attr(arr)


def enum_attr(kind: str, value: str) -> str:
  """A StableHLO enum attribute, e.g. ``#stablehlo<comparison_direction LT>``."""
  return f"#stablehlo<{kind} {value}>"


def type_of(x) -> str:
  """A tensor type from a type string, a ``ShapedArray`` or a ``Value``."""
  if isinstance(x, str):
    return x
  if isinstance(x, ShapedArray):
    return mlir_types.aval_type(x)
  if isinstance(x, Value):
    return x.type
  raise TypeError(f"lowering: expected a tensor type (str, ShapedArray or Value), got {x!r}")


def _types_text(types: Sequence[str]) -> str:
  return "(" + ", ".join(types) + ")"


# ---------------------------------------------------------------- regions
class Region:
  """A one-block region under construction (the body of reduce, sort,
  while, case, ...). Use it as a context manager: operations emitted inside
  the ``with`` go into this region; ``args`` are its block arguments.
  Finish the block with a terminator (``ctx.op("stablehlo.return", ...)``)."""

  def __init__(self, fn: "FunctionBuilder", arg_types: Sequence):
    self._fn = fn
    self.args = [Value(fn.fresh_name(), type_of(t)) for t in arg_types]
    self.lines: list[str] = []
    self.const_cache: dict = {}

  def __enter__(self) -> "Region":
    self._fn.blocks.append(self)
    return self

  def __exit__(self, *exc):
    popped = self._fn.blocks.pop()
    assert popped is self, "lowering: regions must be closed in the order opened"

  def __iter__(self):   # allows ``with ctx.region(ts) as (region, args)`` style unpacking
    return iter((self, self.args))

  def text(self, indent: str) -> str:
    head = ""
    if self.args:
      head = (indent + "^bb0(" + ", ".join(f"{a.name}: {a.type}" for a in self.args)
              + "):\n")
    body = "".join(f"{indent}  {line}\n" for line in self.lines)
    return "{\n" + head + body + indent[:-2] + "}"


class _Block:
  """The body block of a function."""

  def __init__(self):
    self.lines: list[str] = []
    self.const_cache: dict = {}


# --------------------------------------------------------------- functions
class FunctionBuilder:
  """One ``func.func``: arguments, a body built op by op, a return."""

  def __init__(self, module: "ModuleBuilder", symbol: str, arg_types: Sequence[str], *,
               public: bool = False, arg_attrs: Sequence[dict | None] | None = None):
    self.module = module
    self.symbol = symbol
    self.public = public
    self.arg_types = [type_of(t) for t in arg_types]
    self.arg_attrs = list(arg_attrs) if arg_attrs is not None else [None] * len(arg_types)
    self.args = [Value(f"%arg{i}", t) for i, t in enumerate(self.arg_types)]
    self.result_types: list[str] | None = None
    self._counter = 0
    self.body = _Block()
    self.blocks: list = [self.body]

  def fresh_name(self) -> str:
    n = self._counter
    self._counter += 1
    return f"%{n}"

  @property
  def current(self):
    return self.blocks[-1]

  def op(self, name: str, operands: Sequence[Value], result_types=None, *,
         attrs: dict | None = None, regions: Sequence[Region] = ()):
    """Emit ``name`` and return its result: one ``Value`` when
    ``result_types`` is a single type, a list when it is a list (``[]`` for
    none)."""
    single = not isinstance(result_types, (list, tuple))
    if result_types is None:
      types: list[str] = []
      single = False
    else:
      types = [type_of(result_types)] if single else [type_of(t) for t in result_types]
    for o in operands:
      if not isinstance(o, Value):
        raise TypeError(f"lowering: operand of {name} must be a Value, got {o!r}; make "
                        "constants with ctx.constant(...)")
    text = f'"{name}"(' + ", ".join(o.name for o in operands) + ")"
    if regions:
      indent = "  " * (len(self.blocks) + 1)
      text += " (" + ", ".join(r.text(indent + "  ") for r in regions) + ")"
    if attrs:
      text += " {" + ", ".join(f"{k} = {attr_text(v)}" for k, v in attrs.items()) + "}"
    res_text = types[0] if len(types) == 1 else _types_text(types)
    text += f" : {_types_text([o.type for o in operands])} -> {res_text}"
    if not types:
      self.current.lines.append(text)
      return []
    base = self.fresh_name()
    if len(types) == 1:
      self.current.lines.append(f"{base} = {text}")
      results = [Value(base, types[0])]
    else:
      self.current.lines.append(f"{base}:{len(types)} = {text}")
      results = [Value(f"{base}#{i}", t) for i, t in enumerate(types)]
    return results[0] if single else results

  def constant(self, value, dtype=None) -> Value:
    """A ``stablehlo.constant`` (one per distinct value in each block)."""
    arr = np.asarray(value) if dtype is None else np.asarray(value, dtype=dtype)
    if dtype is not None and arr.dtype != np.dtype(dtype):
      arr = arr.astype(dtype)
    key = (arr.dtype.str, arr.shape, arr.tobytes()) if arr.size <= 64 else None
    cache = self.current.const_cache
    if key is not None and key in cache:
      return cache[key]
    ty = mlir_types.tensor_type(arr.shape, arr.dtype)
    if arr.dtype.kind == "c":
      # IREE fills splat constants with one machine word; a 128-bit complex
      # splat fails to compile, and a complex64 scalar feeding a loop becomes
      # an arith.constant IREE rejects ("failed to satisfy constraint:
      # TypedAttr"), so complex constants are built from their real parts.
      parts = [self.constant(arr.real), self.constant(arr.imag)]
      v = self.op("stablehlo.complex", parts, ty)
    else:
      v = self.op("stablehlo.constant", [], ty, attrs={"value": mlir_types.dense_attr(arr)})
    if key is not None:
      cache[key] = v
    return v

  def ret(self, values: Sequence[Value]) -> None:
    """``func.return`` and record the function's result types."""
    self.result_types = [v.type for v in values]
    self.op("func.return", list(values), [])

  def text(self) -> str:
    vis = "public" if self.public else "private"
    args = []
    for a, attrs in zip(self.args, self.arg_attrs):
      s = f"{a.name}: {a.type}"
      if attrs:
        s += " {" + ", ".join(f"{k} = {attr_text(v)}" for k, v in attrs.items()) + "}"
      args.append(s)
    results = self.result_types or []
    res = "" if not results else " -> " + _types_text(results)
    body = "".join(f"    {line}\n" for line in self.body.lines)
    return f"  func.func {vis} @{self.symbol}({', '.join(args)}){res} {{\n{body}  }}\n"


_SYMBOL_BAD = re.compile(r"[^A-Za-z0-9_]")


def sanitize_symbol(name: str) -> str:
  """A valid bare MLIR symbol from any function name (``<lambda>`` -> ``_lambda_``)."""
  s = _SYMBOL_BAD.sub("_", name) or "fn"
  return s if not s[0].isdigit() else "_" + s


class ModuleBuilder:
  """A ``module @name`` holding functions; symbols are made unique."""

  def __init__(self, name: str):
    self.name = sanitize_symbol(name)
    self.functions: list[FunctionBuilder] = []
    self._symbols: set[str] = set()
    # id(jaxpr) -> (symbol, jaxpr kept alive so the id stays unique)
    self.lowered_jaxprs: dict[int, tuple[str, object]] = {}
    # symbol -> declaration line of a function the runtime provides
    # (``@module.function``, resolved when the program is loaded)
    self.imports: dict[str, str] = {}
    # Whether lowering rules may call host kernels (BLAS products on the
    # CPU): True for the module a CPU executable is compiled from, False
    # for the portable StableHLO users read (``Lowered.as_text``).
    self.host_kernels = False

  def declare_import(self, symbol: str, arg_types: Sequence, result_types: Sequence) -> str:
    """Declare ``@symbol`` (``module.function``), a function the program
    imports from the runtime, once per module; returns ``@symbol``."""
    symbol = symbol.lstrip("@")
    if symbol not in self.imports:
      args = ", ".join(type_of(t) for t in arg_types)
      results = [type_of(t) for t in result_types]
      res = "" if not results else " -> " + _types_text(results)
      self.imports[symbol] = f"  func.func private @{symbol}({args}){res}\n"
    return "@" + symbol

  def unique_symbol(self, base: str) -> str:
    base = sanitize_symbol(base)
    name, i = base, 0
    while name in self._symbols:
      i += 1
      name = f"{base}_{i}"
    self._symbols.add(name)
    return name

  def new_function(self, base_name: str, arg_types: Iterable, **kw) -> FunctionBuilder:
    fb = FunctionBuilder(self, self.unique_symbol(base_name), list(arg_types), **kw)
    self.functions.append(fb)
    return fb

  def text(self) -> str:
    funcs = "".join(self.imports.values()) + "".join(f.text() for f in self.functions)
    return f"module @{self.name} {{\n{funcs}}}\n"


__all__ = ["Value", "Region", "FunctionBuilder", "ModuleBuilder", "attr_text", "string_attr",
           "dense_int_attr", "enum_attr", "type_of", "sanitize_symbol"]
