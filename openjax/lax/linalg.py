"""``openjax.lax.linalg``: matrix decompositions as primitives (``jax.lax.linalg``)."""
from openjax._src.lax.linalg import *  # noqa: F401,F403
