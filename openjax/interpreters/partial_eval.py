"""``openjax.interpreters.partial_eval`` (``jax.interpreters.partial_eval``)."""
from openjax._src.extend import PartialVal, trace_to_jaxpr_nounits  # noqa: F401
