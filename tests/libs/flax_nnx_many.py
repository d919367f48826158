"""flax.nnx beyond the basic MLP: each case prints a value (JSON, one dict);
a case that raises prints its error instead."""
import json
import traceback

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

RNG = np.random.default_rng(3)
X = jnp.asarray(RNG.standard_normal((16, 4)).astype(np.float32))
Y = jnp.asarray(RNG.standard_normal((16, 1)).astype(np.float32))


class Net(nnx.Module):
  def __init__(self, rngs):
    self.l1 = nnx.Linear(4, 8, rngs=rngs)
    self.bn = nnx.BatchNorm(8, rngs=rngs)
    self.drop = nnx.Dropout(0.2, rngs=rngs)
    self.l2 = nnx.Linear(8, 1, rngs=rngs)

  def __call__(self, x):
    return self.l2(self.drop(nnx.relu(self.bn(self.l1(x)))))


def batchnorm_dropout_training():
  model = Net(nnx.Rngs(0, dropout=1))
  opt = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)

  @nnx.jit
  def step(model, opt):
    loss, grads = nnx.value_and_grad(lambda m: jnp.mean((m(X) - Y) ** 2))(model)
    opt.update(model, grads)
    return loss
  losses = [float(step(model, opt)) for _ in range(5)]
  model.eval()
  return losses + [float(jnp.mean(model(X))), float(jnp.mean(model.bn.mean.value))]


def split_merge_functional():
  model = nnx.Linear(4, 1, rngs=nnx.Rngs(2))
  graphdef, params = nnx.split(model)

  @jax.jit
  def step(params):
    def loss_fn(p):
      return jnp.mean((nnx.merge(graphdef, p)(X) - Y) ** 2)
    loss, g = jax.value_and_grad(loss_fn)(params)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, g), loss
  losses = []
  for _ in range(4):
    params, loss = step(params)
    losses.append(float(loss))
  return losses


def refs_as_variables():
  # Variables backed by jax.Ref: plain jax.jit updates them in place.
  class Counter(nnx.Module):
    def __init__(self):
      self.count = nnx.BatchStat(jnp.zeros(()))
      self.scale = nnx.Param(jnp.full((), 2.))

  with nnx.var_defaults(ref=True):
    c = Counter()

  @jax.jit
  def bump(c, x):
    c.count[...] += x
    return c.count[...] * c.scale[...]
  out = [float(bump(c, 1.)) for _ in range(3)]
  return out + [float(c.count[...]), type(c.count.get_raw_value()).__name__]


def vmap_ensemble():
  @nnx.vmap(in_axes=0, out_axes=0)
  def make(key):
    return nnx.Linear(4, 2, rngs=nnx.Rngs(key))
  ensemble = make(jax.random.split(jax.random.key(5), 3))

  @nnx.vmap(in_axes=(0, None))
  def apply(m, x):
    return m(x)
  return np.asarray(apply(ensemble, X[:2])).tolist()


def scan_layers():
  class Block(nnx.Module):
    def __init__(self, rngs):
      self.lin = nnx.Linear(4, 4, rngs=rngs)

    def __call__(self, x):
      return jnp.tanh(self.lin(x))

  @nnx.vmap(in_axes=0, out_axes=0)
  def make(key):
    return Block(nnx.Rngs(key))
  blocks = make(jax.random.split(jax.random.key(6), 3))

  @nnx.scan(in_axes=(0, nnx.Carry), out_axes=nnx.Carry)
  def forward(block, x):
    return block(x)
  return np.asarray(forward(blocks, X[:2])).tolist()


CASES = [batchnorm_dropout_training, split_merge_functional, refs_as_variables, vmap_ensemble,
         scan_layers]


def main():
  out = {}
  for case in CASES:
    try:
      out[case.__name__] = case()
    except Exception as e:  # noqa: BLE001 - report which cases fail
      out[case.__name__] = f"{type(e).__name__}: {e}"[:300]
      traceback.print_exc()
  print(json.dumps(out))


if __name__ == "__main__":
  main()
