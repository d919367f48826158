"""``conv_general_dilated``'s lowering on AVX2 hosts: large channels-last
float convolutions run as host kernels, windows copied into a column matrix
(im2col) a block of images at a time and multiplied by the host's BLAS.

IREE's convolution kernels run well on AVX-512 (jaxbench conv2d/fwd, a 3x3
conv of 32x64x64x32 to 64 features: 19 ms, 0.41 of XLA's oneDNN) but not on
AVX2 hosts (AMD znver3, 2 cores: 168-174 ms, 1.2 of JAX's 140 ms; IREE's
time grows faster than the batch: 18 ms of CPU at batch 4, 304 at 32). There
windows of a few images at a time are copied into a column matrix of ~8 MB
and one GEMM per block runs on each core: 76-93 ms on a quiet machine for the
same convolution (14.8 ms of it the copies); interleaved A/B on a loaded one,
process CPU ms, host vs IREE: forward 172 vs 304, gradient 630 vs 904. At
0.6-1.2 GFLOP (batch 4-16) the two are within noise.

Taken when the program may call host kernels (``ModuleBuilder.host_kernels``),
the host has no AVX-512, the operands and result share a type of
``host_blas.DTYPES``, there is one feature and one batch group, the input's
feature dim is its last (windows copied a channel vector at a time), and the
convolution is large (``CONV_MIN_FLOPS``) with at least ``MIN_CONTRACTION``
terms per output and ``MIN_FEATURES`` output features (thin products are
bound by memory traffic, which IREE fuses with the neighbours). A
convolution that the primitive lowers by output position (a kernel gradient:
``conv_lowering.use_positions``) runs as ``_HostKernelGradient``.
Everything else keeps the primitive's own lowering.
"""
from __future__ import annotations

import math

import numpy as np

from openjax._src.primitives.dot_conv.conv import conv_general_dilated_p
from openjax._src.primitives.dot_conv import conv_lowering
from openjax._src.runtime import host_blas, host_calls
from openjax._src.runtime.compiler import native_vector_bytes

#: Convolutions of at least this many flops (2 x outputs x contraction).
CONV_MIN_FLOPS = 3e8
#: ... whose product per output has at least this many terms (taps x input
#: features) ...
MIN_CONTRACTION = 64
#: ... and at least this many output features.
MIN_FEATURES = 16
#: The column matrix of a block of work has about this many bytes (per
#: image block, 2 cores, ms: 1 image (4.7 MB) 93, 2 images 81, 4 images 76).
COLUMN_BYTES = 1 << 23

_primitive_lower = conv_general_dilated_p.lower


def _spatial_layout(lhs_shape, lhs_spec, lhs_dilation, padding):
  """Per spatial dim: (padded size, destination slice, source slice) of the
  input in the zero-padded (and dilated) buffer, or None when the padding
  crops a dilated input (the primitive's lowering takes that case)."""
  out = []
  for d, (lo, hi), ld in zip(lhs_spec[2:], padding, lhs_dilation):
    n = lhs_shape[d]
    dilated = (n - 1) * ld + 1
    size = dilated + lo + hi
    if ld == 1:
      first, skip = max(lo, 0), max(-lo, 0)
      count = min(n - skip, size - first)
      if count <= 0:
        return None
      out.append((size, slice(first, first + count), slice(skip, skip + count)))
    elif lo < 0 or hi < 0:
      return None
    else:
      out.append((size, slice(lo, lo + dilated, ld), slice(None)))
  return out


