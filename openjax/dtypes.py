"""Dtype utilities (``jax.dtypes``)."""
from openjax._src.dtypes import (  # noqa: F401
    bfloat16, canonicalize_dtype, float0, finfo, iinfo, is_weakly_typed, issubdtype,
    promote_types, result_type, TypePromotionError)
