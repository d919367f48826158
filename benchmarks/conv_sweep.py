"""Convolution layouts, kernels, strides, dilations and groups: openjax vs JAX.

    PYTHONPATH=. /tmp/jaxvenv/bin/python benchmarks/conv_sweep.py [--only SUBSTR] [--reps 7]

Both libraries run in this one process (JAX from the benchmark venv, openjax
from the path), compiled (openjax's tiered execution off), their calls
interleaved so a change in the machine's load hits both alike. Each case is
``lax.conv_general_dilated`` jitted alone (``fwd``) and the gradient of
``sum(conv(x, w) ** 2) / 2`` with respect to input and kernel (``grad``);
printed: min time per call of each and openjax/JAX.
"""
import argparse
import importlib
import os
import time

import numpy as np

# name: (lhs shape, rhs shape, (lhs, rhs, out) spec, strides, padding, rhs dilation, groups)
CASES = {
    "2d_nchw_3x3_b64": ((64, 16, 32, 32), (16, 16, 3, 3), ("NCHW", "OIHW", "NCHW"), (1, 1), "SAME", (1, 1), 1),
    "2d_nchw_3x3_b64_c32": ((64, 16, 32, 32), (32, 16, 3, 3), ("NCHW", "OIHW", "NCHW"), (1, 1), "SAME", (1, 1), 1),
    "2d_nchw_3x3_b8": ((8, 16, 32, 32), (16, 16, 3, 3), ("NCHW", "OIHW", "NCHW"), (1, 1), "SAME", (1, 1), 1),
    "2d_nhwc_3x3_b64": ((64, 32, 32, 16), (3, 3, 16, 16), ("NHWC", "HWIO", "NHWC"), (1, 1), "SAME", (1, 1), 1),
    "2d_nhwc_3x3_b8": ((8, 32, 32, 16), (3, 3, 16, 32), ("NHWC", "HWIO", "NHWC"), (1, 1), "SAME", (1, 1), 1),
    "2d_nchw_1x1_b64": ((64, 32, 32, 32), (32, 32, 1, 1), ("NCHW", "OIHW", "NCHW"), (1, 1), "SAME", (1, 1), 1),
    "2d_nhwc_1x1_b64": ((64, 32, 32, 32), (1, 1, 32, 32), ("NHWC", "HWIO", "NHWC"), (1, 1), "SAME", (1, 1), 1),
    "2d_nchw_5x5_b8": ((8, 16, 32, 32), (16, 16, 5, 5), ("NCHW", "OIHW", "NCHW"), (1, 1), "SAME", (1, 1), 1),
    "2d_nhwc_5x5_b8": ((8, 32, 32, 16), (5, 5, 16, 16), ("NHWC", "HWIO", "NHWC"), (1, 1), "SAME", (1, 1), 1),
    "2d_nchw_3x3_s2_b64": ((64, 16, 32, 32), (32, 16, 3, 3), ("NCHW", "OIHW", "NCHW"), (2, 2), "SAME", (1, 1), 1),
    "2d_nhwc_3x3_s2_b64": ((64, 32, 32, 16), (3, 3, 16, 32), ("NHWC", "HWIO", "NHWC"), (2, 2), "SAME", (1, 1), 1),
    "2d_nchw_3x3_d2_b8": ((8, 16, 32, 32), (16, 16, 3, 3), ("NCHW", "OIHW", "NCHW"), (1, 1), "SAME", (2, 2), 1),
    "2d_nhwc_3x3_d2_b8": ((8, 32, 32, 16), (3, 3, 16, 16), ("NHWC", "HWIO", "NHWC"), (1, 1), "SAME", (2, 2), 1),
    "2d_nchw_grouped4_b8": ((8, 32, 32, 32), (32, 8, 3, 3), ("NCHW", "OIHW", "NCHW"), (1, 1), "SAME", (1, 1), 4),
    "2d_nhwc_grouped4_b8": ((8, 32, 32, 32), (3, 3, 8, 32), ("NHWC", "HWIO", "NHWC"), (1, 1), "SAME", (1, 1), 4),
    "2d_nchw_depthwise_b8": ((8, 32, 32, 32), (32, 1, 3, 3), ("NCHW", "OIHW", "NCHW"), (1, 1), "SAME", (1, 1), 32),
    "2d_nhwc_depthwise_b8": ((8, 32, 32, 32), (3, 3, 1, 32), ("NHWC", "HWIO", "NHWC"), (1, 1), "SAME", (1, 1), 32),
    "1d_nch_b64": ((64, 32, 256), (32, 32, 5), ("NCH", "OIH", "NCH"), (1,), "SAME", (1,), 1),
    "1d_nhc_b64": ((64, 256, 32), (5, 32, 32), ("NHC", "HIO", "NHC"), (1,), "SAME", (1,), 1),
    "3d_ncdhw_b8": ((8, 8, 16, 16, 16), (16, 8, 3, 3, 3), ("NCDHW", "OIDHW", "NCDHW"), (1, 1, 1), "SAME", (1, 1, 1), 1),
    "3d_ndhwc_b8": ((8, 16, 16, 16, 8), (3, 3, 3, 8, 16), ("NDHWC", "DHWIO", "NDHWC"), (1, 1, 1), "SAME", (1, 1, 1), 1),
}


def build(jax, case):
  lhs_shape, rhs_shape, dn, strides, padding, dil, groups = case
  lax, jnp = jax.lax, jax.numpy

  def conv(x, w):
    return lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=dil,
                                    dimension_numbers=dn, feature_group_count=groups)
  grad = jax.grad(lambda x, w: 0.5 * jnp.sum(conv(x, w) ** 2), argnums=(0, 1))
  return {"fwd": jax.jit(conv), "grad": jax.jit(grad)}


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--only", default="")
  ap.add_argument("--modes", default="fwd,grad")
  ap.add_argument("--reps", type=int, default=7)
  a = ap.parse_args()
  os.environ["OPENJAX_TIERED_COMPILATION"] = "0"
  mods = {m: importlib.import_module(m) for m in ("openjax", "jax")}
  rng = np.random.default_rng(0)
  for name, case in CASES.items():
    if a.only and not any(s in name for s in a.only.split(",")):
      continue
    x = rng.standard_normal(case[0]).astype(np.float32)
    w = (rng.standard_normal(case[1]) / np.sqrt(np.prod(case[1][1:]))).astype(np.float32)
    fns = {m: build(jax, case) for m, jax in mods.items()}
    for mode in a.modes.split(","):
      for m, jax in mods.items():
        jax.block_until_ready(fns[m][mode](x, w))
      best = {m: float("inf") for m in mods}
      for _ in range(a.reps):
        for m, jax in mods.items():
          t = time.perf_counter()
          jax.block_until_ready(fns[m][mode](x, w))
          best[m] = min(best[m], time.perf_counter() - t)
      print(f"{name:24s} {mode:4s} openjax {best['openjax'] * 1e3:9.2f} ms  jax "
            f"{best['jax'] * 1e3:8.2f} ms  ratio {best['openjax'] / best['jax']:6.2f}", flush=True)


if __name__ == "__main__":
  main()
