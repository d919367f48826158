"""``openjax.numpy.fft``: discrete Fourier transforms (``jax.numpy.fft``)."""
from openjax._src.numpy.fft import *  # noqa: F401,F403
