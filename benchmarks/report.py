#!/usr/bin/env python3
"""A markdown table of openjax/JAX and openjax/NumPy ratios from jaxbench runs.

    python benchmarks/report.py run1.json run2.json [--first-call first_call.json]

Each JSON is written by ``jaxbench.py --module openjax,jax,numpy --json FILE``.
Ratios are median time(openjax) / median time(other) within one run (the
cases are interleaved, so neighbours in time are compared); the performance
issue's target is printed beside each case it names.
"""
from __future__ import annotations

import argparse
import json

#: openjax/JAX targets of the performance issue (lower is better).
TARGETS = {
    "dispatch_tiny": 1.0, "eager_op": 0.1, "fused_elementwise": 0.2, "matmul/1024": 1.0,
    "matmul/2048": 1.0, "mlp_train_step/step": 1.0, "scan_rnn/fwd": 1.0, "scan_rnn/grad": 1.0,
    "conv2d/fwd": 1.0, "conv2d/grad": 1.0, "vmap_logprob/fwd": 1.0, "vmap_logprob/grad": 1.0,
    "random_normal": 1.0, "sort": 1.0,
}


def _medians(path: str) -> tuple[dict, dict]:
  with open(path) as fh:
    data = json.load(fh)
  by: dict = {}
  for r in data["results"]:
    if "median_s" in r:
      by.setdefault(r["case"], {})[r["module"]] = r["median_s"]
  return by, data.get("meta", {})


def _fmt_time(s: float) -> str:
  if s < 1e-3:
    return f"{s * 1e6:.2f} us"
  if s < 1:
    return f"{s * 1e3:.2f} ms"
  return f"{s:.3f} s"


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("runs", nargs="+")
  ap.add_argument("--first-call", default=None)
  args = ap.parse_args(argv)
  runs = [_medians(p) for p in args.runs]
  cases = list(runs[0][0])
  head = ["case", "target"]
  for i in range(len(runs)):
    head += [f"openjax (run {i + 1})", f"JAX (run {i + 1})", f"openjax/JAX (run {i + 1})"]
  head += ["openjax/NumPy (run 1)"]
  print("| " + " | ".join(head) + " |")
  print("|" + "---|" * len(head))
  for case in cases:
    row = [case, str(TARGETS.get(case, "-"))]
    for by, _ in runs:
      d = by.get(case, {})
      oj, jx = d.get("openjax"), d.get("jax")
      row += [_fmt_time(oj) if oj else "-", _fmt_time(jx) if jx else "-",
              f"{oj / jx:.3f}" if oj and jx else "-"]
    d = runs[0][0].get(case, {})
    row.append(f"{d['openjax'] / d['numpy']:.3f}" if "openjax" in d and "numpy" in d else "-")
    print("| " + " | ".join(row) + " |")
  if args.first_call:
    with open(args.first_call) as fh:
      med = json.load(fh)["median"]
    jax_cold, jax_warm = med["jax"]["cold"], med["jax"]["warm"]
    print("\n| first call of a new jitted MLP step (fresh process) | target | openjax | JAX |"
          " openjax/JAX |")
    print("|---|---|---|---|---|")
    for label, m in med.items():
      if not label.startswith("openjax"):
        continue
      print(f"| {label}, empty disk cache | 1.5 | {_fmt_time(m['cold'])} | "
            f"{_fmt_time(jax_cold)} | {m['cold'] / jax_cold:.3f} |")
      print(f"| {label}, warm disk cache | 0.3 | {_fmt_time(m['warm'])} | "
            f"{_fmt_time(jax_warm)} | {m['warm'] / jax_warm:.3f} |")
  return 0


if __name__ == "__main__":
  raise SystemExit(main())
