"""jax.scipy.special, part one: gamma and beta functions, zeta and polygamma,
logistic and entropy functions, Bessel functions of order 0 and 1 and the
softmax family (error and normal-distribution functions: ``special_error``).

Everything is written with lax/jnp wrappers and custom derivatives, as JAX
writes it: the primitives (lgamma, digamma, igamma, erf, bessel_i0e, ...) do
the numerics; rational approximations are Cephes', as in JAX and SciPy. The
iterative functions are in ``special_series`` and ``special_hypergeometric``.
"""
from __future__ import annotations

import math
from functools import partial, wraps

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.autodiff import jvp
from openjax._src.api.custom_derivatives import custom_jvp
from openjax._src.api.jit import jit
from openjax._src.core import Array, concrete_or_error, eval_trace, trace_state
from openjax._src.nn.softmax import log_softmax as _nn_log_softmax
from openjax._src.nn.softmax import logsumexp
from openjax._src.nn.softmax import softmax as _nn_softmax
from openjax._src.numpy import util
from openjax._src.numpy.eager_programs import eager_program
from openjax._src.numpy.util import promote_args_inexact
from openjax._src.scipy import jnp

__all__ = [
    "gammaln", "gammasgn", "loggamma", "gamma", "betaln", "factorial", "comb", "beta", "betainc",
    "digamma", "gammainc", "gammaincc", "logit", "expit", "logsumexp", "xlogy", "xlog1py",
    "entr", "boxcox", "boxcox1p", "multigammaln", "kl_div", "rel_entr", "zeta", "polygamma",
    "i0e", "i0", "i1e", "i1", "poch", "softmax", "log_softmax",
]


def reject_complex(name: str, x) -> None:
  """The error JAX raises for complex arguments of real-only functions."""
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    raise ValueError(f"{name} does not support complex-valued inputs, got {x.dtype} "
                     f"(pass real values).")


# ------------------------------------------------------------ gamma, beta
def gammaln(x):
  """Log of the absolute value of the gamma function."""
  x, = promote_args_inexact("gammaln", x)
  return lax.lgamma(x)


@jit
def gammasgn(x):
  """Sign of the gamma function: NaN at the poles (non-positive integers)."""
  x, = promote_args_inexact("gammasgn", x)
  reject_complex("gammasgn", x)
  floor_x = lax.floor(x)
  negative = x < 0
  is_nan = (negative & (x == floor_x)) | jnp.isnan(x)
  # Gamma is negative on (-2k-1, -2k) and at -0.0 (its limit from the left).
  is_negative = (negative & (floor_x % 2 != 0)) | ((x == 0) & jnp.signbit(x))
  return jnp.select([is_nan, is_negative], [np.nan, -1.0], 1.0).astype(x.dtype)


# Lanczos' approximation (g = 7, 9 terms) for complex arguments.
_LANCZOS_G = 7.0
_LANCZOS_COEFFS = np.array([
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
    1.5056327351493116e-7])


def _complex_is_pole_or_nan(z):
  real = jnp.real(z)
  pole = (jnp.imag(z) == 0) & (real == jnp.floor(real)) & (real <= 0)
  return pole | jnp.isnan(z)


def _complex_loggamma_lanczos(z):
  """log Gamma(z) for complex z; reflected for Re z < 1/2 (principal log only
  near the real axis: ``loggamma`` fixes the branch)."""
  reflect = jnp.real(z) < 0.5
  zl = jnp.where(reflect, 1.0 - z, z) - 1.0
  ks = jnp.arange(1, 9, dtype=z.dtype)
  series = _LANCZOS_COEFFS[0] + jnp.sum(
      jnp.asarray(_LANCZOS_COEFFS[1:], z.dtype) / (zl[..., None] + ks), axis=-1)
  t = zl + (_LANCZOS_G + 0.5)
  lanczos = 0.5 * np.log(2 * np.pi) + (zl + 0.5) * jnp.log(t) - t + jnp.log(series)
  z_reflect = jnp.where(reflect, z, 0.5)
  reflected = np.log(np.pi) - jnp.log(jnp.sin(np.pi * z_reflect)) - lanczos
  return jnp.where(reflect, reflected, lanczos)


