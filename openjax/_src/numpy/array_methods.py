"""Attach the operators and methods of ``jax.Array`` to openjax's ``Array``
and to every ``Tracer`` (so traced values behave like arrays)."""
from __future__ import annotations

import sys

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Array, eval_trace, trace_state, Tracer
from openjax._src.numpy import (creation, indexing, linalg_ops, misc, reductions,
                                shape_ops, sorting, ufuncs)
from openjax._src.core.trace import eager_config, shaped_array
from openjax._src.numpy.ufuncs_eager import eager_binary, wrap_result

ndarray = Array

_MODULES = (ufuncs, reductions, shape_ops, indexing, linalg_ops, sorting, misc, creation)


def _jnp(name: str):
  for m in _MODULES:
    f = getattr(m, name, None)
    if f is not None:
      return f
  raise NotImplementedError(f"jax.numpy.{name} is not implemented in openjax yet")


def _defer(name: str):
  # Resolve on first call (each family module owns its functions), then keep it.
  resolved = []

  def call(*args, **kwargs):
    if not resolved:
      resolved.append(_jnp(name))
    return resolved[0](*args, **kwargs)
  call.__name__ = name
  return call


def _binary(name: str, reverse: bool = False):
  fn = _defer(name)

  def op(self, other):
    if not _accepts(other):
      return NotImplemented
    return fn(other, self) if reverse else fn(self, other)
  return op


def _accepts(other) -> bool:
  return isinstance(other, (Array, Tracer, np.ndarray, np.generic, int, float, complex, bool)) \
      or hasattr(other, "__jax_array__")


_BINARY_OPS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
    "lshift": "left_shift", "rshift": "right_shift", "divmod": "divmod",
}
_COMPARISONS = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                "gt": "greater", "ge": "greater_equal"}
_UNARY_OPS = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "invert"}

_METHODS = (
    "all", "any", "argmax", "argmin", "argpartition", "argsort", "astype", "choose", "clip",
    "compress", "conj", "conjugate", "cumprod", "cumsum", "diagonal", "dot", "flatten",
    "max", "mean", "min", "nonzero", "prod", "ptp", "ravel", "repeat", "reshape",
    "round", "searchsorted", "sort", "squeeze", "std", "sum", "swapaxes", "take", "trace",
    "transpose", "var", "view",
)


def _install(cls) -> None:
  for dunder, name in _BINARY_OPS.items():
    setattr(cls, f"__{dunder}__", _binary(name))
    setattr(cls, f"__r{dunder}__", _binary(name, reverse=True))
  for dunder, name in _COMPARISONS.items():
    setattr(cls, f"__{dunder}__", _binary(name))
  for dunder, name in _UNARY_OPS.items():
    setattr(cls, f"__{dunder}__", _defer(name))
  for name in _METHODS:
    # Methods whose signature differs from the jnp function of the same name.
    setattr(cls, name, _defer("_method_" + name)
            if name in ("reshape", "transpose", "astype", "view", "compress") else _defer(name))
  cls.__getitem__ = lambda self, idx: _jnp("_getitem")(self, idx)
  cls.__round__ = lambda self, ndigits=None: _jnp("round")(self, ndigits or 0)
  cls.T = property(lambda self: _jnp("transpose")(self))
  cls.mT = property(lambda self: _jnp("matrix_transpose")(self))
  cls.real = property(lambda self: _jnp("real")(self))
  cls.imag = property(lambda self: _jnp("imag")(self))
  cls.flat = property(lambda self: iter(_jnp("ravel")(self)))
  cls.at = property(lambda self: _jnp("_IndexUpdateHelper")(self))
  cls.__array_namespace__ = lambda self, api_version=None: sys.modules["openjax.numpy"]


# Operators whose jnp function has an eager fast path (``ufuncs_eager``):
# Array gets its own copies, which skip the ``_defer`` lookup as well.
_FAST_OPERATORS = {"add": "add", "sub": "subtract", "mul": "multiply",
                   "truediv": "true_divide", **_COMPARISONS}
_REFLECTED = ("add", "sub", "mul", "truediv")


def _basic_index(idx, shape) -> bool:
  """Whether ``idx`` is an in-bounds Python int, a slice of Python ints, or a
  tuple of those no longer than ``shape``: indexing that NumPy and JAX do
  alike (JAX clamps out-of-bounds ints; NumPy raises, so those go general)."""
  t = type(idx)
  if t is int:
    return bool(shape) and -shape[0] <= idx < shape[0]
  if t is slice:
    return (bool(shape) and (idx.step is None or type(idx.step) is int and idx.step != 0)
            and (idx.start is None or type(idx.start) is int)
            and (idx.stop is None or type(idx.stop) is int))
  if t is tuple and len(idx) <= len(shape):
    return all(_basic_index(i, shape[k:]) for k, i in enumerate(idx))
  return False


_ROW_AVAL = [(None, None)]   # (aval, aval of one row): the last pair, for x[i] in loops


def _getitem(self, idx):
  """``self[idx]``: basic indexing of a ready Array outside transformations
  is NumPy's (a view of the immutable value); the rest is ``jnp``'s."""
  cfg = eager_config
  if cfg.enabled or (cfg.flags_ok and trace_state.trace is eval_trace):
    v = self._np
    if v is not None:
      aval = self.aval
      if type(idx) is int:   # x[i], the common case, inline
        shape = aval.shape
        if shape and -shape[0] <= idx < shape[0]:
          cached = _ROW_AVAL[0]
          if cached[0] is aval:
            row = cached[1]
          else:
            row = shaped_array(shape[1:], aval.dtype, aval.weak_type)
            _ROW_AVAL[0] = (aval, row)
          return wrap_result(v[idx], row)
      elif _basic_index(idx, aval.shape):
        out = np.asarray(v[idx])
        return wrap_result(out, shaped_array(out.shape, aval.dtype, aval.weak_type))
  return indexing._getitem(self, idx)


def _install_fast(cls) -> None:
  for dunder, name in _FAST_OPERATORS.items():
    make_plan = getattr(ufuncs, name).eager_plan
    setattr(cls, f"__{dunder}__", eager_binary(_binary(name), make_plan))
    if dunder in _REFLECTED:
      setattr(cls, f"__r{dunder}__",
              eager_binary(_binary(name, reverse=True), make_plan, swap=True))
  cls.__neg__ = ufuncs.negative
  cls.__getitem__ = _getitem


_install(Array)
_install_fast(Array)
_install(Tracer)


def dtype_of(x):
  return dtypes.dtype(x)


__all__ = ["ndarray"]
