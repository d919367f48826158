"""flax.linen beyond an MLP: Conv/BatchNorm/Dropout/LayerNorm, Embed with
attention and a GRU cell, nn.RNN (nn.scan), nn.vmap, nn.remat and nn.jit;
tests/test_alias_libs.py compares with JAX 0.10.2's values (tests/data/flax_many.json)."""
import json
import jax, jax.numpy as jnp, numpy as np
import flax.linen as nn
out = {}
x = jnp.asarray(np.random.default_rng(0).standard_normal((2, 8, 8, 3)).astype(np.float32))
class CNN(nn.Module):
  @nn.compact
  def __call__(self, x, train: bool):
    x = nn.Conv(4, (3, 3), strides=2)(x)
    x = nn.BatchNorm(use_running_average=not train)(x)
    x = nn.relu(x)
    x = nn.avg_pool(x, (2, 2), strides=(2, 2))
    x = nn.Dropout(0.5, deterministic=not train)(x)
    x = x.reshape((x.shape[0], -1))
    x = nn.LayerNorm()(x)
    return nn.Dense(3)(x)
def run(name, fn):
  try: out[name] = fn()
  except Exception as e: out[name] = f"{type(e).__name__}: {str(e)[:300]}"
m = CNN()
def cnn():
  v = m.init({"params": jax.random.key(0), "dropout": jax.random.key(1)}, x, train=False)
  y, upd = m.apply(v, x, train=True, rngs={"dropout": jax.random.key(2)}, mutable=["batch_stats"])
  return [np.asarray(y).round(5).tolist(), np.asarray(upd["batch_stats"]["BatchNorm_0"]["mean"]).round(5).tolist()]
run("cnn", cnn)
def attn():
  tok = jnp.array([[1, 2, 3, 0], [4, 5, 6, 7]])
  class T(nn.Module):
    @nn.compact
    def __call__(self, t):
      e = nn.Embed(10, 8)(t)
      e = nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=8)(e, mask=nn.make_attention_mask(t > 0, t > 0))
      return nn.GRUCell(8)(jnp.zeros((2, 8)), e[:, 0])[1]
  v = T().init(jax.random.key(3), tok)
  return np.asarray(T().apply(v, tok)).round(5).tolist()
run("attention_gru", attn)
def scan_rnn():
  class R(nn.Module):
    @nn.compact
    def __call__(self, xs):
      return nn.RNN(nn.LSTMCell(5))(xs)
  xs = jnp.ones((2, 6, 3))
  v = R().init(jax.random.key(4), xs)
  return np.asarray(R().apply(v, xs)).round(5).tolist()
run("rnn_scan", scan_rnn)
def vmapped():
  VDense = nn.vmap(nn.Dense, variable_axes={"params": 0}, split_rngs={"params": True}, in_axes=0)
  v = VDense(2).init(jax.random.key(5), jnp.ones((3, 4)))
  return np.asarray(VDense(2).apply(v, jnp.ones((3, 4)))).round(5).tolist()
run("nn_vmap", vmapped)
def remat_jit():
  class M(nn.Module):
    @nn.compact
    def __call__(self, x):
      return nn.remat(nn.Dense)(4)(nn.jit(nn.Dense)(4)(x))
  v = M().init(jax.random.key(6), jnp.ones((2, 3)))
  g = jax.grad(lambda v: M().apply(v, jnp.ones((2, 3))).sum())(v)
  return [np.asarray(l).round(5).tolist() for l in jax.tree.leaves(g)]
run("remat_jit", remat_jit)
print(json.dumps(out))
