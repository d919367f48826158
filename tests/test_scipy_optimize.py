"""``jax.scipy.optimize.minimize`` (BFGS and JAX's experimental L-BFGS):
JAX 0.10.2's own results on the Rosenbrock function as data -- iterates,
counts and status codes, including JAX's line-search failures -- then
convergence against ``scipy.optimize.minimize``, ``args``, ``jit``, ``vmap``
and the errors."""
import numpy as np
import pytest
import scipy.optimize

import openjax as jax
import openjax.numpy as jnp
from openjax.scipy.optimize import OptimizeResults, minimize

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"


def rosen(x):
  return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


# Generated with JAX 0.10.2: minimize(rosen, x0, method=m, options=opts) ->
# (x, success, status, fun, nit, nfev, njev).
X0_F32 = [-1.2, 1.0, 0.5, -0.3]
JAX_F32 = {
    ("BFGS", 5): ([-0.3647597134113312, 0.13266883790493011, 0.03681821748614311,
                   -0.012380953878164291], False, 1, 3.598365306854248, 5, 10, 10),
    ("BFGS", None): ([-0.3647597134113312, 0.13266883790493011, 0.03681821748614311,
                      -0.012380953878164291], False, 3, 3.598365306854248, 5, 10, 10),
    (LBFGS, 5): ([0.5972497463226318, 0.3545556962490082, 0.1307019293308258,
                  0.018990572541952133], False, 1, 1.3378041982650757, 6, 15, 15),
    (LBFGS, None): ([0.8791655898094177, 0.7799503803253174, 0.5930776596069336,
                     0.3359713554382324], False, 5, 0.2816435694694519, 13, 26, 26),
}
JAX_F64 = {
    ("BFGS", (0.0, 0.0, 0.0)): ([0.6756357414697438, 0.4467768339319005, 0.17914672163247358],
                                False, 3, 0.4625629723508024, 11, 27, 27),
    (LBFGS, (0.0, 0.0, 0.0)): ([0.24702054141035537, 0.029465909654539296,
                                0.0032508548532417516], False, 5, 1.609042855257543, 3, 12, 12),
    ("BFGS", (1.3, 0.7, 0.8, 1.9, 1.2)): (
        [0.9967396880997339, 0.9945007484172954, 0.9885649736274327, 0.9754681770102098,
         0.9507830995860188], False, 3, 0.0012757172677625042, 19, 25, 25),
    (LBFGS, (1.3, 0.7, 0.8, 1.9, 1.2)): (
        [1.0000000074917565, 0.9999999721743824, 0.9999999956013813, 1.0000001401220642,
         1.000000266450366], False, 4, 2.7031518405142446e-12, 27, 42, 42),
}


def _check(result, expected, atol):
  x, success, status, fun, nit, nfev, njev = expected
  np.testing.assert_allclose(np.asarray(result.x), x, atol=atol, rtol=atol)
  assert bool(result.success) == success
  assert int(result.status) == status
  np.testing.assert_allclose(float(result.fun), fun, rtol=1e-4, atol=atol)
  assert (int(result.nit), int(result.nfev), int(result.njev)) == (nit, nfev, njev)


@pytest.mark.parametrize("method,maxiter", list(JAX_F32), ids=str)
def test_float32_steps_match_jax(method, maxiter):
  opts = {} if maxiter is None else {"maxiter": maxiter}
  result = minimize(rosen, np.array(X0_F32, np.float32), method=method, options=opts)
  assert isinstance(result, OptimizeResults)
  _check(result, JAX_F32[method, maxiter], atol=2e-5)


@pytest.mark.parametrize("method,x0", list(JAX_F64), ids=str)
def test_float64_steps_match_jax(method, x0):
  with jax.enable_x64():
    result = minimize(rosen, np.array(x0), method=method)
    assert result.x.dtype == np.float64
    _check(result, JAX_F64[method, x0], atol=1e-8)


def _quadratic(x, a, c):
  return jnp.sum((a @ x - c) ** 2) + 0.1 * jnp.sum(x ** 4)


def _np_quadratic(x, a, c):
  return np.sum((a @ x - c) ** 2) + 0.1 * np.sum(x ** 4)


@pytest.mark.parametrize("method", ["BFGS", "bfgs", LBFGS])
def test_converges_to_scipy_minimum(method):
  rng = np.random.default_rng(3)
  a, c = rng.standard_normal((4, 4)), rng.standard_normal(4)
  x0 = np.zeros(4)
  with jax.enable_x64():
    # L-BFGS stops on its relative-decrease test (ftol) before a tight gtol.
    gtol = 1e-8 if method != LBFGS else 1e-5
    result = minimize(_quadratic, x0, (a, c), method=method, options={"gtol": gtol})
    assert bool(result.success) and int(result.status) == 0
    expected = scipy.optimize.minimize(_np_quadratic, x0, (a, c), method="BFGS",
                                       options={"gtol": 1e-10}).x
    np.testing.assert_allclose(np.asarray(result.x), expected, atol=10 * gtol)
    np.testing.assert_allclose(np.asarray(result.jac), np.asarray(jax.grad(_quadratic)(
        result.x, a, c)), atol=1e-12)
    if method != LBFGS:    # BFGS's inverse Hessian estimate is near the true one
      hess = np.asarray(jax.hessian(_quadratic)(result.x, a, c))
      np.testing.assert_allclose(np.asarray(result.hess_inv) @ hess, np.eye(4), atol=0.1)
    else:
      assert result.hess_inv is None


def test_jit_and_vmap():
  rng = np.random.default_rng(4)
  a, c = rng.standard_normal((3, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
  starts = rng.standard_normal((4, 3)).astype(np.float32)

  def solve(x0):
    return minimize(_quadratic, x0, (a, c), method="BFGS").x
  eager = np.stack([np.asarray(solve(x)) for x in starts])
  np.testing.assert_allclose(np.asarray(jax.jit(solve)(starts[0])), eager[0], atol=1e-5)
  np.testing.assert_allclose(np.asarray(jax.vmap(solve)(starts)), eager, atol=1e-4)


def test_errors():
  with pytest.raises(TypeError, match="must be a tuple"):
    minimize(rosen, np.zeros(2), [1.0], method="BFGS")
  with pytest.raises(ValueError, match="Method Nelder-Mead not recognized"):
    minimize(rosen, np.zeros(2), method="Nelder-Mead")
