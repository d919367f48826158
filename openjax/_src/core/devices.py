"""CPU devices, as JAX reports them (``CpuDevice(id=0)``).

These are descriptors only (what a device is called, how many there are);
the IREE devices that run programs on them are the runtime's
(``runtime/iree_device.py``).

Their number is set as in JAX: ``XLA_FLAGS=--xla_force_host_platform_device_count=N``
or ``openjax.config.update("jax_num_cpu_devices", N)`` before first use (openjax,
unlike JAX, also accepts a change later: the listing changes, devices keep
their identity).
"""
from __future__ import annotations

import enum
import os
import re
import threading

from openjax._src.config import config
from openjax._src.errors import JaxRuntimeError


class Device:
  """One device, as JAX's ``CpuDevice``: ``repr`` ``CpuDevice(id=1)``, ``str``
  ``cpu:1``. Devices are made once per process, so equality and hashing are
  by identity (as JAX's); ``local_hardware_id`` is the id among this
  process's devices of its platform."""
  __slots__ = ("id", "platform", "device_kind", "process_index", "host_id", "task_id",
               "local_hardware_id", "_memories")

  def __init__(self, id: int, platform: str = "cpu"):
    self.id = id
    self.platform = platform
    self.device_kind = platform
    self.process_index = 0
    self.host_id = 0
    self.task_id = 0
    self.local_hardware_id = id
    self._memories = None

  @property
  def client(self) -> "Client":
    return _CLIENT

  def addressable_memories(self) -> list["Memory"]:
    """The memories this device reads: its own (kind ``'device'``), then
    pinned and unpinned host memory, numbered as JAX numbers them."""
    if self._memories is None:
      self._memories = [Memory(3 * self.id + i, kind, self)
                        for i, kind in enumerate(MEMORY_KINDS)]
    return list(self._memories)

  def default_memory(self) -> "Memory":
    return self.addressable_memories()[0]

  def memory(self, kind: str) -> "Memory":
    """The memory of ``kind`` (``'device'``, ``'pinned_host'``, ``'unpinned_host'``)."""
    for m in self.addressable_memories():
      if m.kind == kind:
        return m
    raise JaxRuntimeError(
        f"INVALID_ARGUMENT: Could not find memory addressable by device {self.device_kind}. "
        f"Device {self.device_kind} can address the following memory kinds: "
        f"{', '.join(MEMORY_KINDS)}. Got memory kind: {kind}")

  def memory_stats(self):
    """None: CPU devices report no memory statistics (as in JAX)."""
    return None

  def __repr__(self):
    return f"{self.platform.capitalize()}Device(id={self.id})"

  def __str__(self):
    return f"{self.platform}:{self.id}"


#: the memory kinds of a CPU device, default first
MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")
_MEMORY_NAMES = {"device": ("CPU_DEVICE", "CpuDeviceMemory"),
                 "pinned_host": ("PINNED_HOST", "PinnedHostMemory"),
                 "unpinned_host": ("UNPINNED_HOST", "UnpinnedHostMemorySpace")}


class Memory:
  """A memory space a device addresses (``device.default_memory()``); all
  are host memory on the CPU. ``repr``: ``CPU_DEVICE_3``; ``str``:
  ``CpuDeviceMemory(id=3, process_index=0, client=cpu)``, as JAX's."""
  __slots__ = ("id", "kind", "_device")
  platform = "cpu"
  process_index = 0

  def __init__(self, id: int, kind: str, device: Device):
    self.id, self.kind, self._device = id, kind, device

  def addressable_by_devices(self) -> list[Device]:
    return [self._device]

  def __repr__(self):
    return f"{_MEMORY_NAMES[self.kind][0]}_{self.id}"

  def __str__(self):
    return f"{_MEMORY_NAMES[self.kind][1]}(id={self.id}, process_index=0, client=cpu)"


class MemorySpace(enum.Enum):
  """Where an array's memory lives (``jax.memory.Space``): device memory, host
  memory, or any. openjax's CPU devices have one memory, so every array is in
  ``Device`` memory."""
  Device = enum.auto()
  Host = enum.auto()
  Any = enum.auto()

  def __repr__(self):
    return f"MemorySpace.{self.name}"

  # Enum hashes the name string; JAX hashes identity.
  __hash__ = object.__hash__


