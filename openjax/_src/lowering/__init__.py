"""The lowering layer: jaxprs to StableHLO text (see ``context.py`` for how
a primitive's ``lower`` rule is written)."""
from openjax._src.lowering.builder import (  # noqa: F401
    FunctionBuilder, ModuleBuilder, Region, Value, attr_text, dense_int_attr, enum_attr,
    sanitize_symbol, string_attr, type_of)
from openjax._src.lowering.context import (  # noqa: F401
    LoweringContext, contraction_stats, convolution_module_depths, lower_jaxpr_as_function,
    lower_jaxpr_body, lower_jaxpr_to_module, max_contraction_flops, module_has_complex_dot,
    plan_donation)
from openjax._src.lowering.mlir_types import (  # noqa: F401
    aval_type, dense_attr, element_type, split_tensor_type, tensor_type)
