"""``openjax.scipy.special`` (``jax.scipy.special``)."""
from openjax._src.scipy.special import *  # noqa: F401,F403
from openjax._src.scipy.special_error import *  # noqa: F401,F403
from openjax._src.scipy.special_hypergeometric import *  # noqa: F401,F403
from openjax._src.scipy.special_series import *  # noqa: F401,F403
