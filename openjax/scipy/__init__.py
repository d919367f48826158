"""``openjax.scipy``: SciPy functions on openjax arrays (``jax.scipy``)."""
from openjax.scipy import (cluster, fft, integrate, interpolate, linalg, ndimage,  # noqa: F401
                           optimize, sparse, spatial)
from openjax.scipy import signal  # noqa: F401
from openjax.scipy import special  # noqa: F401
from openjax.scipy import stats  # noqa: F401
