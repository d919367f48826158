"""IREE devices: the execution stream of each CPU device (an in-order
timeline on one process-wide ``local-task`` HAL device), and moving NumPy
data into IREE buffers.

Facts this module is built on (``shared/iree/NOTES.md`` and our probes):

* Every CPU device is a timeline semaphore of its own on ONE shared
  ``local-task`` HAL device, whose task executor has one worker per core.
  Measured (IREE 3.13, 2 cores): calls on two semaphores of one HAL device
  run independently (a call on device 1 finishes while device 0's stream is
  held), and both streams' dispatches share the workers, so the worker
  count stays the core count for any number of devices. One HAL device per
  CPU device would add a proactor thread per device (20 devices: 22
  threads vs 5) and gain nothing: HAL devices of one driver share its
  executor anyway. Buffers of one HAL device are valid on every stream, so
  an array moves between devices without a copy; a call that reads a buffer
  another stream is still writing also waits on that stream's fence.
* A HAL device must outlive every buffer, mapping and context made from it;
  devices are therefore created once and never destroyed (they are kept in a
  list whose reference is leaked at exit, so interpreter teardown cannot free
  a device before the arrays that point into it).
* ``import_host_allocation`` wraps NumPy memory without copying, but the
  memory must be 64-byte aligned (unaligned imports crash inside the call),
  and it is kept alive only by the Python ``HalBuffer`` object, not by the
  buffer IREE retains, so we keep the NumPy memory alive ourselves until the
  call using it has finished (and for as long as a result aliases it).
* With the async-external ABI a call returns before its work is done; calls
  on one device wait on the previous timepoint of the device's timeline
  semaphore and signal the next, so they run in order. A failed call fails
  the semaphore (every later wait raises); the next dispatch then starts a
  fresh timeline.
* Waking a ``local-task`` worker costs tens of microseconds, far more than a
  small computation. Each device therefore also has a ``local-sync`` HAL
  device, which runs a call inline in the calling thread (~5 us for a scalar
  function vs ~40 us through the task queue). Both allocate host memory, so
  buffers pass between them freely. Small executables use it, but only when
  the task timeline is idle: then every input is ready and no queued call
  still reads a buffer that the inline call might donate.
"""
from __future__ import annotations

import atexit
import collections
import ctypes
import functools
import os
import threading

import numpy as np

import iree.runtime as rt
from iree._runtime_libs import _runtime as _native

from openjax._src import dtypes
from openjax._src.core.memory import ALIGNMENT, aligned_empty
from openjax._src.errors import JaxRuntimeError

_HOST_MEMORY = int(rt.MemoryType.HOST_LOCAL | rt.MemoryType.DEVICE_VISIBLE)
_DEVICE_MEMORY = int(rt.MemoryType.DEVICE_LOCAL)
_USAGE = int(rt.BufferUsage.DEFAULT | rt.BufferUsage.MAPPING)

_E = rt.HalElementType
_ELEMENT_TYPES = {
    np.dtype(np.bool_): _E.BOOL_8,
    np.dtype(np.int8): _E.SINT_8, np.dtype(np.int16): _E.SINT_16,
    np.dtype(np.int32): _E.SINT_32, np.dtype(np.int64): _E.SINT_64,
    np.dtype(np.uint8): _E.UINT_8, np.dtype(np.uint16): _E.UINT_16,
    np.dtype(np.uint32): _E.UINT_32, np.dtype(np.uint64): _E.UINT_64,
    np.dtype(np.float16): _E.FLOAT_16, dtypes.bfloat16: _E.BFLOAT_16,
    np.dtype(np.float32): _E.FLOAT_32, np.dtype(np.float64): _E.FLOAT_64,
    np.dtype(np.complex64): _E.COMPLEX_64, np.dtype(np.complex128): _E.COMPLEX_128,
    dtypes.float8_e4m3fn: _E.FLOAT_8_E4M3_FN, dtypes.float8_e4m3fnuz: _E.FLOAT_8_E4M3_FNUZ,
    dtypes.float8_e5m2: _E.FLOAT_8_E5M2, dtypes.float8_e5m2fnuz: _E.FLOAT_8_E5M2_FNUZ,
    dtypes.float8_e8m0fnu: _E.FLOAT_8_E8M0_FNU,
}


