"""``jax.experimental.checkify``: functionalized runtime checks."""
from openjax._src.debug.checkify import (  # noqa: F401
    DivisionByZeroError, Error, ErrorCategory, FailedCheckError, JaxRuntimeError, NaNError,
    OOBError, all_checks, automatic_checks, check, check_error, checkify, debug_check,
    div_checks, float_checks, index_checks, init_error, nan_checks, user_checks)
