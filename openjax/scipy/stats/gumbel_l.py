"""``openjax.scipy.stats.gumbel_l`` (``jax.scipy.stats.gumbel_l``)."""
from openjax._src.scipy.stats.continuous import (  # noqa: F401
    gumbel_l_cdf as cdf,
    gumbel_l_logcdf as logcdf,
    gumbel_l_logpdf as logpdf,
    gumbel_l_logsf as logsf,
    gumbel_l_pdf as pdf,
    gumbel_l_ppf as ppf,
    gumbel_l_sf as sf,
)
