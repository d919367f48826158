"""reduce_p (custom monoidal reductions) and the reduce_window family: the
``lax`` surface of ``reduce_variadic``, ``reduce_window`` (with the monoid
primitives of ``reduce_window_monoid``) and ``select_and_gather``."""
from openjax._src.control import reduce_variadic as _reduce_variadic
from openjax._src.control import reduce_window as _reduce_window
from openjax._src.control.reduce_variadic import *  # noqa: F401,F403
from openjax._src.control.reduce_window import *  # noqa: F401,F403
from openjax._src.primitives.reduce import reduce_window_monoid as _reduce_window_monoid
from openjax._src.primitives.reduce import select_and_gather as _select_and_gather
from openjax._src.primitives.reduce.reduce_window_monoid import *  # noqa: F401,F403
from openjax._src.primitives.reduce.select_and_gather import *  # noqa: F401,F403

__all__: list[str] = [*_reduce_variadic.__all__, *_reduce_window.__all__,
                      *_reduce_window_monoid.__all__, *_select_and_gather.__all__]
