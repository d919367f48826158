#!/usr/bin/env python3
"""Time until compiled speed: each jitted program of ``jaxbench.py`` in a fresh process.

Reproduce (JAX only in the benchmark venv, never a dependency):

    nice -n 10 /tmp/jaxvenv/bin/python benchmarks/time_to_speed.py --module openjax,jax \\
        --reps 1 --json ttc.json
    .venv/bin/python benchmarks/time_to_speed.py --module openjax --only dispatch_tiny

openjax's tiered execution runs a new function's first calls through the
interpreter while IREE compiles it in the background, so its first call does
not stall; but the calls only reach compiled speed once the executable is
ready. For every case in ``CASES`` (the program text is ``jaxbench.py``'s,
imported, not copied), in a new Python process with an empty compilation
cache directory (nothing compiled before), we time:

  openjax tiered   (the default) the case called back to back from t0 = just
                   before its first call, each call up to block_until_ready,
                   recording (start, duration), until the compiled executable
                   has served ``AFTER`` calls (or ``--limit`` seconds); then the
                   steady time (median of ``--steady`` more calls).
  openjax off      ``OPENJAX_TIERED_COMPILATION=0``: compile before the first
                   call, like JAX. Its first call (trace + compile + run) is its
                   time until compiled speed.
  jax              the same, JAX's first call (its persistent cache pointed at
                   the empty directory too).

Reported for the tiered run:
  first       the first call's latency;
  switch      end of the first call served after the background compile was
              done (detected exactly: see ``_record``), and the calls before it;
  to speed    end of the first call at compiled speed (duration <= ``--factor``
              x steady + ``--slack-us``) that is either served after the switch
              or followed by calls all at that speed up to the switch (an
              interpreter as fast as the compiled code reaches the speed early);
  lost        the work lost by then: to-speed time - calls done x steady (s),
              also in steady calls.
The ratio column is openjax tiered's time to speed / JAX's first call (JAX is
at compiled speed after its first call). ``--json F`` writes every number
and each tiered run's call trace (at most ``TRACE_KEEP`` calls).
"""
from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import jaxbench  # beside this file; importing it runs no benchmark

# The jitted cases of jaxbench.py (module kind "jax"). Left out: eager_op (no
# jit), mlp_train_step/step_eager_update (its SGD update runs eagerly),
# hessian/eager (un-jitted), compile_time/* (a new function every call).
CASES = ("dispatch_tiny", "fused_elementwise", "matmul/1024", "matmul/2048",
         "mlp_train_step/step", "scan_rnn/fwd", "scan_rnn/grad", "vmap_logprob/fwd",
         "vmap_logprob/grad", "conv2d/fwd", "conv2d/grad", "random_normal", "sort",
         "while_loop", "hessian/jit")
#: Calls recorded after the switch: covers jit_tiers.TierTrial's 2 x 5 calls
#: timing both tiers of a small program before it keeps the faster one.
AFTER = 12
#: Calls of a tiered run's trace kept in --json (first and last halves).
TRACE_KEEP = 300
# label -> (module, mode, environment); openjax compiles with IREE whatever the
# caller's environment says (the test suite's default executor interprets).
VARIANTS = {
    "openjax tiered": ("openjax", "tiered", {"OPENJAX_TIERED_COMPILATION": "1",
                                             "OPENJAX_EXECUTOR": "iree"}),
    "openjax off": ("openjax", "first", {"OPENJAX_TIERED_COMPILATION": "0",
                                         "OPENJAX_EXECUTOR": "iree"}),
    "jax": ("jax", "first", {}),
}

perf = time.perf_counter


# --------------------------------------------------------------------------
# child: one case, one module, one fresh process
# --------------------------------------------------------------------------
def _setup(module: str, cache: str):
  """Import ``module`` as jaxbench's Backend does (with tiering as the
  environment says: Backend would switch it off) and point its persistent
  cache at ``cache``."""
  mod = importlib.import_module(module)
  for sub in ("numpy", "random", "lax", "nn", "tree_util"):
    importlib.import_module(module + "." + sub)
  mod.config.update("jax_compilation_cache_dir", cache)
  if module == "jax":   # cache every module, as openjax does
    mod.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    mod.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
  return mod


def build_case(mod, key: str):
  """jaxbench's ``Case`` for ``key`` ("bench" or "bench/sub") on ``mod``."""
  name, _, sub = key.partition("/")
  cases = jaxbench.REGISTRY[name]["impl"]["jax"](mod)
  return cases[sub] if sub else cases


def _compile_idle(module: str, mode: str):
  """A function telling whether openjax's background compiler has nothing
  queued or running, or None when there is no background compile to watch.

  ``background.wait_idle`` is the compiler's hook for benchmarks (its
  docstring); with timeout 0 it only looks. Its worker clears "running" after
  it has set the compile's Future, and a tiered call takes the executable as
  soon as that Future is done (``JitWrapped._executable``), so a call started
  after ``idle()`` returned True is served by the executable's runner: the
  executable, or for a small program ``jit_tiers.TierTrial``, which times both
  tiers on its first calls and keeps the faster."""
  if module != "openjax" or mode != "tiered":
    return None
  pipeline = importlib.import_module("openjax._src.runtime.pipeline")
  return lambda: pipeline.background.wait_idle(0)


