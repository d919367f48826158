"""``openjax.scipy.stats.geom`` (``jax.scipy.stats.geom``)."""
from openjax._src.scipy.stats.discrete import (  # noqa: F401
    geom_logpmf as logpmf,
    geom_pmf as pmf,
)
