"""``jax.example_libraries``' implementation: the small optimizer and layer
libraries that JAX's tutorials import (``optimizers``, ``stax``)."""
