"""``openjax.scipy.optimize`` (``jax.scipy.optimize``)."""
from openjax._src.scipy.optimize import *  # noqa: F401,F403
