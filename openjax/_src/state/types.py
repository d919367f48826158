"""Mutable array references: ``new_ref``, ``empty_ref``, ``free_ref``,
``freeze`` and the ``Ref`` methods (``ref[idx]``, ``ref[idx] = v``,
``ref.addupdate``), written with jax.numpy indexing on the ref's value.

Eagerly a write replaces the ref's value with an updated array; under
``jit`` the ref holds a traced value while the function is traced
(``api/refs.py``). A write of a value being differentiated or batched into
a ref made outside the transformation raises, as in JAX (the ref would
keep a tracer).
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes, lax
from openjax._src.core import Tracer, eval_trace, get_aval, trace_state
from openjax._src.core.ref import AbstractRef, Ref, access, current_scope
from openjax._src.interpreters.batching import BatchTracer
from openjax._src.interpreters.jvp import JVPTracer
from openjax._src.numpy.creation import asarray, zeros
from openjax._src.numpy.indexer import has_slice, slice_block
from openjax._src.random.keys import PRNGKeyArray

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get",
           "new_ref", "set", "swap"]


def _whole(idx) -> bool:
  return idx is Ellipsis or (type(idx) is tuple and (not idx or idx == (Ellipsis,)))


def _as_value(x):
  # Typed PRNG key arrays are kept as they are; anything else becomes an Array.
  return x if isinstance(x, PRNGKeyArray) else asarray(x)


def _ref_get(ref: Ref, idx):
  value = access(ref)
  return value if _whole(idx) else _as_value(value)[idx]


def _cast_to(ref_aval, v):
  aval = get_aval(v)
  if aval.dtype == ref_aval.dtype and (aval.weak_type == ref_aval.weak_type
                                      or not aval.weak_type):
    return v
  if aval.weak_type:   # a Python scalar takes the ref's type
    return lax._convert_element_type(v, ref_aval.dtype, weak_type=ref_aval.weak_type)
  raise TypeError(f"Invalid dtype for `swap`. Ref dtype: {ref_aval.dtype}. Value dtype: "
                  f"{aval.dtype}. Cast the value (v.astype({ref_aval.dtype.name})).")


def _traced_write_message(ref: Ref, v) -> str:
  # JAX's messages for the transformation the value comes from.
  if isinstance(v, JVPTracer):
    return ("Exception performing a set/swap operation with a differentiated value on a "
            f"non-differentiated array reference of type {ref.aval}. Move the array "
            "reference to be an argument of the differentiated function?")
  if isinstance(v, BatchTracer):
    return ("Exception performing a set/swap operation with vmapped value on an unbatched "
            f"array reference of type {ref.aval}. Move the array reference to be an argument "
            "to the vmapped function?")
  return (f"a traced value was written into an array reference of type {ref.aval} made "
          "outside the traced function; openjax stages reads and writes of such refs only "
          "under jax.jit (make_jaxpr of the function itself cannot show them): wrap the "
          "function in jax.jit, or pass the ref's value in and return the new one.")


def _ref_set(ref: Ref, idx, v) -> None:
  value = access(ref)
  if isinstance(value, PRNGKeyArray) or isinstance(v, PRNGKeyArray):
    if not (_whole(idx) and isinstance(v, PRNGKeyArray) and isinstance(value, PRNGKeyArray)
            and v.shape == value.shape):
      raise TypeError(f"a ref of {ref.aval} holding typed PRNG keys takes whole key arrays of "
                      f"its shape (ref[...] = keys); got {v!r} at index {idx!r}.")
    ref._value = v
    return
  v = _cast_to(get_aval(value), asarray(v))
  if (isinstance(v, Tracer) and not isinstance(value, Tracer) and ref._scope is None
      and not ref._made_traced and current_scope() is None):
    raise ValueError(_traced_write_message(ref, v))
  if _whole(idx):
    if get_aval(v).shape != get_aval(value).shape:
      raise ValueError(f"Invalid shape for `swap`. Ref shape: {get_aval(value).shape}. Value "
                       f"shape: {get_aval(v).shape}. Write a value of the ref's shape, or "
                       "index the ref (ref[i] = v).")
    ref._value = v
  elif has_slice(idx):
    block, rest, starts = slice_block(value, idx)
    ref._value = lax.dynamic_update_slice(value, asarray(block).at[rest].set(v), starts)
  else:
    ref._value = asarray(value).at[idx].set(v)


def _index(idx):
  # jax.ref's functions take None or () for the whole ref.
  return ... if idx is None or (type(idx) is tuple and not idx) else idx


def get(ref: Ref, idx=None):
  """``ref[idx]`` (``jax.ref.get``): the indexed value, as an Array."""
  return _ref_get(ref, _index(idx))


def set(ref: Ref, idx, value) -> None:   # noqa: A001 - JAX's name
  """``ref[idx] = value`` (``jax.ref.set``)."""
  _ref_set(ref, _index(idx), value)


def swap(ref: Ref, idx, value, _function_name: str = "ref_swap"):
  """Write ``value`` at ``idx`` and return the value it replaced."""
  idx = _index(idx)
  old = _ref_get(ref, idx)
  _ref_set(ref, idx, value)
  return old


def addupdate(ref: Ref, idx, x) -> None:
  """``ref[idx] += x`` (``jax.ref.addupdate``)."""
  idx = _index(idx)
  _ref_set(ref, idx, _ref_get(ref, idx) + x)


def _ref_addupdate(ref: Ref, x, idx=()) -> None:
  """``ref[idx] += x``."""
  addupdate(ref, idx, x)


Ref.__getitem__ = _ref_get
Ref.__setitem__ = _ref_set
Ref.addupdate = _ref_addupdate
Ref.get = lambda ref, idx=...: _ref_get(ref, idx)
Ref.__array__ = lambda ref, dtype=None, copy=None: np.asarray(access(ref), dtype=dtype)


def new_ref(init_val, *, memory_space=None, kind: str | None = None) -> Ref:
  """A mutable array reference holding ``init_val`` (``jax.new_ref``)."""
  scope = current_scope()
  ref = Ref(_as_value(init_val), scope, trace_state.trace is not eval_trace)
  if scope is not None:   # made inside a jit trace: that trace's own ref
    scope.bound.add(id(ref))
  return ref


def empty_ref(ty, memory_space=None) -> Ref:
  """A ref of type ``ty`` (a ShapeDtypeStruct or an abstract value); openjax
  fills it with zeros (JAX leaves it uninitialised)."""
  if isinstance(ty, AbstractRef):
    ty = ty.inner_aval
  if not all(hasattr(ty, a) for a in ("shape", "dtype")):
    raise TypeError(f"empty_ref: expected a type with shape and dtype (e.g. "
                    f"jax.ShapeDtypeStruct), got {ty!r}.")
  return new_ref(zeros(ty.shape, dtypes.canonicalize_dtype(ty.dtype)))


def free_ref(ref: Ref) -> None:
  """Invalidate ``ref``: later reads and writes raise."""
  access(ref)
  ref.free()


def freeze(ref: Ref):
  """The ref's final value, as an immutable Array."""
  return access(ref)


