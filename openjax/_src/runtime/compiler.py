"""Compiling StableHLO text to IREE VM bytecode, with caches.

The compiler runs in process through IREE's C API (``iree.compiler.api``
sessions); unlike ``compile_str`` it forks no ``iree-compile`` process
(~0.3 s saved per module), releases the GIL and is thread-safe. Diagnostics
are captured through a callback and put into the exception, never printed.

Compiled modules are cached in memory and on disk. The key is the sha256 of
the module text, the flags and the compiler version. Disk entries carry a
header with their own key and the payload's length and sha256: a truncated,
corrupt or misplaced entry (another key's file copied over it)
is detected, removed and recompiled, never loaded. Entries are written to a
temporary file and renamed into place, so concurrent processes never see a
partial file.
"""
from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import os
import re
import struct
import subprocess
import tempfile
import threading
import time
import warnings
from collections import OrderedDict

import iree.compiler.version as _iree_version
from iree.compiler.api import Output, Session, Source, ctypes_dl
from iree.compiler.tools import binaries

from openjax._src.config import config
from openjax._src.lowering import (contraction_stats, convolution_module_depths,
                                   module_has_complex_dot)


def _env_flag(name: str, default: bool) -> bool:
  v = os.environ.get(name)
  if v is None:
    return default
  return v.strip().lower() in ("1", "true", "t", "yes", "y", "on")


config.define("jax_enable_compilation_cache", _env_flag("JAX_ENABLE_COMPILATION_CACHE", True),
              "Keep compiled modules in a persistent cache on disk "
              "(jax_compilation_cache_dir).", validator=bool)
config.define("jax_compilation_cache_dir", os.environ.get("JAX_COMPILATION_CACHE_DIR"),
              "Directory of the persistent compilation cache (default: "
              "$XDG_CACHE_HOME/openjax/compilation_cache or ~/.cache/openjax/...).")

COMPILER_VERSION = f"iree-{_iree_version.VERSION}-{_iree_version.REVISIONS.get('IREE', '')}"

#: Codegen options IREE takes only on its process-wide command line (a session
#: rejects them): set once, before the first compile; part of every module's
#: flags, so cache keys and ``iree-compile`` reruns (benchmarks/) see them.
#: Peeling loop remainders instead of masking every vector: a 1000-row
#: reduction distributed in tiles of 25 rows ran its 8-row vectors under
#: per-row masks (vmap_logprob's exp/log/sum dispatch 14.3 -> 8.8 ms,
#: fused_elementwise 41 -> 37 ms, scan_rnn 17.5 -> 13.9 ms a call on one
#: worker; matmul, MLP and conv dispatches and compile time within noise).
GLOBAL_FLAGS = ("--iree-llvmcpu-vector-pproc-strategy=peel",)
#: Flags every CPU compile uses (DESIGN.md decision 4).
BASE_FLAGS = (
    "--iree-hal-target-backends=llvm-cpu",
    "--iree-input-type=stablehlo",
    "--iree-llvmcpu-target-cpu=host",
    "--iree-llvmcpu-enable-ukernels=all",
    "--iree-llvmcpu-reassociate-fp-reductions=true",
    "--iree-opt-const-eval=false",
    "--iree-execution-model=async-external",
    *GLOBAL_FLAGS,
)
#: A module gets data tiling when one matrix product has at least this many flops.
DATA_TILING_MIN_FLOPS = 5e7
#: Without these IREE silently demotes f64 to f32, and f64 libm calls fail to link.
X64_FLAGS = ("--iree-input-demote-f64-to-f32=false", "--iree-llvmcpu-link-embedded=false")

_F64 = re.compile(r"[x<]f64\b")


class CompilationError(RuntimeError):
  """IREE rejected a lowered module; the message holds its diagnostics."""


#: Counters (tests read them): compiles run, memory/disk cache hits, corrupt
#: disk entries found.
stats = {"compiles": 0, "memory_hits": 0, "disk_hits": 0, "disk_corrupt": 0,
         "compile_seconds": 0.0, "inner_tiled_fallbacks": 0, "global_flag_fallbacks": 0}


