"""The NumPy evaluation and the StableHLO lowering of ``conv_general_dilated``.

Both work on the canonical layout: ``lhs`` as (batch, feature, spatial...),
``rhs`` as (out feature, in feature, spatial...), the result as (batch,
feature, spatial...); ``conv.py`` permutes to and from the user's layout.

The impl dilates and pads ``lhs`` once, takes every window as a strided view
(``sliding_window_view``), and contracts the windows with the kernel as one
batched matrix product per group (im2col). When the window matrix would be
too large it instead accumulates one matrix product per kernel tap, which
needs only output-sized temporaries; neither loops over output pixels.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from openjax._src import dtypes
from openjax._src.lowering.builder import Value, dense_int_attr
from openjax._src.lowering.mlir_types import split_tensor_type
from openjax._src.primitives.dot import _cast, _int_matmul

# Above this many window-matrix elements the impl accumulates tap by tap.
_IM2COL_LIMIT = 1 << 25


def dilated_size(size: int, dilation: int) -> int:
  """Length of an axis of ``size`` elements with ``dilation - 1`` holes between them."""
  return 0 if size == 0 else (size - 1) * dilation + 1


def conv_out_size(in_size: int, window: int, stride: int, lo: int, hi: int,
                  lhs_dilation: int, rhs_dilation: int) -> int:
  """Number of windows along one spatial axis (0 when the window does not fit)."""
  padded = dilated_size(in_size, lhs_dilation) + lo + hi
  win = dilated_size(window, rhs_dilation)
  return max(0, (padded - win) // stride + 1)


def _dilate_and_pad(x: np.ndarray, dilation, padding) -> np.ndarray:
  """``x`` (batch, feature, spatial...) with holes between spatial elements
  and (possibly negative) edge padding: XLA's Pad with interior padding."""
  if all(d == 1 for d in dilation) and all(lo >= 0 and hi >= 0 for lo, hi in padding):
    if not any(lo or hi for lo, hi in padding):
      return x
    return np.pad(x, ((0, 0), (0, 0), *padding))
  shape = list(x.shape[:2])
  dst, src = [slice(None)] * 2, [slice(None)] * 2
  empty = False
  for n, d, (lo, hi) in zip(x.shape[2:], dilation, padding):
    size = max(0, dilated_size(n, d) + lo + hi)
    shape.append(size)
    first = max(0, -(lo // d))                     # first source index kept: j*d+lo >= 0
    last = min(n - 1, (size - 1 - lo) // d)         # last: j*d+lo <= size-1
    count = last - first + 1
    if count <= 0:
      empty, count = True, 0
    start = first * d + lo
    dst.append(slice(start, start + (count - 1) * d + 1 if count else start, d))
    src.append(slice(first, first + count))
  out = np.zeros(shape, x.dtype)
  if not empty:
    out[tuple(dst)] = x[tuple(src)]
  return out


def _group_matmul(a: np.ndarray, b: np.ndarray, comp: np.dtype) -> np.ndarray:
  """``a @ b`` for (groups, m, k) @ (groups, k, n) in the accumulation dtype."""
  if comp == dtypes.bool_:
    acc = np.float32 if a.shape[-1] < (1 << 24) else np.float64
    return np.matmul(a.astype(acc), b.astype(acc))
  if comp == dtypes.int64:
    if a.shape[0] == 1:
      return _int_matmul(a[0], b[0])[None]
    return np.stack([_int_matmul(x, y) for x, y in zip(a, b)])
  with np.errstate(all="ignore"):
    return np.matmul(a.astype(comp, copy=False), b.astype(comp, copy=False))


def conv_numpy(lhs: np.ndarray, rhs: np.ndarray, *, window_strides, padding, lhs_dilation,
               rhs_dilation, feature_group_count: int, batch_group_count: int,
               comp: np.dtype, out_dtype: np.dtype) -> np.ndarray:
  """The convolution of canonical-layout ``lhs`` and ``rhs`` (see the module
  docstring), accumulated in ``comp`` and rounded to ``out_dtype``."""
  nsp = lhs.ndim - 2
  n, c = lhs.shape[:2]
  o, i = rhs.shape[:2]
  ksize = rhs.shape[2:]
  groups = max(feature_group_count, batch_group_count)
  out_spatial = tuple(
      conv_out_size(s, k, st, lo, hi, ld, rd)
      for s, k, st, (lo, hi), ld, rd in zip(lhs.shape[2:], ksize, window_strides, padding,
                                            lhs_dilation, rhs_dilation))
  out_batch = n // batch_group_count
  out_shape = (out_batch, o) + out_spatial
  kpix, opix = math.prod(ksize), math.prod(out_spatial)
  if 0 in out_shape or kpix == 0 or i == 0:
    return np.zeros(out_shape, out_dtype)
  x = _dilate_and_pad(lhs, lhs_dilation, padding)
  # Batch groups split the lhs batch (group-major); feature groups split its
  # features. Either way group g pairs with kernel rows g*og:(g+1)*og.
  if batch_group_count > 1:
    m, lead = out_batch, (groups, out_batch, c)          # lhs axes (g, m, i)
    perm_gm = (0, 1, 2)
  else:
    m, lead = n, (n, groups, c // groups)                # lhs axes (m, g, i)
    perm_gm = (1, 0, 2)
  og = o // groups
  # Kernel as (groups, i * kpix, og), rows ordered (in feature, taps...).
  w = rhs.reshape(groups, og, i * kpix).transpose(0, 2, 1)
  out_axes = tuple(range(3, 3 + nsp))
  win_extent = [dilated_size(k, d) for k, d in zip(ksize, rhs_dilation)]
  if m * opix * i * kpix * groups <= _IM2COL_LIMIT:
    view = sliding_window_view(x, win_extent, axis=tuple(range(2, 2 + nsp)))
    index = (slice(None), slice(None)) + tuple(
        slice(0, (os - 1) * st + 1, st) for os, st in zip(out_spatial, window_strides)) + tuple(
        slice(None, None, d) for d in rhs_dilation)
    view = view[index].reshape(lead + out_spatial + tuple(ksize))
    tap_axes = tuple(range(3 + nsp, 3 + 2 * nsp))
    cols = view.transpose(perm_gm[:2] + out_axes + (2,) + tap_axes)
    acc = _group_matmul(cols.reshape(groups, m * opix, i * kpix), w, comp)
  else:
    acc = None
    w_taps = w.reshape(groups, i, kpix, og)
    for t, tap in enumerate(itertools.product(*(range(k) for k in ksize))):
      index = (slice(None), slice(None)) + tuple(
          slice(k * d, k * d + (os - 1) * st + 1, st)
          for k, d, os, st in zip(tap, rhs_dilation, out_spatial, window_strides))
      part = x[index].reshape(lead + out_spatial).transpose(perm_gm[:2] + out_axes + (2,))
      term = _group_matmul(part.reshape(groups, m * opix, i), w_taps[:, :, t, :], comp)
      if acc is None:
        acc = term
      else:
        with np.errstate(all="ignore"):
          acc += term
  # (groups, m * opix, og) -> (m, groups * og, out spatial...)
  out = acc.reshape((groups, m) + out_spatial + (og,))
  out = out.transpose((1, 0, 2 + nsp) + tuple(range(2, 2 + nsp))).reshape(out_shape)
  if comp == dtypes.bool_:
    return out != 0
  return _cast(np.asarray(out), out_dtype)


# ------------------------------------------------------------------ lowering
def conv_dimension_numbers_attr(dimension_numbers) -> str:
  """``#stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>``: each
  list names the role of every physical dimension."""
  def labels(spec, batch, feature):
    names = [""] * len(spec)
    names[spec[0]], names[spec[1]] = batch, feature
    for k, d in enumerate(spec[2:]):
      names[d] = str(k)
    return "[" + ", ".join(names) + "]"
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  return (f"#stablehlo.conv<{labels(lhs_spec, 'b', 'f')}x{labels(rhs_spec, 'o', 'i')}"
          f"->{labels(out_spec, 'b', 'f')}>")


def padding_attr(padding) -> str:
  """``dense<[[lo, hi], ...]> : tensor<nx2xi64>``."""
  return dense_int_attr([list(p) for p in padding], shape=(len(padding), 2))


def emit_convolution(ctx, lhs: Value, rhs: Value, out_shape, comp, attrs: dict) -> Value:
  """One ``stablehlo.convolution`` of ``comp``-typed operands; complex
  operands as four real convolutions of their parts (IREE's CPU backend
  compiles no complex convolution)."""
  if dtypes.kind(comp) != "c":
    return ctx.op("stablehlo.convolution", [lhs, rhs], ctx.tensor_type(out_shape, comp),
                  attrs=attrs)
  real = np.finfo(comp).dtype
  parts = []
  for x in (lhs, rhs):
    shape, _ = split_tensor_type(x.type)
    parts.append([ctx.op(f"stablehlo.{p}", [x], ctx.tensor_type(shape, real))
                  for p in ("real", "imag")])
  (lr, li), (rr, ri) = parts
  out_type = ctx.tensor_type(out_shape, real)
  conv = lambda a, b: ctx.op("stablehlo.convolution", [a, b], out_type, attrs=attrs)
  re = ctx.op("stablehlo.subtract", [conv(lr, rr), conv(li, ri)], out_type)
  im = ctx.op("stablehlo.add", [conv(lr, ri), conv(li, rr)], out_type)
  return ctx.op("stablehlo.complex", [re, im], ctx.tensor_type(out_shape, comp))


def lower_batch_groups_to_features(ctx, x: Value, shape, lhs_spec, groups: int, comp) -> Value:
  """Regroup an lhs of physical ``shape``: its batch axis, (groups, rest)
  group-major, becomes (rest) and the groups join the feature axis as its
  major part. A batch-grouped convolution of the old lhs equals the
  feature-grouped convolution of the new one with the same kernel."""
  b, f = lhs_spec[0], lhs_spec[1]
  split = list(shape[:b]) + [groups, shape[b] // groups] + list(shape[b + 1:])
  x = ctx.op("stablehlo.reshape", [x], ctx.tensor_type(split, comp))
  f_split = f + (f > b)
  order = [i for i in range(len(split)) if i != b]
  pos = order.index(f_split)
  order.insert(pos, b)
  moved = [split[i] for i in order]
  x = ctx.op("stablehlo.transpose", [x], ctx.tensor_type(moved, comp),
             attrs={"permutation": tuple(order)})
  merged = moved[:pos] + [moved[pos] * moved[pos + 1]] + moved[pos + 2:]
  return ctx.op("stablehlo.reshape", [x], ctx.tensor_type(merged, comp))
