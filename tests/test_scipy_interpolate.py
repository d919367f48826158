"""``jax.scipy.interpolate.RegularGridInterpolator`` against SciPy's:
linear and nearest, 1-3 dimensions, trailing value dimensions, fill values
(NaN, a number, None = extrapolate), point layouts, the pytree under
jit/vmap, gradients and the errors."""
import numpy as np
import pytest
import scipy.interpolate

import openjax as jax
from openjax.scipy.interpolate import RegularGridInterpolator


def _grid(ndim, seed=0):
  rng = np.random.default_rng(seed)
  return tuple(np.sort(rng.uniform(-1, 2, 4 + i)) for i in range(ndim))


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("ndim,trailing", [(1, ()), (2, ()), (2, (3,)), (3, (2,))])
@pytest.mark.parametrize("fill_value", [np.nan, None, 0.5])
def test_matches_scipy(method, ndim, trailing, fill_value):
  rng = np.random.default_rng(1)
  grid = _grid(ndim)
  values = rng.standard_normal(tuple(len(g) for g in grid) + trailing)
  points = rng.uniform(-1.3, 2.3, (11, ndim))
  with jax.enable_x64():
    got = RegularGridInterpolator(grid, values, method=method, fill_value=fill_value)(points)
    want = scipy.interpolate.RegularGridInterpolator(grid, values, method=method,
                                                     bounds_error=False,
                                                     fill_value=fill_value)(points)
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-12, equal_nan=True)


def test_point_layouts_and_method_override():
  grid = _grid(2)
  values = np.random.default_rng(2).standard_normal((4, 5))
  interp = RegularGridInterpolator(grid, values)
  ref = scipy.interpolate.RegularGridInterpolator(grid, values, bounds_error=False)
  xs, ys = np.meshgrid(np.linspace(-0.5, 1.5, 3), np.linspace(0, 1, 4), indexing="ij")
  with jax.enable_x64():
    interp = RegularGridInterpolator(grid, values)
    np.testing.assert_allclose(np.asarray(interp((xs, ys))), ref((xs, ys)), atol=1e-12)
    pts = np.stack([xs, ys], -1)
    np.testing.assert_allclose(np.asarray(interp(pts)), ref(pts), atol=1e-12)
    np.testing.assert_allclose(np.asarray(interp(pts, method="nearest")),
                               ref(pts, method="nearest"), atol=1e-12)


def test_pytree_jit_vmap_grad():
  grid = tuple(g.astype(np.float32) for g in _grid(2))
  values = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
  pts = np.array([[0.1, 0.2], [1.0, 0.5], [0.7, 1.9]], np.float32)
  interp = RegularGridInterpolator(grid, values)
  leaves = jax.tree_util.tree_leaves(interp)
  assert len(leaves) == 4     # two grid axes, values, fill value
  np.testing.assert_allclose(np.asarray(jax.jit(lambda it, p: it(p))(interp, pts)),
                             np.asarray(interp(pts)), atol=1e-6)
  batched = jax.vmap(lambda v: RegularGridInterpolator(grid, v)(pts))(np.stack([values, -values]))
  np.testing.assert_allclose(np.asarray(batched[1]), -np.asarray(interp(pts)), atol=1e-6)
  with jax.enable_x64():
    jax.test_util.check_grads(lambda v: RegularGridInterpolator(grid, v, fill_value=None)(pts),
                              (values.astype(np.float64),), order=1, atol=1e-6, rtol=1e-6)


def test_errors():
  grid = _grid(2)
  with pytest.raises(ValueError, match="method 'cubic' is not defined"):
    RegularGridInterpolator(grid, np.zeros((4, 5)), method="cubic")
  with pytest.raises(NotImplementedError, match="bounds_error=True"):
    RegularGridInterpolator(grid, np.zeros((4, 5)), bounds_error=True)
  with pytest.raises(ValueError, match="there are 2 point arrays"):
    RegularGridInterpolator(grid, np.zeros(4))
  with pytest.raises(ValueError, match="fill_value must be"):
    RegularGridInterpolator(grid, np.zeros((4, 5)), fill_value=1j)
  with pytest.raises(ValueError, match="dimension 3"):
    RegularGridInterpolator(grid, np.zeros((4, 5)))(np.zeros((2, 3)))
