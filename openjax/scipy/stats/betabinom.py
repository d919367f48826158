"""``openjax.scipy.stats.betabinom`` (``jax.scipy.stats.betabinom``)."""
from openjax._src.scipy.stats.discrete import (  # noqa: F401
    betabinom_logpmf as logpmf,
    betabinom_pmf as pmf,
)
