"""``openjax.scipy.ndimage`` (``jax.scipy.ndimage``)."""
from openjax._src.scipy.ndimage import *  # noqa: F401,F403
