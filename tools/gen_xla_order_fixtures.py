"""Regenerate tests/data/xla_orders.npz from real JAX 0.10.2 (XLA:CPU).

    /tmp/jaxvenv/bin/python tools/gen_xla_order_fixtures.py

Each case stores its inputs and JAX's result (the jitted cases also their
source, which the test evaluates with openjax); tests/test_xla_orders.py checks
that openjax gives the same bits eagerly, interpreted and compiled. The
inputs have a wide range of magnitudes so that any other summation order
shows in the last bits.
"""
from __future__ import annotations

import os

import numpy as np

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "data", "xla_orders.npz")

# (name, shape, axes, dtype): sums XLA computes by its tree-reduction rewrite.
SUMS = [
    ("1000", (1000,), (0,), np.float32), ("100", (100,), (0,), np.float32),
    ("33", (33,), (0,), np.float32), ("2000", (2000,), (0,), np.float32),
    ("4000", (4000,), (0,), np.float32), ("rows_4x40", (4, 40), (1,), np.float32),
    ("cols_40x4", (40, 4), (0,), np.float32), ("mid_5x7x100", (5, 7, 100), (1,), np.float32),
    ("last_5x7x100", (5, 7, 100), (2,), np.float32), ("col_1000x1", (1000, 1), (0, 1), np.float32),
    ("f64_1000", (1000,), (0,), np.float64), ("f64_300x7", (300, 7), (0,), np.float64),
]
# (name, lhs shape, rhs shape, dimension numbers): vector products.
DOTS = [
    ("matvec_50x5", (50, 5), (5,), (((1,), (0,)), ((), ()))),
    ("matvec_1000x7", (1000, 7), (7,), (((1,), (0,)), ((), ()))),
    ("vecmat_1000x5", (1000,), (1000, 5), (((0,), (0,)), ((), ()))),
    ("vecmat_100x64", (100,), (100, 64), (((0,), (0,)), ((), ()))),
    ("vecvec_6", (6,), (6,), (((0,), (0,)), ((), ()))),
    ("mat_t_vec", (300, 3), (300,), (((0,), (0,)), ((), ()))),
]
# name -> source of a function of a, b, c, d run under jax.jit; the test
# evaluates the same source with openjax.numpy as ``jnp``.
FUSED = {
    "a*b+c": "lambda a, b, c, d: a * b + c",
    "c-a*b": "lambda a, b, c, d: c - a * b",
    "a*b-c": "lambda a, b, c, d: a * b - c",
    "shared": "lambda a, b, c, d: (lambda t: (t + c, t - d))(a * b)",
    "result_too": "lambda a, b, c, d: (a * b, a * b + c)",
    "a*b+c*d": "lambda a, b, c, d: a * b + c * d",
    "square+c": "lambda a, b, c, d: a ** 2 + c",
    "scaled": "lambda a, b, c, d: c - 0.01 * a",
    "div_literal": "lambda a, b, c, d: a / 1000.0",
    "sum_of_squares": "lambda a, b, c, d: jnp.sum(a * a)",
    "mean_sq": "lambda a, b, c, d: jnp.mean((a - b) ** 2)",
    "row_dots": "lambda a, b, c, d: jnp.sum(a.reshape(25, 4) * b.reshape(25, 4), axis=1)",
    "col_dots": "lambda a, b, c, d: jnp.sum(a.reshape(4, 25) * b.reshape(4, 25), axis=0)",
    "short_sum_sq": "lambda a, b, c, d: jnp.sum(a[:20] ** 2)",
}


def _wide(rng, shape, dtype):
  return (rng.standard_normal(shape) * np.exp(rng.standard_normal(shape) * 3)).astype(dtype)


def main() -> None:
  rng = np.random.default_rng(20261121)
  data = {}
  for name, shape, axes, dt in SUMS:
    x = _wide(rng, shape, dt)
    data[f"sum/{name}/x"] = x
    data[f"sum/{name}/axes"] = np.array(axes)
    data[f"sum/{name}/out"] = np.asarray(jnp.sum(jnp.asarray(x), axis=axes))
  for name, ls, rs, dn in DOTS:
    a, b = _wide(rng, ls, np.float32), _wide(rng, rs, np.float32)
    data[f"dot/{name}/lhs"], data[f"dot/{name}/rhs"] = a, b
    data[f"dot/{name}/dn"] = np.array([dn[0][0][0], dn[0][1][0]])
    data[f"dot/{name}/out"] = np.asarray(jax.lax.dot_general(jnp.asarray(a), jnp.asarray(b), dn))
  args = [_wide(rng, (100,), np.float32) for _ in range(4)]
  for i, a in enumerate(args):
    data[f"fused/arg{i}"] = a
  for name, src in FUSED.items():
    r = jax.jit(eval(src, {"jnp": jnp}))(*args)   # noqa: S307 - our own case text
    r = r if isinstance(r, tuple) else (r,)
    data[f"fused/{name}/src"] = np.array(src)
    data[f"fused/{name}/out"] = np.concatenate([np.ravel(np.asarray(v)) for v in r])
  means = [_wide(rng, (n,), np.float32) for n in (10, 100, 1000)]
  for x in means:
    data[f"mean/{x.size}/x"] = x
    data[f"mean/{x.size}/out"] = np.asarray(jnp.mean(jnp.asarray(x)))
  np.savez_compressed(OUT, **data)
  print(f"wrote {len(data)} arrays to {OUT}")


if __name__ == "__main__":
  main()
