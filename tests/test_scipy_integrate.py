"""``jax.scipy.integrate.trapezoid`` and ``jax.scipy.cluster.vq.vq``
against SciPy, with jit, vmap, gradients and the errors."""
import numpy as np
import pytest
import scipy.cluster.vq
import scipy.integrate

import openjax as jax
from openjax.scipy import cluster, integrate


def test_trapezoid():
  rng = np.random.default_rng(0)
  y = rng.standard_normal((3, 7))
  x = np.sort(rng.uniform(0, 3, 7))
  with jax.enable_x64():
    for kw in ({}, {"dx": 0.25}, {"axis": 0}, {"x": x}, {"x": x[:3], "axis": 0}):
      np.testing.assert_allclose(np.asarray(integrate.trapezoid(y, **kw)),
                                 scipy.integrate.trapezoid(y, **kw), atol=1e-12)
    jax.test_util.check_grads(lambda a, b: integrate.trapezoid(a, b), (y, x), order=2)
  f = jax.jit(lambda a: integrate.trapezoid(a, dx=0.5))
  np.testing.assert_allclose(np.asarray(f(y.astype(np.float32))),
                             scipy.integrate.trapezoid(y, dx=0.5), atol=1e-5)


@pytest.mark.parametrize("dims", [1, 2])
def test_vq(dims):
  rng = np.random.default_rng(1)
  obs = rng.standard_normal((9, 3)[:dims])
  book = rng.standard_normal((4, 3)[:dims])
  with jax.enable_x64():
    code, dist = cluster.vq.vq(obs, book)
    code_ref, dist_ref = scipy.cluster.vq.vq(obs, book)
    np.testing.assert_array_equal(np.asarray(code), code_ref)
    np.testing.assert_allclose(np.asarray(dist), dist_ref, atol=1e-12)
  code32, _ = jax.jit(cluster.vq.vq)(obs.astype(np.float32), book.astype(np.float32))
  assert code32.dtype == np.int32
  np.testing.assert_array_equal(np.asarray(code32), code_ref)
  batched = jax.vmap(cluster.vq.vq, in_axes=(0, None))(np.stack([obs, obs]), book)
  np.testing.assert_array_equal(np.asarray(batched[0][1]), code_ref)


def test_vq_errors():
  with pytest.raises(ValueError, match="same rank"):
    cluster.vq.vq(np.ones((3, 2)), np.ones(2))
  with pytest.raises(ValueError, match="ndim different than 1 or 2"):
    cluster.vq.vq(np.ones((3, 2, 2)), np.ones((3, 2, 2)))
