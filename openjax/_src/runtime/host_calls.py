"""Host calls: Python functions that compiled programs call while they run.

A function is registered once with the abstract values of its operands and
results and gets an import symbol, ``@openjax_host_<n>.call``. A lowering
rule calls it with ``ctx.call_import(host.symbol, operands, host.out_avals)``;
the module then declares the import, and when an executable is loaded each
host function its text imports becomes a Python VM module
(``iree.runtime.PyModuleInterface``) in the program's VM context, so the
compiled code calls straight into Python (DESIGN.md decision 10).

Facts this is built on (``shared/iree/q8_callback.py`` and our probes):

* Under the async-external ABI an import takes its tensor operands as buffer
  views plus a wait fence (operands ready; null when there are none) and a
  signal fence that it must signal when its results are ready (or fail).
  An import is side-effecting, so the program waits for that signal on the
  host: the call runs synchronously inside ``VmContext.invoke``, in the
  thread that dispatched the program, in program order.
* An exception in the function comes back from ``invoke`` as a
  ``RuntimeError`` holding only the text; the exception itself is kept
  per thread here (``take_error``) so the caller re-raises it with its
  original traceback.
* ``asarray`` on a mapping takes an ``np.dtype`` (a scalar type such as
  ``np.float32`` raises ``std::bad_cast``); element types are not compared:
  the registered avals say what each buffer holds.
* One call costs ~15 us on a ``local-sync`` device and ~90 us on
  ``local-task`` (worker wake-ups); ``benchmarks/callback_cost.py``.

Two kinds of host function: a *callback* gets copies of its operands and
returns its results (they are copied into new buffers); a *kernel*
(``register_kernel``) gets read-only views of the program's buffers, valid
only during the call, and writes its results into views of freshly allocated
buffers: no copy either way (a kernel multiplying 2048^2 floats would spend
~10% of its time copying 48 MB otherwise).

A host function called while the program that calls it holds its device
must not dispatch compiled work to that device (it would wait for itself):
``active()`` tells the jit pipeline to interpret nested jitted calls.
"""
from __future__ import annotations

import hashlib
import itertools
import re
import threading
from typing import Callable, Sequence

import numpy as np

import iree.runtime as rt

from openjax._src import dtypes
from openjax._src.core import ShapedArray
from openjax._src.runtime.iree_device import _immortal, hal_element_type

_DEVICE_MEMORY = int(rt.MemoryType.DEVICE_LOCAL)
_USAGE = int(rt.BufferUsage.DEFAULT | rt.BufferUsage.MAPPING)

#: The VM module name of every host function starts with this.
MODULE_PREFIX = "openjax_host_"
#: ... and that of every host kernel (``register_kernel``) with this.
KERNEL_PREFIX = MODULE_PREFIX + "k"
_IMPORT = re.compile(r"func\.func private @(" + MODULE_PREFIX + r"[A-Za-z0-9_]+)\.call\(")


class HostFunction:
  """A Python function callable from compiled programs.

  ``fn(*operands) -> results``: operands are NumPy arrays of ``in_avals``
  (copies the function may keep), results a sequence of arrays of exactly
  ``out_avals``' shapes and dtypes (a function returns what the caller
  promised; mismatches raise ``TypeError`` in the calling program).
  ``symbol`` is what a lowering rule calls."""
  __slots__ = ("module_name", "symbol", "fn", "in_avals", "out_avals", "signature", "kernel")

  def __init__(self, module_name: str, fn: Callable, in_avals: Sequence[ShapedArray],
               out_avals: Sequence[ShapedArray], kernel: bool = False):
    self.kernel = kernel
    self.module_name = module_name
    self.symbol = f"{module_name}.call"
    self.fn = fn
    self.in_avals = tuple(in_avals)
    self.out_avals = tuple(out_avals)
    # VM calling convention: operands, wait fence, signal fence -> results.
    n_in, n_out = len(self.in_avals) + 2, len(self.out_avals)
    self.signature = "0" + "r" * n_in + "_" + ("r" * n_out if n_out else "v")

  def __repr__(self):
    return f"HostFunction({self.symbol}, {self.fn!r})"


_lock = threading.Lock()
_counter = itertools.count()
_by_name: dict[str, HostFunction] = {}
_by_key: dict = {}
# (module name, id(hal device)) -> VM module; HAL devices live forever
_vm_modules: dict = {}


