"""``openjax.nn.initializers``: common layer initializers, consistent with the
definitions used in Keras and Sonnet (``jax.nn.initializers``)."""
from openjax._src.nn.initializers import *  # noqa: F401,F403
from openjax._src.nn.initializers_orthogonal import *  # noqa: F401,F403
