"""NumPy's OpenBLAS, which eager matrix products call, keeps its threads
spinning for a while after each call (``OPENBLAS_THREAD_TIMEOUT``, 2**n
cycles; its default is ~0.1 s): on a machine with few cores they hold the
cores that compiled programs then run on. A pmap MLP train step (2 devices)
right after an eager op-by-op step took 14.1 ms, 7.4 ms with threads that
sleep at once (5.9 ms after another pmap step); the price is a thread
wake-up (~10-50 us) on the next multithreaded eager product.

OpenBLAS reads the variable when it loads, so this takes effect when openjax
is imported before NumPy (``python -m openjax script.py`` always is); a
value set by the user is kept.

While a program compiles in the background, NumPy's OpenBLAS leaves a core
to the compiler (``leave_a_core`` / ``restore``).
"""
import ctypes
import os
import threading

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

_lock = threading.Lock()
_counts = None   # (get, set) of NumPy's OpenBLAS thread count; False: none found
_compiling = False   # between leave_a_core and restore: a compile holds a core


def _numpy_openblas():
  """(get, set) of the thread count of the OpenBLAS that NumPy loaded, or
  None (another BLAS, or none found among the process's mapped libraries)."""
  global _counts
  if _counts is None:
    import numpy as np
    root = os.path.dirname(os.path.dirname(os.path.realpath(np.__file__)))
    found = False
    try:
      with open("/proc/self/maps") as f:
        paths = {line.split()[-1] for line in f if "openblas" in line.lower()}
    except OSError:
      paths = set()
    for path in sorted(p for p in paths if p.startswith(root) and "numpy" in p):
      try:
        lib = ctypes.CDLL(path)
      except OSError:
        continue
      for get, put in (("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
                       ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
                       ("openblas_get_num_threads", "openblas_set_num_threads")):
        if hasattr(lib, get) and hasattr(lib, put):
          getter, setter = getattr(lib, get), getattr(lib, put)
          getter.restype, getter.argtypes = ctypes.c_int, []
          setter.restype, setter.argtypes = None, [ctypes.c_int]
          found = (getter, setter)
          break
      if found:
        break
    _counts = found
  return _counts or None


def leave_a_core(cores: int) -> int | None:
  """Cap NumPy's OpenBLAS at ``cores - 1`` threads (a background compile
  takes the core left); the count before, to give to ``restore``, or None
  when nothing changed (one core, fewer threads already, no OpenBLAS).

  Why: an interpreted MLP train step (NumPy products on both cores of a
  2-core machine) while its program compiled at lower priority stretched the
  compile from 5.7 s to 56 s (2964 interpreted calls); with NumPy's BLAS on
  one thread the compile finished in 5.1 s while 253 calls ran at the same
  ~20 ms each. An interpreted scan of small products: first call 8.3 s ->
  0.21 s (the two BLAS threads were waiting on each other behind the
  compile)."""
  global _compiling
  counts = _numpy_openblas()
  if counts is None or cores < 2:
    return None
  get, put = counts
  with _lock:
    _compiling = True
    before = get()
    if before <= cores - 1:
      return None
    put(cores - 1)
  return before


def restore(before: int | None) -> None:
  """Give NumPy's OpenBLAS back the thread count ``leave_a_core`` took."""
  global _compiling
  with _lock:
    _compiling = False
    if before is not None:
      _numpy_openblas()[1](before)


def threaded_gemm(a, b, out, threads: int) -> bool:
  """``np.matmul(a, b, out=out)`` on ``threads`` of NumPy's OpenBLAS
  threads, its count set back after (a compiled program's host kernel: the
  program's cores are openjax's, whatever NumPy's own products are set to
  use, as XLA's thread pool ignores ``OPENBLAS_NUM_THREADS``); False, doing
  nothing, when NumPy has no OpenBLAS or a background compile holds a core
  (between ``leave_a_core`` and ``restore``)."""
  import numpy as np
  counts = _numpy_openblas()
  if counts is None:
    return False
  get, put = counts
  with _lock:
    if _compiling:
      return False
    before = get()
    if before != threads:
      put(threads)
    try:
      np.matmul(a, b, out=out)
    finally:
      if before != threads:
        put(before)
  return True
