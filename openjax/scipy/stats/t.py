"""``openjax.scipy.stats.t`` (``jax.scipy.stats.t``)."""
from openjax._src.scipy.stats.continuous import (  # noqa: F401
    t_logpdf as logpdf,
    t_pdf as pdf,
)
