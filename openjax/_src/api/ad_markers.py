"""``jax.ad``'s markers for gradients with refs (JAX's ``vjp`` ``with_refs``
arguments and results): ``GradValue()`` returns an argument's gradient as a
value, ``GradRef()`` stands where it was accumulated into a ref,
``DontWant()`` skips it and ``DidntWant()`` stands where it was skipped
(``jax.vjp(f, x)[1].with_refs(...)``, ``api/autodiff.py``). openjax computes
every cotangent and then delivers it as asked."""
from __future__ import annotations

import dataclasses

from openjax._src import tree_util

__all__ = ["DidntWant", "DontWant", "GradRef", "GradValue"]


@dataclasses.dataclass(frozen=True, slots=True)
class GradValue:
  pass


@dataclasses.dataclass(frozen=True, slots=True)
class GradRef:
  pass


@dataclasses.dataclass(frozen=True, slots=True)
class DontWant:
  pass


@dataclasses.dataclass(frozen=True, slots=True)
class DidntWant:
  pass


# Empty pytree nodes, as JAX registers them (they hold no arrays).
for _marker in (GradRef, DidntWant):
  tree_util.register_pytree_node(_marker, lambda m: ((), None), lambda _, __, c=_marker: c())
