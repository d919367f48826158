"""reduce_p (custom monoidal reductions) and the reduce_window family."""

__all__: list[str] = []
