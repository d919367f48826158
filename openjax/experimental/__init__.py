"""``openjax.experimental`` (``jax.experimental``): APIs JAX marks experimental."""
from openjax._src.control.callbacks import io_callback  # noqa: F401
from openjax.experimental import checkify, hijax  # noqa: F401
from openjax._src.hijax import cur_qdd  # noqa: F401
