"""``openjax.nn``: common functions for neural network libraries (``jax.nn``)."""
from openjax._src.numpy.ufuncs import tanh  # noqa: F401
from openjax.nn import initializers  # noqa: F401
from openjax._src.nn.activations import *  # noqa: F401,F403
from openjax._src.nn.normalization import *  # noqa: F401,F403
from openjax._src.nn.softmax import *  # noqa: F401,F403
from openjax._src.nn.attention import *  # noqa: F401,F403
from openjax._src.nn.scaled import (  # noqa: F401
    get_scaled_dot_general_config, scaled_dot_general, scaled_matmul)
