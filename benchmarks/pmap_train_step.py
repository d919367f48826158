"""Data parallelism over 2 CPU devices, openjax vs JAX (same program text,
same device count): an MLP train step (784-512-512-10, global batch 256,
softmax cross-entropy, SGD) with ``pmap`` and with ``shard_map`` (eager and
under ``jit``), and the cost of one ``psum`` of 1 KB and of 4 MB between the
2 devices inside a compiled per-device program (a program with the psum
minus the same program without it).

    python benchmarks/pmap_train_step.py [--rounds 3]    # both modules, ratios
    python benchmarks/pmap_train_step.py --module jax    # one module (JSON line)

Each module runs in its own process (``XLA_FLAGS`` must be set before JAX
starts); the cases take turns within every repetition and the figure is the
median of the repetitions' per-call times.
"""
from __future__ import annotations

import argparse
import functools
import importlib
import json
import os
import statistics
import subprocess
import sys
import time

MLP_SIZES = (784, 512, 512, 10)
BATCH = 256
LR = 0.01


def _cases(jax, np):
  jnp, lax = jax.numpy, jax.lax
  n = 2
  devices = jax.devices()[:n]
  mesh = jax.sharding.Mesh(np.array(devices), ("d",))
  P = jax.sharding.PartitionSpec
  rs = np.random.default_rng(3)
  params = [((rs.standard_normal((m, k)) * np.sqrt(2.0 / m)).astype(np.float32),
             np.zeros(k, np.float32)) for m, k in zip(MLP_SIZES[:-1], MLP_SIZES[1:])]
  x = rs.standard_normal((BATCH, MLP_SIZES[0])).astype(np.float32)
  y = np.eye(MLP_SIZES[-1], dtype=np.float32)[rs.integers(0, MLP_SIZES[-1], BATCH)]

  def loss(params, x, y):
    h = x
    for w, b in params[:-1]:
      h = jnp.maximum(h @ w + b, 0.0)
    w, b = params[-1]
    logits = h @ w + b
    logp = logits - jax.nn.logsumexp(logits, axis=-1, keepdims=True)
    return -jnp.mean(jnp.sum(y * logp, axis=-1))

  def update(params, x, y):
    grads = lax.pmean(jax.grad(loss)(params, x, y), "d")
    return [(w - LR * gw, b - LR * gb) for (w, b), (gw, gb) in zip(params, grads)]

  # pmap: parameters replicated (a leading axis of 2), the batch split.
  p_step = jax.pmap(update, axis_name="d")
  rep_params = jax.pmap(lambda p: p)(
      [(np.stack([w] * n), np.stack([b] * n)) for w, b in params])
  xs = jax.pmap(lambda v: v)(x.reshape(n, BATCH // n, -1))
  ys = jax.pmap(lambda v: v)(y.reshape(n, BATCH // n, -1))

  # shard_map: parameters replicated (P()), the batch split over 'd'.
  s_step = jax.shard_map(update, mesh=mesh, in_specs=(P(), P("d"), P("d")), out_specs=P())
  js_step = jax.jit(s_step)
  sh = jax.sharding.NamedSharding
  s_params = jax.device_put(params, sh(mesh, P()))
  sx = jax.device_put(x, sh(mesh, P("d")))
  sy = jax.device_put(y, sh(mesh, P("d")))

  cases = {
      "pmap_mlp_train_step": lambda: p_step(rep_params, xs, ys),
      "shard_map_mlp_train_step": lambda: s_step(s_params, sx, sy),
      "jit_shard_map_mlp_train_step": lambda: js_step(s_params, sx, sy),
  }
  for label, nbytes in (("1KB", 1024), ("4MB", 4 << 20)):
    v = jax.pmap(lambda a: a)(np.ones((n, nbytes // 4), np.float32))
    with_psum = jax.pmap(lambda a: lax.psum(a * 1.5, "d") + 1.0, axis_name="d")
    without = jax.pmap(lambda a: (a * 1.5) + 1.0, axis_name="d")
    cases[f"program_with_psum_{label}"] = functools.partial(with_psum, v)
    cases[f"program_without_psum_{label}"] = functools.partial(without, v)
  return cases


def run_module(name: str, reps: int) -> dict:
  os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
  os.environ.setdefault("OPENJAX_EXECUTOR", "iree")
  os.environ["OPENJAX_TIERED_COMPILATION"] = "0"
  # The module under test first, then NumPy (``import jax`` then ``import
  # numpy as np``, as JAX's docs write it): openjax then sets up NumPy's
  # OpenBLAS threads to sleep after a call (openjax/_src/blas_threads.py).
  # NUMPY_FIRST=1 imports NumPy first: OpenBLAS's threads then spin after the
  # eager shard_map case's products and slow the compiled cases after it.
  if os.environ.get("NUMPY_FIRST"):
    importlib.import_module("numpy")
  jax = importlib.import_module(name)
  import numpy as np
  importlib.import_module(f"{name}.numpy")
  cases = _cases(jax, np)
  first = {}
  for label, fn in cases.items():
    t0 = time.perf_counter()
    jax.block_until_ready(fn())
    first[label] = time.perf_counter() - t0
    for _ in range(3):
      jax.block_until_ready(fn())
  # calls per sample: enough for a few ms
  number = {}
  for label, fn in cases.items():
    t0 = time.perf_counter()
    jax.block_until_ready(fn())
    one = time.perf_counter() - t0
    number[label] = max(1, min(200, int(0.01 / max(one, 1e-6))))
  samples = {label: [] for label in cases}
  for _ in range(reps):
    for label, fn in cases.items():
      k = number[label]
      t0 = time.perf_counter()
      for _ in range(k):
        jax.block_until_ready(fn())
      samples[label].append((time.perf_counter() - t0) / k)
  out = {label: {"median_s": statistics.median(s), "min_s": min(s), "first_call_s": first[label]}
         for label, s in samples.items()}
  for label in ("1KB", "4MB"):
    out[f"psum_{label}_cost"] = {
        "median_s": out[f"program_with_psum_{label}"]["median_s"]
        - out[f"program_without_psum_{label}"]["median_s"]}
  return out


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--module", default=None)
  ap.add_argument("--reps", type=int, default=15)
  ap.add_argument("--rounds", type=int, default=3)
  args = ap.parse_args()
  if args.module:
    print(json.dumps(run_module(args.module, args.reps)))
    return
  # The modules take turns (openjax, jax, openjax, ...): a change in the
  # machine's load hits both; each case keeps its best round's median.
  results = {"openjax": {}, "jax": {}}
  for _ in range(args.rounds):
    for name, python in (("openjax", sys.executable),
                         ("jax", os.environ.get("JAX_PYTHON", "/tmp/jaxvenv/bin/python"))):
      proc = subprocess.run([python, __file__, "--module", name, "--reps", str(args.reps)],
                            capture_output=True, text=True, check=True)
      got = json.loads(proc.stdout.strip().splitlines()[-1])
      for label, row in got.items():
        best = results[name].get(label)
        if best is None or row["median_s"] < best["median_s"]:
          results[name][label] = row
  for name in results:   # the psum costs from the best rounds' programs
    for label in ("1KB", "4MB"):
      results[name][f"psum_{label}_cost"] = {
          "median_s": results[name][f"program_with_psum_{label}"]["median_s"]
          - results[name][f"program_without_psum_{label}"]["median_s"]}
  print(f"{'case':34s} {'openjax ms':>11s} {'jax ms':>9s} {'ratio':>7s}")
  for label in results["openjax"]:
    a = results["openjax"][label]["median_s"] * 1e3
    b = results["jax"][label]["median_s"] * 1e3
    ratio = a / b if b > 0 else float("nan")
    print(f"{label:34s} {a:11.3f} {b:9.3f} {ratio:7.2f}")


if __name__ == "__main__":
  main()
