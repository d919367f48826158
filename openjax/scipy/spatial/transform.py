"""``openjax.scipy.spatial.transform`` (``jax.scipy.spatial.transform``)."""
from openjax._src.scipy.spatial_transform import *  # noqa: F401,F403
