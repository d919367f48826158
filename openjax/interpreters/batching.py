"""``openjax.interpreters.batching`` (``jax.interpreters.batching``): batching rule tables."""
from openjax._src.extend_rules import axis_primitive_batchers, primitive_batchers  # noqa: F401

not_mapped = None
