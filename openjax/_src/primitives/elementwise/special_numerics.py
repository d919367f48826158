"""Float64 NumPy evaluations of special functions, for the ``impl`` rules in
``special.py``. Inputs are broadcast float64 arrays; NaN propagates. Most
methods live in kernel modules: fitted polynomial pieces for log-gamma,
digamma and the scaled Bessel functions (``special_kernels``) and for the
error functions (``erf_kernels``, Python's math.erf/math.erfc element by
element on short arrays), the power series and continued fractions of the
incomplete gamma and beta functions (``incomplete_kernels``). Here: their
dispatch and XLA's edge values, Euler-Maclaurin summation for the Hurwitz
zeta function, Giles' approximations for erf_inv.
"""
from __future__ import annotations

import math

import numpy as np

from openjax._src.primitives.elementwise import erf_kernels, incomplete_kernels, special_kernels

# The compiled path's (``special_lowering``) iteration limits.
_TINY = 1e-300          # keeps Lentz's denominators away from zero
_MAX_ITER = 5000        # series and continued fractions stop here at the latest

# ------------------------------------------------------- log-gamma, digamma
# The compiled path's (``special_lowering``) methods: the Lanczos sum
# (g = 7, n = 9) for log-gamma, the asymptotic series after a recurrence for
# digamma, the power series / Hankel expansion split for the Bessel functions.
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028,
            771.32342877765313, -176.61502916214059, 12.507343278686905,
            -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
# B_2k / (2k) for the asymptotic series psi(z) ~ log z - 1/(2z) - sum B_2k/(2k z^2k).
_DIGAMMA_ASYMPTOTIC = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
_BESSEL_SPLIT = 30.0


def _lgamma_scalar(v: float) -> float:
  try:
    return math.lgamma(v)
  except (ValueError, OverflowError):   # the poles (0, -1, -2, ...) and huge x: +inf
    return math.inf


_LGAMMA = np.frompyfunc(_lgamma_scalar, 1, 1)
# Up to here Python's math.lgamma element by element (~0.2 us an element,
# correctly rounded or nearly: 3 us at 10 elements, ~90 us at 512); past it
# the vectorised pieces of ``special_kernels`` (fixed cost ~35-100 us).
_LGAMMA_ELEMENTWISE_MAX = 512


def lgamma(x, single: bool = False):
  """log|Gamma(x)| of float64 ``x``; ``single``: the operand was float32 or
  narrower (lower-degree pieces)."""
  if x.size <= _LGAMMA_ELEMENTWISE_MAX:
    return np.asarray(_LGAMMA(x), np.float64)
  return special_kernels.lgamma(x, single)


def digamma(x, single: bool = False):
  """psi(x) of float64 ``x`` (NaN at the poles 0, -1, ... and at -inf)."""
  return special_kernels.digamma(x, single)


# ------------------------------------------------------------- Hurwitz zeta
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730)
# B_2j / (2j)!, the Euler-Maclaurin correction coefficients.
_EM_COEFS = tuple(b / math.factorial(2 * j + 2) for j, b in enumerate(_BERNOULLI))


_EM_COLUMNS = np.asarray(_EM_COEFS)
_EM_STEPS = 2 * np.arange(1, len(_EM_COEFS), dtype=np.float64)   # (x + 2j - 1)(x + 2j), j >= 1
_ZETA_DIRECT = 10         # terms summed directly before Euler-Maclaurin (more for q < 0)
_ZETA_MATRIX_TERMS = 64   # up to here the direct terms as one (elements, terms) matrix
_ZETA_CHUNK = 1 << 13     # elements a pass: the (elements, terms) matrices stay in cache


