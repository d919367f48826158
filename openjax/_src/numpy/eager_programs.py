"""``eager_program``: run a multi-primitive ``jnp`` function that JAX does not
jit (``unique``, ``bincount``, ``nonzero``, ...) as one cached library program
when called eagerly, and inline (its primitives staged one by one, as JAX
does) under a trace, so ``make_jaxpr`` prints JAX's equations.

Eagerly each primitive's ``bind`` costs a few microseconds of dispatch; a
library program (``util.jit``) runs the function's jaxpr, traced once per
signature, at about 1 us a step. A call the program cannot trace (a body that
needs a concrete value, such as ``unique`` without ``size``) runs inline:
``util.jit`` falls back to the function itself.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, NamedTuple

import numpy as np

from openjax._src import dtypes
from openjax._src.core import eval_trace, trace_state
from openjax._src.numpy import util

__all__ = ["eager_program", "eager_program_if", "eager_program_when", "quiet_dtype",
           "sequence_program", "static_key", "static_value"]


def eager_program(*, static_argnames=()):
  """Decorator: eager calls of the function run as one library program
  (``util.jit`` with ``static_argnames``); traced calls run it inline."""
  def wrap(fun):
    program = util.jit(fun, static_argnames=static_argnames)

    @functools.wraps(fun)
    def call(*args, **kwargs):
      if trace_state.trace is eval_trace:
        return program(*args, **kwargs)
      return fun(*args, **kwargs)
    return call
  return wrap


def eager_program_when(test):
  """Decorator: eager calls whose positional arguments pass ``test`` (a
  cheap check of Arrays' dtypes: the calls of several primitives, such as
  ``logical_and`` of floats or ``isfinite`` of complex numbers) run as one
  library program; the others, and traced calls, run the function itself
  (a single bind costs less than a program's call). The program is the
  wrapper's ``program`` attribute."""
  def wrap(fun):
    program = util.jit(fun)

    @functools.wraps(fun)
    def call(*args):
      if trace_state.trace is eval_trace and test(*args):
        return program(*args)
      return fun(*args)
    call.program = program
    return call
  return wrap




def sequence_program(fun, static_argnames=()):
  """``fun(seq, **static)`` (a join: ``seq`` a list or tuple of Arrays, or
  one Array; the others static and hashable) as one library program, called
  the same way. The program takes the list's Arrays as separate arguments
  and the others by keyword, so a repeated call takes the library call's
  last-call slot (a list argument is keyed anew per call: ~3 us)."""
  def flat(*arrays, sequence_type, **static):
    return fun(arrays[0] if sequence_type is None else sequence_type(arrays), **static)
  flat.__name__ = fun.__name__
  program = util.jit(flat, static_argnames=("sequence_type",) + tuple(static_argnames))

  def run(seq, **static):
    t = type(seq)
    if t is list or t is tuple:
      return program(*seq, sequence_type=t, **static)
    return program(seq, sequence_type=None, **static)
  return run


def eager_program_if(test, *, static_argnames=()):
  """Decorator for the joins (the stacks), whose first argument is a list or
  tuple of arrays (or one array) and whose others are static: eager calls
  for which ``test(*args, **kwargs)`` holds (a cheap look at the arguments'
  types: Arrays) run as one ``sequence_program``, the others and traced
  calls as the function itself."""
  def wrap(fun):
    names = tuple(inspect.signature(fun).parameters)[1:]
    run = sequence_program(fun, static_argnames)

    @functools.wraps(fun)
    def call(seq, *args, **kwargs):
      if trace_state.trace is eval_trace and test(seq, *args, **kwargs):
        if args:
          kwargs.update(zip(names, args))
        return run(seq, **kwargs)
      return fun(seq, *args, **kwargs)
    return call
  return wrap


def quiet_dtype(dtype) -> bool:
  """Whether ``dtype`` (an argument a program would take as static) is None
  or a dtype-like that needs no x64 truncation warning: that warning is
  given on every call, a program's trace would give it once."""
  if dtype is None or (isinstance(dtype, type) and dtype in dtypes.python_scalar_dtypes):
    return True
  try:
    dt = np.dtype(dtype)
  except TypeError:
    return False
  return dtypes.canonicalize_dtype(dt) == dt


#: NumPy arrays up to this size may be static arguments (keyed by their bytes).
STATIC_ARRAY_MAX = 64


class _HostArray(NamedTuple):
  """A small NumPy array as a hashable static argument (its bytes)."""
  data: bytes
  dtype: str
  shape: tuple


class _Slice(NamedTuple):
  start: Any
  stop: Any
  step: Any


class _Scalar(NamedTuple):
  """A Python scalar keyed by its exact bits (0.0 and -0.0 differ, NaN
  equals itself)."""
  kind: type
  bits: Any


def static_key(obj: Any):
  """A hashable stand-in for the static index-like argument ``obj`` of a
  library program (an int, a slice of ints, a Python scalar, a NumPy scalar
  or a small NumPy array of numbers), from which ``static_value`` gives back
  an equal object; None for anything else."""
  t = type(obj)
  if t is int or t is bool:
    return _Scalar(t, obj)
  if t is float:
    return _Scalar(t, obj.hex())
  if t is complex:
    return _Scalar(t, (obj.real.hex(), obj.imag.hex()))
  if t is slice:
    if all(v is None or type(v) is int for v in (obj.start, obj.stop, obj.step)):
      return _Slice(obj.start, obj.stop, obj.step)
    return None
  if isinstance(obj, np.generic):
    obj = np.asarray(obj)
    key = static_key(obj)
    return None if key is None else (np.generic, key)
  if t is np.ndarray and obj.size <= STATIC_ARRAY_MAX and obj.dtype.kind in "biuf":
    return _HostArray(obj.tobytes(), obj.dtype.str, obj.shape)
  return None


def static_value(key: Any) -> Any:
  """The object ``static_key`` stood in for (a read-only NumPy array for
  an array)."""
  t = type(key)
  if t is _Scalar:
    if key.kind is float:
      return float.fromhex(key.bits)
    if key.kind is complex:
      return complex(float.fromhex(key.bits[0]), float.fromhex(key.bits[1]))
    return key.bits
  if t is _Slice:
    return slice(key.start, key.stop, key.step)
  if t is _HostArray:
    return np.frombuffer(key.data, np.dtype(key.dtype)).reshape(key.shape)
  _, inner = key   # a NumPy scalar
  return static_value(inner)[()]
