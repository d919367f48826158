"""Polynomials as 1-D coefficient arrays, highest power first (NumPy's
``poly1d`` convention): evaluation, arithmetic, calculus, fitting and roots.

Lengths are static, so everything traces under ``jit`` except where the
result length depends on values: ``roots`` strips leading zeros eagerly
(``strip_zeros=False`` traces and reports the missing roots as NaN)."""
from __future__ import annotations

import operator

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core.trace import concrete_or_error
from openjax._src.numpy import util
from openjax._src.numpy.convolution import convolve
from openjax._src.numpy.creation import asarray, full, ones, zeros
from openjax._src.numpy.linalg import eigvals, inv, lstsq
from openjax._src.numpy.linalg_ops import dot, outer
from openjax._src.numpy.misc import where
from openjax._src.numpy.ranges import arange
from openjax._src.numpy.reductions import all as _all, argmin, sum as _sum
from openjax._src.numpy.shape_joining import concatenate, trim_zeros
from openjax._src.numpy.shape_reshaping import atleast_1d
from openjax._src.numpy.stats import vander
from openjax._src.numpy.ufuncs import sqrt

__all__ = ["poly", "polyadd", "polysub", "polymul", "polydiv", "polyder", "polyint", "polyval",
           "polyfit", "roots"]


def _static_int(name: str, what: str, value) -> int:
  try:
    return operator.index(value)
  except TypeError:
    raise TypeError(f"jnp.{name}: {what} must be a static Python int; got {value!r}.") from None


@util.jit(static_argnames=('unroll',))
def polyval(p, x, *, unroll=16):
  """Evaluate the polynomial ``p`` at ``x`` by Horner's rule, as a ``scan``
  over the coefficients (``unroll`` of them per compiled loop step), as JAX
  does; ``p`` may carry trailing batch dimensions that broadcast against
  ``x``."""
  p, x = util.ensure_arraylike("polyval", p, x)
  p, x = util.promote_dtypes(p, x)
  shape = np.broadcast_shapes(p.shape[1:], x.shape)
  acc = zeros(shape, x.dtype)
  acc, _ = lax.scan(lambda y, c: (y * x + c, None), acc, p, unroll=unroll)
  return acc


@util.jit
def polyadd(a1, a2):
  """Sum of two polynomials (the shorter is aligned to the constant term)."""
  a1, a2 = util.ensure_arraylike("polyadd", a1, a2)
  a1, a2 = util.promote_dtypes(a1, a2)
  long, short = (a1, a2) if a1.shape[0] >= a2.shape[0] else (a2, a1)
  if short.shape[0] == 0:
    return long
  return long.at[long.shape[0] - short.shape[0]:].add(short)


@util.jit
def polysub(a1, a2):
  """Difference ``a1 - a2`` of two polynomials."""
  a1, a2 = util.ensure_arraylike("polysub", a1, a2)
  a1, a2 = util.promote_dtypes(a1, a2)
  return polyadd(a1, -a2)


def polymul(a1, a2, *, trim_leading_zeros=False):
  """Product of two polynomials (a full convolution of the coefficients)."""
  a1, a2 = util.ensure_arraylike("polymul", a1, a2)
  a1, a2 = util.promote_dtypes_inexact(a1, a2)
  if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
    a1, a2 = trim_zeros(a1, trim="f"), trim_zeros(a2, trim="f")
  if a1.shape[0] == 0:
    a1 = zeros((1,), a2.dtype)
  if a2.shape[0] == 0:
    a2 = zeros((1,), a1.dtype)
  return convolve(a1, a2, mode="full")


# A cached library program per signature: the division's 3 (m - n + 1)
# operations run as program steps, where op by op each took a dispatch (243 ms
# for a quotient of 750 terms). JAX runs the same loop op by op.
@util.jit
def _long_division(u, v):
  m, n = u.shape[0] - 1, v.shape[0] - 1
  inv_lead = 1.0 / v[0]
  quotient = zeros((max(m - n + 1, 1),), u.dtype)
  rem = u
  for k in range(m - n + 1):
    coef = rem[k] * inv_lead
    quotient = quotient.at[k].set(coef)
    rem = rem.at[k:k + n + 1].add(-coef * v)
  return quotient, rem


