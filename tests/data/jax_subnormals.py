"""Writes jax_subnormals.json: what JAX 0.10.2 on the CPU gives under jit for
float32 subnormal operands and results (as uint32 bit patterns). XLA's CPU
code flushes subnormals to zero (FTZ/DAZ), except where its algebraic
simplifier removes the operation (``x + 0``, ``x - 0``, ``x * 1``).
Run with JAX installed: python tests/data/jax_subnormals.py"""
import json
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_platforms", "cpu")

X = np.array([1e-45, 1e-40, 1.1754942e-38, -3e-39, 1e-30, 0.0, -0.0, 2.5e-38], np.float32)
HALF_TINY = np.float32(np.finfo(np.float32).tiny) * np.float32(0.5)   # a subnormal result

CASES = {
    "add_zero": lambda x: x + 0,
    "subtract_zero": lambda x: x - 0,
    "multiply_one": lambda x: x * 1,
    "multiply_two": lambda x: x * 2,
    "divide_two": lambda x: x / 2,
    "times_half_tiny": lambda x: x * 0 + HALF_TINY,
    "square": lambda x: x * x,
    "sqrt": jnp.sqrt,
    "exp": jnp.exp,
    "abs": jnp.abs,
    "negative": jnp.negative,
    "maximum_zero": lambda x: jnp.maximum(x, 0),
    "sum": jnp.sum,
    "log": jnp.log,
    "log1p": jnp.log1p,
    "expm1": jnp.expm1,
    "sin": jnp.sin,
    "tanh": jnp.tanh,
    "to_float16": lambda x: x.astype(jnp.float16).astype(jnp.float32),
}

out = {"x": X.view(np.uint32).tolist()}
for name, f in CASES.items():
  out[name] = np.atleast_1d(np.asarray(jax.jit(f)(X), np.float32)).view(np.uint32).tolist()
path = pathlib.Path(__file__).with_suffix(".json")
path.write_text(json.dumps(out, indent=0) + "\n")
print("wrote", path)
