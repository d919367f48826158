"""``openjax.scipy.stats.wrapcauchy`` (``jax.scipy.stats.wrapcauchy``)."""
from openjax._src.scipy.stats.continuous import (  # noqa: F401
    wrapcauchy_logpdf as logpdf,
    wrapcauchy_pdf as pdf,
)
