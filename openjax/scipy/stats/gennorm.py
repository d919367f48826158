"""``openjax.scipy.stats.gennorm`` (``jax.scipy.stats.gennorm``)."""
from openjax._src.scipy.stats.continuous import (  # noqa: F401
    gennorm_cdf as cdf,
    gennorm_logpdf as logpdf,
    gennorm_pdf as pdf,
)
