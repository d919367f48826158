"""``openjax.scipy.sparse`` (``jax.scipy.sparse``)."""
from openjax.scipy.sparse import linalg  # noqa: F401
