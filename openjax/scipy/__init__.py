"""``openjax.scipy``: SciPy functions on openjax arrays (``jax.scipy``)."""
from openjax.scipy import signal  # noqa: F401
from openjax.scipy import stats, special  # SCRATCH
