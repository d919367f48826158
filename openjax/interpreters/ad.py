"""``openjax.interpreters.ad`` (``jax.interpreters.ad``): JVP/transpose rule tables."""
from openjax._src.extend_rules import primitive_jvps, primitive_transposes  # noqa: F401
from openjax._src.interpreters.jvp import JVPTracer  # noqa: F401
from openjax._src.primitives.base.ad_util import (  # noqa: F401
    UndefinedPrimal, Zero, is_undefined_primal)
from openjax._src.primitives.base.structural import instantiate_zeros  # noqa: F401
