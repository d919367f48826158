"""Eager speed sweep: every op-table row beside its NumPy reference.

Each row of ``tests/ops/rows_*.py`` runs eagerly (no ``jit``) on its sample
inputs scaled to about 10, 1e3 and 1e6 elements (the largest argument), beside
the row's NumPy/SciPy reference on the same data, and beside JAX when ``jax``
is importable (for rows whose function is a public openjax function called
directly: JAX's function of the same name). Matrix-product rows of
``rows_dot`` run as n x n products and as vector-matrix products, n = 8, 256
and 1024. Prints the rows slowest relative to NumPy and flags every case over
max(3 x NumPy, NumPy + 10 us).

    python benchmarks/eager_sweep.py [--quick] [--only PATTERN] [--modules sort,dot]
                                     [--sizes 10,1e3,1e6]
                                     [--budget SECONDS] [--top N] [--json FILE] [--verbose]
                                     [--rows-from EARLIER.json] [--report EARLIER.json]

Scaling: a row's sample arrays are extended cyclically along every axis
(``np.resize`` per axis), one factor for every dimension size so dimensions
that match stay matched; a scaled case is kept only when both the row's
function and its reference accept it and give outputs of the same shapes.
Rows whose inputs cannot be scaled that way (shapes or sizes fixed in the
row's closure, keys, matrices that must stay invertible) run at their sample
size only and are counted in the summary.

Timing: the best per-call time of adaptive repeats (each repeat at least a
tenth of ``--budget``, repeats until ``--budget`` is spent, at least 3); the
implementations of one case are timed back to back, and a case over the line
is timed again ``CONFIRM_ROUNDS`` times, the implementations taking turns
(the best of all its timings counts). Inputs are openjax Arrays (JAX arrays
for JAX), made before timing, as a user holds them. The eager floor (the cost
of entering a library program and of a step) is measured on the machine
before and after the rows, and flagged cases whose JAX program cannot fit
under the line at that floor are marked ``floor(n)``.
"""
from __future__ import annotations

import argparse
import faulthandler
import fnmatch
import gc
import importlib
import json
import math
import pkgutil
import signal
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # the repo: tests.ops rows

import openjax  # noqa: E402
import openjax.numpy  # noqa: E402,F401 - resolved by jax_equivalent
import openjax.scipy  # noqa: E402,F401
import tests.ops  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent))   # eager_causes, beside this script
import eager_causes  # noqa: E402
from openjax._src.core.jaxpr import jaxprs_in_params  # noqa: E402
from openjax._src.runtime.pipeline import background  # noqa: E402

try:
  import jax
except ImportError:   # JAX is optional: the sweep compares against it when installed
  jax = None

SLOW_FACTOR, SLOW_MARGIN_S = 3.0, 10e-6
# A scaled case whose output would hold more elements than this is skipped
# (outer products and the like at 1e6 inputs).
MAX_OUTPUT_ELEMENTS = 1 << 23
# Skip a size when the previous size's call, extrapolated linearly, would
# take longer than this, and stop a case whose first call runs longer (the
# inputs of convolutions and other superlinear rows scale their work by more
# than their size).
MAX_CALL_S = 1.0
# The longest wait for a case's background compiles before it is timed.
COMPILE_WAIT_S = 60.0
MATRIX_SIZES = (8, 256, 1024)
# The eager floor: entering a library program costs an entry and each
# primitive a step (a step of a generated program function: the NumPy call's
# own overhead plus ~0.2 us of Python), before any element is computed. A
# case whose JAX program is long enough that this bound alone is over the line
# cannot pass while every eager call runs JAX's primitives; the report marks
# such cases "floor". A sweep measures both on the machine it runs on
# (`measure_floor`: session 15's AVX2 machine read ~2x session 13's); these
# are session 13's figures, for JSON files that do not record theirs.
FLOOR_ENTRY_S, FLOOR_STEP_S = 2e-6, 0.7e-6
# A flagged case is timed again this many times, NumPy and openjax taking
# turns, before it counts: on a shared machine whose speed drifts over
# seconds, two implementations timed a second apart differ by 2x.
CONFIRM_ROUNDS = 3


