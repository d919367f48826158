"""Indexing family: gather and the scatters (``gather_scatter``),
dynamic_slice and dynamic_update_slice (``dynamic_slicing``)."""
