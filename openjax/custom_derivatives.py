"""``openjax.custom_derivatives`` (``jax.custom_derivatives``): functions with
custom differentiation rules."""
from openjax._src.api.custom_derivatives import (  # noqa: F401
    CustomVJPPrimal, closure_convert, custom_gradient, custom_jvp, custom_vjp,
    custom_vjp_primal_tree_values)
from openjax._src.control.custom_derivatives import (  # noqa: F401
    SymbolicZero, custom_jvp_call_p, custom_vjp_call_p, zero_from_primal)
