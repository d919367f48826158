"""Time ``jax.random.normal(key, (10_000_000,))`` jitted against NumPy.

    OPENJAX_EXECUTOR=iree .venv/bin/python benchmarks/random_normal.py   # openjax (IREE)
    /tmp/jaxvenv/bin/python benchmarks/random_normal.py                  # real JAX

Each available library is timed: openjax (when importable; compiled by IREE
when ``OPENJAX_EXECUTOR=iree``, else the jaxpr interpreter), real JAX (when
``import jax`` is JAX itself) and NumPy's ``default_rng().standard_normal``
(PCG64, a different generator: a reference for speed, not values). First
call (trace + compile + run) and the best of the following calls are
printed; nothing is asserted.
"""
from __future__ import annotations

import argparse
import importlib
import time

import numpy as np


def _best(fn, reps: int) -> float:
  best = float("inf")
  for _ in range(reps):
    t0 = time.perf_counter()
    fn()
    best = min(best, time.perf_counter() - t0)
  return best


def _time_jax_like(mod, n: int, reps: int) -> tuple[float, float]:
  key = mod.random.PRNGKey(0)
  f = mod.jit(lambda k: mod.random.normal(k, (n,)))
  t0 = time.perf_counter()
  mod.block_until_ready(f(key))
  first = time.perf_counter() - t0
  return first, _best(lambda: mod.block_until_ready(f(key)), reps)


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--n", type=int, default=10_000_000)
  parser.add_argument("--reps", type=int, default=5)
  args = parser.parse_args()
  rows = []
  for name in ("openjax", "jax"):
    try:
      mod = importlib.import_module(name)
    except ImportError:
      continue
    if name == "jax" and getattr(mod, "__name__", "") != "jax":
      continue
    label = name
    if name == "openjax":
      label += f" ({mod.config.read('openjax_executor')})"
    try:
      first, best = _time_jax_like(mod, args.n, args.reps)
    except NotImplementedError as e:   # a lowering rule still missing
      print(f"{label}: not run: {e}")
      continue
    rows.append((label, first, best))
  rng = np.random.default_rng(0)
  best = _best(lambda: rng.standard_normal(args.n, dtype=np.float32), args.reps)
  rows.append(("numpy (PCG64)", best, best))
  print(f"normal({args.n:,}) float32, best of {args.reps}")
  for label, first, best in rows:
    print(f"  {label:24s} first call {first * 1e3:9.1f} ms   best {best * 1e3:8.1f} ms")


if __name__ == "__main__":
  main()
