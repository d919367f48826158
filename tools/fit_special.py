"""Fit the polynomial pieces of openjax's vectorised lgamma, digamma and
scaled Bessel kernels (``special_kernels``); writes ``special_tables.py``.

    python tools/fit_special.py > openjax/_src/primitives/elementwise/special_tables.py
    (needs mpmath; not a dependency)

As in ``tools/fit_erf.py``: each piece is mpmath's Chebyshev fit
(``mp.chebyfit``) of a smooth function g(s), s in [-1, 1], in the power basis
(Horner's rule), checked in float64 against mpmath on 801 points; the lowest
degree whose relative error is below the target is kept, one degree for
float64 operands (3e-16) and one for float32 and narrower (1e-9: float32
results then round correctly but in rare ties). The pieces (y > 0 after the
kernels' reductions):

  lgamma   L0 y in [1.5, 2.5):   lgamma(y) = (y - 2) P(s),  s = 2 (y - 2)
           Lk y in [k+1.5, k+2.5), k = 1..7: lgamma(y) = P(s), s = 2 (y - k - 2)
           L8 y >= 9.5:          lgamma(y) = (y - 1/2) log y - y + log(2 pi)/2 + P(s) / y,
                                 s = 2 (9.5 / y)^2 - 1
  digamma  D0 y in [1, 2):       psi(y) = (y - r) P(s),  s = 2 (y - 1.5), r psi's root
           Dk y in [k+1, k+2), k = 1..8: psi(y) = P(s), s = 2 (y - k - 1.5)
           D9 y >= 10:           psi(y) = log y - 1 / (2 y) - P(s) / y^2, s = 2 (10 / y)^2 - 1
  i0e, i1e Bk y in [2k, 2k+2), k = 0..3: P(s), s = y - 2k - 1 (i1e: y P(s) for k = 0)
           B4 y >= 8:            P(s) / sqrt(y), s = 16 / y - 1
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 34
TARGETS = (("64", 3e-16), ("32", 1e-9))
HALF_LOG_2PI = mp.log(2 * mp.pi) / 2
PSI_ROOT = mp.findroot(mp.digamma, 1.4616321449683623)


def _lgamma_pieces():
  pieces = [lambda s: mp.loggamma(2 + s / 2) / (s / 2) if s != 0 else mp.digamma(2)]
  for k in range(1, 8):
    pieces.append(lambda s, k=k: mp.loggamma(k + 2 + s / 2))

  def tail(s):
    if s == -1:
      return mp.mpf(1) / 12
    y = mp.mpf(9.5) / mp.sqrt((s + 1) / 2)
    return y * (mp.loggamma(y) - ((y - mp.mpf(0.5)) * mp.log(y) - y + HALF_LOG_2PI))
  return pieces + [tail]


def _digamma_pieces():
  def root_piece(s):
    y = mp.mpf(1.5) + s / 2
    if abs(y - PSI_ROOT) < mp.mpf(10) ** -20:
      return mp.polygamma(1, PSI_ROOT)
    return mp.digamma(y) / (y - PSI_ROOT)
  pieces = [root_piece]
  for k in range(1, 9):
    pieces.append(lambda s, k=k: mp.digamma(k + mp.mpf(1.5) + s / 2))

  def tail(s):
    if s == -1:
      return mp.mpf(1) / 12
    y = 10 / mp.sqrt((s + 1) / 2)
    return y * y * (mp.log(y) - 1 / (2 * y) - mp.digamma(y))
  return pieces + [tail]


def _bessel_pieces(order):
  def scaled(y):
    return mp.besseli(order, y) * mp.exp(-y)
  pieces = []
  for k in range(4):
    if k == 0 and order == 1:
      pieces.append(lambda s: scaled(1 + s) / (1 + s) if s != -1 else mp.mpf(0.5))
    else:
      pieces.append(lambda s, k=k: scaled(2 * k + 1 + s))

  def tail(s):
    if s == -1:
      return 1 / mp.sqrt(2 * mp.pi)
    y = 16 / (s + 1)
    return mp.sqrt(y) * scaled(y)
  return pieces + [tail]


FUNCTIONS = {"LGAMMA": _lgamma_pieces(), "DIGAMMA": _digamma_pieces(),
             "I0E": _bessel_pieces(0), "I1E": _bessel_pieces(1)}
CHECK = np.linspace(-1, 1, 801)


def fit(g, ref, degree):
  """Power-basis coefficients (highest first) of the Chebyshev fit of g on
  [-1, 1] and the relative error of their float64 Horner evaluation."""
  coeffs = [float(c) for c in mp.chebyfit(g, [-1, 1], degree + 1)]
  got = np.zeros_like(CHECK)
  for c in coeffs:
    got = got * CHECK + c
  return coeffs, float(np.max(np.abs(got - ref) / np.abs(ref)))


def main():
  print('"""Coefficients of the polynomial pieces of ``special_kernels``, written by')
  print('``tools/fit_special.py`` (see there): per function and precision, one tuple')
  print('per piece, highest power first. Do not edit by hand."""')
  print(f"PSI_ROOT_HIGH = {float(PSI_ROOT)!r}")
  print(f"PSI_ROOT_LOW = {float(PSI_ROOT - mp.mpf(float(PSI_ROOT)))!r}")
  for name, pieces in FUNCTIONS.items():
    for label, target in TARGETS:
      print(f"{name}{label} = (")
      for g in pieces:
        ref = np.array([float(g(mp.mpf(float(v)))) for v in CHECK])
        for degree in range(3, 40):
          coeffs, err = fit(g, ref, degree)
          if err < target:
            break
        print(f"    (  # degree {degree}, relative error {err:.1e}")
        for i in range(0, len(coeffs), 3):
          print("        " + " ".join(f"{c!r}," for c in coeffs[i:i + 3]))
        print("    ),")
      print(")")


if __name__ == "__main__":
  main()