# ------------------------------------------------------------------ the rows
def load_rows(pattern: str | None, modules: str | None = None) -> list[tuple[str, object]]:
  """(row module, row) for every op-table row whose name matches ``pattern``
  (fnmatch; a plain word matches as a substring), from the row modules named
  in ``modules`` (comma-separated, without ``rows_``; all when None)."""
  wanted = None if modules is None else {m.strip() for m in modules.split(",")}
  if pattern and not any(c in pattern for c in "*?["):
    pattern = f"*{pattern}*"
  out = []
  for info in sorted(pkgutil.iter_modules(tests.ops.__path__), key=lambda i: i.name):
    if info.name.startswith("rows_") and (wanted is None or info.name[len("rows_"):] in wanted):
      module = importlib.import_module(f"tests.ops.{info.name}")
      out += [(info.name[len("rows_"):], row) for row in module.ROWS
              if pattern is None or fnmatch.fnmatch(row.name, pattern)]
  return out


_PUBLIC_MODULES = ("numpy", "numpy.linalg", "numpy.fft", "lax", "nn", "scipy.special",
                   "scipy.linalg", "scipy.signal", "scipy.stats", "random")


def jax_equivalent(fn, package) -> object | None:
  """``package``'s function of the same public name as ``fn`` (an openjax
  public function called directly), or None."""
  for path in _PUBLIC_MODULES:
    ours = openjax
    for part in path.split("."):
      ours = getattr(ours, part, None)
    name = getattr(fn, "__name__", None)
    if ours is None or name is None or getattr(ours, name, None) is not fn:
      continue
    theirs = package
    for part in path.split("."):
      theirs = getattr(theirs, part, None)
    return getattr(theirs, name, None) if theirs is not None else None
  return None


# ----------------------------------------------------------------- scaling
def _map_arrays(args, f):
  if isinstance(args, (list, tuple)):
    return type(args)(_map_arrays(a, f) for a in args)
  return f(args) if isinstance(args, np.ndarray) else args


def _arrays(args) -> list[np.ndarray]:
  found = []
  _map_arrays(args, lambda a: found.append(a) or a)
  return found


def elements(args) -> int:
  return max((a.size for a in _arrays(args)), default=0)


def _cyclic_resize(a: np.ndarray, shape) -> np.ndarray:
  for axis, n in enumerate(shape):
    if a.shape[axis] != n:
      a = np.take(a, np.arange(n) % a.shape[axis], axis=axis)
  return np.ascontiguousarray(a)


def scaled(args, target: int):
  """``args`` with every dimension size d > 1 scaled by one factor so the
  largest array has about ``target`` elements; None when that is not larger."""
  arrays = _arrays(args)
  if not arrays:
    return None
  # One factor g for every dimension size d > 1 (d -> d * g); an array with k
  # such dimensions grows by g ** k, so g is what takes the first array to
  # ``target`` elements.
  growable = [(a.size, sum(d > 1 for d in a.shape)) for a in arrays if a.size]
  growable = [(size, k) for size, k in growable if k]
  if not growable or target <= max(size for size, _ in growable):
    return None
  g = min((target / size) ** (1 / k) for size, k in growable)
  new = {d: max(d, round(d * g)) for a in arrays for d in a.shape if d > 1}
  return _map_arrays(args, lambda a: _cyclic_resize(a, [new.get(d, d) for d in a.shape]))


def square_products(args):
  """For a matrix-product row (two matrices, inner dimensions equal): the
  (label, args) cases n x n @ n x n and vector @ n x n, n in MATRIX_SIZES."""
  if len(args) != 2 or not all(isinstance(a, np.ndarray) and a.ndim == 2 for a in args):
    return []
  x, y = args
  if x.shape[1] != y.shape[0] or x.size == 0 or y.size == 0:
    return []
  cases = []
  for n in MATRIX_SIZES:
    cases.append((f"{n}x{n}", (_cyclic_resize(x, (n, n)), _cyclic_resize(y, (n, n)))))
  for n in MATRIX_SIZES:
    vec = _cyclic_resize(x, (1, n))
    cases.append((f"vec{n}", (vec[0], _cyclic_resize(y, (n, n)))))
    cases.append((f"vec{n}", (vec, _cyclic_resize(y, (n, n)))))   # when 1-D is refused
  return cases


def size_label(target: float) -> str:
  return f"{target:.0e}".replace("e+0", "e") if target >= 1000 else str(int(target))


