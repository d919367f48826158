"""The eager eval kernel of ``conv_general_dilated``: the impl's im2col
contraction (``conv_rules.conv_numpy``) with everything that depends only on
the shapes planned once per eager plan.

The impl spends ~50 us of Python at any size (layout permutations, padding
and window bookkeeping, ``sliding_window_view``'s argument checks); a
1-element-batch, 1-channel 1-d correlation of 7 by 3 elements then took 55 us
where ``np.correlate`` takes 0.7. Planned here: the transposes into the
canonical layout, the padded copy as two precomputed slices, the window view
as one ``np.ndarray`` over the padded buffer with precomputed strides, and
the permutation of the result. One-channel 1-d convolutions with unit
strides (``jnp.convolve``/``jnp.correlate``) use NumPy's direct convolution,
O(n m) without the window matrix (1000 by 429 elements: im2col ~200 us,
``np.convolve`` ~20 us).

Covered: float and complex accumulation, one feature and batch group, no
``lhs_dilation``, window matrices up to the impl's block limit; anything else
returns None and the impl runs.
"""
from __future__ import annotations

import math

import numpy as np

from openjax._src import dtypes
from openjax._src.primitives.dot_conv.conv_rules import _IM2COL_LIMIT, conv_out_size
from openjax._src.primitives.dot_conv.dot import _cast, _compute_dtype


def _is_identity(perm) -> bool:
  return tuple(perm) == tuple(range(len(perm)))


def _pad_plan(in_spatial, padding):
  """(padded spatial shape, destination slices, source slices) for edge
  padding that may be negative (cropping)."""
  shape, dst, src = [], [], []
  for n, (lo, hi) in zip(in_spatial, padding):
    size = n + lo + hi
    d0, s0 = max(lo, 0), max(-lo, 0)
    count = min(n - s0, size - d0)
    if count <= 0:
      return None
    shape.append(size)
    dst.append(slice(d0, d0 + count))
    src.append(slice(s0, s0 + count))
  return tuple(shape), tuple(dst), tuple(src)


def conv_eval_kernel(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
                     dimension_numbers, feature_group_count, batch_group_count, precision,
                     preferred_element_type, out_sharding=None):
  """A planned kernel ``(lhs, rhs) -> out`` for these avals, or None."""
  del precision, out_sharding
  if feature_group_count != 1 or batch_group_count != 1 or any(d != 1 for d in lhs_dilation):
    return None
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  if preferred_element_type is None:
    out_dt = np.dtype(lhs.dtype)
  else:
    out_dt = np.dtype(preferred_element_type)
  comp = _compute_dtype(np.dtype(lhs.dtype), np.dtype(rhs.dtype), out_dt)
  if dtypes.kind(comp) not in "fc" or dtypes.kind(lhs.dtype) not in "fc" \
      or lhs.dtype != rhs.dtype:
    return None
  lshape = tuple(lhs.shape[d] for d in lhs_spec)      # (n, c, spatial...)
  rshape = tuple(rhs.shape[d] for d in rhs_spec)      # (o, c, taps...)
  nsp = len(lshape) - 2
  n, c = lshape[:2]
  o, ksize = rshape[0], rshape[2:]
  if rshape[1] != c:
    return None
  out_spatial = tuple(
      conv_out_size(s, k, st, lo, hi, 1, rd)
      for s, k, st, (lo, hi), rd in zip(lshape[2:], ksize, window_strides, padding,
                                        rhs_dilation))
  kpix, opix = math.prod(ksize), math.prod(out_spatial)
  if 0 in (n, c, o, kpix, opix) or n * opix * c * kpix > _IM2COL_LIMIT:
    return None
  pad = _pad_plan(lshape[2:], padding)
  if pad is None:
    return None
  padded_spatial, dst, src = pad
  lperm = None if _is_identity(lhs_spec) else tuple(lhs_spec)
  rperm = None if _is_identity(rhs_spec) else tuple(rhs_spec)
  plain = all(lo == 0 and hi == 0 for lo, hi in padding)
  padded_shape = (n, c) + padded_spatial
  full = (slice(None), slice(None))
  dst, src = full + dst, full + src
  # The result (n, out..., o) of the contraction, as the user's layout.
  canon = (0, 1 + nsp) + tuple(range(1, 1 + nsp))
  back = tuple(canon[i] for i in np.argsort(out_spec))
  back = None if _is_identity(back) else back
  item = comp.itemsize

  def prepare(x, w):
    if lperm is not None:
      x = x.transpose(lperm)
    if rperm is not None:
      w = w.transpose(rperm)
    if plain:
      xp = np.ascontiguousarray(x, comp)
    else:
      xp = np.zeros(padded_shape, comp)
      xp[dst] = x[src]
    return xp, w

  if nsp == 1 and n == c == o == 1 and window_strides[0] == 1 and rhs_dilation[0] == 1:
    out_shape = tuple(out_spatial[0] if i == 2 else 1 for i in range(3))
    final_shape = tuple(out_shape[d] for d in out_spec)

    def direct(x, w):
      # NumPy's convolve is the multiply-add of the reversed kernel, without
      # correlate's conjugation of its second operand.
      xp, w = prepare(x, w)
      out = np.convolve(xp.reshape(-1), w.reshape(-1).astype(comp, copy=False)[::-1],
                        "valid")
      return _cast(out, out_dt).reshape(final_shape)
    return direct

  # Strides of the window view over the C-contiguous padded buffer.
  elem = [item * math.prod(padded_shape[i + 1:]) for i in range(len(padded_shape))]
  view_shape = (n, c) + out_spatial + tuple(ksize)
  view_strides = (elem[0], elem[1]) + tuple(
      elem[2 + d] * window_strides[d] for d in range(nsp)) + tuple(
      elem[2 + d] * rhs_dilation[d] for d in range(nsp))
  cols_order = (0,) + tuple(range(2, 2 + nsp)) + (1,) + tuple(range(2 + nsp, 2 + 2 * nsp))
  cols_shape = (n * opix, c * kpix)
  result_shape = (n,) + out_spatial + (o,)

  def im2col(x, w):
    xp, w = prepare(x, w)
    windows = np.ndarray(view_shape, comp, xp, 0, view_strides)
    cols = windows.transpose(cols_order).reshape(cols_shape)
    out = np.matmul(cols, w.reshape(o, c * kpix).astype(comp, copy=False).T)
    out = _cast(out, out_dt).reshape(result_shape)
    return out if back is None else out.transpose(back)
  return im2col
