"""``openjax.scipy.stats.pareto`` (``jax.scipy.stats.pareto``)."""
from openjax._src.scipy.stats.continuous import (  # noqa: F401
    pareto_cdf as cdf,
    pareto_logcdf as logcdf,
    pareto_logpdf as logpdf,
    pareto_logsf as logsf,
    pareto_pdf as pdf,
    pareto_ppf as ppf,
    pareto_sf as sf,
)
