"""Op-table rows for ``jax.scipy.stats``: every function of every
distribution module on float32 samples inside (and, for the densities, a
little outside) the support, against ``scipy.stats`` in float64; the
multivariate distributions and ``mode``/``rankdata``/``sem``.

Gradient rows differentiate the float arguments (x and the parameters) in
float64; tests/test_scipy_stats.py checks float64 values, edge cases and
``gaussian_kde``.
"""
import pathlib

import numpy as np
from scipy import stats

import openjax.scipy.stats as jst
from tests.ops.harness import OpRow

F32 = np.dtype(np.float32)
SHAPE = (3, 4)
NAMES = pathlib.Path(__file__).parent.parent / "data" / "jax_names"


def _f64(ref):
  def wrapped(*args):
    dt = next((a.dtype for a in args if isinstance(a, np.ndarray) and a.dtype.kind == "f"), F32)
    up = [a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
          for a in args]
    out = ref(*up)
    if isinstance(out, tuple):
      return tuple(np.asarray(o).astype(dt) for o in out)
    return np.asarray(out).astype(dt)
  return wrapped


def _uniform(*ranges, shape=SHAPE):
  return lambda rng: tuple(rng.uniform(lo, hi, shape).astype(F32) for lo, hi in ranges)


_QUANTILE_FNS = ("ppf", "isf")


def _names(dist: str) -> list[str]:
  """The functions of ``jax.scipy.stats.<dist>`` in JAX 0.10.2 (stored list)."""
  return (NAMES / f"jax.scipy.stats.{dist}.txt").read_text().split()


# (distribution, sample range of x, ranges of the shape parameters, use loc/scale, grad,
#  rtol): loc in (-1, 1) and scale in (0.5, 2) where the distribution takes them.
_CONTINUOUS = [
    ("norm", (-4, 4), [], True, True, 1e-5),
    ("t", (-4, 4), [(0.5, 8)], True, True, 1e-5),
    ("expon", (-0.5, 6), [], True, True, 1e-5),
    ("laplace", (-4, 4), [], True, False, 1e-5),
    ("logistic", (-6, 6), [], True, True, 1e-5),
    ("cauchy", (-6, 6), [], True, True, 1e-5),
    ("pareto", (1.5, 8), [(0.5, 4)], True, True, 1e-5),
    ("uniform", (-1.5, 3), [], True, False, 1e-5),
    ("gumbel_l", (-4, 3), [], True, True, 1e-5),
    ("gumbel_r", (-3, 4), [], True, True, 1e-5),
    # x > loc everywhere: below the support the density's log(x - loc) branch
    # is NaN, and its gradient leaks through the where (in JAX too).
    ("chi2", (1.2, 8), [(1, 6)], True, True, 1e-4),
    ("gamma", (1.2, 8), [(0.5, 5)], True, True, 1e-4),
    ("beta", (0.05, 0.95), [(0.5, 4), (0.5, 4)], False, True, 1e-4),
    ("gennorm", (-3, 3), [(0.5, 3)], False, True, 1e-4),
    ("vonmises", (-3, 3), [(0.2, 5)], False, True, 1e-5),
    ("wrapcauchy", (0.1, 6), [(0.05, 0.95)], False, True, 1e-5),
    ("truncnorm", (-1.5, 2), [(-2, -0.5), (0.5, 3)], True, False, 1e-4),
]

# Functions whose derivative is not smooth enough for second-order finite
# differences over the whole sample (kinks at the support's ends) are value-only.
_NO_GRAD = {"expon.cdf", "expon.logcdf", "expon.sf", "expon.logsf", "expon.logpdf",
            "expon.pdf", "pareto.cdf", "pareto.logcdf", "pareto.sf", "pareto.logsf",
            "pareto.logpdf", "pareto.pdf", "uniform.logpdf", "uniform.pdf", "uniform.cdf",
            "gennorm.logpdf", "gennorm.pdf", "gennorm.cdf", "wrapcauchy.logpdf",
            "wrapcauchy.pdf", "chi2.cdf", "chi2.logcdf", "chi2.sf", "chi2.logsf", "gamma.cdf",
            "gamma.logcdf", "gamma.sf", "gamma.logsf", "beta.cdf", "beta.logcdf", "beta.sf",
            "beta.logsf"}


