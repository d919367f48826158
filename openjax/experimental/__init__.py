"""``jax.experimental``: the deprecated homes JAX still serves."""
