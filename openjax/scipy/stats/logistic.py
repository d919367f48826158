"""``openjax.scipy.stats.logistic`` (``jax.scipy.stats.logistic``)."""
from openjax._src.scipy.stats.continuous import (  # noqa: F401
    logistic_cdf as cdf,
    logistic_isf as isf,
    logistic_logpdf as logpdf,
    logistic_pdf as pdf,
    logistic_ppf as ppf,
    logistic_sf as sf,
)
