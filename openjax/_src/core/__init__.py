"""The core layer: abstract values, primitives, traces, the jaxpr IR."""
from openjax._src.core.avals import (AbstractToken, AbstractValue, AvalQueries, ShapedArray,
                                     abstract_token, shaped_array_of, str_short_of, typematch)
from openjax._src.core.tracer import Trace, Tracer
from openjax._src.core.devices import default_device
from openjax._src.core.array import Array, array_of, make_array
from openjax._src.core.jaxpr import (
    Atom, ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, JaxprTypeError, Literal, PpContext,
    Var, check_jaxpr, check_transformed, dce_jaxpr, eqn_effects, jaxpr_effects, jaxprs_in_params,
    live_eqns, pp_eqn, pp_toplevel_jaxpr)
from openjax._src.core.primitive import Effect, Primitive, RULE_SLOTS, registry
from openjax._src.core.program import Program, eval_jaxpr, program_of
from openjax._src.core.trace import (
    EvalTrace, canonical_value, concrete_or_error, current_trace, eval_trace, get_aval,
    is_concrete, set_current_trace, to_concrete_value, trace_state)
