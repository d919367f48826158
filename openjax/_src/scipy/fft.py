"""``jax.scipy.fft``: the type-II discrete cosine transform and its inverse
(``dct``, ``idct`` and the n-dimensional ``dctn``, ``idctn``), each axis one
complex FFT of the even/odd-interleaved signal (Makhoul 1980)."""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.numpy import util
from openjax._src.numpy import fft
from openjax._src.scipy import jnp

__all__ = ["dct", "idct", "dctn", "idctn"]


def _check(fun: str, type: int, norm) -> None:   # noqa: A002 - SciPy's name
  if type != 2:
    raise NotImplementedError(f"jax.scipy.fft.{fun}: only DCT type 2 is implemented; got "
                              f"type={type}")
  if norm is not None and norm not in ("backward", "ortho"):
    raise ValueError(f"jax.scipy.fft.{fun}: norm={norm!r} is not implemented")


def _along(axis: int, ndim: int, v):
  """A 1-d array ``v`` shaped to broadcast along ``axis`` of an ``ndim`` array."""
  return lax.expand_dims(v, tuple(a for a in range(ndim) if a != axis))


def _resize(x, n, axis: int):
  """Zero-pad or truncate ``x`` to length ``n`` along ``axis`` (SciPy's ``n``)."""
  if n is None or n == x.shape[axis]:
    return x
  if n < x.shape[axis]:
    return lax.slice_in_dim(x, 0, n, axis=axis)
  return lax.pad(x, np.zeros((), x.dtype), [(0, n - x.shape[axis] if a == axis else 0, 0)
                                            for a in range(x.ndim)])


def _ortho_scale(n: int) -> np.ndarray:
  """The orthonormal DCT-II's scale per output index: ``sqrt(1/(4n))`` for
  the first, ``sqrt(1/(2n))`` for the others."""
  s = np.full(n, np.sqrt(1.0 / (2 * n)))
  s[0] = np.sqrt(1.0 / (4 * n))
  return s


def _twiddle(n: int) -> np.ndarray:
  """``exp(-i pi k / (2n))`` for ``k < n``."""
  return np.exp(-0.5j * np.pi * np.arange(n) / n)


