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

  def set_local_state(self, name: str, value: Any) -> Any:
    """Record ``value`` (None: nothing) under ``name``, which is not a flag,
    in this thread's state, so ``state_key`` changes with it (``jax.set_mesh``:
    fast paths keyed on it do not serve calls made under another mesh);
    returns the value it replaced."""
    local = self._local.values
    old = local.pop(name, None)
    if value is not None:
      local[name] = value
    return old

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
    """Flags that change what a traced program means, for cache keys (with
    the values of the contexts ``make_user_context`` made)."""
    return (self.read("jax_enable_x64"), self.read("jax_default_matmul_precision"),
            self.read("jax_numpy_rank_promotion"), self.read("jax_numpy_dtype_promotion"),
            self.read("jax_allow_f16_reductions"),
            *(self.read(name) for name in _USER_CONTEXTS))


config = Config()

# The flags ``make_user_context`` defined (each a jit cache key part).
_USER_CONTEXTS: list[str] = []

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
config.define("jax_threefry_partitionable", True,
              "Use the partitionable threefry key derivation (JAX's default).",
              validator=bool)
config.define("jax_enable_checks", _env_bool("JAX_ENABLE_CHECKS", False),
              "Run check_jaxpr after every trace (slow; for tests).", validator=bool)
config.define("jax_auto_pcast", True,
              "Insert pvary automatically to match varying manual axes of operands in "
              "shard_map bodies (check_vma).", validator=bool)


def enable_x64(new_val: bool = True):
  """Context manager that sets ``jax_enable_x64`` in this thread."""
  return config.override("jax_enable_x64", bool(new_val))


def disable_jit(disable: bool = True):
  """Context manager under which ``jit`` runs functions op by op (eagerly)."""
  return config.override("jax_disable_jit", bool(disable))


def debug_nans(enable: bool = True):
  """Context manager that sets ``jax_debug_nans`` in this thread."""
  return config.override("jax_debug_nans", bool(enable))


# ---- flags with context managers, as in JAX's top-level namespace ----

def _one_of(flag: str, choices: tuple, *, allow_none: bool = False):
  def check(value):
    if value is None and allow_none:
      return None
    if value not in choices:
      raise ValueError(f"{flag}: invalid value {value!r}; expected one of {list(choices)}.")
    return value
  return check


_TRANSFER_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")

config.define("jax_numpy_dtype_promotion",
              os.environ.get("JAX_NUMPY_DTYPE_PROMOTION", "standard"),
              "Implicit dtype promotion in jax.numpy: 'standard' or 'strict'.",
              validator=_one_of("jax_numpy_dtype_promotion", ("standard", "strict")))
config.define("jax_log_compiles", _env_bool("JAX_LOG_COMPILES", False),
              "Log (at WARNING level, logger 'openjax') each time a function is compiled.",
              validator=bool)
config.define("jax_explain_cache_misses", _env_bool("JAX_EXPLAIN_CACHE_MISSES", False),
              "Log why a jitted function was traced again (a tracing-cache miss).",
              validator=bool)
config.define("jax_check_tracer_leaks", _env_bool("JAX_CHECK_TRACER_LEAKS", False),
              "Check for tracers that leak out of a transformation.", validator=bool)
config.define("jax_default_prng_impl", os.environ.get("JAX_DEFAULT_PRNG_IMPL", "threefry2x32"),
              "The PRNG implementation of jax.random keys (openjax has 'threefry2x32').",
              validator=_one_of("jax_default_prng_impl", ("threefry2x32",)))
if "jax_softmax_custom_jvp" not in config._flags:
  config.define("jax_softmax_custom_jvp", False,
                "Use the custom_jvp softmax (JAX's old behaviour) instead of plain autodiff.",
                validator=bool)
for _kind in ("", "_host_to_device", "_device_to_host", "_device_to_device"):
  config.define(f"jax_transfer_guard{_kind}", None if _kind else "allow",
                f"Transfer guard level{(' for ' + _kind[1:].replace('_', ' ')) if _kind else ''}: "
                f"one of {list(_TRANSFER_GUARD_LEVELS)}.",
                validator=_one_of(f"jax_transfer_guard{_kind}", _TRANSFER_GUARD_LEVELS,
                                  allow_none=bool(_kind)))


def _flag_context(name: str, doc: str, convert: Callable[[Any], Any] = lambda v: v):
  def context(new_val: Any):
    return config.override(name, convert(new_val))
  context.__name__ = name[len("jax_"):]
  context.__qualname__ = context.__name__
  context.__doc__ = doc
  return context