@jit
def _complex_loggamma(z):
  """SciPy's principal branch of log Gamma: shift z right until Re z >= 1/2 with
  log Gamma(z) = log Gamma(z + n) - sum log(z + k), so the imaginary part is
  continuous (the Lanczos reflection alone would wrap it)."""
  bad = _complex_is_pole_or_nan(z)
  z = jnp.where(bad, 1.0, z)
  n = jnp.maximum(0, jnp.ceil(0.5 - jnp.real(z))).astype(np.int32)

  def body(state):
    k, total = state
    active = k < n
    return k + 1, total + jnp.where(active, jnp.log(jnp.where(active, z + k, 1.0)), 0)

  # The trip count once, as a scalar: a compiled loop whose condition reduces
  # an array of two or more dimensions costs ~7 us a trip in IREE.
  trips = jnp.max(n, initial=0)
  _, shift = lax.while_loop(lambda s: s[0] < trips, body, (jnp.int32(0), jnp.zeros_like(z)))
  out = _complex_loggamma_lanczos(z + n.astype(z.dtype)) - shift
  return jnp.where(bad, complex(np.nan, np.nan), out)


# gamma and beta hold gammasgn's jit: op by op its eager call runs compiled
# (one fused pass), in a program it is interpreted (~25 passes), so past
# ~1e5 elements the program loses (beta of 1e6: 345 -> 450 ms) what it saves
# in binds below (beta of 10: 460 -> 160 us). Sizes up to this run it.
_PROGRAM_MAX_ELEMENTS = 1 << 16


def _program_when_small(fun):
  """``fun`` as an eager library program when no argument has more than
  ``_PROGRAM_MAX_ELEMENTS`` elements, op by op otherwise (and under traces)."""
  program = eager_program()(fun)

  @wraps(fun)
  def call(*args):
    if all(math.prod(getattr(a, "shape", ())) <= _PROGRAM_MAX_ELEMENTS for a in args):
      return program(*args)
    return fun(*args)
  return call


# loggamma, gamma, betaln, beta, factorial, multigammaln, i0 and i1: JAX does
# not jit them (3-73 equations); eagerly each runs as one cached library
# program (beta of 10 elements 460 -> 160 us, betaln 340 -> 64), inline under a trace.
def loggamma(x):
  """Principal branch of log Gamma; NaN for real x <= 0 (as SciPy)."""
  x, = promote_args_inexact("loggamma", x)
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    return _complex_loggamma(x)   # a jit: its own compiled tier eagerly
  return _real_loggamma(x)


@eager_program()
def _real_loggamma(x):
  return jnp.where(x > 0, lax.lgamma(x), np.nan)


def _eager_all(args, test) -> bool:
  """Whether this is an eager call (no trace) of non-weak real floating
  Arrays whose values all pass ``test`` (a NumPy predicate; NaN must fail
  it). Such calls may skip the parts of JAX's formula whose result the values
  already decide, with the same values: a traced call stages JAX's equations."""
  if trace_state.trace is not eval_trace:
    return False
  for a in args:
    if (not isinstance(a, Array) or a.aval.weak_type
        or not dtypes.issubdtype(a.dtype, np.floating) or not test(a._value).all()):
      return False
  return True


def _positive(v):
  return v > 0


def _below_8(v):
  return v < 8


def _from_8(v):
  return v >= 8


def gamma(x):
  """The gamma function (complex arguments through Lanczos' approximation)."""
  # gammasgn(x) is 1 where x > 0 and 1 * exp(lgamma(x)) is exp(lgamma(x))
  # exactly: positive operands skip gammasgn's ~13 steps (and poch's two).
  if _eager_all((x,), _positive):
    return _gamma_of_positive(x)
  return _gamma(x)


@_program_when_small
def _gamma_of_positive(x):
  x, = promote_args_inexact("gamma", x)
  return lax.exp(lax.lgamma(x))


@_program_when_small
def _gamma(x):
  x, = promote_args_inexact("gamma", x)
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    bad = _complex_is_pole_or_nan(x)
    out = jnp.exp(_complex_loggamma_lanczos(jnp.where(bad, 1.0, x)))
    return jnp.where(bad, complex(np.nan, np.nan), out)
  return gammasgn(x) * lax.exp(lax.lgamma(x))


# Cephes/cdflib's algdiv: log Gamma(b) - log Gamma(a + b) for b >= 8 (with a <=
# b), from Stirling's series, so betaln keeps its digits when b is large.
_ALGDIV_C = (0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03,
             -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02)


def _algdiv(a, b):
  h = a / b
  x = h / (1 + h)
  x2 = x * x
  s3 = 1.0 + (x + x2)
  s5 = 1.0 + (x + x2 * s3)
  s7 = 1.0 + (x + x2 * s5)
  s9 = 1.0 + (x + x2 * s7)
  s11 = 1.0 + (x + x2 * s9)
  t = (1.0 / b) ** 2
  c0, c1, c2, c3, c4, c5 = _ALGDIV_C
  w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
  w = w * (x / b)
  u = (b + (a - 0.5)) * lax.log1p(a / b)
  v = a * (lax.log(b) - 1.0)
  return jnp.where(u <= v, (w - v) - u, (w - u) - v)


