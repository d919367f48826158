"""The ``lax`` surface: every primitive wrapper, gathered from the family
modules (library code imports ``openjax._src.lax as lax``)."""
from openjax._src.primitives.convert import *  # noqa: F401,F403
from openjax._src.primitives.ad_util import stop_gradient  # noqa: F401
from openjax._src.primitives.dot import *  # noqa: F401,F403
from openjax._src.primitives.elementwise import *  # noqa: F401,F403
from openjax._src.primitives.elementwise import _convert_element_type  # noqa: F401
from openjax._src.primitives.indexing import *  # noqa: F401,F403
from openjax._src.primitives.reductions import *  # noqa: F401,F403
from openjax._src.primitives.shape import *  # noqa: F401,F403
from openjax._src.primitives.sort import *  # noqa: F401,F403
from openjax._src.primitives.special import *  # noqa: F401,F403
from openjax._src.primitives.conv import *  # noqa: F401,F403
from openjax._src.primitives import linalg  # noqa: F401 - ``lax.linalg``
from openjax._src.primitives.fft import *  # noqa: F401,F403
from openjax._src.control.closed_call import *  # noqa: F401,F403
from openjax._src.control.cond import *  # noqa: F401,F403
from openjax._src.control.while_loop import *  # noqa: F401,F403
from openjax._src.control.scan import *  # noqa: F401,F403
from openjax._src.control.windowed import *  # noqa: F401,F403
# The traced lowerings of linalg's and fft's primitives are set on import.
from openjax._src.control import fft_lowering, linalg_lowering  # noqa: F401
from openjax._src.lax.parallel import *  # noqa: F401,F403
from openjax._src.lax.associative_scan import *  # noqa: F401,F403