def _continuous_rows():
  rows = []
  for dist, x_range, shapes, loc_scale, grad, rtol in _CONTINUOUS:
    for fn in _names(dist):
      # Quantiles inside (0.15, 0.85): their derivatives blow up at 0 and 1,
      # and ndtri switches rational approximations at exp(-2) (kinks in the
      # approximation's second derivative).
      first = (0.15, 0.85) if fn in _QUANTILE_FNS else x_range
      ranges = [first, *shapes] + ([(-1, 1), (0.5, 2)] if loc_scale else [])
      if dist == "truncnorm":   # x inside [loc + a scale, loc + b scale] is not needed
        ranges = [first, *shapes, (-0.5, 0.5), (0.5, 2)]
      name = f"{dist}.{fn}"
      rows.append(OpRow(f"scipy.stats.{name}", getattr(getattr(jst, dist), fn),
                        _uniform(*ranges), _f64(getattr(getattr(stats, dist), fn)),
                        rtol=rtol, atol=1e-6, grad=grad and name not in _NO_GRAD))
  return rows


def _counts(high):
  return lambda rng: rng.integers(0, high, SHAPE).astype(F32)


def _discrete_rows():
  specs = [
      ("bernoulli", lambda rng: (rng.integers(-1, 3, SHAPE).astype(F32),
                                 rng.uniform(0.05, 0.95, SHAPE).astype(F32))),
      ("binom", lambda rng: (_counts(12)(rng), np.full(SHAPE, 10, F32),
                             rng.uniform(0.05, 0.95, SHAPE).astype(F32))),
      ("betabinom", lambda rng: (_counts(12)(rng), np.full(SHAPE, 10, F32),
                                 rng.uniform(0.5, 4, SHAPE).astype(F32),
                                 rng.uniform(0.5, 4, SHAPE).astype(F32))),
      ("nbinom", lambda rng: (_counts(12)(rng), rng.uniform(0.5, 6, SHAPE).astype(F32),
                              rng.uniform(0.1, 0.9, SHAPE).astype(F32))),
      ("geom", lambda rng: (_counts(8)(rng), rng.uniform(0.1, 0.9, SHAPE).astype(F32))),
      ("poisson", lambda rng: (_counts(12)(rng), rng.uniform(0.5, 8, SHAPE).astype(F32))),
  ]
  rows = []
  for dist, make in specs:
    for fn in _names(dist):
      if fn == "entropy":
        continue
      args = make
      if fn == "ppf":      # bernoulli.ppf(q, p)
        args = _uniform((0, 1), (0.05, 0.95))
      if fn == "cdf" and dist == "bernoulli":
        args = lambda rng: (rng.uniform(-1, 2, SHAPE).astype(F32),  # noqa: E731
                            rng.uniform(0.05, 0.95, SHAPE).astype(F32))
      rows.append(OpRow(f"scipy.stats.{dist}.{fn}", getattr(getattr(jst, dist), fn), args,
                        _f64(getattr(getattr(stats, dist), fn)), rtol=1e-4, atol=1e-6))
  rows.append(OpRow("scipy.stats.poisson.entropy", jst.poisson.entropy,
                    lambda rng: (np.array([0.5, 3.0, 9.5, 20.0, 99.0, 150.0], F32),),
                    _f64(stats.poisson.entropy), rtol=1e-5, jit=True, vmap=False))
  return rows


