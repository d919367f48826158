"""``jax.debug``: printing, callbacks and breakpoints inside transformed and
compiled programs (the primitives live in ``control/callbacks.py``)."""
