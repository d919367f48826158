"""jaxpr -> StableHLO -> IREE executable, with the caches in between.

``lower_closed_jaxpr`` makes the module text (and warns about donations it
cannot use), ``compile_lowered`` compiles it through the compile caches and
loads an ``Executable`` (one per distinct module), and
``executable_for_jaxpr`` does both for ``jit_p``'s impl, cached on the
jaxpr object.
"""
from __future__ import annotations

import atexit
import logging
import math
import os
import threading
import time
import warnings
from concurrent.futures import Future
import weakref
from typing import Sequence

from iree.compiler import ir
from iree.compiler.api import Session

from openjax._src import blas_threads
from openjax._src.config import config
from openjax._src.core import ClosedJaxpr, Literal, dce_jaxpr, eqn_effects, jaxprs_in_params
from openjax._src.interpreters.fold_constants import fold_constants
from openjax._src.interpreters.fold_reductions import folded
from openjax._src.interpreters.scan_hoist import hoist_scan_products
from openjax._src.interpreters.scan_sink import sink_scan_accumulations
from openjax._src.lowering import lower_jaxpr_to_module, plan_donation
from openjax._src.lowering.cost import cost_analysis
from openjax._src.lowering.simplify import simplify_for_lowering
from openjax._src.runtime import compiler, host_calls
from openjax._src.runtime.executable import Executable
from openjax._src.runtime.iree_device import cpu_thread_cap, host_cores


_EXECUTORS = ("iree", "interpreter")
# jax_log_compiles writes here (the logger jit's other compile logs use).
_dispatch_log = logging.getLogger("openjax._src.dispatch")


def _check_executor(value):
  value = str(value).strip().lower()
  if value not in _EXECUTORS:
    raise ValueError(f"openjax_executor must be one of {_EXECUTORS}, got {value!r}")
  return value


config.define("openjax_executor", _check_executor(os.environ.get("OPENJAX_EXECUTOR", "iree")),
              "How jitted functions run: 'iree' (compile with IREE) or 'interpreter' "
              "(evaluate the jaxpr op by op, for debugging).", validator=_check_executor)


class _FirstCall(threading.local):
  """Whether this thread is interpreting the first call of a jitted function
  whose executable compiles in the background (tiered execution)."""
  interpreting = False


_first_call = _FirstCall()


class _Interpreting:
  """The block of ``interpreting_first_call``: a class rather than a
  generator context manager, which cost ~1 us of every eager library call's
  ~6 us (jnp.sort of 10 elements)."""
  __slots__ = ("outer",)

  def __enter__(self):
    self.outer = _first_call.interpreting
    _first_call.interpreting = True

  def __exit__(self, *exc):
    _first_call.interpreting = self.outer


def interpreting_first_call() -> _Interpreting:
  """Mark this thread as interpreting a tiered first call for a block."""
  return _Interpreting()


def compiling(tiered: bool = True) -> bool:
  """Whether a jitted call runs compiled (the ``iree`` executor) rather than
  interpreting its jaxpr: not for a tiered call inside an interpreted first
  call, which interprets all of its program but the calls marked
  ``tiered=False``."""
  # Inside a host call the calling program holds its device: a nested
  # compiled call would wait for it forever, so it interprets.
  return (config.read("openjax_executor") == "iree"
          and not (tiered and _first_call.interpreting) and not host_calls.active())


# Large matrix products in compiled CPU programs call the host's BLAS
# (control/dot_lowering.py); OPENJAX_HOST_BLAS=0 keeps them in IREE's kernels
# (for measuring one against the other).
_HOST_KERNELS = os.environ.get("OPENJAX_HOST_BLAS", "1") != "0"


