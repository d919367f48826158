"""Dtype utilities (``jax.dtypes``)."""
from openjax._src.dtypes import (  # noqa: F401
    bfloat16, canonicalize_dtype, extended, float0, finfo, iinfo, is_weakly_typed, issubdtype,
    itemsize_bits, prng_key, promote_types, result_type, scalar_type_of, TypePromotionError)
