"""Regenerate tests/data/ufunc_dtypes.json from real JAX: the result dtype and
weak type (or the error type) of jax.numpy elementwise functions for every
pair of operand kinds, with x64 off and on.

Run in a separate venv with JAX installed (never a test dependency):
    python -m venv /tmp/jaxvenv && /tmp/jaxvenv/bin/pip install jax==0.10.2
    /tmp/jaxvenv/bin/python tools/gen_ufunc_fixtures.py
"""
import json
import pathlib
import sys

import numpy as np

OPERANDS = ["py_bool", "py_int", "py_float", "py_complex", "bool", "int8", "uint8", "int32",
            "uint32", "float16", "bfloat16", "float32", "complex64"]
BINARY = ["add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "fmod",
          "divmod", "power", "float_power", "maximum", "fmax", "arctan2", "hypot", "logaddexp",
          "copysign", "nextafter", "heaviside", "equal", "less", "logical_and", "bitwise_and",
          "left_shift", "right_shift", "gcd", "lcm", "ldexp"]
UNARY = ["negative", "positive", "abs", "fabs", "sign", "sqrt", "square", "reciprocal", "exp",
         "floor", "trunc", "rint", "isnan", "isinf", "isfinite", "signbit", "real", "imag",
         "conj", "angle", "invert", "logical_not", "bitwise_count", "frexp", "modf", "i0",
         "sinc", "nan_to_num", "deg2rad", "cbrt", "spacing", "log2", "arccosh", "iscomplex"]
PY = {"py_bool": True, "py_int": 2, "py_float": 1.5, "py_complex": 1 + 1j}


def operand(name, jnp):
  if name in PY:
    return PY[name]
  return np.array([1, 2] if name != "bool" else [True, False], dtype=jnp.dtype(name))


def describe(result) -> str:
  """``dtype`` with ``*`` when weakly typed; tuples joined by ``,``."""
  if isinstance(result, tuple):
    return ",".join(describe(r) for r in result)
  return np.dtype(result.dtype).name + ("*" if result.weak_type else "")


def table(jax, jnp, x64: bool) -> dict:
  jax.config.update("jax_enable_x64", x64)
  out = {}
  cases = [(f, (a,)) for f in UNARY for a in OPERANDS]
  cases += [(f, (a, b)) for f in BINARY for a in OPERANDS for b in OPERANDS]
  for fname, names in cases:
    try:
      r = getattr(jnp, fname)(*(operand(n, jnp) for n in names))
      out[f"{fname}|{'|'.join(names)}"] = describe(r)
    except Exception as e:  # noqa: BLE001 - the error type is the fixture
      out[f"{fname}|{'|'.join(names)}"] = "!" + type(e).__name__
  return out


def main():
  import jax
  import jax.numpy as jnp
  data = {"jax_version": jax.__version__, "x32": table(jax, jnp, False),
          "x64": table(jax, jnp, True)}
  path = pathlib.Path(__file__).resolve().parent.parent / "tests" / "data" / "ufunc_dtypes.json"
  path.write_text(json.dumps(data, indent=0, sort_keys=True))
  print("wrote", path, file=sys.stderr)


if __name__ == "__main__":
  main()
