"""``openjax.scipy.signal`` (``jax.scipy.signal``)."""
from openjax._src.scipy.signal import *  # noqa: F401,F403
from openjax._src.scipy.signal_spectral import *  # noqa: F401,F403
