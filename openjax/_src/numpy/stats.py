"""Differences, integrals and covariances of ``jax.numpy``: ``diff``,
``ediff1d``, ``gradient``, ``trapezoid``, ``unwrap``, ``vander``, ``cov`` and
``corrcoef``, written with jnp operations so they trace under ``jit``,
``vmap`` and ``grad``."""
from __future__ import annotations

import operator

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.numpy import util
from openjax._src.numpy.creation import asarray
from openjax._src.numpy.linalg_ops import dot
from openjax._src.numpy.misc import clip, where
from openjax._src.numpy.ranges import arange
from openjax._src.numpy.reductions import cumsum, sum as _sum
from openjax._src.numpy.shape_joining import concatenate
from openjax._src.numpy.statistics import average
from openjax._src.numpy.shape_reshaping import (atleast_2d, broadcast_to, expand_dims, moveaxis,
                                                ravel)
from openjax._src.numpy.ufuncs import abs as _abs, not_equal, power, remainder, sqrt
from openjax._src.numpy.ufuncs_float import conjugate, real

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "unwrap", "vander", "cov", "corrcoef"]


def _slice_axis(a, start, stop, axis):
  idx = [slice(None)] * a.ndim
  idx[axis] = slice(start, stop)
  return a[tuple(idx)]


def _static_int(name: str, what: str, value) -> int:
  try:
    return operator.index(value)
  except TypeError:
    raise TypeError(f"jax.numpy.{name}: {what} must be a static Python int; got {value!r}. "
                    "Pass it as a static argument under jit.") from None


def _diff(a, n, axis, prepend, append):
  arr = asarray(a)
  n = _static_int("diff", "'n' argument", n)
  if n == 0:
    return arr
  if n < 0:
    raise ValueError(f"order must be non-negative but got {n}")
  if arr.ndim == 0:
    raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
  axis = util.canonicalize_axis(axis, arr.ndim)
  pieces = []
  for extra in (prepend,):
    if extra is not None:
      pieces.append(_edge_piece(arr, extra, axis))
  pieces.append(arr)
  if append is not None:
    pieces.append(_edge_piece(arr, append, axis))
  if len(pieces) > 1:
    arr = concatenate(pieces, axis=axis)
  for _ in range(n):
    hi = _slice_axis(arr, 1, None, axis)
    lo = _slice_axis(arr, None, -1, axis)
    arr = not_equal(hi, lo) if arr.dtype == np.bool_ else lax.sub(hi, lo)
  return arr


def _edge_piece(arr, extra, axis):
  extra = util.ensure_arraylike("diff", extra)
  if extra.ndim == 0:
    shape = list(arr.shape)
    shape[axis] = 1
    extra = broadcast_to(extra, tuple(shape))
  return extra


@util.jit(static_argnames=('n', 'axis'))
def diff(a, n=1, axis=-1, prepend=None, append=None):
  """The ``n``-th discrete difference of ``a`` along ``axis`` (``numpy.diff``);
  booleans use ``not_equal``. ``prepend``/``append`` are joined to ``a``
  along ``axis`` first (scalars broadcast to one slice)."""
  a = util.ensure_arraylike("diff", a)
  _static_int("diff", "'n' argument", n)
  return _diff(a, n, axis, prepend, append)   # one jit, as JAX's


@util.jit
def ediff1d(ary, to_end=None, to_begin=None):
  """Differences between consecutive elements of the flattened ``ary``, with
  ``to_begin``/``to_end`` (cast to ``ary``'s dtype) around them."""
  ary = util.ensure_arraylike("ediff1d", ary)
  flat = ravel(ary)
  result = lax.sub(flat[1:], flat[:-1])
  pieces = []
  if to_begin is not None:
    pieces.append(ravel(lax.convert_element_type(util.ensure_arraylike("ediff1d", to_begin),
                                                 ary.dtype)))
  pieces.append(result)
  if to_end is not None:
    pieces.append(ravel(lax.convert_element_type(util.ensure_arraylike("ediff1d", to_end),
                                                 ary.dtype)))
  return concatenate(pieces) if len(pieces) > 1 else result


