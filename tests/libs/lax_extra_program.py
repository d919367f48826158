"""jax.lax approx_max_k/approx_min_k and conv_general_dilated_patches/local on
fixed inputs. Under JAX 0.10.2 it wrote tests/data/lax_extra.npz;
tests/test_lax_extra.py runs it under ``openjax.alias_jax()``."""
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax


def data(shape, seed=0):
  return jnp.asarray(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def approx_cases():
  x = data((3, 40))
  x = x.at[0, 5].set(x[0, 7])  # a tie
  out = {}
  for name, fn in (("max", lax.approx_max_k), ("min", lax.approx_min_k)):
    v, i = fn(x, 5)
    out[f"approx/{name}/values"], out[f"approx/{name}/indices"] = v, i
    v, i = fn(x, 2, reduction_dimension=0)
    out[f"approx/{name}/dim0/values"], out[f"approx/{name}/dim0/indices"] = v, i
  big = data((2, 300), 1)
  v, i = lax.approx_max_k(big, 3, aggregate_to_topk=False)
  out["approx/noagg/values"], out["approx/noagg/indices"] = v, i
  out["approx/grad"] = jax.grad(lambda x: (lax.approx_max_k(x, 4)[0] ** 2).sum())(x)
  return out


def conv_cases():
  out = {}
  nchw = data((2, 3, 6, 5), 2)
  out["patches/nchw"] = lax.conv_general_dilated_patches(nchw, (2, 3), (1, 2), "SAME")
  nhwc = data((1, 7, 6, 2), 3)
  out["patches/nhwc_dilated"] = lax.conv_general_dilated_patches(
      nhwc, (3, 2), (2, 1), [(1, 1), (0, 1)], lhs_dilation=(1, 1), rhs_dilation=(2, 1),
      dimension_numbers=("NHWC", "HWIO", "NHWC"))
  rhs = data((3 * 2 * 3, 4, 6, 3), 4)  # (I=C*prod(filter), O, H_out, W_out) as "IOHW"
  out["local/nchw"] = lax.conv_general_dilated_local(
      nchw, rhs, (1, 2), "SAME", (2, 3), dimension_numbers=("NCHW", "IOHW", "NCHW"))
  out["local/grad"] = jax.grad(lambda r: lax.conv_general_dilated_local(
      nchw, r, (1, 2), "SAME", (2, 3), dimension_numbers=("NCHW", "IOHW", "NCHW")).sum())(rhs)
  return out


def all_cases():
  return {k: np.asarray(v) for k, v in {**approx_cases(), **conv_cases()}.items()}


if __name__ == "__main__":
  np.savez(sys.argv[1], **all_cases())
