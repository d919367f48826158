"""``openjax.scipy.spatial`` (``jax.scipy.spatial``)."""
from openjax.scipy.spatial import transform  # noqa: F401
