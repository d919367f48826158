"""openjax quick start: the NumPy API, jit, and the jaxpr a function stages."""
import numpy as np

import openjax as jax
import openjax.numpy as jnp


def predict(w, b, x):
  return jnp.tanh(x @ w + b)


rng = np.random.default_rng(0)
x = jnp.asarray(rng.normal(size=(4, 3)).astype(np.float32))
w = jnp.ones((3, 2)) * 0.5
b = jnp.zeros(2)

print("eager:", predict(w, b, x))
fast_predict = jax.jit(predict)
print("jit:  ", fast_predict(w, b, x))
print(jax.make_jaxpr(predict)(w, b, x))

y = jnp.arange(6.0).reshape(2, 3)
print(y.at[0, 1].set(10.0))
print(jax.tree_util.tree_map(lambda a: a * 2, {"w": w, "b": b}))
