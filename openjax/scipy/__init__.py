"""``openjax.scipy``: SciPy functions on openjax arrays (``jax.scipy``)."""
from openjax.scipy import (cluster, fft, integrate, interpolate, linalg, ndimage,  # noqa: F401
                           optimize, sparse, spatial)
from openjax.scipy import signal  # noqa: F401