def hal_element_type(dtype: np.dtype):
  """The IREE buffer element type of a dtype, or a clear error."""
  et = _ELEMENT_TYPES.get(dtype)
  if et is None:
    raise NotImplementedError(
        f"jit: arrays of dtype {np.dtype(dtype).name} cannot be passed to or returned "
        "from compiled functions yet; convert them (e.g. to int8/float32) around the "
        "jitted call, or run with the interpreter executor")
  return et


# Objects that must survive interpreter teardown (see the module docstring).
_immortal: list = []
ctypes.pythonapi.Py_IncRef(ctypes.py_object(_immortal))
# They are kept on purpose: without this the bindings list them as leaks on
# stderr at exit.
_native.disable_leak_checker()

# A fence with no timepoints: waiting on it returns at once, signalling it
# does nothing (the wait and signal fences of inline calls).
_EMPTY_FENCE = rt.HalFence(0)
_immortal.append(_EMPTY_FENCE)

_instance_lock = threading.RLock()
_instance: rt.VmInstance | None = None
_devices: dict[int, "IreeDevice"] = {}


def vm_instance() -> rt.VmInstance:
  global _instance
  with _instance_lock:
    if _instance is None:
      _instance = rt.VmInstance()
      _immortal.append(_instance)
    return _instance


class ExecutionError(JaxRuntimeError):
  """A compiled computation failed while running (raised where its result is
  read or waited for)."""


def _task_hal():
  """(HAL device, HAL module) of the ``local-task`` device every CPU device's
  stream runs on, made on first use (so ``import openjax`` starts no
  threads). Its executor gets ``OPENJAX_CPU_THREADS`` workers, or one per
  physical core this process may run on, unpinned."""
  global _task
  hit = _task
  if hit is None:
    with _instance_lock:
      if _task is None:
        atexit.register(_drain_at_exit)
        workers = host_cores()
        # An explicit group count makes IREE leave its workers unpinned (its
        # default pins worker i to core i). A pinned worker waits whenever
        # another process holds its core, and a call waits for its slowest
        # worker: MLP train step on the loaded 2-core machine, 4 alternating
        # process pairs, median wall 24-32 -> 17-31 ms, p25 19-26 -> 14-22 ms.
        # XLA's threads float too.
        rt.flags.parse_flags(f"--task_topology_group_count={workers}")
        cache = buffer_cache_bytes()
        allocators = [f"caching:*={cache};{cache};{_CACHED_BUFFERS}"] if cache else None
        hal = rt.get_driver("local-task").create_default_device(allocators=allocators)
        module = rt.create_hal_module(vm_instance(), hal)
        _immortal.extend((hal, module))
        _task = (hal, module)
      hit = _task
  return hit


def _physical_cores(cpus) -> int:
  """How many physical cores the logical CPUs ``cpus`` belong to (hyperthread
  siblings count once, as IREE's own topology counts them); ``len(cpus)``
  where Linux's topology files are missing."""
  cores = set()
  for cpu in cpus:
    try:
      with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list") as f:
        cores.add(f.read().strip())
    except OSError:
      return len(cpus)
  return len(cores) or len(cpus)


def _sync_hal():
  """(HAL device, HAL module) of the ``local-sync`` device that runs small
  calls inline in the calling thread (shared by every CPU device)."""
  global _sync
  hit = _sync
  if hit is None:
    with _instance_lock:
      if _sync is None:
        hal = rt.get_driver("local-sync").create_default_device()
        module = rt.create_hal_module(vm_instance(), hal)
        _immortal.extend((hal, module))
        _sync = (hal, module)
      hit = _sync
  return hit


_task = None
_sync = None