class LoweredModule:
  """A lowered jaxpr: module text plus what running it needs.

  ``text`` is what IREE compiles (it may call host kernels);
  ``portable_text`` is the plain StableHLO of the same program, which
  ``Lowered.as_text()`` shows."""
  __slots__ = ("text", "name", "closed_jaxpr", "aliases", "donated_invars", "lowered_jaxpr",
               "_portable", "__weakref__")

  def __init__(self, text, name, closed_jaxpr, aliases, donated_invars, lowered_jaxpr=None):
    self.text = text
    self.name = name
    self.closed_jaxpr = closed_jaxpr
    self.aliases = aliases
    self.donated_invars = donated_invars
    # What the module computes per call (constants folded): its cost decides
    # inline execution.
    self.lowered_jaxpr = closed_jaxpr if lowered_jaxpr is None else lowered_jaxpr
    self._portable = None

  @property
  def portable_text(self) -> str:
    """The module without host kernels (lowered again on first use)."""
    if self._portable is None:
      self._portable = (self.text if host_calls.KERNEL_PREFIX not in self.text else
                        lower_jaxpr_to_module(self.lowered_jaxpr, self.name,
                                              input_output_aliases=self.aliases))
    return self._portable


def lower_closed_jaxpr(closed_jaxpr: ClosedJaxpr, name: str,
                       donated_invars: Sequence[bool] | None = None) -> LoweredModule:
  """Lower a closed jaxpr to a StableHLO module (``module @jit_<name>``)."""
  n = len(closed_jaxpr.jaxpr.invars)
  donated = tuple(donated_invars) if donated_invars is not None else (False,) * n
  aliases, unusable = plan_donation(closed_jaxpr.jaxpr, donated)
  if unusable:
    avals = ", ".join(repr(closed_jaxpr.jaxpr.invars[i].aval) for i in unusable)
    warnings.warn(
        f"Some donated buffers were not usable: {avals}.\nDonation needs an output of "
        "the same shape and dtype for each donated input (and no output may be that "
        "input itself). See an explanation at "
        "https://docs.jax.dev/en/latest/faq.html#buffer-donation.", UserWarning,
        stacklevel=4)
  # Equations whose results nobody reads are not compiled (as XLA drops
  # them): an unused pure_callback is not called. Effects are kept.
  closed_jaxpr = closed_jaxpr.map_jaxpr(dce_jaxpr)
  lowered_jaxpr = simplify_for_lowering(sink_scan_accumulations(
      hoist_scan_products(fold_constants(folded(closed_jaxpr)))))
  text = lower_jaxpr_to_module(lowered_jaxpr, name, input_output_aliases=aliases,
                               host_kernels=_HOST_KERNELS)
  return LoweredModule(text, name, closed_jaxpr, aliases, donated, lowered_jaxpr)


# A program runs inline in the calling thread (one core) when that takes less
# time than the task queue's hand-offs would cost: its time on one core,
# estimated from its work and bytes, under a worker wake-up plus a hand-off per
# equation (~one dispatch each). Measured on 2 cores, inline vs the queue, us:
# tanh(a @ a) 64^2 14 vs 83, 128^2 46 vs 120, 256^2 291 vs 340, 384^2 1070 vs
# 780; sin(x) * 2 + exp(-x * x) 1e4 42 vs 110, 1e5 350 vs 315; sum(x * x) 1e5
# 74 vs 160, 1e6 672 vs 460; grad of a two-layer tanh MLP (256^2 weights) at
# batch 32 218 vs 320, batch 128 870 vs 780; jax.hessian of a 100-d function
# 31 vs 83-110 (JAX 115).
_INLINE_FLOPS_PER_S = 1e11
_INLINE_BYTES_PER_S = 2.5e10
_QUEUE_FIXED_S = 100e-6
_QUEUE_PER_EQUATION_S = 15e-6
# Programs this small run inline on every device in turn where an SPMD step
# runs them on several (execute_per_device): larger inline ones get a thread
# per device, so the devices still run at once.
TINY_WORK, TINY_BYTES = 2e5, 1 << 18


