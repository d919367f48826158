"""Special-function primitives: log-gamma, digamma, polygamma, Hurwitz zeta,
error functions, incomplete gamma and beta functions, scaled Bessel functions.

Implementations are NumPy only (no SciPy): most evaluate in float64 (fitted
polynomial pieces, series, continued fractions or asymptotic expansions;
dispatch in ``special_numerics``) and round to the operand dtype, so float32
results are correctly rounded or nearly so. ``erf_inv``, ``igamma_grad_a`` and
``random_gamma_grad`` use JAX's own algorithms instead (Giles' polynomial
approximations; the gamma derivatives' series and continued fraction in the
operands' precision, ``gamma_kernels``): they decide the values of
``jax.random.normal`` and of the gamma samplers' gradients. Edge cases
(poles, domain errors, infinities) follow XLA, whose values JAX returns.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.core import get_aval
from openjax._src.primitives.base.structural import defjvp, defjvp2
from openjax._src.primitives.elementwise import (gamma_kernels, gamma_lowering, special_lowering,
                                                 special_numerics)
from openjax._src.primitives.elementwise.arithmetic import (abs as lax_abs, add, mul, neg,
                                                            reciprocal, sign, square, sub)
from openjax._src.primitives.elementwise.elementwise_lowering import chlo
from openjax._src.primitives.elementwise.elementwise_rules import (
    FLOAT, naryop, one_like, scalar_like, unop)
from openjax._src.primitives.elementwise.logic import gt, select
from openjax._src.primitives.elementwise.transcendental import exp, log, log1p
from openjax._src.primitives.shape.shape import full_like

__all__ = [
    "lgamma", "lgamma_p", "digamma", "digamma_p", "polygamma", "polygamma_p", "zeta", "zeta_p",
    "erf", "erf_p", "erfc", "erfc_p", "erf_inv", "erf_inv_p", "igamma", "igamma_p",
    "igammac", "igammac_p", "igamma_grad_a", "igamma_grad_a_p", "random_gamma_grad",
    "random_gamma_grad_p",
    "bessel_i0e", "bessel_i0e_p", "bessel_i1e", "bessel_i1e_p", "betainc",
    "regularized_incomplete_beta_p",
]


def _f64(fn, narrow: bool = False):
  """Evaluate ``fn`` on float64 copies of the (broadcast) operands and round
  to the first operand's dtype; with ``narrow``, also tell it whether they
  were float32 or narrower (whose rounding needs fewer terms): ``fn(*operands,
  single)``. Of the operands' dtype, it is the primitive's lean eval kernel
  (the eval trace and the impl silence NumPy's warnings around it): at 10
  elements the impl's wrapper, an errstate and ``np.broadcast_arrays`` of one
  operand cost ~5 us of lgamma's ~15."""
  def kernel(*args):
    dt = args[0].dtype
    extra = (dt.itemsize <= 4,) if narrow else ()
    if len(args) == 1:
      out = fn(np.asarray(args[0], np.float64), *extra)
    else:
      vals = [np.asarray(a, np.float64) for a in args]
      if any(v.shape != vals[0].shape for v in vals):
        vals = np.broadcast_arrays(*vals)
      out = fn(*vals, *extra)
    return np.asarray(out).astype(dt, copy=False)
  return kernel


# Derivatives are JAX's (lax/special.py); where JAX has none, neither do we.
# --------------------------------------------------------------------- lgamma
lgamma_p = unop("lgamma", _f64(special_numerics.lgamma, narrow=True), FLOAT,
                lower=special_lowering.rule(special_lowering.lgamma))


def lgamma(x):
  """Elementwise log of the absolute value of the gamma function."""
  return lgamma_p.bind1(x)


defjvp(lgamma_p, lambda g, x: mul(g, digamma(x)))


# -------------------------------------------------------------------- digamma
digamma_p = unop("digamma", _f64(special_numerics.digamma, narrow=True), FLOAT,
                 lower=special_lowering.rule(special_lowering.digamma))


def digamma(x):
  """Elementwise digamma: the derivative of ``lgamma``."""
  return digamma_p.bind1(x)


defjvp(digamma_p, lambda g, x: mul(g, polygamma(scalar_like(x, 1), x)))


# ------------------------------------------------------------------ polygamma
polygamma_p = naryop("polygamma", _f64(special_numerics.polygamma), FLOAT,
                     lower=chlo("chlo.polygamma"))


def polygamma(m, x):
  """Elementwise polygamma: the ``m``-th derivative of ``digamma`` (``m`` a
  non-negative integer value; NaN otherwise)."""
  return polygamma_p.bind1(m, x)


def _polygamma_grad_m(g, m, x):
  raise ValueError("polygamma gradient with respect to m is not supported")


defjvp(polygamma_p, _polygamma_grad_m,
       lambda g, m, x: mul(g, polygamma(add(m, scalar_like(m, 1)), x)))


# ----------------------------------------------------------------------- zeta
zeta_p = naryop("zeta", _f64(special_numerics.zeta), FLOAT,
                lower=special_lowering.rule(special_lowering.zeta))


def zeta(x, q):
  """Elementwise Hurwitz zeta: the sum of ``(q + k)**-x`` over k >= 0."""
  return zeta_p.bind1(x, q)


zeta_p.mark_not_applicable("jvp", "JAX defines no derivative of zeta (its grad raises "
                                  "NotImplementedError)")


# ------------------------------------------------------------------ erf, erfc
erf_p = unop("erf", _f64(special_numerics.erf, narrow=True), FLOAT, lower=chlo("chlo.erf"))


def erf(x):
  """Elementwise error function."""
  return erf_p.bind1(x)


defjvp(erf_p, lambda g, x: mul(scalar_like(x, 2 / np.sqrt(np.pi)), mul(g, exp(neg(square(x))))))

erfc_p = unop("erfc", _f64(special_numerics.erfc, narrow=True), FLOAT, lower=chlo("chlo.erfc"))


def erfc(x):
  """Elementwise complementary error function ``1 - erf(x)``, accurate for large x."""
  return erfc_p.bind1(x)


defjvp(erfc_p, lambda g, x: mul(scalar_like(x, -2 / np.sqrt(np.pi)),
                                mul(g, exp(neg(square(x))))))


# -------------------------------------------------------------------- erf_inv
def _erf_inv_impl(x):
  """Giles' approximation of ``x``'s precision (the single-precision one for
  float32 and narrower floats), evaluated in float64 and rounded."""
  with np.errstate(all="ignore"):
    out = special_numerics.erf_inv(np.asarray(x, np.float64),
                                   single_precision=x.dtype != np.float64)
  return out.astype(x.dtype)


erf_inv_p = unop("erf_inv", _erf_inv_impl, FLOAT, lower=special_lowering.erf_inv_rule)


def erf_inv(x):
  """Elementwise inverse error function (±inf at ±1, NaN outside [-1, 1])."""
  return erf_inv_p.bind1(x)


defjvp2(erf_inv_p, lambda g, ans, x: mul(scalar_like(x, np.sqrt(np.pi) / 2),
                                         mul(g, exp(square(ans)))))


# ------------------------------------------------------------- igamma, igammac
igamma_p = naryop("igamma", _f64(special_numerics.igamma, narrow=True), FLOAT,
                  lower=special_lowering.rule(special_lowering.igamma))


def igamma(a, x):
  """Elementwise regularized lower incomplete gamma function P(a, x)."""
  return igamma_p.bind1(a, x)


def _igamma_grad_x(g, a, x):
  # The density x**(a-1) e**-x / Gamma(a), in logs.
  return mul(g, exp(sub(add(neg(x), mul(sub(a, full_like(a, 1)), log(x))), lgamma(a))))


defjvp(igamma_p, lambda g, a, x: mul(g, igamma_grad_a(a, x)), _igamma_grad_x)

igammac_p = naryop("igammac", _f64(special_numerics.igammac, narrow=True), FLOAT,
                   lower=special_lowering.rule(special_lowering.igammac))


def igammac(a, x):
  """Elementwise regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
  return igammac_p.bind1(a, x)


defjvp(igammac_p, lambda g, a, x: neg(mul(g, igamma_grad_a(a, x))),
       lambda g, a, x: neg(_igamma_grad_x(g, a, x)))


# -------------------------------------------- igamma_grad_a, random_gamma_grad
# The a-derivatives are JAX's algorithm in the operands' precision.
igamma_grad_a_p = naryop("igamma_grad_a", gamma_kernels.igamma_grad_a, FLOAT,
                         lower=gamma_lowering.igamma_grad_a_rule)


def igamma_grad_a(a, x):
  """Elementwise derivative of ``igamma(a, x)`` with respect to ``a``."""
  return igamma_grad_a_p.bind1(a, x)


igamma_grad_a_p.mark_not_applicable("jvp", "JAX defines no derivative of igamma_grad_a")

# JAX composes this from lax ops (while loops); one primitive here evaluates
# them eagerly without a while primitive.
random_gamma_grad_p = naryop("random_gamma_grad", gamma_kernels.random_gamma_grad, FLOAT,
                             lower=gamma_lowering.random_gamma_grad_rule)


def random_gamma_grad(a, x):
  """Elementwise derivative of a Gamma(a, 1) sample ``x`` with respect to ``a``
  (implicit differentiation of the CDF: ``-dP/da / density``; 0 at x = 0)."""
  return random_gamma_grad_p.bind1(a, x)


random_gamma_grad_p.mark_not_applicable(
    "jvp", "JAX computes random_gamma_grad with a while_loop that reverse mode cannot "
           "differentiate; it has no derivative rule")


# ---------------------------------------------------------- bessel_i0e, i1e
bessel_i0e_p = unop("bessel_i0e", _f64(special_numerics.bessel_i0e, narrow=True), FLOAT,
                    lower=special_lowering.rule(special_lowering.bessel_i0e))


def bessel_i0e(x):
  """Elementwise exponentially scaled modified Bessel function of order 0:
  ``exp(-|x|) * I0(x)``."""
  return bessel_i0e_p.bind1(x)


defjvp2(bessel_i0e_p, lambda g, y, x: mul(g, sub(bessel_i1e(x), mul(sign(x), y))))

bessel_i1e_p = unop("bessel_i1e", _f64(special_numerics.bessel_i1e, narrow=True), FLOAT,
                    lower=chlo("chlo.bessel_i1e"))


def bessel_i1e(x):
  """Elementwise exponentially scaled modified Bessel function of order 1:
  ``exp(-|x|) * I1(x)``."""
  return bessel_i1e_p.bind1(x)


def _bessel_i1e_jvp(g, y, x):
  eps = dtypes.finfo(get_aval(x).dtype).eps
  x_is_not_tiny = gt(lax_abs(x), scalar_like(x, eps))
  safe_x = select(x_is_not_tiny, x, full_like(x, eps))
  dy_dx = sub(bessel_i0e(safe_x), mul(y, add(sign(safe_x), reciprocal(safe_x))))
  dy_dx = select(x_is_not_tiny, dy_dx, full_like(x, 0.5))
  return mul(g, dy_dx)


defjvp2(bessel_i1e_p, _bessel_i1e_jvp)


# -------------------------------------------------------------------- betainc
regularized_incomplete_beta_p = naryop(
    "regularized_incomplete_beta", _f64(special_numerics.betainc, narrow=True),
    (FLOAT, FLOAT, FLOAT),
    lower=special_lowering.rule(special_lowering.betainc))


def betainc(a, b, x):
  """Elementwise regularized incomplete beta function I_x(a, b)."""
  return regularized_incomplete_beta_p.bind1(a, b, x)


def _betainc_grad_ab(g, a, b, x):
  raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_grad_x(g, a, b, x):
  lbeta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
  partial_x = exp(sub(add(mul(sub(b, one_like(b)), log1p(neg(x))),
                          mul(sub(a, one_like(a)), log(x))), lbeta))
  return mul(partial_x, g)


defjvp(regularized_incomplete_beta_p, _betainc_grad_ab, _betainc_grad_ab, _betainc_grad_x)
