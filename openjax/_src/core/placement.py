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
  committed). Raises ValueError naming two arguments on different devices."""
  found = None
  first = 0
  for i, x in enumerate(args):
    if type(x) is Array:
      d = x._device
      if d is not None:
        if found is None:
          found, first = d, i
        elif d is not found:
          raise incompatible_devices_error(name, first, args[first], i, x)
  return found


def incompatible_devices_error(name: str, i: int, x: Array, j: int, y: Array) -> ValueError:
  def describe(k, a):
    return (f"argument {k} of {name} with shape {a.aval.str_short(short_dtypes=False)} and "
            f"with device ids [{a._device.id}] on platform {a._device.platform.upper()}")
  return ValueError(
      f"Received incompatible devices for jitted computation. Got {describe(i, x)} and "
      f"{describe(j, y)}. Move the arguments to one device first, e.g. "
      f"jax.device_put(x, jax.devices()[{x._device.id}]).")


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


__all__ = ["commit", "committed_device", "incompatible_devices_error"]
