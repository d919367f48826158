"""Attach the operators and methods of ``jax.Array`` to openjax's ``Array``
and to every ``Tracer`` (so traced values behave like arrays)."""
from __future__ import annotations

import sys
import types

import numpy as np

from openjax._src.core import Array, Tracer
from openjax._src.numpy.creation import copy
from openjax._src.numpy.index_update import _IndexUpdateHelper
from openjax._src.numpy.indexing import (
    _getitem as _general_getitem, _method_compress, choose, nonzero, take)
from openjax._src.numpy.linalg_ops import diagonal, dot, matmul, trace
from openjax._src.numpy.misc import _method_astype, _method_view, clip, round as _round
from openjax._src.numpy.reductions import (
    all as _all, any as _any, argmax, argmin, cumprod, cumsum, max as _max, mean, min as _min,
    prod, ptp, std, sum as _sum, var)
from openjax._src.numpy.repeating import repeat
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
from openjax._src.numpy.ufuncs_float import conj, conjugate, imag, real

ndarray = Array


def _method(fn):
  """``fn`` as a method: a plain function is bound as it is (no extra call
  per operation); other jnp callables (jit or custom_jvp wrappers, which
  would not bind ``self``) get a function around them."""
  if isinstance(fn, types.FunctionType):
    return fn
  def call(self, *args, **kwargs):
    return fn(self, *args, **kwargs)
  call.__name__ = fn.__name__
  return call


# Operand types of the operators, checked by type first (a set lookup).
_OPERAND_TYPES = frozenset((Array, int, float, complex, bool))


def _binary(fn, reverse: bool = False):
  """The operator calling ``fn``; NotImplemented for operands it does not
  know (so Python tries the other operand's reflected operator)."""
  if reverse:
    def reflected(self, other):
      if type(other) in _OPERAND_TYPES or _accepts(other):
        return fn(other, self)
      return NotImplemented
    return reflected

  def op(self, other):
    if type(other) in _OPERAND_TYPES or _accepts(other):
      return fn(self, other)
    return NotImplemented
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
    "conjugate": conjugate, "copy": copy, "cumprod": cumprod, "cumsum": cumsum, "diagonal": diagonal,
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


_install(Array)
_install(Tracer)


__all__ = ["ndarray"]
