"""``openjax.scipy.fft`` (``jax.scipy.fft``)."""
from openjax._src.scipy.fft import *  # noqa: F401,F403
