"""CPU devices, as JAX reports them (``CpuDevice(id=0)``).

These are descriptors only (what a device is called, how many there are);
the IREE devices that run programs on them are the runtime's
(``runtime/iree_device.py``).

Their number is set as in JAX: ``XLA_FLAGS=--xla_force_host_platform_device_count=N``
or ``openjax.config.update("jax_num_cpu_devices", N)`` before first use.
"""
from __future__ import annotations

import os
import re

from openjax._src.config import config


class Device:
  """One device. ``platform`` is ``'cpu'``; ``id`` is unique in the process."""
  __slots__ = ("id", "platform", "device_kind", "process_index", "host_id")

  def __init__(self, id: int, platform: str = "cpu"):
    self.id = id
    self.platform = platform
    self.device_kind = platform
    self.process_index = 0
    self.host_id = 0

  @property
  def client(self):
    return None

  def __repr__(self):
    return f"{self.platform.capitalize()}Device(id={self.id})"

  def __str__(self):
    return f"TFRT_CPU_{self.id}" if self.platform == "cpu" else repr(self)


_devices: list[Device] | None = None


def _requested_count() -> int:
  n = config.read("jax_num_cpu_devices")
  if n is not None and n > 0:
    return n
  m = re.search(r"--xla_force_host_platform_device_count=(\d+)", os.environ.get("XLA_FLAGS", ""))
  return int(m.group(1)) if m else 1


def devices(backend: str | None = None) -> list[Device]:
  """All devices (``[CpuDevice(id=0), ...]``)."""
  global _devices
  if backend not in (None, "cpu"):
    raise RuntimeError(f"Unknown backend {backend!r}: only 'cpu' is available.")
  if _devices is None:
    _devices = [Device(i) for i in range(_requested_count())]
  return list(_devices)


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Device]:
  return devices(backend)


def device_count(backend: str | None = None) -> int:
  return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
  return len(devices(backend))


def default_device() -> Device:
  """The device computations run on: ``jax_default_device`` when set, else the first."""
  chosen = config.read("jax_default_device")
  return chosen if chosen is not None else devices()[0]


def default_backend() -> str:
  return "cpu"


def process_index(backend: str | None = None) -> int:
  return 0


def process_count(backend: str | None = None) -> int:
  return 1


def _reset_devices_for_config(name: str) -> None:
  global _devices
  if name == "jax_num_cpu_devices":
    _devices = None


config.add_listener(_reset_devices_for_config)