class Client:
  """The backend that owns the devices (``device.client``): ``platform``
  ``'cpu'``, its device counts and lists."""
  platform = "cpu"
  platform_version = "cpu"
  runtime_type = "pjrt_ifrt"

  def process_index(self) -> int:
    return 0

  def device_count(self) -> int:
    return device_count()

  def local_device_count(self) -> int:
    return local_device_count()

  def devices(self) -> list[Device]:
    return devices()

  def local_devices(self) -> list[Device]:
    return local_devices()


_CLIENT = Client()


_devices: list[Device] | None = None
# Every Device made, by id: a changed device count lists the same objects
# again (JAX refuses a change once devices are in use; openjax allows it, so
# that one process, a test suite, can run with several counts, and keeps
# each device's identity and execution stream across changes).
_made: dict[int, Device] = {}


def _check_default_device(value):
  if value is None or isinstance(value, (Device, str)):
    return value
  raise ValueError(
      "jax.default_device must be passed either a Device object (e.g. `jax.devices('cpu')[0]`) "
      f"or a platform name string like 'cpu' or 'gpu', got: {value!r}")


config.define("jax_num_cpu_devices", int(os.environ.get("JAX_NUM_CPU_DEVICES", "-1")),
              "Number of CPU devices; -1 reads XLA_FLAGS or defaults to 1.", validator=int)
config.define("jax_default_device", None,
              "The device that jitted and eager computations run on: a Device, a platform "
              "name ('cpu') for its first device, or None for the first device.",
              validator=_check_default_device)


def _requested_count() -> int:
  n = config.read("jax_num_cpu_devices")
  if n is not None and n > 0:
    return n
  m = re.search(r"--xla_force_host_platform_device_count=(\d+)", os.environ.get("XLA_FLAGS", ""))
  return int(m.group(1)) if m else 1


def _check_backend(backend) -> None:
  if backend is None or backend is _CLIENT:
    return
  if not isinstance(backend, str) or backend.lower() != "cpu":
    raise RuntimeError(
        f"Unknown backend: {backend!r} requested, but no platforms that are instances of "
        f"{backend} are present. Platforms present are: cpu")


def devices(backend: str | Client | None = None) -> list[Device]:
  """All devices (``[CpuDevice(id=0), ...]``)."""
  global _devices
  _check_backend(backend)
  if _devices is None:
    _devices = [_made.get(i) or _made.setdefault(i, Device(i))
                for i in range(_requested_count())]
  return list(_devices)


def local_devices(process_index: int | None = None, backend: str | Client | None = None,
                  host_id: int | None = None) -> list[Device]:
  """The devices of process ``process_index`` (default: this one)."""
  index = process_index if process_index is not None else host_id
  found = devices(backend)
  if index is None:
    return found
  return [d for d in found if d.process_index == index]


def device_count(backend: str | Client | None = None) -> int:
  return len(devices(backend))


def local_device_count(backend: str | Client | None = None) -> int:
  return len(local_devices(backend=backend))


def default_device() -> Device:
  """The device computations run on: ``jax_default_device`` when set (a
  platform name means its first device), else the first device."""
  chosen = config.read("jax_default_device")
  if chosen is None:
    return (_devices or devices())[0]
  if type(chosen) is str:
    return devices(chosen)[0]
  return chosen


# Whether any thread chooses a default device (the global
# ``jax_default_device`` or a ``jax.default_device`` block): while none does,
# an uncommitted Array is on the first device without reading the config
# (one list read per Array made, see ``core/array.py``).
default_device_chosen = [False]
_choosing: set = set()   # ids of threads inside a ``jax.default_device`` block


def _track_default_device(name: str) -> None:
  if name != "jax_default_device":
    return
  if name in config._local.values:
    _choosing.add(threading.get_ident())
  else:
    _choosing.discard(threading.get_ident())
  default_device_chosen[0] = bool(_choosing) or config._values[name] is not None


def first_device() -> Device:
  """The first device (where an uncommitted Array made while no default
  device was chosen lives)."""
  return (_devices or devices())[0]


def default_backend() -> str:
  return "cpu"


def process_index(backend: str | Client | None = None) -> int:
  _check_backend(backend)
  return 0


def process_count(backend: str | Client | None = None) -> int:
  _check_backend(backend)
  return 1


def _reset_devices_for_config(name: str) -> None:
  global _devices
  if name == "jax_num_cpu_devices":
    _devices = None


config.add_listener(_reset_devices_for_config)
config.add_listener(_track_default_device)
