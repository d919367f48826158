"""Elementwise family, on ``base`` and ``shape``. Its modules, each importing
only those before it:

* lowering helpers: ``elementwise_lowering`` -> ``math_lowering``;
  ``special_numerics``, ``gamma_kernels`` (NumPy kernels) ->
  ``special_lowering``, ``gamma_lowering``;
* ``elementwise_rules``: dtype classes, the table builders ``unop``/``naryop``
  and the helpers of the rules below;
* ``logic`` (predicates, comparisons, bitwise ops, select_n, clamp,
  bitcast_convert_type) -> ``arithmetic`` (neg ... integer_pow, add, sub,
  mul, div, rem, max, min, complex, mulhi, reduce_precision) ->
  ``transcendental`` (exp ... cbrt, atan2, pow) -> ``special`` (lgamma,
  erf, igamma, betainc, Bessel functions, ...).
"""
