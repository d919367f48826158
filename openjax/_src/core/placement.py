"""Where a computation runs, as in JAX: on the device its committed inputs
are on (an Array is committed once ``device_put`` to a device, and so is
every result computed from committed inputs), else on the default device.
Committed inputs on two different devices are an error, never a silent
copy.
"""
from __future__ import annotations

from typing import Sequence

from openjax._src.core.array import Array, ShardedBuffer


def committed_device(args: Sequence, name: str):
  """The device of the committed Arrays among ``args`` (None: none is
  committed). Raises IncompatibleDevicesError naming two arguments on
  different devices (by position: ``jit`` renames them by their names)."""
  found = None
  first = 0
  for i, x in enumerate(args):
    if type(x) is Array:
      d = x._device
      if d is not None:
        if found is None:
          found, first = d, i
        elif d is not found:
          raise IncompatibleDevicesError(name, [(str(first), args[first]), (str(i), x)])
  return found


class IncompatibleDevicesError(ValueError):
  """JAX's error for a computation whose committed inputs sit on different
  devices. ``placed``: two (argument name, Array) pairs, or (None, what)
  for something else that fixes devices (an output sharding); it keeps them
  so a caller that knows the arguments' names (``jit``: ``x``,
  ``params['w']``) can say the error again with them."""

  def __init__(self, fun_name: str, placed: list):
    self.fun_name, self.placed = fun_name, placed
    super().__init__(
        "Received incompatible devices for jitted computation. Got "
        + " and ".join(_describe_placed(fun_name, n, a) for n, a in placed))

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
