"""chex basics under python -m openjax: shape/rank/type/tree asserts, chex.dataclass
as a pytree, assert_max_traces under jit, fake_jit; prints "chex ok" at the end."""
import jax, jax.numpy as jnp, chex
x = jnp.ones((2, 3))
chex.assert_shape(x, (2, 3)); chex.assert_rank(x, 2); chex.assert_type(x, float)
chex.assert_trees_all_close({"a": x}, {"a": x + 1e-7})
chex.assert_tree_all_finite({"a": x})
@chex.dataclass
class P:
  w: chex.Array
  b: chex.Array
p = P(w=x, b=jnp.zeros(3))
print(jax.tree.map(lambda t: t * 2, p).w.sum())
@jax.jit
@chex.assert_max_traces(n=1)
def f(x): return x * 2
f(x); f(x)
with chex.fake_jit():
  print(jax.jit(lambda v: v + 1)(1.0))
try:
  chex.assert_shape(x, (3, 3))
except AssertionError as e: print("shape error ok")
print(chex.assert_equal_shape([x, x]) is None)
print("chex ok")
