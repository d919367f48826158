"""``openjax.scipy.stats.expon`` (``jax.scipy.stats.expon``)."""
from openjax._src.scipy.stats.continuous import (  # noqa: F401
    expon_cdf as cdf,
    expon_logcdf as logcdf,
    expon_logpdf as logpdf,
    expon_logsf as logsf,
    expon_pdf as pdf,
    expon_ppf as ppf,
    expon_sf as sf,
)
