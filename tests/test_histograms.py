"""jnp.histogramdd and jnp.histogram2d against NumPy."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp

rng = np.random.default_rng(0)
X = rng.standard_normal(200).astype(np.float32)
Y = (rng.standard_normal(200) * 2 + 1).astype(np.float32)
W = rng.random(200).astype(np.float32)


def _close(got, want):
  np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("kw", [
    dict(), dict(bins=5), dict(bins=(4, 7)), dict(bins=[np.array([-3., 0, 3]), 6]),
    dict(range=[(-1, 1), (0, 2)]), dict(weights=W), dict(density=True),
    dict(bins=3, weights=W, density=True),
])
def test_histogram2d_matches_numpy(kw):
  got = jnp.histogram2d(X, Y, **kw)
  want = np.histogram2d(X, Y, **kw)
  for g, w in zip(got, want):
    _close(g, w)


def test_histogramdd_matches_numpy_in_three_dims():
  sample = np.stack([X, Y, X * Y], axis=1)
  for kw in (dict(bins=4), dict(bins=(2, 3, 4), density=True), dict(weights=W, bins=3)):
    hist, edges = jnp.histogramdd(sample, **kw)
    hist_np, edges_np = np.histogramdd(sample, **kw)
    _close(hist, hist_np)
    for e, e_np in zip(edges, edges_np):
      _close(e, e_np)


def test_histogram2d_under_jit_with_static_bins():
  f = jax.jit(lambda x, y: jnp.histogram2d(x, y, bins=5, range=[(-3, 3), (-5, 7)])[0])
  _close(f(X, Y), np.histogram2d(X, Y, bins=5, range=[(-3, 3), (-5, 7)])[0])


def test_histogramdd_errors():
  with pytest.raises(ValueError, match="one weight for each sample"):
    jnp.histogramdd(np.stack([X, Y], 1), weights=W[:10])
  with pytest.raises(ValueError, match="a bin for each dimension"):
    jnp.histogramdd(np.stack([X, Y], 1), bins=(2, 3, 4))
