"""The indexing family: ``gather`` and the scatters (``gather_scatter.py``),
``dynamic_slice`` and ``dynamic_update_slice`` (``dynamic_slicing.py``),
re-exported here as one module."""
from openjax._src.primitives import dynamic_slicing, gather_scatter
from openjax._src.primitives.dynamic_slicing import *  # noqa: F401,F403
from openjax._src.primitives.gather_scatter import *  # noqa: F401,F403
from openjax._src.primitives.gather_scatter import scatter_apply_jaxpr  # noqa: F401 - jnp's .at[].apply

__all__ = [*gather_scatter.__all__, *dynamic_slicing.__all__]
