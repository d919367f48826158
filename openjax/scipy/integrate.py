"""``openjax.scipy.integrate`` (``jax.scipy.integrate``)."""
from openjax._src.scipy.integrate import *  # noqa: F401,F403
