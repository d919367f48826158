"""``jax.scipy.stats``' implementation: one module per family of
distributions, each function named ``<distribution>_<function>``
(``norm_logpdf``); ``openjax/scipy/stats/<distribution>.py`` re-exports them
under SciPy's names (``openjax.scipy.stats.norm.logpdf``)."""
