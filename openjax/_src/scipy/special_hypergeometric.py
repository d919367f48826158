"""jax.scipy.special, part three: the confluent (1F1) and Gauss (2F1)
hypergeometric functions, with JAX's algorithms: power series, the asymptotic
series of 1F1 for |x| >= 100, and for 2F1 Euler's transformation, the
terminating polynomial and the digamma series near x = 1 (Cephes' hyp2f1).

Every loop runs on whole arrays, each element stopping at its own
convergence test (``_elementwise_while``), rather than a ``vmap`` of scalar
loops: the same iterations, and a program IREE compiles (a vectorised
``select_n`` over batched while loops trips its stream partitioner).
"""
from __future__ import annotations

import functools

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src import tree_util
from openjax._src.api.custom_derivatives import custom_jvp
from openjax._src.api.jit import jit
from openjax._src.numpy.util import promote_args_inexact
from openjax._src.scipy import jnp
from openjax._src.scipy.special import digamma, gamma, reject_complex

__all__ = ["hyp1f1", "hyp2f1"]

_MAX_TERMS = 250
# Steps of the series a loop trip makes: a compiled trip costs ~10 us over
# 1e3 elements whatever its body does, and a stopped element keeps its state,
# so more steps a trip give the same values in fewer trips.
_STEPS_PER_TRIP = 4


def _elementwise_while(cond, body, init):
  """``lax.while_loop`` over arrays of independent elements: ``cond`` and
  ``body`` act elementwise; an element keeps its state once its ``cond`` is
  false, and the loop ends when every element has stopped."""
  def step(state):
    values, running = state
    new = body(values)
    new = tree_util.tree_map(lambda n, o: jnp.where(running, n, o), new, values)
    return new, running & cond(new)

  def trip(state):
    for _ in range(_STEPS_PER_TRIP):
      state = step(state)
    return state

  values, _ = lax.while_loop(lambda s: jnp.any(s[1]), trip, (init, cond(init)))
  return values


def _flat(fun):
  """``fun`` of broadcast arrays computed on 1-d views: a compiled while loop
  whose condition reduces an array of two or more dimensions costs ~7 us a
  trip in IREE, of one dimension nothing (hyp1f1 of f32[3,4]: 176 -> 20 us).
  0-d and 1-d operands are left as they are."""
  @functools.wraps(fun)
  def flat(*args):
    args = jnp.broadcast_arrays(*args)
    shape = args[0].shape
    if len(shape) < 2:
      return fun(*args)
    return fun(*(a.reshape(-1) for a in args)).reshape(shape)
  return flat


def _converging(eps):
  """Continue while fewer than 250 terms were summed and the last term is
  above ``eps`` relative to the sum."""
  def cond(state):
    total, k, term = state
    return (k < _MAX_TERMS) & (lax.abs(term) > eps * lax.abs(total))
  return cond


def _series(ratio, first_term, x, weight=None):
  """sum_{k>=1} t_k (times ``weight(k)``) with t_1 = ``first_term`` and
  t_{k+1} = t_k ratio(k); without a weight the sum starts at 1 (the k = 0
  term of a hypergeometric series)."""
  one = jnp.ones_like(x)
  start = jnp.zeros_like(x) if weight is not None else one
  weight = weight or (lambda k: 1.0)

  def body(state):
    total, k, term = state
    return total + term * weight(k), k + 1, term * ratio(k)

  return _elementwise_while(_converging(dtypes.finfo(x.dtype).eps), body,
                            (start, one, first_term))[0]


# ---------------------------------------------------------------- hyp1f1
def _hyp1f1_ratio(a, b, x):
  return lambda k: (a + k) / (b + k) * x / (k + 1)


def _hyp1f1_asymptotic(a, b, x):
  """1F1 ~ Gamma(b)/Gamma(a) e^x x^(a-b) sum_k (b-a)_k (1-a)_k / (k! x^k)."""
  ratio = lambda k: (b - a + k) * (1 - a + k) / (k + 1) / x  # noqa: E731
  total = _series(ratio, (b - a) * (1 - a) / x, x)
  return gamma(b) / gamma(a) * lax.exp(x) * x ** (a - b) * total


@custom_jvp
@jit
def hyp1f1(a, b, x):
  """Confluent hypergeometric function 1F1(a; b; x) (real arguments): the
  power series for |x| < 100, the asymptotic series beyond."""
  a, b, x = promote_args_inexact("hyp1f1", a, b, x)
  reject_complex("hyp1f1", x)
  return _flat(_hyp1f1_values)(a, b, x)


