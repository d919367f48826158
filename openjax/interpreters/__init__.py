"""``openjax.interpreters`` (``jax.interpreters``): the transformation
machinery libraries reach into: ``ad``, ``batching`` and ``mlir`` rule
tables for primitives defined with ``jax.extend.core.Primitive``, and
``partial_eval``."""
