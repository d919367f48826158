"""``jax.scipy.integrate.trapezoid`` against SciPy: sample points or
spacing, axes, gradients and jit."""
import numpy as np
import scipy.integrate

import openjax as jax
from openjax.scipy import integrate


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
