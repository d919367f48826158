"""``jax.experimental.hijax``'s names: the classes libraries define their own
high-level types and primitives with (flax.nnx's Variables do, at import).

openjax does not implement hijax: values of a registered high-level type are
not lowered to arrays under transformations, and binding a ``HiPrimitive``
raises NotImplementedError naming the primitive. The names exist so that
libraries whose hijax code paths are optional (flax.nnx with its default
``flax_hijax_variable=False``) import and run on their array code paths.
``aval_method``/``aval_property`` and the effect-type set are JAX's plain
data holders; ``Zero``, ``instantiate_zeros`` and ``is_undefined_primal``
are openjax's autodiff ones.
"""
from __future__ import annotations

import dataclasses
from collections import namedtuple
from typing import Any, Callable

from openjax._src.core import AbstractValue, ShapedArray
from openjax._src.core.ref import AbstractRef
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal
from openjax._src.primitives.base.structural import instantiate_zeros

__all__ = ["AbstractRef", "AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive",
           "HiType", "MutableHiType", "ShapedArray", "Zero", "aval_method", "aval_property",
           "control_flow_allowed_effects", "cur_qdd", "instantiate_zeros",
           "is_undefined_primal", "register_hitype"]

# A type's attribute that a traced value of that type forwards to its aval.
aval_property = namedtuple("aval_property", ["fget"])
aval_method = namedtuple("aval_method", ["fun"])


class EffectTypeSet:
  """A set of effect types (JAX's ``effects.EffectTypeSet``)."""

  def __init__(self):
    self._types: set[type] = set()

  def add_type(self, effect_type: type) -> None:
    self._types.add(effect_type)

  def contains(self, effect) -> bool:
    return any(isinstance(effect, t) for t in self._types)


# Effects control flow (cond, while, scan bodies) may have.
control_flow_allowed_effects = EffectTypeSet()

# Value class -> function giving its high-level type (``register_hitype``).
hitype_of: dict[type, Callable[[Any], AbstractValue]] = {}


def register_hitype(val_cls: type, typeof_fn: Callable[[Any], AbstractValue]) -> None:
  """Record ``typeof_fn`` as the type of ``val_cls``'s values."""
  hitype_of[val_cls] = typeof_fn


class HiType(AbstractValue):
  """The base of high-level types."""
  is_high = True


class MutableHiType(HiType):
  """The base of high-level types whose values change in place."""


@dataclasses.dataclass(frozen=True, slots=True)
class AvalQDD:
  """A type with its quasi-dynamic data."""
  aval: AbstractValue
  qdd: Any
  is_high = True
  has_qdd = True


@dataclasses.dataclass(frozen=True, slots=True)
class AvalMutableQDD:
  """A type with quasi-dynamic data that primitives may update."""
  aval: AbstractValue
  mutable_qdd: Any


class HiPrimitive:
  """The base of high-level primitives: subclasses define ``abstract_eval``,
  ``to_lojax``, ``jvp``, ``transpose``. openjax cannot bind them (see the
  module docstring)."""
  multiple_results = False

  def __init__(self, name: str):
    self.name = name

  def is_high(self, *avals, **params) -> bool:
    return True

  def bind(self, *args, **params):
    raise NotImplementedError(
        f"{self.name}: openjax does not implement hijax (JAX's high-level types and "
        "primitives, jax.experimental.hijax); use the library's array code path instead "
        "(for flax.nnx: keep flax_hijax_variable=False, the default).")

  def __repr__(self):
    return self.name


def cur_qdd(x):
  """The current quasi-dynamic data of a high-level value (hijax)."""
  raise NotImplementedError("cur_qdd: openjax does not implement hijax (JAX's high-level "
                            "types, jax.experimental.hijax).")
