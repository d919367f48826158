"""``openjax.scipy.stats.dirichlet`` (``jax.scipy.stats.dirichlet``)."""
from openjax._src.scipy.stats.multivariate import (  # noqa: F401
    dirichlet_logpdf as logpdf,
    dirichlet_pdf as pdf,
)
