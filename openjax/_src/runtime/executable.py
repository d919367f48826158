"""Running compiled modules: ``Executable`` loads a vmfb once per IREE
device and calls its ``main`` asynchronously, turning inputs into buffers
and results into ``Array``s.

Inputs: an Array computed by an earlier call passes its buffer as is; an
Array backed by NumPy is imported without copying when 64-byte aligned
(copied into an aligned buffer otherwise) and the import is cached on the
Array; any other value (a NumPy array the caller may still mutate, a Python
scalar) is copied first.

Donation: a donated input tied to an output (``iree.abi.output``) has its
buffer overwritten by that output, so it must be seen by no one else. That
holds for a result of an earlier call whose buffer was never mapped to NumPy
and is not shared with another Array; IREE returns the *same* buffer for
outputs that are inputs, reshapes of inputs or repeated values, so after
each call results are compared (by buffer identity, only where the byte
sizes allow aliasing) with the inputs and with each other, and shared ones
are marked. A donated input that fails the test is copied first.
"""
from __future__ import annotations

import concurrent.futures
import itertools
import math
import threading
from typing import Sequence

import numpy as np

import iree.runtime as rt

from openjax._src import dtypes
from openjax._src.core import Array, ShapedArray, default_device, make_array
from openjax._src.core.array import ShardedBuffer
from openjax._src.core.devices import default_device_chosen
from openjax._src.core.memory import CHECK_MIN_BYTES, available_bytes, out_of_memory_error
from openjax._src.core.placement import committed_device
from openjax._src.runtime import host_calls
from openjax._src.runtime.device_buffer import IreeBuffer
from openjax._src.runtime.iree_device import (_EMPTY_FENCE, _invoke_error, aligned_copy,
                                              host_cores, iree_device, is_importable,
                                              vm_instance)

_BufferView = rt.HalBufferView
_VariantList = rt.VmVariantList


def _nbytes(aval: ShapedArray) -> int:
  if aval.dtype == dtypes.float0:
    return -1          # never aliases anything
  return aval.size * aval.dtype.itemsize


