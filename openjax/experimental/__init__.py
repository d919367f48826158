"""``openjax.experimental`` (``jax.experimental``): APIs JAX marks experimental."""
io_callback = None  # SCRATCH
