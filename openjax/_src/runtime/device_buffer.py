"""``IreeBuffer``: the device storage an ``Array`` holds for the runtime.

A compiled call returns before its work is done: each result is an IREE
buffer view together with the fence that signals when the computation writing
it has finished. A NumPy-backed Array passed to a compiled call keeps its
import here too, so later calls pass the same buffer. The Array (a core
class) only calls ``read``, ``wait`` and ``is_ready``; the executor reads and
updates the rest.
"""
from __future__ import annotations

import numpy as np

from openjax._src.core import ShapedArray
from openjax._src.runtime.iree_device import (ExecutionError, aligned_copy, error_status,
                                              iree_device)


class IreeBuffer:
  """An IREE buffer view written by the stream ``idev`` (an ``IreeDevice``;
  the one it was imported on for host data), its write fence (None once
  signalled or for imports), the host memory it aliases (kept alive with it)
  and whether another Array may see it (never donated in place then). A call
  on another stream reads it after its fence (``executable``)."""
  __slots__ = ("view", "fence", "idev", "host", "shared", "_ref")

  def __init__(self, view, fence, idev, host=None):
    self.view = view
    self.fence = fence
    self.idev = idev
    self.host = host
    self.shared = False
    self._ref = None

  def ref(self):
    """The identity of the underlying buffer (a VmRef), computed once."""
    r = self._ref
    if r is None:
      r = self._ref = self.view.get_buffer().ref
    return r

  def wait(self, aval: ShapedArray) -> None:
    """Wait for the computation writing this buffer; its failure raises
    ``ExecutionError`` (and the device's timeline starts anew)."""
    f = self.fence
    if f is None:
      return
    try:
      f.wait()
    except RuntimeError as e:
      self.idev.on_failure()
      raise ExecutionError(
          f"{error_status(str(e))}The jit-compiled computation producing this "
          f"{aval.str_short()} array "
          f"failed: {str(e).strip()}") from None
    self.fence = None

  def is_ready(self) -> bool:
    f = self.fence
    if f is None:
      return True
    try:
      done = f.wait(timeout=0)
    except RuntimeError:
      return True    # failed: reading it raises at once
    if done:
      self.fence = None
    return bool(done)

  def read(self, aval: ShapedArray) -> np.ndarray:
    """The value as a read-only NumPy array (a view of the buffer without
    copying, unless the buffer aliases host memory that only its Array keeps
    alive: a view handed out could outlive it)."""
    self.wait(aval)
    if aval.size == 0:
      v = np.zeros(aval.shape, aval.dtype)
    else:
      v = self.view.map().asarray(aval.shape, aval.dtype)
      if self.host is not None:
        v = v.copy()
    v.flags.writeable = False
    return v


def transfer_to(device, value) -> IreeBuffer:
  """``value`` (a NumPy array, or an ``IreeBuffer`` of another device) as a
  buffer for ``device`` (an openjax ``Device``); returns at once.

  NumPy data is copied (the caller may still change it) into 64-byte
  aligned memory and imported. A device buffer is not copied: every CPU
  device's stream runs on one HAL device, whose memory all of them read, so
  the result is the same buffer with the same write fence (calls on
  ``device`` wait for it), marked shared on both sides so that neither
  Array's buffer is ever donated in place. Wrap the result as
  ``Array(None, aval, device, buffer)``."""
  idev = iree_device(device)
  if isinstance(value, IreeBuffer):
    if value.idev.hal is idev.hal:
      value.shared = True
      moved = IreeBuffer(value.view, value.fence, value.idev, value.host)
      moved.shared = True
      return moved
    raise NotImplementedError(
        f"transfer_to: moving a buffer of {value.idev!r} to {device!r} needs a copy between "
        "HAL devices, which only CPU devices (one HAL device) do not need; read it to the "
        "host first (np.asarray) and transfer that")
  arr = np.asarray(value)
  view, holder = idev.import_host(aligned_copy(arr))
  return IreeBuffer(view, None, idev, holder)


__all__ = ["IreeBuffer", "transfer_to"]
