"""``openjax.debug``: debugging helpers (``jax.debug``)."""
from openjax._src.sharding.visualize import (  # noqa: F401
    visualize_array_sharding, visualize_sharding)
