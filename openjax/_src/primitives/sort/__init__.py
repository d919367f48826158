"""Sorting family: variadic sort and top_k, with the lowering of large
sorts (``sort_lowering``)."""
