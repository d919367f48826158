"""A flax.linen MLP trained with optax for a few steps; prints the losses as JSON."""
import json

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax


class MLP(nn.Module):
  features: tuple = (16, 16, 1)

  @nn.compact
  def __call__(self, x):
    for width in self.features[:-1]:
      x = nn.relu(nn.Dense(width)(x))
    return nn.Dense(self.features[-1])(x)


def main():
  rng = np.random.default_rng(1)
  x = jnp.asarray(rng.standard_normal((32, 4)).astype(np.float32))
  y = jnp.asarray(rng.standard_normal((32, 1)).astype(np.float32))
  model = MLP()
  params = model.init(jax.random.key(1), x)
  tx = optax.sgd(0.05, momentum=0.9)
  opt_state = tx.init(params)

  @jax.jit
  def step(params, opt_state):
    def loss_fn(p):
      return jnp.mean((model.apply(p, x) - y) ** 2)
    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss

  losses = []
  for _ in range(10):
    params, opt_state, loss = step(params, opt_state)
    losses.append(float(loss))
  print(json.dumps({"flax_linen": losses}))


if __name__ == "__main__":
  main()
