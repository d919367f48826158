"""make_jaxpr cases of jax.numpy / jax.nn functions whose printed jaxprs
openjax must print as JAX 0.10.2 does (DESIGN decision 12: the printed jaxpr
is part of what JAX defines). ``cases(jax)`` gives name -> a thunk printing
the jaxpr under ``jax`` (JAX itself, or openjax). JAX's texts are stored in
``data/jaxprs_jax.json`` (written by ``data/jnp_jaxprs_jax.py`` in a
JAX venv); ``test_jaxpr_texts.py`` compares."""
import numpy as np


def cases(jax) -> dict:
  jnp, lax = jax.numpy, jax.lax
  x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
  v = np.arange(6, dtype=np.int32)
  b = np.array([True, False, True])

  def jaxpr(f, *args):
    return lambda: str(jax.make_jaxpr(f)(*args))
  return {
      "any": jaxpr(jnp.any, b),
      "arange_like": jaxpr(lambda a: a + jnp.arange(4), x),
      "argmax": jaxpr(lambda a: jnp.argmax(a, axis=1), x),
      "argsort": jaxpr(jnp.argsort, x),
      "array_equal": jaxpr(jnp.array_equal, x, x),
      "average": jaxpr(lambda a: jnp.average(a, axis=0, weights=np.ones(3, np.float32)), x),
      "clip": jaxpr(lambda a: jnp.clip(a, -0.5, 0.5), x),
      "concatenate": jaxpr(lambda a: jnp.concatenate([a, a]), x),
      "count_nonzero": jaxpr(jnp.count_nonzero, v),
      "cumprod": jaxpr(jnp.cumprod, x),
      "cumsum": jaxpr(lambda a: jnp.cumsum(a, axis=1), x),
      "einsum": jaxpr(lambda a: jnp.einsum("ij,kj->ik", a, a), x),
      "expand_dims": jaxpr(lambda a: jnp.expand_dims(a, 0), x),
      "eye": jaxpr(lambda a: a + jnp.eye(3, 4), x),
      "full_like": jaxpr(lambda a: jnp.full_like(a, 2.0), x),
      "gelu": jaxpr(jax.nn.gelu, x),
      "lexsort": jaxpr(lambda a: jnp.lexsort((a, a)), v),
      "logaddexp": jaxpr(jnp.logaddexp, x, x),
      "matmul": jaxpr(jnp.matmul, x, x.T),
      "mean": jaxpr(jnp.mean, x),
      "meshgrid": jaxpr(lambda a: jnp.meshgrid(a, a), v),
      "moveaxis": jaxpr(lambda a: jnp.moveaxis(a, 0, 1), x),
      "norm": jaxpr(jnp.linalg.norm, x),
      "norm_axis": jaxpr(lambda a: jnp.linalg.norm(a, axis=1), x),
      "one_hot": jaxpr(lambda a: jax.nn.one_hot(a, 6), v),
      "partition": jaxpr(lambda a: jnp.partition(a, 2), v),
      "polyval": jaxpr(jnp.polyval, x[0], x[1]),
      "relu": jaxpr(jax.nn.relu, x),
      "repeat": jaxpr(lambda a: jnp.repeat(a, 2), v),
      "roll": jaxpr(lambda a: jnp.roll(a, 2, axis=1), x),
      "round": jaxpr(lambda a: jnp.round(a, 2), x),
      "sort": jaxpr(jnp.sort, x),
      "squeeze": jaxpr(lambda a: jnp.squeeze(a[None]), x),
      "stack": jaxpr(lambda a: jnp.stack([a, a]), x),
      "take": jaxpr(lambda a: jnp.take(a, np.array([0, 2]), axis=1), x),
      "tile": jaxpr(lambda a: jnp.tile(a, 2), v),
      "trapezoid": jaxpr(jnp.trapezoid, x[0]),
      "where": jaxpr(lambda a: jnp.where(a > 0, a, 0.0), x),
      # reduce_max/reduce_min have no out_sharding parameter (reduce_sum's has)
      "max_axis": jaxpr(lambda a: jnp.max(a, axis=1), x),
      "min": jaxpr(jnp.min, x),
      "lax_reduce_max": jaxpr(lambda a: lax.reduce_max(a, (1,)), x),
      "amax_keepdims": jaxpr(lambda a: jnp.amax(a, axis=1, keepdims=True), x),
      "logsumexp": jaxpr(lambda a: jax.nn.logsumexp(a, axis=1), x),
      "softmax": jaxpr(jax.nn.softmax, x),
      "sum_axis": jaxpr(lambda a: jnp.sum(a, axis=1), x),
      "prod_axis": jaxpr(lambda a: jnp.prod(a, axis=0), x),
      # flips: JAX's _flip jit (eager calls bind rev directly)
      "flip": jaxpr(jnp.flip, x),
      "flip_axis": jaxpr(lambda a: jnp.flip(a, 1), x),
      "flip_axes_list": jaxpr(lambda a: jnp.flip(a, [0, 1]), x),
      "fliplr": jaxpr(jnp.fliplr, x),
      "flipud": jaxpr(jnp.flipud, x),
      "rot90": jaxpr(jnp.rot90, x),
      "rot90_k2": jaxpr(lambda a: jnp.rot90(a, 2), x),
      "rot90_k3_axes": jaxpr(lambda a: jnp.rot90(a, 3, axes=(1, 0)), x),
      "flip_in_jit": jaxpr(jax.jit(lambda a: jnp.flip(a) * 2), x),
  }
