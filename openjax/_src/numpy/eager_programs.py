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

from openjax._src.core import eval_trace, trace_state
from openjax._src.numpy import util

__all__ = ["eager_program", "eager_program_when"]


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
