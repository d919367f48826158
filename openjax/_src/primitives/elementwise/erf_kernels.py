"""Vectorised float64 kernels for erf and erfc (the eager impls of ``erf_p``
and ``erfc_p`` past a few elements).

Five polynomial pieces in |x|, fitted by ``tools/fit_erf.py`` (mpmath's
Chebyshev fits, power basis, Horner's rule); erfcx(x) = e^(x^2) erfc(x):

  A  |x| < 0.5:        erf(x) = x P_A(x^2)
  B  0.5 <= |x| < 1.5: erfc(|x|) = e^(-x^2) P_B(2 |x| - 2)
  C  1.5 <= |x| < 2.5: erfc(|x|) = e^(-x^2) P_C(2 |x| - 4)
  D  2.5 <= |x| < 3.5: erfc(|x|) = e^(-x^2) P_D(2 |x| - 6)
  E  |x| >= 3.5:       erfc(|x|) = e^(-x^2) P_E(24.5 / x^2 - 1) / |x|

with erfc = 1 - erf in A, erf = sign(x) (1 - erfc(|x|)) elsewhere and
erfc(x) = 2 - erfc(|x|) for x < 0, so no result loses more than a bit to
cancellation. float64 operands get the float64 pieces (fit error below
5e-16; e^(-x^2) is e^(-h^2) e^(-(|x| - h)(|x| + h)) with h = |x| rounded to
24 bits, whose square is exact): a few ulp. Narrower floats get lower
degrees (fit error below 1e-9) and are then rounded to their dtype. Each
piece runs on its own elements only, and long arrays go by chunks so the
temporaries stay in cache.

``erf_single``/``erfc_single`` serve float32 and narrower operands with one
formula over all elements (no gathers: ~30 NumPy calls a chunk where the
pieces take ~150, which is what a 1e3-element call pays for), also fitted by
``tools/fit_erf.py``:

  erfc(|x|) = e^(-z^2) Q(4.792 / (2 + z) - 1.396),  z = min(|x|, 10.1)
  erf(x) = Taylor's series to x^7 for |x| < 0.1, else sign(x) (1 - erfc(|x|))

Q fits erfcx on [0, 10.1] (relative error 8.5e-11); past 10.1 erfc is below
half the smallest float32 subnormal, so clamping z there rounds to 0.
"""
from __future__ import annotations

import numpy as np

__all__ = ["erf", "erfc", "erf_single", "erfc_single", "horner"]

_A64 = (  # degree 8, relative error 2.1e-16
    1.4725865480556744e-06, -1.4845849259707869e-05, 0.00012053335124353741,
    -0.0008548297753674966, 0.00522397737302147, -0.026866170632887928, 0.11283791670925353,
    -0.37612638903183476, 1.1283791670955126)
_A32 = (  # degree 5, relative error 1.2e-11
    -0.0007694534279142308, 0.005200413724335493, -0.026863143032249386, 0.11283774013179539,
    -0.37612638525650693, 1.1283791670824095)
_B64 = (  # degree 15, relative error 3.4e-16
    -1.4314236247394567e-11, 9.593777811605733e-11, -5.688471044692849e-10,
    3.5885367648476003e-09, -2.2044541917727722e-08, 1.3054159723215905e-07,
    -7.460041784711495e-07, 4.102609500596982e-06, -2.1633318754972186e-05,
    0.00010890847597206662, -0.0005206834090512025, 0.0023482685132850006, -0.009903371117666999,
    0.03859289034298524, -0.13660600739194928, 0.42758357615580694)
_B32 = (  # degree 9, relative error 7.3e-10
    -8.03504755606829e-07, 4.44406658400846e-06, -2.1582329201750005e-05, 0.00010860542039952384,
    -0.0005207017287917272, 0.002348377438580253, -0.009903368821503144, 0.03859287668809134,
    -0.13660600743789617, 0.4275835764290543)
_C64 = (  # degree 14, relative error 2.2e-16
    1.5101525315338411e-12, -1.1772109602607918e-11, 8.406339440038085e-11,
    -6.237117581604252e-10, 4.519802152785498e-09, -3.1824480298759295e-08,
    2.1768869055977212e-07, -1.4435806611793536e-06, 9.257343685658823e-06,
    -5.723950868673387e-05, 0.0003400461585912198, -0.0019325797205298966, 0.010450688150881658,
    -0.05339823092674497, 0.25539567631050575)
_C32 = (  # degree 8, relative error 5.4e-10
    2.2814840110403202e-07, -1.5173409844403674e-06, 9.249429684898538e-06,
    -5.718367404172455e-05, 0.0003400483652233839, -0.0019325952918412723, 0.01045068798515364,
    -0.05339822975718226, 0.25539567631050575)
