"""Vectorised float64 kernels for lgamma, digamma, bessel_i0e and bessel_i1e
(the eager impls past a few elements).

Each function is reduced to y >= 1 (lgamma: 1.5, Bessel: y = |x| >= 0) and
y's piece, whose polynomial (``special_tables``, fitted by
``tools/fit_special.py``; the pieces are listed there) gives the value:

  lgamma:  x in [0.5, 1.5): lgamma(x + 1) - log(x) (log1p(x - 1): exact near
           the zero at 1); x in (0, 0.5): lgamma(x + 2) - log(x (x + 1));
           x <= 0: log(pi / |sin(pi x)|) - lgamma(1 - x) (+inf at the poles).
  digamma: x in (0, 1): psi(x + 1) - 1 / x; x < 0: psi(1 - x) - pi cot(pi x)
           (NaN at the poles 0, -1, ... and at -inf, as XLA gives).
  i0e/i1e: of |x|; i1e takes x's sign.

Up to ``_SCALAR_MAX`` elements the same pieces run in Python floats element
by element (~1-2 us an element, where the vectorised form costs 25-50 NumPy
calls). Past it every element's variable s and piece are computed at once;
up to ``_GATHER_MAX`` elements one Horner pass over all of them takes each
step's coefficient from the element's piece (3 NumPy calls a degree, none
a piece); longer arrays go by chunks so the temporaries stay in cache, and
in a chunk each piece's polynomial runs on its own elements only (as in
``erf_kernels``). float32 and narrower operands get the lower-degree fits
(relative error below 1e-9), float64 ones the full ones (~3e-16); where a
reflection cancels (lgamma and psi near their negative zeros) the float64
pieces are used whatever the dtype.
"""
from __future__ import annotations

import math

import numpy as np

from openjax._src.primitives.elementwise import special_tables
from openjax._src.primitives.elementwise.erf_kernels import horner

__all__ = ["lgamma", "digamma", "bessel_i0e", "bessel_i1e"]

_CHUNK = 1 << 14          # elements per chunk: a float64 temporary is 128 KB
# Up to here element by element in Python floats (~1-2 us an element, against
# a vectorised fixed cost of ~25 us for i0e/i1e, ~50 us for digamma).
# "redo": the float32 elements near lgamma/psi's negative zeros redone in float64.
_SCALAR_MAX = {"digamma": 48, "bessel": 24, "redo": 32}
_GATHER_MAX = 8192        # up to here one gathered Horner pass; past it by pieces
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_LOG_PI = math.log(math.pi)
_MAX = float(np.finfo(np.float64).max)
_ROOT_HIGH, _ROOT_LOW = special_tables.PSI_ROOT_HIGH, special_tables.PSI_ROOT_LOW


class _Table:
  """One function's pieces in one precision: the tuples (highest power
  first) for Horner's rule, and a (powers, pieces) matrix of them,
  highest power first and zero-padded, for the gathered evaluation."""

  def __init__(self, pieces: tuple):
    self.pieces = pieces
    width = max(len(c) for c in pieces)
    matrix = np.zeros((len(pieces), width))
    for k, coeffs in enumerate(pieces):
      matrix[k, width - len(coeffs):] = coeffs
    self.columns = np.ascontiguousarray(matrix.T)   # (powers, pieces)


def _tables(name: str) -> tuple:
  """(float64 table, float32 table): index with ``single``."""
  return (_Table(getattr(special_tables, name + "64")), _Table(getattr(special_tables, name + "32")))


_LGAMMA, _DIGAMMA = _tables("LGAMMA"), _tables("DIGAMMA")
_I0E, _I1E = _tables("I0E"), _tables("I1E")


def _horner_scalar(coeffs: tuple, s: float) -> float:
  r = 0.0
  for c in coeffs:
    r = r * s + c
  return r


def _poly(table: _Table, piece: np.ndarray, s: np.ndarray) -> np.ndarray:
  """Each element's piece polynomial at its s (s finite or NaN)."""
  if s.size <= _GATHER_MAX:
    coeffs = np.take(table.columns, piece, axis=1)   # (powers, elements): one gather
    r = coeffs[0]
    for row in coeffs[1:]:
      r *= s
      r += row
    return r
  out = np.empty_like(s)
  present = np.bincount(piece, minlength=len(table.pieces))
  for k in np.flatnonzero(present):
    if present[k] == s.size:
      return horner(table.pieces[k], s)
    where = np.flatnonzero(piece == k)
    out[where] = horner(table.pieces[k], s[where])
  return out


def _chunked(block, x: np.ndarray, single: bool) -> np.ndarray:
  flat = np.ascontiguousarray(x, np.float64).reshape(-1)
  out = np.empty_like(flat)
  with np.errstate(all="ignore"):
    for start in range(0, flat.size, _CHUNK):
      out[start:start + _CHUNK] = block(flat[start:start + _CHUNK], single)
  return out.reshape(np.shape(x))


