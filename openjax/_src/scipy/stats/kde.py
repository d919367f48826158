"""``gaussian_kde``: SciPy's Gaussian kernel density estimator as a pytree
(its arrays are the leaves), so it can cross ``jit``/``vmap`` boundaries."""
from __future__ import annotations

from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.jit import jit
from openjax._src.api.vmap import vmap
from openjax._src.numpy.util import check_arraylike, promote_dtypes_inexact
from openjax._src.random.keys import split
from openjax._src.random.samplers import choice
from openjax._src.random.samplers_continuous import multivariate_normal
from openjax._src.scipy import jnp
from openjax._src.scipy.special import logsumexp
from openjax._src.scipy.special_error import ndtr
from openjax._src.tree_util import register_pytree_node_class

__all__ = ["gaussian_kde"]


def _cho_solve(chol, b):
  """Solve (L L^T) x = b for lower-triangular L (b: n or n x k)."""
  y = lax.linalg.triangular_solve(chol, b, left_side=True, lower=True)
  return lax.linalg.triangular_solve(chol, y, left_side=True, lower=True, transpose_a=True)


@register_pytree_node_class
class gaussian_kde:  # noqa: N801 - SciPy's name
  """Gaussian kernel density estimator (``scipy.stats.gaussian_kde``).

  Args:
    dataset: the data, shape (n,) or (d, n).
    bw_method: 'scott' (default), 'silverman', a scalar factor, or a callable
      taking the estimator and returning the factor.
    weights: optional weights of the n points (normalised to sum to one).
  """
  __slots__ = ("neff", "dataset", "weights", "covariance", "inv_cov")

  def __init__(self, dataset, bw_method=None, weights=None):
    check_arraylike("gaussian_kde", dataset)
    dataset = jnp.atleast_2d(dataset)
    if dtypes.issubdtype(dataset.dtype, np.complexfloating):
      raise NotImplementedError("gaussian_kde does not support complex data")
    if not dataset.size > 1:
      raise ValueError("`dataset` input should have multiple elements.")
    d, n = dataset.shape
    if weights is not None:
      check_arraylike("gaussian_kde", weights)
      dataset, weights = promote_dtypes_inexact(dataset, weights)
      weights = jnp.atleast_1d(weights)
      weights = weights / jnp.sum(weights)
      if weights.ndim != 1:
        raise ValueError("`weights` input should be one-dimensional.")
      if len(weights) != n:
        raise ValueError("`weights` input should be of length n")
    else:
      dataset, = promote_dtypes_inexact(dataset)
      weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
    self._set("dataset", dataset)
    self._set("weights", weights)
    neff = self._set("neff", 1 / jnp.sum(weights ** 2))
    bw_method = "scott" if bw_method is None else bw_method
    if isinstance(bw_method, str) and bw_method == "scott":
      factor = jnp.power(neff, -1.0 / (d + 4))
    elif isinstance(bw_method, str) and bw_method == "silverman":
      factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
    elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
      factor = bw_method
    elif callable(bw_method):
      factor = bw_method(self)
    else:
      raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
    data_covariance = jnp.atleast_2d(jnp.cov(dataset, rowvar=1, bias=False, aweights=weights))
    data_inv_cov = jnp.linalg.inv(data_covariance)
    self._set("covariance", data_covariance * factor ** 2)
    self._set("inv_cov", data_inv_cov / factor ** 2)

  def _set(self, name, value):
    object.__setattr__(self, name, value)
    return value

  def tree_flatten(self):
    return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

  @classmethod
  def tree_unflatten(cls, aux_data, children):
    del aux_data
    kde = cls.__new__(cls)
    for name, value in zip(cls.__slots__, children):
      kde._set(name, value)
    return kde

  @property
  def d(self):
    return self.dataset.shape[0]

  @property
  def n(self):
    return self.dataset.shape[1]

  def evaluate(self, points):
    """The estimated density at ``points`` (shape (d, m) or (m,) for d = 1)."""
    check_arraylike("evaluate", points)
    points = self._reshape_points(points)
    return _kernel_sum(False, self.dataset.T, self.weights[:, None], points.T, self.inv_cov)[:, 0]

  def __call__(self, points):
    return self.evaluate(points)

  def pdf(self, x):
    return self.evaluate(x)

  def logpdf(self, x):
    """The log of the estimated density, summed in log space."""
    check_arraylike("logpdf", x)
    x = self._reshape_points(x)
    return _kernel_sum(True, self.dataset.T, self.weights[:, None], x.T, self.inv_cov)[:, 0]

  def integrate_gaussian(self, mean, cov):
    """The integral of the density times the Gaussian N(mean, cov)."""
    mean = jnp.atleast_1d(jnp.squeeze(mean))
    cov = jnp.atleast_2d(cov)
    if mean.shape != (self.d,):
      raise ValueError(f"mean does not have dimension {self.d}")
    if cov.shape != (self.d, self.d):
      raise ValueError(f"covariance does not have dimension {self.d}")
    chol = lax.linalg.cholesky(self.covariance + cov)
    norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol)))
    return _gaussian_convolve(chol, norm, self.dataset, self.weights, mean)

  @jit
  def integrate_box_1d(self, low, high):
    """The integral of a 1-d density over [low, high]."""
    if self.d != 1:
      raise ValueError("integrate_box_1d() only handles 1D pdfs")
    if np.ndim(low) != 0 or np.ndim(high) != 0:
      raise ValueError("the limits of integration in integrate_box_1d must be scalars")
    sigma = jnp.squeeze(jnp.sqrt(self.covariance))
    low = jnp.squeeze((low - self.dataset) / sigma)
    high = jnp.squeeze((high - self.dataset) / sigma)
    return jnp.sum(self.weights * (ndtr(high) - ndtr(low)))

  def integrate_kde(self, other):
    """The integral of the product of two estimated densities."""
    if other.d != self.d:
      raise ValueError("KDEs are not the same dimensionality")
    chol = lax.linalg.cholesky(self.covariance + other.covariance)
    norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol)))
    small, large = (self, other) if self.n < other.n else (other, self)
    values = vmap(partial(_gaussian_convolve, chol, norm, large.dataset, large.weights),
                  in_axes=1)(small.dataset)
    return jnp.sum(values * small.weights)

  @partial(jit, static_argnames=("shape",))
  def resample(self, key, shape=()):
    """Draw points from the estimated density: a data point chosen by weight
    plus Gaussian noise with the kernel covariance. Shape (d,) + shape."""
    index_key, noise_key = split(key)
    index = choice(index_key, self.n, shape=shape, p=self.weights)
    noise = multivariate_normal(noise_key, jnp.zeros(self.d, self.covariance.dtype),
                                self.covariance, shape=shape, dtype=self.dataset.dtype).T
    return self.dataset[:, index] + noise

  def integrate_box(self, low_bounds, high_bounds, maxpts=None):
    del low_bounds, high_bounds, maxpts
    raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

  def set_bandwidth(self, bw_method=None):
    del bw_method
    raise NotImplementedError("dynamically changing the bandwidth method is not supported")

  def _reshape_points(self, points):
    if dtypes.issubdtype(jnp.asarray(points).dtype, np.complexfloating):
      raise NotImplementedError("gaussian_kde does not support complex coordinates")
    points = jnp.atleast_2d(points)
    d, m = points.shape
    if d != self.d:
      if d == 1 and m == self.d:
        points = jnp.reshape(points, (self.d, 1))
      else:
        raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
    return points