# A loop runs in IREE's VM, which waits for each trip's dispatches: on the
# task device every dispatch pays a worker wake-up, inline none. Loops whose
# trips are this small run inline (a 100-trip loop of c @ w, tanh: 64^2 0.70
# -> 0.53 ms, 128^2 4.0 -> 3.8 ms, 256^2 19 -> 28 ms; lax.linalg.qdwh of
# f32[31,31], many dispatches a trip: 115 -> 5.5 ms), if the program's work
# outside the loops is small too.
_INLINE_MAX_TRIP_FLOPS = 4e6
_INLINE_MAX_LOOP_PROGRAM_FLOPS = 4e7
_LOOPS = frozenset(["while", "scan"])


def runs_inline(closed_jaxpr: ClosedJaxpr) -> bool:
  """Whether a compiled ``closed_jaxpr`` should run inline: small work, or
  any work when IREE has a single worker per device (``OPENJAX_CPU_THREADS=1``
  or ``intra_op_parallelism_threads=1``): one worker adds only the hand-off
  to it and back (two thread wake-ups: 1024^2 matmul 32 ms vs 27 ms inline)."""
  return _runs_inline(*_work(closed_jaxpr), _loop_trip_work(closed_jaxpr.jaxpr),
                      _equation_count(closed_jaxpr.jaxpr))


def _runs_inline(work: float, nbytes: float, trip_work: float | None = None,
                 equations: int = 1) -> bool:
  if cpu_thread_cap() == 1:
    return True
  if trip_work is not None:
    return trip_work <= _INLINE_MAX_TRIP_FLOPS and work <= _INLINE_MAX_LOOP_PROGRAM_FLOPS
  alone = work / _INLINE_FLOPS_PER_S + nbytes / _INLINE_BYTES_PER_S
  return alone <= _QUEUE_FIXED_S + _QUEUE_PER_EQUATION_S * equations


def _equation_count(jaxpr) -> int:
  """The equations of ``jaxpr`` and of the calls in it (about one dispatch each
  before IREE fuses them)."""
  return sum(1 + sum(_equation_count(sub) for sub in jaxprs_in_params(eqn.params))
             for eqn in jaxpr.eqns)


def _loop_trip_work(jaxpr) -> float | None:
  """The largest work of one trip of a loop in ``jaxpr`` (flops + 10 x
  transcendentals of its body), or None when it has no loop."""
  most = None
  for eqn in jaxpr.eqns:
    subs = jaxprs_in_params(eqn.params)
    if eqn.primitive.name in _LOOPS:
      try:
        cost = [cost_analysis(sub) for sub in subs]
      except Exception:  # noqa: BLE001 - no estimate: not inline for the loop
        return math.inf
      trip = sum(c.get("flops", 0.0) + 10 * c.get("transcendentals", 0.0) for c in cost)
      most = trip if most is None else max(most, trip)
    else:
      for sub in subs:
        inner = _loop_trip_work(sub)
        if inner is not None:
          most = inner if most is None else max(most, inner)
  return most


def _work(closed_jaxpr: ClosedJaxpr) -> tuple[float, float]:
  """(flops + 10 x transcendentals, bytes accessed) estimated from the
  jaxpr; infinite when there is no estimate."""
  try:
    cost = cost_analysis(closed_jaxpr)
  except Exception:  # noqa: BLE001 - no estimate
    return math.inf, math.inf
  return (cost.get("flops", 0.0) + 10 * cost.get("transcendentals", 0.0),
          cost.get("bytes accessed", 0.0))


# Keyed by the module's cache key and the avals: modules of the same text may
# type their values differently where the text cannot say (weak types).
_executables: dict[tuple, Executable] = {}
_exec_lock = threading.Lock()


def compile_lowered(lowered: LoweredModule, compiler_options: dict | None = None) -> Executable:
  """Compile (or fetch from the caches) and load a lowered module."""
  t0, compiles = time.perf_counter(), compiler.stats["compiles"]
  key, vmfb = compiler.compile_module(lowered.text, name=lowered.name,
                                      compiler_options=compiler_options)
  if config.read("jax_log_compiles"):
    hit = "" if compiler.stats["compiles"] > compiles else " (found in the compilation cache)"
    _dispatch_log.warning(f"Finished IREE compilation of jit({lowered.name}) in "
                          f"{time.perf_counter() - t0:.9f} sec{hit}")
  return _executable(lowered, key, vmfb)


