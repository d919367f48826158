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
                   "(~2 us to enter, ~0.7 us a primitive) fits under the line"),
    "constant-reference": ("5", "NumPy's reference returns a view, its input or a "
                                "constant; openjax computes the array as JAX does"),
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
