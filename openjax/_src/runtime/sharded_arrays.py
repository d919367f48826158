"""Arrays over several devices: placing a value by a sharding
(``device_put(x, NamedSharding(...))``) and assembling one from per-device
data (``jax.make_array_from_callback``, ``make_array_from_single_device_arrays``,
``make_array_from_process_local_data``).

Each device's piece is a single-device Array committed to that device;
the runtime imports a piece into the device's IREE memory when a program
on that device reads it (CPU devices share the host's memory, so placing a
piece costs no copy until then).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Array, ShapedArray, Tracer, canonical_value
from openjax._src.core.array import ShardedBuffer, sharded_array_of, sharded_array_of_shards
from openjax._src.core.mesh import AbstractMesh
from openjax._src.core.sharding import (NamedSharding, Sharding, SingleDeviceSharding,
                                        aval_sharding)
from openjax._src.runtime.device_buffer import transfer_to


def unsharded_aval(aval: ShapedArray) -> ShapedArray:
  return aval if aval.sharding is None else ShapedArray(aval.shape, aval.dtype, aval.weak_type)


def put_on_device(x: Any, device) -> Array:
  """``x`` (Array, NumPy value or scalar) whole on one device (None: the
  default device, uncommitted)."""
  if type(x) is Array:
    x._check_alive()
    if type(x._buffer) is ShardedBuffer:
      return Array(x._value, unsharded_aval(x.aval), device)
    if device is None or x._device is device:
      return x
    if x._np is not None:   # a host value: shared (it is read-only)
      return Array(x._np, x.aval, device)
    # Computed by a device's stream: moved without waiting for it.
    return Array(None, x.aval, device, transfer_to(device, x._buffer))
  weak = type(x) in dtypes.python_scalar_dtypes
  value = canonical_value(x)
  value.setflags(False)
  return Array(value, ShapedArray(value.shape, value.dtype, weak), device)


def put_sharded(x: Any, sharding: Sharding) -> Array:
  """``x`` laid out by ``sharding`` (a NamedSharding or SingleDeviceSharding)."""
  if isinstance(sharding, SingleDeviceSharding):
    return put_on_device(x, sharding._device)
  if not isinstance(sharding, NamedSharding):
    raise TypeError(f"device_put: unsupported sharding {sharding!r}; pass a Device, a "
                    "NamedSharding, a SingleDeviceSharding or a PartitionSpec under "
                    "jax.set_mesh")
  if isinstance(sharding.mesh, AbstractMesh) or sharding.mesh.empty:
    raise ValueError(f"device_put: the sharding {sharding} has no devices (an "
                     "AbstractMesh); pass one over a jax.sharding.Mesh")
  if type(x) is Array:
    x._check_alive()
    if type(x._buffer) is ShardedBuffer and x._buffer.sharding == sharding:
      return x
    weak, value = x.weak_type, x._value
  else:
    weak = type(x) in dtypes.python_scalar_dtypes
    value = canonical_value(x)
  shape = value.shape
  try:
    sharding.check_compatible_aval(shape)
  except ValueError as e:
    raise ValueError(f"One of device_put args is incompatible with its sharding "
                     f"annotation {sharding}: {e}") from None
  return sharded_array_of(value, sharding, weak)


def _check_sharding(sharding, api_name: str) -> NamedSharding | SingleDeviceSharding:
  if not isinstance(sharding, (NamedSharding, SingleDeviceSharding)):
    raise TypeError(f"{api_name}: sharding must be a jax.sharding.NamedSharding or "
                    f"SingleDeviceSharding; got {sharding!r}")
  return sharding


def _global_aval(shape: tuple, dtype, sharding) -> ShapedArray:
  return ShapedArray(shape, dtype, False, aval_sharding(sharding, shape))


def make_array_from_callback(shape: Sequence[int], sharding, data_callback: Callable,
                             dtype=None) -> Array:
  """An Array of ``shape`` laid out by ``sharding`` whose piece on each device
  is ``data_callback(index)`` (``index``: that device's tuple of slices; called
  once per distinct piece, replicas share it)."""
  sharding = _check_sharding(sharding, "make_array_from_callback")
  shape = tuple(int(d) for d in shape)
  indices_map = sharding.devices_indices_map(shape)
  expected = sharding.shard_shape(shape)
  cache: dict = {}
  shards = []
  out_dtype = None
  for device, index in indices_map.items():
    key = tuple((s.start, s.stop, s.step) for s in index)
    value = cache.get(key)
    if value is None:
      data = data_callback(index)
      value = cache[key] = canonical_value(data if dtype is None else np.asarray(data, dtype))
      if value.shape != expected:
        raise ValueError(
            f"make_array_from_callback: the callback returned data of shape {value.shape} "
            f"for index {index}, but the sharding {sharding} gives each device a piece of "
            f"shape {expected} of the global shape {shape}. Return x[index] of the "
            "global array.")
      value.setflags(False)
    out_dtype = value.dtype if out_dtype is None else out_dtype
    if value.dtype != out_dtype:
      raise ValueError(f"make_array_from_callback: the callback returned pieces of dtypes "
                       f"{out_dtype} and {value.dtype}; every piece must have one dtype.")
    shards.append(Array(value, ShapedArray(value.shape, value.dtype), device))
  if isinstance(sharding, SingleDeviceSharding):
    return shards[0]
  return sharded_array_of_shards(_global_aval(shape, out_dtype, sharding), sharding, shards)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding, arrays: Sequence,
                                         *, dtype=None) -> Array:
  """An Array of ``shape`` laid out by ``sharding`` from one single-device
  Array per device (each on a distinct device of the sharding, holding that
  device's piece)."""
  sharding = _check_sharding(sharding, "make_array_from_single_device_arrays")
  shape = tuple(int(d) for d in shape)
  arrays = list(arrays)
  if isinstance(sharding, SingleDeviceSharding):
    if len(arrays) != 1:
      raise ValueError("make_array_from_single_device_arrays: a SingleDeviceSharding takes "
                       f"exactly one array; got {len(arrays)}")
    return put_on_device(arrays[0], sharding._device)
  assignment = sharding._device_assignment
  if len(arrays) != len(assignment):
    raise ValueError(
        f"make_array_from_single_device_arrays: the sharding {sharding} spans "
        f"{len(assignment)} devices, but {len(arrays)} arrays were given; pass one "
        "single-device Array per device.")
  expected = sharding.shard_shape(shape)
  by_device = {}
  for a in arrays:
    if not isinstance(a, Array) or isinstance(a, Tracer) or type(a._buffer) is ShardedBuffer:
      raise TypeError("make_array_from_single_device_arrays: every array must be a "
                      f"single-device jax.Array; got {type(a).__name__}")
    if a.shape != expected:
      raise ValueError(
          f"make_array_from_single_device_arrays: an array of shape {a.shape} was given "
          f"where the sharding {sharding} puts pieces of shape {expected} of the global "
          f"shape {shape}.")
    device = a.device
    if device in by_device:
      raise ValueError(f"make_array_from_single_device_arrays: two arrays are on {device!r}; "
                       "each must be on a distinct device of the sharding. Move them "
                       "with jax.device_put(piece, device).")
    by_device[device] = a
  missing = [d for d in assignment if d not in by_device]
  if missing:
    raise ValueError(f"make_array_from_single_device_arrays: no array is on {missing}, "
                     f"devices of the sharding {sharding}.")
  dts = {a.dtype for a in arrays}
  if len(dts) != 1:
    raise ValueError("make_array_from_single_device_arrays: the arrays have dtypes "
                     f"{sorted(str(d) for d in dts)}; they must share one.")
  out_dtype = dts.pop() if dtype is None else np.dtype(dtype)
  shards = [_committed(by_device[d], d) for d in assignment]
  return sharded_array_of_shards(_global_aval(shape, out_dtype, sharding), sharding, shards)


def _committed(a: Array, device) -> Array:
  return a if a._device == device else Array(a._value, a.aval, device)


def make_array_from_process_local_data(sharding, local_data, global_shape=None) -> Array:
  """An Array laid out by ``sharding`` from the data this process holds. With
  one process that is the whole array: ``global_shape`` (if given) must be
  its shape."""
  sharding = _check_sharding(sharding, "make_array_from_process_local_data")
  value = canonical_value(local_data)
  if global_shape is not None and tuple(global_shape) != value.shape:
    raise ValueError(
        f"make_array_from_process_local_data: global_shape {tuple(global_shape)} differs "
        f"from the local data's shape {value.shape}; with one process the local data is "
        "the whole array.")
  return put_sharded(value, sharding)


__all__ = ["make_array_from_callback", "make_array_from_process_local_data",
           "make_array_from_single_device_arrays", "put_on_device", "put_sharded",
           "unsharded_aval"]