def compile_flags(text: str, compiler_options: dict | None = None) -> tuple[str, ...]:
  """The IREE flags for ``text``: the base set, x64 flags when x64 is on or
  the module has f64, data tiling off for complex matmuls, then
  ``compiler_options`` (``{"iree-flag-name": value}``) last, so they win."""
  flags = list(BASE_FLAGS)
  if config.read("jax_enable_x64") or _F64.search(text):
    flags += X64_FLAGS
  # Data tiling doubles compile time and pays off only for large matrix
  # products (1024^2: 76 ms vs 148 ms a call; 256^2: 0.56 vs 0.61 ms), and
  # IREE cannot data-tile complex ones.
  flops, depth = contraction_stats(text)
  if (module_has_complex_dot(text) or flops < DATA_TILING_MIN_FLOPS
      or shallow_convolution_module(text)):
    flags.append("--iree-opt-data-tiling=false")
  else:
    flags += data_tiling_flags(text, depth)
  for key, value in (compiler_options or {}).items():
    key = str(key)
    if key.startswith("xla_"):
      warnings.warn(f"jit: compiler option {key!r} is an XLA option; openjax compiles with "
                    "IREE and ignores it. Pass IREE flags instead, e.g. "
                    "{'iree-opt-level': 'O3'}.", stacklevel=4)
      continue
    if isinstance(value, bool):
      value = "true" if value else "false"
    flags.append(f"--{key.lstrip('-')}={value}")
  return tuple(flags)


#: IREE's inner-tiled lowering of data-tiled matrix products: on AVX-512 it
#: keeps a 29x16 block of the product in registers where the default mmt4d
#: kernel keeps 16x16, so each loaded vector of the right operand feeds 29
#: FMAs instead of 16. Measured (thread CPU time of interleaved inline calls,
#: median): f32 1024^2 matmul 21.0 -> 17.2 ms; 2048^2 158 -> 116 ms a call
#: (XLA 109). Its products have the default kernel's bits (same order of the
#: K sum) for every shape we compared but 2048^2 (2e-6 relative).
INNER_TILED_FLAG = "--iree-llvmcpu-enable-inner-tiled"
#: IREE's default ("dispatch creation") data-tiling path fuses a product's
#: consumers into its dispatch; the "global optimization" path unpacks the
#: product in a dispatch of its own.
DATA_TILING_FLAG = "--iree-opt-data-tiling"
GLOBAL_DATA_TILING_FLAG = "--iree-global-opt-data-tiling"
#: The global path's extra pass over every product costs ~1/depth of its work;
#: from this mean contracted size on (all products' flops over twice their
#: outputs) it is cheaper than what it saves. Measured: MLP step (mean depth
#: ~430) 8.7 -> 7.5 ms; vmap_logprob forward / gradient (30 / 60) 1.5x / 1.44x
#: slower on the global path.
GLOBAL_DATA_TILING_MIN_DEPTH = 256
# IREE 3.13 cannot compile an inner-tiled product on the default path when a
# fused consumer reads a broadcast vector (x @ w + b: "failed to legalize
# linalg.generic", any shape); the global path compiles it.
_VECTOR_BROADCAST = re.compile(r"stablehlo\.broadcast_in_dim %[\w#]+, dims = \[\d"
                               r"|broadcast_dimensions = array<i64: \d")


@functools.cache
def _host_has_avx512() -> bool:
  try:
    with open("/proc/cpuinfo") as f:
      return any(line.startswith("flags") and " avx512f" in line for line in f)
  except OSError:
    return False


def native_vector_bytes() -> int:
  """The width of the host's vector registers IREE compiles for (bytes):
  64 with AVX-512, else 32 (AVX2)."""
  return 64 if _host_has_avx512() else 32


