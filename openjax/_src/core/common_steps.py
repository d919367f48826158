"""Common subexpressions of a ``Program``'s kernel steps: an equation that
repeats an earlier one (the same primitive and parameters on the same
operands) takes the earlier result instead of running its kernel again.

JAX's formulations repeat work that XLA's common-subexpression pass removes
from compiled programs; interpreted programs ran every copy. ``jnp.interp``'s
program normalises ``i - 1`` for three gathers and gathers ``fp[i - 1]``
twice: 27 of its 77 equations repeat earlier ones; ``jax.hessian`` of
``sum(sin(x) * x**3)`` repeats 10 of 63. The jaxpr is unchanged (printed
jaxprs, compiled programs and the bind path see every equation); only the
kernel steps read the earlier result (``Program.kernel_steps``).

An equation repeats an earlier one when both have one result, no effects and
no sub-jaxprs, their primitives are not stateful (``rng_uniform`` draws new
numbers each call), their parameters are hashable and equal (compared with
their types: ``1``, ``1.0`` and ``True`` hash alike), their operands are the
same values (slots, after earlier repeats are mapped to their originals;
literals by dtype, weak type and bits) and their results have one type. Same
kernel on the same operands: the same bits.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from openjax._src.core.jaxpr import eqn_effects, jaxprs_in_params

__all__ = ["repeated_steps", "literal_key"]

#: Primitives whose results differ between calls on the same operands.
_STATEFUL = frozenset({"rng_uniform"})


def literal_key(value: np.ndarray, weak_type: bool) -> tuple:
  """The key of a literal operand: equal for literals of the same value."""
  return ("literal", value.dtype.str, weak_type, value.shape, value.tobytes())


def _params_key(params: dict) -> tuple:
  return tuple((k, type(v), v) for k, v in sorted(params.items()))


def repeated_steps(eqns: Sequence, reads: Sequence[tuple], writes: Sequence[tuple],
                   literal_keys: dict) -> dict:
  """``{k: j}`` for each equation ``k`` that repeats an earlier equation
  ``j`` (itself no repeat). ``reads[k]``/``writes[k]``: the slots equation
  ``k`` reads and writes; ``literal_keys``: slot -> ``literal_key`` of the
  literal slots."""
  seen: dict = {}
  original: dict = {}   # a repeat's result slot -> the original's
  repeats: dict = {}
  for k, eqn in enumerate(eqns):
    if (len(writes[k]) != 1 or eqn.primitive.name in _STATEFUL or eqn_effects(eqn)
        or jaxprs_in_params(eqn.params)):
      continue
    ins = tuple(literal_keys.get(i) or original.get(i, i) for i in reads[k])
    key = (eqn.primitive, ins, eqn.outvars[0].aval)
    try:
      key += _params_key(eqn.params)
      j = seen.setdefault(key, k)
    except (TypeError, ValueError):   # an unhashable parameter (a NumPy array), or one
      continue                        # whose comparison is an array: never shared
    if j != k:
      repeats[k] = j
      original[writes[k][0]] = writes[j][0]
  return repeats
