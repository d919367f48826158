"""Sorting family, on ``base`` and ``index``: ``sort_lowering`` (the
StableHLO of large sorts) -> ``sort`` (variadic sort, top_k)."""
