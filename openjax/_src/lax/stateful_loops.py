"""``lax.while_loop`` with mutable array references: the refs ``cond_fun``
and ``body_fun`` use are threaded through the loop as extra carries and
written back after it (``control/ref_threading.py``), as ``scan``,
``fori_loop`` and ``cond`` do; loops without refs are the control layer's
``while_loop`` unchanged."""
from __future__ import annotations

import functools
from typing import Callable

# The control layer's while_loop module, by its package (this module's own
# while_loop wraps its function of the same name).
import openjax._src.control.while_loop  # noqa: F401
from openjax._src import control
from openjax._src.control.ref_threading import run_threading_refs

__all__ = ["while_loop"]


def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
  if not (callable(cond_fun) and callable(body_fun)):   # the control layer's error
    return control.while_loop.while_loop(cond_fun, body_fun, init_val)

  def plain(state):
    def scoped_funs():
      # wraps: error messages name the user's functions and their arguments.
      @functools.wraps(cond_fun)
      def cond(carry):
        return state.call(cond_fun, [], carry)[0]

      @functools.wraps(body_fun)
      def body(carry):
        return state.call(body_fun, [], carry)[0]
      return cond, body
    # Keyed by the user's functions: a loop traced without outside refs is
    # their loop (~20 us a call where the wrappers were made and keyed).
    return control.while_loop.keyed_while_loop(cond_fun, body_fun, init_val, scoped_funs)

  def threaded(state):
    def cond(carry):
      return state.call(cond_fun, carry[1], carry[0])[0]

    def body(carry):
      return state.call(body_fun, carry[1], carry[0])
    out, finals = control.while_loop.while_loop(cond, body, (init_val, state.values()))
    state.write_back(finals)
    return out
  return run_threading_refs(plain, threaded)


while_loop.__doc__ = control.while_loop.while_loop.__doc__
