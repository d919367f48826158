"""``openjax.scipy.stats.nbinom`` (``jax.scipy.stats.nbinom``)."""
from openjax._src.scipy.stats.discrete import (  # noqa: F401
    nbinom_logpmf as logpmf,
    nbinom_pmf as pmf,
)
