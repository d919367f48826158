"""Two CPU devices at once: the same compiled program on devices 0 and 1,
one after the other vs both in flight, with the CPU time of the whole
process (all worker threads) per wall second ("cores busy").

    python benchmarks/devices_parallel.py [--size 10000000] [--reps 5] [--json out.json]

Workloads:
  elementwise  a chain of sin/cos/mul/add over ``--size`` float32s (one
               large dispatch per op: a single call already spreads over
               every worker);
  small_chain  64 dependent 96x96 matmul+tanh steps (small dispatches that
               leave workers idle between them: here two devices fill gaps);
  latency      a tiny call on device 1 issued right after a long elementwise
               call on device 0, vs the same tiny call queued on device 0.

Runs with 2 devices unless XLA_FLAGS already sets a count; tiered execution
is off so every timed call is compiled code.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
os.environ["OPENJAX_TIERED_COMPILATION"] = "0"
os.environ.setdefault("OPENJAX_EXECUTOR", "iree")

import numpy as np  # noqa: E402

import openjax as jax  # noqa: E402
import openjax.numpy as jnp  # noqa: E402


def elementwise(x):
  for _ in range(6):
    x = jnp.sin(x) * 1.0001 + jnp.cos(x)
  return x


def small_chain(x, w):
  for _ in range(64):
    x = jnp.tanh(x @ w)
  return x


def timed(modes: dict, reps: int) -> dict:
  """Wall and process CPU seconds of each ``modes[label]()``: the best run
  and the median. The modes take turns within each repetition, so a change
  in the machine's load hits all of them alike."""
  walls = {label: [] for label in modes}
  cpus = {label: [] for label in modes}
  for _ in range(reps):
    for label, fn in modes.items():
      c0, t0 = time.process_time(), time.perf_counter()
      fn()
      walls[label].append(time.perf_counter() - t0)
      cpus[label].append(time.process_time() - c0)
  rows = {}
  for label in modes:
    w, c = walls[label], cpus[label]
    best = min(range(reps), key=w.__getitem__)
    rows[label] = {"wall_s": w[best], "cpu_s": c[best], "cores_busy": c[best] / w[best],
                   "median_wall_s": statistics.median(w)}
  return rows


def compare(name: str, call, args0, args1, reps: int) -> dict:
  """One call; the two devices one after the other; two calls queued on
  device 0; devices 0 and 1 both in flight."""
  jax.block_until_ready((call(*args0), call(*args1)))    # compiled and loaded on both
  rows = timed({
      "one call (device 0)": lambda: call(*args0).block_until_ready(),
      "sequential d0 then d1": lambda: (call(*args0).block_until_ready(),
                                        call(*args1).block_until_ready()),
      "two queued on d0": lambda: jax.block_until_ready((call(*args0), call(*args0))),
      "concurrent d0 || d1": lambda: jax.block_until_ready((call(*args0), call(*args1))),
  }, reps)
  seq, par = rows["sequential d0 then d1"], rows["concurrent d0 || d1"]
  print(f"\n{name}")
  for label, r in rows.items():
    print(f"  {label:24s} wall {r['wall_s'] * 1e3:8.1f} ms (median {r['median_wall_s'] * 1e3:8.1f})"
          f"  cpu {r['cpu_s'] * 1e3:8.1f} ms  cores busy {r['cores_busy']:.2f}")
  speedup = seq["wall_s"] / par["wall_s"]
  print(f"  speedup concurrent vs sequential: {speedup:.2f}x (medians: "
        f"{seq['median_wall_s'] / par['median_wall_s']:.2f}x)")
  return {"rows": rows, "speedup": speedup}


def latency(big, x0, tiny, t0_arr, t1_arr, reps: int) -> dict:
  """A tiny call issued right after a long call on device 0: on device 1 it
  does not wait for the long one; queued on device 0 it does."""
  def measure(tiny_arg):
    waits = []
    for _ in range(reps):
      long_call = big(x0)
      t = time.perf_counter()
      tiny(tiny_arg).block_until_ready()
      waits.append(time.perf_counter() - t)
      long_call.block_until_ready()
    return min(waits)
  jax.block_until_ready((tiny(t0_arr), tiny(t1_arr)))
  other, same = measure(t1_arr), measure(t0_arr)
  print(f"\nlatency of a tiny call issued behind a long call on device 0:"
        f"\n  on device 1: {other * 1e3:8.2f} ms\n  on device 0: {same * 1e3:8.2f} ms")
  return {"tiny_on_other_device_s": other, "tiny_on_same_device_s": same}


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--size", type=int, default=10_000_000)
  parser.add_argument("--reps", type=int, default=5)
  parser.add_argument("--json")
  opts = parser.parse_args()
  d0, d1 = jax.devices()[:2]
  print(f"{len(jax.devices())} devices, {len(os.sched_getaffinity(0))} cores, "
        f"load average {os.getloadavg()[0]:.2f}")
  host = np.linspace(0, 1, opts.size, dtype=np.float32)
  big = jax.jit(elementwise)
  x0, x1 = jax.device_put(host, d0), jax.device_put(host, d1)
  report = {"elementwise": compare(f"elementwise chain over {opts.size:,} float32", big,
                                   (x0,), (x1,), opts.reps)}
  rng = np.random.default_rng(0)
  h = rng.standard_normal((96, 96)).astype(np.float32) * 0.1
  w = rng.standard_normal((96, 96)).astype(np.float32) * 0.1
  chain = jax.jit(small_chain)
  args0 = (jax.device_put(h, d0), jax.device_put(w, d0))
  args1 = (jax.device_put(h, d1), jax.device_put(w, d1))
  report["small_chain"] = compare("64 dependent 96x96 matmul+tanh steps", chain, args0, args1,
                                  opts.reps * 4)
  tiny = jax.jit(lambda a: a @ a)
  report["latency"] = latency(big, x0, tiny, jax.device_put(h, d0), jax.device_put(h, d1),
                              opts.reps)
  if opts.json:
    with open(opts.json, "w") as f:
      json.dump(report, f, indent=1)


if __name__ == "__main__":
  main()
