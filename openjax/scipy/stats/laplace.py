"""``openjax.scipy.stats.laplace`` (``jax.scipy.stats.laplace``)."""
from openjax._src.scipy.stats.continuous import (  # noqa: F401
    laplace_cdf as cdf,
    laplace_logpdf as logpdf,
    laplace_pdf as pdf,
)