def polydiv(u, v, *, trim_leading_zeros=False):
  """Quotient and remainder of ``u / v`` by long division; the remainder keeps
  ``u``'s length (leading zeros are trimmed eagerly with
  ``trim_leading_zeros``)."""
  u, v = util.ensure_arraylike("polydiv", u, v)
  quotient, rem = _long_division(*util.promote_dtypes_inexact(u, v))
  if trim_leading_zeros:
    tol = float(np.sqrt(dtypes.finfo(rem.dtype).eps))
    host = np.asarray(rem)
    big = np.nonzero(np.abs(host) >= tol)[0]
    rem = rem[int(big[0]) if big.size else host.size:]
  return quotient, rem


@util.jit(static_argnames=('m',))
def polyder(p, m=1):
  """The ``m``-th derivative of the polynomial ``p``."""
  p = util.ensure_arraylike("polyder", p)
  m = _static_int("polyder", "'m' argument", m)
  (p,) = util.promote_dtypes_inexact(p)
  if m < 0:
    raise ValueError("Order of derivative must be positive")
  if m == 0:
    return p
  n = p.shape[0] - 1          # degree
  powers = np.arange(n, m - 1, -1)   # the powers of the kept terms, highest first
  # d^m/dx^m x^k = k (k-1) ... (k-m+1) x^(k-m)
  factors = np.prod(powers[:, None] - np.arange(m)[None, :], axis=1) if powers.size else powers
  return p[:max(n + 1 - m, 0)] * asarray(factors, dtype=p.dtype)


@util.jit(static_argnames=('m',))
def polyint(p, m=1, k=None):
  """The ``m``-th antiderivative of ``p``; ``k`` gives the integration
  constants (a scalar, or one per integration, lowest order first)."""
  m = _static_int("polyint", "'m' argument", m)
  k = 0 if k is None else k
  p, k = util.ensure_arraylike("polyint", p, k)
  p, k = util.promote_dtypes_inexact(p, k)
  if m < 0:
    raise ValueError("Order of integral must be positive (see polyder)")
  k = atleast_1d(k)
  if k.shape[0] == 1:
    k = full((m,), k[0], dtype=k.dtype)
  if k.shape != (m,):
    raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
  if m == 0:
    return p
  total = p.shape[0] + m
  # Coefficient j (highest first) of the result sits at power total-1-j and is
  # divided by that power's falling factorial of length m (at least 1 each).
  powers = np.arange(total - 1, -1, -1)
  divisors = np.prod(np.maximum(powers[:, None] - np.arange(m)[None, :], 1), axis=1)
  return concatenate((p, k)) / asarray(divisors, dtype=p.dtype)


@util.jit
def poly(seq_of_zeros):
  """Coefficients of the monic polynomial with the given roots (or, for a
  square matrix, with its eigenvalues as roots)."""
  z = util.ensure_arraylike("poly", seq_of_zeros)
  (z,) = util.promote_dtypes_inexact(z)
  z = atleast_1d(z)
  if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
    z = eigvals(z)
  if z.ndim != 1:
    raise ValueError("input must be 1d or non-empty square 2d array.")
  if z.shape[0] == 0:
    return ones((), z.dtype)
  coeffs = ones((1,), z.dtype)
  for i in range(z.shape[0]):
    factor = concatenate((ones((1,), z.dtype), -z[i:i + 1]))
    coeffs = convolve(coeffs, factor, mode="full")
  return coeffs


def _companion_roots(p):
  """Eigenvalues of the companion matrix of ``p`` (``p[0] != 0``)."""
  n = p.shape[0] - 1
  if n < 1:
    return zeros((0,), dtypes.to_complex_dtype(p.dtype))
  sub = (arange(n)[:, None] == arange(n)[None, :] + 1)
  companion = where(sub, ones((), p.dtype), zeros((), p.dtype))
  companion = companion.at[0, :].set(-p[1:] / p[0])
  return eigvals(companion)