class Executable:
  """A compiled module with its signature; callable on any CPU device."""

  def __init__(self, key: str, vmfb: bytes, in_avals: Sequence[ShapedArray],
               out_avals: Sequence[ShapedArray], name: str,
               input_output_aliases: dict[int, int] | None = None, inline: bool = False,
               host_imports: Sequence[str] = (), detached: bool = False):
    self.key = key
    # No result reads an input: runs apart from the device's timeline
    # (IreeDevice.invoke_detached).
    self.detached = detached
    self.vmfb = vmfb
    self.name = name
    self.in_avals = list(in_avals)
    self.out_avals = list(out_avals)
    self.aliases = dict(input_output_aliases or {})
    # VM module names of the host functions the program calls (host_calls)
    self.host_imports = tuple(host_imports)
    self.work = 0.0   # estimated flops a call (set by runtime/pipeline; 0: unknown)
    self.tiny = True  # small enough to run inline on each device in turn (runtime/pipeline)
    # Small computations run inline in the calling thread (see iree_device).
    self.inline = inline
    self._loaded: dict[int, tuple] = {}
    self._load_lock = threading.Lock()
    n_in, n_out = len(self.in_avals), len(self.out_avals)
    in_b = [_nbytes(a) for a in self.in_avals]
    out_b = [_nbytes(a) for a in self.out_avals]
    # Pairs of (input or output slot, output slot) whose buffers could be the
    # same one; slots < n_in are inputs. In-place donated inputs are excluded:
    # their Array is deleted after the call.
    tied = set(self.aliases)
    self._alias_pairs = tuple(
        [(i, n_in + j) for i in range(n_in) if i not in tied
         for j in range(n_out) if in_b[i] == out_b[j] and in_b[i] > 0]
        + [(n_in + j, n_in + k) for j, k in itertools.combinations(range(n_out), 2)
           if out_b[j] == out_b[k] and out_b[j] > 0])
    self._alias_checked = False
    self._fast_inline = None     # (IreeDevice, context, function, result list) once eligible
    self._n_out = len(self.out_avals)
    self._float0_out = [a.dtype == dtypes.float0 for a in self.out_avals]
    self._any_float0_out = any(self._float0_out)
    # Results this large are checked against the free memory before each
    # call: JAX's RESOURCE_EXHAUSTED with the byte count, where IREE's
    # allocator failure says neither which buffer nor its size.
    self._out_nbytes = sum(max(b, 0) for b in out_b)
    self._check_memory = self._out_nbytes >= CHECK_MIN_BYTES

  def _load(self, idev, inline: bool = False):
    slot = (id(idev), inline)
    hit = self._loaded.get(slot)
    if hit is None:
      with self._load_lock:
        hit = self._loaded.get(slot)
        if hit is None:
          inst = vm_instance()
          module = rt.VmModule.copy_buffer(inst, self.vmfb)
          hal, hal_module = idev.inline_hal() if inline else (idev.hal, idev.hal_module)
          hosts = host_calls.vm_modules(self.host_imports, hal) if self.host_imports else []
          context = rt.VmContext(inst, modules=[hal_module, *hosts, module])
          fn = module.lookup_function("main")
          if fn is None:
            raise RuntimeError(f"jit of {self.name}: compiled module has no 'main'")
          hit = (context, fn, module)
          self._loaded[slot] = hit
    return hit

  # ---- calling ----
  def execute(self, args: Sequence, device=None, inline: bool = False) -> list:
    """Run on ``args`` (flat; Arrays, NumPy arrays or scalars of the input
    avals). Returns Arrays at once; their values are ready later.
    ``inline``: run in this thread now, after waiting for the inputs
    (``execute_per_device``), whatever the program's size."""
    fast = self._fast_inline
    if fast is not None and device is None and not inline:
      # Inline call on computed Arrays of the default device: nothing to
      # import, donate or alias-check (see _enable_fast_inline). Written out
      # in place (no helper calls): this is the whole cost of a tiny call.
      idev, context, fn, out = fast
      # ``_default`` is the last default device seen: while a default device
      # is chosen (``jax.default_device``), it is read again.
      if (_default[1] is idev and (not default_device_chosen[0] or _default_iree_device() is idev)
          and idev.idle()):
        lst = _VariantList(len(args) + 2)
        for x in args:
          # A deleted Array has no buffer.
          if type(x) is not Array or x._device is not None:
            break
          b = x._buffer
          if b is None or b.idev is not idev:
            break
          lst.push_ref(b.view)
        else:
          lst.push_ref(_EMPTY_FENCE)
          lst.push_ref(_EMPTY_FENCE)
          # ``out`` is this executable's result list, reused (invoke resets
          # it; 0.3 us of a ~7.5 us call): read under the lock that orders
          # the calls writing it.
          with idev._inline_lock:
            try:
              context.invoke(fn, lst, out)
            except Exception as e:  # noqa: BLE001 - classified as the general path does
              raise _host_call_error() or _invoke_error(e) from None
            get = out.get_as_object
            if self._n_out == 1:
              return [Array(None, self.out_avals[0], None,
                            IreeBuffer(get(0, _BufferView), None, idev))]
            return [Array(None, aval, None, IreeBuffer(get(j, _BufferView), None, idev))
                    for j, aval in enumerate(self.out_avals)]
    if device is None:
      device = committed_device(args, self.name)
    # Results are committed to the device of committed inputs (as in JAX);
    # otherwise they are uncommitted, on the default device.
    idev = _default_iree_device() if device is None else iree_device(device)
    if inline:
      for x in args:
        if type(x) is Array and not x.is_deleted():
          x.block_until_ready()
    else:
      inline = self.inline and idev.idle() and _others_ready(args, idev)
    slot = (id(idev), inline)
    context, fn, _ = self._loaded.get(slot) or self._load(idev, inline)
    n_in = len(args)
    if n_in != len(self.in_avals):
      raise TypeError(f"jit of {self.name}: called with {n_in} arguments, the compiled "
                      f"function takes {len(self.in_avals)}")
    if self._check_memory and self._out_nbytes > available_bytes():
      results = ", ".join(a.str_short() for a in self.out_avals)
      raise out_of_memory_error(self._out_nbytes, f"jit of {self.name}: its results {results}")
    lst = rt.VmVariantList(n_in + 2)
    keep = []
    slots = [None] * n_in      # Array (or None) per input, for the aliasing check
    bvs = [None] * n_in
    donated = None
    # Fences of inputs that another device's stream is still writing.
    waits = None if inline else []
    aliases = self.aliases
    for i, x in enumerate(args):
      if type(x) is Array:
        if x.is_deleted():
          x._check_alive()
        if aliases and i in aliases:
          bv = _donated_buffer(x, idev, args, keep)
          donated = donated or []
          donated.append(x)
        else:
          b = x._buffer
          if b is None:
            bv = _array_buffer(x, idev, keep)
          elif b.idev is idev:
            bv = b.view
            if b.host is not None:
              keep.append(b.host)
          elif type(b) is ShardedBuffer:
            # An Array over several devices passes a gathered import, not its buffer.
            bv = _import(x._value, idev, keep)
          else:
            bv = _other_stream_buffer(x, b, idev, keep, waits)
          slots[i] = x if type(b) is not ShardedBuffer else None
      elif aliases and i in aliases:
        # Written in place: never a cached scalar or host memory we import.
        bv = idev.copy_to_device(_as_input_array(x, self.in_avals[i]))
      else:
        bv = _raw_buffer(x, self.in_avals[i], idev, keep)
      bvs[i] = bv
      lst.push_ref(bv)
    try:
      if inline:
        out, signal = idev.invoke_inline(context, fn, lst, len(self.out_avals)), None
      elif self.detached:
        if donated:
          # Its results are written into a donated input: after every
          # earlier call that may read it.
          idev.synchronize()
        out, signal = idev.invoke_detached(context, fn, lst, len(self.out_avals))
      else:
        out, signal = idev.invoke(context, fn, lst, n_in, len(self.out_avals), keep, waits)
    except Exception:
      err = self.host_imports and _host_call_error()
      if err:
        raise err from None
      raise
    get = out.get_as_object
    if self._any_float0_out:
      results = [make_array(np.zeros(aval.shape, dtypes.float0)) if z
                 else Array(None, aval, device, IreeBuffer(get(j, _BufferView), signal, idev))
                 for j, (aval, z) in enumerate(zip(self.out_avals, self._float0_out))]
    else:
      results = [Array(None, aval, device, IreeBuffer(get(j, _BufferView), signal, idev))
                 for j, aval in enumerate(self.out_avals)]
    if donated:
      for x in donated:
        x.delete()
    if self._alias_pairs:
      matched = _mark_shared(self._alias_pairs, slots, bvs, results, keep)
      if not self._alias_checked:
        # Which results alias an input or each other is fixed by the
        # compiled program (IREE forwards buffers it returns unchanged), so
        # after the first call only the pairs seen aliasing are checked.
        self._alias_checked = True
        self._alias_pairs = matched
    if inline and device is None and self._fast_inline is None:
      self._enable_fast_inline(idev, context, fn)
    return results

  def _enable_fast_inline(self, idev, context, fn) -> None:
    # Eligible: no donation, no float0 result, and no result that can alias
    # an input or another result (none possible, or none seen on the first
    # call: aliasing is fixed by the program).
    if not (self.aliases or self._alias_pairs or self._any_float0_out):
      self._fast_inline = (idev, context, fn, _VariantList(self._n_out))


