"""``openjax.ref`` (``jax.ref``): mutable array references."""
from openjax._src.state.types import (  # noqa: F401
    AbstractRef, Ref, addupdate, empty_ref, free_ref, freeze, get, new_ref, set, swap)
