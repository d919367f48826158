"""Mutable array references (``jax.Ref``, ``jax.new_ref``, ...): the library
side (``types``: reads, writes, creation); ``core/ref.py`` has the value
type and ``api/refs.py`` jit's handling."""