class IreeDevice:
  """The execution stream of one CPU device: a timeline semaphore on the
  shared ``local-task`` HAL device, and the list of what its queued calls
  must keep alive."""

  def __init__(self, device):
    self.device = device            # the openjax Device
    self.hal, self.hal_module = _task_hal()
    self.allocator = self.hal.allocator
    self.lock = threading.Lock()
    self.sem = self.hal.create_semaphore(0)
    self.timepoint = 0
    self._last_signal = None
    # (timepoint, objects to keep alive until the semaphore reaches it)
    self._inflight: collections.deque = collections.deque()
    # A VM context is not safe to enter from two threads: this device's
    # inline contexts are entered under it.
    self._inline_lock = threading.Lock()
    # Signal fences of detached calls (``invoke_detached``) not yet seen done.
    self._detached: collections.deque = collections.deque()

  def __repr__(self):
    return f"IreeDevice({self.device!r})"

  # ---- dispatch ----
  def invoke(self, context, function, args: rt.VmVariantList, n_in: int, n_out: int,
             keepalive, waits=None):
    """Run ``function`` after every earlier call on this device (and after
    the fences in ``waits``: inputs another device's stream still writes);
    returns (results list, signal fence). ``args`` holds the ``n_in``
    inputs; the wait and signal fences are appended here. ``keepalive``
    lives until the call has finished."""
    with self.lock:
      for attempt in (0, 1):
        t = self.timepoint
        # The previous call's signal fence is exactly this call's wait fence.
        wait = self._last_signal
        if wait is None:
          wait = rt.HalFence.create_at(self.sem, t)
        if waits:
          wait = rt.HalFence.join([wait, *waits])
        signal = rt.HalFence.create_at(self.sem, t + 1)
        args.push_ref(wait)
        args.push_ref(signal)
        out = rt.VmVariantList(n_out)
        try:
          context.invoke(function, args, out)
        except Exception as e:  # noqa: BLE001 - classified below
          if attempt == 0 and self._timeline_failed():
            self._reset_timeline()
            args = _inputs_only(args, n_in)
            continue
          raise _invoke_error(e) from None
        self.timepoint = t + 1
        self._last_signal = signal
        if keepalive:
          self._inflight.append((t + 1, keepalive))
          self._prune()
        return out, signal
    raise AssertionError("unreachable")

  def invoke_detached(self, context, function, args: rt.VmVariantList, n_out: int):
    """Run ``function``, a program none of whose results reads an input,
    apart from this device's timeline; returns (results list, signal fence).

    IREE compiles such a program (no inputs, constant results, no results)
    to discard its wait fence and signal as soon as its own work is done, so
    on the timeline it would signal ``t + 1`` before the previous call
    signals ``t``: the timeline fails ("semaphore already signaled past t")
    and calls waiting for ``t + 1`` start before ``t`` is done (wrong
    values). It gets a semaphore of its own instead; it reads nothing the
    earlier calls write, so it needs no place in their order."""
    sem = self.hal.create_semaphore(0)
    signal = rt.HalFence.create_at(sem, 1)
    args.push_ref(_EMPTY_FENCE)
    args.push_ref(signal)
    out = rt.VmVariantList(n_out)
    with self.lock:
      try:
        context.invoke(function, args, out)
      except Exception as e:  # noqa: BLE001 - classified below
        raise _invoke_error(e) from None
      q = self._detached
      while q and _reached(q[0], 1):
        q.popleft()
      q.append(sem)
    return out, signal

  def idle(self) -> bool:
    """Whether every call dispatched to the task timeline has finished."""
    try:
      return self.sem.query() >= self.timepoint
    except Exception:  # noqa: BLE001 - a failed timeline: let the task path reset it
      return False

  def inline_hal(self):
    """(HAL device, HAL module) of the ``local-sync`` device for inline calls."""
    return _sync_hal()

  def invoke_inline(self, context, function, args: rt.VmVariantList, n_out: int):
    """Run ``function`` (loaded in a context over ``inline_hal()``) now, in
    this thread, and return its results list. The call runs to completion
    inside ``invoke``, so its wait and signal fences are empty ones (no
    semaphore to create or advance)."""
    args.push_ref(_EMPTY_FENCE)
    args.push_ref(_EMPTY_FENCE)
    out = rt.VmVariantList(n_out)
    with self._inline_lock:   # a VM context is not safe to enter from two threads
      try:
        context.invoke(function, args, out)
      except Exception as e:  # noqa: BLE001 - classified below
        raise _invoke_error(e) from None
    return out

  def _prune(self) -> None:
    q = self._inflight
    if not q:
      return
    try:
      done = self.sem.query()
    except Exception:  # noqa: BLE001 - failed timeline: nothing runs any more
      done = self.timepoint
    while q and q[0][0] <= done:
      q.popleft()

  def _timeline_failed(self) -> bool:
    try:
      self.sem.query()
      return False
    except Exception:  # noqa: BLE001 - query raises on a failed semaphore
      return True

  def _reset_timeline(self) -> None:
    # Work waiting on the old semaphore has failed with it; its keep-alive
    # objects are no longer read by anything.
    self.sem = self.hal.create_semaphore(0)
    self.timepoint = 0
    self._last_signal = None
    self._inflight.clear()

  def on_failure(self) -> None:
    """Called when a wait saw an execution error: later calls start anew."""
    with self.lock:
      if self._timeline_failed():
        self._reset_timeline()

  def synchronize(self, timeout_s: float | None = None) -> None:
    """Wait for every call dispatched so far (errors are not raised here)."""
    with self.lock:
      sem, t = self.sem, self.timepoint
      detached = list(self._detached)
    try:
      if timeout_s is None:
        sem.wait(t)
        for d in detached:
          d.wait(1)
      else:
        sem.wait(t, timeout=int(timeout_s * 1e9))
        for d in detached:
          d.wait(1, timeout=int(timeout_s * 1e9))
    except Exception:  # noqa: BLE001 - a failed timeline has nothing running
      pass
    with self.lock:
      self._prune()

  # ---- host data in ----
  def import_host(self, arr: np.ndarray):
    """Wrap ``arr`` (C-contiguous, 64-byte aligned, never written again) as a
    buffer view without copying. Returns (buffer view, holder); the holder
    must stay alive as long as the buffer may be read."""
    holder = _writable_alias(arr)
    buf = self.allocator.import_host_allocation(holder, memory_type=_HOST_MEMORY,
                                                allowed_usage=_USAGE)
    bv = rt.HalBufferView(buf, list(arr.shape), hal_element_type(arr.dtype))
    return bv, (arr, holder, buf)

  def copy_to_device(self, arr: np.ndarray):
    """A new IREE-owned buffer view holding a copy of ``arr``."""
    src = arr if arr.flags.c_contiguous else np.copy(arr, order="C")
    if src.dtype.itemsize == 0 or not src.size:
      flat = np.zeros(0, np.uint8)
    else:
      flat = src.reshape(-1).view(np.uint8)
    buf = self.allocator.allocate_buffer_copy(memory_type=_DEVICE_MEMORY, allowed_usage=_USAGE,
                                              device=self.hal, buffer=flat)
    return rt.HalBufferView(buf, list(src.shape), hal_element_type(src.dtype))

  # ---- testing ----
  def _hold_for_testing(self) -> "_Hold":
    """Make the next call wait on a timepoint nobody has signalled yet (so its
    results stay not-ready until ``release()``; ``fail(msg)`` fails it)."""
    with self.lock:
      t = self.timepoint
      self.timepoint = t + 1
      self._last_signal = None
      return _Hold(self.sem, t + 1)


