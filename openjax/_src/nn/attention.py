"""``jax.nn.dot_product_attention`` with the ``'xla'`` implementation's
semantics: scaled dot-product attention over ``BTNH`` arrays, with bias,
boolean mask, causal and local-window masks, per-batch sequence lengths,
grouped-query attention (``K`` key/value heads shared by ``N // K`` query
heads each) and the optional log-sum-exp residual.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.nn import jnp
from openjax._src.nn.softmax import logsumexp, softmax

__all__ = ["dot_product_attention"]


def _large_negative(dtype):
  # The softmax runs in float32, so the fill must stay finite there even for
  # float64 logits (a -inf would make a fully masked row NaN).
  big = min(float(dtypes.finfo(dtype).max), float(dtypes.finfo(np.float32).max))
  return jnp.asarray(-0.7 * big, dtype=dtype)


def _grouped(t, num_groups: int):
  """A 4-D ``(B|1, N|1, T|1, S|1)`` bias or mask as ``(B, K, G, T, S)``
  (broadcastable), matching the grouped logits."""
  if t is None:
    return None
  tb, tn, tt, ts = t.shape
  if tn == 1:
    return jnp.reshape(t, (tb, 1, 1, tt, ts))
  return jnp.reshape(t, (tb, tn // num_groups, num_groups, tt, ts))


def _combined_mask(shape, mask, is_causal, q_seqlen, kv_seqlen, local_window_size):
  """The boolean mask over grouped logits of ``shape`` (B, K, G, T, S), or
  None when nothing is masked."""
  if (mask is None and not is_causal and q_seqlen is None and kv_seqlen is None
      and local_window_size is None):
    return None
  T, S = shape[-2], shape[-1]
  combined = jnp.ones(shape, dtype=bool)
  if mask is not None:
    combined = jnp.logical_and(combined, mask)
  q_pos = jnp.arange(T)[:, None]
  k_pos = jnp.arange(S)[None, :]
  if is_causal:
    combined = jnp.logical_and(combined, q_pos >= k_pos)
  if local_window_size is not None:
    left, right = local_window_size
    window = jnp.logical_and(q_pos <= k_pos + left, q_pos >= k_pos - right)
    combined = jnp.logical_and(combined, window)
  if q_seqlen is not None:
    q_valid = jnp.arange(T)[None, :] < q_seqlen[:, None]            # (B, T)
    combined = jnp.logical_and(combined, q_valid[:, None, None, :, None])
  if kv_seqlen is not None:
    kv_valid = jnp.arange(S)[None, :] < kv_seqlen[:, None]          # (B, S)
    combined = jnp.logical_and(combined, kv_valid[:, None, None, None, :])
  return combined


def _attention_xla(query, key, value, bias, mask, *, is_causal, scale, q_seqlen, kv_seqlen,
                   local_window_size, return_residual):
  B, T, N, H = query.shape
  _, S, K, _ = key.shape
  G = N // K
  query = jnp.reshape(query, (B, T, K, G, H))
  logits_dtype = jnp.promote_types(query.dtype, np.float32)
  # Half-precision inputs accumulate in float32 (and say so, so that the
  # derivatives use the same algorithm).
  if query.dtype == dtypes.bfloat16:
    precision = lax.DotAlgorithmPreset.BF16_BF16_F32
  elif query.dtype == np.float16:
    precision = lax.DotAlgorithmPreset.F16_F16_F32
  else:
    precision = None
  logits = jnp.einsum("BTKGH,BSKH->BKGTS", query, key, precision=precision,
                      preferred_element_type=logits_dtype)
  logits = logits * jnp.array(scale, dtype=logits.dtype)
  if bias is not None:
    logits = (logits + _grouped(bias, G)).astype(logits.dtype)
  combined = _combined_mask(logits.shape, _grouped(mask, G), is_causal, q_seqlen, kv_seqlen,
                            local_window_size)
  if combined is not None:
    logits = jnp.where(combined, logits, _large_negative(logits.dtype))
  # The softmax is always evaluated in float32.
  logits = logits.astype(np.float32)
  probs = softmax(logits, axis=-1).astype(key.dtype)
  encoded = jnp.einsum("BKGTS,BSKH->BTKGH", probs, value)
  if q_seqlen is not None:
    q_valid = jnp.arange(T)[None, :] < q_seqlen[:, None]
    encoded = encoded * q_valid[:, :, None, None, None].astype(encoded.dtype)
  encoded = jnp.reshape(encoded, (B, T, N, H))
  if not return_residual:
    return encoded
  lse = logsumexp(logits, axis=-1).astype(key.dtype)                   # (B, K, G, T)
  lse = jnp.reshape(jnp.transpose(lse, (0, 3, 1, 2)), (B, T, N))
  return encoded, lax.stop_gradient(lse)


def _ensure_4d(t):
  t = jnp.asarray(t)
  if t.ndim < 4:
    return jnp.expand_dims(t, tuple(range(4 - t.ndim)))
  return t


def _check(t, shape, dtype, name: str) -> None:
  if t is None:
    return
  if t.ndim != len(shape):
    raise ValueError(f"dot_product_attention: {name} ndim should be {len(shape)}, but got "
                     f"{t.ndim}")
  if dtype is not None and t.dtype != dtype:
    raise ValueError(f"dot_product_attention: {name} dtype should be {dtype}, but got "
                     f"{t.dtype}")
  for want, got in zip(shape, t.shape):
    if want != -1 and want != got:
      raise ValueError(f"dot_product_attention: {name} shape should be {list(shape)}: but "
                       f"got {t.shape}")


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal: bool = False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual: bool = False):
  r"""Scaled dot-product attention, per head:
  ``softmax(Q K^T * scale + bias) V`` over the key positions.

  Shapes use B batch, T query length, S key length, N query heads, K
  key/value heads (``N`` a multiple of ``K``: grouped-query attention; ``K == 1``:
  multi-query), H head size.

  Args:
    query: ``(B, T, N, H)`` or ``(T, N, H)``.
    key: ``(B, S, K, H)`` or ``(S, K, H)``.
    value: the same shape and dtype as ``key``.
    bias: optional logits bias, 4-D and broadcastable to ``(B, N, T, S)``.
    mask: optional boolean mask, 4-D and broadcastable to ``(B, N, T, S)``;
      True marks the logits that take part.
    scale: logits scale; default ``1 / sqrt(H)``.
    is_causal: mask out key positions after each query position.
    query_seq_lengths, key_value_seq_lengths: optional int32 ``(B,)`` valid
      lengths; padded query rows come out as zeros.
    local_window_size: ``(left, right)`` (or one int for both): each query
      position ``t`` attends to keys in ``[t - left, t + right]``.
    implementation: ``None`` or ``'xla'`` (``'cudnn'`` needs NVIDIA cuDNN).
    return_residual: also return the log-sum-exp of the logits,
      shape ``(B, T, N)`` (or ``(T, N)``).

  Returns:
    The attention output with ``query``'s shape, or ``(output, residual)``.
  """
  output_shape = jnp.asarray(query).shape
  residual_shape = output_shape[:-1]
  query, key, value = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
  bias = _ensure_4d(bias) if bias is not None else None
  mask = _ensure_4d(mask) if mask is not None else None
  if query_seq_lengths is not None:
    query_seq_lengths = jnp.asarray(query_seq_lengths)
  if key_value_seq_lengths is not None:
    key_value_seq_lengths = jnp.asarray(key_value_seq_lengths)
  if isinstance(local_window_size, int):
    local_window_size = (local_window_size, local_window_size)
  B, S, K, H = key.shape
  _check(value, (B, S, K, H), key.dtype, "value")
  _check(query, (B, -1, -1, H), key.dtype, "query")
  _check(mask, (-1,) * 4, np.dtype(bool), "mask")
  _check(bias, (-1,) * 4, None, "bias")
  _check(query_seq_lengths, (B,), np.dtype(np.int32), "query_seq_lengths")
  _check(key_value_seq_lengths, (B,), np.dtype(np.int32), "key_value_seq_lengths")
  N = query.shape[-2]
  if N % K != 0:
    raise ValueError(f"The number of query heads must be a multiple of key/value heads, "
                     f"but got {N} vs {K}")
  for name, t in (("bias", bias), ("mask", mask)):
    if t is not None and t.shape[1] not in (1, N):
      raise ValueError(f"dot_product_attention: {name} of shape {t.shape} must have 1 or N={N} "
                       "heads (axis 1) to broadcast against the (B, N, T, S) logits.")
  if implementation == "cudnn":
    raise RuntimeError("cuDNN is not detected: dot_product_attention(implementation='cudnn') "
                       "needs an NVIDIA GPU with cuDNN; use implementation='xla' or None.")
  if implementation not in (None, "xla"):
    raise ValueError(f"Unsupported implementation option: {implementation}")
  scale_val = (1.0 / np.sqrt(H)) if scale is None else scale
  out = _attention_xla(query, key, value, bias, mask, is_causal=is_causal, scale=scale_val,
                       q_seqlen=query_seq_lengths, kv_seqlen=key_value_seq_lengths,
                       local_window_size=local_window_size, return_residual=return_residual)
  if return_residual:
    out, residual = out
    return jnp.reshape(out, output_shape), jnp.reshape(residual, residual_shape)
  return jnp.reshape(out, output_shape)
