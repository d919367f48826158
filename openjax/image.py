"""``openjax.image`` (``jax.image``): image resizing and resampling."""
from openjax._src.image.scale import ResizeMethod, resize, scale_and_translate  # noqa: F401
