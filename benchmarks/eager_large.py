"""Eager calls on large arrays: time per call and the page faults each call
takes (first writes to fresh memory from the kernel; ~5 us a 4 KiB page on
the project's VMs). Cases: JAX's ``linspace`` of arrays (steps over broadcast
values: ``core/compact_steps.py``) and elementwise chains of 1e7 float32
(large results reusing freed memory: ``core/memory.py``), beside NumPy's.

    python benchmarks/eager_large.py [--calls 5] [--only NAME]
"""
from __future__ import annotations

import argparse
import resource
import time

import numpy as np

import openjax
import openjax.numpy as jnp


def cases():
  rng = np.random.default_rng(0)
  a = rng.random((667, 1)).astype(np.float32)
  b = rng.random(1000).astype(np.float32)
  x = rng.uniform(-5, 5, 10**7).astype(np.float32)
  y = rng.uniform(0.5, 3, 10**7).astype(np.float32)
  ja, jb, jx, jy = (jnp.asarray(v) for v in (a, b, x, y))
  return {
      "linspace_arrays (667,1000,5)": (lambda: jnp.linspace(ja, jb, 5, axis=-1),
                                       lambda: np.linspace(a, b, 5, axis=-1)),
      "sin(x) * y + x, 1e7": (lambda: jnp.sin(jx) * jy + jx, lambda: np.sin(x) * y + x),
      "hypot, 1e7": (lambda: jnp.hypot(jx, jy), lambda: np.hypot(x, y)),
      "logaddexp, 1e7": (lambda: jnp.logaddexp(jx, jy), lambda: np.logaddexp(x, y)),
  }


def measure(call, calls: int) -> tuple[float, float]:
  """(mean seconds a call, minor page faults a call) over ``calls`` calls
  after two: the mean, as a loop of such calls sees them (whether glibc
  hands a large result fresh pages depends on the heap's history; a best
  call hides the calls that fault)."""
  for _ in range(2):
    call()
  r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
  t = time.perf_counter()
  for _ in range(calls):
    call()
  t = time.perf_counter() - t
  return t / calls, (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0) / calls


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--calls", type=int, default=5)
  parser.add_argument("--only", default=None, help="cases whose name contains this")
  opts = parser.parse_args()
  print(f"{'case':32s} {'openjax':>10s} {'faults':>8s} {'numpy':>10s} {'faults':>8s}")
  for name, (ojx, ref) in cases().items():
    if opts.only and opts.only not in name:
      continue
    t_n, f_n = measure(ref, opts.calls)
    t_o, f_o = measure(lambda: openjax.block_until_ready(ojx()), opts.calls)
    print(f"{name:32s} {t_o * 1e3:8.2f}ms {f_o:8.0f} {t_n * 1e3:8.2f}ms {f_n:8.0f}", flush=True)


if __name__ == "__main__":
  main()
