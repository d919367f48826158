"""``openjax.api_util`` (``jax.api_util``): helpers for libraries that trace
functions themselves (flattened wrapped functions, debug info)."""
from openjax._src.api.shapes import abstractify as shaped_abstractify  # noqa: F401
from openjax._src.example_libraries.util import safe_map  # noqa: F401
from openjax._src.extend import debug_info, flatten_fun, flatten_fun_nokwargs  # noqa: F401
