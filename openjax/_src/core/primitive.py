"""``Primitive``: the unit every transformation works on.

Each primitive carries all of its rules as attributes, set by decorators in the
primitive's own block (``@sin_p.def_jvp``); interpreters read exactly one slot
and fail with one standard message when it is empty.
"""
from __future__ import annotations

from typing import Callable

from openjax._src.core.memory import translate_memory_error
from openjax._src.core.trace import trace_state

# slot name -> what the interpreter that reads it is called in messages
RULE_SLOTS = {
    "impl": "Evaluation",
    "abstract_eval": "Abstract evaluation",
    "jvp": "Differentiation",
    "transpose": "Transpose",
    "batch": "Batching",
    "lower": "Lowering",
    "sharding_rule": "Sharding",
}

#: Every primitive ever created, by name (the registry test walks it).
registry: dict[str, "Primitive"] = {}


class Effect:
  """A side effect an equation has beyond computing its outputs (printing,
  calling the host). Equations with effects are never removed as dead code
  and keep their order; subclasses print as JAX names them (``Debug``)."""

  def __repr__(self):
    return str(self)


class Primitive:
  """A primitive operation with its rules.

  Operands are positional arrays; parameters are keyword-only and hashable.
  Rules take and return lists, so interpreters never branch on the number of
  results (``bind1`` unpacks a single result for wrappers).
  """

  def __init__(self, name: str, *, multiple_results: bool = False,
               kind: str = "differentiable"):
    # kind: "differentiable" (needs jvp), "linear" (needs jvp and transpose),
    # or "nondifferentiable" (integer/boolean results; jvp gives zeros).
    self.name = name
    self.multiple_results = multiple_results
    self.kind = kind
    self.impl: Callable | None = None
    self.abstract_eval: Callable | None = None
    self.jvp: Callable | None = None
    self.transpose: Callable | None = None
    self.batch: Callable | None = None
    self.lower: Callable | None = None
    self.cost: Callable | None = None
    # sharding_rule(specs, avals, out_avals, **params) -> one spec per result:
    # a tuple with one entry per dimension (None, a mesh axis name or a tuple
    # of them), or raises ShardingTypeError where JAX does. Staging applies it
    # to operands split over Explicit axes; the SPMD partitioner propagates
    # Auto axes with it.
    self.sharding_rule: Callable | None = None
    self.pp_rule: Callable | None = None
    # effects(**params) -> frozenset of Effects, for primitives with side
    # effects (host callbacks); None: the primitive is pure.
    self.effects: Callable | None = None
    # Optional hook for higher-order primitives under partial evaluation:
    # partial_eval(pe_trace, unknowns, args, params) -> outputs.
    self.partial_eval: Callable | None = None
    # Optional lean kernel for the eval trace: eval_kernel(*avals, **params)
    # -> a function of the operand values alone giving the one result (e.g.
    # ``np.add``, without the impl's per-call ``np.errstate``), or None for
    # operands it does not cover (the impl runs).
    self.eval_kernel: Callable | None = None
    # Varying manual axes (``primitives/collectives/varying.py``): for a
    # collective, vma_rule(in_vma, **params) -> its results' vma (others:
    # the union of the operands'), and vma_needs(**params) -> the axes its
    # operand must vary over. A higher-order primitive whose results are
    # typed by its sub-jaxprs alone (cond: not by its index) returns a list,
    # one vma per result.
    self.vma_rule: Callable | None = None
    self.vma_needs: Callable | None = None
    self.not_applicable: dict[str, str] = {}
    registry[name] = self

  def __repr__(self):
    return self.name

  # ---- rule decorators ----
  def def_impl(self, f):
    self.impl = f
    return f

  def def_abstract_eval(self, f):
    self.abstract_eval = f
    return f

  def def_jvp(self, f):
    self.jvp = f
    return f

  def def_transpose(self, f):
    self.transpose = f
    return f

  def def_batch(self, f):
    self.batch = f
    return f

  def def_lower(self, f):
    self.lower = f
    return f

  def def_sharding_rule(self, f):
    self.sharding_rule = f
    return f

  def def_cost(self, f):
    self.cost = f
    return f

  def def_partial_eval(self, f):
    self.partial_eval = f
    return f

  def def_eval_kernel(self, f):
    self.eval_kernel = f
    return f

  def def_effects(self, f):
    self.effects = f
    return f

  def def_pp(self, f):
    self.pp_rule = f
    return f

  def mark_not_applicable(self, slot: str, reason: str) -> None:
    """Record that ``slot`` is deliberately empty (the registry test reads it)."""
    if slot not in RULE_SLOTS:
      raise ValueError(f"unknown rule slot {slot!r}")
    self.not_applicable[slot] = reason

  def rule(self, slot: str) -> Callable:
    """The rule in ``slot``, or the standard error when it is missing."""
    f = getattr(self, slot)
    if f is None:
      reason = self.not_applicable.get(slot)
      what = RULE_SLOTS[slot]
      msg = f"{what} rule for '{self.name}' not implemented"
      if reason:
        msg += f": {reason}"
      raise NotImplementedError(msg)
    return f

  # ---- binding ----
  def bind(self, *args, **params) -> list:
    """Apply the primitive in the current trace; returns a list of results."""
    try:
      return trace_state.trace.process_primitive(self, args, params)
    except MemoryError as err:   # NumPy could not allocate a result: JAX's error type
      raise translate_memory_error(err, self.name) from None

  def bind1(self, *args, **params):
    """``bind`` for a primitive with exactly one result."""
    try:
      return trace_state.trace.process_primitive(self, args, params)[0]
    except MemoryError as err:
      raise translate_memory_error(err, self.name) from None