def _record(fn, block, idle, limit: float, after: int):
  """Call ``fn`` back to back from t0 = just before the first call:
  [(start - t0, duration)] and the index of the first call served compiled.

  With ``idle`` None (tiers off, JAX) the first call runs compiled: index 0,
  one call recorded. Else the first call submits the compile; the first call
  that starts while the compiler is idle is the switch. A compile of the case
  submitted before t0 cannot shift it: the caller waits for those first."""
  calls, switch = [], (0 if idle is None else None)
  gc.collect()
  gc_was = gc.isenabled()
  gc.disable()   # as jaxbench's sampling does: no collector pause in one call
  try:
    t0 = perf()
    while True:
      if switch is None and calls and idle():
        switch = len(calls)
      s = perf()
      block(fn())
      e = perf()
      calls.append((s - t0, e - s))
      if switch is not None and len(calls) >= switch + after:
        break
      if e - t0 > limit:
        break
  finally:
    if gc_was:
      gc.enable()
  return calls, switch


def child(module: str, key: str, mode: str, cache: str, limit: float, n_steady: int) -> dict:
  t = perf()
  mod = _setup(module, cache)
  import_s = perf() - t
  case = build_case(mod, key)
  block = jaxbench._make_block(mod)
  idle = _compile_idle(module, mode)
  if idle is not None:
    # compiles the set-up submitted (none expected) must not delay the switch
    importlib.import_module("openjax._src.runtime.pipeline").background.wait_idle(limit)
  calls, switch = _record(case.fn, block, idle, limit, AFTER if idle else 1)
  steady = []
  for _ in range(n_steady):
    s = perf()
    block(case.fn())
    steady.append(perf() - s)
  return {"module": module, "case": key, "mode": mode, "import_s": import_s,
          "version": getattr(mod, "__version__", "?"), "calls": calls, "switch": switch,
          "steady_s": statistics.median(steady), "steady_min_s": min(steady)}


# --------------------------------------------------------------------------
# analysis (pure: the test feeds it made-up traces)
# --------------------------------------------------------------------------
def analyse(calls, switch, steady: float, factor: float = 1.5, slack: float = 1e-5) -> dict:
  """The numbers of one tiered run from its trace ``calls`` [(start, duration)]
  (seconds from t0), the switch index (None: unknown) and the steady time.

  The call at compiled speed: the first within ``factor * steady + slack``
  that is served after the switch, or one before it from which every call
  up to the switch is that fast too (so one lucky interpreted call does not
  count). With no switch known, every call after it must be that fast."""
  at_speed = [d <= factor * steady + slack for _, d in calls]
  end = len(calls) if switch is None else min(switch, len(calls))
  speed = None
  run_to_end = True   # calls i..end-1 all at speed, scanned backwards
  for i in range(end - 1, -1, -1):
    run_to_end = run_to_end and at_speed[i]
    if run_to_end:
      speed = i
  if speed is None and switch is not None:
    speed = next((i for i in range(switch, len(calls)) if at_speed[i]), None)
  first = calls[0][1]
  out = {"first_s": first, "steady_s": steady, "n_calls": len(calls), "switch": switch,
         "switch_s": None, "speed_call": speed, "to_speed_s": None, "lost_s": None,
         "lost_calls": None}
  if switch is not None and switch < len(calls):
    out["switch_s"] = calls[switch][0] + calls[switch][1]
  if speed is not None:
    t = calls[speed][0] + calls[speed][1]
    out["to_speed_s"] = t
    out["lost_s"] = t - (speed + 1) * steady   # the calls done by t, at steady speed
    out["lost_calls"] = out["lost_s"] / steady if steady > 0 else None
  return out


def first_call_numbers(calls, steady: float) -> dict:
  """Tiers off and JAX: compiled from the first call, so that call is the
  time until compiled speed."""
  first = calls[0][1]
  return {"first_s": first, "steady_s": steady, "n_calls": len(calls), "switch": 0,
          "switch_s": first, "speed_call": 0, "to_speed_s": first, "lost_s": first - steady,
          "lost_calls": (first - steady) / steady if steady > 0 else None}


def _trace(calls):
  if len(calls) <= TRACE_KEEP:
    return calls
  return calls[:TRACE_KEEP // 2] + calls[-TRACE_KEEP // 2:]


# --------------------------------------------------------------------------
# parent
# --------------------------------------------------------------------------
def run_case(label: str, key: str, args) -> dict:
  """One sample: ``key`` under variant ``label`` in a fresh process with an
  empty cache directory."""
  module, mode, env_extra = VARIANTS[label]
  env = dict(os.environ, **env_extra)
  with tempfile.TemporaryDirectory(prefix="ttc_cache_") as cache:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", module, key, mode, cache,
           str(args.limit), str(args.steady)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       timeout=args.limit + 600)
  if p.returncode != 0:
    return {"error": p.stderr.strip()[-1500:] or f"exit {p.returncode}"}
  raw = json.loads(p.stdout.strip().splitlines()[-1])
  calls = [tuple(c) for c in raw["calls"]]
  if mode == "tiered":
    res = analyse(calls, raw["switch"], raw["steady_s"], args.factor, args.slack_us * 1e-6)
  else:
    res = first_call_numbers(calls, raw["steady_s"])
  res.update(import_s=raw["import_s"], steady_min_s=raw["steady_min_s"],
             version=raw["version"])
  if mode == "tiered":
    res["trace"] = _trace(calls)
  return res