def data_tiling_flags(text: str, depth: float) -> tuple[str, ...]:
  """Data-tiling flags for a module with a large matrix product whose
  products have mean contracted size ``depth``: on AVX-512 hosts the
  inner-tiled kernel, on the default path, or for a module with a vector
  broadcast (bias adds: MLP training steps, f32 256x784x512 forward and
  backward 8.7 -> 7.5 ms) on the global path when the products are deep
  enough; otherwise IREE's default. A module IREE rejects with these is compiled again with the
  default (``compile_module``)."""
  if "stablehlo.dot_general" not in text or not _host_has_avx512():
    return (DATA_TILING_FLAG,)
  if not _VECTOR_BROADCAST.search(text):
    return (DATA_TILING_FLAG, INNER_TILED_FLAG)
  if depth >= GLOBAL_DATA_TILING_MIN_DEPTH:
    return (GLOBAL_DATA_TILING_FLAG, INNER_TILED_FLAG)
  return (DATA_TILING_FLAG,)


#: Data tiling packs a product's operands and unpacks its result in passes of
#: their own; a product contracting fewer elements than this per output
#: loses more to them than the packed kernel saves.
SHALLOW_CONVOLUTION_DEPTH = 64.0


def shallow_convolution_module(text: str) -> bool:
  """Whether a module with a convolution has only shallow products that IREE
  would data-tile (matrix products and 1x1 convolutions, see
  ``convolution_module_depths``). A 1x1 convolution over many positions
  with few features (K = 32) runs 2-7x slower data-tiled (NHWC
  64x32x32x32 by 1x1x32x32, single worker: 1.25 ms untiled vs 2.7-9.2 ms;
  NCHW 3.8 vs 13-17 ms). Other convolutions are not data-tiled by IREE, and
  their kernel gradients (products K = batch x positions deep) run 1.5-3x
  faster tiled, so those modules keep data tiling, as do modules where
  data tiling touches nothing (measured neutral) and modules without a
  convolution (``data_tiling_flags``' rules)."""
  depths = convolution_module_depths(text)
  return bool(depths) and all(d < SHALLOW_CONVOLUTION_DEPTH for d in depths)


def _compile_with_fallback(text: str, flags, name: str) -> bytes:
  """Compile; when IREE rejects the kernel ``data_tiling_flags`` chose,
  compile again with its default data tiling; when it rejects the module
  under ``GLOBAL_FLAGS`` (peeled loops: a float64 FFT's 8x16x32 contraction
  exceeds IREE's vector-size limit), compile it in an ``iree-compile``
  process without them (this process's IREE keeps its command line). The
  result is cached under the same key, so a failure is paid once."""
  try:
    return _compile_choosing_tiling(text, flags, name, _compile_in_process)
  except CompilationError as err:
    if not GLOBAL_FLAGS:
      raise
    stats["global_flag_fallbacks"] += 1
    try:
      return _compile_choosing_tiling(text, [f for f in flags if f not in GLOBAL_FLAGS], name,
                                      _compile_in_subprocess)
    except CompilationError:
      raise err from None


def _compile_choosing_tiling(text: str, flags, name: str, compile_fn) -> bytes:
  try:
    return compile_fn(text, flags, name)
  except CompilationError:
    if INNER_TILED_FLAG not in flags:
      raise
    stats["inner_tiled_fallbacks"] += 1
    default = [DATA_TILING_FLAG if f == GLOBAL_DATA_TILING_FLAG else f
               for f in flags if f != INNER_TILED_FLAG]
    return compile_fn(text, default, name)


def _compile_in_subprocess(text: str, flags, name: str) -> bytes:
  """One compile by the ``iree-compile`` tool of the installed compiler."""
  with tempfile.TemporaryDirectory(prefix="openjax-compile-") as d:
    out = os.path.join(d, "module.vmfb")
    done = subprocess.run([binaries.find_tool("iree-compile"), *flags, "-", "-o", out],
                          input=text.encode(), capture_output=True)
    if done.returncode != 0:
      raise CompilationError(f"jit of {name}: IREE failed to compile the lowered module:\n"
                             + done.stderr.decode(errors="replace")[:4000])
    with open(out, "rb") as f:
      return f.read()


def cache_key(text: str, flags) -> str:
  h = hashlib.sha256()
  h.update(text.encode())
  h.update(b"\0" + "\n".join(flags).encode() + b"\0" + COMPILER_VERSION.encode())
  return h.hexdigest()