class _Hold:
  def __init__(self, sem, t):
    self._sem, self._t = sem, t

  def release(self) -> None:
    self._sem.signal(self._t)

  def fail(self, message: str) -> None:
    self._sem.fail(message)


def _reached(sem, value: int) -> bool:
  try:
    return sem.query() >= value
  except Exception:  # noqa: BLE001 - a failed semaphore has nothing running
    return True


def _inputs_only(args: rt.VmVariantList, n_in: int) -> rt.VmVariantList:
  fresh = rt.VmVariantList(n_in + 2)
  for i in range(n_in):
    fresh.push_ref(args.get_as_ref(i))
  return fresh


def _invoke_error(e: Exception) -> Exception:
  msg = str(e)
  if "element type mismatch" in msg or "shape mismatch" in msg:
    return TypeError(f"jit: a compiled function was called with an argument of the wrong "
                     f"type: {msg.strip()}")
  return ExecutionError(f"{error_status(msg)}jit: the compiled computation failed to start: "
                        f"{msg.strip()}")


def error_status(msg: str) -> str:
  """The status-code head of an ``ExecutionError`` message (JAX's messages
  start with it): ``RESOURCE_EXHAUSTED: Out of memory `` for IREE's allocator
  failures, which are JAX's out-of-memory errors."""
  return "RESOURCE_EXHAUSTED: Out of memory; " if "RESOURCE_EXHAUSTED" in msg else ""


def _writable_alias(arr: np.ndarray):
  # import_host_allocation asks for a writable buffer; our read-only NumPy
  # storage is never written through this alias (only donated buffers are
  # written, and donated NumPy data is copied first).
  if arr.flags.writeable:
    return arr.reshape(-1).view(np.uint8) if arr.size else np.zeros(0, np.uint8)
  if arr.nbytes == 0:
    return np.zeros(0, np.uint8)
  return (ctypes.c_char * arr.nbytes).from_address(arr.ctypes.data)


