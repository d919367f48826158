"""What ``jit`` does for the debugging flags: ``jax_log_compiles`` and
``jax_explain_cache_misses`` (log records on the ``openjax._src.dispatch``
logger at WARNING, as JAX logs them), ``jax_debug_nans``/``jax_debug_infs``
(a nan/inf in a jitted function's results re-runs it op by op, so the
error names the primitive and the user's line). None of it runs while those flags are off."""
from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any, Callable, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.config import config, disable_jit
from openjax._src.core import Array
from openjax._src.errors import JaxRuntimeError

logger = logging.getLogger("openjax._src.dispatch")

_OPENJAX_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def user_location() -> str:
  """``file:line (function)`` of the innermost caller outside openjax."""
  frame = sys._getframe(1)
  while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
      _OPENJAX_DIR + os.sep):
    frame = frame.f_back
  if frame is None:
    return "<unknown>"
  return f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"


def _defined_at(fun: Callable) -> str:
  code = getattr(fun, "__code__", None)
  if code is None:
    return "<unknown>"
  return f"{code.co_filename}:{code.co_firstlineno}"


def _aval_text(aval) -> str:
  s = aval.str_short()
  return s + "{weak_type=True}" if getattr(aval, "weak_type", False) else s


# ------------------------------------------------------------ cache misses
def explain_cache_miss(fun: Callable, name: str, key: tuple, seen: Sequence[tuple],
                       arg_names: Sequence[str]) -> None:
  """Log why ``jit(fun)`` traces again: which argument's type (or which
  static argument, pytree structure or flag) differs from the closest key
  seen before. Keys are ``(in_tree, avals, static, flags, axis_env)``."""
  lines = [f"TRACING CACHE MISS at {user_location()}:"]
  if not seen:
    lines += ["  never seen function:",
              f"    {name} id={id(fun)} defined at {_defined_at(fun)}"]
  else:
    lines += [f"  for {name} defined at {_defined_at(fun)}",
              "  all previously seen cache keys differ. For the closest previous key:"]
    lines += _closest_difference(key, seen, arg_names)
  logger.warning("\n".join(lines))


def _closest_difference(key, seen, arg_names) -> list[str]:
  in_tree, avals, static, flags, axis_env = key[:5]
  same_tree = [k for k in seen if k[0] == in_tree]
  if not same_tree:
    return ["  different input pytree structure:",
            f"  * now {in_tree} and before {seen[-1][0]}"]

  def mismatches(k):
    return [i for i, (a, b) in enumerate(zip(avals, k[1])) if a != b]
  best = min(same_tree, key=lambda k: (len(mismatches(k)), k[2] != static, k[3] != flags))
  diff = mismatches(best)
  if diff:
    out = ["  different input types:"]
    for i in diff:
      where = arg_names[i] if i < len(arg_names) else f"flat argument {i}"
      out.append(f"  * at {where}, now {_aval_text(avals[i])} and before "
                 f"{_aval_text(best[1][i])}")
    return out
  if best[2] != static:
    now = {k: s.val for k, s in static}
    before = {k: s.val for k, s in best[2]}
    return ["  different value of static args:"] + [
        f"  * at argument {k}, now {now.get(k)!r} and before {before.get(k)!r}"
        for k in sorted(set(now) | set(before), key=str) if now.get(k) != before.get(k)]
  return ["  tracing context doesn't match, e.g. due to config or context manager"]


# ------------------------------------------------------------ compile logs
def log_traced(name: str, seconds: float) -> None:
  logger.warning(f"Finished tracing {name} for jit in {seconds:.9f} sec")


def log_lowering(name: str, in_avals: Sequence, lower: Callable):
  """``lower()`` with the compile log's first two lines around it."""
  types = ", ".join(repr(a) for a in in_avals)
  if len(in_avals) == 1:
    types += ","
  mapping = ", ".join(["UnspecifiedValue"] * len(in_avals)) + ("," if len(in_avals) == 1 else "")
  logger.warning(f"Compiling jit({name}) with global shapes and types ({types}). "
                 f"Argument mapping: ({mapping}).")
  t0 = time.perf_counter()
  out = lower()
  logger.warning(f"Finished jaxpr to MLIR module conversion jit({name}) in "
                 f"{time.perf_counter() - t0:.9f} sec")
  return out


# ---------------------------------------------------------- nans and infs
def _bad_kind(values) -> str | None:
  check_nans = config.read("jax_debug_nans")
  check_infs = config.read("jax_debug_infs")
  for v in values:
    if not isinstance(v, Array):
      continue
    arr = np.asarray(v)
    if dtypes.kind(arr.dtype) not in "fc":
      continue
    if check_nans and np.isnan(arr).any():
      return "nan"
    if check_infs and np.isinf(arr).any():
      return "inf"
  return None


def run_checked(call: Callable[[], list], rerun: Callable[[], Any], name: str) -> list:
  """``call()`` (a jitted call's flat results) under ``jax_debug_nans`` /
  ``jax_debug_infs``: a nan (inf) in its results, or raised by the
  interpreter inside it, re-runs the function op by op (``rerun``, with
  jit disabled), whose eager checks raise ``FloatingPointError`` naming the
  primitive and the user's line."""
  try:
    outs = call()
    kind = _bad_kind(outs)
  except FloatingPointError as err:
    kind, first = str(err).split("(")[1].split(")")[0], err
  else:
    first = None
    if kind is None:
      return outs
  # Printed to stdout, as JAX does.
  print(f"Invalid {kind} value encountered in the output of a jax.jit function. "
        "Calling the de-optimized version.")
  with disable_jit():
    rerun()
  # Op by op everything was finite (a nan only the compiled code makes).
  raise FloatingPointError(
      f"invalid value ({kind}) encountered in jit({name}); running it op by op gave no "
      f"{kind}, so it comes from the compiled program's numerics") from first


def check_donated_once(leaves, donated_invars) -> None:
  """JAX's errors for a buffer donated twice, or donated and also read, in one
  call (the donated buffer is consumed by the call, so neither can work)."""
  n_hoisted = len(donated_invars) - len(leaves)
  donated = donated_invars[n_hoisted:]
  first: dict = {}
  for i, x in enumerate(leaves):
    if type(x) is not Array:
      continue
    j = first.setdefault(id(x), i)
    if j == i:
      continue
    if donated[i] and donated[j]:
      raise JaxRuntimeError(
          f"INVALID_ARGUMENT: Attempt to donate the same buffer twice in Execute() "
          f"(flattened argument {i}, replica 0). Toy code: b=np.array([1, 2, 3]); "
          f"jax.jit(lambda x, y: x + y, donate_argnums=(0, 1))(b, b)")
    if donated[i] or donated[j]:
      raise JaxRuntimeError(
          f"INVALID_ARGUMENT: Attempt to use a buffer that was donated in the same call "
          f"to Execute() (second use: flattened argument {i}, replica 0). Toy code: "
          f"b=np.array([1, 2, 3]); jax.jit(lambda x, y: x + y, donate_argnums=(0,))(b, b)")


__all__ = ["check_donated_once", "explain_cache_miss", "log_traced", "log_lowering", "run_checked", "user_location",
           "logger"]
