"""Linear-algebra family (``jax.lax.linalg``), on ``base``, ``shape``,
``elementwise`` and ``dot_conv``: ``linalg_rules`` (matrix helpers of the
JVP rules and lowerings) -> ``linalg`` (cholesky, triangular_solve, eigh, lu,
qr, svd, ...); their traced lowerings are in control/linalg_lowering.py."""
