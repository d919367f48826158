"""``openjax.scipy.stats.chi2`` (``jax.scipy.stats.chi2``)."""
from openjax._src.scipy.stats.incomplete import (  # noqa: F401
    chi2_cdf as cdf,
    chi2_logcdf as logcdf,
    chi2_logpdf as logpdf,
    chi2_logsf as logsf,
    chi2_pdf as pdf,
    chi2_sf as sf,
)
