"""``jax.sharding``'s user functions (make_mesh, set_mesh, reshard, ...) and
the sharding pictures of ``jax.debug``; the classes live in
``core/mesh.py`` and ``core/sharding.py``."""
