"""Image resampling (``jax.image.resize``, ``scale_and_translate``).

Each spatial axis is resampled by a weight matrix ``W[input, output]`` built
from a kernel (triangle, Keys cubic, OpenCV cubic, Lanczos, box area), then all
axes are contracted with the image in one ``einsum``. With ``antialias`` the
kernel is widened by ``1/scale`` when downsampling, so it averages every input
pixel an output pixel covers. Everything is written with ``jnp``/``lax``
wrappers, so ``jit``, ``vmap`` and gradients (also w.r.t. ``scale`` and
``translation``) work.
"""
from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import concrete_or_error
from openjax._src.nn import jnp
from openjax._src.numpy import util
from openjax._src.numpy.util import canonicalize_axis, promote_dtypes_inexact

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
  """Image resize method: NEAREST, LINEAR, LANCZOS3, LANCZOS5, CUBIC (Keys),
  CUBIC_PYTORCH (OpenCV's cubic, edge-padded without antialias), AREA."""
  NEAREST = 0
  LINEAR = 1
  LANCZOS3 = 2
  LANCZOS5 = 3
  CUBIC = 4
  CUBIC_PYTORCH = 5
  AREA = 6

  @staticmethod
  def from_string(s: str) -> ResizeMethod:
    method = _METHOD_OF_NAME.get(s)
    if method is None:
      raise ValueError(f'Unknown resize method "{s}"; use one of {sorted(_METHOD_OF_NAME)}')
    return method


_METHOD_OF_NAME = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
    "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH, "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "area": ResizeMethod.AREA,
}


def _lanczos_kernel(radius, x):
  y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
  # sin(pi x) sin(pi x / r) / (pi x)^2 tends to 1/r at 0: take the limit below 1e-3.
  out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
  return jnp.where(x > radius, 0., out)


def _keys_cubic_kernel(x):
  out = ((1.5 * x - 2.5) * x) * x + 1.
  out = jnp.where(x >= 1., ((-0.5 * x + 2.5) * x - 4.) * x + 2., out)
  return jnp.where(x >= 2., 0., out)


def _opencv_cubic_kernel(x):
  a = -0.75
  out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
  out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
  return jnp.where(x >= 2.0, 0.0, out)


def _triangle_kernel(x):
  return jnp.maximum(0, 1 - jnp.abs(x))


# AREA weighs by the overlap of input and output pixel intervals, not by a kernel.
_AREA = "area"

# method -> (kernel radius in input pixels, kernel)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle_kernel),
    ResizeMethod.LANCZOS3: (3, lambda x: _lanczos_kernel(3., x)),
    ResizeMethod.LANCZOS5: (5, lambda x: _lanczos_kernel(5., x)),
    ResizeMethod.CUBIC: (2, _keys_cubic_kernel),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic_kernel),
    ResizeMethod.AREA: (1, _AREA),
}


def _normalize_columns(weights):
  # Each output pixel's weights sum to one; columns that (nearly) vanish stay zero.
  total = jnp.sum(weights, axis=0, keepdims=True)
  return jnp.where(jnp.abs(total) > 1000. * float(np.finfo(np.float32).eps),
                   jnp.divide(weights, jnp.where(total != 0, total, 1)), 0)


