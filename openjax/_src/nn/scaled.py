"""Block-scaled matrix products (``jax.nn.scaled_matmul``, ``scaled_dot_general``,
``get_scaled_dot_general_config``): the MX (``mxfp8``) and NVFP4 formats store
narrow values with one scale per block of ``block_size`` contracted entries.

JAX runs these only through cuDNN on GPUs; here they are computed by
dequantising (value * its block's scale) in float32 and contracting, so they
also run on the CPU with the same quantisation (per-block max-abs scaling,
e8m0 scales rounded up) and the same quantised backward pass.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.custom_derivatives import custom_vjp
from openjax._src.nn import jnp

__all__ = ["BlockScaleConfig", "get_scaled_dot_general_config", "scaled_dot_general",
           "scaled_matmul"]

_F32 = np.dtype(np.float32)


@dataclasses.dataclass
class BlockScaleConfig:
  """How one operand is quantised: format name, block size, value and scale
  dtypes, an optional global scale (NVFP4) and whether only inference runs."""
  mode: str
  block_size: int
  data_type: Any
  scale_type: Any
  global_scale: Any
  infer_only: bool


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
  """``out[b, m, n] = sum_k lhs[b, m, k] * rhs[b, n, k]``, each value times its
  block's scale (``scales[..., k // block]``, ``block = K / scales.shape[-1]``)."""
  shapes = [np.shape(x) for x in (lhs, rhs, lhs_scales, rhs_scales)]
  if not all(len(s) == 3 for s in shapes):
    raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
  (b_a, m_a, k_a), (b_b, n_b, k_b), (b_as, m_as, k_as), (b_bs, n_bs, k_bs) = shapes
  if k_a != k_b or b_a != b_b:
    raise ValueError(
        "scaled_matmul requires inputs a and b to have matching batch (B) and contract (K) "
        f"dimensions, but got shapes {shapes[0]} and {shapes[1]}")
  if k_as != k_bs or b_as != b_bs:
    raise ValueError(
        "scaled_matmul requires scales to have matching batch (B) and contract (K) "
        f"dimensions, but got shapes {shapes[2]} and {shapes[3]}")
  if m_as != m_a or n_bs != n_b:
    raise ValueError(
        "scaled_matmul requires scales to match non-contract dimensions of inputs, but got "
        f"shapes a: {shapes[0]}, b: {shapes[1]}, a_scales: {shapes[2]}, b_scales: {shapes[3]}")
  if k_a % k_as:
    raise ValueError(f"scaled_matmul: the contract dimension {k_a} is not a multiple of the "
                     f"number of scale blocks {k_as}")
  a = _dequantize(lhs, lhs_scales, k_a // k_as)
  b = _dequantize(rhs, rhs_scales, k_a // k_as)
  out = lax.dot_general(a, b, (((2,), (2,)), ((0,), (0,))),
                        precision=lax.Precision.HIGHEST)
  return out.astype(dtypes.canonicalize_dtype(preferred_element_type))


def _dequantize(x, scales, block: int):
  scales = jnp.repeat(scales.astype(_F32), block, axis=-1)
  return x.astype(_F32) * scales


def get_scaled_dot_general_config(mode: str, global_scale=None) -> BlockScaleConfig:
  """The quantisation of ``mode``: ``'mxfp8'`` (e4m3 values, e8m0 scales per
  32) or ``'nvfp4'`` (e2m1 values, e4m3 scales per 16, a float32 global scale)."""
  if mode == "nvfp4":
    one = jnp.ones((1,), dtype=_F32)
    return BlockScaleConfig(mode="nvfp4", block_size=16, data_type=dtypes.float4_e2m1fn,
                            scale_type=dtypes.float8_e4m3fn,
                            global_scale=one if global_scale is None else global_scale,
                            infer_only=False)
  if mode == "mxfp8":
    return BlockScaleConfig(mode="mxfp8", block_size=32, data_type=dtypes.float8_e4m3fn,
                            scale_type=dtypes.float8_e8m0fnu, global_scale=None,
                            infer_only=False)
  raise ValueError(f"Unsupported mode: {mode}")


# ------------------------------------------------------------- quantisation
def _to_3d(x, contracting, batch):
  """``x`` as (batch, rows, contracted), each group flattened in axis order."""
  order = range(np.ndim(x))
  batch_axes = [d for d in order if d in batch]
  contract_axes = [d for d in order if d in contracting]
  row_axes = [d for d in order if d not in contracting and d not in batch]
  shape = np.shape(x)
  size = lambda axes: int(np.prod([shape[d] for d in axes], dtype=int))  # noqa: E731
  t = jnp.transpose(x, batch_axes + row_axes + contract_axes)
  return jnp.reshape(t, (size(batch_axes), size(row_axes), size(contract_axes)))


def _dot_output_shape(lhs_shape, rhs_shape, lhs_dn, rhs_dn):
  (lhs_contract, lhs_batch), (rhs_contract, _) = lhs_dn, rhs_dn
  rhs_batch = rhs_dn[1]
  out = [d for i, d in enumerate(lhs_shape) if i in lhs_batch]
  out += [d for i, d in enumerate(lhs_shape) if i not in lhs_contract and i not in lhs_batch]
  out += [d for i, d in enumerate(rhs_shape) if i not in rhs_contract and i not in rhs_batch]
  return tuple(out)


def _e8m0_rounding_up(x):
  """float32 scales as e8m0 exponents (uint8), rounded up to a power of two."""
  bits = lax.bitcast_convert_type(x.astype(_F32), np.uint32)
  exp = lax.shift_right_logical(bits, np.uint32(23))
  mant = lax.bitwise_and(bits, np.uint32(0x7FFFFF))
  round_up = jnp.logical_and(jnp.logical_and(mant > 0, exp != 0xFE),
                             ~jnp.logical_and(exp == 0, mant <= 0x400000))
  return jnp.where(round_up, exp + 1, exp).astype(np.uint8)


def _e8m0_to(x, dtype):
  bits = lax.shift_left(x.astype(np.uint32), np.uint32(23))
  value = lax.bitcast_convert_type(bits, np.float32)
  tiny = 2.0 ** -15 if np.dtype(dtype) == np.float16 else 2.0 ** -127
  return jnp.where(value == 0, jnp.array(tiny, _F32), value).astype(dtype)


def _quantize(x, config: BlockScaleConfig):
  """(B, M, K) -> values in ``config.data_type`` and one scale per block."""
  shape = np.shape(x)
  block = config.block_size
  if shape[-1] < block or shape[-1] % block:
    raise ValueError(f"scaled_dot_general: the contracted size {shape[-1]} must be a "
                     f"multiple of the block size {block}")
  x = x.reshape(shape[:-1] + (shape[-1] // block, block))
  top = np.asarray(dtypes.finfo(config.data_type).max).astype(x.dtype)
  block_scales = jnp.max(jnp.abs(x), axis=-1, keepdims=True) / top
  if config.mode == "mxfp8":
    scales_q = _e8m0_rounding_up(block_scales)
    scaled = x / _e8m0_to(scales_q, x.dtype)
    scales_q = lax.bitcast_convert_type(scales_q, dtypes.float8_e8m0fnu)
  elif config.mode == "nvfp4":
    scale_top = np.asarray(dtypes.finfo(config.scale_type).max).astype(x.dtype)
    x = x / config.global_scale
    scales_q = lax.optimization_barrier(
        jnp.clip(jnp.max(jnp.abs(x), axis=-1, keepdims=True) / top, 0, scale_top)
        .astype(config.scale_type))
    scaled = x / scales_q.astype(_F32)
  else:
    raise ValueError(f"Unrecognized mode: {config.mode}.")
  values = jnp.clip(scaled, -top, top).astype(config.data_type).reshape(shape)
  return values, jnp.reshape(scales_q, scales_q.shape[:-1])


def _scaled_dot(lhs, rhs, dimension_numbers, preferred_element_type, configs):
  (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
  lhs_dn, rhs_dn = (lhs_contract, lhs_batch), (rhs_contract, rhs_batch)
  lhs_q, lhs_scales = _quantize(_to_3d(lhs, *lhs_dn), configs[0])
  rhs_q, rhs_scales = _quantize(_to_3d(rhs, *rhs_dn), configs[1])
  nvfp4 = configs[0].mode == "nvfp4"
  out = scaled_matmul(lhs_q, rhs_q, lhs_scales, rhs_scales,
                      preferred_element_type=_F32 if nvfp4 else preferred_element_type)
  if nvfp4:
    out = (out * (configs[0].global_scale * configs[1].global_scale)).astype(
        preferred_element_type)
  return jnp.reshape(out, _dot_output_shape(np.shape(lhs), np.shape(rhs), lhs_dn, rhs_dn))


def _kept(ndim, *taken):
  return [d for d in range(ndim) if not any(d in t for t in taken)]


def _transpose_lhs(g, x, y, dimension_numbers, preferred_element_type, configs,
                   swap_ans=False):
  """The cotangent of ``x`` in ``dot_general(x, y)``, as a quantised product of
  ``g`` and ``y`` (plain matmul for NVFP4)."""
  (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
  x_kept = _kept(np.ndim(x), x_contract, x_batch)
  y_kept = _kept(np.ndim(y), y_contract, y_batch)
  nb = len(x_batch)
  if swap_ans:
    ans_batch, ans_y = list(range(nb)), list(range(nb, nb + len(y_kept)))
  else:
    ans_batch = list(range(nb))
    ans_y = list(range(nb + len(x_kept), nb + len(x_kept) + len(y_kept)))
  x_contract_by_y = list(np.take(x_contract, np.argsort(y_contract)))
  out_axes = tuple(int(a) for a in np.argsort(list(x_batch) + x_kept + x_contract_by_y))
  y_dn, g_dn = (y_kept, y_batch), (ans_y, ans_batch)
  y_3d, g_3d = _to_3d(y, *y_dn), _to_3d(g, *g_dn)
  if configs[0].mode != "nvfp4":
    g_q, g_scales = _quantize(g_3d, configs[0])
    y_q, y_scales = _quantize(y_3d, configs[1])
    out = scaled_matmul(g_q, y_q, g_scales, y_scales, preferred_element_type)
  else:
    out = jnp.matmul(g_3d, jnp.transpose(y_3d, (0, 2, 1)),
                     preferred_element_type=preferred_element_type)
  out = jnp.reshape(out, _dot_output_shape(np.shape(g), np.shape(y), g_dn, y_dn))
  return lax.transpose(out, out_axes)


def _scaled_dot_vjp_fn():
  def primal(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    return _scaled_dot(lhs, rhs, dimension_numbers, preferred_element_type, configs)

  fn = custom_vjp(primal, nondiff_argnums=(2, 3, 4))

  def fwd(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    return primal(lhs, rhs, dimension_numbers, preferred_element_type, configs), (lhs, rhs)

  def bwd(dimension_numbers, preferred_element_type, configs, res, g):
    lhs, rhs = res
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    grad_lhs = _transpose_lhs(g, lhs, rhs, dimension_numbers, preferred_element_type,
                              [configs[2], configs[1]])
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    grad_rhs = _transpose_lhs(g, rhs, lhs, swapped, preferred_element_type,
                              [configs[2], configs[0]], swap_ans=True)
    if configs[2].mode == "nvfp4":
      top = np.asarray(dtypes.finfo(configs[0].data_type).max).astype(lhs.dtype)
      scale_top = np.asarray(dtypes.finfo(configs[0].scale_type).max).astype(lhs.dtype)
      grad_lhs = jnp.where(jnp.abs(lhs) <= configs[0].global_scale * top * scale_top,
                           grad_lhs, 0)
      grad_rhs = jnp.where(jnp.abs(rhs) <= configs[1].global_scale * top * scale_top,
                           grad_rhs, 0)
    return grad_lhs, grad_rhs

  fn.defvjp(fwd, bwd)
  return fn


_scaled_dot_with_vjp = _scaled_dot_vjp_fn()


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs: list[BlockScaleConfig] | None = None, implementation=None):
  """``dot_general`` with both operands (and, for the backward pass, the
  cotangent) quantised per ``configs`` = [lhs, rhs, gradient] configs; without
  ``configs`` a plain ``dot_general``."""
  if configs is None:
    return lax.dot_general(lhs, rhs, dimension_numbers,
                           preferred_element_type=preferred_element_type)
  preferred = np.dtype(preferred_element_type)
  if preferred not in (np.dtype(np.float32), np.dtype(dtypes.bfloat16),
                       np.dtype(np.float16)):
    raise TypeError("Only support preferred_element_type in (f32, bf16, f16), but got "
                    f"{preferred}")
  (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
  dn = ((tuple(lhs_contract), tuple(rhs_contract)), (tuple(lhs_batch), tuple(rhs_batch)))
  (lc, rc), (lb, rb) = dn
  lhs_b, rhs_b = lhs, rhs
  if lb == ():
    lhs_b, lb = jnp.expand_dims(lhs, np.ndim(lhs)), (np.ndim(lhs),)
  if rb == ():
    rhs_b, rb = jnp.expand_dims(rhs, np.ndim(rhs)), (np.ndim(rhs),)
  batched_dn = ((lc, rc), (lb, rb))
  out = _scaled_dot_with_vjp(lhs_b, rhs_b, batched_dn, preferred, list(configs))
  return jnp.squeeze(out, axis=0) if batched_dn != dn else out
