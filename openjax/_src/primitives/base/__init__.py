"""The bottom of the primitive families: the structural primitives every
family's rules may use (``structural``: add_any, broadcast_in_dim,
reshape, iota, squeeze, transpose, reduce_sum; ``convert``:
convert_element_type), the JVP/transpose/batching rule builders
(``structural``, ``ad_util``, ``batch_util``), dtype and shape checks
(``util``) and the StableHLO helpers of reductions (``reduce_lowering``).
Imports nothing from the families above it."""
