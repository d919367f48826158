"""``jax.random``: threefry2x32 keys and samplers, bit-identical to JAX 0.10
in its default configuration (``jax_threefry_partitionable=True``)."""
