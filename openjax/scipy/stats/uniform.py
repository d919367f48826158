"""``openjax.scipy.stats.uniform`` (``jax.scipy.stats.uniform``)."""
from openjax._src.scipy.stats.continuous import (  # noqa: F401
    uniform_cdf as cdf,
    uniform_logpdf as logpdf,
    uniform_pdf as pdf,
    uniform_ppf as ppf,
)
