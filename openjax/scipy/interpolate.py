"""``openjax.scipy.interpolate`` (``jax.scipy.interpolate``)."""
from openjax._src.scipy.interpolate import *  # noqa: F401,F403
