"""``openjax.scipy.stats.vonmises`` (``jax.scipy.stats.vonmises``)."""
from openjax._src.scipy.stats.continuous import (  # noqa: F401
    vonmises_logpdf as logpdf,
    vonmises_pdf as pdf,
)
