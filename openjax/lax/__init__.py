"""``openjax.lax``: the primitive operations under ``openjax.numpy`` (``jax.lax``)."""
from openjax._src.lax import *  # noqa: F401,F403
