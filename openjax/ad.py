"""``openjax.ad`` (``jax.ad``): markers for gradients with refs."""
from openjax._src.api.ad_markers import DidntWant, DontWant, GradRef, GradValue  # noqa: F401