default_matmul_precision = _flag_context(
    "jax_default_matmul_precision",
    "Context manager setting the default precision of matmul-like operations "
    "(``'bfloat16'``, ``'tensorfloat32'``, ``'float32'``, ``'highest'``...) in this thread; "
    "dot_general and matmul read it when called with ``precision=None``.")
numpy_rank_promotion = _flag_context(
    "jax_numpy_rank_promotion",
    "Context manager setting jax.numpy rank promotion (``'allow'``, ``'warn'``, ``'raise'``).",
    _one_of("jax_numpy_rank_promotion", ("allow", "warn", "raise")))
numpy_dtype_promotion = _flag_context(
    "jax_numpy_dtype_promotion",
    "Context manager setting jax.numpy dtype promotion (``'standard'`` or ``'strict'``).")
debug_infs = _flag_context(
    "jax_debug_infs",
    "Context manager that raises FloatingPointError when an operation produces an inf.", bool)
enable_checks = _flag_context(
    "jax_enable_checks", "Context manager that type-checks every traced jaxpr.", bool)
auto_pcast = _flag_context(
    "jax_auto_pcast",
    "Context manager: whether operations in a check_vma shard_map body whose operands vary "
    "over different mesh axes get a pvary (True, the default) or raise.", bool)
log_compiles = _flag_context(
    "jax_log_compiles", "Context manager that logs every compilation (logger 'openjax').", bool)
explain_cache_misses = _flag_context(
    "jax_explain_cache_misses",
    "Context manager that logs why a jitted function is traced again.", bool)
check_tracer_leaks = _flag_context(
    "jax_check_tracer_leaks", "Context manager that checks for leaked tracers.", bool)
threefry_partitionable = _flag_context(
    "jax_threefry_partitionable",
    "Context manager choosing the partitionable threefry key derivation.", bool)
softmax_custom_jvp = _flag_context(
    "jax_softmax_custom_jvp",
    "Context manager choosing the custom_jvp softmax derivative.", bool)
default_prng_impl = _flag_context(
    "jax_default_prng_impl", "Context manager choosing the default PRNG implementation.")
default_device = _flag_context(
    "jax_default_device",
    "Context manager choosing the device that jitted and eager computations run on "
    "(a Device, or None for the first device).")
transfer_guard_host_to_device = _flag_context(
    "jax_transfer_guard_host_to_device",
    "Context manager setting the transfer guard level for host-to-device transfers.")
transfer_guard_device_to_host = _flag_context(
    "jax_transfer_guard_device_to_host",
    "Context manager setting the transfer guard level for device-to-host transfers.")
transfer_guard_device_to_device = _flag_context(
    "jax_transfer_guard_device_to_device",
    "Context manager setting the transfer guard level for device-to-device transfers.")


def checking_leaks():
  """Context manager that turns on ``jax_check_tracer_leaks`` in this thread."""
  return check_tracer_leaks(True)


@contextlib.contextmanager
def transfer_guard(new_val: str):
  """Context manager setting the transfer guard level of all three transfer
  kinds (host-to-device, device-to-host, device-to-device) in this thread."""
  with contextlib.ExitStack() as stack:
    stack.enter_context(config.override("jax_transfer_guard", new_val))
    for kind in ("host_to_device", "device_to_host", "device_to_device"):
      stack.enter_context(config.override(f"jax_transfer_guard_{kind}", new_val))
    yield


def transfer_guard_level(kind: str) -> str:
  """The effective transfer guard level for ``kind`` ('host_to_device', ...)."""
  level = config.read(f"jax_transfer_guard_{kind}")
  return config.read("jax_transfer_guard") if level is None else level


# ---- flags JAX 0.10.2 has at the top level (``jax.no_tracing``, ...) ----
config.define("jax_allow_f16_reductions", True,
              "If False, reduce_sum on float16 or bfloat16 operands raises.", validator=bool)
config.define("jax_no_tracing", False,
              "Disallow tracing for jit: a jitted function traced again raises RuntimeError.",
              validator=bool)
config.define("jax_no_execution", False,
              "Disallow executions: a jitted call or eager operation raises RuntimeError.",
              validator=bool)
config.define("jax_debug_key_reuse", False,
              "Key reuse checking of typed PRNG keys (JAX's experimental checker; openjax "
              "keeps the flag but does not track key use).", validator=bool)
