"""``openjax.ad_checkpoint`` (``jax.ad_checkpoint``): checkpoint policies,
``checkpoint_name`` and ``print_saved_residuals``."""
from openjax._src.api.checkpoint import (  # noqa: F401
    Offloadable, Recompute, Saveable, checkpoint_name, checkpoint_policies,
    print_saved_residuals)
