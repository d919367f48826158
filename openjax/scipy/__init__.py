"""``openjax.scipy``: SciPy functions on openjax arrays (``jax.scipy``)."""
from openjax.scipy import signal  # noqa: F401
