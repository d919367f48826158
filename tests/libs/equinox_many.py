"""equinox beyond an MLP: Conv2d/MaxPool/LayerNorm, a GRU cell under scan,
filter_vmap + filter_grad, tree_at, stateful BatchNorm over a named vmap axis,
MultiheadAttention, Dropout, filter_jit + checkpoint; tests/test_alias_libs.py
compares with JAX 0.10.2's values (tests/data/equinox_many.json)."""
import json
import jax, jax.numpy as jnp, numpy as np
import equinox as eqx
out = {}
def run(name, fn):
  try: out[name] = fn()
  except Exception as e: out[name] = f"{type(e).__name__}: {str(e)[:300]}"
k = jax.random.split(jax.random.key(0), 8)
x = jnp.asarray(np.random.default_rng(0).standard_normal((3, 8, 8)).astype(np.float32))
def conv():
  m = eqx.nn.Sequential([eqx.nn.Conv2d(3, 4, 3, key=k[0]), eqx.nn.Lambda(jax.nn.relu), eqx.nn.MaxPool2d(2, stride=2), eqx.nn.LayerNorm((4, 3, 3))])
  return np.asarray(m(x)).round(5).tolist()
run("conv_ln", conv)
def gru():
  cell = eqx.nn.GRUCell(4, 5, key=k[1])
  h = jnp.zeros(5)
  def step(h, xi): h = cell(xi, h); return h, h
  _, hs = jax.lax.scan(step, h, jnp.ones((6, 4)))
  return np.asarray(hs).round(5).tolist()
run("gru_scan", gru)
def vmap_grad():
  mlp = eqx.nn.MLP(2, 2, 4, 2, key=k[2])
  xs = jnp.ones((5, 2))
  g = eqx.filter_grad(lambda m: jnp.sum(eqx.filter_vmap(m)(xs) ** 2))(mlp)
  return [np.asarray(l).round(5).tolist() for l in jax.tree.leaves(g)]
run("filter_vmap_grad", vmap_grad)
def tree_at():
  lin = eqx.nn.Linear(3, 2, key=k[3])
  lin2 = eqx.tree_at(lambda l: l.bias, lin, jnp.ones(2))
  return np.asarray(lin2(jnp.ones(3))).round(5).tolist()
run("tree_at", tree_at)
def batchnorm():
  bn, state = eqx.nn.make_with_state(eqx.nn.BatchNorm)(4, "batch", mode="batch")
  y, state = eqx.filter_vmap(bn, in_axes=(0, None), out_axes=(0, None), axis_name="batch")(jnp.arange(12.).reshape(3, 4), state)
  return np.asarray(y).round(5).tolist()
run("batchnorm_state", batchnorm)
def attention():
  mha = eqx.nn.MultiheadAttention(2, 8, key=k[4])
  q = jnp.ones((3, 8)) * jnp.arange(3.)[:, None]
  return np.asarray(mha(q, q, q)).round(5).tolist()
run("mha", attention)
def dropout():
  d = eqx.nn.Dropout(0.5)
  return np.asarray(d(jnp.ones(8), key=k[5])).round(5).tolist()
run("dropout", dropout)
def checkpoint_jit():
  f = eqx.filter_jit(eqx.filter_checkpoint(lambda a, b: jnp.sin(a) * b)) if hasattr(eqx, "filter_checkpoint") else eqx.filter_jit(lambda a, b: jnp.sin(a) * b)
  return np.asarray(jax.grad(lambda a: f(a, 2.0).sum())(jnp.arange(3.))).round(5).tolist()
run("jit_grad", checkpoint_jit)
print(json.dumps(out))
