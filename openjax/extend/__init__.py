"""``openjax.extend`` (``jax.extend``): interfaces for libraries that build on
openjax's internals: ``core`` (primitives, jaxprs), ``linear_util`` (wrapped
functions) and ``source_info_util``."""
from openjax.extend import core, linear_util, source_info_util  # noqa: F401