# ------------------------------------------------------------ compiling
_DIAG_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t,
                                  ctypes.c_void_p)
_setup_lock = threading.Lock()
_setup_done = False
_SEVERITY = {0: "note", 1: "warning", 2: "error", 3: "remark"}


def _setup_dylib() -> None:
  global _setup_done
  with _setup_lock:
    if _setup_done:
      return
    fn = ctypes_dl._dylib.ireeCompilerInvocationEnableCallbackDiagnostics
    fn.restype = None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, _DIAG_CALLBACK, ctypes.c_void_p]
    ctypes_dl._initializeGlobalCL("openjax", *GLOBAL_FLAGS)
    _setup_done = True


def _compile_in_process(text: str, flags, name: str) -> bytes:
  """One IREE compile; raises CompilationError with the diagnostics."""
  _setup_dylib()
  messages: list[str] = []

  def on_diagnostic(severity, message, size, _user):
    messages.append(f"{_SEVERITY.get(severity, 'diagnostic')}: "
                    f"{ctypes.string_at(message, size).decode(errors='replace')}")

  callback = _DIAG_CALLBACK(on_diagnostic)   # kept alive until the compile ends
  session = Session()
  try:
    try:
      session.set_flags(*(f for f in flags if f not in GLOBAL_FLAGS))
    except ValueError as e:
      raise CompilationError(
          f"jit of {name}: IREE rejected the compiler flags ({e}). Check the "
          "compiler_options passed to jit.") from None
    inv = session.invocation()
    ctypes_dl._dylib.ireeCompilerInvocationEnableCallbackDiagnostics(
        inv._inv_p, 0, callback, None)
    source = Source.wrap_buffer(session, text.encode())
    ok = inv.parse_source(source) and inv.execute()
    if not ok:
      errors = [m for m in messages if not m.startswith(("warning", "remark"))] or messages
      raise CompilationError(
          f"jit of {name}: IREE failed to compile the lowered module:\n"
          + "\n".join(errors[:20])
          + "\nThis is a bug in a lowering rule or an IREE limitation. Inspect the module "
          "with jax.jit(f).lower(*args).as_text(); run the function without jit "
          "(jax.disable_jit()) to get results meanwhile.")
    out = Output.open_membuffer()
    try:
      inv.output_vm_bytecode(out)
      return bytes(out.map_memory())
    finally:
      out.close()
  finally:
    session.close()
    del callback


# ------------------------------------------------------------ disk cache
_MAGIC = b"OPENJAX-VMFB\x00\x02"
# magic, the entry's own cache key, payload length, payload sha256. The key is
# stored and checked: an entry copied over another key's file must not run.
_HEADER = struct.Struct("<14s32sQ32s")


# A compile thread working for another thread reads that thread's cache
# settings (config overrides are per thread): ``using_cache_dir``.
_cache_for = threading.local()
_UNSET = object()


@contextlib.contextmanager
def using_cache_dir(directory: str | None):
  """Compile in this thread with ``directory`` (None: no disk cache) as the
  persistent cache, whatever this thread's config says."""
  old = getattr(_cache_for, "directory", _UNSET)
  _cache_for.directory = directory
  try:
    yield
  finally:
    _cache_for.directory = old


def cache_dir() -> str | None:
  """The persistent cache directory, or None when the disk cache is off."""
  directory = getattr(_cache_for, "directory", _UNSET)
  if directory is not _UNSET:
    return directory
  if not config.read("jax_enable_compilation_cache"):
    return None
  d = config.read("jax_compilation_cache_dir")
  if not d:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    d = os.path.join(base, "openjax", "compilation_cache")
  return d


def _entry_path(directory: str, key: str) -> str:
  return os.path.join(directory, f"{key}.vmfb")


def _disk_read(directory: str, key: str) -> bytes | None:
  path = _entry_path(directory, key)
  try:
    with open(path, "rb") as f:
      data = f.read()
  except OSError:
    return None
  ok = len(data) >= _HEADER.size
  if ok:
    magic, stored_key, length, digest = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:]
    ok = (magic == _MAGIC and stored_key == bytes.fromhex(key) and length == len(payload)
          and hashlib.sha256(payload).digest() == digest)
  if not ok:
    stats["disk_corrupt"] += 1
    try:
      os.remove(path)
    except OSError:
      pass
    return None
  return payload