# ------------------------------------------------------------------ timing
def _leaves(x) -> list:
  if isinstance(x, dict):
    x = list(x.values())
  if isinstance(x, (list, tuple)):
    return [leaf for item in x for leaf in _leaves(item)]
  return [x]


def _shapes(out) -> list:
  return [np.shape(leaf) for leaf in _leaves(out)]


def _to_openjax(args):
  return _map_arrays(args, openjax.device_put)


def _to_jax(args):
  return _map_arrays(args, jax.device_put)


def best_time(call, budget: float, first: float) -> float:
  """Best per-call seconds of adaptive repeats of ``call`` (``first``: the
  time of one call already made)."""
  loops = max(1, int(budget / 10 / max(first, 1e-7)))
  min_repeats = 3 if first * loops * 3 < 4 * budget else 1
  best, repeats, deadline = math.inf, 0, time.perf_counter() + budget
  gc_was_enabled = gc.isenabled()
  gc.disable()
  try:
    while repeats < min_repeats or (time.perf_counter() < deadline and repeats < 1000):
      t0 = time.perf_counter()
      for _ in range(loops):
        call()
      best = min(best, (time.perf_counter() - t0) / loops)
      repeats += 1
  finally:
    if gc_was_enabled:
      gc.enable()
  return best


def _timed_once(call):
  t0 = time.perf_counter()
  out = call()
  return out, time.perf_counter() - t0


def _openjax_call(fn, args):
  return lambda: openjax.block_until_ready(fn(*args))


class CallTooSlow(BaseException):
  """Raised by SIGALRM in a call that runs too long (a BaseException, so that
  library code catching Exception does not swallow it)."""


def _in_compiler(frame) -> bool:
  while frame is not None:
    if frame.f_code.co_filename.endswith(("runtime/compiler.py", "runtime/pipeline.py")):
      return True
    frame = frame.f_back
  return False


def _too_slow(signum, frame):
  # Not inside an IREE compile or the wait for one (a first call's compile
  # takes ~1 s on a loaded machine): an exception raised in the compiler's
  # diagnostics callback left IREE broken for the rest of the run (later
  # cases all "skipped", once a double free). The timer fires again.
  if _in_compiler(frame):
    return
  raise CallTooSlow(f"a call ran over {MAX_CALL_S:g} s")


def _prepare(row, args, jax_fn):
  """The calls of one case, after one run of each that checks the case
  (None when the row's function or reference rejects the inputs)."""
  ref_out, ref_t = _timed_once(lambda: row.ref(*args))
  ojx_args = _to_openjax(args)
  try:
    ojx_out, ojx_t = _timed_once(_openjax_call(row.fn, ojx_args))
  except Exception:   # some rows take static NumPy arguments
    ojx_args = args
    ojx_out, ojx_t = _timed_once(_openjax_call(row.fn, ojx_args))
  if _shapes(ojx_out) != _shapes(ref_out):
    raise ValueError(f"output shapes {_shapes(ojx_out)} != reference {_shapes(ref_out)}")
  # Jitted functions run interpreted until their background compile is done
  # (~0.3-2 s a module with a cold cache): time the tier a caller gets then,
  # whatever the state of the compilation cache.
  background.wait_idle(COMPILE_WAIT_S)
  calls = {"numpy": (lambda: row.ref(*args), ref_t),
           "openjax": (_openjax_call(row.fn, ojx_args), ojx_t)}
  if jax_fn is not None:
    jax_args = _to_jax(args)
    call = lambda: jax.block_until_ready(jax_fn(*jax_args))  # noqa: E731
    try:
      _, jax_t = _timed_once(call)
      _, jax_t = _timed_once(call)   # the first call compiles
      calls["jax"] = (call, jax_t)
    except Exception:
      pass
  return calls


def _output_too_large(row, args) -> bool:
  try:
    out = openjax.eval_shape(row.fn, *args)
  except Exception:
    return False
  return sum(math.prod(np.shape(leaf)) for leaf in _leaves(out)) > MAX_OUTPUT_ELEMENTS