def _zeta_sum(x, q, clean: bool):
  """sum_k (q + k)^-x: the first n terms directly, then Euler-Maclaurin
  from w = q + n on, stopped at its least term (the series is asymptotic).
  Both parts as (elements, terms) matrices: a dozen NumPy calls. ``clean``:
  every q is positive and finite (no shift, nothing to mask)."""
  if clean:
    n, safe_q = _ZETA_DIRECT, q
  else:
    shift = int(np.ceil(np.max(-q[np.isfinite(q) & (q < 0)], initial=0.0)))
    n = _ZETA_DIRECT + min(shift, 100_000)
    safe_q = np.where(np.isfinite(q), q, 1.0)   # (non-finite q is NaN in zeta)
  if n <= _ZETA_MATRIX_TERMS:
    # (A base of 0 only comes with a non-positive integer q: a pole, set in
    # zeta; its term counts 0 meanwhile.)
    base = safe_q[:, None] + np.arange(n, dtype=np.float64)
    terms = np.power(base, -x[:, None])
    if n > _ZETA_DIRECT:
      terms[base == 0] = 0.0
    s = terms.sum(axis=1)
  else:                       # a long shift for a negative q: term by term
    s = np.zeros_like(x)
    for k in range(n):
      base = safe_q + k
      s = s + np.where(base == 0, 0.0, np.power(np.where(base == 0, 1.0, base), -x))
  w = safe_q + n
  wx = np.power(w, -x)
  s = s + w * wx / (x - 1) + 0.5 * wx
  # Term j: B_2j / (2j)! x (x+1) ... (x+2j-2) w^(-x-2j+1), a running product.
  factors = np.empty((x.size, len(_EM_COEFS)))
  factors[:, 0] = x * wx / w
  factors[:, 1:] = (x[:, None] + (_EM_STEPS - 1)) * (x[:, None] + _EM_STEPS) / (w * w)[:, None]
  terms = np.multiply.accumulate(factors, axis=1)
  terms *= _EM_COLUMNS
  size = np.abs(terms)
  going = np.empty(terms.shape, bool)
  going[:, 0] = size[:, 0] < np.inf
  np.less(size[:, 1:], size[:, :-1], out=going[:, 1:])
  np.logical_and.accumulate(going, axis=1, out=going)
  return s + np.where(going, terms, 0.0).sum(axis=1)


def zeta(x, q):
  shape = x.shape
  x, q = x.reshape(-1), q.reshape(-1)
  out = np.empty(x.shape)
  # No edge: four reductions (NaN fails each) where the elementwise test
  # and the shift's search took ~10 us of 10 elements' ~45.
  clean = bool(x.size) and x.min() > 1 and x.max() < np.inf and q.min() > 0 and q.max() < np.inf
  for start in range(0, x.size, _ZETA_CHUNK):
    part = slice(start, start + _ZETA_CHUNK)
    out[part] = _zeta_sum(x[part], q[part], clean)
  if clean:
    return out.reshape(shape)
  q_int = q == np.floor(q)
  x_int = x == np.floor(x)
  # XLA's domain: x == 1 is a pole; x < 1 and infinite arguments are NaN;
  # q a non-positive integer is a pole (inf for even x, NaN otherwise);
  # negative non-integer q needs an integer x.
  out = np.where((x < 1) | ~np.isfinite(x) | ~np.isfinite(q), np.nan, out)
  pole = (q <= 0) & q_int
  even = x_int & (np.remainder(x, 2) == 0)
  out = np.where(pole, np.where(even & (x > 1), np.inf, np.nan), out)
  out = np.where((q < 0) & ~q_int & ~x_int, np.nan, out)
  # The pole at x == 1 comes first, whatever q is (XLA's, as JAX 0.10.2 gives).
  return np.where((x == 1), np.inf, out).reshape(shape)


# m! for the orders a double holds (float() of the integer rounds it
# correctly), then inf: exp(lgamma(m + 1)) without its rounding.
_FACTORIALS = np.array([float(math.factorial(k)) for k in range(171)] + [math.inf])


def polygamma(m, x):
  """psi^(m)(x) of float64 ``m`` and ``x`` of one shape: (-1)^(m+1) m! zeta(m + 1, x)
  for integer m > 0, digamma for m = 0, NaN for other m. Each part runs on
  its own elements only (10 elements: zeta and digamma of every element
  took ~80 us of ~110)."""
  integer_m = (m >= 0) & (m == np.floor(m))
  out = np.full(np.shape(x), np.nan)
  order = integer_m & (m > 0)
  if order.any():
    mk = m[order]
    sign = np.where(np.remainder(mk, 2) == 1, 1.0, -1.0)
    factorial = _FACTORIALS[np.minimum(mk, len(_FACTORIALS) - 1).astype(np.intp)]
    out[order] = sign * factorial * zeta(mk + 1, x[order])
  zero = m == 0
  if zero.any():
    out[zero] = digamma(x[zero])
  return out


