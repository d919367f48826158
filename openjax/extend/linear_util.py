"""``openjax.extend.linear_util`` (``jax.extend.linear_util``): wrapped functions."""
from openjax._src.extend import WrappedFun, wrap_init  # noqa: F401