def _elementwise(scalar, x: np.ndarray, single: bool) -> np.ndarray:
  # (Over tolist()'s Python floats: ~0.2 us an element less than a
  # frompyfunc of a lambda converting each element; 12 elements 11 -> 9 us.)
  values = [scalar(v, single) for v in np.reshape(x, -1).tolist()]
  return np.array(values, np.float64).reshape(np.shape(x))


def _sin_pi_reduced(x):
  """sin(pi r), r = x - round(x) in [-1/2, 1/2]: |sin(pi x)| exactly reduced
  (0 at the integers, also past 2^52)."""
  return np.sin(np.pi * (x - np.round(x)))


# --------------------------------------------------------------------- lgamma
def _lgamma_reduced(y, table: _Table, d=None):
  """lgamma(y) for y >= 1.5 (or NaN, +inf), given d = y - 2 (exact where the
  caller knows it better than y's rounding: lgamma's zero at 2). Pieces 0-7
  in s = 2 (y - 2) - 2 k, piece 8 (y >= 9.5) Stirling's form in
  s = 2 (9.5 / y)^2 - 1."""
  if d is None:
    d = y - 2                         # exact on piece 0 (Sterbenz)
  piece = np.fmin(y + 0.5, 10.0).astype(np.intp) - 2
  tail = piece == 8
  t = 9.5 / y
  s = np.where(tail, 2 * t * t - 1, 2 * d - 2 * piece)
  q = _poly(table, piece, s)
  far = np.flatnonzero(tail)
  if far.size:
    yf = y[far]
    ym = np.minimum(yf, _MAX)         # +inf: (y - 1/2) log y - y is inf, not inf - inf
    q[far] = q[far] / yf + ((ym - 0.5) * np.log(ym) - ym + _HALF_LOG_2PI)
  return np.where(piece == 0, q * d, q)


def _lgamma_block(x, single: bool):
  table = _LGAMMA[single]
  low = np.flatnonzero(x < 1.5)
  if not low.size:
    return _lgamma_reduced(x, table)
  # Below 1.5: shift into [1.5, 2.5) by 1 from [0.5, 1.5), by 2 from (0, 0.5);
  # x <= 0 reflects to 1 - x >= 1, shifted by 1. d = y - 2 is ref - 1 (exact:
  # lgamma's zero at 1) or ref itself.
  xl = x[low]
  positive = xl > 0
  ref = np.where(positive, xl, 1 - xl)
  two = ref < 0.5
  y = x.copy()
  y[low] = ref + np.where(two, 2.0, 1.0)
  d = y - 2
  d[low] = np.where(two, ref, ref - 1)
  negative = np.flatnonzero(~positive)
  if single and negative.size and x.size <= _GATHER_MAX:
    # Reflections may cancel (below): on short arrays the float64 pieces for
    # all (a few more Horner steps) cost less than a second pass.
    single, table = False, _LGAMMA[0]
  out = _lgamma_reduced(y, table, d)
  # (log is accurate to an ulp of its result near 1 too: ref is exact.)
  value = out[low] - np.log(np.where(two, ref * (ref + 1), ref))
  if negative.size:
    xn, vn = xl[negative], value[negative]
    sin = np.abs(_sin_pi_reduced(xn))
    log_sin = np.log(sin)
    reflected = _LOG_PI - log_sin - vn
    if single:
      # Near lgamma's negative zeros the reflection cancels the pieces' 1e-9:
      # those elements again with the float64 pieces (a few by math.lgamma).
      redo = np.flatnonzero(np.abs(reflected) < 0.1 * np.abs(vn))
      if redo.size > _SCALAR_MAX["redo"]:
        back = low[negative[redo]]
        exact = _lgamma_reduced(y[back], _LGAMMA[0], d[back]) - np.log(ref[negative[redo]])
        reflected[redo] = _LOG_PI - log_sin[redo] - exact
      else:
        for k in redo.tolist():
          reflected[k] = math.lgamma(xn[k])
    # The poles (sin = 0, also past 2^52 where lgamma(1 - x) is inf) and
    # -inf: +inf, as XLA gives.
    value[negative] = np.where((sin == 0) | np.isinf(xn), np.inf, reflected)
  out[low] = value
  return out


def lgamma(x: np.ndarray, single: bool = False) -> np.ndarray:
  """log|Gamma(x)| of float64 ``x`` (+inf at the poles and at +-inf)."""
  return _chunked(_lgamma_block, x, single)


# -------------------------------------------------------------------- digamma
def _digamma_reduced(y, table: _Table):
  """psi(y) for y >= 1 (or NaN, +inf). Piece 0 (y in [1, 2)) is (y - root)
  P(s); pieces 1-8 P(s), s = 2 y - 2 k - 3; piece 9 (y >= 10) the
  asymptotic form in s = 2 (10 / y)^2 - 1."""
  piece = np.fmin(y, 10.0).astype(np.intp) - 1
  tail = piece == 9
  t = 10 / y
  q = _poly(table, piece, np.where(tail, 2 * t * t - 1, 2 * y - (2 * piece + 3)))
  far = np.flatnonzero(tail)
  if far.size:
    yf = y[far]
    q[far] = np.log(yf) - 0.5 / yf - q[far] / (yf * yf)
  return np.where(piece == 0, q * ((y - _ROOT_HIGH) - _ROOT_LOW), q)