def _host_call_error() -> BaseException | None:
  """The exception a host function raised inside the failed call (raised
  as is, with its traceback into the function), if that is why it failed."""
  return host_calls.take_error()


def _mark_shared(pairs, slots, bvs, results, keep) -> tuple:
  """Mark results whose buffer is an input's or another result's as shared
  (never donated in place); a result aliasing imported host memory keeps
  that memory alive. Returns the pairs that alias."""
  n_in = len(slots)
  refs: dict = {}
  matched = []
  for s, t in pairs:
    rs = refs.get(s)
    if rs is None:
      a = slots[s] if s < n_in else results[s - n_in]
      rs = bvs[s].get_buffer().ref if a is None else a._buffer.ref()
      refs[s] = rs
    rt_ = refs.get(t)
    if rt_ is None:
      rt_ = refs[t] = results[t - n_in]._buffer.ref()
    if rs == rt_:
      matched.append((s, t))
      out = results[t - n_in]._buffer
      out.shared = True
      src = slots[s] if s < n_in else results[s - n_in]
      if src is not None:
        src = src._buffer
        src.shared = True
        if src.host is not None:
          out.host = src.host
      else:
        out.host = keep   # a copied NumPy input: its memory lives with the result
  return tuple(matched)


_default = [None, None]   # (Device, IreeDevice) of the default device


