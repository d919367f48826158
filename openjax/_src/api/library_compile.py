"""Eager library programs that may run compiled: integer and bool programs.

A library function (``numpy/util.jit``: ``jnp.gcd``, ``jnp.bincount``, ...)
runs its cached jaxpr on the eval trace's kernels, never compiled, because a
compiled float program may round differently in the last place and the same
call must give the same bits every time (DESIGN decision 12). Integer and
bool results are defined exactly, so a program whose every value (inputs,
constants, every equation's results in every sub-jaxpr, outputs) is an
integer or a bool computes the same bits either way, and may switch to the
compiled program once one exists: as jit's tiered calls do, the first calls
interpret while IREE compiles in the background, later calls run compiled.
A signature interprets without lowering its program until its interpreted
calls have taken ``INTERPRETED_S``, about what lowering costs (~10-40 ms,
more than most calls): a call of a few microseconds never pays it, a call
of a million elements lowers on its second call and runs compiled at once on
a compilation-cache hit.

Compiling pays only where the interpreter is slow: a compiled call costs
~5-10 us however small the program, while a few-step program interprets in
a few microseconds. ``worth_compiling`` is the measured rule (see
``benchmarks/eager_sweep.py`` runs in the report of the change): programs
with a while loop (interpreted, ~1 us a step a trip) or of many steps.
"""
from __future__ import annotations

import time

import numpy as np

from openjax._src.core import Array, ClosedJaxpr, Jaxpr, jaxpr_effects, jaxprs_in_params
from openjax._src.core.array import ShardedBuffer
from openjax._src.core.fused_steps import fused_steps
from openjax._src.core.avals import ShapedArray
from openjax._src.core.trace import NUMPY_SCALAR_TYPES, SCALAR_TYPES
from openjax._src.control.nested_calls import inline_interpreted_calls
from openjax._src.runtime.pipeline import compiling

# Primitives whose compiled and interpreted runs differ in more than bits:
# host calls, printing, random state, and device or named-axis placement.
_NEVER_COMPILED = frozenset({
    "pure_callback", "io_callback", "debug_callback", "debug_print", "device_put",
    "reshard", "sharding_constraint", "shard_map", "axis_index", "psum", "psum_invariant",
    "optimization_barrier"})
_NEVER_PREFIXES = ("random_", "rng_")

# Measured (interleaved interpreted/compiled calls, 10 to 1e6 elements):
# IREE's sort and its scan loops run 2-10x slower than the interpreter's
# NumPy kernels (jnp.argsort, jnp.unique, jnp.searchsorted's scan, digitize),
# so programs holding one stay interpreted; a while loop runs all its trips
# in one compiled call (jnp.gcd: 8x faster at 10 elements, 2x at 1e6), and
# a long straight program saves ~1 us a step (jnp.power on ints, 43 steps:
# 2x at 10 elements, 45x at 1e6).
_SLOWER_COMPILED = frozenset({"sort", "scan"})
MIN_STEPS = 20

# Seconds of a signature's interpreted calls before it is lowered and
# compiled: lowering costs ~10-40 ms (measured on jnp.gcd/lcm/power), so a
# signature pays it once its calls have cost as much.
INTERPRETED_S = 0.02

_EXACT_KINDS = frozenset("iub")


def _exact_aval(aval) -> bool:
  return type(aval) is ShapedArray and aval.dtype.kind in _EXACT_KINDS


def _exact_jaxpr(jaxpr: Jaxpr) -> bool:
  for v in (*jaxpr.constvars, *jaxpr.invars, *jaxpr.outvars):
    if not _exact_aval(v.aval):
      return False
  for eqn in jaxpr.eqns:
    name = eqn.primitive.name
    if name in _NEVER_COMPILED or name.startswith(_NEVER_PREFIXES):
      return False
    if not all(_exact_aval(v.aval) for v in eqn.outvars):
      return False
    if not all(_exact_jaxpr(j) for j in jaxprs_in_params(eqn.params)):
      return False
  return True