# ------------------------------------------------------------ error function
# Up to _ELEMENTWISE_MAX elements, Python's math.erf/math.erfc element by
# element (accurate to an ulp or two in float64; ~0.1 us an element); past it
# the vectorised pieces of ``erf_kernels`` (a few ulp; ~100 NumPy calls a
# chunk, so they win from ~1500 elements on: at 1e6 float32 ~25 ms where the
# element loop takes ~200 ms and the former NumPy series ~300 ms). float32
# and narrower operands take erf_kernels' one-formula kernel (~30 NumPy calls,
# no gathers) past _SINGLE_ELEMENTWISE_MAX elements (~20 us whatever the size
# up to a few thousand): at 1e3 ~35 us where the element loop takes ~90.
_ERF = np.frompyfunc(math.erf, 1, 1)
_ERFC = np.frompyfunc(math.erfc, 1, 1)
_ELEMENTWISE_MAX = 1536
_SINGLE_ELEMENTWISE_MAX = 256


def erf(x, single: bool = False):
  """erf of float64 ``x``; ``single``: the operand was float32 or narrower."""
  if single and x.size > _SINGLE_ELEMENTWISE_MAX:
    return erf_kernels.erf_single(x)
  if x.size <= _ELEMENTWISE_MAX:
    return np.asarray(_ERF(x), np.float64)
  return erf_kernels.erf(x, single)


def erfc(x, single: bool = False):
  """erfc of float64 ``x``; ``single``: the operand was float32 or narrower."""
  if single and x.size > _SINGLE_ELEMENTWISE_MAX:
    return erf_kernels.erfc_single(x)
  if x.size <= _ELEMENTWISE_MAX:
    return np.asarray(_ERFC(x), np.float64)
  return erf_kernels.erfc(x, single)


# ------------------------------------------------- inverse error function
# Giles' approximations ("Approximating the erfinv function", GPU Computing
# Gems Jade, 2011), JAX's algorithm (XLA's ErfInv): with w = -log(1 - x^2),
# erf_inv(x) = x p(w), p a polynomial in w - c or sqrt(w) - c by pieces.
# The single-precision one (relative error ~4e-7) serves float32 and
# narrower floats, the double-precision one float64.
_ERF_INV32 = (   # (w below which the piece applies, its shift, coefficients from the highest)
    (5.0, 2.5, False, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                        0.00021858087, -0.00125372503, -0.00417768164, 0.246640727,
                        1.50140941)),
    (np.inf, 3.0, True, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                         0.00573950773, -0.0076224613, 0.00943887047, 1.00167406,
                         2.83297682)))
_ERF_INV64 = (
    (6.25, 3.125, False, (
        -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
        1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
        6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
        2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
        1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
        4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
        0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
        0.24015818242558961693, 1.6536545626831027356)),
    (16.0, 3.25, True, (
        2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
        1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
        2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
        6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
        0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
        -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
        3.0838856104922207635)),
    (np.inf, 5.0, True, (
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
        2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
        7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977, 4.8499064014085844221)))


def _horner_columns(pieces) -> np.ndarray:
  """The pieces' coefficients as columns, (terms, pieces), highest first; a
  shorter polynomial gets leading zeros (0 t + 0 stays 0 for its finite t,
  then 0 t + c0 = c0: the same steps as its own Horner from c0)."""
  terms = max(len(c) for *_, c in pieces)
  return np.array([(0.0,) * (terms - len(c)) + tuple(c) for *_, c in pieces]).T.copy()


_ERF_INV32_COLUMNS = _horner_columns(_ERF_INV32)
_ERF_INV64_COLUMNS = _horner_columns(_ERF_INV64)


