"""Shape family: rev, pad, concatenate, split, tile, slice and the
``full``/``full_like`` constructors (``shape``), written on ``base``."""
