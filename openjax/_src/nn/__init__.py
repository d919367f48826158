"""``jax.nn``: activations, normalisations, attention and initializers, written
with ``jax.numpy``, ``lax`` and custom derivatives (public surface in
``openjax/nn``)."""
