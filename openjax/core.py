"""Core types (``jax.core`` / ``jax.extend.core``): jaxprs, abstract values."""
from openjax._src.core import (  # noqa: F401
    ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Primitive, ShapedArray, Trace,
    Tracer, Var, check_jaxpr, eval_jaxpr)
