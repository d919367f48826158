"""Attach the operators and methods of ``jax.Array`` to openjax's ``Array``
and to every ``Tracer`` (so traced values behave like arrays)."""
from __future__ import annotations

import sys

import numpy as np

from openjax._src.core import Array, Tracer, eval_trace, trace_state
from openjax._src.core.trace import eager_config, shaped_array
from openjax._src.numpy.index_update import _IndexUpdateHelper
from openjax._src.numpy.indexing import (
    _getitem as _general_getitem, _method_compress, choose, nonzero, repeat, take)
from openjax._src.numpy.linalg_ops import diagonal, dot, matmul, trace
from openjax._src.numpy.misc import _method_astype, _method_view, clip, round as _round
from openjax._src.numpy.reductions import (
    all as _all, any as _any, argmax, argmin, cumprod, cumsum, max as _max, mean, min as _min,
    prod, ptp, std, sum as _sum, var)
from openjax._src.numpy.searching import searchsorted
from openjax._src.numpy.shape_reshaping import (
    _method_reshape, _method_transpose, flatten, matrix_transpose, ravel, squeeze, swapaxes,
    transpose)
from openjax._src.numpy.sorting import argpartition, argsort, sort
from openjax._src.numpy.ufuncs import (
    abs as _abs, add, divmod as _divmod, equal, floor_divide, greater, greater_equal, less,
    less_equal, multiply, negative, not_equal, positive, power, remainder, subtract,
    true_divide)
from openjax._src.numpy.ufuncs_bitwise import (
    bitwise_and, bitwise_or, bitwise_xor, invert, left_shift, right_shift)
from openjax._src.numpy.ufuncs_eager import eager_binary, wrap_result
from openjax._src.numpy.ufuncs_float import conj, conjugate, imag, real

ndarray = Array


def _method(fn):
  # A function, not the jnp callable itself: some jnp functions are objects
  # (jit or custom_jvp wrappers) that would not bind ``self``.
  def call(self, *args, **kwargs):
    return fn(self, *args, **kwargs)
  call.__name__ = fn.__name__
  return call


def _binary(fn, reverse: bool = False):
  def op(self, other):
    if not _accepts(other):
      return NotImplemented
    return fn(other, self) if reverse else fn(self, other)
  return op


def _accepts(other) -> bool:
  return isinstance(other, (Array, Tracer, np.ndarray, np.generic, int, float, complex, bool)) \
      or hasattr(other, "__jax_array__")


_BINARY_OPS = {
    "add": add, "sub": subtract, "mul": multiply, "truediv": true_divide,
    "floordiv": floor_divide, "mod": remainder, "pow": power, "matmul": matmul,
    "and": bitwise_and, "or": bitwise_or, "xor": bitwise_xor,
    "lshift": left_shift, "rshift": right_shift, "divmod": _divmod,
}
_COMPARISONS = {"eq": equal, "ne": not_equal, "lt": less, "le": less_equal,
                "gt": greater, "ge": greater_equal}
_UNARY_OPS = {"neg": negative, "pos": positive, "abs": _abs, "invert": invert}

# Method name -> jnp function taking the array first (the ``_method_*`` ones
# have the method's signature where it differs from the function's).
_METHODS = {
    "all": _all, "any": _any, "argmax": argmax, "argmin": argmin,
    "argpartition": argpartition, "argsort": argsort, "astype": _method_astype,
    "choose": choose, "clip": clip, "compress": _method_compress, "conj": conj,
    "conjugate": conjugate, "cumprod": cumprod, "cumsum": cumsum, "diagonal": diagonal,
    "dot": dot, "flatten": flatten, "max": _max, "mean": mean, "min": _min,
    "nonzero": nonzero, "prod": prod, "ptp": ptp, "ravel": ravel, "repeat": repeat,
    "reshape": _method_reshape, "round": _round, "searchsorted": searchsorted, "sort": sort,
    "squeeze": squeeze, "std": std, "sum": _sum, "swapaxes": swapaxes, "take": take,
    "trace": trace, "transpose": _method_transpose, "var": var, "view": _method_view,
}


def _install(cls) -> None:
  for dunder, fn in _BINARY_OPS.items():
    setattr(cls, f"__{dunder}__", _binary(fn))
    setattr(cls, f"__r{dunder}__", _binary(fn, reverse=True))
  for dunder, fn in _COMPARISONS.items():
    setattr(cls, f"__{dunder}__", _binary(fn))
  for dunder, fn in _UNARY_OPS.items():
    setattr(cls, f"__{dunder}__", _method(fn))
  for name, fn in _METHODS.items():
    setattr(cls, name, _method(fn))
  cls.__getitem__ = _method(_general_getitem)
  cls.__round__ = lambda self, ndigits=None: _round(self, ndigits or 0)
  cls.T = property(transpose)
  cls.mT = property(matrix_transpose)
  cls.real = property(real)
  cls.imag = property(imag)
  cls.flat = property(lambda self: iter(ravel(self)))
  cls.at = property(_IndexUpdateHelper)
  cls.__array_namespace__ = lambda self, api_version=None: sys.modules["openjax.numpy"]


# Operators whose jnp function has an eager fast path (``ufuncs_eager``):
# Array gets its own copies.
_FAST_OPERATORS = {"add": add, "sub": subtract, "mul": multiply, "truediv": true_divide,
                   **_COMPARISONS}
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
  return _general_getitem(self, idx)


def _install_fast(cls) -> None:
  for dunder, fn in _FAST_OPERATORS.items():
    make_plan = fn.eager_plan
    setattr(cls, f"__{dunder}__", eager_binary(_binary(fn), make_plan))
    if dunder in _REFLECTED:
      setattr(cls, f"__r{dunder}__", eager_binary(_binary(fn, reverse=True), make_plan, swap=True))
  cls.__neg__ = negative
  cls.__getitem__ = _getitem


_install(Array)
_install_fast(Array)
_install(Tracer)


__all__ = ["ndarray"]
