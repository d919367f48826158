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

__all__ = ["eager_program"]


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
