"""``openjax.example_libraries`` (``jax.example_libraries``): ``optimizers`` and ``stax``."""
