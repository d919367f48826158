"""The core layer: abstract values, primitives, traces, the jaxpr IR."""
from openjax._src.core.avals import AvalQueries, ShapedArray, shaped_array_of, str_short_of, typematch
from openjax._src.core.jaxpr import (
    Atom, ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, JaxprTypeError, Literal, PpContext,
    Var, check_jaxpr, check_transformed, dce_jaxpr, eval_jaxpr, jaxprs_in_params, live_eqns,
    pp_eqn, pp_toplevel_jaxpr)
from openjax._src.core.primitive import Primitive, RULE_SLOTS, registry
from openjax._src.core.trace import (
    EvalTrace, Trace, Tracer, array_hooks, canonical_value, concrete_or_error,
    current_trace, eval_trace, get_aval, is_concrete, register_array_type,
    set_current_trace, to_concrete_value, trace_state)
from openjax._src.core.hooks import jaxpr_transforms
from openjax._src.core.kernels import use_xla_kernels, xla_kernels
