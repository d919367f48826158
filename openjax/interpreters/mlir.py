"""``openjax.interpreters.mlir`` (``jax.interpreters.mlir``): lowering registration."""
from openjax._src.extend_rules import lower_fun, register_lowering  # noqa: F401
