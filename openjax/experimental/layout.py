"""``openjax.experimental.layout`` (``jax.experimental.layout``)."""
from openjax._src.layout import Format, Layout  # noqa: F401