class _Guard:
  """SIGALRM after MAX_CALL_S (and every 0.25 s after): interrupts
  Python-level loops (a call stuck inside one C call still runs to its end,
  hence the probes below)."""

  def __enter__(self):
    self.previous = signal.signal(signal.SIGALRM, _too_slow)
    signal.setitimer(signal.ITIMER_REAL, MAX_CALL_S, 0.25)   # again until it stops

  def __exit__(self, *exc):
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, self.previous)


class _Growth:
  """The (elements, seconds) of the last two calls of a row, to predict the
  next size's call before making it."""
  STEP = 8       # probe sizes at most this far apart
  NOISE_S = 20e-6

  def __init__(self):
    self.points: list[tuple[int, float]] = []

  def add(self, n: int, t: float) -> None:
    self.points = (self.points + [(n, t)])[-2:]

  def predict(self, n: int) -> float:
    if not self.points:
      return 0.0
    n1, t1 = self.points[-1]
    power = 1.0
    if len(self.points) == 2 and self.points[0][1] > self.NOISE_S:
      n0, t0 = self.points[0]
      if n1 > n0 and t1 > t0:
        power = max(1.0, math.log(t1 / t0) / math.log(n1 / n0))
    return t1 * (n / n1) ** power


def _first_calls(row, args) -> float:
  """Seconds of one call of the row's function and of its reference. A
  first openjax call over 1 ms is timed again: a library program traces a
  new shape on its first call (milliseconds), which must not predict its
  later calls over the limit."""
  with _Guard():
    _, ref_t = _timed_once(lambda: row.ref(*args))
    call = _openjax_call(row.fn, args)
    _, fn_t = _timed_once(call)
    if 1e-3 < fn_t < MAX_CALL_S / 4:
      fn_t = min(fn_t, _timed_once(call)[1])
  return max(ref_t, fn_t)


def _cases(module: str, sample, targets) -> tuple[list, bool]:
  """The (label, args) cases of a row, and whether they grow by element
  count (so probes between them apply)."""
  if module == "dot" and square_products(sample):
    return [("sample", sample)] + square_products(sample), False
  cases = []
  for target in targets:
    try:
      args = sample if target <= 100 else scaled(sample, int(target))
    except MemoryError:   # a sample whose dimensions all grow (outer-product-like rows)
      args = None
    if args is not None:
      cases.append((size_label(target), args))
  return cases, True


def sweep_row(module: str, row, targets, budget: float, with_jax: bool) -> tuple[list, list]:
  """(results, notes) of one row: a result per case that ran, a note per
  case skipped."""
  results, notes = [], []
  sample = row.args(np.random.default_rng(0))
  jax_fn = jax_equivalent(row.fn, jax) if with_jax else None
  growth, done = _Growth(), set()
  cases, probe = _cases(module, sample, targets)
  for label, args in cases:
    if label in done:
      continue
    n = elements(args)
    try:
      with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        # Probe sizes up to this one (a single call each), so a row whose
        # time grows faster than its size is stopped before a call of minutes.
        while probe and growth.points and n > growth.points[-1][0] * _Growth.STEP:
          probe_n = growth.points[-1][0] * _Growth.STEP
          if growth.predict(probe_n) > MAX_CALL_S:
            break
          growth.add(probe_n, _first_calls(row, scaled(sample, probe_n)))
        if growth.predict(n) > MAX_CALL_S:
          notes.append((row.name, label, f"skipped: predicted over {MAX_CALL_S:g} s a call"))
          continue
        with _Guard():
          if label != "sample" and _output_too_large(row, args):
            notes.append((row.name, label, "skipped: output over 8M elements"))
            continue
          calls = _prepare(row, args, jax_fn)
        times = {impl: best_time(call, budget, first) for impl, (call, first) in calls.items()}
        if is_slow({f"{impl}_s": t for impl, t in times.items()}):
          for _ in range(CONFIRM_ROUNDS):
            for impl, (call, first) in calls.items():
              times[impl] = min(times[impl], best_time(call, budget, first))
    except CallTooSlow as err:
      notes.append((row.name, label, f"skipped: {err}"))
      continue
    except Exception as err:   # a scaled case the row does not accept
      if label == "sample":
        notes.append((row.name, label, f"failed: {type(err).__name__}: {err}"[:200]))
      continue
    done.add(label)
    growth.add(n, max(times.values()))
    result = {"row": row.name, "module": module, "size": label, "elements": n,
              **{f"{impl}_s": t for impl, t in times.items()}}
    if is_slow(result):
      result["eqns"] = program_length(row.fn, _to_openjax(args))
      if result["eqns"] is None:   # rows that take static NumPy arguments
        result["eqns"] = program_length(row.fn, args)
    results.append(result)
  return results, notes


