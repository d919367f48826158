"""``jax.scipy.cluster.vq.vq`` against SciPy: 1-d and 2-d observations,
float64, jit, vmap and the errors."""
import numpy as np
import pytest
import scipy.cluster.vq

import openjax as jax
from openjax.scipy import cluster


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
