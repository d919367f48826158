"""Indexing family, on ``base``, ``shape`` and ``elementwise``:
``indexing_util`` (dimension numbers, modes, NumPy kernels) ->
``scatter_lowering`` -> ``gather_scatter`` (gather and the scatters) ->
``dynamic_slicing`` (dynamic_slice, dynamic_update_slice)."""