def cached_executable(lowered: LoweredModule,
                      compiler_options: dict | None = None) -> Executable | None:
  """The executable of ``lowered`` if it is compiled already (memory or disk
  cache), else None (nothing is compiled)."""
  hit = compiler.lookup_module(lowered.text, compiler_options=compiler_options)
  return None if hit is None else _executable(lowered, *hit)


class _BackgroundCompiler:
  """One worker thread compiling modules (IREE's in-process compiler releases
  the GIL). At exit, queued requests are dropped and the one in progress is
  awaited, so no compile runs while the interpreter is torn down."""

  def __init__(self):
    self._lock = threading.Lock()
    self._queue: list = []
    self._wake = threading.Condition(self._lock)
    self._thread = None
    self._closed = False
    self._busy = None   # the compile in progress
    # NumPy's BLAS thread count while compiles are pending (to restore)
    self._blas_before = None

  def submit(self, lowered: LoweredModule, compiler_options: dict | None) -> Future:
    fut: Future = Future()
    with self._lock:
      if self._closed:
        fut.set_exception(RuntimeError("openjax: the interpreter is shutting down"))
        return fut
      if not self._queue and self._busy is None:
        self._blas_before = blas_threads.leave_a_core(host_cores())
      # (the caller's disk cache: config overrides are per thread)
      self._queue.append((fut, lowered, compiler_options, compiler.cache_dir()))
      if self._thread is None:
        self._thread = threading.Thread(target=self._run, name="openjax-compile", daemon=True)
        self._thread.start()
        atexit.register(self.close)
      self._wake.notify()
    return fut

  def _run(self) -> None:
    # Below the calling threads' priority: the interpreted first calls must
    # not wait for the CPU behind the compile (threads IREE's compiler
    # starts from here inherit the niceness on Linux).
    try:
      os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _COMPILE_NICENESS)
    except (AttributeError, OSError):
      pass
    while True:
      with self._lock:
        while not self._queue and not self._closed:
          self._wake.wait()
        if self._closed:
          return
        fut, lowered, options, directory = self._queue.pop(0)
        self._busy = fut
      try:
        if fut.set_running_or_notify_cancel():
          with compiler.using_cache_dir(directory):
            fut.set_result(compile_lowered(lowered, options))
      except BaseException as e:  # noqa: BLE001 - delivered to the caller
        fut.set_exception(e)
      finally:
        with self._lock:
          self._busy = None
          if not self._queue:
            self._give_back_blas_core()

  def wait_idle(self, timeout: float) -> bool:
    """Wait until every submitted compile has finished (at most ``timeout``
    seconds); whether it did. For benchmarks that time the tier a caller
    gets once its compiles are done."""
    deadline = time.monotonic() + timeout
    while True:
      with self._lock:
        futures = [item[0] for item in self._queue]
        busy = self._busy
      if not futures and busy is None:
        return True
      left = deadline - time.monotonic()
      if left <= 0:
        return False
      try:
        (busy or futures[0]).exception(timeout=left)
      except Exception:  # noqa: BLE001 - cancelled or timed out: look again
        pass

  def close(self) -> None:
    with self._lock:
      self._closed = True
      pending, self._queue = self._queue, []
      self._wake.notify_all()
      thread = self._thread
    for fut, *_ in pending:
      fut.cancel()
    if thread is not None:
      thread.join()
    with self._lock:
      self._give_back_blas_core()

  def _give_back_blas_core(self) -> None:
    # (under the lock) NumPy's BLAS threads as they were before the compiles
    blas_threads.restore(self._blas_before)
    self._blas_before = None


_COMPILE_NICENESS = 10
background = _BackgroundCompiler()


