"""``jax.image``'s implementation: resampling by separable weight matrices."""
