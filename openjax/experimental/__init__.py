"""``openjax.experimental`` (``jax.experimental``): APIs JAX marks experimental."""
from openjax._src.control.callbacks import io_callback  # noqa: F401
from openjax.experimental import checkify  # noqa: F401