def _weight_matrix(input_size: int, output_size: int, scale, translation, kernel,
                   antialias: bool, edge_padding: bool, radius: int):
  """``W[input_size, output_size]``: output pixel j is sum_i x[i] W[i, j]."""
  dtype = dtypes.result_type(scale, translation)
  inv_scale = 1. / scale
  kernel_scale = jnp.maximum(inv_scale, 1.) if antialias else 1.
  # Output pixel centres mapped back into input coordinates (pixel centres at +0.5).
  sample_f = ((jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale
              - translation * inv_scale - 0.5)
  if edge_padding and antialias:
    static_scale = concrete_or_error(
        None, scale, "scale_and_translate: antialiasing with edge padding needs a static scale")
    pad = math.ceil(radius * max(1.0 / float(static_scale), 1.0))
  else:
    pad = radius if edge_padding else 0
  positions = jnp.arange(-pad, input_size + pad, dtype=dtype)
  if kernel is _AREA:
    out_left = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
    out_right = out_left + inv_scale
    in_left = jnp.arange(input_size, dtype=dtype)
    weights = jnp.maximum(0.0, jnp.minimum(out_right[None, :], in_left[:, None] + 1.0)
                          - jnp.maximum(out_left[None, :], in_left[:, None]))
  else:
    weights = kernel(jnp.abs(sample_f[None, :] - positions[:, None]) / kernel_scale)
  if edge_padding:
    # Positions past the edges read the edge pixel: fold their rows onto it.
    clamped = np.clip(np.arange(-pad, input_size + pad), 0, input_size - 1)
    fold = jnp.asarray(clamped[None, :] == np.arange(input_size)[:, None], dtype)
    return _normalize_columns(jnp.matmul(fold, weights, precision=lax.Precision.HIGHEST))
  weights = _normalize_columns(weights)
  # Samples outside the input get no weight (zero output there).
  inside = jnp.logical_and(sample_f >= -0.5, sample_f <= input_size - 0.5)
  return jnp.where(inside[None, :], weights, 0)


def _scale_and_translate(x, output_shape, spatial_dims, scale, translation, kernel,
                         antialias, precision, edge_padding, radius):
  if not spatial_dims:
    return x
  ndim = len(output_shape)
  operands = []
  out_indices = list(range(ndim))
  for i, d in enumerate(spatial_dims):
    d = canonicalize_axis(d, x.ndim)
    w = _weight_matrix(x.shape[d], output_shape[d], scale[i], translation[i], kernel,
                       antialias, edge_padding, radius).astype(x.dtype)
    operands += [w, [d, ndim + i]]
    out_indices[d] = ndim + i
  return jnp.einsum(x, list(range(ndim)), *operands, out_indices, precision=precision)


def _canonical_shape(fn: str, shape, image) -> tuple[int, ...]:
  try:
    shape = tuple(int(d) for d in shape)
  except TypeError:
    raise TypeError(f"{fn}: shape must be a sequence of ints, got {shape!r}") from None
  if len(shape) != np.ndim(image):
    raise ValueError(
        f"{fn}: shape must have length equal to the number of dimensions of the image; "
        f"got shape {shape} for an image of shape {tuple(np.shape(image))}")
  return shape


def _method(method) -> ResizeMethod:
  if isinstance(method, str):
    return ResizeMethod.from_string(method)
  if not isinstance(method, ResizeMethod):
    raise TypeError(f"resize method must be a ResizeMethod or a string, got {method!r}")
  return method


def scale_and_translate(image, shape: Sequence[int], spatial_dims: Sequence[int], scale,
                        translation, method: str | ResizeMethod, antialias: bool = True,
                        precision=lax.Precision.HIGHEST):
  """Resample ``image`` to ``shape``, mapping input location ``x`` (per spatial dim,
  pixel centres at ``+0.5``) to ``x * scale + translation``; output pixels whose
  source lies outside the input are zero. ``NEAREST`` is not supported here."""
  shape = _canonical_shape("scale_and_translate", shape, image)
  method = _method(method)
  if method == ResizeMethod.NEAREST:
    raise ValueError("Nearest neighbor resampling is not currently supported for "
                     "scale_and_translate; use method='linear' or jax.image.resize")
  if len(spatial_dims) != len(scale) or len(spatial_dims) != len(translation):
    raise ValueError(
        f"scale_and_translate: spatial_dims, scale and translation must have the same length, "
        f"got {len(spatial_dims)}, {len(scale)} and {len(translation)}")
  if method == ResizeMethod.CUBIC_PYTORCH and antialias:
    method = ResizeMethod.CUBIC
  radius, kernel = _KERNELS[method]
  edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
  image, = promote_dtypes_inexact(image)
  scale, translation = promote_dtypes_inexact(scale, translation)
  return _scale_and_translate(image, shape, tuple(spatial_dims), scale, translation, kernel,
                              antialias, precision, edge_padding, radius)


def _resize_nearest(x, output_shape):
  for d, (m, n) in enumerate(zip(x.shape, output_shape)):
    if m == n:
      continue
    # Output pixel centre (j + 0.5) * m / n, rounded down, computed in float32 as JAX does.
    offsets = np.floor(((np.arange(n, dtype=np.float32) + 0.5) * np.float32(m)
                        / np.float32(n)).astype(np.float32)).astype(np.int32)
    index = [slice(None)] * x.ndim
    index[d] = jnp.asarray(offsets)
    x = x[tuple(index)]
  return x


def resize(image, shape: Sequence[int], method: str | ResizeMethod, antialias: bool = True,
           precision=lax.Precision.HIGHEST):
  """Resize ``image`` to ``shape`` with ``method`` (every axis whose size changes).

  ``antialias`` widens the kernel when downsampling (no effect on NEAREST).
  The result is floating point except for NEAREST, which keeps the dtype.
  """
  shape = _canonical_shape("resize", shape, image)
  return _resize(image, shape, _method(method), antialias, precision)


# One cached library program per signature, as JAX jits its ``_resize``: the
# weight matrices (iota, kernel, normalisation: ~30 steps an axis) then run as
# one program's kernels instead of ~30 eager dispatches an axis (10 elements,
# linear: ~600 -> ~100 us).
@partial(util.jit, static_argnums=(1, 2, 3, 4))
def _resize(image, shape: tuple[int, ...], method: ResizeMethod, antialias: bool, precision):
  if method == ResizeMethod.NEAREST:
    return _resize_nearest(jnp.asarray(image), shape)
  image, = promote_dtypes_inexact(image)
  spatial_dims = tuple(i for i in range(len(shape)) if image.shape[i] != shape[i])
  if method == ResizeMethod.CUBIC_PYTORCH and antialias:
    method = ResizeMethod.CUBIC
  radius, kernel = _KERNELS[method]
  scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
  edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
  return _scale_and_translate(image, shape, spatial_dims, scale, [0.] * len(spatial_dims),
                              kernel, antialias, precision, edge_padding, radius)
