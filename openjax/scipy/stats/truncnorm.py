"""``openjax.scipy.stats.truncnorm`` (``jax.scipy.stats.truncnorm``)."""
from openjax._src.scipy.stats.incomplete import (  # noqa: F401
    truncnorm_cdf as cdf,
    truncnorm_logcdf as logcdf,
    truncnorm_logpdf as logpdf,
    truncnorm_logsf as logsf,
    truncnorm_pdf as pdf,
    truncnorm_sf as sf,
)
