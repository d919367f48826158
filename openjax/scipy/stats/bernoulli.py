"""``openjax.scipy.stats.bernoulli`` (``jax.scipy.stats.bernoulli``)."""
from openjax._src.scipy.stats.discrete import (  # noqa: F401
    bernoulli_cdf as cdf,
    bernoulli_logpmf as logpmf,
    bernoulli_pmf as pmf,
    bernoulli_ppf as ppf,
)
