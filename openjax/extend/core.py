"""``openjax.extend.core`` (``jax.extend.core``): primitives and jaxprs."""
from openjax._src.core import (  # noqa: F401
    ClosedJaxpr, DropVar, Effect, Jaxpr, JaxprEqn, Literal, Var, check_jaxpr, concrete_or_error,
    set_current_trace)
from openjax._src.extend_rules import ExtendPrimitive as Primitive  # noqa: F401
from openjax._src.core.trace import find_top_trace  # noqa: F401
from openjax._src.extend import get_opaque_trace_state, mapped_aval, unmapped_aval  # noqa: F401
