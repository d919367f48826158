"""``openjax.scipy.stats.poisson`` (``jax.scipy.stats.poisson``)."""
from openjax._src.scipy.stats.discrete import (  # noqa: F401
    poisson_cdf as cdf,
    poisson_entropy as entropy,
    poisson_logpmf as logpmf,
    poisson_pmf as pmf,
)