def compiles_exactly(closed: ClosedJaxpr) -> bool:
  """Whether ``closed`` gives the same bits compiled as interpreted: every
  value is an integer or a bool, and it has no effects nor host calls."""
  if jaxpr_effects(closed):
    return False
  if not all(np.asarray(c).dtype.kind in _EXACT_KINDS for c in closed.consts):
    return False
  return _exact_jaxpr(closed.jaxpr)


def _primitive_counts(jaxpr: Jaxpr, counts: dict) -> dict:
  for eqn in jaxpr.eqns:
    counts[eqn.primitive.name] = counts.get(eqn.primitive.name, 0) + 1
    for j in jaxprs_in_params(eqn.params):
      _primitive_counts(j, counts)
  return counts


def _interpreted_counts(closed: ClosedJaxpr) -> dict:
  """The primitives' counts of the steps the eager program runs: nested
  calls inlined, a fused kernel (``fused_steps``) one ``"fused"`` step in
  place of the equations it replaces and of its sub-jaxprs' (jnp.gcd's
  while loop is one np.gcd)."""
  jaxpr = inline_interpreted_calls(closed).jaxpr
  fused = fused_steps(jaxpr.eqns, jaxpr.outvars)
  gone = set().union(*(dropped for _, _, dropped, _ in fused.values()))
  counts: dict = {}
  for k, eqn in enumerate(jaxpr.eqns):
    if k in fused:
      counts["fused"] = counts.get("fused", 0) + 1
    elif k not in gone:
      counts[eqn.primitive.name] = counts.get(eqn.primitive.name, 0) + 1
      for j in jaxprs_in_params(eqn.params):
        _primitive_counts(j, counts)
  return counts


def worth_compiling(closed: ClosedJaxpr) -> bool:
  """The measured rule: an exact program with a while loop, or of at least
  ``MIN_STEPS`` steps (sub-jaxprs' included), compiles, unless it sorts or
  scans. Steps a fused kernel replaces (jnp.power of integers: 38 steps in
  one np.power, 10 elements ~45 -> ~6 us, 1e6 as fast as NumPy's) are not
  run one by one, so they do not count."""
  counts = _interpreted_counts(closed)
  if not _SLOWER_COMPILED.isdisjoint(counts):
    return False
  if "while" in counts:
    return True
  return sum(counts.values()) >= MIN_STEPS


def library_outputs(wrapped, entry, leaves: list) -> list | None:
  """The flat results of an eager library call of an exact program: run
  compiled, or interpreted (and timed) before its lowering pays; None when
  the caller interprets: not an exact program worth compiling, the executor
  does not compile here (``compiling``: the interpreter executor, an
  interpreted first call, a host callback), or the executable is still
  compiling."""
  if entry.exact is None:
    entry.exact = compiles_exactly(entry.closed_jaxpr) and worth_compiling(entry.closed_jaxpr)
  if not entry.exact or not compiling():
    return None
  ex = entry.executable
  if ex is None:
    if entry.pending is None and entry.interpreted_s < INTERPRETED_S:
      start = time.perf_counter()
      outs = entry.run_program(leaves)
      entry.interpreted_s += time.perf_counter() - start
      return outs
    ex = wrapped._executable(entry, None, len(leaves))
  if ex is None:
    return None
  return ex.execute(leaves)


# ------------------------------------------------------ eager call keys
NO_KEY = object()   # an argument an eager library call cannot key: the general path


def eager_leaf_key(a):
  """The part of an eager library call's key for a dynamic argument: an
  Array on one device by its aval, a Python or NumPy scalar by its type, a
  NumPy array by its shape and dtype (what its trace depends on), None as
  an empty pytree; ``NO_KEY`` for anything else (pytrees, arrays split over
  devices), which takes jit's general path. NumPy arguments took that path
  every call: ~100 us for jnp.pad with per-axis constants, ~15 us for a
  NumPy scalar."""
  t = type(a)
  if t is Array:
    # A committed Array takes the general path, which places the results.
    return (a.aval if a._np is not None and a._device is None
            and type(a._buffer) is not ShardedBuffer else NO_KEY)
  if t in SCALAR_TYPES or t in NUMPY_SCALAR_TYPES:
    return t
  if t is np.ndarray:
    return (np.ndarray, a.shape, a.dtype)
  return None if a is None else NO_KEY

