#!/usr/bin/env python3
"""First call of a new jitted MLP training step, each in a fresh process.

    /tmp/jaxvenv/bin/python benchmarks/first_call.py --module openjax,jax [--reps 3]

The venv must have both ``jax`` and ``openjax`` installed (JAX only in a
benchmark venv, never in the test dependencies). For every module the same
program text (the ``mlp_train_step`` case of ``jaxbench.py``: 784-512-512-10,
batch 256, ``jit(grad + SGD update)``) runs in a new Python process and we time
``step(params, x, y)`` up to ``block_until_ready`` (trace + compile + run;
imports and data set-up excluded), then a second call (steady state).

Rows:
  cold   an empty persistent compilation cache (a fresh directory);
  warm   the same directory again, now filled by the cold run.
openjax runs with tiered execution (its default: the first calls are
interpreted while IREE compiles in the background; a cache hit runs compiled
at once) and with ``--tiered off`` semantics too (``OPENJAX_TIERED_COMPILATION=0``:
compile before the first call, like JAX). JAX's persistent cache is switched on
for both of its rows with thresholds at zero so every module is cached.
Medians over ``--reps`` process pairs; ratios openjax/JAX at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap

PROGRAM = textwrap.dedent("""
    import json, math, sys, time
    import numpy as np
    MODULE, CACHE = sys.argv[1], sys.argv[2]
    t_import = time.perf_counter()
    jax = __import__(MODULE)
    import importlib
    jnp = importlib.import_module(MODULE + ".numpy")
    importlib.import_module(MODULE + ".nn")
    if MODULE == "jax":
      jax.config.update("jax_compilation_cache_dir", CACHE)
      jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
      jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    else:
      jax.config.update("jax_compilation_cache_dir", CACHE)
    t_import = time.perf_counter() - t_import

    sizes, batch, lr = (784, 512, 512, 10), 256, 0.01
    rs = np.random.default_rng(3)
    params = [(jnp.asarray((rs.standard_normal((m, n)) * math.sqrt(2.0 / m)).astype(np.float32)),
               jnp.asarray(np.zeros(n, np.float32))) for m, n in zip(sizes[:-1], sizes[1:])]
    x = jnp.asarray(rs.standard_normal((batch, sizes[0])).astype(np.float32))
    y = jnp.asarray(np.eye(sizes[-1], dtype=np.float32)[rs.integers(0, sizes[-1], batch)])

    def loss(params, x, y):
      h = x
      for w, b in params[:-1]:
        h = jax.nn.relu(h @ w + b)
      w, b = params[-1]
      logits = h @ w + b
      return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))

    @jax.jit
    def step(params, x, y):
      grads = jax.grad(loss)(params, x, y)
      return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)

    t = time.perf_counter()
    out = step(params, x, y)
    jax.block_until_ready(out)
    first = time.perf_counter() - t
    t = time.perf_counter()
    jax.block_until_ready(step(out, x, y))
    second = time.perf_counter() - t
    print(json.dumps({"first_s": first, "second_s": second, "import_s": t_import}))
""")


def _run(module: str, cache: str, env_extra: dict) -> dict:
  env = dict(os.environ, **env_extra)
  p = subprocess.run([sys.executable, "-c", PROGRAM, module, cache], capture_output=True,
                     text=True, env=env, timeout=600)
  if p.returncode != 0:
    raise RuntimeError(f"{module}: {p.stderr[-2000:]}")
  return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
  ap = argparse.ArgumentParser(description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
  ap.add_argument("--module", default="openjax,jax")
  ap.add_argument("--reps", type=int, default=3)
  ap.add_argument("--json", default=None)
  args = ap.parse_args(argv)
  variants = []
  for m in args.module.split(","):
    m = m.strip()
    if m == "openjax":
      variants.append(("openjax", "openjax (tiered)", {"OPENJAX_TIERED_COMPILATION": "1"}))
      variants.append(("openjax", "openjax (compile first)", {"OPENJAX_TIERED_COMPILATION": "0"}))
    else:
      variants.append((m, m, {}))
  results: dict = {}
  for _ in range(args.reps):
    for module, label, env in variants:   # interleaved: neighbours see the same load
      with tempfile.TemporaryDirectory() as cache:
        cold = _run(module, cache, env)
        warm = _run(module, cache, env)
      r = results.setdefault(label, {"cold": [], "warm": [], "second": [], "import": []})
      r["cold"].append(cold["first_s"])
      r["warm"].append(warm["first_s"])
      r["second"].append(warm["second_s"])
      r["import"].append(cold["import_s"])
  print(f"{'variant':26s} {'cold first':>11s} {'warm first':>11s} {'2nd call':>10s} {'import':>8s}")
  med = {}
  for label, r in results.items():
    med[label] = {k: statistics.median(v) for k, v in r.items()}
    m = med[label]
    print(f"{label:26s} {m['cold'] * 1e3:9.1f}ms {m['warm'] * 1e3:9.1f}ms "
          f"{m['second'] * 1e3:8.2f}ms {m['import']:7.2f}s")
  if "jax" in med:
    print("\n# ratios openjax/JAX (first call; lower is better)")
    for label in med:
      if label.startswith("openjax"):
        print(f"{label:26s} cold {med[label]['cold'] / med['jax']['cold']:.3f}   "
              f"warm {med[label]['warm'] / med['jax']['warm']:.3f}")
  if args.json:
    with open(args.json, "w") as fh:
      json.dump({"raw": results, "median": med}, fh, indent=1)
  return 0


if __name__ == "__main__":
  sys.exit(main())
