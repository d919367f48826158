"""``openjax.scipy.stats.multivariate_normal`` (``jax.scipy.stats.multivariate_normal``)."""
from openjax._src.scipy.stats.multivariate import (  # noqa: F401
    multivariate_normal_logpdf as logpdf,
    multivariate_normal_pdf as pdf,
)
