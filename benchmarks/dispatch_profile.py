"""Where a jaxbench case's compiled program spends its time, per IREE dispatch.

    python benchmarks/dispatch_profile.py mlp_train_step/step [--calls 50] [--workers 1]

Runs the case once under openjax to capture the last jitted call (its
StableHLO and arguments), compiles that module with the flags openjax uses,
then runs it under ``iree-benchmark-module`` with HAL host-execution
profiling and prints each dispatch's mean time per call (``iree-profile
statistics``) and its share. With one worker (the default) the shares
attribute a call's work cleanly; times are wall-clock per dispatch, so on a
busy machine they stretch together and the shares still hold.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.argv, _ARGV = sys.argv[:1], sys.argv   # jaxbench parses sys.argv at import
import jaxbench  # noqa: E402
sys.argv = _ARGV

import openjax  # noqa: E402
from openjax._src.runtime import compiler  # noqa: E402

_UNITS = {"s": 1e3, "ms": 1.0, "us": 1e-3, "ns": 1e-6}


def capture(case: str):
  """(StableHLO text, NumPy arguments) of the last jitted call the case makes."""
  name, _, sub = case.partition("/")
  calls = []
  jit = openjax.jit

  def recording_jit(fun, *args, **kwargs):
    wrapped = jit(fun, *args, **kwargs)

    def call(*call_args):
      calls.append((wrapped, call_args))
      return wrapped(*call_args)
    return call
  openjax.jit = recording_jit
  try:
    openjax.config.update("openjax_tiered_compilation", False)
    built = jaxbench.REGISTRY[name]["impl"]["jax"](openjax)
    chosen = built[sub] if isinstance(built, dict) else built
    chosen.fn()
  finally:
    openjax.jit = jit
  if not calls:
    raise SystemExit(f"dispatch_profile: case {case!r} made no jitted call")
  wrapped, call_args = calls[-1]
  leaves = [np.asarray(x) for x in openjax.tree_util.tree_leaves(call_args)]
  return wrapped.lower(*call_args).as_text(), leaves


def tool(name: str) -> str:
  return os.path.join(os.path.dirname(sys.executable), name)


def profile(text: str, args, calls: int, workers: int, directory: str) -> list[tuple[float, str]]:
  src, vmfb, prof = (os.path.join(directory, n) for n in ("m.mlir", "m.vmfb", "p.ireeprof"))
  with open(src, "w") as f:
    f.write(text)
  # The synchronous ABI: iree-benchmark-module passes no fences; codegen is unchanged.
  flags = [f for f in compiler.compile_flags(text) if "execution-model" not in f]
  subprocess.run([tool("iree-compile"), *flags, src, "-o", vmfb], check=True)
  inputs = []
  for i, a in enumerate(args):
    path = os.path.join(directory, f"in{i}.npy")
    np.save(path, a)
    inputs.append(f"--input=@{path}")
  subprocess.run([tool("iree-benchmark-module"), f"--module={vmfb}", "--device=local-task",
                  f"--task_topology_max_group_count={workers}", "--function=main", *inputs,
                  "--device_profiling_mode=host-execution", f"--device_profiling_output={prof}",
                  f"--benchmark_min_time={calls}x"], check=True, capture_output=True)
  stats = subprocess.run([tool("iree-profile"), "statistics", prof], check=True,
                         capture_output=True, text=True).stdout
  rows = []
  for line in stats.splitlines():
    fields = line.split()
    if len(fields) < 3 or fields[0] != "host_execute":
      continue
    m = re.search(r"total=([0-9.]+) (s|ms|us|ns)", line)
    if m:
      rows.append((float(m.group(1)) * _UNITS[m.group(2)] / calls, fields[1]))
  return sorted(rows, reverse=True)


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("case", help="jaxbench case, e.g. matmul/1024 or mlp_train_step/step")
  ap.add_argument("--calls", type=int, default=50)
  ap.add_argument("--workers", type=int, default=1)
  ap.add_argument("--top", type=int, default=15)
  a = ap.parse_args()
  text, args = capture(a.case)
  with tempfile.TemporaryDirectory() as d:
    rows = profile(text, args, a.calls, a.workers, d)
  total = sum(t for t, _ in rows)
  flags = compiler.compile_flags(text)[len(compiler.BASE_FLAGS):]
  print(f"# {a.case}: {len(rows)} dispatches, {total:.3f} ms a call in dispatches "
        f"({a.workers} worker(s)); flags beyond the base set: {' '.join(flags)}")
  for t, name in rows[:a.top]:
    print(f"{t:9.3f} ms  {100 * t / total:5.1f}%  {name}")


if __name__ == "__main__":
  main()
