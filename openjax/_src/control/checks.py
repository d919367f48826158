"""``check_p``: a runtime assertion (``checkify.check``, ``debug_check``,
``check_error``) that ``checkify.checkify`` turns into an error value.

Outside ``checkify`` an eager check raises at once when its predicate is
False; a staged one cannot run (a compiled program has no way to raise) and
lowering says how to functionalize it, except ``debug_check``, which is then
a no-op. The equation has an effect, so it is never removed as dead code.
"""
from __future__ import annotations

import numpy as np

from openjax._src import tree_util
from openjax._src.core import Effect, Primitive, Tracer, get_aval


from openjax._src.core.sharding_rules import replicated_rule
class JaxRuntimeError(ValueError):
  """A failed ``checkify`` check (``Error.throw``, eager ``check``)."""


class ErrorEffect(Effect):
  """The effect of a check that ``checkify`` must functionalize."""
  must_be_functionalized = True

  def __str__(self):
    return "Error"


class DebugErrorEffect(Effect):
  """The effect of ``debug_check`` (a no-op unless functionalized)."""
  def __str__(self):
    return "DebugError"


error_effect = ErrorEffect()
debug_error_effect = DebugErrorEffect()

check_p = Primitive("check", multiple_results=True)
check_p.def_sharding_rule(replicated_rule)   # no array results

NOT_FUNCTIONALIZED = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably "
    "means you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it "
    "through `checkify.checkify`.")


def _flat_format_args(args, kwargs, fun: str):
  flat, in_tree = tree_util.tree_flatten((args, kwargs))
  for x in flat:
    if not (isinstance(x, Tracer) or hasattr(x, "aval") or isinstance(x, (np.ndarray,
                                                                        np.generic))):
      raise TypeError(f"Formatting arguments to {fun} need to be PyTrees of arrays, but got "
                      f"{x!r} of type {type(x)}.")
  return flat, in_tree


def check(pred, msg: str, *fmt_args, **fmt_kwargs) -> None:
  """Assert that ``pred`` (a boolean array) is all True. Under
  ``checkify.checkify`` a failure becomes its error (``msg`` formatted with
  the arguments' values); eagerly it raises ``JaxRuntimeError``."""
  _bind_check(pred, msg, fmt_args, fmt_kwargs, debug=False)


def debug_check(pred, msg: str, *fmt_args, **fmt_kwargs) -> None:
  """``check`` that does nothing unless functionalized by ``checkify``."""
  _bind_check(pred, msg, fmt_args, fmt_kwargs, debug=True)


def _bind_check(pred, msg, fmt_args, fmt_kwargs, *, debug: bool) -> None:
  if not isinstance(msg, str):
    raise TypeError(f"checkify.check: msg must be a str, got {type(msg).__name__}")
  aval = get_aval(pred)
  if aval.dtype != np.dtype(np.bool_):
    raise TypeError(f"check takes a boolean predicate, got {aval.str_short()}")
  flat, in_tree = _flat_format_args(fmt_args, fmt_kwargs, "checkify.check")
  check_p.bind(pred, *flat, msg=msg, in_tree=in_tree, debug=debug, error_sites=None)


def format_check_message(msg: str, in_tree, values) -> str:
  args, kwargs = tree_util.tree_unflatten(in_tree, list(values))
  return msg.format(*args, **kwargs) + " (`check` failed)"


def check_error_with(pred, leaves, *, error_sites, debug: bool = False) -> None:
  """Bind a check whose failure is an existing checkify error (its leaves
  after the predicate; ``error_sites`` formats it)."""
  check_p.bind(pred, *leaves, msg="", in_tree=None, debug=debug, error_sites=error_sites)


@check_p.def_impl
def _check_impl(pred, *values, msg, in_tree, debug, error_sites):
  if debug or np.all(pred):
    return []
  if error_sites is not None:
    raise JaxRuntimeError(error_sites.message(values))
  raise JaxRuntimeError(format_check_message(msg, in_tree, values))


@check_p.def_abstract_eval
def _check_abstract_eval(pred, *avals, **params):
  return []


@check_p.def_effects
def _check_effects(*, debug, **params):
  return frozenset({debug_error_effect if debug else error_effect})


@check_p.def_jvp
def _check_jvp(primals, tangents, **params):
  check_p.bind(*primals, **params)
  return [], []


check_p.mark_not_applicable("transpose", "a check has no outputs to transpose")


@check_p.def_batch
def _check_batch(vals, dims, **params):
  # The predicate and values keep their batch axes: the check holds when it
  # holds for every example.
  check_p.bind(*vals, **params)
  return [], []


@check_p.def_lower
def _check_lower(ctx, *args, debug, **params):
  if debug:
    return []
  raise ValueError(NOT_FUNCTIONALIZED)


__all__ = ["check_p", "check", "debug_check", "check_error_with", "JaxRuntimeError",
           "ErrorEffect", "DebugErrorEffect", "error_effect", "debug_error_effect",
           "format_check_message", "NOT_FUNCTIONALIZED"]
