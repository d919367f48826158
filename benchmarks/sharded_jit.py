"""Sharded jit: the same sharded programs under openjax and JAX.

    /tmp/jaxvenv/bin/python benchmarks/sharded_jit.py --module openjax,jax --devices 2 \
        [--json out.json]        # openjax importable there (PYTHONPATH=. or pip install -e .)
    python benchmarks/sharded_jit.py --compare out.json ...   # openjax/JAX table

Cases (inputs split over a 1-d mesh ``x`` of ``--devices`` CPU devices):
  elementwise  6 steps of sin/cos/mul/add over f32[2,10M] split P(None, 'x');
  matmul       f32[2048,2048] split P('x', None) @ a replicated f32[2048,2048];
  mlp_step     a data-parallel train step (value_and_grad of an MSE loss of a
               3-layer tanh MLP, 512 -> 1024 -> 1024 -> 10, SGD update) on a
               batch of 1024 split P('x', None), parameters replicated.
Reports the median wall time per call, and the process CPU time per wall
second while sampling (2.0: both cores busy). openjax runs compiled code
(tiered execution off), as JAX does.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time


def _parse():
  p = argparse.ArgumentParser()
  p.add_argument("--module", default="openjax")
  p.add_argument("--devices", type=int, default=2)
  p.add_argument("--reps", type=int, default=15)
  p.add_argument("--only", default="")
  p.add_argument("--json", default="")
  p.add_argument("--compare", nargs="*")
  return p.parse_args()


def _cases(jax, jnp, np):
  NamedSharding, P = jax.sharding.NamedSharding, jax.sharding.PartitionSpec
  mesh = jax.make_mesh((len(jax.devices()),), ("x",))
  rng = np.random.default_rng(0)

  def put(x, *spec):
    return jax.device_put(x, NamedSharding(mesh, P(*spec)))

  def elementwise(x):
    for _ in range(6):
      x = jnp.sin(x) * 1.0001 + jnp.cos(x)
    return x

  def matmul(a, b):
    return a @ b

  def mlp_loss(params, x, y):
    h = x
    for w, b in params[:-1]:
      h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    return jnp.mean((h @ w + b - y) ** 2)

  def mlp_step(params, x, y):
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
    params = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
    return params, loss

  sizes = (512, 1024, 1024, 10)
  params = [(put((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)),
             put(np.zeros((n,), np.float32))) for m, n in zip(sizes[:-1], sizes[1:])]
  return {
      "elementwise": (jax.jit(elementwise),
                      (put(rng.standard_normal((2, 10_000_000)).astype(np.float32), None, "x"),)),
      "matmul": (jax.jit(matmul),
                 (put(rng.standard_normal((2048, 2048)).astype(np.float32), "x", None),
                  put(rng.standard_normal((2048, 2048)).astype(np.float32)))),
      "mlp_step": (jax.jit(mlp_step),
                   (params, put(rng.standard_normal((1024, 512)).astype(np.float32), "x", None),
                    put(rng.standard_normal((1024, 10)).astype(np.float32), "x", None))),
  }


def run(args) -> list:
  """Every case under every module of ``--module`` (comma-separated), in one
  process, the modules taking turns call by call (so a change in the
  machine's load hits all of them alike)."""
  os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={args.devices}"
  os.environ["OPENJAX_TIERED_COMPILATION"] = "0"
  import importlib
  import numpy as np
  modules = args.module.split(",")
  cases = {}
  for m in modules:
    jax = importlib.import_module(m)
    cases[m] = (jax, _cases(jax, importlib.import_module(m + ".numpy"), np))
  results = {m: {"module": m, "devices": args.devices, "cases": {}} for m in modules}
  for name in cases[modules[0]][1]:
    if args.only and name not in args.only.split(","):
      continue
    walls = {m: [] for m in modules}
    cpus = {m: 0.0 for m in modules}
    firsts = {}
    for m in modules:
      jax, (fn, fargs) = cases[m][0], cases[m][1][name]
      t0 = time.perf_counter()
      jax.block_until_ready(fn(*fargs))
      firsts[m] = time.perf_counter() - t0
      for _ in range(2):
        jax.block_until_ready(fn(*fargs))
    for _ in range(args.reps):
      for m in modules:
        jax, (fn, fargs) = cases[m][0], cases[m][1][name]
        c, t = time.process_time(), time.perf_counter()
        jax.block_until_ready(fn(*fargs))
        walls[m].append(time.perf_counter() - t)
        cpus[m] += time.process_time() - c
    for m in modules:
      w = walls[m]
      util = cpus[m] / sum(w)
      results[m]["cases"][name] = {"median_s": statistics.median(w), "min_s": min(w),
                                   "first_s": firsts[m], "cpu_util": util}
      print(f"{m:8s} {args.devices}dev {name:12s} median {statistics.median(w)*1e3:9.3f} ms"
            f"  min {min(w)*1e3:9.3f} ms  first {firsts[m]:6.2f} s  cpu {util:4.2f}", flush=True)
  return list(results.values())


def compare(paths) -> None:
  runs = [r for p in paths for r in json.load(open(p))]
  ours = [r for r in runs if r["module"] == "openjax"]
  theirs = {r["devices"]: r for r in runs if r["module"] == "jax"}
  print("| case | devices | openjax ms (cpu) | JAX ms (cpu) | openjax/JAX |")
  print("|---|---|---|---|---|")
  for r in ours:
    j = theirs.get(r["devices"])
    for name, c in r["cases"].items():
      if j is None or name not in j["cases"]:
        continue
      d = j["cases"][name]
      print(f"| {name} | {r['devices']} | {c['median_s']*1e3:.2f} ({c['cpu_util']:.2f}) | "
            f"{d['median_s']*1e3:.2f} ({d['cpu_util']:.2f}) | {c['median_s']/d['median_s']:.2f} |")


if __name__ == "__main__":
  a = _parse()
  if a.compare:
    compare(a.compare)
    sys.exit(0)
  result = run(a)
  if a.json:
    with open(a.json, "w") as f:
      json.dump(result, f, indent=1)
