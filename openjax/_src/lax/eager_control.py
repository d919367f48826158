"""Eager ``lax.cond``/``switch``/``while_loop``/``scan``/``fori_loop``/``map``
as cached programs.

The control layer caches the traces of branches and loop bodies, but an
eager call still keys and checks its functions, binds the primitive and
runs its impl: 45-150 us before the first step. When the functions are
effect-free (``control/trace_cache.pure_fun_key``), the whole call runs as
an eager library program (``api/transform_cache.call_transformed``): one
key, then the program's steps, the loop's body programs per trip as before
(measured on a loaded machine: ``fori_loop`` of 4 trips 147 -> 85 us,
``lax.map`` in batches 121 -> 44 us, ``cond`` 58 -> 44 us). Under a trace,
or with functions that may have effects, these are the control layer's
functions unchanged.
"""
from __future__ import annotations

import functools
from typing import Callable, Sequence

# The control layer's modules, by their package (this module's functions
# wrap their functions of the same names).
import openjax._src.control.cond  # noqa: F401
import openjax._src.control.scan  # noqa: F401
from openjax._src import control
from openjax._src.api.transform_cache import call_forwarding_loop, call_transformed
from openjax._src.lax import stateful_loops

__all__ = ["cond", "switch", "while_loop", "scan", "fori_loop", "map"]


@functools.wraps(control.cond.cond)
def cond(pred, true_fun: Callable, false_fun: Callable, *operands, **kwargs):
  if kwargs or not (callable(true_fun) and callable(false_fun)):
    return control.cond.cond(pred, true_fun, false_fun, *operands, **kwargs)
  return call_transformed(
      ("cond", len(operands)), (true_fun, false_fun),
      lambda p, *ops: control.cond.cond(p, true_fun, false_fun, *ops), (pred, *operands), {})


@functools.wraps(control.cond.switch)
def switch(index, branches: Sequence[Callable], *operands, **kwargs):
  if kwargs or not isinstance(branches, (list, tuple)) \
      or not all(callable(b) for b in branches):
    return control.cond.switch(index, branches, *operands, **kwargs)
  branches = tuple(branches)
  return call_transformed(
      ("switch", len(operands)), branches,
      lambda i, *ops: control.cond.switch(i, branches, *ops), (index, *operands), {})


@functools.wraps(stateful_loops.while_loop)
def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
  if not (callable(cond_fun) and callable(body_fun)):
    return stateful_loops.while_loop(cond_fun, body_fun, init_val)
  if type(init_val) is tuple or type(init_val) is dict or type(init_val) is list:
    # A carry may hold Python scalars (``(0, x)``): forwarded ones come back
    # as themselves.
    return call_forwarding_loop(
        ("while_loop",), (cond_fun, body_fun),
        lambda init: stateful_loops.while_loop(cond_fun, body_fun, init), init_val)
  return call_transformed(
      ("while_loop",), (cond_fun, body_fun),
      lambda init: stateful_loops.while_loop(cond_fun, body_fun, init), (init_val,), {})


@functools.wraps(control.scan.scan)
def scan(f: Callable, init, xs=None, length: int | None = None, reverse: bool = False,
         unroll: int | bool = 1, _split_transpose: bool = False):
  if not callable(f) or not (length is None or type(length) is int):
    return control.scan.scan(f, init, xs, length, reverse, unroll, _split_transpose)
  return call_transformed(
      ("scan", length, reverse, unroll, _split_transpose), f,
      lambda c, x: control.scan.scan(f, c, x, length, reverse, unroll, _split_transpose),
      (init, xs), {})


@functools.wraps(control.scan.fori_loop)
def fori_loop(lower, upper, body_fun: Callable, init_val, *,
              unroll: int | bool | None = None):
  if not (callable(body_fun) and type(lower) is int and type(upper) is int):
    # Traced or array bounds: the control layer's loop (a while loop, or a
    # scan for concrete bounds) decides.
    return control.scan.fori_loop(lower, upper, body_fun, init_val, unroll=unroll)
  return call_transformed(
      ("fori_loop", lower, upper, unroll), body_fun,
      lambda init: control.scan.fori_loop(lower, upper, body_fun, init, unroll=unroll),
      (init_val,), {})


@functools.wraps(control.scan.map)
def map(f: Callable, xs, *, batch_size: int | None = None):  # noqa: A001 - JAX's name
  if not callable(f) or not (batch_size is None or type(batch_size) is int):
    return control.scan.map(f, xs, batch_size=batch_size)
  return call_transformed(
      ("map", batch_size), f, lambda x: control.scan.map(f, x, batch_size=batch_size),
      (xs,), {})

