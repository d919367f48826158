"""``openjax.scipy``: SciPy functions on openjax arrays (``jax.scipy``)."""
from openjax.scipy import signal  # noqa: F401
from openjax.scipy import linalg  # noqa: F401
from openjax.scipy import cluster, fft, integrate  # noqa: F401
from openjax.scipy import interpolate, ndimage  # noqa: F401
from openjax.scipy import sparse  # noqa: F401
from openjax.scipy import optimize  # noqa: F401
from openjax.scipy import spatial  # noqa: F401
