"""``openjax.scipy.stats`` (``jax.scipy.stats``): one module per distribution
(``stats.norm.logpdf``) and the summary statistics."""
from openjax.scipy.stats import bernoulli  # noqa: F401
from openjax.scipy.stats import beta  # noqa: F401
from openjax.scipy.stats import betabinom  # noqa: F401
from openjax.scipy.stats import binom  # noqa: F401
from openjax.scipy.stats import cauchy  # noqa: F401
from openjax.scipy.stats import chi2  # noqa: F401
from openjax.scipy.stats import dirichlet  # noqa: F401
from openjax.scipy.stats import expon  # noqa: F401
from openjax.scipy.stats import gamma  # noqa: F401
from openjax.scipy.stats import gennorm  # noqa: F401
from openjax.scipy.stats import geom  # noqa: F401
from openjax.scipy.stats import gumbel_l  # noqa: F401
from openjax.scipy.stats import gumbel_r  # noqa: F401
from openjax.scipy.stats import laplace  # noqa: F401
from openjax.scipy.stats import logistic  # noqa: F401
from openjax.scipy.stats import multinomial  # noqa: F401
from openjax.scipy.stats import multivariate_normal  # noqa: F401
from openjax.scipy.stats import nbinom  # noqa: F401
from openjax.scipy.stats import norm  # noqa: F401
from openjax.scipy.stats import pareto  # noqa: F401
from openjax.scipy.stats import poisson  # noqa: F401
from openjax.scipy.stats import t  # noqa: F401
from openjax.scipy.stats import truncnorm  # noqa: F401
from openjax.scipy.stats import uniform  # noqa: F401
from openjax.scipy.stats import vonmises  # noqa: F401
from openjax.scipy.stats import wrapcauchy  # noqa: F401
from openjax._src.scipy.stats.kde import gaussian_kde  # noqa: F401
from openjax._src.scipy.stats.summary import mode, rankdata, sem  # noqa: F401
