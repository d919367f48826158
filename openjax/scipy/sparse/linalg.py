"""``openjax.scipy.sparse.linalg`` (``jax.scipy.sparse.linalg``)."""
from openjax._src.scipy.sparse_linalg import *  # noqa: F401,F403
