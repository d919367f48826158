"""Values of jax.example_libraries (optimizers, stax) on fixed inputs.

Written against JAX: ``python tests/libs/example_libraries_program.py`` under
JAX 0.10.2 wrote tests/data/example_libraries.json; tests/test_example_libraries.py
runs the same functions under ``openjax.alias_jax()`` and compares.
"""
import json

import jax
import jax.numpy as jnp
import numpy as np
from jax.example_libraries import optimizers, stax

OPTIMIZERS = {
    "sgd": lambda: optimizers.sgd(0.1),
    "momentum": lambda: optimizers.momentum(0.1, 0.9),
    "nesterov": lambda: optimizers.nesterov(0.1, 0.9),
    "adagrad": lambda: optimizers.adagrad(0.1),
    "rmsprop": lambda: optimizers.rmsprop(0.05),
    "rmsprop_momentum": lambda: optimizers.rmsprop_momentum(0.05),
    "adam": lambda: optimizers.adam(optimizers.exponential_decay(0.1, 2, 0.5)),
    "adamax": lambda: optimizers.adamax(0.1),
    "sm3": lambda: optimizers.sm3(0.1),
}


def _loss(params):
  return jnp.sum((params["w"] - 1.5) ** 2) + jnp.sum(jnp.cos(params["b"]))


def optimizer_trajectories():
  out = {}
  for name, make in OPTIMIZERS.items():
    init, update, get_params = make()
    state = init({"w": jnp.arange(6.0).reshape(2, 3) / 4, "b": jnp.array([0.3, -0.2])})
    step = lambda i, s: update(i, jax.grad(_loss)(get_params(s)), s)  # noqa: E731
    if name != "sm3":  # sm3's state holds the parameter shape as ints: not jittable
      step = jax.jit(step)
    for i in range(5):
      state = step(i, state)
    params = get_params(state)
    out[name] = {"w": np.asarray(params["w"]).tolist(), "b": np.asarray(params["b"]).tolist()}
  return out


def schedules():
  steps = jnp.arange(8)
  made = {
      "exponential_decay": optimizers.exponential_decay(0.5, 3, 0.1),
      "inverse_time_decay": optimizers.inverse_time_decay(0.5, 3, 2.0),
      "inverse_time_decay_staircase": optimizers.inverse_time_decay(0.5, 3, 2.0, staircase=True),
      "polynomial_decay": optimizers.polynomial_decay(0.5, 5, 0.1, power=2.0),
      "piecewise_constant": optimizers.piecewise_constant([2, 5], [1.0, 0.5, 0.1]),
  }
  return {name: np.asarray(jax.vmap(s)(steps), np.float64).tolist() for name, s in made.items()}


def clipping():
  tree = {"a": jnp.array([3.0, 4.0]), "b": jnp.array([[12.0]])}
  clipped = optimizers.clip_grads(tree, 6.5)
  return {"l2_norm": float(optimizers.l2_norm(tree)),
          "clipped": {k: np.asarray(v).ravel().tolist() for k, v in clipped.items()}}


def stax_network():
  init, apply = stax.serial(
      stax.Conv(4, (3, 3), padding="SAME"), stax.BatchNorm(), stax.Relu,
      stax.MaxPool((2, 2), strides=(2, 2)), stax.Conv(3, (2, 2), strides=(1, 1)), stax.Gelu,
      stax.AvgPool((2, 2), padding="SAME"), stax.SumPool((1, 1)), stax.Flatten,
      stax.FanOut(2), stax.parallel(stax.Dense(5), stax.Identity), stax.FanInConcat(),
      stax.Dense(4), stax.Tanh, stax.Dropout(0.8), stax.LogSoftmax)
  out_shape, params = init(jax.random.key(0), (2, 8, 8, 3))
  x = jnp.asarray(np.linspace(-1, 1, 2 * 8 * 8 * 3).reshape(2, 8, 8, 3), jnp.float32)
  y = apply(params, x, rng=jax.random.key(1))
  dense_w = params[-4][0]
  return {"out_shape": [int(d) for d in out_shape], "out": np.asarray(y).tolist(),
          "dense_w": np.asarray(dense_w).tolist(),
          "n_leaves": len(jax.tree.leaves(params))}


def stax_transpose_and_residual():
  init, apply = stax.serial(
      stax.ConvTranspose(2, (3, 3), strides=(2, 2), padding="SAME"), stax.Elu,
      stax.FanOut(2), stax.parallel(stax.Selu, stax.LeakyRelu), stax.FanInSum,
      stax.shape_dependent(lambda shape: stax.Dense(shape[-1])), stax.Softplus,
      stax.Sigmoid, stax.Exp, stax.Softmax)
  out_shape, params = init(jax.random.key(2), (1, 3, 3, 2))
  x = jnp.asarray(np.linspace(-2, 2, 18).reshape(1, 3, 3, 2), jnp.float32)
  init1d, apply1d = stax.Conv1DTranspose(3, (2,), strides=(2,))
  shape1d, params1d = init1d(jax.random.key(3), (1, 4, 2))
  y1d = apply1d(params1d, jnp.ones((1, 4, 2)))
  return {"out_shape": [int(d) for d in out_shape], "out": np.asarray(apply(params, x)).tolist(),
          "shape1d": [int(d) for d in shape1d], "out1d": np.asarray(y1d).tolist()}


def all_values():
  return {"optimizers": optimizer_trajectories(), "schedules": schedules(),
          "clipping": clipping(), "stax_network": stax_network(),
          "stax_transpose": stax_transpose_and_residual()}


if __name__ == "__main__":
  print(json.dumps(all_values()))