def _program_length(jaxpr) -> int:
  """Equations an eager run executes once: a call's body inline (eager
  library programs inline nested calls), a cond by its longest branch, a
  loop's body once (its trips are not counted: a lower bound)."""
  n = 0
  for eqn in jaxpr.eqns:
    subs = jaxprs_in_params(eqn.params)
    if not subs:
      n += 1
    elif eqn.primitive.name == "cond":
      n += 1 + max(_program_length(sub) for sub in subs)
    else:
      n += sum(_program_length(sub) for sub in subs)
  return n


def program_length(fn, args) -> int | None:
  """The length of JAX's program for ``fn(*args)`` (see ``_program_length``),
  or None when it cannot be traced (NumPy-only arguments, host callbacks)."""
  try:
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      return _program_length(openjax.make_jaxpr(fn)(*args).jaxpr)
  except Exception:
    return None


# --------------------------------------------------------------- reporting
def line_s(r) -> float:
  """The slowest time a case may take: max(3 x NumPy, NumPy + 10 us)."""
  np_s = r["numpy_s"]
  return max(SLOW_FACTOR * np_s, np_s + SLOW_MARGIN_S)


def is_slow(r) -> bool:
  return r["openjax_s"] > line_s(r)


def floor_s(r) -> float | None:
  """The eager floor of a case's program length (None when unknown), from
  the floor its sweep measured (session 13's figures for older files)."""
  n = r.get("eqns")
  if n is None:
    return None
  return r.get("floor_entry_s", FLOOR_ENTRY_S) + r.get("floor_step_s", FLOOR_STEP_S) * n


def measure_floor(budget: float = 0.05) -> tuple[float, float]:
  """(entry, step) seconds of a library program on this machine: two
  programs of 1 and 21 negations of f32[10], past the runs after which a
  program becomes one generated function, called as the sweep calls rows."""
  from openjax._src.numpy.eager_programs import eager_program

  def chain(n):
    def negations(x):
      for _ in range(n):
        x = openjax.numpy.negative(x)
      return x
    return eager_program()(negations)

  x = openjax.numpy.asarray(np.zeros(10, np.float32))
  short, long = chain(1), chain(21)
  for _ in range(300):
    openjax.block_until_ready(short(x))
    openjax.block_until_ready(long(x))
  t_short, t_long = math.inf, math.inf
  for _ in range(5):   # taking turns: the machine's speed drifts
    t_short = min(t_short, best_time(_openjax_call(short, (x,)), budget / 5, 1e-5))
    t_long = min(t_long, best_time(_openjax_call(long, (x,)), budget / 5, 1e-5))
  step = max(t_long - t_short, 0.0) / 20
  return max(t_short - step, 0.0), step


def floor_bound(r) -> bool:
  """A flagged case whose program is so long that the eager floor alone is
  over the line."""
  f = floor_s(r)
  return f is not None and f > line_s(r)


def _us(s: float | None) -> str:
  if s is None:
    return "-"
  return f"{s * 1e6:.1f} us" if s < 1e-3 else f"{s * 1e3:.2f} ms" if s < 1 else f"{s:.2f} s"


def constant_time_references(results) -> set[str]:
  """Rows whose NumPy reference takes about the same time at 1e5 elements or
  more as at 100x fewer: it returns a view, its input or a constant, where openjax makes
  an array (such rows are flagged by the rule but say little about speed)."""
  by_row: dict[str, list] = {}
  for r in results:
    by_row.setdefault(r["row"], []).append(r)
  out = set()
  for name, cases in by_row.items():
    lo, hi = min(cases, key=lambda r: r["elements"]), max(cases, key=lambda r: r["elements"])
    # (1 us of slack: a view's 0.3 vs 0.7 us is noise, not work)
    if hi["elements"] >= 1e5 and hi["elements"] >= 100 * max(lo["elements"], 1) \
        and hi["numpy_s"] < 2 * lo["numpy_s"] + 1e-6:
      out.add(name)
  return out


