"""``jax.debug``: print, log, call back and stop inside traced and compiled
code; draw how arrays are sharded."""
from openjax._src.control.callbacks import (  # noqa: F401
    DebugEffect, OrderedDebugEffect, debug_callback as callback, debug_print as print)
from openjax._src.debug.breakpoint import breakpoint  # noqa: F401
from openjax._src.debug.debugging import inspect_array_sharding, log  # noqa: F401
from openjax._src.sharding.visualize import (  # noqa: F401
    visualize_array_sharding, visualize_sharding)
