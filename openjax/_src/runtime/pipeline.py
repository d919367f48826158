"""jaxpr -> StableHLO -> IREE executable, with the caches in between.

``lower_closed_jaxpr`` makes the module text (and warns about donations it
cannot use), ``compile_lowered`` compiles it through the compile caches and
loads an ``Executable`` (one per distinct module), and
``executable_for_jaxpr`` does both for ``jit_p``'s impl, cached on the
jaxpr object.
"""
from __future__ import annotations

import threading
import warnings
import weakref
from typing import Sequence

from iree.compiler import ir
from iree.compiler.api import Session

from openjax._src.core import ClosedJaxpr
from openjax._src.lowering import lower_jaxpr_to_module, plan_donation
from openjax._src.runtime import compiler
from openjax._src.runtime.executable import Executable


class LoweredModule:
  """A lowered jaxpr: module text plus what running it needs."""
  __slots__ = ("text", "name", "closed_jaxpr", "aliases", "donated_invars", "__weakref__")

  def __init__(self, text, name, closed_jaxpr, aliases, donated_invars):
    self.text = text
    self.name = name
    self.closed_jaxpr = closed_jaxpr
    self.aliases = aliases
    self.donated_invars = donated_invars


def lower_closed_jaxpr(closed_jaxpr: ClosedJaxpr, name: str,
                       donated_invars: Sequence[bool] | None = None) -> LoweredModule:
  """Lower a closed jaxpr to a StableHLO module (``module @jit_<name>``)."""
  n = len(closed_jaxpr.jaxpr.invars)
  donated = tuple(donated_invars) if donated_invars is not None else (False,) * n
  aliases, unusable = plan_donation(closed_jaxpr.jaxpr, donated)
  if unusable:
    avals = ", ".join(repr(closed_jaxpr.jaxpr.invars[i].aval) for i in unusable)
    warnings.warn(
        f"Some donated buffers were not usable: {avals}.\nDonation needs an output of "
        "the same shape and dtype for each donated input (and no output may be that "
        "input itself). See an explanation at "
        "https://docs.jax.dev/en/latest/faq.html#buffer-donation.", UserWarning,
        stacklevel=4)
  text = lower_jaxpr_to_module(closed_jaxpr, name, input_output_aliases=aliases)
  return LoweredModule(text, name, closed_jaxpr, aliases, donated)


_executables: dict[str, Executable] = {}
_exec_lock = threading.Lock()


def compile_lowered(lowered: LoweredModule, compiler_options: dict | None = None) -> Executable:
  """Compile (or fetch from the caches) and load a lowered module."""
  key, vmfb = compiler.compile_module(lowered.text, name=lowered.name,
                                      compiler_options=compiler_options)
  with _exec_lock:
    ex = _executables.get(key)
    if ex is None:
      jaxpr = lowered.closed_jaxpr.jaxpr
      ex = Executable(key, vmfb, [v.aval for v in jaxpr.invars],
                      [v.aval for v in jaxpr.outvars], lowered.name, lowered.aliases)
      if len(_executables) > 1024:
        _executables.clear()
      _executables[key] = ex
    return ex


_by_jaxpr: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def executable_for_jaxpr(closed_jaxpr: ClosedJaxpr, name: str,
                         donated_invars: Sequence[bool] = ()) -> Executable:
  """The executable of ``jit_p``'s jaxpr, lowered and compiled once."""
  donated = tuple(donated_invars)
  per = _by_jaxpr.get(closed_jaxpr)
  if per is None:
    per = _by_jaxpr.setdefault(closed_jaxpr, {})
  ex = per.get(donated)
  if ex is None:
    ex = per[donated] = compile_lowered(lower_closed_jaxpr(closed_jaxpr, name, donated))
  return ex


# ----------------------------------------------------------- pretty text
_parse_lock = threading.Lock()
_session = None


def parse_module(text: str):
  """The module as an MLIR ``ir.Module`` (IREE's bindings), or None when
  parsing fails."""
  global _session
  with _parse_lock:
    if _session is None:
      _session = Session()
    try:
      return ir.Module.parse(text, _session.context)
    except Exception:  # noqa: BLE001 - an unparsable module is shown raw
      return None


def pretty_text(text: str) -> str:
  """The module in MLIR's custom syntax (``stablehlo.add %0, %1 : ...``),
  falling back to the generic text."""
  mod = parse_module(text)
  if mod is None:
    return text
  with _parse_lock:
    return str(mod)


__all__ = ["LoweredModule", "lower_closed_jaxpr", "compile_lowered", "executable_for_jaxpr",
           "parse_module", "pretty_text"]
