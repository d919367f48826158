"""The bottom of the primitive families: the structural primitives every
family's rules may use and the rule builders they are written with. Imports
nothing from the families; its modules, each importing only those before it:

* ``ad_util``: ``Zero``, ``UndefinedPrimal``, ``tangent_aval``, ``defjvp_zero``,
  ``stop_gradient``;
* ``util``: dtype classes and checks, lax's broadcasting shape rule,
  ``quiet``/``in_float32`` for NumPy impls, ``pp_hide_none``;
* ``convert``: ``convert_element_type`` and ``lower_convert``;
* ``reduce_lowering``: the StableHLO helpers of reductions;
* ``structural``: add_any, broadcast_in_dim, reshape, iota, squeeze,
  transpose, reduce_sum and the builders ``defjvp``/``defjvp2``/``deflinear``;
* ``batch_util``: batching helpers (``bdim_at_front``, ``broadcast_batcher``).
"""
