"""Reduction family, on ``base``, ``shape`` and ``elementwise``: monoid
reductions over axes, argmax/argmin and cumulative reductions
(``reductions``); the window primitives: ``window_util`` (parameter checks,
NumPy kernels) -> ``window_lowering`` -> ``select_and_gather``
(select_and_gather_add, select_and_scatter_add) -> ``reduce_window_monoid``
(reduce_window_sum/max/min). Window reductions with a traced computation
are in control/."""
