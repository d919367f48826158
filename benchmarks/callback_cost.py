"""The cost of one host callback in a compiled (IREE) program.

  python benchmarks/callback_cost.py [--module openjax|jax] [--reps 7]

Three measurements, each the minimum over ``--reps`` runs of a timed loop:

* ``loop``: a ``fori_loop`` of N iterations calling ``io_callback`` (a
  Python function returning its operand) against the same loop without the
  callback: (with - without) / N is the cost of one call from inside a
  compiled loop.
* ``tiny``: ``jit(lambda x: x + 1)`` with and without a ``jax.debug.callback``
  of a no-op function: the cost one callback adds to a small program (which
  openjax runs inline, on the ``local-sync`` device).
* ``task``: the same on a program large enough to run on the ``local-task``
  device (a 256x256 matrix product), where the callback waits for worker
  threads.

The same code runs under JAX (``--module jax``) for comparison.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import time

import numpy as np

N_LOOP = 1000


def _best(fn, reps: int, number: int) -> float:
  fn()   # warm up (compiles)
  best = float("inf")
  for _ in range(reps):
    t0 = time.perf_counter()
    for _ in range(number):
      fn()
    best = min(best, (time.perf_counter() - t0) / number)
  return best


def measure(module: str, reps: int) -> dict:
  if module == "openjax":
    os.environ.setdefault("OPENJAX_TIERED_COMPILATION", "0")
  jax = importlib.import_module(module)
  jnp = importlib.import_module(f"{module}.numpy")
  io_callback = importlib.import_module(f"{module}.experimental").io_callback
  lax = jax.lax
  spec = jax.ShapeDtypeStruct((), np.float32)

  def identity(x):
    return x

  def noop(x):
    return None

  @jax.jit
  def loop_with(x):
    return lax.fori_loop(0, N_LOOP, lambda i, c: io_callback(identity, spec, c) + 1.0, x)

  @jax.jit
  def loop_without(x):
    return lax.fori_loop(0, N_LOOP, lambda i, c: c + 1.0, x)

  def with_cb(f):
    def g(x):
      jax.debug.callback(noop, x)
      return f(x)
    return g

  tiny = lambda x: x + 1.0  # noqa: E731
  task = lambda m: m @ m  # noqa: E731
  x = jnp.float32(0.0)
  m = jnp.asarray(np.random.default_rng(0).normal(size=(256, 256)).astype(np.float32))
  fns = {
      "loop_with": lambda: loop_with(x).block_until_ready(),
      "loop_without": lambda: loop_without(x).block_until_ready(),
      "tiny_with": (lambda f: lambda: f(x).block_until_ready())(jax.jit(with_cb(tiny))),
      "tiny_without": (lambda f: lambda: f(x).block_until_ready())(jax.jit(tiny)),
      "task_with": (lambda f: lambda: f(m).block_until_ready())(jax.jit(with_cb(task))),
      "task_without": (lambda f: lambda: f(m).block_until_ready())(jax.jit(task)),
  }
  numbers = {"loop": 3, "tiny": 2000, "task": 200}
  t = {k: _best(f, reps, numbers[k.split("_")[0]]) for k, f in fns.items()}
  return {
      "module": module,
      "per_call_in_loop_us": (t["loop_with"] - t["loop_without"]) / N_LOOP * 1e6,
      "tiny_us": {"with": t["tiny_with"] * 1e6, "without": t["tiny_without"] * 1e6},
      "task_us": {"with": t["task_with"] * 1e6, "without": t["task_without"] * 1e6},
      "added_by_one_callback_us": {"tiny": (t["tiny_with"] - t["tiny_without"]) * 1e6,
                                   "task": (t["task_with"] - t["task_without"]) * 1e6},
  }


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--module", default="openjax", choices=("openjax", "jax"))
  parser.add_argument("--reps", type=int, default=7)
  parser.add_argument("--json", default=None, help="write the results here too")
  args = parser.parse_args()
  result = measure(args.module, args.reps)
  text = json.dumps(result, indent=1)
  print(text)
  if args.json:
    with open(args.json, "w") as f:
      f.write(text + "\n")


if __name__ == "__main__":
  main()