def _gradient_1axis(a, h, axis):
  # lax.slice_in_dim (strides of 1 printed, as JAX's); the inner and last
  # slices divided before the first, as JAX's jaxpr
  lo_edge = lax.sub(lax.slice_in_dim(a, 1, 2, axis=axis), lax.slice_in_dim(a, 0, 1, axis=axis))
  hi_edge = lax.sub(lax.slice_in_dim(a, -1, None, axis=axis),
                    lax.slice_in_dim(a, -2, -1, axis=axis))
  if h.ndim == 0:
    inner = (lax.slice_in_dim(a, 2, None, axis=axis)
             - lax.slice_in_dim(a, None, -2, axis=axis)) * 0.5 / h
    hi_edge = hi_edge / h
    lo_edge = lo_edge / h
  elif h.ndim == 1:
    if h.shape[0] != a.shape[axis]:
      raise ValueError("Spacing arrays must have the same length as the dimension along which "
                       "the gradient is calculated.")
    shape = [1] * a.ndim
    shape[axis] = h.shape[0]
    h = h.reshape(shape)
    dx = _diff(h, 1, axis, None, None)
    d_lo = _slice_axis(dx, None, -1, axis)   # x[i] - x[i-1]
    d_hi = _slice_axis(dx, 1, None, axis)    # x[i+1] - x[i]
    # Second-order central differences on an uneven grid (NumPy's formula).
    a_lo, a_mid, a_hi = (_slice_axis(a, None, -2, axis), _slice_axis(a, 1, -1, axis),
                         _slice_axis(a, 2, None, axis))
    inner = (-d_hi / (d_lo * (d_lo + d_hi)) * a_lo
             + (d_hi - d_lo) / (d_lo * d_hi) * a_mid
             + d_lo / (d_hi * (d_lo + d_hi)) * a_hi)
    lo_edge = lo_edge / _slice_axis(dx, 0, 1, axis)
    hi_edge = hi_edge / _slice_axis(dx, -1, None, axis)
  else:
    raise ValueError("Spacing arrays must be 1D arrays or scalars.")
  return concatenate((lo_edge, inner, hi_edge), axis=axis)


def gradient(f, *varargs, axis=None, edge_order=None):
  """Numerical gradient of the samples ``f`` (``numpy.gradient``): second-order
  central differences inside, first-order differences at the edges. Spacings
  in ``varargs`` are one scalar, or one scalar or coordinate array per axis.
  ``edge_order`` is not supported (as in JAX)."""
  if edge_order is not None:
    raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
  axis = tuple(axis) if isinstance(axis, list) else axis
  if type(f) in (list, tuple) or any(type(v) in (list, tuple) for v in varargs):
    return _gradient.fun(f, *varargs, axis=axis)   # (its TypeError naming the sequence)
  return _gradient(f, *varargs, axis=axis)


# JAX jits gradient (make_jaxpr prints jit[name=gradient]); eagerly one program.
@util.jit(static_argnames=('axis',))
def _gradient(f, *varargs, axis=None):
  a, *spacing = util.promote_dtypes_inexact(f, *varargs)
  if axis is None:
    axes = tuple(range(a.ndim))
  else:
    axes = tuple(util.canonicalize_axis(ax, a.ndim)
                 for ax in ((axis,) if isinstance(axis, int) else axis))
  if not axes:
    return []
  if min(a.shape[ax] for ax in axes) < 2:
    raise ValueError("Shape of array too small to calculate a numerical gradient, "
                     "at least 2 elements are required.")
  if not spacing:
    spacing = [asarray(1.0)] * len(axes)
  elif len(spacing) == 1:
    spacing = spacing * len(axes)
  if len(spacing) != len(axes):
    raise TypeError("Invalid number of spacing arguments: expected 1 or "
                    f"{len(axes)} (one per axis), got {len(spacing)}.")
  out = [_gradient_1axis(a, h, ax) for ax, h in zip(axes, spacing)]
  return out[0] if len(axes) == 1 else out


_gradient.name = "gradient"


@util.jit(static_argnames=('dx', 'axis'))
def trapezoid(y, x=None, dx=1.0, axis=-1):
  """Integral of ``y`` along ``axis`` by the composite trapezoidal rule, at the
  sample points ``x`` or with constant spacing ``dx``."""
  if x is None:
    y = util.ensure_arraylike("trapezoid", y)
    (y,) = util.promote_dtypes_inexact(y)
    dxa = asarray(dx)
    if dxa.ndim > 0:
      dxa = moveaxis(expand_dims(dxa, tuple(range(y.ndim - dxa.ndim))), axis, -1)
  else:
    y, x = util.ensure_arraylike("trapezoid", y, x)
    y, x = util.promote_dtypes_inexact(y, x)
    dxa = diff(x) if x.ndim == 1 else moveaxis(diff(x, axis=axis), axis, -1)
  y = moveaxis(y, axis, -1)
  if dxa.ndim == 0 or dxa.shape[-1] == 1:
    step = dxa if dxa.ndim == 0 else dxa[..., 0]
    return step * (_sum(y, -1) - 0.5 * (y[..., 0] + y[..., -1]))
  return _sum(0.5 * (dxa * (y[..., 1:] + y[..., :-1])), -1)


@util.jit(static_argnames=('discont', 'axis', 'period'))
def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
  """Unwrap the periodic signal ``p`` along ``axis``: steps larger than
  ``discont`` (default ``period / 2``) get multiples of ``period`` removed."""
  p = util.ensure_arraylike("unwrap", p)
  if dtypes.issubdtype(p.dtype, np.complexfloating):
    raise ValueError("jnp.unwrap does not support complex inputs.")
  if p.shape[axis] == 0:
    (p,) = util.promote_dtypes_inexact(p)
    return p
  if discont is None:
    discont = period / 2
  interval = period / 2
  dd = diff(p, axis=axis)
  ddmod = remainder(dd + interval, period) - interval
  ddmod = where((ddmod == -interval) & (dd > 0), interval, ddmod)
  correction = where(_abs(dd) < discont, 0, ddmod - dd)
  first = _slice_axis(p, 0, 1, axis)
  return concatenate([first, _slice_axis(p, 1, None, axis)
                      + cumsum(correction, axis=axis, dtype=None)], axis=axis)


