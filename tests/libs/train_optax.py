"""An optax chain (clip + adamw + schedule) training a small MLP; prints the losses as JSON.

Runs unedited under JAX and under ``python -m openjax``; tests/test_alias_libs.py
compares the losses with JAX's, stored in tests/data/lib_losses.json.
"""
import json

import jax
import jax.numpy as jnp
import numpy as np
import optax


def data():
  rng = np.random.default_rng(0)
  x = rng.standard_normal((64, 3)).astype(np.float32)
  y = (np.sin(x[:, :1]) + 0.5 * x[:, 1:2] * x[:, 2:3]).astype(np.float32)
  return jnp.asarray(x), jnp.asarray(y)


def init(key):
  k1, k2 = jax.random.split(key)
  return {"w1": jax.random.normal(k1, (3, 16)) * 0.5, "b1": jnp.zeros(16),
          "w2": jax.random.normal(k2, (16, 1)) * 0.25, "b2": jnp.zeros(1)}


def loss_fn(params, x, y):
  h = jax.nn.tanh(x @ params["w1"] + params["b1"])
  return jnp.mean(optax.l2_loss(h @ params["w2"] + params["b2"], y))


def main():
  x, y = data()
  params = init(jax.random.key(0))
  schedule = optax.warmup_cosine_decay_schedule(0.0, 0.05, 3, 20)
  tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-3))
  opt_state = tx.init(params)

  @jax.jit
  def step(params, opt_state):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss

  losses = []
  for _ in range(20):
    params, opt_state, loss = step(params, opt_state)
    losses.append(float(loss))
  print(json.dumps({"optax": losses}))


if __name__ == "__main__":
  main()