def _hyp1f1_values(a, b, x):
  near = lax.abs(x) < 100
  x_near = jnp.where(near, x, 0.0)
  x_far = jnp.where(near, 100.0, x)
  series = _series(_hyp1f1_ratio(a, b, x_near), a / b * x_near, x_near)
  out = jnp.where(near, series, _hyp1f1_asymptotic(a, b, x_far))
  case = ((a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3).astype(np.int32)
  return lax.select_n(case, out, jnp.ones_like(x), jnp.exp(x), jnp.full_like(x, np.inf))


@jit
@_flat
def _hyp1f1_da(a, b, x):
  return _series(_hyp1f1_ratio(a, b, x), a / b * x, x,
                 weight=lambda k: digamma(a + k) - digamma(a))


@jit
@_flat
def _hyp1f1_db(a, b, x):
  return _series(_hyp1f1_ratio(a, b, x), a / b * x, x,
                 weight=lambda k: digamma(b) - digamma(b + k))


hyp1f1.defjvps(
    lambda a_dot, out, a, b, x: _hyp1f1_da(a, b, x) * a_dot,
    lambda b_dot, out, a, b, x: _hyp1f1_db(a, b, x) * b_dot,
    lambda x_dot, out, a, b, x: a / b * hyp1f1(a + 1, b + 1, x) * x_dot)


# ---------------------------------------------------------------- hyp2f1
def _hyp2f1_terminating(a, b, c, x):
  """The polynomial 2F1 when a (or b) is a non-positive integer."""
  eps = dtypes.finfo(x.dtype).eps * 50
  swap = (b < a) & (jnp.abs(b - jnp.round(b)) < eps) & ~((c % 1 == 0) & (c <= 0) & (c > b))
  a, b = jnp.where(swap, b, a), jnp.where(swap, a, b)
  a = jnp.abs(a)

  def body(state):
    i, total, term = state
    term = term * -(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x
    return i + 1, total + term, term

  one = jnp.ones_like(x)
  return _elementwise_while(lambda s: s[0] < a + 1, body, (one, one, one))[1]


def _hyp2f1_series(a, b, c, x):
  """2F1 by its power series (|x| < 1)."""
  def body(state):
    total, k, term = state
    return total + term, k + 1, term * (a + k - 1) * (b + k - 1) / (c + k - 1) / k * x

  init = (jnp.zeros_like(x), jnp.ones_like(x), jnp.ones_like(x))
  return _elementwise_while(_converging(dtypes.finfo(x.dtype).eps), body, init)[0]


def _hyp2f1_near_one(a, b, c, x):
  """2F1 for x near 1 with c - a - b close to an integer: the digamma series of
  Abramowitz & Stegun 15.3.10-12 in s = 1 - x (Cephes' hys2f1 / hyt2f1)."""
  eps = dtypes.finfo(x.dtype).eps
  d = c - a - b
  s = 1 - x
  rd = jnp.round(d)
  e = jnp.where(rd >= 0, d, -d)
  d1 = jnp.where(rd >= 0, d, 0.0)
  d2 = jnp.where(rd >= 0, 0.0, d)
  ard = jnp.where(rd >= 0, rd, -rd)
  log_s = jnp.log(s)
  y = (digamma(1.0) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1) - log_s) / gamma(
      e + 1.0)
  p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

  def cond(state):
    p, q, t, y = state
    return (t < _MAX_TERMS) & (jnp.abs(q) >= eps * jnp.abs(y))

  def body(state):
    p, q, t, y = state
    r = digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1) - digamma(b + t + d1) - log_s
    q = p * r
    p = p * s * (a + t + d1) / (t + 1.0) * (b + t + d1) / (t + 1.0 + e)
    return p, q, t + 1.0, y + q

  one = jnp.ones_like(x)
  y = _elementwise_while(cond, body, (p, y, one, y))[3]

  def finite_term(state):
    i, p, t, y1 = state
    p = p * s * (a + t + d2) * (b + t + d2) / (1.0 - e + t)
    t = t + 1.0
    p = p / t
    return i + 1, p, t, y1 + p

  # The ard - 1 terms of the finite sum (i = 1 .. ard - 1).
  y1 = _elementwise_while(lambda st: st[0] < ard, finite_term,
                          (one, one, jnp.zeros_like(x), one))[3]
  gc = gamma(c)
  y1 = y1 * gamma(e) * gc / (gamma(a + d1) * gamma(b + d1))
  y_scaled = y * gc / (gamma(a + d2) * gamma(b + d2))
  y_scaled = jnp.where(ard.astype(np.int32) & 1 != 0, -y_scaled, y_scaled)
  q = s ** rd
  general = jnp.where(rd > 0, y_scaled * q + y1, y_scaled + y1 * q)
  return jnp.where(rd == 0, y * gc / (gamma(a) * gamma(b)), general)


