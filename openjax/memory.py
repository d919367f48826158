"""``openjax.memory`` (``jax.memory``): memory spaces."""
from openjax._src.core.devices import MemorySpace as Space  # noqa: F401
