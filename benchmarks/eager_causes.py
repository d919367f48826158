"""Why each case `eager_sweep.py` flags is over the line.

Every flagged case gets one cause: measured facts about openjax's eager
design, kept next to the sweep so that a case nobody has explained (a new
regression, a new row) stands out as ``unexplained`` in the report. The
cause texts summarise `eager_exceptions.md`, whose sections hold the
measurements behind them.

A case is assigned the first cause that applies:
1. ``floor``: JAX's program for the call is long enough that the eager floor
   alone (``eager_sweep.FLOOR_ENTRY_S`` + ``FLOOR_STEP_S`` an equation) is
   over the line (computed from the case's traced program);
2. ``constant-reference``: the NumPy reference takes constant time (returns a
   view, its input or a constant) where openjax computes an array;
3. the first entry of ``RULES`` whose row pattern (fnmatch) and sizes match.
"""
from __future__ import annotations

import fnmatch

#: cause -> (section of eager_exceptions.md, what limits the case)
CAUSES = {
    "floor": ("1", "JAX's program for the call has more equations than the eager floor "
                   "(measured by the run: entry + a step per primitive) fits under the line"),
    "constant-reference": ("5", "NumPy's reference returns a view, its input or a "
                                "constant; openjax computes the array as JAX does"),
    "front-end": ("1", "~10 elements: the jnp wrapper (argument checks, dtype promotion, "
                       "its plan) and one to a few binds against NumPy's one C call"),
    "index-front-end": ("1", "~10 elements: .at[] updates and gathers of index arrays "
                             "(index plan, scatter/gather kernel, bind) against one NumPy "
                             "fancy-index call"),
    "control-entry": ("2", "eager control flow and transformations: a cached program's "
                           "entry, the branch or body runner, one body run a trip"),
    "special-kernel": ("3", "special functions: series and continued fractions in the "
                            "operand's precision, Python floats per element at ~10"),
    "narrow-float": ("3", "float16/bfloat16: NumPy's scalar float16 loops, ml_dtypes' "
                          "bfloat16 loops, or JAX's round trips through float32"),
    "jax-formulation": ("4", "JAX's formulation of the function (its jaxpr) makes more "
                             "passes, or a costlier algorithm, than NumPy's kernel"),
    "linalg-driver": ("4", "a LAPACK driver or a JAX algorithm other than NumPy/SciPy's "
                           "(eigh, schur, iterative solvers, Parlett recurrences)"),
    "devices": ("5", "a call over several devices (pmap, shard_map, resharding) against "
                     "NumPy's one-array reference"),
}

#: (row pattern, sizes (None: every size), cause). Filled from a quiet run's
#: flagged cases; keep patterns narrow so a new row is not explained by accident.
RULES: list[tuple[str, tuple[str, ...] | None, str]] = []


def cause_of(result: dict, floor_bound: bool, constant_reference: bool) -> str | None:
  """The cause of a flagged case (``result`` as the sweep records it), or
  None when no measured cause explains it."""
  if floor_bound:
    return "floor"
  if constant_reference:
    return "constant-reference"
  for pattern, sizes, cause in RULES:
    if fnmatch.fnmatchcase(result["row"], pattern) and (sizes is None
                                                        or result["size"] in sizes):
      return cause
  return None
