"""Writes scipy_special_jax_values.json: JAX 0.10.2's jax.scipy.special values
where JAX's algorithms depart from SciPy's (truncated series, float32
recurrences), so tests can check openjax computes what JAX computes.
Run with JAX installed: python tests/data/scipy_special_jax_values.py"""
import json
import pathlib

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
import jax.scipy.special as jsp  # noqa: E402


def grid(lo, hi, n):
  return np.linspace(lo, hi, n)


CASES = {
    "hyp2f1_x_to_1_f64": ("hyp2f1", [0.5, 1.0, 2.2, grid(0.9, 0.99, 10)], "float64"),
    "hyp1f1_negative_f32": ("hyp1f1", [1.3, 2.1, grid(-30, -1, 10)], "float32"),
    "bessel_jn_small_z_f32": ("bessel_jn", [grid(0.5, 6, 12)], "float32"),
    "log_ndtr_f32": ("log_ndtr", [grid(-40, 12, 27)], "float32"),
    "owens_t_f64": ("owens_t", [grid(-3, 3, 7), grid(-5, 5, 7)], "float64"),
    "bernoulli_f32": ("bernoulli", [12], None),
}

out = {}
for key, (name, args, dtype) in CASES.items():
  cast = [np.asarray(a, dtype) if dtype and not isinstance(a, int) else a for a in args]
  fn = getattr(jsp, name)
  if name == "bessel_jn":
    value = fn(cast[0], v=2)
  else:
    value = fn(*cast)
  out[key] = {"fn": name, "dtype": dtype,
              "args": [np.asarray(a).tolist() for a in args],
              "value": np.asarray(value, np.float64).tolist()}
path = pathlib.Path(__file__).with_name("scipy_special_jax_values.json")
path.write_text(json.dumps(out, indent=1, allow_nan=True) + "\n")
