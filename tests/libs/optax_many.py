"""Eighteen optax optimizers (5 steps each) and twelve optax losses on fixed
data; tests/test_alias_libs.py compares with JAX 0.10.2's values
(tests/data/optax_many.json)."""
import json
import jax, jax.numpy as jnp, numpy as np, optax
x = jnp.asarray(np.random.default_rng(0).standard_normal((16, 4)).astype(np.float32))
labels = jnp.arange(16) % 3
params = {"w": jnp.asarray(np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)) * 0.3, "b": jnp.zeros(3)}
def loss(p):
  logits = x @ p["w"] + p["b"]
  return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean() + 0.01 * optax.l2_loss(p["w"]).sum()
opts = {
  "sgd": optax.sgd(0.1, momentum=0.9, nesterov=True), "adam": optax.adam(0.05), "adamw": optax.adamw(0.05),
  "lion": optax.lion(0.01), "rmsprop": optax.rmsprop(0.01), "adagrad": optax.adagrad(0.1), "lamb": optax.lamb(0.01),
  "lars": optax.lars(0.1), "adafactor": optax.adafactor(0.05), "novograd": optax.novograd(0.05), "radam": optax.radam(0.05),
  "yogi": optax.yogi(0.05), "fromage": optax.fromage(0.01), "sm3": optax.sm3(0.1), "adabelief": optax.adabelief(0.05),
  "lookahead_chain": optax.chain(optax.clip(1.0), optax.scale_by_adam(), optax.scale(-0.05)),
  "schedule": optax.adam(optax.exponential_decay(0.1, 2, 0.5)),
  "multi": optax.multi_transform({"a": optax.adam(0.05), "b": optax.sgd(0.1)}, {"w": "a", "b": "b"}),
}
out = {}
for name, tx in opts.items():
  try:
    p = params; s = tx.init(p)
    @jax.jit
    def step(p, s):
      l, g = jax.value_and_grad(loss)(p)
      u, s = tx.update(g, s, p)
      return optax.apply_updates(p, u), s, l
    ls = []
    for _ in range(5):
      p, s, l = step(p, s); ls.append(float(l))
    out[name] = ls
  except Exception as e:
    out[name] = f"{type(e).__name__}: {str(e)[:200]}"
x2 = jnp.linspace(-2, 2, 12).reshape(3, 4); y2 = jax.nn.softmax(jnp.arange(12.).reshape(3, 4))
for lname in ["sigmoid_binary_cross_entropy", "huber_loss", "log_cosh", "cosine_distance", "softmax_cross_entropy", "kl_divergence", "hinge_loss", "squared_error", "smooth_labels", "safe_softmax_cross_entropy", "poly_loss_cross_entropy", "sigmoid_focal_loss"]:
  try:
    f = getattr(optax, lname, None) or getattr(optax.losses, lname)
    if lname == "smooth_labels": r = f(y2, 0.1)
    elif lname in ("kl_divergence",): r = f(jnp.log(y2), jax.nn.softmax(x2))
    else: r = f(x2, y2)
    out[lname] = np.asarray(r, np.float64).round(5).tolist()
  except Exception as e:
    out[lname] = f"{type(e).__name__}: {str(e)[:200]}"
print(json.dumps(out))
