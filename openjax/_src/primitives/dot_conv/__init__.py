"""Contraction family, on ``base`` and ``shape``: ``dot`` (dot_general) ->
``conv_rules`` (NumPy convolution, shape rules) and ``conv_lowering`` ->
``conv`` (conv_general_dilated)."""
