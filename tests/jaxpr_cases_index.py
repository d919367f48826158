"""make_jaxpr cases of jax.numpy's searching and set functions (isin,
searchsorted) whose printed jaxprs openjax must print as JAX 0.10.2 does;
JAX's texts are ``data/jaxprs_index_jax.json``."""
import numpy as np


def cases(jax) -> dict:
  jnp = jax.numpy
  v = np.arange(6, dtype=np.int32)
  fv = np.linspace(0, 1, 6, dtype=np.float32)

  def jaxpr(f, *args):
    return lambda: str(jax.make_jaxpr(f)(*args))
  f4 = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
  return {
      # interp's jit holds _where jits printed as shared lets (the printer
      # names every shared jaxpr before printing any)
      "interp": jaxpr(jnp.interp, f4[0], f4[1], f4[2]),
      "interp_i32": jaxpr(jnp.interp, v, v, fv),
      "isin": jaxpr(jnp.isin, v, v[:3]),
      "isin_f32": jaxpr(jnp.isin, fv, fv[:2]),
      "isin_invert": jaxpr(lambda a, b: jnp.isin(a, b, invert=True), v, v[:3]),
      "searchsorted": jaxpr(jnp.searchsorted, v, v),
      "searchsorted_right": jaxpr(lambda a, b: jnp.searchsorted(a, b, side="right"), fv, fv[:3]),
      "searchsorted_scalar": jaxpr(jnp.searchsorted, fv, np.float32(0.5)),
  }
