"""``openjax.experimental`` (``jax.experimental``): APIs JAX marks experimental."""