# betaln and beta are not library programs: grad of a jitted betaln, its
# transpose compiled on its own, exceeds IREE's dispatch binding limit
# (tests/test_scipy_stats.py::test_betabinom_gradient_compiled).
def betaln(a, b):
  """Log of the absolute value of the beta function."""
  # JAX's formula picks one branch per element by max(a, b) < 8: an eager call
  # whose values all take one branch computes that branch alone (the same
  # values; the other is 3 lgamma kernels or algdiv's ~30 steps).
  if _eager_all((a, b), _below_8):
    return _betaln_small(a, b)
  if _eager_all((a,), _from_8) or _eager_all((b,), _from_8):
    return _betaln_large(a, b)
  return _betaln(a, b)


@eager_program()
def _betaln(a, b):
  a, b = promote_args_inexact("betaln", a, b)
  a, b = jnp.minimum(a, b), jnp.maximum(a, b)
  # log Gamma(a) once (JAX's jaxpr has it twice, one per branch): eagerly
  # each lgamma is a kernel over every element (betaln of 1e3: 4 -> 3).
  lgamma_a = lax.lgamma(a)
  small_b = lgamma_a + (lax.lgamma(b) - lax.lgamma(a + b))
  large_b = lgamma_a + _algdiv(a, b)
  return jnp.where(b < 8, small_b, large_b)


def _betaln_small_branch(a, b):
  a, b = jnp.minimum(a, b), jnp.maximum(a, b)
  return lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))


@eager_program()
def _betaln_small(a, b):
  a, b = promote_args_inexact("betaln", a, b)
  return _betaln_small_branch(a, b)


@eager_program()
def _betaln_large(a, b):
  a, b = promote_args_inexact("betaln", a, b)
  a, b = jnp.minimum(a, b), jnp.maximum(a, b)
  return lax.lgamma(a) + _algdiv(a, b)


def beta(a, b):
  """The beta function Gamma(a) Gamma(b) / Gamma(a + b)."""
  # 0 < a, b < 8: the three gammasgn are 1 (1 * 1 * 1 * v is v exactly) and
  # betaln takes its small branch everywhere (beta of 10: ~70 -> ~12 steps).
  if _eager_all((a, b), _small_positive):
    return _beta_small_positive(a, b)
  return _beta(a, b)


def _small_positive(v):
  return (v > 0) & (v < 8)


@_program_when_small
def _beta_small_positive(a, b):
  a, b = promote_args_inexact("beta", a, b)
  return lax.exp(_betaln_small_branch(a, b))


@_program_when_small
def _beta(a, b):
  a, b = promote_args_inexact("beta", a, b)
  reject_complex("beta", a)
  sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
  return sign * lax.exp(betaln(a, b))


@eager_program(static_argnames=("exact",))
def factorial(n, exact: bool = False):
  """n! as Gamma(n + 1); 0 for negative n. ``exact=True`` is not supported."""
  if exact:
    raise NotImplementedError("factorial with exact=True")
  n, = promote_args_inexact("factorial", n)
  return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def comb(N, k, *, repetition: bool = False):
  """Binomial coefficient C(N, k) through log-gamma (0 outside 0 <= k <= N)."""
  # A jit per ``repetition`` without static arguments: jit's eager fast path
  # takes positional arrays only (10 elements 27 -> ~17 us).
  return (_comb_repetition if repetition else _comb)(N, k)


def _comb_with_repetition(N, k):
  N, k = promote_args_inexact("comb", N, k)
  return jnp.where((k == 0) & (N >= 0), 1.0, _comb(N + k - 1, k))


def _comb_without_repetition(N, k):
  N, k = promote_args_inexact("comb", N, k)
  valid = (k <= N) & (N >= 0) & (k >= 0)
  safe_n = jnp.where(valid, N, 0.0)
  safe_k = jnp.where(valid, k, 0.0)
  out = lax.exp(gammaln(safe_n + 1) - gammaln(safe_k + 1) - gammaln(safe_n + 1 - safe_k))
  return jnp.where(valid, out, 0.0)


_comb_without_repetition.__name__ = _comb_with_repetition.__name__ = "comb"
_comb = jit(_comb_without_repetition)
_comb_repetition = jit(_comb_with_repetition)


