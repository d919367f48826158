"""A flax.nnx MLP trained with nnx.Optimizer (optax adam) for a few steps; prints the losses."""
import json

import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx


class MLP(nnx.Module):
  def __init__(self, rngs: nnx.Rngs):
    self.linear1 = nnx.Linear(4, 16, rngs=rngs)
    self.linear2 = nnx.Linear(16, 1, rngs=rngs)

  def __call__(self, x):
    return self.linear2(nnx.gelu(self.linear1(x)))


def main():
  rng = np.random.default_rng(2)
  x = jnp.asarray(rng.standard_normal((32, 4)).astype(np.float32))
  y = jnp.asarray(rng.standard_normal((32, 1)).astype(np.float32))
  model = MLP(nnx.Rngs(0))
  optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)

  @nnx.jit
  def step(model, optimizer):
    def loss_fn(model):
      return jnp.mean((model(x) - y) ** 2)
    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss

  losses = [float(step(model, optimizer)) for _ in range(10)]
  print(json.dumps({"flax_nnx": losses}))


if __name__ == "__main__":
  main()
