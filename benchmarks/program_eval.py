#!/usr/bin/env python3
"""Interpreted jaxpr programs: the cases the one jaxpr evaluator
(``core/program.py``) serves, timed best of ``--reps`` in one process.

    OPENJAX_EXECUTOR=interpreter python benchmarks/program_eval.py [--reps 7] [--json out.json]

Cases:
  scan_small      eager ``lax.scan``, 1000 steps of a small RNN cell (hidden 8)
  scan_rnn        ``jit`` of jaxbench's scan_rnn forward (200 steps, 32x256), interpreted
  while_scalar    eager ``lax.while_loop`` of 10k scalar steps
  jit_50          a jitted 50-operation function on f32[16], interpreted call
  first_call_50   the same jaxpr as a tiered first call evaluates it
                  (``eval_jaxpr`` inside ``interpreting_first_call``)
  eval_jaxpr_20   ``eval_jaxpr`` of a 20-equation jaxpr under the eval trace

Run it against two checkouts by setting ``PYTHONPATH`` to each in turn.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import timeit

import numpy as np

os.environ.setdefault("OPENJAX_EXECUTOR", "interpreter")

import openjax as jax   # noqa: E402  (the executor is read at import)
import openjax.numpy as jnp   # noqa: E402
from openjax._src.core import eval_jaxpr   # noqa: E402
from openjax._src.runtime.pipeline import interpreting_first_call   # noqa: E402


def _data(*shape, seed, scale=1.0):
  return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def scan_small():
  w, u = jnp.asarray(_data(8, 8, seed=1, scale=0.3)), jnp.asarray(_data(8, seed=2))
  xs = jnp.asarray(_data(1000, 8, seed=3))

  def cell(h, x):
    h = jnp.tanh(x @ w + h * u)
    return h, h.sum()

  h0 = jnp.zeros(8, jnp.float32)
  return lambda: jax.lax.scan(cell, h0, xs)


def scan_rnn():
  t, b, h = 200, 32, 256
  s = 1.0 / math.sqrt(h)
  wx, wh = jnp.asarray(_data(h, h, seed=4, scale=s)), jnp.asarray(_data(h, h, seed=5, scale=s))
  bias, xs = jnp.zeros(h, jnp.float32), jnp.asarray(_data(t, b, h, seed=6))

  @jax.jit
  def rnn(params, xs):
    wx, wh, bias = params

    def cell(hc, x):
      hc = jnp.tanh(x @ wx + hc @ wh + bias)
      return hc, hc
    _, hs = jax.lax.scan(cell, jnp.zeros((xs.shape[1], wh.shape[0]), xs.dtype), xs)
    return hs
  params = (wx, wh, bias)
  return lambda: rnn(params, xs)


def while_scalar():
  def cond(c):
    return c[0] < 10_000

  def body(c):
    i, x = c
    return i + 1, x * 0.999 + 1.0
  init = (jnp.asarray(0), jnp.asarray(1.0, jnp.float32))
  return lambda: jax.lax.while_loop(cond, body, init)


def _fifty_ops(x):
  for _ in range(10):
    x = jnp.sin(x) * 1.5 + x
    x = jnp.maximum(x, -2.0) - 0.5
  return x


def jit_50():
  f = jax.jit(_fifty_ops)
  x = jnp.asarray(_data(16, seed=7))
  f(x)
  return lambda: f(x)


def first_call_50():
  x = jnp.asarray(_data(16, seed=7))
  closed = jax.make_jaxpr(_fifty_ops)(x)

  def run():
    with interpreting_first_call():
      return eval_jaxpr(closed.jaxpr, closed.consts, x)
  return run


def eval_jaxpr_20():
  x = jnp.asarray(_data(4, 4, seed=8))

  def f(x):
    for _ in range(4):
      x = jnp.exp(-x * x) + x - 0.25
    return x
  closed = jax.make_jaxpr(f)(x)
  assert len(closed.jaxpr.eqns) == 20, len(closed.jaxpr.eqns)
  return lambda: eval_jaxpr(closed.jaxpr, closed.consts, x)


CASES = {"scan_small": (scan_small, 20), "scan_rnn": (scan_rnn, 5),
         "while_scalar": (while_scalar, 3), "jit_50": (jit_50, 500),
         "first_call_50": (first_call_50, 500), "eval_jaxpr_20": (eval_jaxpr_20, 2000)}


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--reps", type=int, default=7)
  ap.add_argument("--cases", default=",".join(CASES))
  ap.add_argument("--json")
  args = ap.parse_args()
  results = {}
  for name in args.cases.split(","):
    make, number = CASES[name]
    fn = make()
    jax.block_until_ready(fn())   # warm up: tracing, caches
    best = min(timeit.repeat(lambda: jax.block_until_ready(fn()), number=number,
                             repeat=args.reps)) / number
    results[name] = best
    print(f"{name:16s} {best * 1e6:12.1f} us")
  if args.json:
    with open(args.json, "w") as f:
      json.dump(results, f, indent=1)


if __name__ == "__main__":
  main()
