"""``openjax.interpreters`` (``jax.interpreters``): the transformation
machinery libraries reach into; so far ``partial_eval``."""
