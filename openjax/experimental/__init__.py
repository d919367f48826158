"""``jax.experimental``."""
from openjax._src.control.callbacks import io_callback  # noqa: F401
