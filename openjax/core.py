"""Core types (``jax.core`` / ``jax.extend.core``): jaxprs, abstract values."""
from openjax._src.core import (  # noqa: F401
    ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Primitive, ShapedArray, Trace,
    Tracer, Var, check_jaxpr, eval_jaxpr)

# Every openjax abstract value is a ShapedArray: JAX's base class of abstract
# values (``isinstance(aval, jax.core.AbstractValue)``) is that class here.
AbstractValue = ShapedArray
