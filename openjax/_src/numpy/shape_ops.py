"""The shape family of ``jax.numpy``: everything that rearranges, joins,
splits or pads arrays without arithmetic. The functions live in three files
by concept (reshaping, joining, padding); this module gathers them, and
``array_methods`` finds the method forms (``_method_reshape``,
``_method_transpose``, ``flatten``) here by name."""
from openjax._src.numpy import shape_joining, shape_padding, shape_reshaping
from openjax._src.numpy.shape_joining import *  # noqa: F401,F403
from openjax._src.numpy.shape_padding import *  # noqa: F401,F403
from openjax._src.numpy.shape_reshaping import *  # noqa: F401,F403
from openjax._src.numpy.shape_reshaping import (  # noqa: F401
    _method_reshape, _method_transpose, flatten)

__all__ = [*shape_reshaping.__all__, *shape_joining.__all__, *shape_padding.__all__]
