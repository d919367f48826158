"""``openjax.scipy.cluster.vq`` (``jax.scipy.cluster.vq``)."""
from openjax._src.scipy.cluster import *  # noqa: F401,F403
