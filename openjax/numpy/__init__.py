"""``openjax.numpy``: the NumPy API on immutable openjax arrays (``jax.numpy``)."""
from openjax._src.numpy.creation import *  # noqa: F401,F403
from openjax._src.numpy.scalar_types import *  # noqa: F401,F403
from openjax._src.numpy.ufuncs_bitwise import *  # noqa: F401,F403
from openjax._src.numpy.ufuncs_float import *  # noqa: F401,F403
from openjax._src.numpy.ufuncs import *  # noqa: F401,F403
from openjax._src.numpy.shape_reshaping import *  # noqa: F401,F403
from openjax._src.numpy.shape_joining import *  # noqa: F401,F403
from openjax._src.numpy.indexing import *  # noqa: F401,F403
from openjax._src.numpy.repeating import *  # noqa: F401,F403
from openjax._src.numpy.reductions import *  # noqa: F401,F403
from openjax._src.numpy.nan_reductions import *  # noqa: F401,F403
from openjax._src.numpy.misc import *  # noqa: F401,F403
from openjax._src.numpy.statistics import *  # noqa: F401,F403
from openjax._src.numpy.searching import *  # noqa: F401,F403
from openjax._src.numpy.sorting import *  # noqa: F401,F403
from openjax._src.numpy.shape_padding import *  # noqa: F401,F403
from openjax._src.numpy.linalg_ops import *  # noqa: F401,F403
from openjax._src.numpy.ranges import *  # noqa: F401,F403
from openjax._src.numpy.convolution import *  # noqa: F401,F403
from openjax._src.numpy.stats import *  # noqa: F401,F403
from openjax._src.numpy.polynomial import *  # noqa: F401,F403
from openjax._src.numpy.setops import *  # noqa: F401,F403
from openjax._src.numpy.index_tricks import *  # noqa: F401,F403
from openjax._src.numpy.bits import *  # noqa: F401,F403
from openjax._src.numpy.histograms import *  # noqa: F401,F403
from openjax._src.numpy.windows import *  # noqa: F401,F403
from openjax._src.numpy.vectorize import *  # noqa: F401,F403
from openjax._src.numpy.functional import *  # noqa: F401,F403
from openjax._src.numpy.ufunc_api import *  # noqa: F401,F403
from openjax._src.numpy.array_methods import ndarray  # noqa: F401
from openjax.numpy import fft  # noqa: F401 - the jnp.fft submodule
from openjax.numpy import linalg  # noqa: F401 - the jnp.linalg submodule
