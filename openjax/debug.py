"""``jax.debug``: print, call back and stop inside traced and compiled code."""
from openjax._src.control.callbacks import (  # noqa: F401
    DebugEffect, OrderedDebugEffect, debug_callback as callback, debug_print as print)