def register(fn: Callable, in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray],
             *, key=None) -> HostFunction:
  """The host function calling ``fn`` with operands of ``in_avals`` and
  results of ``out_avals``.

  With a hashable ``key`` (e.g. the callback object a primitive holds, or a
  collective's description), registering again with an equal key and avals
  returns the same function, so lowering one program twice gives the same
  module text (and compile-cache key). Registered functions stay alive for
  the rest of the process: compiled programs may call them at any time."""
  in_avals, out_avals = tuple(in_avals), tuple(out_avals)
  full_key = None if key is None else (key, in_avals, out_avals)
  with _lock:
    if full_key is not None:
      hit = _by_key.get(full_key)
      if hit is not None:
        return hit
    host = HostFunction(f"{MODULE_PREFIX}{next(_counter)}", fn, in_avals, out_avals)
    _by_name[host.module_name] = host
    if full_key is not None:
      _by_key[full_key] = host
  return host


def register_kernel(fn: Callable, in_avals: Sequence[ShapedArray],
                    out_avals: Sequence[ShapedArray], *, key) -> HostFunction:
  """The host kernel calling ``fn(*operands, *results)``: ``operands`` are
  read-only views of the program's buffers (do not keep them), ``results``
  writable views of new buffers of ``out_avals`` that ``fn`` fills in.

  ``key`` (hashable, with a stable ``repr``: strings, numbers, tuples) and
  the avals name the kernel, so the same kernel has the same import symbol
  in every process and modules calling it hit the disk compilation cache."""
  in_avals, out_avals = tuple(in_avals), tuple(out_avals)
  full_key = ("kernel", key, in_avals, out_avals)
  digest = hashlib.sha256(repr(full_key).encode()).hexdigest()[:20]
  name = KERNEL_PREFIX + digest
  with _lock:
    hit = _by_key.get(full_key)
    if hit is not None:
      return hit
    host = HostFunction(name, fn, in_avals, out_avals, kernel=True)
    _by_name[name] = _by_key[full_key] = host
  return host


def imports_of(module_text: str) -> tuple[str, ...]:
  """The module names of the host functions a lowered module imports."""
  return tuple(dict.fromkeys(_IMPORT.findall(module_text)))


def vm_modules(module_names: Sequence[str], hal_device) -> list:
  """The VM modules providing ``module_names`` to programs loaded on
  ``hal_device`` (put them in the VM context before the program)."""
  out = []
  for name in module_names:
    slot = (name, id(hal_device))
    mod = _vm_modules.get(slot)
    if mod is None:
      host = _by_name.get(name)
      if host is None:
        raise RuntimeError(
            f"host call {name}: a compiled program imports a host function this process "
            "never registered (a module compiled by another process?). Lower the "
            "function again in this process.")
      with _lock:
        mod = _vm_modules.get(slot)
        if mod is None:
          mod = _vm_modules[slot] = _make_vm_module(host, hal_device)
          _immortal.append(mod)
    out.append(mod)
  return out


# ------------------------------------------------------------- calling
class _CallState(threading.local):
  depth = 0            # host calls running in this thread (nested ones count)
  error = None         # the exception the last failed host call raised


_state = _CallState()


def active() -> bool:
  """Whether this thread is running inside a host call."""
  return _state.depth > 0


def take_error() -> BaseException | None:
  """The exception of this thread's last failed host call (once)."""
  err = _state.error
  _state.error = None
  return err


def _to_numpy(ref, aval: ShapedArray) -> np.ndarray:
  bv = ref.deref(rt.HalBufferView)
  if aval.dtype == dtypes.float0:
    return np.zeros(aval.shape, dtypes.float0)
  if not aval.size:
    return np.zeros(aval.shape, aval.dtype)
  # A copy: the program may reuse the buffer once the call returns.
  return np.array(bv.map().asarray(aval.shape, np.dtype(aval.dtype)))


