"""Small top-level helpers of the ``jax`` namespace: naming (``named_call``,
``named_scope``), compile-time evaluation, ``typeof``, environment and live
array reports, and the process/host queries of a single-process runtime."""
from __future__ import annotations

import contextlib
import functools
import gc
import importlib.metadata
import platform
import sys
import warnings
from typing import Any, Callable

import numpy as np

from openjax._src import dtypes, tree_util
from openjax._src.core import (Array, ShapedArray, Trace, Tracer, eval_trace, get_aval,
                               make_array, set_current_trace, trace_state)
from openjax._src.core.devices import devices, process_count, process_index
from openjax._src.core.mesh import empty_abstract_mesh, get_abstract_mesh
from openjax._src.core.sharding import NamedSharding, PartitionSpec, is_meshless_argument
from openjax._src.runtime.transfer import device_put

__all__ = ["named_call", "named_scope", "ensure_compile_time_eval", "typeof",
           "print_environment_info", "live_arrays", "host_count", "host_id", "host_ids",
           "process_indices", "copy_to_host_async", "from_dlpack", "is_supported_dtype"]


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
  """``fun`` with its computations named ``name`` (default: ``fun.__name__``)
  in the name stack of traced programs; values are unchanged."""
  label = name if name is not None else getattr(fun, "__name__", "named_call")

  @functools.wraps(fun)
  def named(*args, **kwargs):
    with named_scope(label):
      return fun(*args, **kwargs)
  return named


class _NameStack(list):
  pass


_name_stack = _NameStack()


@contextlib.contextmanager
def named_scope(name: str):
  """Context manager that adds ``name`` to the name stack of the operations
  traced inside it (a label for profiles and lowered programs)."""
  if not isinstance(name, str):
    raise TypeError(f"named_scope name argument must be a string, got {type(name).__name__} "
                    f"{name!r}; pass the scope's name as a str.")
  _name_stack.append(name)
  try:
    yield
  finally:
    _name_stack.pop()


def current_name_stack() -> str:
  """The active ``named_scope`` names joined by ``/`` (``''`` outside any)."""
  return "/".join(_name_stack)


class _CompileTimeEvalTrace(Trace):
  """Runs primitives whose operands are all concrete eagerly; operations on
  tracers go to the trace that was current when the block began."""

  def __init__(self, parent: Trace):
    super().__init__()
    self.parent = parent

  def process_primitive(self, primitive, args, params) -> list:
    for x in args:
      if isinstance(x, Tracer):
        with set_current_trace(self.parent):
          return self.parent.process_primitive(primitive, args, params)
    with set_current_trace(eval_trace):
      return eval_trace.process_primitive(primitive, args, params)

  def __getattr__(self, name):
    return getattr(self.parent, name)


@contextlib.contextmanager
def ensure_compile_time_eval():
  """Context manager under which operations on concrete values run eagerly,
  even while a function is being traced by ``jit``, ``grad`` or ``vmap``:
  their results are concrete Arrays (usable in Python control flow), not
  tracers. Operations with a traced operand are traced as usual."""
  parent = trace_state.trace
  if parent is eval_trace:
    yield
    return
  with set_current_trace(_CompileTimeEvalTrace(parent)):
    yield


def typeof(x: Any):
  """The abstract value (type) of ``x``: ``ShapedArray`` printed as
  ``float32[3,4]`` (``~float32[]`` for weakly typed values). Library types
  that are not arrays of NumPy dtypes (typed PRNG keys) give theirs with a
  ``_typeof`` method."""
  own = getattr(type(x), "_typeof", None)
  if own is not None:
    return own(x)
  aval = get_aval(x)
  if type(aval) is not ShapedArray or aval.sharding is not None:
    return aval
  # Unsplit: JAX's types still name a mesh, the one in context where a traced
  # value is made (a shard_map body's, its manual axes Manual), a sharded
  # Array's own, else the empty one: ``P(None, None)`` over it.
  if isinstance(x, Tracer):
    # (a jit argument made off the mesh keeps the empty one, as in JAX)
    mesh = empty_abstract_mesh if is_meshless_argument(x) else get_abstract_mesh()
  elif type(x) is Array and isinstance(x.sharding, NamedSharding):
    mesh = x.sharding.mesh.abstract_mesh
  else:
    mesh = empty_abstract_mesh
  return aval.update(sharding=NamedSharding(mesh, PartitionSpec(*[None] * aval.ndim)))