def _default_iree_device():
  # Keyed on the device itself: ``jax_default_device`` may change it.
  d = default_device()
  if _default[0] is not d:
    _default[0], _default[1] = d, iree_device(d)
  return _default[1]


def _others_ready(args, idev) -> bool:
  """Whether no input is still being written by another device's stream
  (an inline call would have to wait for it in this thread)."""
  for x in args:
    if type(x) is Array:
      b = x._buffer
      if b is not None and b.idev is not idev and not b.is_ready():
        return False
  return True


def _array_buffer(x: Array, idev, keep):
  """The buffer of a NumPy-backed Array for a call on ``idev``: imported
  once and remembered on the Array."""
  arr = x._np
  if arr.dtype == dtypes.float0:
    arr = np.zeros(arr.shape, np.bool_)
  src = arr if is_importable(arr) else aligned_copy(arr)
  bv, holder = idev.import_host(src)
  x._buffer = IreeBuffer(bv, None, idev, holder)
  keep.append(holder)
  return bv


def _other_stream_buffer(x: Array, b, idev, keep, waits):
  """The buffer of an Array that another device's stream wrote (or
  imported), for a call on ``idev``. Streams of one HAL device share its
  memory, so the buffer is read in place, after its writer's fence: on the
  device side for a queued call (``waits``), in this thread for an inline
  one (``waits`` None). It may now be read by two streams, so it is never
  donated in place."""
  if b.idev.hal is not idev.hal:
    return _import(x._value, idev, keep)
  if b.fence is not None:
    if waits is None:
      b.wait(x.aval)
    else:
      waits.append(b.fence)
  b.shared = True
  if b.host is not None:
    keep.append(b.host)
  return b.view


def _import(arr: np.ndarray, idev, keep):
  src = arr if is_importable(arr) and not arr.flags.writeable else aligned_copy(arr)
  bv, holder = idev.import_host(src)
  keep.append(holder)
  return bv


# IREE's allocate-and-copy beats NumPy copy + import for small arrays but
# is several times slower for large ones (page faults in a fresh allocation).
_SMALL_COPY = 1 << 16
_scalar_cache: dict = {}
_SCALAR_CACHE_SIZE = 4096


def _raw_buffer(x, aval: ShapedArray, idev, keep):
  """A buffer holding a copy of a non-Array input (the caller may mutate it)."""
  t = type(x)
  key = None
  if t is float or t is int or t is bool:
    # -0.0 == 0.0 but they differ: the sign is part of the key.
    key = (id(idev), aval.dtype, t, x, t is float and math.copysign(1.0, x) < 0)
    hit = _scalar_cache.get(key)
    if hit is not None:
      return hit[0]
  arr = _as_input_array(x, aval)
  if arr.nbytes <= _SMALL_COPY:
    # Small: one copy into an IREE-owned buffer (no host memory to track).
    bv, holder = idev.copy_to_device(arr), None
  else:
    bv, holder = idev.import_host(aligned_copy(arr))
    keep.append(holder)
  if key is not None:
    if len(_scalar_cache) >= _SCALAR_CACHE_SIZE:
      _scalar_cache.clear()
    _scalar_cache[key] = (bv, holder)
  return bv


def _as_input_array(x, aval: ShapedArray) -> np.ndarray:
  dt = aval.dtype
  if dt == dtypes.float0:
    return np.zeros(aval.shape, np.bool_)
  arr = np.asarray(x)
  if arr.dtype != dt:
    arr = arr.astype(dt)
  if arr.shape != aval.shape:
    raise TypeError(f"jit: argument of shape {arr.shape} where the compiled function "
                    f"expects {aval.str_short()}")
  return arr