def betainc(a, b, x):
  """Regularized incomplete beta function I_x(a, b)."""
  a, b, x = promote_args_inexact("betainc", a, b, x)
  reject_complex("betainc", x)
  return lax.betainc(a, b, x)


def digamma(x):
  """The digamma function psi(x) = d/dx log Gamma(x)."""
  x, = promote_args_inexact("digamma", x)
  return lax.digamma(x)


def gammainc(a, x):
  """Regularized lower incomplete gamma function P(a, x)."""
  a, x = promote_args_inexact("gammainc", a, x)
  return lax.igamma(a, x)


def gammaincc(a, x):
  """Regularized upper incomplete gamma function Q(a, x)."""
  a, x = promote_args_inexact("gammaincc", a, x)
  return lax.igammac(a, x)


@eager_program(static_argnames=("d",))
def multigammaln(a, d):
  """Log of the multivariate gamma function of dimension ``d`` (static)."""
  d = concrete_or_error(int, d, "d argument of multigammaln")
  a, d_arr = promote_args_inexact("multigammaln", a, d)
  constant = 0.25 * d_arr * (d_arr - 1) * lax.log(lax.full_like(a, np.pi))
  halves = jnp.arange(d, dtype=d_arr.dtype) / 2
  return jnp.sum(gammaln(jnp.expand_dims(a, -1) - halves), axis=-1) + constant


# 2M Bernoulli-number denominators (2k)! / B_2k of the Euler-Maclaurin tail.
_ZETA_BERNOULLI = np.array([
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1307674368000 / 691, 74724249600.0,
    -10670622842880000 / 3617, 5109094217170944000 / 43867,
    -802857662698291200000 / 174611, 14101100039391805440000 / 77683,
    -1693824136731743669452800000 / 236364091, 186134520519971831808000000 / 657931,
    -37893265687455865519472640000000 / 3392780147,
    759790291646040068357842010112000000 / 1723168255201,
    -134196726836183700385281186201600000000 / 7709321041217])


def _zeta_euler_maclaurin(s, a):
  """Hurwitz zeta by Euler-Maclaurin summation (N terms, then the integral and
  M Bernoulli corrections): differentiable in both arguments, so it defines
  zeta's derivatives, as in JAX."""
  s, a = jnp.asarray(s), jnp.asarray(a)
  n = 8 if a.dtype == np.float32 else 16
  k = np.arange(n, dtype=a.dtype)
  head = jnp.sum((a[..., None] + k) ** (-s[..., None]), -1)
  integral = (a + n) ** (1 - s) / (s - 1)
  t0 = (a + n) ** (-s)
  m = np.arange(2 * n, dtype=a.dtype)
  ratios = jnp.cumprod((s[..., None] + m) / (a[..., None] + n), -1)[..., ::2]
  ratios = jnp.clip(ratios, max=dtypes.finfo(a.dtype).max)
  tail = t0 * (0.5 + jnp.sum(ratios / _ZETA_BERNOULLI[:n].astype(a.dtype), -1))
  return head + integral + tail


@custom_jvp
def _zeta(x, q):
  return lax.zeta(x, q)


@_zeta.defjvp
def _zeta_jvp(primals, tangents):
  return jvp(_zeta_euler_maclaurin, primals, tangents)


def zeta(x, q=None):
  """Hurwitz zeta function sum_k (k + q)^-x; the Riemann zeta (q=None) is not
  implemented, as in JAX."""
  if q is None:
    raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                              "compute the Hurwitz Zeta function.")
  x, q = promote_args_inexact("zeta", x, q)
  return _zeta(x, q)


def polygamma(n, x):
  """The n-th derivative of digamma; ``n`` must have an integer dtype."""
  n_dtype = jnp.asarray(n).dtype
  if not dtypes.issubdtype(n_dtype, np.integer):
    raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {n_dtype}.")
  n, x = promote_args_inexact("polygamma", n, x)
  reject_complex("polygamma", x)
  return lax.polygamma(n, x)


@custom_jvp
def poch(z, m):
  """Pochhammer symbol (z)_m = Gamma(z + m) / Gamma(z)."""
  z, m = promote_args_inexact("poch", z, m)
  reject_complex("poch", z)
  return jnp.where(m == 0.0, jnp.ones((), z.dtype), gamma(z + m) / gamma(z))


poch.defjvps(
    lambda z_dot, out, z, m: (digamma(z + m) - digamma(z)) * poch(z, m) * z_dot,
    lambda m_dot, out, z, m: digamma(z + m) * poch(z, m) * m_dot)


