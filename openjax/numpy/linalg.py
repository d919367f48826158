"""``openjax.numpy.linalg``: linear algebra on openjax arrays (``jax.numpy.linalg``)."""
from openjax._src.numpy.linalg import *  # noqa: F401,F403