def report(results, notes, rows, top: int) -> None:
  with_jax = any("jax_s" in r for r in results)
  constant_refs = constant_time_references(results)
  ranked = sorted(results, key=lambda r: r["openjax_s"] / r["numpy_s"], reverse=True)
  print(f"\n{len(rows)} rows, {len(results)} cases timed; slowest relative to NumPy "
        "(ref O(1): NumPy's reference returns a view or constant):")
  head = f"{'row':44} {'size':>9} {'elements':>9} {'openjax':>10} {'numpy':>10}"
  head += f" {'jax':>10}" if with_jax else ""
  print(head + f" {'ratio':>9}  flag")
  for r in ranked[:top]:
    line = (f"{r['row'][:44]:44} {r['size']:>9} {r['elements']:>9} {_us(r['openjax_s']):>10} "
            f"{_us(r['numpy_s']):>10}")
    line += f" {_us(r.get('jax_s')):>10}" if with_jax else ""
    flag = ("SLOW" if is_slow(r) else "") + (" ref O(1)" if r["row"] in constant_refs else "")
    print(line + f" {r['openjax_s'] / r['numpy_s']:9.1f}  {flag}")
  slow: dict[str, list] = {}
  for r in results:
    if is_slow(r):
      slow.setdefault(r["row"], []).append(r)
  n_cases = sum(len(v) for v in slow.values())
  print(f"\n{n_cases} cases of {len(slow)} rows over max({SLOW_FACTOR:g} x NumPy, NumPy + "
        f"{SLOW_MARGIN_S * 1e6:g} us); per row, the flagged sizes (openjax / NumPy):")
  causes = {}
  fixed = eager_causes.fixed_cost_cases(results)
  for cases in slow.values():
    for r in cases:
      causes[id(r)] = eager_causes.cause_of(r, floor_bound(r), r["row"] in constant_refs,
                                            id(r) in fixed)
  for name in sorted(slow, key=lambda k: -max(r["openjax_s"] / r["numpy_s"] for r in slow[k])):
    sizes = ", ".join(f"{r['size']} {_us(r['openjax_s'])}/{_us(r['numpy_s'])} "
                      + (f"floor({r['eqns']})" if floor_bound(r)
                         else f"[{causes[id(r)] or 'UNEXPLAINED'}]")
                      for r in slow[name])
    print(f"  {name}: {sizes}")
  measured = next((r for r in results if "floor_step_s" in r), {})
  entry_s = measured.get("floor_entry_s", FLOOR_ENTRY_S)
  step_s = measured.get("floor_step_s", FLOOR_STEP_S)
  print(f"\nflagged cases by cause (eager_causes.py; floor: JAX's program has n equations and "
        f"{entry_s * 1e6:.2g} us + n x {step_s * 1e6:.2g} us is over the line"
        + (", measured by the run" if measured else ", session 13's figures") + "):")
  by_cause: dict = {}
  for cases in slow.values():
    for r in cases:
      by_cause.setdefault(causes[id(r)], []).append(r)
  for cause in sorted(by_cause, key=lambda c: (c is None, -len(by_cause[c]))):
    got = by_cause[cause]
    sizes = ", ".join(f"{size} {sum(r['size'] == size for r in got)}"
                      for size in dict.fromkeys(r["size"] for r in got))
    if cause is None:
      print(f"  UNEXPLAINED: {len(got)} ({sizes})")
    else:
      section, text = eager_causes.CAUSES[cause]
      print(f"  {cause}: {len(got)} ({sizes}); section {section}: {text}")
  modules: dict[str, set] = {}
  for r in results:
    modules.setdefault(r["module"], set()).add(r["row"])
  print("\nflagged rows per row module: " + ", ".join(
      f"{m} {len(names & set(slow))}/{len(names)}" for m, names in sorted(modules.items())))
  cases_of: dict[str, int] = {}
  for r in results:
    cases_of[r["row"]] = cases_of.get(r["row"], 0) + 1
  sample_only = sorted(name for name, k in cases_of.items() if k == 1)
  no_ref = [row.name for _, row in rows if row.ref is None]
  print(f"{len(cases_of)} rows timed; {len(sample_only)} only at their sample size (inputs "
        f"not scalable); {len(no_ref)} without a NumPy reference (not timed); "
        f"{len(constant_refs)} with an O(1) NumPy reference")
  for name, label, note in notes:
    print(f"  {name} [{label}]: {note}")


