"""Fit the polynomial pieces of openjax's vectorised erf/erfc kernels.

    python tools/fit_erf.py > coefficients.txt   (needs mpmath; not a dependency)

Each piece is mpmath's Chebyshev fit (``mp.chebyfit``, 40 digits) of a smooth
function in the power basis of the piece's variable (s in [-1, 1], or t in
[0, 1/4] for A), whose float64 Horner evaluation is checked against mpmath
(the error is printed per piece):

  A  |x| < 0.5:        erf(x) / x                 in t = x^2
  B  0.5 <= |x| < 1.5: erfcx(x) = e^(x^2) erfc(x)  in s = 2 x - 2
  C  1.5 <= |x| < 2.5: erfcx(x)                   in s = 2 x - 4
  D  2.5 <= |x| < 3.5: erfcx(x)                   in s = 2 x - 6
  E  |x| >= 3.5:       x erfcx(x)                 in s = 24.5 / x^2 - 1

Two degrees per piece, the lowest whose fit error is below the target:
float64 (5e-16) and float32 and narrower (1e-9, so float32 results round
correctly but in rare ties).

And the one formula of the float32 kernels (``erf_single``/``erfc_single``):
erfcx(z) on z in [0, 10.1] in u = 4.792 / (2 + z) - 1.396 (2 / (2 + z) mapped
onto [-1, 1]), degree 12: a relative-error least-squares fit on 600
Chebyshev nodes (printed as _Q32 with its error on a grid in z).
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40


def erfcx(x):
  return mp.exp(x * x) * mp.erfc(x)


def piece_a(s):
  t = (s + 1) / 8                      # x^2 in [0, 1/4]
  return 2 / mp.sqrt(mp.pi) if t == 0 else mp.erf(mp.sqrt(t)) / mp.sqrt(t)


def piece_e(s):
  u = (s + 1) / mp.mpf(24.5)           # 1 / x^2 in (0, 1/12.25]
  if u == 0:
    return 1 / mp.sqrt(mp.pi)
  x = 1 / mp.sqrt(u)
  return x * erfcx(x)


PIECES = {
    "A": piece_a,
    "B": lambda s: erfcx((s + 2) / 2),
    "C": lambda s: erfcx((s + 4) / 2),
    "D": lambda s: erfcx((s + 6) / 2),
    "E": piece_e,
}
TARGETS = (("64", 5e-16), ("32", 1e-9))


def fit(f, degree: int, in_t: bool = False):
  """Power-basis coefficients (lowest first) of mpmath's Chebyshev fit of f
  on s in [-1, 1] (for A: of f((8 t - 1)) on t in [0, 1/4], whose terms fall
  off fast), and the relative error of their float64 Horner evaluation."""
  if in_t:
    g, lo, hi = (lambda t: f(8 * t - 1)), 0, mp.mpf(1) / 4
  else:
    g, lo, hi = f, -1, 1
  coeffs = [float(c) for c in mp.chebyfit(g, [lo, hi], degree + 1)][::-1]
  check = np.linspace(float(lo), float(hi), 2001)
  ref = np.array([float(g(mp.mpf(float(v)))) for v in check])
  got = np.zeros_like(check)
  for c in coeffs[::-1]:
    got = got * check + c
  return np.array(coeffs), float(np.max(np.abs(got - ref) / np.abs(ref)))


def fit_single_erfc(top: float = 10.1, degree: int = 12, nodes: int = 600):
  """Power-basis coefficients (highest first) of erfcx(z) in u, the scale and
  shift of u = scale / (2 + z) - shift, and the fit's relative error."""
  lo, hi = 2 / (2 + top), 1.0
  mid, half = (lo + hi) / 2, (hi - lo) / 2
  u = np.cos(np.pi * (np.arange(nodes) + 0.5) / nodes)
  ref = np.array([float(erfcx(mp.mpf(2 / (mid + half * v) - 2))) for v in u])
  basis = np.polynomial.chebyshev.chebvander(u, degree) / ref[:, None]
  cheb = np.linalg.lstsq(basis, np.ones_like(ref), rcond=None)[0]
  coeffs = np.polynomial.chebyshev.cheb2poly(cheb)[::-1]
  z = np.linspace(0, top, 2001)
  check = np.array([float(erfcx(mp.mpf(float(v)))) for v in z])
  got = np.zeros_like(z)
  for c in coeffs:
    got = got * (2 / half / (2 + z) - mid / half) + c
  return coeffs, 2 / half, mid / half, float(np.max(np.abs(got / check - 1)))


def main():
  coeffs, scale, shift, err = fit_single_erfc()
  body = ", ".join(repr(float(c)) for c in coeffs)
  print(f"_Q32 = ({body})   # degree 12, relative error {err:.1e}")
  print(f"_Q_SCALE = {scale!r}\n_Q_SHIFT = {shift!r}")
  for name, f in PIECES.items():
    for label, target in TARGETS:
      for degree in range(4, 24):
        coeffs, err = fit(f, degree, in_t=name == "A")
        if err < target:
          break
      body = ", ".join(repr(float(c)) for c in coeffs[::-1])
      print(f"_{name}{label} = ({body})   # degree {degree}, relative error {err:.1e}")


if __name__ == "__main__":
  main()