class _HostConv:
  """A convolution as im2col blocks and GEMMs; calling it is the kernel."""

  def __init__(self, lhs_shape, rhs_shape, out_shape, dtype, *, window_strides, padding,
               lhs_dilation, rhs_dilation, dimension_numbers):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    self.dtype = np.dtype(dtype)
    # Channels-last views: lhs (n, spatial..., c), rhs (taps..., c, o),
    # out (n, spatial..., o).
    self.lhs_perm = (lhs_spec[0], *lhs_spec[2:], lhs_spec[1])
    self.rhs_perm = (*rhs_spec[2:], rhs_spec[1], rhs_spec[0])
    self.out_perm = (out_spec[0], *out_spec[2:], out_spec[1])
    self.n, self.c = lhs_shape[lhs_spec[0]], lhs_shape[lhs_spec[1]]
    self.o = rhs_shape[rhs_spec[0]]
    self.taps = tuple(rhs_shape[d] for d in rhs_spec[2:])
    self.out_spatial = tuple(out_shape[d] for d in out_spec[2:])
    self.window_strides = tuple(window_strides)
    self.rhs_dilation = tuple(rhs_dilation)
    layout = _spatial_layout(lhs_shape, lhs_spec, lhs_dilation, padding)
    # Windows are copied a channel vector at a time: with channels not last
    # (NCHW) the copies gather single elements and IREE is as fast or faster
    # (16x32x64x64 by 64x32x3x3, process ms: 149 host vs 126 IREE).
    self.channels_last = self.lhs_perm[-1] == len(lhs_shape) - 1
    self.padded = None if layout is None else tuple(size for size, _, _ in layout)
    self.plain = layout is not None and all(
        size == lhs_shape[d] for size, d in zip(self.padded, lhs_spec[2:]))
    self.dst = None if layout is None else (slice(None),) + tuple(s for _, s, _ in layout)
    self.src = None if layout is None else (slice(None),) + tuple(s for _, _, s in layout)
    self._size_blocks()

  def _size_blocks(self) -> None:
    """The GEMM's sizes, and how many images a block's column matrix holds."""
    self.contraction = math.prod(self.taps) * self.c
    self.positions = math.prod(self.out_spatial)
    image_bytes = self.positions * self.contraction * self.dtype.itemsize
    self.images = max(1, min(self.n, COLUMN_BYTES // max(1, image_bytes)))

  @property
  def flops(self) -> float:
    return 2.0 * self.n * self.positions * self.contraction * self.o

  def worth_host(self) -> bool:
    return (self.padded is not None and self.channels_last and self.flops >= CONV_MIN_FLOPS
            and self.contraction >= MIN_CONTRACTION and self.o >= MIN_FEATURES
            and self.positions > 0)

  def _windows(self, lhs: np.ndarray) -> np.ndarray:
    """The (n, out..., taps..., c) view of every window of the operand, read
    channels last, zero-padded (and dilated) into a new buffer unless its
    padding is none."""
    x = lhs.transpose(self.lhs_perm)
    if not self.plain:
      padded = np.zeros((self.n, *self.padded, self.c), self.dtype)
      padded[self.dst] = x[self.src]
      x = padded
    st = x.strides
    nsp = len(self.taps)
    shape = (self.n, *self.out_spatial, *self.taps, self.c)
    strides = (st[0], *(st[1 + d] * self.window_strides[d] for d in range(nsp)),
               *(st[1 + d] * self.rhs_dilation[d] for d in range(nsp)), st[-1])
    return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)

  def _in_blocks(self, lhs: np.ndarray, product) -> None:
    """``product(block, cols, start, stop)`` for every block of images
    ``start:stop`` (``cols``: their windows as a column matrix), the blocks
    shared out over the cores (``host_blas.run_blocks``)."""
    windows = self._windows(lhs)
    starts = list(range(0, self.n, self.images))
    blocks = min(len(starts), host_blas.block_count(self.flops))

    def work(block: int) -> None:
      cols = np.empty((self.images, *self.out_spatial, *self.taps, self.c), self.dtype)
      for start in starts[block::blocks]:
        stop = min(start + self.images, self.n)
        m = stop - start
        np.copyto(cols[:m], windows[start:stop])
        product(block, cols[:m].reshape(m * self.positions, self.contraction), start, stop)
    host_blas.run_blocks(work, blocks)

  def __call__(self, lhs: np.ndarray, rhs: np.ndarray, out: np.ndarray) -> None:
    w = np.ascontiguousarray(rhs.transpose(self.rhs_perm)).reshape(self.contraction, self.o)
    y = out.transpose(self.out_perm)

    def product(block, cols, start, stop):
      target = y[start:stop]
      if target.flags.c_contiguous:
        host_blas.gemm(cols, w, target.reshape(cols.shape[0], self.o))
      else:
        result = np.empty((cols.shape[0], self.o), self.dtype)
        host_blas.gemm(cols, w, result)
        target[...] = result.reshape(target.shape)
    self._in_blocks(lhs, product)


class _HostKernelGradient(_HostConv):
  """A convolution with few output positions over a large window -- the
  kernel gradient of a convolution, ``dW = im2col(x)^T @ dy`` -- as im2col
  blocks of the lhs read with its feature dim as images, each block's
  transposed GEMM with the rhs's rows of those images added up.

  With lhs (b, f, spatial) and rhs (o, f, window) in the primitive's terms,
  ``out[b, p, o] = sum_{f, t} lhs[b, f, p * s + t * d] rhs[o, f, t]``: per
  image ``f`` the columns ``cols[t, (p, b)]`` are the forward's im2col with
  the window and positions swapped (strides ``d``, dilation ``s``)."""

  def __init__(self, lhs_shape, rhs_shape, out_shape, dtype, *, window_strides, padding,
               lhs_dilation, rhs_dilation, dimension_numbers):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    # Swap the lhs's batch and feature dims, the rhs's spatial dims become the
    # positions of the swapped problem and the output's the taps.
    super().__init__(lhs_shape, rhs_shape, out_shape, dtype, window_strides=rhs_dilation,
                     padding=padding, lhs_dilation=lhs_dilation, rhs_dilation=window_strides,
                     dimension_numbers=((lhs_spec[1], lhs_spec[0], *lhs_spec[2:]),
                                        rhs_spec, out_spec))
    # (n and c, read from the swapped lhs dims, are already f and b)
    self.taps = tuple(out_shape[d] for d in out_spec[2:])
    self.out_spatial = tuple(rhs_shape[d] for d in rhs_spec[2:])
    self.rhs_perm = (rhs_spec[1], *rhs_spec[2:], rhs_spec[0])      # (f, window..., o)
    self.out_perm = (*out_spec[2:], out_spec[0], out_spec[1])      # (p..., b, o)
    self._size_blocks()

  def __call__(self, lhs: np.ndarray, rhs: np.ndarray, out: np.ndarray) -> None:
    r = rhs.transpose(self.rhs_perm)
    sums = {}   # block -> its images' sum of products

    def product(block, cols, start, stop):
      part = np.empty((self.contraction, self.o), self.dtype)
      host_blas.gemm(cols.T, np.ascontiguousarray(r[start:stop]).reshape(cols.shape[0], self.o),
                     part)
      if block in sums:
        sums[block] += part
      else:
        sums[block] = part
    self._in_blocks(lhs, product)
    total = sums.pop(0)
    for part in sums.values():
      total += part
    out.transpose(self.out_perm)[...] = total.reshape(*self.taps, self.c, self.o)


def _uses_host(ctx, conv: _HostConv, feature_group_count, batch_group_count) -> bool:
  lhs, rhs = ctx.avals_in
  out, = ctx.avals_out
  return (feature_group_count == 1 and batch_group_count == 1
          and lhs.dtype == rhs.dtype == out.dtype and out.dtype in host_blas.DTYPES
          and native_vector_bytes() < 64 and conv.worth_host() and host_blas.available())


@conv_general_dilated_p.def_lower
def _conv_general_dilated_lower(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation,
                                rhs_dilation, dimension_numbers, feature_group_count,
                                batch_group_count, precision, preferred_element_type,
                                out_sharding=None):
  params = dict(window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
                rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers,
                feature_group_count=feature_group_count,
                batch_group_count=batch_group_count, precision=precision,
                preferred_element_type=preferred_element_type, out_sharding=out_sharding)
  if ctx.module.host_kernels:
    lhs_aval, rhs_aval = ctx.avals_in
    out_aval, = ctx.avals_out
    by_positions = conv_lowering.use_positions(
        lhs_aval.shape, rhs_aval.shape, out_aval.shape, dimension_numbers,
        lhs_dilation=lhs_dilation, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count)
    kind = _HostKernelGradient if by_positions else _HostConv
    conv = kind(lhs_aval.shape, rhs_aval.shape, out_aval.shape, out_aval.dtype,
                window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
                rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers)
    if _uses_host(ctx, conv, feature_group_count, batch_group_count):
      kernel = host_calls.register_kernel(
          conv, ctx.avals_in, ctx.avals_out,
          key=("conv_general_dilated", kind.__name__, tuple(window_strides), tuple(map(tuple, padding)),
               tuple(lhs_dilation), tuple(rhs_dilation),
               tuple(map(tuple, dimension_numbers))))
      return ctx.call_import(kernel.symbol, [lhs, rhs], ctx.avals_out)
  return _primitive_lower(ctx, lhs, rhs, **params)


__all__ = ["CONV_MIN_FLOPS", "MIN_CONTRACTION", "MIN_FEATURES", "COLUMN_BYTES"]
