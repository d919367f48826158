"""Collective family, on ``base``, ``shape``, ``elementwise`` and ``reduce``:
psum, pmax, pmin, all_gather, reduce_scatter, ppermute, axis_index,
pbroadcast, all_to_all and the named-axis environment they read
(``collectives``)."""
