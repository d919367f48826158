"""``openjax.flatten_util`` (``jax.flatten_util``): pytrees as flat vectors."""
from openjax._src.flatten_util import ravel_pytree  # noqa: F401