def roots(p, *, strip_zeros=True):
  """Roots of the polynomial ``p`` (complex), from the eigenvalues of its
  companion matrix. Leading zeros are stripped, which needs a concrete ``p``;
  with ``strip_zeros=False`` it traces, and each leading zero turns one root
  into NaN."""
  p = util.ensure_arraylike("roots", p)
  (p,) = util.promote_dtypes_inexact(p)
  p = atleast_1d(p)
  if p.ndim != 1:
    raise ValueError("Input must be a rank-1 array.")
  if p.shape[0] < 2:
    return zeros((0,), dtypes.to_complex_dtype(p.dtype))
  is_zero = p == 0
  n_lead = where(_all(is_zero), p.shape[0], argmin(is_zero))
  if strip_zeros:
    n_lead = concrete_or_error(
        int, n_lead, "The error occurred in the jnp.roots() function. To use this within a "
        "JIT-compiled context, pass strip_zeros=False, but be aware that leading zeros will "
        "result in some returned roots being set to NaN.")
    return _companion_roots(p[n_lead:])
  size = p.shape[0]
  # Rotate the leading zeros to the end: the companion matrix then has
  # n_lead extra zero roots, which are sorted last and replaced by NaN.
  shifted = where(n_lead == size, ones((), p.dtype), p)
  shifted = shifted[(arange(size) + n_lead) % size]
  found = _companion_roots(shifted)
  zero_last = lax.sort((lax.convert_element_type(found == 0, np.int32), found), num_keys=1)[1]
  nan = asarray(complex(np.nan, np.nan), dtype=found.dtype)
  return where(arange(found.shape[0]) < found.shape[0] - n_lead, zero_last, nan)


@util.jit(static_argnames=('deg', 'rcond', 'full', 'cov'))
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
  """Least-squares fit of a degree-``deg`` polynomial to ``(x, y)`` (``y``
  may hold several data sets as columns), optionally weighted by ``w``.
  ``full`` also returns residuals, rank, singular values and ``rcond``;
  ``cov`` the covariance of the coefficients."""
  if w is None:
    x, y = util.ensure_arraylike("polyfit", x, y)
  else:
    x, y, w = util.ensure_arraylike("polyfit", x, y, w)
  deg = _static_int("polyfit", "deg", deg)
  order = deg + 1
  if deg < 0:
    raise ValueError("expected deg >= 0")
  if x.ndim != 1:
    raise TypeError("expected 1D vector for x")
  if x.size == 0:
    raise TypeError("expected non-empty vector for x")
  if y.ndim < 1 or y.ndim > 2:
    raise TypeError("expected 1D or 2D array for y")
  if x.shape[0] != y.shape[0]:
    raise TypeError("expected x and y to have same length")
  if rcond is None:
    rcond = x.shape[0] * float(dtypes.finfo(x.dtype if dtypes.issubdtype(x.dtype, np.inexact)
                                               else dtypes.canonicalize_dtype(np.float64)).eps)
  lhs = vander(x, order)
  rhs = y
  if w is not None:
    (w,) = util.promote_dtypes_inexact(w)
    if w.ndim != 1:
      raise TypeError("expected a 1-d array for weights")
    if w.shape[0] != y.shape[0]:
      raise TypeError("expected w and y to have the same length")
    lhs = lhs * w[:, None]
    rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
  # Scale the columns to unit norm for conditioning, then undo it.
  scale = sqrt(_sum(lhs * lhs, axis=0))
  lhs = lhs / scale[None, :]
  c, resids, rank, s = lstsq(lhs, rhs, rcond)
  c = (c.T / scale).T if c.ndim > 1 else c / scale
  if full:
    return c, resids, rank, s, asarray(rcond)
  if not cov:
    return c
  vbase = inv(dot(lhs.T, lhs)) / outer(scale, scale)
  if cov == "unscaled":
    fac = asarray(1.0)
  else:
    if x.shape[0] <= order:
      raise ValueError("the number of data points must exceed order to scale the covariance "
                       "matrix")
    fac = resids / (x.shape[0] - order)
  if y.ndim == 1:
    return c, vbase * atleast_1d(fac)[None]
  return c, vbase[:, :, None] * atleast_1d(fac)[None, None, :]