def _to_buffer(hal_device, value, aval: ShapedArray, where: str, index: int):
  arr = np.asarray(value)
  if arr.shape != aval.shape or arr.dtype != aval.dtype:
    raise TypeError(
        f"{where}: result {index} is {arr.dtype.name}{list(arr.shape)} but the program "
        f"expects {aval.str_short()}; return values of the declared shapes and dtypes.")
  if not arr.flags.c_contiguous:   # (np.ascontiguousarray would make a 0-d array 1-d)
    arr = np.copy(arr, order="C")
  flat = (arr.reshape(-1).view(np.uint8) if arr.size and arr.dtype.itemsize
          else np.zeros(0, np.uint8))
  buf = hal_device.allocator.allocate_buffer_copy(memory_type=_DEVICE_MEMORY, allowed_usage=_USAGE,
                                                  device=hal_device, buffer=flat)
  return rt.HalBufferView(buf, list(aval.shape), hal_element_type(aval.dtype)).ref


def _is_fence(ref) -> bool:
  return ref is not None and ref.isinstance(rt.HalFence)


def _make_vm_module(host: HostFunction, hal_device):
  """The VM module exporting ``host`` as ``call``: it waits for the wait
  fence, runs the function (a kernel on views, a callback on copies),
  signals the signal fence, or fails it and keeps the exception for the
  caller of the program (``take_error``)."""
  n_in = len(host.in_avals)
  run = _run_kernel if host.kernel else _run_callback
  what = "host kernel" if host.kernel else "host call"

  def call(_instance, *refs):
    wait, signal = refs[n_in], refs[n_in + 1]
    signal = signal.deref(rt.HalFence) if _is_fence(signal) else None
    try:
      if _is_fence(wait):
        wait.deref(rt.HalFence).wait()
      refs_out = run(host, hal_device, refs[:n_in])
    except BaseException as e:  # noqa: BLE001 - handed to the caller of the program
      _state.error = e
      if signal is not None:
        signal.fail(f"{what} {host.symbol} raised {type(e).__name__}")
      raise RuntimeError(f"{what} {host.symbol} raised {type(e).__name__}: {e}") from None
    if signal is not None:
      signal.signal()
    if not refs_out:
      return None
    return refs_out[0] if len(refs_out) == 1 else tuple(refs_out)

  class _Instance:
    def __init__(self, _iface):
      pass

  iface = rt.PyModuleInterface(host.module_name, _Instance)
  iface.export("call", host.signature, call)
  return iface.create()


def _run_callback(host: HostFunction, hal_device, refs) -> list:
  """A callback: copies in, the function's results copied into new buffers."""
  n_out = len(host.out_avals)
  operands = [_to_numpy(r, a) for r, a in zip(refs, host.in_avals)]
  _state.depth += 1
  try:
    results = host.fn(*operands)
  finally:
    _state.depth -= 1
  results = list(results) if n_out else []
  if len(results) != n_out:
    raise TypeError(f"host call {host.symbol}: returned {len(results)} results, the "
                    f"program expects {n_out}")
  return [_to_buffer(hal_device, v, a, f"host call {host.symbol}", i)
          for i, (v, a) in enumerate(zip(results, host.out_avals))]


def _run_kernel(host: HostFunction, hal_device, refs) -> list:
  """A kernel: views in, results written into views of new buffers."""
  operands = [_view(r, a) for r, a in zip(refs, host.in_avals)]
  outs = [_new_buffer(hal_device, a) for a in host.out_avals]
  host.fn(*operands, *(view for _, view in outs))
  return [ref for ref, _ in outs]


def _view(ref, aval: ShapedArray) -> np.ndarray:
  view = ref.deref(rt.HalBufferView).map().asarray(aval.shape, np.dtype(aval.dtype))
  view.flags.writeable = False
  return view


def _new_buffer(hal_device, aval: ShapedArray):
  """(buffer view ref, writable NumPy view of it) of a new buffer of ``aval``."""
  nbytes = aval.size * aval.dtype.itemsize
  if not nbytes:
    empty = np.zeros(aval.shape, aval.dtype)
    return _to_buffer(hal_device, empty, aval, "", 0), empty
  buf = hal_device.allocator.allocate_buffer(_DEVICE_MEMORY, _USAGE, nbytes)
  bv = rt.HalBufferView(buf, list(aval.shape), hal_element_type(aval.dtype))
  return bv.ref, bv.map().asarray(aval.shape, np.dtype(aval.dtype))


__all__ = ["HostFunction", "register", "register_kernel", "imports_of", "vm_modules", "active",
           "take_error", "MODULE_PREFIX", "KERNEL_PREFIX"]