def aligned_copy(arr: np.ndarray) -> np.ndarray:
  """A C-contiguous copy of ``arr`` whose data starts on a 64-byte boundary."""
  out = aligned_empty(arr.shape, arr.dtype)
  out[...] = arr
  return out


def is_importable(arr: np.ndarray) -> bool:
  """Whether ``arr`` can be imported in place (contiguous and aligned)."""
  return arr.flags.c_contiguous and arr.ctypes.data % ALIGNMENT == 0


@functools.cache
def host_cores() -> int:
  """The physical cores this process may run on (hyperthreads counted once),
  or ``OPENJAX_CPU_THREADS`` when set; read once, as the task executor's
  worker count is (every SPMD step asks: no /sys reads on that path)."""
  return cpu_thread_cap() or _physical_cores(os.sched_getaffinity(0))


def cpu_thread_cap() -> int | None:
  """Worker threads of the task executor that every CPU device's stream
  shares, from ``OPENJAX_CPU_THREADS`` (None: one per core). ``XLA_FLAGS``'
  ``intra_op_parallelism_threads`` is not read: JAX's CPU client ignores it
  there too (measured: JAX 0.10.2 still runs matmuls on every core with it
  set)."""
  env = os.environ.get("OPENJAX_CPU_THREADS")
  return max(1, int(env)) if env else None


#: Most freed buffers the task device's cache keeps (IREE's default).
_CACHED_BUFFERS = 64


@functools.cache
def buffer_cache_bytes() -> int:
  """The bound of the task device's buffer reuse: a freed buffer is kept for
  the next request of its size (instead of going back to ``malloc``) when
  the other buffers it handed out, live and kept, total at most this many
  bytes. ``OPENJAX_DEVICE_BUFFER_CACHE`` (bytes; 0 turns reuse off), by
  default a sixteenth of the machine's memory, at most 1 GiB. Read once, when
  the device is made. It covers the buffers openjax allocates (host kernels'
  outputs, copies to the device); results a compiled program allocates come
  from IREE's queue allocations, which do not pass through it.

  Why: a buffer of more than 32 MB always comes from a fresh ``mmap``
  (glibc's threshold), and touching fresh pages first is slow on virtual
  machines. jaxbench's conv2d forward (a host kernel's 33.5 MB output),
  alternating processes, process CPU min / median ms without and with reuse:
  150 / 172 -> 124 / 131 and 141 / 157 -> 106 / 113; the other compiled rows
  unchanged. ``jax.clear_caches()`` returns the kept buffers
  (``trim_buffer_cache``)."""
  env = os.environ.get("OPENJAX_DEVICE_BUFFER_CACHE")
  if env is not None:
    try:
      value = int(env)
    except ValueError:
      raise ValueError(f"OPENJAX_DEVICE_BUFFER_CACHE={env!r}: expected a number of bytes "
                       "(0 turns device buffer reuse off)") from None
    return max(0, value)
  try:
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
  except (ValueError, OSError, AttributeError):
    memory = 1 << 34
  return min(1 << 30, memory // 16)


def trim_buffer_cache() -> None:
  """Return the task device's kept free buffers to ``malloc`` (nothing when
  the device was never made)."""
  if _task is not None:
    _task[0].allocator.trim()


def iree_device(device) -> IreeDevice:
  """The execution stream of an openjax ``Device`` (made on first use)."""
  d = _devices.get(device.id)
  if d is None:
    with _instance_lock:
      d = _devices.get(device.id)
      if d is None:
        d = _devices[device.id] = IreeDevice(device)
  return d


def synchronize_all() -> None:
  """Wait for every call dispatched so far on every device."""
  for d in list(_devices.values()):
    d.synchronize()


def _drain_at_exit() -> None:
  # Let queued work finish before teardown frees Python objects it reads.
  for d in list(_devices.values()):
    d.synchronize(timeout_s=30.0)


__all__ = ["IreeDevice", "cpu_thread_cap", "synchronize_all", "ExecutionError", "error_status",
           "iree_device", "hal_element_type", "aligned_copy", "is_importable", "vm_instance",
           "ALIGNMENT", "buffer_cache_bytes", "trim_buffer_cache"]