config.define("jax_enable_custom_prng", False,
              "JAX's upgrade flag for custom PRNG implementations; openjax's jax.random always "
              "accepts typed keys, so the flag changes nothing.", validator=bool)
config.define("jax_legacy_prng_key", "allow",
              "What jax.random does with raw uint32 key arrays: 'allow', 'warn' or 'error'.",
              validator=_one_of("jax_legacy_prng_key", ("allow", "warn", "error")))
config.define("jax_array_garbage_collection_guard", None,
              "What happens when an Array is freed by the garbage collector rather than by "
              "reference counting: 'allow', 'log' or 'fatal' (openjax keeps the flag; its "
              "Arrays hold no reference cycles to detect).",
              validator=_one_of("jax_array_garbage_collection_guard", ("allow", "log", "fatal"),
                                allow_none=True))
config.define("jax_thread_guard", False,
              "Raise when a multi-process operation is called from another thread than the one "
              "that set the guard (openjax keeps the flag).", validator=bool)
config.define("jax2tf_associative_scan_reductions", False,
              "jax2tf's choice of lowering for cumulative reductions (openjax has no jax2tf; "
              "its cumulative reductions always use the associative scan).", validator=bool)
config.define("jax_remove_size_one_mesh_axis_from_type", False,
              "Remove mesh axes of size 1 from array types' shardings.", validator=bool)

allow_f16_reductions = _flag_context(
    "jax_allow_f16_reductions",
    "Context manager for ``jax_allow_f16_reductions``: if False, ``reduce_sum`` on float16 "
    "or bfloat16 operands raises ValueError.", bool)
no_tracing = _flag_context(
    "jax_no_tracing", "Context manager for ``jax_no_tracing``: tracing a jitted function raises.",
    bool)
no_execution = _flag_context(
    "jax_no_execution",
    "Context manager for ``jax_no_execution``: executing a computation raises.", bool)
debug_key_reuse = _flag_context(
    "jax_debug_key_reuse", "Context manager for ``jax_debug_key_reuse``.", bool)
enable_custom_prng = _flag_context(
    "jax_enable_custom_prng", "Context manager for ``jax_enable_custom_prng``.", bool)
legacy_prng_key = _flag_context(
    "jax_legacy_prng_key",
    "Context manager for ``jax_legacy_prng_key`` ('allow', 'warn' or 'error'): what "
    "jax.random does with raw uint32 keys.")
array_garbage_collection_guard = _flag_context(
    "jax_array_garbage_collection_guard",
    "Context manager for ``jax_array_garbage_collection_guard``.")
thread_guard = _flag_context("jax_thread_guard", "Context manager for ``jax_thread_guard``.",
                             bool)
jax2tf_associative_scan_reductions = _flag_context(
    "jax2tf_associative_scan_reductions",
    "Context manager for ``jax2tf_associative_scan_reductions``.", bool)
remove_size_one_mesh_axis_from_type = _flag_context(
    "jax_remove_size_one_mesh_axis_from_type",
    "Context manager for ``jax_remove_size_one_mesh_axis_from_type``.", bool)
# ``_flag_context`` names a context after its flag less ``jax_``; this one has no prefix.
jax2tf_associative_scan_reductions.__name__ = "jax2tf_associative_scan_reductions"
jax2tf_associative_scan_reductions.__qualname__ = "jax2tf_associative_scan_reductions"


class UserContext:
  """A jit-cache-sensitive context (``jax.make_user_context``): ``ctx(value)``
  is a context manager setting it in this thread, ``ctx.value`` reads it.
  jitted functions are traced again for each value they are called under."""

  def __init__(self, name: str):
    self._name = name

  @property
  def value(self):
    return config.read(self._name)

  def get_global(self):
    return config._values[self._name]

  def set_global(self, new_value) -> None:
    config.update(self._name, new_value)

  def __call__(self, new_value):
    return config.override(self._name, new_value)

  def __repr__(self):
    return f"UserContext(value={self.value!r})"


def make_user_context(default_value=None) -> UserContext:
  """Create a context whose value is part of every jit cache key: when it
  changes, jitted functions are traced (and compiled) again. Not thread-safe
  to create (as in JAX); using one is."""
  name = f"jax_user_context_{len(_USER_CONTEXTS)}"
  config.define(name, default_value, "A context made by jax.make_user_context.")
  _USER_CONTEXTS.append(name)
  return UserContext(name)
