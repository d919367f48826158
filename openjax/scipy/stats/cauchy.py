"""``openjax.scipy.stats.cauchy`` (``jax.scipy.stats.cauchy``)."""
from openjax._src.scipy.stats.continuous import (  # noqa: F401
    cauchy_cdf as cdf,
    cauchy_isf as isf,
    cauchy_logcdf as logcdf,
    cauchy_logpdf as logpdf,
    cauchy_logsf as logsf,
    cauchy_pdf as pdf,
    cauchy_ppf as ppf,
    cauchy_sf as sf,
)
