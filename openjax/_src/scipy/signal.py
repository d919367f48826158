"""jax.scipy.signal: convolutions and correlations."""

__all__: list[str] = []
