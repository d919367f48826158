"""Constant folding before lowering.

Equations of a jitted function whose operands are all constants (values it
closed over, literals, results of other such equations) give the same values
on every call. XLA folds them when it compiles; IREE would compute them on
every call (openjax compiles with ``--iree-opt-const-eval=false``: IREE's
own const-eval doubled compile times, DESIGN decision 4). ``jax.hessian`` of
``0.5 * x @ (A @ x) + sum(tanh(x))`` over a closed-over 100x100 ``A``
multiplies ``A`` by the identity its basis closes over: folded, a compiled
call drops that 100x100x100 product.

``fold_constants`` runs those equations once with the eval trace's kernels
(the program evaluator) and makes their results constants of the lowered
module. It folds an equation only when that is cheap to hold: no effect, no
sub-jaxpr, no random bits or host calls or placement, a result no larger
than its largest constant operand (a broadcast of a scalar stays a splat in
the module instead of a dense array) and at most ``FOLD_MAX_BYTES``. The
jaxpr users see (``make_jaxpr``, tracing, the interpreter) is unchanged;
the folded values are the same computation evaluated before the call, within
the floating-point tolerance of DESIGN decision 12.
"""
from __future__ import annotations

from openjax._src.core import ClosedJaxpr, Jaxpr, Literal, check_transformed, eqn_effects
from openjax._src.core import jaxprs_in_params, program_of
from openjax._src.core.trace import canonical_value

#: Largest folded result (bytes): a constant is module text IREE parses.
FOLD_MAX_BYTES = 1 << 22

#: Primitives whose value is not a function of their operands alone, or that
#: place or communicate values: never folded, never moved out of a loop
#: (``scan_hoist``).
NOT_PURE_VALUES = frozenset({
    "pure_callback", "io_callback", "debug_callback", "debug_print", "device_put",
    "reshard", "sharding_constraint", "axis_index", "psum", "pmax", "pmin", "pmean",
    "all_gather", "all_to_all", "ppermute", "psum_scatter", "pbroadcast", "pvary", "pcast",
    "optimization_barrier", "copy_p"})
# (and iota: its folded result would be a dense constant of the module)
_NEVER_FOLDED = NOT_PURE_VALUES | {"iota"}
_NEVER_PREFIXES = ("random_", "rng_", "threefry")


def _size(aval) -> int:
  n = 1
  for d in aval.shape:
    n *= d
  return n


def _foldable(eqn, known: set) -> bool:
  name = eqn.primitive.name
  if name in _NEVER_FOLDED or name.startswith(_NEVER_PREFIXES) or eqn.primitive.impl is None:
    return False
  largest = 1
  for a in eqn.invars:
    if type(a) is Literal:
      continue
    if a not in known:
      return False
    largest = max(largest, _size(a.aval))
  for v in eqn.outvars:
    aval = v.aval
    if getattr(aval, "sharding", None) is not None or not hasattr(aval, "shape"):
      return False
    n = _size(aval)
    if n > largest or n * aval.dtype.itemsize > FOLD_MAX_BYTES:
      return False
  return not jaxprs_in_params(eqn.params) and not eqn_effects(eqn)


def fold_constants(closed: ClosedJaxpr) -> ClosedJaxpr:
  """``closed`` with its constant equations evaluated (see the module)."""
  jaxpr = closed.jaxpr
  if not jaxpr.constvars:
    return closed
  known = set(jaxpr.constvars)
  fold, keep = [], []
  for eqn in jaxpr.eqns:
    if _foldable(eqn, known):
      fold.append(eqn)
      known.update(eqn.outvars)
    else:
      keep.append(eqn)
  if not fold:
    return closed
  produced = {v for e in fold for v in e.outvars}
  used = [a for e in keep for a in e.invars if type(a) is not Literal]
  used += [a for a in jaxpr.outvars if type(a) is not Literal]
  needed = list(dict.fromkeys(a for a in used if a in produced))
  if not needed:   # only dead equations: the lowering's DCE drops them
    return closed
  sub = Jaxpr([], jaxpr.constvars, needed, fold)
  try:
    values = program_of(sub).runner([])([canonical_value(c) for c in closed.consts])
  except Exception:  # noqa: BLE001 - a step that fails here fails (or not) at run time
    return closed
  for v in values:
    v.setflags(write=False)
  still = set(used)
  consts = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if v in still]
  consts += list(zip(needed, values))
  folded = jaxpr.replace(constvars=[v for v, _ in consts], eqns=keep)
  check_transformed(folded, "fold_constants")
  return ClosedJaxpr(folded, [c for _, c in consts])


__all__ = ["FOLD_MAX_BYTES", "NOT_PURE_VALUES", "fold_constants"]
