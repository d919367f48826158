"""Seed program 002 (linear regression: grad, jit, a training loop, vmap
predictions, the Hessian) run with ``import openjax as jax``. NumPy makes
the data in place of ``jax.random``; gradients are checked against the
hand-derived formula for the MSE of a linear model, ``predict_batch``
against a Python loop, the Hessian against ``2/N [X 1]^T [X 1]``."""
import time

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import grad, hessian, jit, vmap

TRUE_WEIGHTS = [1.5, -2.0, 0.5, 3.0, -1.0]


def linear_model(params, X):
  """Linear regression: y = X @ weights + bias"""
  weights, bias = params
  return X @ weights + bias


def loss_fn(params, X, y):
  """Mean squared error loss function"""
  predictions = linear_model(params, X)
  return jnp.mean((predictions - y) ** 2)


grad_fn = grad(loss_fn)


@jit
def update_params(params, X, y, learning_rate):
  """Single gradient descent step"""
  grads = grad_fn(params, X, y)
  weights, bias = params
  grad_weights, grad_bias = grads
  new_weights = weights - learning_rate * grad_weights
  new_bias = bias - learning_rate * grad_bias
  return (new_weights, new_bias)


@jit
def predict_batch(params, X_batch):
  """Predict for multiple inputs simultaneously"""
  return vmap(lambda x: linear_model(params, x.reshape(1, -1)).squeeze())(X_batch)


@pytest.fixture(scope="module")
def data():
  rng = np.random.default_rng(42)
  X = jnp.array(rng.standard_normal((1000, 5)).astype(np.float32))
  true_weights = jnp.array(TRUE_WEIGHTS)
  y = X @ true_weights + 0.1 * jnp.array(rng.standard_normal(1000).astype(np.float32))
  weights = jnp.array(rng.standard_normal(5).astype(np.float32)) * 0.1
  X_test = jnp.array(rng.standard_normal((100, 5)).astype(np.float32))
  return X, y, true_weights, weights, X_test


def _mse_grad(w, b, X, y):
  """d/dw, d/db of mean((X w + b - y)^2), by hand, in float64."""
  X, y, w = (np.asarray(a, np.float64) for a in (X, y, w))
  r = X @ w + b - y
  return 2 / len(y) * X.T @ r, 2 / len(y) * r.sum()


def test_step1_data(data):
  X, y, true_weights, _, _ = data
  assert f"Data shapes: X={X.shape}, y={y.shape}" == "Data shapes: X=(1000, 5), y=(1000,)"
  assert f"Data types: X={X.dtype}, y={y.dtype}" == "Data types: X=float32, y=float32"
  assert true_weights.dtype == np.float32


def test_step2_3_loss_and_gradient(data):
  X, y, _, weights, _ = data
  params = (weights, 0.0)
  loss = loss_fn(params, X, y)
  r = np.asarray(X, np.float64) @ np.asarray(weights, np.float64) - np.asarray(y, np.float64)
  np.testing.assert_allclose(float(loss), np.mean(r ** 2), rtol=1e-5)
  assert f"Initial loss: {loss:.4f}".startswith("Initial loss: ")
  gradients = grad_fn(params, X, y)
  assert isinstance(gradients, tuple) and len(gradients) == 2
  assert (gradients[0].shape, gradients[1].shape) == ((5,), ())
  assert gradients[0].dtype == gradients[1].dtype == np.float32
  assert gradients[1].weak_type        # the gradient of a Python-float bias, as in JAX
  gw, gb = _mse_grad(weights, 0.0, X, y)
  np.testing.assert_allclose(np.asarray(gradients[0]), gw, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(float(gradients[1]), gb, rtol=1e-4, atol=1e-5)
  assert f"Weight gradients: {gradients[0]}".startswith("Weight gradients: [")


def test_step4_5_jit_training_loop(data):
  X, y, true_weights, weights, _ = data
  params = (weights, 0.0)
  learning_rate = 0.01
  # One jitted step is exactly one step of gradient descent with the formula.
  gw, gb = _mse_grad(weights, 0.0, X, y)
  params = update_params(params, X, y, learning_rate)
  np.testing.assert_allclose(np.asarray(params[0]), np.asarray(weights) - 0.01 * gw,
                             rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(float(params[1]), -0.01 * gb, rtol=1e-4, atol=1e-7)
  losses = []
  start_time = time.time()
  for epoch in range(100):
    params = update_params(params, X, y, learning_rate)
    if epoch % 20 == 0:
      current_loss = loss_fn(params, X, y)
      losses.append(float(current_loss))
      assert f"Epoch {epoch}, Loss: {current_loss:.6f}".startswith(f"Epoch {epoch}, Loss: ")
  assert f"{time.time() - start_time:.3f}"
  assert all(a > b for a, b in zip(losses, losses[1:])), losses
  # The same 101 steps in NumPy (float64) land on the same parameters.
  w, b = np.asarray(weights, np.float64), 0.0
  for _ in range(101):
    gw, gb = _mse_grad(w, b, X, y)
    w, b = w - 0.01 * gw, b - 0.01 * gb
  final_weights, final_bias = params
  np.testing.assert_allclose(np.asarray(final_weights), w, rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(float(final_bias), b, atol=1e-4)
  assert f"Learned bias: {final_bias:.4f}" == f"Learned bias: {b:.4f}"
  # Values JAX 0.10.2 prints for this data.
  np.testing.assert_allclose(losses, [14.694547, 6.363268, 2.769446, 1.213488, 0.537213],
                             rtol=1e-5)


def test_step6_vmap_predictions_match_a_loop(data):
  X, y, true_weights, weights, X_test = data
  params = (weights * 10, jnp.float32(0.25))
  predictions = predict_batch(params, X_test)
  loop = np.stack([np.asarray(linear_model(params, X_test[i].reshape(1, -1)).squeeze())
                   for i in range(X_test.shape[0])])
  assert predictions.shape == (100,) and predictions.dtype == np.float32
  np.testing.assert_allclose(np.asarray(predictions), loop, rtol=1e-6, atol=1e-6)
  # And with the Python-float bias of the seed (weakly typed under jit).
  predictions = predict_batch((weights, 0.0), X_test)
  np.testing.assert_allclose(np.asarray(predictions), np.asarray(X_test @ weights),
                             rtol=1e-6, atol=1e-6)
  y_test = X_test @ true_weights
  test_loss = jnp.mean((predict_batch((true_weights, 0.0), X_test) - y_test) ** 2)
  assert float(test_loss) < 1e-10
  r2 = 1 - test_loss / jnp.var(y_test)
  assert f"Test R²: {r2:.4f}" == "Test R²: 1.0000"


def test_step7_hessian(data):
  X, y, _, weights, _ = data
  params = (weights, 0.0)
  H = hessian(loss_fn)(params, X[:100], y[:100])
  assert f"Hessian shape: {H[0][0].shape}" == "Hessian shape: (5, 5)"
  assert jax.tree_util.tree_map(lambda a: a.shape, H) == (((5, 5), (5,)), ((5,), ()))
  Xs = np.asarray(X[:100], np.float64)
  np.testing.assert_allclose(np.asarray(H[0][0]), 2 / 100 * Xs.T @ Xs, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(np.asarray(H[0][1]), 2 / 100 * Xs.sum(0), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(np.asarray(H[1][0]), 2 / 100 * Xs.sum(0), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(float(H[1][1]), 2.0, rtol=1e-6)
  devices = jax.devices()
  assert len(devices) >= 1