def _interleave(n: int) -> np.ndarray:
  """``q`` with ``x[i] = v[q[i]]`` for the even/odd interleave ``v = [x0, x2,
  x4, ..., x5, x3, x1]``: ``q[2j] = j``, ``q[2j+1] = n-1-j``."""
  i = np.arange(n)
  return np.where(i % 2 == 0, i // 2, n - 1 - i // 2)


def _take(x, indices: np.ndarray, axis: int):
  # A static permutation along axis: one gather (its transpose a scatter-add).
  return jnp.take(x, indices, axis=axis, mode="clip", unique_indices=True)


# The forms below keep each axis to a handful of steps (a gather, the FFT, a
# product by a constant folded from the twiddle, 2 and the orthonormal scale,
# real): each step of an eager program costs ~1 us plus its NumPy call.
def _dct_real(x, axis: int, norm):
  n = x.shape[axis]
  # v = [x0, x2, x4, ..., x5, x3, x1]: the DCT-II is Re(2 W^k FFT(v)_k).
  v = _take(x, np.argsort(_interleave(n)), axis)
  spectrum = fft.fft(v, axis=axis)
  factor = 2 * _twiddle(n) * (_ortho_scale(n) if norm == "ortho" else 1)
  return jnp.real(spectrum * _along(axis, x.ndim, factor.astype(spectrum.dtype)))


def _idct_real(x, axis: int, norm):
  n = x.shape[axis]
  # Invert the forward map: X_k = 2 Re(W^k V_k) with V Hermitian gives
  # V_k = (X_k - i X_{n-k}) / (2 W^k) (X_n = 0), then v = ifft(V): with
  # c = 1 / (2 W^k) (over the orthonormal scale), V = c (X - i [k > 0] X_{n-k}).
  cdtype = dtypes.to_complex_dtype(x.dtype)
  c = 1 / (2 * _twiddle(n))
  if norm == "ortho":
    c = c / _ortho_scale(n)
  neg_tail = np.where(np.arange(n) > 0, -1.0, 0.0)
  reflected = _take(x, (-np.arange(n)) % n, axis) * _along(axis, x.ndim,
                                                           neg_tail.astype(x.dtype))
  spectrum = lax.complex(x, reflected) * _along(axis, x.ndim, c.astype(cdtype))
  v = jnp.real(fft.ifft(spectrum, axis=axis))
  return _take(v, _interleave(n), axis)


def _transform(fun: str, one_axis, x, n, axis: int, norm):
  x, = util.promote_dtypes_inexact(util.ensure_arraylike(fun, x))
  axis = util.canonicalize_axis(axis, x.ndim)
  x = _resize(x, n, axis)
  if dtypes.kind(x.dtype) == "c":
    return lax.complex(one_axis(jnp.real(x), axis, norm), one_axis(jnp.imag(x), axis, norm))
  return one_axis(x, axis, norm)


# Each transform is a cached library program per signature (static sizes,
# axes and norm): eagerly ~1 us a step, where op by op each slice, reversal,
# concatenation and product took a dispatch.
@partial(util.jit, static_argnames=("axes", "sizes", "norm", "inverse"))
def _transform_axes(x, axes, sizes, norm, inverse: bool):
  fun, one_axis = ("idct", _idct_real) if inverse else ("dct", _dct_real)
  for axis, n in zip(axes, sizes):
    x = _transform(fun, one_axis, x, n, axis, norm)
  return x


def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):  # noqa: A002
  """The type-II DCT of ``x`` along ``axis`` (``scipy.fft.dct``): ``y_k = 2
  sum_j x_j cos(pi k (2j + 1) / (2N))``, orthonormal with ``norm='ortho'``;
  ``n`` zero-pads or truncates first."""
  _check("dct", type, norm)
  x = util.ensure_arraylike("dct", x)
  return _transform_axes(x, (util.canonicalize_axis(axis, x.ndim),), (n,), norm, False)


def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):  # noqa: A002
  """The inverse of ``dct`` along ``axis`` (``scipy.fft.idct`` of type 2:
  a scaled type-III DCT)."""
  _check("idct", type, norm)
  x = util.ensure_arraylike("idct", x)
  return _transform_axes(x, (util.canonicalize_axis(axis, x.ndim),), (n,), norm, True)


def _axes_and_sizes(x, s, axes):
  if s is not None:
    try:
      s = [operator.index(v) for v in s]
    except TypeError:
      s = [operator.index(s)]
    if len(s) > x.ndim:
      raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
  if axes is None:
    axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
  else:
    axes = util.canonicalize_axes(axes, x.ndim)
  sizes = [None] * len(axes) if s is None else s
  if len(sizes) != len(axes):
    raise ValueError(f"s and axes must have the same length; got s={s} and axes={axes}")
  return tuple(axes), tuple(sizes)


def dctn(x, type: int = 2, s=None, axes=None, norm: str | None = None):  # noqa: A002
  """The n-dimensional type-II DCT over ``axes`` (default all, or the last
  ``len(s)``), one axis after another; ``s`` gives the sizes."""
  _check("dctn", type, norm)
  x = util.ensure_arraylike("dctn", x)
  axes, sizes = _axes_and_sizes(x, s, axes)
  return _transform_axes(x, axes, sizes, norm, False)


def idctn(x, type: int = 2, s=None, axes=None, norm: str | None = None):  # noqa: A002
  """The inverse of ``dctn``."""
  _check("idctn", type, norm)
  x = util.ensure_arraylike("idctn", x)
  axes, sizes = _axes_and_sizes(x, s, axes)
  return _transform_axes(x, axes, sizes, norm, True)