_D64 = (  # degree 13, relative error 1.8e-16
    -4.212167250567253e-13, 3.814173078153869e-12, -3.243122919036125e-11, 2.822687207541234e-10,
    -2.4089372794385926e-09, 2.0103417193111424e-08, -1.63980185506306e-07,
    1.3055333793111845e-06, -1.0128923266459513e-05, 7.643994078229185e-05,
    -0.0005599288772965135, 0.003971092789967288, -0.027186130003586436, 0.17900115118138996)
_D32 = (  # degree 7, relative error 9.3e-10
    -1.6888861489981297e-07, 1.346528848741984e-06, -1.0125837883979638e-05,
    7.641416517224699e-05, -0.0005599294957760829, 0.003971097957313358, -0.027186129984250827,
    0.17900115101983963)
_E64 = (  # degree 13, relative error 4.1e-16
    -3.2305798517209433e-12, 1.1877496980466104e-11, -3.45706808777088e-11,
    1.4574162593083834e-10, -6.694574452915402e-10, 3.208875637308474e-09,
    -1.6723271327110387e-08, 9.639463961811925e-08, -6.271955167985967e-07,
    4.749659554093167e-06, -4.3886509194191484e-05, 0.0005365932590304144, -0.010286363323072064,
    0.5533172464097241)
_E32 = (  # degree 6, relative error 6.2e-10
    1.0235756201708576e-07, -6.580169040743017e-07, 4.746624100690705e-06,
    -4.387085886462913e-05, 0.0005365936407388191, -0.010286365289439712, 0.553317246409724)

_Q32 = (  # degree 12 in u = _Q_SCALE / (2 + z) - _Q_SHIFT, relative error 8.5e-11
    -9.745918707775476e-07, 9.304481507203016e-07, 8.48179278501228e-06, -2.0603324192298992e-05,
    -3.917595014676194e-05, 0.00025117727683199954, 8.855682439534635e-05,
    -0.002949418060844867, -0.0010885704724407053, 0.04622617368098639, 0.19586122683933835,
    0.4286964964326189, 0.33296569901972295)
_Q_SCALE = 4.792079207920792   # maps 2 / (2 + z) over z in [0, _Q_TOP] onto u in [-1, 1]
_Q_SHIFT = 1.396039603960396
_TAYLOR = tuple(2 / np.sqrt(np.pi) * c for c in (-1 / 42, 1 / 10, -1 / 3, 1.0))
_TAYLOR_TOP = 0.1              # the first term left out is below 5e-11 relative there
_Q_TOP = 10.1                  # erfc(10.1) ~ 2.8e-46: rounds to 0 in float32

_CHUNK = 1 << 14          # elements per chunk: a float64 temporary is 128 KB
_BIG = 30.0               # erfc(30) underflows float64: e^(-x^2) is 0 from here on
_DOUBLE = (_A64, _B64, _C64, _D64, _E64)
_SINGLE = (_A32, _B32, _C32, _D32, _E32)


def horner(coeffs: tuple, s: np.ndarray) -> np.ndarray:
  """The polynomial of ``coeffs`` (highest degree first) at ``s``."""
  r = np.full_like(s, coeffs[0])
  for c in coeffs[1:]:
    r *= s
    r += c
  return r


def _erfc_abs(ax: np.ndarray, piece: int, coeffs: tuple, single: bool) -> np.ndarray:
  """erfc(ax) for ax >= 0.5 (or nan) in piece B (1) to E (4)."""
  if piece < 4:
    q = horner(coeffs, 2 * ax - 2 * piece)
  else:
    q = horner(coeffs, 24.5 / (ax * ax) - 1)
    q /= ax
  ax = np.minimum(ax, _BIG)                     # inf: e^(-x^2) = 0, not inf - inf
  if single:
    q *= np.exp(-(ax * ax))
    return q
  high = ax.astype(np.float32).astype(np.float64)
  q *= np.exp(-(high * high))
  q *= np.exp(-((ax - high) * (ax + high)))
  return q


def _block(x: np.ndarray, out: np.ndarray, table: tuple, single: bool, complement: bool) -> None:
  """erf or erfc of the 1-d float64 ``x`` into ``out``."""
  ax = np.abs(x)
  # Each element's piece: floor(|x| + 0.5) up to 4, nan in E (fmin drops
  # it), whose polynomial gives nan.
  piece = np.fmin(ax + 0.5, 4.0).astype(np.intp)
  present = np.bincount(piece, minlength=5)
  for k in np.flatnonzero(present):
    whole = present[k] == x.size
    where = None if whole else np.flatnonzero(piece == k)
    xk = x if whole else x[where]
    if k == 0:
      value = horner(table[0], xk * xk)
      value *= xk
      if complement:
        value = np.subtract(1, value)
    else:
      value = _erfc_abs(np.abs(xk), int(k), table[k], single)
      if complement:
        np.subtract(2, value, out=value, where=xk < 0)
      else:
        np.subtract(1, value, out=value)
        np.negative(value, out=value, where=xk < 0)
    if whole:
      out[...] = value
    else:
      out[where] = value


