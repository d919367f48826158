"""``openjax.scipy.linalg`` (``jax.scipy.linalg``)."""
from openjax._src.scipy.linalg import *  # noqa: F401,F403
from openjax._src.scipy.linalg_expm import *  # noqa: F401,F403
from openjax._src.scipy.linalg_matrices import *  # noqa: F401,F403
from openjax._src.scipy.linalg_schur import *  # noqa: F401,F403
