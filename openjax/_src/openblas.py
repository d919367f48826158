"""The ``scipy-openblas32`` library: OpenBLAS with LAPACK (32-bit integers,
symbols prefixed ``scipy_``), loaded with ctypes without importing its
Python package (importlib.metadata costs import time). Both its users load
it here: the compiled programs' host products (``runtime/host_blas.py``)
and the eager linear-algebra kernels (``primitives/linalg/lapack.py``),
which sit below the runtime in DESIGN.md's layers.

It runs on one thread: openjax cuts large products into blocks over the
cores itself (see ``host_blas``), and an eager factorisation on one thread
never waits at the barriers of OpenBLAS's threads, which on a loaded
machine stall each call for milliseconds (see ``host_blas``).

``OPENJAX_HOST_BLAS=0`` (read once, at the first use) leaves the library
unloaded: compiled products stay in IREE's kernels and the eager linalg
kernels take their NumPy code (for measuring one against the other).
"""
from __future__ import annotations

import ctypes
import glob
import importlib.util
import os
import threading

_library: ctypes.CDLL | None = None
_loaded = False
_load_lock = threading.Lock()


def library() -> ctypes.CDLL | None:
  """The loaded library (set to one thread), or None when the wheel is
  missing, does not load, or ``OPENJAX_HOST_BLAS=0``."""
  global _library, _loaded
  if not _loaded:
    with _load_lock:
      if not _loaded:
        _library = _load() if os.environ.get("OPENJAX_HOST_BLAS", "1") != "0" else None
        _loaded = True
  return _library


def _load() -> ctypes.CDLL | None:
  spec = importlib.util.find_spec("scipy_openblas32")
  if spec is None or not spec.submodule_search_locations:
    return None
  lib_dir = os.path.join(list(spec.submodule_search_locations)[0], "lib")
  for path in sorted(glob.glob(os.path.join(lib_dir, "libscipy_openblas*"))):
    try:
      lib = ctypes.CDLL(path)
      lib.scipy_openblas_set_num_threads(1)
    except (OSError, AttributeError):
      continue
    return lib
  return None


__all__ = ["library"]