def erf_inv(x, single_precision: bool):
  """The inverse error function by Giles' single- or double-precision
  approximation, evaluated in float64 (±inf at ±1, NaN outside [-1, 1]).
  The single-precision algorithm squares x in float32, as JAX does (near
  |x| = 1 that rounding decides w's last digits). The pieces' polynomials
  run as one Horner pass over a (pieces, n) stack, ~20 NumPy calls where a
  pass per piece took ~40, or from ``_ERF_INV_SPLIT_MIN`` elements each on
  its own elements (1e6: half the passes); either way each element takes
  the operations of its own piece's Horner: the same bits."""
  pieces = _ERF_INV32 if single_precision else _ERF_INV64
  square = x * x
  if single_precision:   # exact in float64 for float32 x, then rounded
    square = square.astype(np.float32).astype(np.float64)
  w = -np.log1p(-square)   # (NumPy's log1p: libm's differs in ~1 in 15 last bits)
  if x.size <= _ERF_INV_SCALAR_MAX:
    values = [_erf_inv_scalar(v, wv, pieces)
              for v, wv in zip(x.reshape(-1).tolist(), w.reshape(-1).tolist())]
    return np.array(values, np.float64).reshape(x.shape)
  columns = _ERF_INV32_COLUMNS if single_precision else _ERF_INV64_COLUMNS
  if x.size >= _ERF_INV_SPLIT_MIN:
    p = _erf_inv_by_piece(w, pieces)
  else:
    p = _erf_inv_stacked(w, pieces, columns)
  out = np.where(np.abs(x) == 1, np.copysign(np.inf, x), x * p)
  return np.where(np.abs(x) > 1, np.nan, out)


# From this size each piece runs on its own elements only (a gather and a
# scatter each): the stack computes every piece for every element.
_ERF_INV_SPLIT_MIN = 4096
# Up to here element by element in Python floats (~0.7 us an element; the
# stack's ~20 NumPy calls cost ~20 us whatever the size up to a few hundred).
_ERF_INV_SCALAR_MAX = 24


def _erf_inv_scalar(v: float, w: float, pieces) -> float:
  """``erf_inv`` of one float given its w = -log1p(-v^2): the same float64
  operations in the same order as the vectorised paths, so the same bits."""
  if not abs(v) < 1:
    if v != v:
      return v                       # (NaN: its own bits, as x p gives)
    return math.copysign(math.inf, v) if abs(v) == 1 else math.nan
  for bound, shift, in_sqrt, coefs in pieces:
    if w < bound:
      t = (math.sqrt(w) if in_sqrt else w) - shift
      acc = coefs[0] * t + coefs[1]
      for c in coefs[2:]:
        acc = acc * t + c
      return v * acc
  return math.nan   # (not reached: the last bound is inf)


def _erf_inv_by_piece(w, pieces):
  p = np.zeros_like(w)   # NaN w (NaN x): no piece, p = 0, x p = NaN
  lower = None
  for bound, shift, in_sqrt, coefs in pieces:
    piece = w < bound if lower is None else (w >= lower) & (w < bound)
    lower = bound
    wk = w[piece]
    t = (np.sqrt(wk) if in_sqrt else wk) - shift
    acc = coefs[0] * t
    acc += coefs[1]
    for c in coefs[2:]:
      acc *= t
      acc += c
    p[piece] = acc
  return p


def _erf_inv_stacked(w, pieces, columns):
  root = np.sqrt(w)
  t = np.empty((len(pieces),) + w.shape)   # (np.stack costs ~5 us of Python)
  for k, (_, shift, in_sqrt, _) in enumerate(pieces):
    np.subtract(root if in_sqrt else w, shift, out=t[k, ...])
  columns = columns.reshape(columns.shape + (1,) * w.ndim)
  acc = columns[0] * t
  acc += columns[1]
  for c in columns[2:]:
    acc *= t
    acc += c
  p = acc[-1]
  for k in range(len(pieces) - 2, -1, -1):   # the first piece whose bound w is below
    p = np.where(w < pieces[k][0], acc[k], p)
  return p


# ------------------------------------------------------- incomplete gamma
# Series and fractions stop at float64's epsilon, or for operands of float32
# and narrower (``single``) at ``incomplete_kernels.SINGLE_EPS``.
_STOP = {False: float(np.finfo(np.float64).eps), True: incomplete_kernels.SINGLE_EPS}

# The methods and the per-element stopping are ``incomplete_kernels``'; the
# edges (x = 0 or inf, a = 0, domain errors) are XLA's, as JAX 0.10.2 gives:
# x = 0 and x = inf decide for any a > 0, infinite a too (igamma(inf, inf)
# = 1, igamma(inf, 0) = 0); an infinite a with a finite x is NaN.
def _igamma_scalar(a: float, x: float, upper: bool, eps: float) -> float:
  if (a != a or x != x or a < 0 or x < 0 or (a == 0 and x == 0)
      or (math.isinf(a) and 0 < x < math.inf)):
    return math.nan
  if a == 0:
    return 0.0 if upper else 1.0
  if x == 0:
    return 1.0 if upper else 0.0
  if x == math.inf:
    return 0.0 if upper else 1.0
  return incomplete_kernels.igamma_parts_scalar(a, x, eps)[upper]


