"""Where a computation runs, as in JAX: on the device its committed inputs
are on (an Array is committed once ``device_put`` to a device, and so is
every result computed from committed inputs), else on the default device.
Committed inputs on two different devices are an error, never a silent
copy.
"""
from __future__ import annotations

import pathlib
import sys
from typing import Sequence

from openjax._src.core.array import Array, ShardedBuffer

_OPENJAX_DIR = str(pathlib.Path(__file__).resolve().parent.parent.parent) + "/"
_NUMPY_DIR = _OPENJAX_DIR + "_src/numpy/"
# Array's operators and methods: JAX names the function they call (``x + y``:
# ``x`` and ``y`` of ``add``), not the method.
_ARRAY_METHODS = _NUMPY_DIR + "array_methods.py"


def committed_device(args: Sequence, name: str):
  """The device of the committed Arrays among ``args`` (None: none is
  committed). Raises IncompatibleDevicesError naming two arguments on
  different devices: as the ``jax.numpy`` function the user called names
  them where there is one (``x`` and ``y`` of ``add``), else by position
  (``args[0]``); ``jit`` renames them by its function's parameters."""
  found = None
  first = 0
  for i, x in enumerate(args):
    if type(x) is Array:
      d = x._device
      if d is not None:
        if found is None:
          found, first = d, i
        elif d is not found:
          placed = [(str(first), args[first]), (str(i), x)]
          raise IncompatibleDevicesError(name, placed, _called_names(name, args, placed))
  return found


def _called_names(name: str, args: Sequence, placed: list) -> tuple:
  """(function name, [(argument name, Array)]) JAX's message gives for an
  eager operation: JAX runs each ``jax.numpy`` function as a jitted
  computation, so it names the one the user called (the outermost
  ``openjax.numpy`` frame below the user's code) and its parameters holding
  the Arrays (as passed, before any dtype conversion); an Array it cannot
  find there (built inside, or passed in a list) and a bare ``lax``
  operation go by position, ``args[i]``, of the primitive."""
  by_position = (name, [(f"args[{n}]", x) for n, x in placed])
  frame, public = sys._getframe(2), None
  while frame is not None and frame.f_code.co_filename.startswith(_OPENJAX_DIR):
    filename = frame.f_code.co_filename
    if filename.startswith(_NUMPY_DIR) and filename != _ARRAY_METHODS:
      public = frame
    frame = frame.f_back
  if public is None:
    return by_position
  code = public.f_code
  params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
  values = [public.f_locals.get(p) for p in params]
  arrays = [(p, v) for p, v in zip(params, values) if type(v) is Array]
  named = []
  for n, x in placed:
    hit = next(((p, v) for p, v in zip(params, values) if v is x), None)
    if hit is None and len(arrays) == len(args):   # operands converted on the way in
      hit = arrays[int(n)]
    named.append(hit if hit is not None else (f"args[{n}]", x))
  return code.co_name, named


class IncompatibleDevicesError(ValueError):
  """JAX's error for a computation whose committed inputs sit on different
  devices. ``placed``: two (argument position, Array) pairs, or (None, what)
  for something else that fixes devices (an output sharding); it keeps them
  so a caller that knows the arguments' names (``jit``: ``x``,
  ``params['w']``) can say the error again with them. ``shown``: the
  (function name, [(argument name, Array)]) the message gives, if not
  ``fun_name`` and ``placed``."""

  def __init__(self, fun_name: str, placed: list, shown: tuple | None = None):
    self.fun_name, self.placed = fun_name, placed
    shown_name, shown_placed = shown if shown is not None else (fun_name, placed)
    super().__init__(
        "Received incompatible devices for jitted computation. Got "
        + " and ".join(_describe_placed(shown_name, n, a) for n, a in shown_placed))

  def renamed(self, fun_name: str, names: Sequence[str]) -> ValueError:
    """The same error with arguments given by position named ``names[i]``,
    as the plain ValueError JAX raises."""
    placed = [(names[int(n)] if n is not None and int(n) < len(names) else n, a)
              for n, a in self.placed]
    return ValueError(str(IncompatibleDevicesError(fun_name, placed)))


def _describe_placed(fun_name: str, arg_name: str | None, x) -> str:
  if arg_name is None:
    return x
  return (f"argument {arg_name} of {fun_name} with shape "
          f"{x.aval.str_short(short_dtypes=False)} and {devices_phrase(x.sharding)}")


def devices_phrase(sharding) -> str:
  """``with device ids [0, 1] on platform CPU``, as JAX's errors say it."""
  ids = ", ".join(str(d.id) for d in sharding._device_assignment)
  platform = sharding._device_assignment[0].platform.upper()
  return f"with device ids [{ids}] on platform {platform}"


def commit(outs: list, device) -> list:
  """``outs`` as Arrays committed to ``device`` (results of a computation on
  committed inputs that was interpreted rather than run by the device's
  stream). Results are new Arrays, so an input passed through unchanged
  keeps its own placement; a device buffer they share is marked shared
  (never donated in place)."""
  placed = []
  for o in outs:
    if type(o) is Array and o._device is not device and not o.is_deleted():
      buffer = o._buffer
      if type(buffer) is ShardedBuffer:
        # A value laid out over a mesh (a constant the program closed over,
        # made under jax.set_mesh): the device's result is its whole value.
        placed.append(Array(o._value, o.aval.update(sharding=None), device))
        continue
      if buffer is not None:
        buffer.shared = True
      o = Array(o._np, o.aval, device, buffer)
    placed.append(o)
  return placed


__all__ = ["IncompatibleDevicesError", "commit", "committed_device", "devices_phrase"]