@util.jit(static_argnames=('N', 'increasing'))
def vander(x, N=None, increasing=False):
  """The Vandermonde matrix of the 1-D ``x``: columns ``x**(N-1) ... x**0``
  (reversed when ``increasing``); ``N`` defaults to ``len(x)``."""
  x = util.ensure_arraylike("vander", x)
  if x.ndim != 1:
    raise ValueError("x must be a one-dimensional array")
  n = x.shape[0] if N is None else _static_int("vander", "N", N)
  if n < 0:
    raise ValueError("N must be nonnegative")
  powers = arange(n, dtype=dtypes.canonicalize_dtype(np.int_))
  if not increasing:
    powers = powers[::-1]
  return power(x[:, None], expand_dims(powers, 0))


@util.jit(static_argnames=('rowvar', 'bias', 'ddof', 'dtype'))
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
  """Covariance matrix of the variables in the rows of ``m`` (columns when
  ``rowvar`` is False), with optional frequency and analytic weights."""
  if y is not None:
    m, y = util.ensure_arraylike("cov", m, y)
    y = atleast_2d(y)
  else:
    m = util.ensure_arraylike("cov", m)
  if m.ndim > 2:
    raise ValueError("m has more than 2 dimensions")
  if dtype is None:   # (JAX's order: the cast, then atleast_2d)
    (m,) = util.promote_dtypes_inexact(m)
  x = atleast_2d(m)   # (a jit when traced, as JAX's: cov's jaxpr prints it)
  if dtype is not None:
    x = lax.convert_element_type(x, dtype)
    y = None if y is None else lax.convert_element_type(y, dtype)
  if not rowvar and x.shape[0] != 1:
    x = x.T
  if x.shape[0] == 0:
    return asarray([]).reshape(0, 0)
  if y is not None:
    if not rowvar and y.shape[0] != 1:
      y = y.T
    x = concatenate((x, y), axis=0)
  if ddof is None:
    ddof = 0 if bias else 1
  (x,) = util.promote_dtypes_inexact(x)
  w = None
  if fweights is not None:
    fweights = util.ensure_arraylike("cov", fweights)
    if fweights.ndim > 1:
      raise RuntimeError("cannot handle multidimensional fweights")
    if fweights.shape[0] != x.shape[1]:
      raise RuntimeError("incompatible numbers of samples and fweights")
    if not dtypes.issubdtype(fweights.dtype, np.integer):
      raise TypeError("fweights must be integer.")
    w = fweights
  if aweights is not None:
    aweights = util.ensure_arraylike("cov", aweights)
    if aweights.ndim > 1:
      raise RuntimeError("cannot handle multidimensional aweights")
    if aweights.shape[0] != x.shape[1]:
      raise RuntimeError("incompatible numbers of samples and aweights")
    w = aweights if w is None else w * aweights
  if w is None:   # JAX's equations: average's sum of weights (its first unused), n - ddof
    avg, w_sum = average(x, axis=1, returned=True)
    w_sum[0]  # noqa: B018 - staged as in JAX
    x = x - avg[:, None]
    return (dot(x, conjugate(x.T)) / (x.shape[1] - ddof)).squeeze()
  else:
    avg = _sum(x * w, axis=1) / _sum(w)
    w_sum = _sum(w)
    if ddof == 0:
      fact = w_sum
    elif aweights is None:
      fact = w_sum - ddof
    else:
      fact = w_sum - ddof * _sum(w * aweights) / w_sum
  fact = lax.convert_element_type(fact, avg.dtype) if fact.dtype != avg.dtype else fact
  x = x - avg[:, None]
  xw = x if w is None else x * w
  c = lax.dot_general(x, conjugate(xw), (((1,), (1,)), ((), ())))
  c = c / fact
  return c.squeeze() if c.ndim else c


@util.jit(static_argnames=('rowvar', 'dtype'))
def corrcoef(x, y=None, rowvar=True, dtype=None):
  """Pearson correlation coefficients: ``cov`` normalised by the standard
  deviations, with the real and imaginary parts clipped to [-1, 1]."""
  c = cov(x, y, rowvar, dtype=dtype)
  if c.ndim == 0:
    return c / c   # NumPy's 1x1 case: nan for constant input, else 1
  d = real(c.diagonal()) if dtypes.issubdtype(c.dtype, np.complexfloating) else c.diagonal()
  stddev = sqrt(d)
  c = c / stddev[:, None] / stddev[None, :]
  if dtypes.issubdtype(c.dtype, np.complexfloating):
    return lax.complex(clip(real(c), -1, 1), clip(c.imag, -1, 1))
  return clip(c, -1, 1)