def _versions() -> list[tuple[str, str]]:
  rows = []
  for dist in ("openjax", "numpy", "ml_dtypes", "iree-base-compiler", "iree-base-runtime"):
    try:
      rows.append((dist, importlib.metadata.version(dist)))
    except importlib.metadata.PackageNotFoundError:
      rows.append((dist, "not installed"))
  rows.append(("python", sys.version.replace("\n", " ")))
  return rows


def print_environment_info(return_string: bool = False) -> str | None:
  """Print (or return, with ``return_string=True``) the versions of openjax and
  its dependencies, the devices and the platform, for bug reports."""
  devs = devices()
  lines = [f"{name}: {version}" for name, version in _versions()]
  lines.append(f"device info: {devs[0].device_kind}-{len(devs)}, {len(devs)} local devices")
  lines.append(f"process_count: {process_count()}")
  lines.append(f"platform: {platform.uname()}")
  info = "\n".join(lines) + "\n"
  if return_string:
    return info
  print(info)
  return None


def live_arrays(platform: str | None = None) -> list[Array]:
  """All Arrays that are alive (referenced and not deleted) in this process."""
  if platform not in (None, "cpu"):
    raise RuntimeError(f"live_arrays: unknown platform {platform!r}: only 'cpu' is available.")
  return [o for o in gc.get_objects() if type(o) is Array and not o.is_deleted()]


def _renamed(old: str, new: str) -> None:
  warnings.warn(f"jax.{old} has been renamed to jax.{new}; the old name will be removed. "
                f"Call jax.{new} instead.", UserWarning, stacklevel=3)


def host_count(backend: str | None = None) -> int:
  """The number of hosts (processes): ``process_count``'s old name."""
  _renamed("host_count", "process_count")
  return process_count(backend)


def host_id(backend: str | None = None) -> int:
  """This host's index: ``process_index``'s old name."""
  _renamed("host_id", "process_index")
  return process_index(backend)


def process_indices(backend: str | None = None) -> list[int]:
  """The indices of all processes, ``[0, ..., process_count() - 1]``."""
  return sorted({d.process_index for d in devices(backend)})


def host_ids(backend: str | None = None) -> list[int]:
  """``process_indices``'s old name."""
  _renamed("host_ids", "process_indices")
  return process_indices(backend)


def copy_to_host_async(x: Any) -> Any:
  """Start copying every Array leaf of the pytree ``x`` to the host without
  waiting; returns ``x``. A later read of the values then does not wait."""
  for leaf in tree_util.tree_leaves(x):
    if isinstance(leaf, Array):
      leaf.copy_to_host_async()
  return x


_DLPACK_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128, dtypes.bfloat16))


def is_supported_dtype(dtype) -> bool:
  """Whether arrays of ``dtype`` can be exchanged through DLPack."""
  return np.dtype(dtype) in _DLPACK_DTYPES


def from_dlpack(external_array, device=None, copy: bool | None = None) -> Array:
  """An Array holding the data of ``external_array``, any object with the
  ``__dlpack__`` and ``__dlpack_device__`` methods (a NumPy array, a CPU
  PyTorch tensor, an openjax Array). The data is copied unless ``copy=False``
  (then it is shared when the dtype needs no conversion); with 64-bit types
  off, 64-bit data is converted to 32 bits as ``jnp.asarray`` does."""
  if not (hasattr(external_array, "__dlpack__") and hasattr(external_array, "__dlpack_device__")):
    raise TypeError(f"from_dlpack: the array passed must have __dlpack__ and __dlpack_device__ "
                    f"methods, got {type(external_array).__name__}; pass a NumPy array, a CPU "
                    f"tensor or another DLPack exporter.")
  host = np.from_dlpack(external_array)
  if not is_supported_dtype(host.dtype):
    raise TypeError(f"from_dlpack: dtype {host.dtype} cannot be exchanged through DLPack.")
  value = host.astype(dtypes.canonicalize_dtype(host.dtype), copy=copy is not False)
  return device_put(make_array(value), device)
