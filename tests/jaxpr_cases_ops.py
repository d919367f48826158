"""make_jaxpr cases of jnp.outer, isclose, nan_to_num, atleast_2d,
pad, tril/triu, kron, convolve and correlate, whose printed jaxprs
openjax prints as JAX 0.10.2 does. JAX's texts: ``data/jaxprs_ops_jax.json``
(``data/jnp_jaxprs_jax.py ops``); ``test_jaxpr_texts.py`` compares."""
import numpy as np


def cases(jax) -> dict:
  jnp = jax.numpy
  x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
  x3 = np.ones((2, 3, 4), np.float32)
  v = np.arange(6, dtype=np.int32)
  v3 = np.arange(3, dtype=np.float32)
  f = np.linspace(-1, 1, 5, dtype=np.float32)
  c = (f + 1j * f[::-1]).astype(np.complex64)

  def jaxpr(fn, *args):
    return lambda: str(jax.make_jaxpr(fn)(*args))
  return {
      "vstack": jaxpr(lambda a, b: jnp.vstack([a, b]), f, f),
      # jnp.where's _where jits inside another shared jaxpr (forward references)
      "hypot": jaxpr(jnp.hypot, x, x),
      "hypot_int": jaxpr(jnp.hypot, v, v),
      "pad_reflect": jaxpr(lambda a: jnp.pad(a, 1, mode="reflect"), x),
      # outer/kron: size-1 axes, the multiply broadcasting them
      "outer": jaxpr(jnp.outer, f, f[:3]),
      "outer_int": jaxpr(jnp.outer, v, v),
      "outer_2d": jaxpr(jnp.outer, x, f),
      "outer_mixed": jaxpr(jnp.outer, np.arange(3, dtype=np.int32), np.ones((2,), np.float32)),
      "outer_bool": jaxpr(jnp.outer, np.array([True, False]), np.array([True, True])),
      "kron": jaxpr(jnp.kron, x, x[:2, :2]),
      "kron_1d": jaxpr(jnp.kron, f, f),
      "kron_ranks": jaxpr(jnp.kron, x3, np.ones((2, 2), np.float32)),
      "kron_int_float": jaxpr(jnp.kron, np.arange(3, dtype=np.int32), np.ones((2,), np.float32)),
      # isclose: NaN test first, rtol/atol traced arguments
      "isclose": jaxpr(jnp.isclose, x, x),
      "isclose_int": jaxpr(jnp.isclose, v, v),
      "isclose_equal_nan": jaxpr(lambda a, b: jnp.isclose(a, b, equal_nan=True), x, x),
      # nan_to_num: jnp.where (_where), the replacements traced arguments
      "nan_to_num": jaxpr(jnp.nan_to_num, x),
      "nan_to_num_args": jaxpr(lambda a: jnp.nan_to_num(a, nan=1.0, posinf=2.0), x),
      "nan_to_num_int": jaxpr(jnp.nan_to_num, v),
      # atleast_2d: jit[name=atleast_2d]
      "atleast_2d": jaxpr(jnp.atleast_2d, v),
      "atleast_2d_2d": jaxpr(jnp.atleast_2d, x),
      "atleast_2d_scalar": jaxpr(jnp.atleast_2d, np.float32(1)),
      "atleast_2d_two": jaxpr(lambda a, b: jnp.atleast_2d(a, b), v, x),
      "pad_edge": jaxpr(lambda a: jnp.pad(a, 1, mode="edge"), x),
      "pad_wrap": jaxpr(lambda a: jnp.pad(a, 1, mode="wrap"), x),
      # tril/triu: the offset added first
      "tril": jaxpr(jnp.tril, x),
      "tril_k": jaxpr(lambda a: jnp.tril(a, 1), x),
      "tril_int": jaxpr(jnp.tril, v.reshape(2, 3)),
      "tril_batched": jaxpr(lambda a: jnp.tril(a, -1), x3),
      "triu": jaxpr(jnp.triu, x3[0]),
      # convolve/correlate: JAX's jit _conv (flip by _flip)
      "convolve": jaxpr(jnp.convolve, f, f[:3]),
      "convolve_same": jaxpr(lambda a, b: jnp.convolve(a, b, mode="same"), f, f[:3]),
      "convolve_valid": jaxpr(lambda a, b: jnp.convolve(a, b, mode="valid"), f, f[:3]),
      "convolve_short_first": jaxpr(jnp.convolve, f[:3], f),
      "convolve_int": jaxpr(jnp.convolve, np.arange(4, dtype=np.int32),
                            np.arange(2, dtype=np.int32)),
      "correlate": jaxpr(jnp.correlate, f, f[:3]),
      "correlate_full": jaxpr(lambda a, b: jnp.correlate(a, b, mode="full"), f, f[:3]),
      "correlate_same": jaxpr(lambda a, b: jnp.correlate(a, b, mode="same"), f, f[:2]),
      "correlate_short_first": jaxpr(lambda a, b: jnp.correlate(a, b, mode="full"), f[:3], f),
      "correlate_complex": jaxpr(jnp.correlate, c, c[:2]),
  }