# Python's per-element evaluation of a few elements, by (upper, single).
_IGAMMA = {(upper, single): np.frompyfunc(
    lambda a, x, upper=upper, eps=_STOP[single]: _igamma_scalar(float(a), float(x), upper, eps),
    2, 1) for upper in (False, True) for single in (False, True)}


def _igamma(a, x, upper: bool, single: bool):
  if a.size <= incomplete_kernels.SCALAR_MAX:
    return np.asarray(_IGAMMA[upper, single](a, x), np.float64).reshape(a.shape)
  at_zero_x, at_zero_a, at_inf_x = (1.0, 0.0, 0.0) if upper else (0.0, 1.0, 1.0)
  valid = (a > 0) & (x > 0) & np.isfinite(a) & np.isfinite(x)
  out = np.empty(a.shape)
  out[valid] = incomplete_kernels.igamma_parts(a[valid], x[valid], _STOP[single])[upper]
  out = np.where(np.isposinf(x) & (a > 0), at_inf_x, out)
  out = np.where(x == 0, at_zero_x, out)
  out = np.where((a == 0) & (x > 0), at_zero_a, out)
  bad = ((a < 0) | (x < 0) | ((a == 0) & (x == 0)) | (np.isinf(a) & (x > 0) & np.isfinite(x))
         | np.isnan(a) | np.isnan(x))
  return np.where(bad, np.nan, out)


def igamma(a, x, single: bool = False):
  return _igamma(a, x, False, single)


def igammac(a, x, single: bool = False):
  return _igamma(a, x, True, single)


# --------------------------------------------------------- incomplete beta
# Edges as XLA's (JAX 0.10.2): x at an end of [0, 1] decides first
# (betainc(1, 0, 1) = 1, betainc(0, 2, 0) = 0), then a = 0 (1), b = 0 (0),
# infinite a (0) or b (1); negative operands, x outside [0, 1], a = b = 0
# and NaN give NaN.
def _betainc_scalar(a: float, b: float, x: float, eps: float) -> float:
  if (a != a or b != b or x != x or a < 0 or b < 0 or x < 0 or x > 1
      or (a == 0 and b == 0)):
    return math.nan
  if x == 0 or x == 1:
    return 0.0 if x == 0 else 1.0
  if a == 0 or b == 0:
    return 1.0 if a == 0 else 0.0
  if math.isinf(a) or math.isinf(b):
    return math.nan if a == b else (0.0 if math.isinf(a) else 1.0)
  return incomplete_kernels.betainc_scalar(a, b, x, eps)


_BETAINC = {single: np.frompyfunc(
    lambda a, b, x, eps=_STOP[single]: _betainc_scalar(float(a), float(b), float(x), eps), 3, 1)
            for single in (False, True)}


def betainc(a, b, x, single: bool = False):
  if a.size <= incomplete_kernels.SCALAR_MAX:
    return np.asarray(_BETAINC[single](a, b, x), np.float64).reshape(a.shape)
  valid = (a > 0) & (b > 0) & (x > 0) & (x < 1) & np.isfinite(a) & np.isfinite(b)
  out = np.full(a.shape, np.nan)
  out[valid] = incomplete_kernels.betainc_valid(a[valid], b[valid], x[valid], _STOP[single])
  out = np.where((a == 0) & (b > 0), 1.0, out)
  out = np.where((b == 0) & (a > 0), 0.0, out)
  out = np.where(np.isposinf(a) & np.isfinite(b), 0.0, out)
  out = np.where(np.isposinf(b) & np.isfinite(a), 1.0, out)
  out = np.where(x == 0, 0.0, np.where(x == 1, 1.0, out))
  bad = (a < 0) | (b < 0) | (x < 0) | (x > 1) | ((a == 0) & (b == 0))
  return np.where(bad | np.isnan(a) | np.isnan(b) | np.isnan(x), np.nan, out)


# ------------------------------------------------------------ Bessel I0, I1
def bessel_i0e(x, single: bool = False):
  return special_kernels.bessel_i0e(x, single)


def bessel_i1e(x, single: bool = False):
  return special_kernels.bessel_i1e(x, single)
