"""The ``lax`` surface: every primitive wrapper, gathered from the family
modules (library code imports ``openjax._src.lax as lax``)."""
from openjax._src.primitives.closed_call import *  # noqa: F401,F403
from openjax._src.primitives.convert import *  # noqa: F401,F403
from openjax._src.primitives.custom_derivatives import stop_gradient  # noqa: F401
from openjax._src.primitives.dot import *  # noqa: F401,F403
from openjax._src.primitives.elementwise import *  # noqa: F401,F403
from openjax._src.primitives.elementwise import _convert_element_type  # noqa: F401
from openjax._src.primitives.indexing import *  # noqa: F401,F403
from openjax._src.primitives.reductions import *  # noqa: F401,F403
from openjax._src.primitives.shape import *  # noqa: F401,F403
from openjax._src.primitives.sort import *  # noqa: F401,F403
from openjax._src.primitives.special import *  # noqa: F401,F403
from openjax._src.lax.parallel import *  # noqa: F401,F403
from openjax._src.primitives.control_cond import *  # noqa: F401,F403
from openjax._src.primitives.control_while import *  # noqa: F401,F403
from openjax._src.primitives.control_scan import *  # noqa: F401,F403
from openjax._src.primitives.conv import *  # noqa: F401,F403
from openjax._src.primitives.windowed import *  # noqa: F401,F403
from openjax._src.lax.associative_scan import *  # noqa: F401,F403
from openjax._src.primitives import linalg  # noqa: F401 - ``lax.linalg``
from openjax._src.primitives.fft import *  # noqa: F401,F403
