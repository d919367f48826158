"""``openjax.scipy.stats.multinomial`` (``jax.scipy.stats.multinomial``)."""
from openjax._src.scipy.stats.multivariate import (  # noqa: F401
    multinomial_logpmf as logpmf,
    multinomial_pmf as pmf,
)
