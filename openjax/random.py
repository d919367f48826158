"""``openjax.random``: pseudo-random numbers from explicit keys (``jax.random``).

Keys are threefry2x32 keys, made with :func:`key` (typed, dtype ``key<fry>``)
or :func:`PRNGKey` (legacy ``uint32[2]`` data); every sampler takes a key as
its first argument and gives JAX's values for the same key.
"""
from openjax._src.control.random_loops import random_gamma_p  # noqa: F401
from openjax._src.random.keys import (  # noqa: F401
    PRNGKey, bits, clone, fold_in, key, key_data, key_dtype, key_impl, split, wrap_key_data)
from openjax._src.random.samplers import (  # noqa: F401
    bernoulli, categorical, choice, gumbel, normal, permutation, rademacher, randint,
    truncated_normal, uniform)
from openjax._src.random.samplers_continuous import (  # noqa: F401
    cauchy, double_sided_maxwell, exponential, geometric, laplace, logistic, lognormal, maxwell,
    multivariate_normal, orthogonal, pareto, rayleigh, triangular, wald, weibull_min)
from openjax._src.random.samplers_gamma import (  # noqa: F401
    ball, beta, binomial, chisquare, dirichlet, f, gamma, generalized_normal, loggamma,
    multinomial, poisson, t)