def _donated_buffer(x: Array, idev, args, keep):
  """The buffer a donated input lends to its tied output: its own when
  nobody else can see it, else a fresh copy."""
  b = x._buffer
  if (x._np is None and b.idev is idev and b.host is None and not b.shared
      and sum(a is x for a in args) == 1):
    return b.view
  return idev.copy_to_device(x._value)


#: Programs of at least this many flops run on one thread per device. Below
#: it the devices' streams are faster (hand-offs cost more than they save).
#: Measured on 2 cores: the pmap MLP forward (1.7e8 flops a device) 2.3-2.5
#: ms on the streams, 1.9 ms on threads (JAX 1.7); the pmap/shard_map train
#: steps, sharded jit's elementwise/matmul/MLP rows on 2 and 8 devices
#: unchanged between thresholds 2.5e8 and 5e7. (Before consecutive psums met
#: once, jit(shard_map)'s train step ran 13 programs of 0.2-2 ms: 9.3 ms on
#: threads, 6.9 ms on the streams.)
PER_DEVICE_THREAD_MIN_WORK = 5e7
_per_device_pool = None
_pool_lock = threading.Lock()


def execute_per_device(executable: Executable, per_device_args: Sequence, devices) -> list:
  """``executable`` on each device's arguments (one program of an SPMD step:
  pmap, shard_map, a partitioned jit). A program too large to run inline
  runs inline on one thread per device, at most one per core, so each
  device's program has a core to itself as each XLA CPU device has; on the
  devices' streams instead, their dispatches shared the task executor's
  workers and slowed each other (MLP train step at batch 128 on each of 2
  devices: 7.0 ms through the streams, 4.8 ms on two threads; one device
  alone 2.9 ms on both workers, 4.5 ms on one). Smaller programs
  (``PER_DEVICE_THREAD_MIN_WORK``) and a single device are dispatched to the
  streams from this thread."""
  cores = host_cores()
  # (an inline program that is not tiny would run on every device in turn
  # in this thread: it gets a thread per device instead)
  threads = executable.work >= PER_DEVICE_THREAD_MIN_WORK or (
      executable.inline and not executable.tiny)
  if len(devices) == 1 or not threads or cores == 1 or on_device_thread():
    # (a host callback of a device program running here may run another
    # SPMD step: it must not wait for the pool it occupies)
    return [executable.execute(a, d) for a, d in zip(per_device_args, devices)]
  global _per_device_pool
  if _per_device_pool is None:
    with _pool_lock:
      if _per_device_pool is None:
        # This thread runs the first device's program: cores - 1 more.
        _per_device_pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=cores - 1, thread_name_prefix="openjax-device")
  # Devices dealt round-robin to the threads (this one and the pool's): with
  # more devices than cores each thread runs its share one after another
  # (8 devices on 2 cores: all but the first device's program went to the
  # pool's one thread, 1.14 cores busy; sharded 2048^2 matmul 113 -> 60 ms).
  n = len(devices)
  groups = [list(range(j, n, cores)) for j in range(min(cores, n))]
  futures = [_per_device_pool.submit(_execute_group, executable, per_device_args, devices, g)
             for g in groups[1:]]
  results = [None] * n
  for k, out in zip(groups[0], _execute_group(executable, per_device_args, devices,
                                               groups[0])):
    results[k] = out
  for g, f in zip(groups[1:], futures):
    for k, out in zip(g, f.result()):
      results[k] = out
  return results


_device_thread = threading.local()   # .active: this thread runs one device's program


def on_device_thread() -> bool:
  """Whether this thread runs one device's program of an SPMD step on a core
  of its own (``execute_per_device``): host kernels it calls use one thread."""
  return getattr(_device_thread, "active", False)


def _execute_group(executable: Executable, per_device_args, devices, group) -> list:
  """The program on each device of ``group`` in turn, on this thread."""
  _device_thread.active = True
  try:
    return [executable.execute(per_device_args[k], devices[k], True) for k in group]
  finally:
    _device_thread.active = False


__all__ = ["Executable", "execute_per_device", "on_device_thread"]
