"""``openjax.experimental.hijax`` (``jax.experimental.hijax``): see
``openjax/_src/hijax.py`` for what openjax gives of it."""
from openjax._src.hijax import (  # noqa: F401
    AbstractRef, AbstractValue, AvalMutableQDD, AvalQDD, HiPrimitive, HiType, MutableHiType,
    ShapedArray, Zero, aval_method, aval_property, control_flow_allowed_effects,
    instantiate_zeros, is_undefined_primal, register_hitype)