def _evaluate(x: np.ndarray, single: bool, complement: bool) -> np.ndarray:
  flat = np.ascontiguousarray(x, np.float64).reshape(-1)
  out = np.empty_like(flat)
  table = _SINGLE if single else _DOUBLE
  with np.errstate(over="ignore"):   # x^2 of huge |x|: inf, whose e^(-x^2) is the 0 wanted
    for start in range(0, flat.size, _CHUNK):
      _block(flat[start:start + _CHUNK], out[start:start + _CHUNK], table, single, complement)
  return out.reshape(np.shape(x))


def _poly(coeffs: tuple, s: np.ndarray) -> np.ndarray:
  """Horner's rule like ``horner``, in place, for coefficients held as 0-d
  arrays (``_constants``): ~0.15 us a NumPy call less than Python floats,
  which is a tenth of a 1e3-element call."""
  r = np.multiply(s, coeffs[0])
  np.add(r, coeffs[1], out=r)
  for c in coeffs[2:]:
    np.multiply(r, s, out=r)
    np.add(r, c, out=r)
  return r


def _constants(*values: float) -> tuple:
  return tuple(np.array(v, np.float64) for v in values)


_Q32_ARRAYS = _constants(*_Q32)
_TAYLOR_ARRAYS = _constants(*_TAYLOR)
_Q_SCALE_ARRAY, _Q_SHIFT_ARRAY, _Q_TOP_ARRAY, _TAYLOR_TOP_ARRAY, _ONE, _TWO = _constants(
    _Q_SCALE, _Q_SHIFT, _Q_TOP, _TAYLOR_TOP, 1.0, 2.0)


def _erfc_abs_single(ax: np.ndarray) -> np.ndarray:
  """erfc(ax) for ax >= 0 (or nan, which stays nan), to ~1e-10 relative."""
  z = np.minimum(ax, _Q_TOP_ARRAY)
  u = np.add(z, _TWO)
  np.divide(_Q_SCALE_ARRAY, u, out=u)
  np.subtract(u, _Q_SHIFT_ARRAY, out=u)
  q = _poly(_Q32_ARRAYS, u)
  # / e^(z^2) rather than * e^(-z^2): one call fewer; e^(10.1^2) is finite.
  np.multiply(z, z, out=z)
  np.exp(z, out=z)
  np.divide(q, z, out=q)
  return q


def _single_block(x: np.ndarray, complement: bool) -> np.ndarray:
  """erf or erfc of the 1-d float64 ``x`` (a float32 or narrower operand)."""
  ax = np.abs(x)
  value = _erfc_abs_single(ax)
  if complement:
    np.subtract(_TWO, value, out=value, where=x < 0)
    return value
  np.subtract(_ONE, value, out=value)
  np.copysign(value, x, out=value)
  # Near 0, 1 - erfc would lose erf's relative accuracy: Taylor's series.
  small = _poly(_TAYLOR_ARRAYS, np.multiply(x, x))
  np.multiply(small, x, out=small)
  np.copyto(value, small, where=ax < _TAYLOR_TOP_ARRAY)
  return value


def _evaluate_single(x: np.ndarray, complement: bool) -> np.ndarray:
  flat = np.ascontiguousarray(x, np.float64).reshape(-1)
  if flat.size <= _CHUNK:
    with np.errstate(over="ignore"):   # x^2 of huge |x| in the series piece, not used
      return _single_block(flat, complement).reshape(np.shape(x))
  out = np.empty_like(flat)
  with np.errstate(over="ignore"):
    for start in range(0, flat.size, _CHUNK):
      out[start:start + _CHUNK] = _single_block(flat[start:start + _CHUNK], complement)
  return out.reshape(np.shape(x))


def erf_single(x: np.ndarray) -> np.ndarray:
  """erf of float64 ``x`` whose operand was float32 or narrower (fit error
  ~1e-10 relative: rounding to the operand's dtype hides it)."""
  return _evaluate_single(x, False)


def erfc_single(x: np.ndarray) -> np.ndarray:
  """erfc of float64 ``x`` whose operand was float32 or narrower."""
  return _evaluate_single(x, True)


def erf(x: np.ndarray, single: bool = False) -> np.ndarray:
  """erf of ``x`` in float64; ``single``: the operand was float32 or narrower."""
  return _evaluate(x, single, False)


def erfc(x: np.ndarray, single: bool = False) -> np.ndarray:
  """erfc of ``x`` in float64; ``single``: the operand was float32 or narrower."""
  return _evaluate(x, single, True)