def _mvn_args(rng):
  a = rng.standard_normal((3, 3))
  cov = (a @ a.T + 3 * np.eye(3)).astype(F32)
  return (rng.standard_normal((4, 3)).astype(F32), rng.uniform(-1, 1, 3).astype(F32), cov)


def _dirichlet_args(rng):
  alpha = rng.uniform(0.8, 3, 3).astype(F32)
  x = rng.dirichlet(alpha, 4).T
  return (x[:2].astype(F32), alpha)   # the last component is 1 - sum


def _dirichlet_ref(fn):
  def ref(x, alpha):
    full = np.concatenate([x, 1 - x.sum(0, keepdims=True)]).astype(np.float64)
    return getattr(stats.dirichlet, fn)(full / full.sum(0), alpha)
  return ref


def _multinomial_args(rng):
  # One observation: JAX checks sum(x) == n over the whole array, so batched
  # observations never match n (JAX 0.10.2 behaves the same).
  p = rng.dirichlet(np.ones(4)).astype(F32)
  return (rng.multinomial(10, p).astype(np.int32), p)


def _multinomial_ref(fn):
  return lambda x, p: getattr(stats.multinomial, fn)(x, 10, p / p.sum())


ROWS = [
    *_continuous_rows(),
    *_discrete_rows(),
    OpRow("scipy.stats.multivariate_normal.logpdf", jst.multivariate_normal.logpdf, _mvn_args,
          _f64(stats.multivariate_normal.logpdf), rtol=1e-5, atol=1e-5, grad=True, vmap=False),
    OpRow("scipy.stats.multivariate_normal.pdf", jst.multivariate_normal.pdf, _mvn_args,
          _f64(stats.multivariate_normal.pdf), rtol=1e-5, atol=1e-7, vmap=False),
    OpRow("scipy.stats.multivariate_normal.logpdf_iso",
          lambda x, mean: jst.multivariate_normal.logpdf(x, mean, 2.0),
          lambda rng: _mvn_args(rng)[:2],
          _f64(lambda x, mean: stats.multivariate_normal.logpdf(x, mean, 2.0)), rtol=1e-5,
          grad=True),
    OpRow("scipy.stats.dirichlet.logpdf", jst.dirichlet.logpdf, _dirichlet_args,
          _f64(_dirichlet_ref("logpdf")), rtol=1e-4, atol=1e-5, vmap=False),
    OpRow("scipy.stats.dirichlet.pdf", jst.dirichlet.pdf, _dirichlet_args,
          _f64(_dirichlet_ref("pdf")), rtol=1e-4, atol=1e-5, vmap=False),
    OpRow("scipy.stats.multinomial.logpmf", lambda x, p: jst.multinomial.logpmf(x, 10, p),
          _multinomial_args, _f64(_multinomial_ref("logpmf")), rtol=1e-5,
          vmap=False),
    OpRow("scipy.stats.multinomial.pmf", lambda x, p: jst.multinomial.pmf(x, 10, p),
          _multinomial_args, _f64(_multinomial_ref("pmf")), rtol=1e-5,
          vmap=False),
    OpRow("scipy.stats.mode", lambda a: tuple(jst.mode(a, axis=1)),
          lambda rng: (rng.integers(0, 4, (5, 7)).astype(F32),),
          lambda a: tuple(stats.mode(a, axis=1)), check_dtype=False),
    OpRow("scipy.stats.rankdata", jst.rankdata,
          lambda rng: (rng.integers(0, 5, (4, 6)).astype(F32),), stats.rankdata),
    OpRow("scipy.stats.rankdata_min_axis", lambda a: jst.rankdata(a, "min", axis=1),
          lambda rng: (rng.integers(0, 5, (4, 6)).astype(F32),),
          lambda a: stats.rankdata(a, "min", axis=1).astype(F32)),
    OpRow("scipy.stats.sem", jst.sem, _uniform((-3, 3), shape=(6, 4)), _f64(stats.sem),
          rtol=1e-5, grad=True),
]
