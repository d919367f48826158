"""Allocations larger than the machine's memory fail as in JAX: with
``JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory allocating N bytes ...")``,
whichever executor (eager kernels, the jaxpr interpreter, IREE) was asked for
them.

Eager kernels that hand out views (a broadcast is a zero-stride view of its
operand) would otherwise promise an array they never allocate, and the first
operation that reads it (a ``.sum()`` over 4e10 elements) runs for minutes;
JAX allocates at creation and fails there. ``check_allocation`` makes those
kernels fail at creation too; NumPy's own ``MemoryError`` (an elementwise
result too large) becomes the same error through ``out_of_memory_error``.
"""
from __future__ import annotations

import math
import os
import sys
import threading

import numpy as np

from openjax._src import dtypes
from openjax._src.errors import JaxRuntimeError

# Requests below this many bytes are never checked (reading /proc/meminfo
# costs ~20 us): anything smaller fits any machine openjax runs on.
CHECK_MIN_BYTES = 1 << 28


def available_bytes() -> int:
  """Memory the kernel can give this process now: ``MemAvailable`` (free
  plus reclaimable caches) plus free swap, else the free physical pages."""
  try:
    fields = {}
    with open("/proc/meminfo") as f:
      for line in f:
        name, _, rest = line.partition(":")
        fields[name] = int(rest.split()[0]) * 1024
    return fields["MemAvailable"] + fields.get("SwapFree", 0)
  except (OSError, KeyError, ValueError, IndexError):
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _human(nbytes: float) -> str:
  for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
    if nbytes < 1024 or unit == "PiB":
      return f"{nbytes:.0f} {unit}" if unit == "bytes" else f"{nbytes:.1f} {unit}"
    nbytes /= 1024
  raise AssertionError("unreachable")


def out_of_memory_error(nbytes: int | None, what: str) -> JaxRuntimeError:
  """JAX's error for an allocation of ``nbytes`` that cannot be made;
  ``what`` names the operation and the array (``ones: f32[1000000]``)."""
  size = "" if nbytes is None else f" {nbytes} bytes"
  need = "" if nbytes is None else f" needs {_human(nbytes)},"
  return JaxRuntimeError(
      f"RESOURCE_EXHAUSTED: Out of memory allocating{size}.\n{what}{need} "
      f"{_human(available_bytes())} of memory is available. Create a smaller array, or "
      "compute the result inside jit without materializing it (a reduction of a broadcast "
      "or an iota never allocates it).")


def check_allocation(name: str, shape: tuple, dtype) -> None:
  """Raise ``out_of_memory_error`` when an array of ``shape`` and ``dtype``
  does not fit in the memory available now."""
  nbytes = math.prod(shape) * np.dtype(dtype).itemsize
  if nbytes >= CHECK_MIN_BYTES and nbytes > available_bytes():
    raise out_of_memory_error(nbytes, f"{name}: {_type_str(shape, dtype)}")


def translate_memory_error(err: MemoryError, name: str) -> JaxRuntimeError:
  """NumPy's ``MemoryError`` (``_ArrayMemoryError`` knows the request's
  shape and dtype) as JAX's error."""
  shape, dtype = getattr(err, "shape", None), getattr(err, "dtype", None)
  if shape is not None and dtype is not None:
    return out_of_memory_error(math.prod(shape) * np.dtype(dtype).itemsize,
                               f"{name}: {_type_str(tuple(shape), dtype)}")
  return out_of_memory_error(None, f"{name}: {err}")


def _type_str(shape: tuple, dtype) -> str:
  # ShapedArray.str_short's spelling, without building an aval.
  return f"{dtypes.short_dtype_name(np.dtype(dtype))}[{','.join(str(d) for d in shape)}]"


#: Bytes of alignment IREE needs of host memory it imports in place.
ALIGNMENT = 64
#: A lean ufunc kernel's result this large (bytes) is written into memory on
#: the runtime's import alignment, so a compiled call reads it in place;
#: NumPy's own large allocations start 16 bytes past a page and were copied
#: on every import (an eager SGD update of 2.7 MB of MLP parameters fed to
#: the jitted gradient: 7.67 -> 6.93 ms a step).
ALIGNED_RESULT_MIN_BYTES = 1 << 16