def main(argv=None) -> None:
  # Native crashes were seen (rarely, not reproduced) in sweeps on a loaded
  # machine: print every thread's stack if one happens.
  try:
    faulthandler.enable()
  except (OSError, ValueError):   # io.UnsupportedOperation: stderr is not a file (captured)
    pass
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--quick", action="store_true",
                      help="a first look: 0.001 s a case, sizes 10 and 1e3 (about a minute)")
  parser.add_argument("--only", metavar="PATTERN", help="rows whose name matches (fnmatch)")
  parser.add_argument("--modules", metavar="NAMES",
                      help="row modules to run, comma-separated (e.g. sort,dot for "
                           "tests/ops/rows_sort.py and rows_dot.py)")
  parser.add_argument("--sizes", help="element counts of the largest argument, comma-"
                      "separated (default 10,1e3,1e6; 10,1e3 with --quick)")
  parser.add_argument("--budget", type=float, default=0.005,
                      help="seconds of repeats per implementation and case")
  parser.add_argument("--top", type=int, default=40, help="rows printed in the ranking")
  parser.add_argument("--no-jax", action="store_true", help="skip JAX even when importable")
  parser.add_argument("--json", metavar="FILE", help="write every result to FILE")
  parser.add_argument("--verbose", action="store_true", help="print rows that take over 1 s")
  parser.add_argument("--report", metavar="FILE",
                      help="print the report of an earlier run's --json FILE (no timing)")
  parser.add_argument("--rows-from", metavar="FILE",
                      help="only the rows flagged in an earlier run's --json FILE")
  opts = parser.parse_args(argv)
  if opts.report:
    report(json.loads(Path(opts.report).read_text()), [], load_rows(opts.only, opts.modules),
           opts.top)
    return
  budget = 0.001 if opts.quick else opts.budget
  sizes = opts.sizes or ("10,1e3" if opts.quick else "10,1e3,1e6")
  targets = sorted(float(s) for s in sizes.split(","))
  rows = load_rows(opts.only, opts.modules)
  if opts.rows_from:
    flagged = {r["row"] for r in json.loads(Path(opts.rows_from).read_text()) if is_slow(r)}
    rows = [(module, row) for module, row in rows if row.name in flagged]
  with_jax = jax is not None and not opts.no_jax
  print(f"openjax {openjax.__version__}, NumPy {np.__version__}"
        + (f", JAX {jax.__version__}" if with_jax else ", JAX not installed")
        + f"; {len(rows)} rows, sizes {sizes}, {budget:g} s per case", flush=True)
  floor_before = measure_floor()
  results, notes, t0 = [], [], time.perf_counter()
  module_started = {}
  for i, (module, row) in enumerate(rows):
    if opts.verbose and module not in module_started:
      module_started[module] = time.perf_counter()
      print(f"  rows_{module} from {module_started[module] - t0:.0f} s", flush=True)
    if row.ref is None:
      continue
    t_row = time.perf_counter()
    got, row_notes = sweep_row(module, row, targets, budget, with_jax)
    results += got
    notes += row_notes
    if opts.verbose and time.perf_counter() - t_row > 1:
      print(f"  {row.name}: {time.perf_counter() - t_row:.1f} s", flush=True)
    if (i + 1) % 200 == 0:
      print(f"  {i + 1}/{len(rows)} rows, {time.perf_counter() - t0:.0f} s", flush=True)
  print(f"swept in {time.perf_counter() - t0:.0f} s")
  # The lower of the floors measured before and after the rows: the cheapest
  # the machine ran a program (a case is "floor" only below that).
  entry_s, step_s = min(floor_before, measure_floor(), key=lambda f: f[0] + 20 * f[1])
  print(f"eager floor on this machine: {entry_s * 1e6:.2f} us to enter a library program, "
        f"{step_s * 1e6:.2f} us a step (before the rows: {floor_before[0] * 1e6:.2f} + "
        f"{floor_before[1] * 1e6:.2f})")
  for r in results:
    if "eqns" in r:
      r["floor_entry_s"], r["floor_step_s"] = entry_s, step_s
  report(results, notes, rows, opts.top)
  if opts.json:
    Path(opts.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
  main()
