"""Per-call cost of eager (un-jitted) operations on small arrays.

One program text, run under the array module named by ``--module``
(``openjax`` by default; ``jax`` when run with JAX's interpreter, e.g.
``/tmp/jaxvenv/bin/python benchmarks/eager_ops.py --module jax``), always
beside NumPy doing the same operation on the same data. Prints, per case,
the median and the minimum over ``--repeat`` timeit repeats of the per-call
time in µs, and their ratios to NumPy (on a shared machine the minimum is the
steadier number).

    .venv/bin/python benchmarks/eager_ops.py [--module openjax|jax] [--number N]
"""
from __future__ import annotations

import argparse
import importlib
import statistics
import timeit

import numpy as np


def _cases(jnp, block):
  """name -> (module callable, NumPy callable) on equal data."""
  rng = np.random.default_rng(0)
  x_np = rng.random(1000, dtype=np.float32)
  y_np = rng.random(1000, dtype=np.float32)
  a_np = rng.random((16, 16), dtype=np.float32)
  b_np = rng.random((16, 16), dtype=np.float32)
  i_np = rng.integers(0, 100, 1000).astype(np.int32)
  x, y, a, b, i = (jnp.asarray(v) for v in (x_np, y_np, a_np, b_np, i_np))

  def blocked(f):
    return (lambda: f().block_until_ready()) if block else f

  return {
      "x * y": (blocked(lambda: x * y), lambda: x_np * y_np),
      "x + 1.0": (blocked(lambda: x + 1.0), lambda: x_np + np.float32(1.0)),
      "i * 2": (blocked(lambda: i * 2), lambda: i_np * np.int32(2)),
      "x < y": (blocked(lambda: x < y), lambda: x_np < y_np),
      "jnp.sin(x)": (blocked(lambda: jnp.sin(x)), lambda: np.sin(x_np)),
      "jnp.sum(x)": (blocked(lambda: jnp.sum(x)), lambda: np.sum(x_np)),
      "x[0]": (blocked(lambda: x[0]), lambda: x_np[0]),
      "jnp.dot(a, b)": (blocked(lambda: jnp.dot(a, b)), lambda: np.dot(a_np, b_np)),
  }


def _per_call_us(f, number: int, repeat: int) -> tuple[float, float]:
  """(median, min) over ``repeat`` timeit repeats of the per-call µs."""
  f()   # warm: caches, plans, first-call imports
  times = timeit.repeat(f, number=number, repeat=repeat)
  return statistics.median(times) / number * 1e6, min(times) / number * 1e6


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--module", default="openjax", choices=("openjax", "jax"),
                      help="the JAX implementation to time")
  parser.add_argument("--number", type=int, default=20000, help="calls per repeat")
  parser.add_argument("--repeat", type=int, default=7, help="timeit repeats (median)")
  parser.add_argument("--block", action="store_true",
                      help="call block_until_ready() on every result (JAX dispatches "
                           "asynchronously)")
  parser.add_argument("--only", default=None, help="run only cases containing this text")
  args = parser.parse_args()

  jax = importlib.import_module(args.module)
  jnp = importlib.import_module(f"{args.module}.numpy")
  version = getattr(jax, "__version__", "?")
  print(f"{args.module} {version}, numpy {np.__version__}: per-call µs "
        f"(median of {args.repeat} x {args.number} calls)")
  print(f"{'':16s} {'median':>30s}   {'min':>30s}")
  print(f"{'case':16s}" + f" {args.module:>10s} {'numpy':>10s} {'ratio':>8s} " * 2)
  for name, (f, f_np) in _cases(jnp, args.block).items():
    if args.only and args.only not in name:
      continue
    (t, t_min) = _per_call_us(f, args.number, args.repeat)
    (t_np, t_np_min) = _per_call_us(f_np, args.number, args.repeat)
    print(f"{name:16s} {t:10.2f} {t_np:10.2f} {t / t_np:8.1f}  "
          f" {t_min:10.2f} {t_np_min:10.2f} {t_min / t_np_min:8.1f}")


if __name__ == "__main__":
  main()
