"""``openjax.scipy.stats.binom`` (``jax.scipy.stats.binom``)."""
from openjax._src.scipy.stats.discrete import (  # noqa: F401
    binom_logpmf as logpmf,
    binom_pmf as pmf,
)
