"""make_jaxpr cases of jax.numpy's set functions (isin) whose printed
jaxprs openjax must print as JAX 0.10.2 does; JAX's texts are
``data/jaxprs_index_jax.json``."""
import numpy as np


def cases(jax) -> dict:
  jnp = jax.numpy
  v = np.arange(6, dtype=np.int32)
  fv = np.linspace(0, 1, 6, dtype=np.float32)

  def jaxpr(f, *args):
    return lambda: str(jax.make_jaxpr(f)(*args))
  return {
      # isin: JAX's jit[name=_in1d], promotion and ravel inside, reshape outside
      "isin": jaxpr(jnp.isin, v, v[:3]),
      "isin_f32": jaxpr(jnp.isin, fv, fv[:2]),
      "isin_invert": jaxpr(lambda a, b: jnp.isin(a, b, invert=True), v, v[:3]),
  }