def _median(samples, field):
  vals = [s[field] for s in samples if s.get(field) is not None]
  return statistics.median(vals) if vals else None


def summarise(samples: list) -> dict:
  ok = [s for s in samples if "error" not in s]
  out = {f: _median(ok, f) for f in ("first_s", "switch_s", "to_speed_s", "steady_s",
                                      "lost_s", "lost_calls", "switch", "speed_call")}
  out["samples"], out["errors"] = len(ok), [s["error"] for s in samples if "error" in s]
  return out


def table(summary: dict, labels) -> str:
  """The printed table: one row per case (times as jaxbench prints them)."""
  fmt_t = jaxbench.fmt_t
  hdr = ("%-22s | %9s %9s %9s %6s %9s %9s | %9s | %9s | %7s"
         % ("case", "first", "switch", "to speed", "calls", "lost", "steady",
            "off first", "jax first", "ratio"))
  lines = ["%-22s | %-64s | %9s | %9s | %7s" % ("", "openjax tiered", "openjax off", "JAX",
                                                "tts/jax"), hdr, "-" * len(hdr)]
  for key, by in summary.items():
    t = by.get("openjax tiered", {})
    off, jx = by.get("openjax off", {}), by.get("jax", {})
    ratio = (t["to_speed_s"] / jx["first_s"]
             if t.get("to_speed_s") is not None and jx.get("first_s") else None)
    calls = "-" if t.get("speed_call") is None else "%d" % t["speed_call"]
    lines.append("%-22s | %9s %9s %9s %6s %9s %9s | %9s | %9s | %7s" % (
        key, fmt_t(t.get("first_s")), fmt_t(t.get("switch_s")), fmt_t(t.get("to_speed_s")),
        calls, fmt_t(t.get("lost_s")) if (t.get("lost_s") or 0) >= 0 else "<0",
        fmt_t(t.get("steady_s")), fmt_t(off.get("first_s")), fmt_t(jx.get("first_s")),
        "-" if ratio is None else "%.2f" % ratio))
    for label in labels:
      for err in by.get(label, {}).get("errors", ()):
        lines.append("    %s error: %s" % (label, err.splitlines()[-1][:150]))
  return "\n".join(lines)


def main(argv=None) -> int:
  argv = sys.argv[1:] if argv is None else argv
  if argv and argv[0] == "--child":
    module, key, mode, cache, limit, n_steady = argv[1:7]
    print(json.dumps(child(module, key, mode, cache, float(limit), int(n_steady))))
    return 0
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--module", default="openjax,jax", help="openjax, jax or both (comma list)")
  ap.add_argument("--only", default=None,
                  help="comma list of case names or prefixes (matmul, scan_rnn/grad)")
  ap.add_argument("--reps", type=int, default=1, help="processes per case and variant (median)")
  ap.add_argument("--limit", type=float, default=60.0,
                  help="seconds a tiered run may wait for its compiled executable")
  ap.add_argument("--steady", type=int, default=10, help="calls timed for the steady time")
  ap.add_argument("--factor", type=float, default=1.5, help="at speed: <= factor x steady ...")
  ap.add_argument("--slack-us", type=float, default=10.0, help="... + this many microseconds")
  ap.add_argument("--json", default=None)
  args = ap.parse_args(argv)
  modules = [m.strip() for m in args.module.split(",") if m.strip()]
  labels = [label for label, (m, _, _) in VARIANTS.items() if m in modules]
  only = [o.strip() for o in args.only.split(",")] if args.only else None
  keys = [k for k in CASES if not only or any(k == o or k.startswith(o) for o in only)]
  raw: dict = {}
  for key in keys:
    for _ in range(args.reps):
      for label in labels:   # interleaved: neighbours see the same machine load
        sample = run_case(label, key, args)
        raw.setdefault(key, {}).setdefault(label, []).append(sample)
        if "error" in sample:
          print("# %s %s: error" % (key, label), file=sys.stderr)
    print("# done %s" % key, file=sys.stderr, flush=True)
  summary = {key: {label: summarise(s) for label, s in by.items()} for key, by in raw.items()}
  print(table(summary, labels))
  if args.json:
    with open(args.json, "w") as fh:
      json.dump({"argv": sys.argv, "python": sys.executable, "factor": args.factor,
                 "slack_us": args.slack_us, "limit_s": args.limit, "after": AFTER,
                 "start_loadavg": os.getloadavg(), "median": summary, "raw": raw}, fh, indent=1)
  return 0


if __name__ == "__main__":
  sys.exit(main())