# ------------------------------------------------- logistic and entropies
@custom_jvp
def logit(x):
  """log(x / (1 - x))."""
  x, = promote_args_inexact("logit", x)
  return lax.log(lax.div(x, lax.sub(lax.full_like(x, 1), x)))


logit.defjvps(lambda g, y, x: lax.div(g, lax.mul(x, lax.sub(lax.full_like(x, 1), x))))


def expit(x):
  """The logistic sigmoid 1 / (1 + exp(-x))."""
  x, = promote_args_inexact("expit", x)
  return lax.logistic(x)


@custom_jvp
def xlogy(x, y):
  """x * log(y), 0 where x == 0 (unless y is NaN)."""
  x, y = promote_args_inexact("xlogy", x, y)
  return jnp.where((x != 0.0) | jnp.isnan(y), lax.mul(x, lax.log(y)), jnp.zeros_like(x))


@xlogy.defjvp
def _xlogy_jvp(primals, tangents):
  x, y = primals
  x_dot, y_dot = tangents
  out = xlogy(x, y)
  return out, (x_dot * lax.log(y) + y_dot * x / y).astype(out.dtype)


@custom_jvp
def xlog1py(x, y):
  """x * log1p(y), 0 where x == 0 (unless y is NaN)."""
  x, y = promote_args_inexact("xlog1py", x, y)
  return jnp.where((x != 0.0) | jnp.isnan(y), lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


@xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
  x, y = primals
  x_dot, y_dot = tangents
  out = xlog1py(x, y)
  return out, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(out.dtype)


@custom_jvp
def _xlogx(x):
  return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
  x, = primals
  x_dot, = tangents
  return _xlogx(x), x_dot * (lax.log(x) + 1)


@util.jit
def entr(x):
  """Elementwise entropy -x log x (0 at 0, -inf for x < 0)."""
  x, = promote_args_inexact("entr", x)
  reject_complex("entr", x)
  return lax.select(x < 0, lax.full_like(x, -np.inf), lax.neg(_xlogx(x)))


@jit
def rel_entr(p, q):
  """Relative entropy p log(p / q): 0 at p == 0 <= q, inf where undefined."""
  p, q = promote_args_inexact("rel_entr", p, q)
  reject_complex("rel_entr", p)
  both_positive = (p > 0) & (q > 0)
  zero_p = (p == 0) & (q >= 0)
  safe_p = jnp.where(both_positive, p, 1)
  safe_q = jnp.where(both_positive, q, 1)
  value = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
  return jnp.where(both_positive, value, jnp.where(zero_p, 0.0, np.inf)).astype(p.dtype)


@jit
def kl_div(p, q):
  """Kullback-Leibler divergence term p log(p / q) - p + q."""
  p, q = promote_args_inexact("kl_div", p, q)
  reject_complex("kl_div", p)
  return rel_entr(p, q) - p + q


@util.jit
def boxcox(x, lmbda):
  """Box-Cox transform (x^lmbda - 1) / lmbda, log x at lmbda == 0."""
  x, lmbda = promote_args_inexact("boxcox", x, lmbda)
  zero = lmbda == 0
  safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
  log_x = jnp.log(x)
  return jnp.where(zero, log_x, jnp.expm1(safe * log_x) / safe)


@util.jit
def boxcox1p(x, lmbda):
  """Box-Cox transform of 1 + x."""
  x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
  zero = lmbda == 0
  safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
  log1p_x = jnp.log1p(x)
  return jnp.where(zero, log1p_x, jnp.expm1(safe * log1p_x) / safe)


# ----------------------------------------------------------------- Bessel
def i0e(x):
  """Exponentially scaled modified Bessel function of order 0."""
  x, = promote_args_inexact("i0e", x)
  return lax.bessel_i0e(x)


@eager_program()
def i0(x):
  """Modified Bessel function of order 0."""
  x, = promote_args_inexact("i0", x)
  return lax.exp(lax.abs(x)) * lax.bessel_i0e(x)


def i1e(x):
  """Exponentially scaled modified Bessel function of order 1."""
  x, = promote_args_inexact("i1e", x)
  return lax.bessel_i1e(x)


@eager_program()
def i1(x):
  """Modified Bessel function of order 1."""
  x, = promote_args_inexact("i1", x)
  return lax.exp(lax.abs(x)) * lax.bessel_i1e(x)


# ---------------------------------------------------------------- softmax
def softmax(x, /, *, axis=None):
  """``jax.nn.softmax`` (default: over all axes, as SciPy)."""
  return _nn_softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
  """``jax.nn.log_softmax`` (default: over all axes, as SciPy)."""
  return _nn_log_softmax(x, axis=axis)
