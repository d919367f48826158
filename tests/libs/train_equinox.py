"""An equinox MLP trained with optax for a few steps; prints the losses as JSON."""
import json

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax


def main():
  rng = np.random.default_rng(3)
  x = jnp.asarray(rng.standard_normal((32, 2)).astype(np.float32))
  y = jnp.asarray(rng.standard_normal((32, 1)).astype(np.float32))
  model = eqx.nn.MLP(2, 1, width_size=8, depth=2, key=jax.random.key(3))
  tx = optax.adam(1e-2)
  opt_state = tx.init(eqx.filter(model, eqx.is_inexact_array))

  @eqx.filter_jit
  def step(model, opt_state):
    def loss_fn(model):
      return jnp.mean((jax.vmap(model)(x) - y) ** 2)
    loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
    updates, opt_state = tx.update(grads, opt_state, eqx.filter(model, eqx.is_inexact_array))
    return eqx.apply_updates(model, updates), opt_state, loss

  losses = []
  for _ in range(10):
    model, opt_state, loss = step(model, opt_state)
    losses.append(float(loss))
  print(json.dumps({"equinox": losses}))


if __name__ == "__main__":
  main()