def _gaussian_convolve(chol, norm, target, weights, mean):
  diff = target - mean[:, None]
  alpha = _cho_solve(chol, diff)
  return norm * jnp.sum(jnp.exp(-0.5 * jnp.sum(diff * alpha, axis=0)) * weights)


@partial(jit, static_argnums=0)
def _kernel_sum(in_log: bool, points, values, xi, precision):
  """sum_j values_j N(xi_i; points_j, precision^-1) for every i (in log space
  with ``in_log``), in the coordinates whitened by precision's Cholesky factor."""
  points, values, xi, precision = promote_dtypes_inexact(points, values, xi, precision)
  d = points.shape[1]
  if xi.shape[1] != d:
    raise ValueError("points and xi must have same trailing dim")
  if precision.shape != (d, d):
    raise ValueError("precision matrix must match data dims")
  whitening = lax.linalg.cholesky(precision)
  points = jnp.dot(points, whitening)
  xi = jnp.dot(xi, whitening)
  log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * np.log(2 * np.pi)

  def kernel(x_test, x_train, y_train):
    arg = log_norm - 0.5 * jnp.sum(jnp.square(x_train - x_test))
    return jnp.log(y_train) + arg if in_log else y_train * jnp.exp(arg)

  reduce = logsumexp if in_log else jnp.sum
  per_point = lambda x: reduce(vmap(kernel, in_axes=(None, 0, 0))(x, points, values), axis=0)  # noqa: E731
  return vmap(per_point)(xi)
