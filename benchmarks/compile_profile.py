"""Where IREE's compile time goes for jaxbench's compile_time program.

Lowers the ~50-op function of ``jaxbench.py``'s compile_time case (sin, tanh,
exp, means, transposes, 64x64 products, ...; built by jaxbench itself) with
openjax, then runs the
installed ``iree-compile`` on that module text with openjax's flags
(``compiler.compile_flags``), once plain (wall time) and once with
``--mlir-timing``; prints the number of dispatches IREE forms and the passes
that take the most time, and the wall time of flag variants (opt level,
ukernels, data tiling) so a proposed flag can be judged on numbers.

    python benchmarks/compile_profile.py [--ops 50] [--top 15] [--reps 3]
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(_HERE, ".."), _HERE]

import jaxbench  # noqa: E402
import openjax as jax  # noqa: E402
from openjax._src.runtime import compiler  # noqa: E402
from iree.compiler.tools import binaries  # noqa: E402

VARIANTS = {
    "openjax flags": (),
    "--iree-opt-level=O0": ("--iree-opt-level=O0",),
    "no ukernels": ("--iree-llvmcpu-enable-ukernels=none",),
    "O0 + no ukernels": ("--iree-opt-level=O0", "--iree-llvmcpu-enable-ukernels=none"),
}


def lowered_text(ops: int) -> tuple[str, float]:
  """jaxbench's compile_time program of ``ops`` steps, traced and lowered by
  openjax: (its StableHLO text, seconds taken)."""
  jaxbench.COMPILE_OPS = ops
  cases = jaxbench.REGISTRY["compile_time"]["impl"]["jax"](jax)
  start = time.perf_counter()
  lowered = cases["trace_lower"].fn()
  return lowered.as_text(), time.perf_counter() - start


def run_compile(text: str, flags, extra=()) -> tuple[float, str]:
  tool = binaries.find_tool("iree-compile")
  with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "m.vmfb")
    start = time.perf_counter()
    done = subprocess.run([tool, *flags, *extra, "-", "-o", out], input=text.encode(),
                          capture_output=True)
    elapsed = time.perf_counter() - start
  if done.returncode:
    raise RuntimeError(done.stderr.decode()[-2000:])
  return elapsed, done.stderr.decode()


def dispatch_count(text: str, flags) -> int:
  tool = binaries.find_tool("iree-compile")
  done = subprocess.run([tool, *flags, "--compile-to=flow", "-"], input=text.encode(),
                        capture_output=True)
  return len(re.findall(r"^\s*flow\.executable ", done.stdout.decode(), re.M))


def top_passes(timing: str, top: int):
  """(seconds, name) of the slowest entries of ``--mlir-timing-display=list``."""
  rows = []
  for line in timing.splitlines():
    m = re.match(r"\s*([\d.]+)\s+\(\s*[\d.]+%\)\s+(?:[\d.]+\s+\(\s*[\d.]+%\)\s+)?(.+)$", line)
    if m and "Total" not in m.group(2):
      rows.append((float(m.group(1)), m.group(2).strip()))
  rows.sort(reverse=True)
  return rows[:top]


def main():
  ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  ap.add_argument("--ops", type=int, default=50)
  ap.add_argument("--top", type=int, default=15)
  ap.add_argument("--reps", type=int, default=3)
  args = ap.parse_args()
  text, lower_s = lowered_text(args.ops)
  flags = compiler.compile_flags(text)
  print(f"# {args.ops}-op program: trace + lower {lower_s * 1e3:.1f} ms, "
        f"{len(text.splitlines())} lines of StableHLO")
  print(f"# flags: {' '.join(flags)}")
  print(f"# dispatches formed: {dispatch_count(text, flags)}")
  for name, extra in VARIANTS.items():
    times = [run_compile(text, flags, extra)[0] for _ in range(args.reps)]
    print(f"iree-compile, {name:24s} min {min(times):.3f} s  median "
          f"{sorted(times)[len(times) // 2]:.3f} s")
  _, timing = run_compile(text, flags, ("--mlir-timing", "--mlir-timing-display=list"))
  total = re.search(r"Total Execution Time:\s*([\d.]+)", timing)
  print(f"\n# --mlir-timing (wall {total.group(1) if total else '?'} s): slowest passes")
  for seconds, name in top_passes(timing, args.top):
    print(f"{seconds:8.4f} s  {name}")


if __name__ == "__main__":
  main()
