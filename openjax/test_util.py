"""Testing helpers (``jax.test_util``)."""
from openjax._src.testing.check_grads import check_grads, check_jvp, check_vjp  # noqa: F401
