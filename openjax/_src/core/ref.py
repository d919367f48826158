"""Mutable array references (``jax.Ref``): the value type and its type.

A ``Ref`` holds an array value that reads (``ref[...]``) and writes
(``ref[idx] = v``) see and change in place; its type is ``AbstractRef``
(``Ref{float32[3]}``). Programs stay functional underneath: ``jit`` passes
the values of the refs a function uses as extra arguments and writes the
results back after the call (``api/refs.py``), so a jaxpr never holds a
reference. The indexing methods are set by the library
(``_src/state/types.py``), as ``numpy/array_methods.py`` does for ``Array``.

Access scopes: while ``jit`` traces a function it opens a scope naming the
refs it has bound to traced values. Reading or writing any other ref there
raises ``RefDiscovered``, which the jit that owns the scope catches to pass
that ref's value too and trace again; refs made inside the trace belong to
its scope.
"""
from __future__ import annotations

import threading
from typing import Callable

from openjax._src.core.avals import ShapedArray

__all__ = ["AbstractRef", "Ref", "RefDiscovered", "RefScope", "access", "current_scope",
           "open_scope", "close_scope"]


class AbstractRef:
  """The type of a mutable array reference: ``Ref{float32[3]}``."""
  __slots__ = ("inner_aval",)

  def __init__(self, inner_aval: ShapedArray):
    self.inner_aval = inner_aval

  @property
  def shape(self):
    return self.inner_aval.shape

  @property
  def dtype(self):
    return self.inner_aval.dtype

  @property
  def ndim(self):
    return self.inner_aval.ndim

  @property
  def size(self):
    return self.inner_aval.size

  @property
  def weak_type(self):
    return self.inner_aval.weak_type

  def __eq__(self, other):
    return type(other) is AbstractRef and self.inner_aval == other.inner_aval

  def __hash__(self):
    return hash((AbstractRef, self.inner_aval))

  def str_short(self, short_dtypes: bool = True) -> str:
    return f"Ref{{{self.inner_aval.str_short(short_dtypes)}}}"

  def __repr__(self):
    return f"Ref{{{self.inner_aval.str_short(short_dtypes=False)}}}"

  __str__ = __repr__


_FREED = object()


class Ref:
  """A mutable reference to an array (``jax.new_ref(x)``)."""
  __slots__ = ("_value", "_scope", "_made_traced", "__weakref__")

  def __init__(self, value, scope: "RefScope | None" = None, made_traced: bool = False):
    self._value = value
    self._scope = scope
    # Made inside a transformation (grad, vmap, ...): its writes may be traced.
    self._made_traced = made_traced

  @property
  def aval(self) -> AbstractRef:
    return AbstractRef(_value_aval(self._value))

  @property
  def shape(self):
    return _value_aval(self._value).shape

  @property
  def dtype(self):
    return _value_aval(self._value).dtype

  @property
  def ndim(self):
    return len(self.shape)

  @property
  def size(self):
    return _value_aval(self._value).size

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]

  def free(self) -> None:
    self._value = _FREED

  @property
  def is_freed(self) -> bool:
    return self._value is _FREED

  def __repr__(self):
    if self._value is _FREED:
      return "Ref(<freed>)"
    text = repr(self._value)
    return "Ref(" + text[len("Array("):] if text.startswith("Array(") else f"Ref({text})"


def _value_aval(value) -> ShapedArray:
  if value is _FREED:
    raise ValueError("the array reference was freed (jax.free_ref); make a new one with "
                     "jax.new_ref.")
  aval = getattr(value, "aval", None)
  # Library array types without a NumPy dtype (typed PRNG keys) give their type.
  return type(value)._typeof(value) if aval is None else aval


class RefScope:
  """The refs a jit trace has bound to its traced values (and made)."""
  __slots__ = ("bound",)

  def __init__(self, refs=()):
    self.bound = set(map(id, refs))


class RefDiscovered(Exception):
  """A traced function used a ref its jit has not bound (see the module
  docstring); ``jit`` catches it, so users never see it."""

  def __init__(self, ref: Ref, scope: RefScope):
    super().__init__("a jitted function used a mutable array reference it was not given")
    self.ref = ref
    self.scope = scope


class _Scopes(threading.local):
  def __init__(self):
    self.stack: list[RefScope] = []


_scopes = _Scopes()


def open_scope(refs=()) -> RefScope:
  scope = RefScope(refs)
  _scopes.stack.append(scope)
  return scope


def close_scope(scope: RefScope) -> None:
  popped = _scopes.stack.pop()
  assert popped is scope


def run_in_scope(scope: RefScope, refs, ref_values, fn: Callable, *args, **kwargs):
  """``fn(*args, **kwargs)`` inside the open ``scope`` with ``refs`` bound
  to ``ref_values``: ``(out, finals)``, the refs' values at the end. Closes
  ``scope`` and gives the refs back their values, however ``fn`` ends."""
  saved = [r._value for r in refs]
  try:
    for r, v in zip(refs, ref_values):
      r._value = v
    out = fn(*args, **kwargs)
    finals = [r._value for r in refs]
  finally:
    close_scope(scope)
    for r, v in zip(refs, saved):
      r._value = v
  return out, finals


def current_scope() -> RefScope | None:
  stack = _scopes.stack
  return stack[-1] if stack else None


def access(ref: Ref):
  """The ref's value, after checking that the innermost jit trace has it."""
  stack = _scopes.stack
  if stack and id(ref) not in stack[-1].bound:
    raise RefDiscovered(ref, stack[-1])
  value = ref._value
  if value is _FREED:
    _value_aval(value)
  return value
