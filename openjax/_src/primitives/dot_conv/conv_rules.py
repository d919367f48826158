"""The NumPy evaluation and the StableHLO lowering of ``conv_general_dilated``.

Both work on the canonical layout: ``lhs`` as (batch, feature, spatial...),
``rhs`` as (out feature, in feature, spatial...), the result as (batch,
feature, spatial...); ``conv.py`` permutes to and from the user's layout.

The impl dilates and pads ``lhs`` once (channels last), takes every window
as a strided view (``sliding_window_view``), and contracts the windows with
the kernel as one batched matrix product over the groups (im2col), built in
blocks of output rows to bound its size. When even one row of windows is too
large it accumulates one matrix product per kernel tap instead, which needs
only output-sized temporaries; neither loops over output pixels. The
lowering helpers write ``stablehlo.convolution``'s attributes.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from openjax._src import dtypes
from openjax._src.lowering.builder import Value, dense_int_attr
from openjax._src.lowering.mlir_types import split_tensor_type
from openjax._src.primitives.dot_conv.dot import _cast, _int_matmul

# The window matrix is built in blocks of output rows of at most this many
# elements; when one row is larger, the impl accumulates tap by tap.
_IM2COL_LIMIT = 1 << 24


def dilated_size(size: int, dilation: int) -> int:
  """Length of an axis of ``size`` elements with ``dilation - 1`` holes between them."""
  return 0 if size == 0 else (size - 1) * dilation + 1


def conv_out_size(in_size: int, window: int, stride: int, lo: int, hi: int,
                  lhs_dilation: int, rhs_dilation: int) -> int:
  """Number of windows along one spatial axis (0 when the window does not fit)."""
  padded = dilated_size(in_size, lhs_dilation) + lo + hi
  win = dilated_size(window, rhs_dilation)
  return max(0, (padded - win) // stride + 1)


def _channels_last(x: np.ndarray, dilation, padding, dtype) -> np.ndarray:
  """``x`` (batch, feature, spatial...) as (batch, spatial..., feature) in
  ``dtype``, with holes between spatial elements and (possibly negative) edge
  padding (XLA's Pad with interior padding), in one copy. Channels last
  makes every window's features one contiguous run for the im2col copy."""
  nsp = x.ndim - 2
  plain = all(d == 1 for d in dilation) and not any(lo or hi for lo, hi in padding)
  moved = np.moveaxis(x, 1, -1)
  if plain and x.dtype == dtype and moved.flags.c_contiguous:
    return moved
  shape = [x.shape[0]]
  dst, src = [slice(None)], [slice(None)]
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
  shape.append(x.shape[1])
  out = np.zeros(shape, dtype)
  if not empty:
    with np.errstate(all="ignore"):
      out[tuple(dst) + (slice(None),)] = moved[tuple(src) + (slice(None),)]
  assert out.ndim == nsp + 2
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
  docstring; any strides), accumulated in ``comp`` and rounded to
  ``out_dtype``."""
  nsp = lhs.ndim - 2
  n, c = lhs.shape[:2]
  o, i = rhs.shape[:2]
  ksize = tuple(rhs.shape[2:])
  groups = max(feature_group_count, batch_group_count)
  out_spatial = tuple(
      conv_out_size(s, k, st, lo, hi, ld, rd)
      for s, k, st, (lo, hi), ld, rd in zip(lhs.shape[2:], ksize, window_strides, padding,
                                            lhs_dilation, rhs_dilation))
  m = n // batch_group_count
  out_shape = (m, o) + out_spatial
  kpix, opix, og = math.prod(ksize), math.prod(out_spatial), o // groups
  if 0 in out_shape or kpix == 0 or i == 0:
    return np.zeros(out_shape, out_dtype)
  # Floats are widened once here, not in the (larger) window matrix.
  x_dtype = comp if dtypes.kind(comp) in "fc" else lhs.dtype
  x = _channels_last(lhs, lhs_dilation, padding, x_dtype)        # (n, spatial..., c)
  sp = tuple(range(1, 1 + nsp))
  # Batch groups split the batch (group-major), feature groups the features;
  # either way group g pairs with kernel rows g*og:(g+1)*og. ``lead`` splits x's
  # batch and feature axes, ``to_gm`` orders the split axes (group, m, ...).
  if batch_group_count > 1:
    def lead(shape_mid):                       # (group, m, spatial..., c)
      return (groups, m) + shape_mid + (c,)
    to_gm, out_axes = (0, 1), tuple(range(2, 2 + nsp))
  else:
    def lead(shape_mid):                       # (n, spatial..., group, c // group)
      return (n,) + shape_mid + (groups, c // groups)
    to_gm, out_axes = (1 + nsp, 0), sp
  feat = 2 + nsp                               # the in-feature axis after ``lead``
  # Kernel rows ordered (taps..., in feature), matching the window columns.
  w = rhs.reshape(groups, og, i, kpix).transpose(0, 3, 2, 1)       # (g, kpix, i, og)
  # Window-matrix elements per row of the first output spatial axis.
  row_cols = m * (opix // out_spatial[0] if nsp else 1) * i * kpix * groups
  if row_cols <= _IM2COL_LIMIT:
    view = sliding_window_view(
        x, [dilated_size(k, d) for k, d in zip(ksize, rhs_dilation)], axis=sp)
    index = (slice(None),) + tuple(
        slice(0, (os - 1) * st + 1, st) for os, st in zip(out_spatial, window_strides)) + (
        slice(None),) + tuple(slice(None, None, d) for d in rhs_dilation)
    view = view[index]                                 # (n, out..., c, taps...)
    taps = tuple(range(feat + 1, feat + 1 + nsp))
    w_cols = w.reshape(groups, kpix * i, og)
    # Blocks of output rows keep the window matrix under the limit.
    rows = out_spatial[0] if nsp else 1
    step = max(1, _IM2COL_LIMIT // row_cols)
    blocks = []
    for r0 in range(0, rows, step):
      part = view[:, r0:r0 + step] if nsp else view
      mid = part.shape[1:1 + nsp]
      cols = part.reshape(lead(mid) + ksize).transpose(to_gm + out_axes + taps + (feat,))
      acc = _group_matmul(cols.reshape(groups, m * math.prod(mid), kpix * i), w_cols, comp)
      blocks.append(acc.reshape((groups, m) + mid + (og,)))
    acc = blocks[0] if len(blocks) == 1 else np.concatenate(blocks, axis=2)
  else:
    acc = None
    for t, tap in enumerate(itertools.product(*(range(k) for k in ksize))):
      index = (slice(None),) + tuple(
          slice(k * d, k * d + (os - 1) * st + 1, st)
          for k, d, os, st in zip(tap, rhs_dilation, out_spatial, window_strides))
      part = x[index].reshape(lead(out_spatial)).transpose(to_gm + out_axes + (feat,))
      term = _group_matmul(part.reshape(groups, m * opix, i), w[:, t], comp)
      if acc is None:
        acc = term
      else:
        with np.errstate(all="ignore"):
          acc += term
  # (groups, m * opix, og) -> (m, out spatial..., groups * og) -> canonical view.
  out = acc.reshape((groups, m) + out_spatial + (og,))
  out = out.transpose((1,) + tuple(range(2, 2 + nsp)) + (0, 2 + nsp))
  out = np.moveaxis(out.reshape((m,) + out_spatial + (o,)), -1, 1)
  if comp == dtypes.bool_:
    return out != 0
  return _cast(out, out_dtype)


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


def kernel_spatial_major(ctx, rhs: Value, rhs_shape, dimension_numbers, comp):
  """``rhs`` laid out (spatial..., in feature, out feature) (HWIO), behind an
  optimization barrier, and the dimension numbers that read it so.

  IREE's CPU backend compiles a convolution into a fast kernel only when its
  kernel is spatial-major: with any other kernel layout (OIHW, JAX's NCHW
  default) it emits a generic loop nest 40-60x slower (3x3 conv over
  64x16x32x32: 290 ms vs 5 ms). The input and output may be in any layout
  (IREE moves them to channels last itself). The barrier keeps IREE from
  folding the transpose back into the convolution (it does, and is slow
  again); the kernel copy it materialises is small beside the convolution."""
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  nsp = len(rhs_spec) - 2
  order = tuple(rhs_spec[2:]) + (rhs_spec[1], rhs_spec[0])
  if order != tuple(range(nsp + 2)):
    shape = tuple(rhs_shape[d] for d in order)
    rhs = ctx.op("stablehlo.transpose", [rhs], ctx.tensor_type(shape, comp),
                 attrs={"permutation": order})
  rhs = ctx.op("stablehlo.optimization_barrier", [rhs], rhs.type)
  return rhs, (lhs_spec, (nsp + 1, nsp) + tuple(range(nsp)), out_spec)


def is_pointwise(rhs_shape, dimension_numbers, *, window_strides, padding, lhs_dilation,
                 rhs_dilation, feature_group_count, batch_group_count) -> bool:
  """Whether a convolution is a matrix product at every position: a 1x1
  window, unit strides and dilations, no padding, no groups."""
  rhs_spec = dimension_numbers[1]
  return (all(rhs_shape[d] == 1 for d in rhs_spec[2:]) and feature_group_count == 1
          and batch_group_count == 1 and all(s == 1 for s in window_strides)
          and all(d == 1 for d in tuple(lhs_dilation) + tuple(rhs_dilation))
          and all(lo == 0 and hi == 0 for lo, hi in padding))


def channels_last(ctx, lhs: Value, lhs_shape, dimension_numbers, comp):
  """``lhs`` laid out (batch, spatial..., feature) behind an optimization
  barrier, the dimension numbers that read it so and write a channels-last
  result, and the permutation that puts that result back in ``out_spec``.

  For a pointwise (1x1) convolution in a feature-major layout (NCHW) IREE
  forms a batched product that reads the features strided (64x32x32x32 by
  32x32: 16.8 ms); as a product of a channels-last matrix with the kernel,
  between two transposes, it takes 5.9 ms. The barriers keep IREE from
  fusing the transposes back into the product."""
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  nsp = len(lhs_spec) - 2
  last = (0, nsp + 1) + tuple(range(1, nsp + 1))
  order = (lhs_spec[0],) + tuple(lhs_spec[2:]) + (lhs_spec[1],)
  if lhs_spec == last and out_spec == last:
    return lhs, dimension_numbers, None
  if order != tuple(range(nsp + 2)):
    shape = tuple(lhs_shape[d] for d in order)
    lhs = ctx.op("stablehlo.transpose", [lhs], ctx.tensor_type(shape, comp),
                 attrs={"permutation": order})
    lhs = ctx.op("stablehlo.optimization_barrier", [lhs], lhs.type)
  role = {out_spec[0]: 0, out_spec[1]: nsp + 1}
  role.update({d: 1 + k for k, d in enumerate(out_spec[2:])})
  back = tuple(role[d] for d in range(nsp + 2))
  return lhs, (last, rhs_spec, last), back


def restore_layout(ctx, out: Value, out_shape, back, comp) -> Value:
  """The channels-last result of ``channels_last`` in the user's layout."""
  if back is None:
    return out
  if back == tuple(range(len(back))):
    return out
  out = ctx.op("stablehlo.optimization_barrier", [out], out.type)
  return ctx.op("stablehlo.transpose", [out], ctx.tensor_type(out_shape, comp),
                attrs={"permutation": back})


def emit_convolution(ctx, lhs: Value, rhs: Value, out_shape, comp, attrs: dict) -> Value:
  """One ``stablehlo.convolution`` of ``comp``-typed operands; complex
  operands as four real convolutions of their parts (IREE's CPU backend
  segfaults on some complex64 convolutions, e.g. a plain 'SAME' NCHW one)."""
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