def _disk_write(directory: str, key: str, payload: bytes) -> None:
  try:
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=f".{key[:16]}.", suffix=".tmp")
    try:
      with os.fdopen(fd, "wb") as f:
        f.write(_HEADER.pack(_MAGIC, bytes.fromhex(key), len(payload),
                             hashlib.sha256(payload).digest()))
        f.write(payload)
      os.replace(tmp, _entry_path(directory, key))
    except BaseException:
      try:
        os.remove(tmp)
      except OSError:
        pass
      raise
  except OSError as e:
    # A read-only or full cache directory must not break jit.
    warnings.warn(f"jit: could not write the compilation cache entry in {directory}: {e}",
                  RuntimeWarning, stacklevel=3)


# ------------------------------------------------------------ front door
_memory: "OrderedDict[str, bytes]" = OrderedDict()
_MEMORY_ENTRIES = 512
_lock = threading.Lock()
_inflight: dict[str, threading.Event] = {}


def _memory_hit(key: str) -> bytes | None:
  """The memory cache's entry (marked recently used), or None. Hold _lock."""
  hit = _memory.get(key)
  if hit is not None:
    _memory.move_to_end(key)
    stats["memory_hits"] += 1
  return hit


def _disk_hit(key: str) -> bytes | None:
  directory = cache_dir()
  vmfb = _disk_read(directory, key) if directory else None
  if vmfb is not None:
    stats["disk_hits"] += 1
  return vmfb


def _remember(key: str, vmfb: bytes) -> None:
  with _lock:
    _memory[key] = vmfb
    if len(_memory) > _MEMORY_ENTRIES:
      _memory.popitem(last=False)


def compile_module(text: str, *, name: str = "module",
                   compiler_options: dict | None = None) -> tuple[str, bytes]:
  """Compile StableHLO ``text``; returns ``(cache key, vmfb bytes)``.

  Looks in the memory cache, then the disk cache; concurrent requests for
  the same module compile it once.
  """
  flags = compile_flags(text, compiler_options)
  key = cache_key(text, flags)
  while True:
    with _lock:
      hit = _memory_hit(key)
      if hit is not None:
        return key, hit
      event = _inflight.get(key)
      if event is None:
        event = _inflight[key] = threading.Event()
        break
    event.wait()   # another thread compiles it; then read the memory cache
  try:
    vmfb = _disk_hit(key)
    if vmfb is None:
      t0 = time.perf_counter()
      vmfb = _compile_with_fallback(text, flags, name)
      stats["compiles"] += 1
      stats["compile_seconds"] += time.perf_counter() - t0
      directory = cache_dir()
      if directory:
        _disk_write(directory, key, vmfb)
    _remember(key, vmfb)
    return key, vmfb
  finally:
    with _lock:
      _inflight.pop(key, None)
    event.set()


def lookup_module(text: str, *, compiler_options: dict | None = None
                  ) -> tuple[str, bytes] | None:
  """``(cache key, vmfb)`` when ``text`` is already compiled (in memory or on
  disk), else None; never compiles."""
  key = cache_key(text, compile_flags(text, compiler_options))
  with _lock:
    hit = _memory_hit(key)
  if hit is None:
    hit = _disk_hit(key)
    if hit is None:
      return None
    _remember(key, hit)
  return key, hit


def clear_memory_cache() -> None:
  """Forget compiled modules held in memory (the disk cache stays)."""
  with _lock:
    _memory.clear()


__all__ = ["compile_module", "lookup_module", "compile_flags", "cache_key", "cache_dir",
           "using_cache_dir", "CompilationError", "stats", "clear_memory_cache", "BASE_FLAGS",
           "GLOBAL_FLAGS", "X64_FLAGS", "COMPILER_VERSION", "data_tiling_flags",
           "INNER_TILED_FLAG", "DATA_TILING_FLAG", "GLOBAL_DATA_TILING_FLAG"]