def warn_background_compile_failed(name: str, error: Exception) -> None:
  """Say (once per jitted signature: its calls stay interpreted after) that
  the background compile of ``name`` failed, with the compiler's first
  error line; logged too under ``jax_log_compiles``."""
  lines = str(error).splitlines() or [type(error).__name__]
  first = next((ln for ln in lines if ln.startswith("error:")), lines[0])
  message = (f"jit of {name}: compiling it failed ({first.strip()}); its calls keep running "
             "interpreted (the jaxpr evaluated op by op, slower). "
             f"jax.jit({name}).lower(*args).compile() raises the whole error.")
  if config.read("jax_log_compiles"):
    _dispatch_log.warning(message)
  warnings.warn(message, RuntimeWarning, stacklevel=4)


def _executable(lowered: LoweredModule, key: str, vmfb: bytes) -> Executable:
  with _exec_lock:
    jaxpr = lowered.closed_jaxpr.jaxpr
    in_avals, out_avals = [v.aval for v in jaxpr.invars], [v.aval for v in jaxpr.outvars]
    typed_key = (key, *in_avals, None, *out_avals)
    ex = _executables.get(typed_key)
    if ex is None:
      work, nbytes = _work(lowered.lowered_jaxpr)
      ex = Executable(key, vmfb, in_avals, out_avals, lowered.name, lowered.aliases,
                      inline=_runs_inline(work, nbytes,
                                          _loop_trip_work(lowered.lowered_jaxpr.jaxpr),
                                          _equation_count(lowered.lowered_jaxpr.jaxpr)),
                      host_imports=host_calls.imports_of(lowered.text),
                      detached=_reads_no_input(lowered.lowered_jaxpr))
      # Unknown work (no cost rule for a primitive): the devices' streams,
      # as before per-device threads existed.
      ex.work = work if math.isfinite(work) else 0.0
      ex.tiny = work <= TINY_WORK and nbytes <= TINY_BYTES
      if len(_executables) > 1024:
        _executables.clear()
      _executables[typed_key] = ex
    return ex


def _reads_no_input(closed_jaxpr: ClosedJaxpr) -> bool:
  """Whether no result (and no effect) of the program reads one of its
  inputs: IREE then ignores the call's wait fence (``IreeDevice.invoke_detached``)."""
  jaxpr = closed_jaxpr.jaxpr
  reads = set(jaxpr.invars)
  for eqn in jaxpr.eqns:
    if any(type(v) is not Literal and v in reads for v in eqn.invars):
      if eqn_effects(eqn):
        return False
      reads.update(eqn.outvars)
  return not any(type(v) is not Literal and v in reads for v in jaxpr.outvars)


_by_jaxpr: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def executable_for_jaxpr(closed_jaxpr: ClosedJaxpr, name: str,
                         donated_invars: Sequence[bool] = ()) -> Executable:
  """The executable of ``jit_p``'s jaxpr, lowered and compiled once."""
  donated = tuple(donated_invars)
  per = _by_jaxpr.get(closed_jaxpr)
  if per is None:
    per = _by_jaxpr.setdefault(closed_jaxpr, {})
  ex = per.get(donated)
  if ex is None:
    ex = per[donated] = compile_lowered(lower_closed_jaxpr(closed_jaxpr, name, donated))
  return ex


# ----------------------------------------------------------- pretty text
_parse_lock = threading.Lock()
_session = None


def parse_module(text: str):
  """The module as an MLIR ``ir.Module`` (IREE's bindings), or None when
  parsing fails."""
  global _session
  with _parse_lock:
    if _session is None:
      _session = Session()
    try:
      return ir.Module.parse(text, _session.context)
    except Exception:  # noqa: BLE001 - an unparsable module is shown raw
      return None


def pretty_text(text: str) -> str:
  """The module in MLIR's custom syntax (``stablehlo.add %0, %1 : ...``),
  falling back to the generic text."""
  mod = parse_module(text)
  if mod is None:
    return text
  with _parse_lock:
    return str(mod)


__all__ = ["LoweredModule", "lower_closed_jaxpr", "compile_lowered", "cached_executable",
           "background", "runs_inline", "executable_for_jaxpr",
           "parse_module", "pretty_text"]