def aligned_empty(shape: tuple, dtype) -> np.ndarray:
  """An uninitialised array whose data starts on an ``ALIGNMENT`` boundary,
  so the runtime imports it into any device without a copy."""
  dtype = np.dtype(dtype)
  nbytes = math.prod(shape) * dtype.itemsize
  kept = nbytes >= RECYCLE_MIN_BYTES
  raw = _recycled(nbytes + ALIGNMENT) if kept else None
  if raw is None:
    try:
      raw = np.empty(nbytes + ALIGNMENT, np.uint8)
    except MemoryError:
      if not release_recycled():
        raise
      raw = np.empty(nbytes + ALIGNMENT, np.uint8)   # with the kept buffers freed
    if kept:
      _keep(raw)
  off = (-raw.ctypes.data) % ALIGNMENT
  return raw[off:off + nbytes].view(dtype).reshape(shape)


#: Large results are written into memory of an earlier result of the same
#: size that nothing holds any more. A fresh allocation this large is fresh
#: pages from the kernel (glibc maps them and unmaps them when freed), each
#: page faulted in on first write: ~5 us a 4 KiB page on this project's VMs,
#: 16 ms of a 13 MB result, where the arithmetic writing it costs ~2 ms.
RECYCLE_MIN_BYTES = 1 << 22
#: At most this many buffers, of at most this many bytes in all, are kept
#: for reuse (the most recent; a buffer something still holds stays with it).
RECYCLE_MAX_BUFFERS = 8
RECYCLE_MAX_BYTES = 1 << 28
_recycle: list = []
_recycle_lock = threading.Lock()


def _recycled(nbytes: int) -> np.ndarray | None:
  """A kept buffer of ``nbytes`` that nothing else references, or None."""
  with _recycle_lock:
    for i in range(len(_recycle)):
      raw = _recycle[i]
      # references: the list, ``raw`` and getrefcount's argument. Arrays made
      # from the buffer (views, their IREE import holders) reference it too.
      if raw.nbytes == nbytes and sys.getrefcount(raw) == 3:
        del _recycle[i]
        _recycle.append(raw)
        return raw
  return None


def release_recycled() -> int:
  """Drop the buffers kept for reuse (``jax.clear_caches``, and before an
  allocation fails for want of memory); returns how many were kept."""
  with _recycle_lock:
    n = len(_recycle)
    _recycle.clear()
  return n


def _keep(raw: np.ndarray) -> None:
  with _recycle_lock:
    _recycle.append(raw)
    total = sum(r.nbytes for r in _recycle)
    while len(_recycle) > RECYCLE_MAX_BUFFERS or total > RECYCLE_MAX_BYTES:
      total -= _recycle.pop(0).nbytes


class _AlignedResult:
  """A ufunc kernel writing its result into aligned memory."""
  __slots__ = ("ufunc", "shape", "dtype")

  def __init__(self, ufunc, shape, dtype):
    self.ufunc, self.shape, self.dtype = ufunc, shape, dtype

  def __call__(self, *vals):
    try:
      out = aligned_empty(self.shape, self.dtype)
    except MemoryError:   # the ufunc's own allocation says the result's size
      return self.ufunc(*vals)
    return self.ufunc(*vals, out=out)


def aligned_result(kernel, shape: tuple, dtype):
  """``kernel``, or for a one-result ufunc with a result of at least
  ``ALIGNED_RESULT_MIN_BYTES``, the same ufunc writing into aligned memory."""
  if (type(kernel) is np.ufunc and kernel.nout == 1
      and math.prod(shape) * dtype.itemsize >= ALIGNED_RESULT_MIN_BYTES):
    return _AlignedResult(kernel, shape, dtype)
  return kernel


__all__ = ["ALIGNED_RESULT_MIN_BYTES", "ALIGNMENT", "CHECK_MIN_BYTES", "aligned_empty",
           "aligned_result", "available_bytes", "release_recycled",
           "check_allocation", "out_of_memory_error", "translate_memory_error"]
