"""``openjax.scipy.cluster`` (``jax.scipy.cluster``)."""
from openjax.scipy.cluster import vq  # noqa: F401