def _digamma_block(x, single: bool):
  table = _DIGAMMA[single]
  low = np.flatnonzero(x < 1)
  if not low.size:
    return _digamma_reduced(x, table)
  # psi(x) = psi(x + 1) - 1/x on (0, 1); psi(x) = psi(1 - x) - pi cot(pi x) below.
  xl = x[low]
  positive = xl > 0
  ref = np.where(positive, xl + 1, 1 - xl)
  y = x.copy()
  y[low] = ref
  if single and x.size <= _GATHER_MAX and not positive.all():
    single, table = False, _DIGAMMA[0]    # as in _lgamma_block
  out = _digamma_reduced(y, table)
  value = out[low]
  cot = np.pi / np.tan(np.pi * (xl - np.round(xl)))
  reflected = value - cot
  if single and not positive.all():
    # Near psi's negative zeros the reflection cancels the pieces' 1e-9:
    # those elements again with the float64 pieces (a few element by element).
    redo = np.flatnonzero(~positive & (np.abs(reflected) < 0.1 * np.abs(value)))
    if redo.size > _SCALAR_MAX["redo"]:
      reflected[redo] = _digamma_reduced(ref[redo], _DIGAMMA[0]) - cot[redo]
    else:
      for k in redo.tolist():
        reflected[k] = _digamma_scalar(float(xl[k]), False)
  value = np.where(positive, value - 1 / xl, reflected)
  pole = (xl <= 0) & (xl == np.floor(xl))          # XLA: NaN at the poles and -inf
  out[low] = np.where(pole | np.isneginf(xl), np.nan, value)
  return out


def _digamma_scalar(x: float, single: bool) -> float:
  if x != x or x == -math.inf or (x <= 0 and x == math.floor(x)):
    return math.nan
  correction = 0.0
  pieces = _DIGAMMA[single].pieces
  if x < 0:
    correction = -math.pi / math.tan(math.pi * (x - round(x)))
    x = 1 - x
    pieces = _DIGAMMA[0].pieces        # the reflection may cancel
  elif x < 1:
    correction = -1 / x
    x += 1
  if x >= 10:
    if x == math.inf:
      return x
    t = 10 / x
    q = _horner_scalar(pieces[9], 2 * t * t - 1)
    return correction + (math.log(x) - 0.5 / x - q / (x * x))
  k = int(x) - 1
  q = _horner_scalar(pieces[k], 2 * x - (2 * k + 3))
  if k == 0:
    q *= (x - _ROOT_HIGH) - _ROOT_LOW
  return correction + q


def digamma(x: np.ndarray, single: bool = False) -> np.ndarray:
  """psi(x) of float64 ``x``."""
  if x.size <= _SCALAR_MAX["digamma"]:
    return _elementwise(_digamma_scalar, x, single)
  return _chunked(_digamma_block, x, single)


# --------------------------------------------------------- bessel_i0e, i1e
def _bessel_block(x, single: bool, order: int):
  """Pieces 0-3 (|x| in [2k, 2k + 2)) P(s), s = |x| - 2k - 1 (i1e's piece 0:
  |x| P(s)); piece 4 (|x| >= 8) P(s) / sqrt(|x|), s = 16 / |x| - 1."""
  table = (_I0E, _I1E)[order][single]
  y = np.abs(x)
  piece = np.fmin(y * 0.5, 4.0).astype(np.intp)
  tail = piece == 4
  q = _poly(table, piece, np.where(tail, 16 / y - 1, y - (2 * piece + 1)))
  far = np.flatnonzero(tail)
  if far.size:
    q[far] /= np.sqrt(y[far])
  if order == 0:
    return q
  q = np.where(piece == 0, q * y, q)
  return np.copysign(q, x)


def _bessel_scalar(x: float, single: bool, order: int) -> float:
  y = abs(x)
  if y != y:
    return y
  pieces = (_I0E, _I1E)[order][single].pieces
  if y >= 8:
    q = 0.0 if y == math.inf else _horner_scalar(pieces[4], 16 / y - 1) / math.sqrt(y)
  else:
    k = int(y * 0.5)
    q = _horner_scalar(pieces[k], y - (2 * k + 1))
    if order and k == 0:
      q *= y
  return math.copysign(q, x) if order else q


def bessel_i0e(x: np.ndarray, single: bool = False) -> np.ndarray:
  """exp(-|x|) I0(x) of float64 ``x``."""
  if x.size <= _SCALAR_MAX["bessel"]:
    return _elementwise(lambda v, s: _bessel_scalar(v, s, 0), x, single)
  return _chunked(lambda c, s: _bessel_block(c, s, 0), x, single)


def bessel_i1e(x: np.ndarray, single: bool = False) -> np.ndarray:
  """exp(-|x|) I1(x) of float64 ``x``."""
  if x.size <= _SCALAR_MAX["bessel"]:
    return _elementwise(lambda v, s: _bessel_scalar(v, s, 1), x, single)
  return _chunked(lambda c, s: _bessel_block(c, s, 1), x, single)
