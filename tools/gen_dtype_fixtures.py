"""Regenerate tests/data/promotion_table.json from real JAX.

Run in a separate venv with JAX installed (never a test dependency):
    python -m venv /tmp/jaxvenv && /tmp/jaxvenv/bin/pip install jax==0.10.2
    /tmp/jaxvenv/bin/python tools/gen_dtype_fixtures.py
"""
import json
import pathlib

import jax
import jax.numpy as jnp
import numpy as np

TYPES = ["bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
         "bfloat16", "float16", "float32", "float64", "complex64", "complex128",
         "weak_int", "weak_float", "weak_complex"]
WEAK = {"weak_int": 1, "weak_float": 1.0, "weak_complex": 1j}


def value(name):
  if name in WEAK:
    return WEAK[name]
  return jnp.zeros((), dtype=jnp.dtype(name))


def table(x64):
  jax.config.update("jax_enable_x64", x64)
  out = {}
  for a in TYPES:
    for b in TYPES:
      try:
        # The dtype and weak type of an actual binary operation.
        r = jnp.add(value(a), value(b)) if "bool" not in (a, b) or a == b else \
            jnp.multiply(value(a), value(b))
      except Exception as e:  # noqa: BLE001
        out[f"{a},{b}"] = type(e).__name__
        continue
      out[f"{a},{b}"] = [np.dtype(r.dtype).name, bool(r.weak_type)]
  return out


data = {"jax_version": jax.__version__, "x32": table(False), "x64": table(True)}
path = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "promotion_table.json"
path.write_text(json.dumps(data, indent=0, sort_keys=True))
print("wrote", path)
