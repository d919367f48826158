"""``openjax.extend.source_info_util`` (``jax.extend.source_info_util``)."""
from openjax._src.extend import register_exclusion  # noqa: F401