def _hyp2f1_dispatch(a, b, c, x):
  """The series, the near-one transformation or the polynomial, by case."""
  eps = dtypes.finfo(x.dtype).eps * 50
  d = c - a - b
  terminating = (((a <= 0) & (jnp.abs(a - jnp.round(a)) < eps))
                 | ((b <= 0) & (jnp.abs(b - jnp.round(b)) < eps)))
  case = jnp.where((x > 0.9) & ~terminating,
                   jnp.where(jnp.abs(d - jnp.round(d)) >= eps, 0, 1),
                   jnp.where(terminating, 2, 0)).astype(np.int32)
  # Each loop runs until its slowest element stops, and every branch sees every
  # element: an element another branch takes gets an argument on which this
  # branch stops at once (x = 0 for the series, s = 1 - x small for the
  # near-one series, degree 0 for the polynomial). Without it the near-one
  # loop ran all 250 trips of digammas for x far from 1. Its selected
  # elements keep their values.
  series_x = jnp.where(case == 0, x, 0.0)
  near_x = jnp.where(case == 1, x, 0.95)
  degree = jnp.where(case == 2, a, 0.0)
  # The rarer branches run only when some element takes them (eagerly a cond
  # runs one branch; under vmap both, as the select would).
  zeros = lambda a, b, c, x: jnp.zeros_like(x)  # noqa: E731
  near = lax.cond(jnp.any(case == 1), _hyp2f1_near_one, zeros, a, b, c, near_x)
  polynomial = lax.cond(jnp.any(case == 2), _hyp2f1_terminating, zeros, degree, b, c, x)
  return lax.select_n(case, _hyp2f1_series(a, b, c, series_x), near, polynomial)


def _hyp2f1_euler(ca, cb, c, d, s, x):
  return s ** d * _hyp2f1_dispatch(ca, cb, c, x)


@custom_jvp
@jit
def hyp2f1(a, b, c, x):
  """Gauss' hypergeometric function 2F1(a, b; c; x) for real x < 1 (and the
  closed forms at x = 1), as JAX computes it."""
  a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
  a, b, c, x = jnp.broadcast_arrays(a, b, c, x)
  shape = x.shape
  # Computed on a 1-d view: on 0-d operands IREE fuses the loops' scalar
  # updates into a dispatch with more bindings (38) than a command buffer
  # takes (32), and the compiled call fails at run time.
  a, b, c, x = (v.reshape(-1) for v in (a, b, c, x))
  eps = dtypes.finfo(x.dtype).eps * 50
  d = c - a - b
  s = 1 - x
  ca, cb = c - a, c - b
  pole_c = (c == 0) | ((c < 0) & (c % 1 == 0))
  case = jnp.select(
      [(x == 0) | (((a == 0) | (b == 0)) & (c != 0)), pole_c,
       (d <= -1) & ~((jnp.abs(d - jnp.round(d)) >= eps) & (s < 0)), (d <= 0) & (x == 1),
       (x < 1) & (b == c), (x < 1) & (a == c), x > 1, x == 1],
      [0, 1, 2, 1, 3, 4, 1, 5], 6).astype(np.int32)
  # The loops of a dispatch run until their slowest element stops: the
  # elements the other cases take are given x = 0, where they stop at once.
  out = lax.select_n(
      case, jnp.ones_like(x), jnp.full_like(x, np.inf),
      # Euler's transformation
      lax.cond(jnp.any(case == 2), _hyp2f1_euler, lambda ca, cb, c, d, s, x: jnp.zeros_like(x),
               ca, cb, c, d, s, jnp.where(case == 2, x, 0.0)),
      s ** (-a), s ** (-b),
      gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)),  # Gauss' theorem at x = 1
      _hyp2f1_dispatch(a, b, c, jnp.where(case == 6, x, 0.0)))
  return out.reshape(shape)


def _hyp2f1_parameter_derivative(weight):
  @jit
  def derivative(a, b, c, x):
    a, b, c, x = jnp.broadcast_arrays(a, b, c, x)
    ratio = lambda k: (a + k) * (b + k) / (c + k) / (k + 1) * x  # noqa: E731
    return _series(ratio, a * b / c * x, x, weight=weight(a, b, c))
  return derivative


_hyp2f1_da = _hyp2f1_parameter_derivative(lambda a, b, c: lambda k: digamma(a + k) - digamma(a))
_hyp2f1_db = _hyp2f1_parameter_derivative(lambda a, b, c: lambda k: digamma(b + k) - digamma(b))
_hyp2f1_dc = _hyp2f1_parameter_derivative(lambda a, b, c: lambda k: digamma(c) - digamma(c + k))


hyp2f1.defjvps(
    lambda a_dot, out, a, b, c, x: _hyp2f1_da(a, b, c, x) * a_dot,
    lambda b_dot, out, a, b, c, x: _hyp2f1_db(a, b, c, x) * b_dot,
    lambda c_dot, out, a, b, c, x: _hyp2f1_dc(a, b, c, x) * c_dot,
    lambda x_dot, out, a, b, c, x: a * b / c * hyp2f1(a + 1, b + 1, c + 1, x) * x_dot)
