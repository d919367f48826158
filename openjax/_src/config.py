"""Global configuration flags, read like JAX's ``jax.config``.

Flags are set with ``openjax.config.update("jax_enable_x64", True)``, read as
``openjax.config.jax_enable_x64``, and some are scoped with context managers.
Environment variables (``JAX_ENABLE_X64=1``) give the initial values.
"""
from __future__ import annotations

import contextlib
import os
import threading
from typing import Any, Callable

__all__ = ["config", "Config"]


def _env_bool(name: str, default: bool) -> bool:
  val = os.environ.get(name)
  if val is None:
    return default
  val = val.strip().lower()
  if val in ("1", "true", "t", "yes", "y", "on"):
    return True
  if val in ("0", "false", "f", "no", "n", "off", ""):
    return False
  raise ValueError(f"invalid truth value {val!r} for environment variable {name}")


class _Flag:
  __slots__ = ("name", "default", "help", "validator", "on_change")

  def __init__(self, name, default, help, validator=None, on_change=None):
    self.name = name
    self.default = default
    self.help = help
    self.validator = validator
    self.on_change = on_change


class _ThreadLocalOverrides(threading.local):
  def __init__(self):
    self.values: dict[str, Any] = {}


class Config:
  """The flag registry. ``config.update(name, value)`` sets a flag globally;
  ``config.<name>`` reads it (a thread-local override from a context manager
  wins over the global value)."""

  def __init__(self):
    object.__setattr__(self, "_flags", {})
    object.__setattr__(self, "_values", {})
    object.__setattr__(self, "_local", _ThreadLocalOverrides())
    object.__setattr__(self, "_listeners", [])
    object.__setattr__(self, "_generation", 0)

  def define(self, name: str, default: Any, help: str = "", *,
             validator: Callable[[Any], Any] | None = None,
             on_change: Callable[[Any], None] | None = None) -> None:
    self._flags[name] = _Flag(name, default, help, validator, on_change)
    self._values[name] = default

  def _check(self, name):
    if name not in self._flags:
      raise AttributeError(f"Unrecognized config option: {name}")

  def update(self, name: str, value: Any) -> None:
    """Set flag ``name`` to ``value`` for the whole process."""
    self._check(name)
    flag = self._flags[name]
    if flag.validator is not None:
      value = flag.validator(value)
    self._values[name] = value
    object.__setattr__(self, "_generation", self._generation + 1)
    if flag.on_change is not None:
      flag.on_change(value)
    for listener in self._listeners:
      listener(name)

  def read(self, name: str) -> Any:
    local = self._local.values
    if name in local:
      return local[name]
    return self._values[name]

  def __getattr__(self, name: str) -> Any:
    flags = object.__getattribute__(self, "_flags")
    if name in flags:
      return self.read(name)
    raise AttributeError(f"Unrecognized config option: {name}")

  def __setattr__(self, name, value):
    raise AttributeError(
        f"config.{name} cannot be assigned; use config.update({name!r}, value)")

  @contextlib.contextmanager
  def override(self, name: str, value: Any):
    """Set ``name`` to ``value`` in this thread for the duration of a block."""
    self._check(name)
    flag = self._flags[name]
    if flag.validator is not None:
      value = flag.validator(value)
    local = self._local.values
    missing = object()
    old = local.get(name, missing)
    local[name] = value
    try:
      for listener in self._listeners:
        listener(name)
      yield
    finally:
      if old is missing:
        del local[name]
      else:
        local[name] = old
      for listener in self._listeners:
        listener(name)

  def add_listener(self, fn: Callable[[str], None]) -> None:
    """Call ``fn(name)`` after any flag changes (used to invalidate caches)."""
    self._listeners.append(fn)

  def state_key(self):
    """A cheap hashable value that changes whenever any flag's value in this
    thread may have changed (for fast-path caches keyed on all flags)."""
    local = self._local.values
    if not local:
      return self._generation
    return (self._generation, tuple(local.items()))

  def values_snapshot(self) -> tuple:
    """Flags that change what a traced program means, for cache keys."""
    return (self.read("jax_enable_x64"), self.read("jax_default_matmul_precision"),
            self.read("jax_numpy_rank_promotion"))


config = Config()

config.define("jax_enable_x64", _env_bool("JAX_ENABLE_X64", False),
              "Enable 64-bit types (float64, int64, complex128) by default.",
              validator=bool)
config.define("jax_disable_jit", _env_bool("JAX_DISABLE_JIT", False),
              "Run jitted functions op by op, for debugging.", validator=bool)
config.define("jax_debug_nans", _env_bool("JAX_DEBUG_NANS", False),
              "Raise FloatingPointError when an operation produces a NaN.",
              validator=bool)
config.define("jax_debug_infs", _env_bool("JAX_DEBUG_INFS", False),
              "Raise FloatingPointError when an operation produces an inf.",
              validator=bool)
config.define("jax_numpy_rank_promotion",
              os.environ.get("JAX_NUMPY_RANK_PROMOTION", "allow"),
              "Rank promotion in jax.numpy: 'allow', 'warn' or 'raise'.")
config.define("jax_default_matmul_precision", None,
              "Default precision for matmul-like operations.")
config.define("jax_platforms", os.environ.get("JAX_PLATFORMS", None),
              "Comma-separated platforms to use (e.g. 'cpu').")
config.define("jax_num_cpu_devices", int(os.environ.get("JAX_NUM_CPU_DEVICES", "-1")),
              "Number of CPU devices; -1 reads XLA_FLAGS or defaults to 1.",
              validator=int)
config.define("jax_threefry_partitionable", True,
              "Use the partitionable threefry key derivation (JAX's default).",
              validator=bool)
config.define("jax_enable_checks", _env_bool("JAX_ENABLE_CHECKS", False),
              "Run check_jaxpr after every trace (slow; for tests).", validator=bool)


def enable_x64(new_val: bool = True):
  """Context manager that sets ``jax_enable_x64`` in this thread."""
  return config.override("jax_enable_x64", bool(new_val))


def disable_jit(disable: bool = True):
  """Context manager under which ``jit`` runs functions op by op (eagerly)."""
  return config.override("jax_disable_jit", bool(disable))


def debug_nans(enable: bool = True):
  """Context manager that sets ``jax_debug_nans`` in this thread."""
  return config.override("jax_debug_nans", bool(enable))
