"""The ``jax.numpy`` functions ``jax.scipy`` is written with (the library
layer's view of ``openjax._src.numpy``; the same names as ``openjax.numpy``)."""
from openjax._src.numpy.creation import *  # noqa: F401,F403
from openjax._src.numpy.einsum import einsum  # noqa: F401
from openjax._src.numpy import linalg  # noqa: F401 - ``jnp.linalg``
from openjax._src.numpy.functional import *  # noqa: F401,F403
from openjax._src.numpy.indexing import *  # noqa: F401,F403
from openjax._src.numpy.repeating import *  # noqa: F401,F403
from openjax._src.numpy.linalg_ops import *  # noqa: F401,F403
from openjax._src.numpy.misc import *  # noqa: F401,F403
from openjax._src.numpy.nan_reductions import *  # noqa: F401,F403
from openjax._src.numpy.polynomial import *  # noqa: F401,F403
from openjax._src.numpy.ranges import *  # noqa: F401,F403
from openjax._src.numpy.reductions import *  # noqa: F401,F403
from openjax._src.numpy.scalar_types import *  # noqa: F401,F403
from openjax._src.numpy.searching import *  # noqa: F401,F403
from openjax._src.numpy.shape_joining import *  # noqa: F401,F403
from openjax._src.numpy.shape_padding import *  # noqa: F401,F403
from openjax._src.numpy.shape_reshaping import *  # noqa: F401,F403
from openjax._src.numpy.sorting import *  # noqa: F401,F403
from openjax._src.numpy.statistics import *  # noqa: F401,F403
from openjax._src.numpy.stats import *  # noqa: F401,F403
from openjax._src.numpy.ufuncs import *  # noqa: F401,F403
from openjax._src.numpy.ufuncs_bitwise import *  # noqa: F401,F403
from openjax._src.numpy.ufuncs_float import *  # noqa: F401,F403
from openjax._src.numpy.vectorize import *  # noqa: F401,F403
