"""Linear-algebra family (``jax.lax.linalg``), on ``base``, ``shape``,
``elementwise`` and ``dot_conv``: ``linalg_rules`` (matrix helpers of the
JVP rules and lowerings) -> ``linalg`` (cholesky, triangular_solve, eigh, lu,
qr, svd, ...), ``schur`` (hessenberg, schur), ``householder``
(householder_product, ormqr, tridiagonal), ``gtsv_kernels`` ->
``linalg_extra`` (eig, cholesky_update, symmetric_product,
tridiagonal_solve, the algorithm enums); their traced lowerings are in
control/linalg_lowering.py, linalg_schur_lowering.py and
linalg_extra_lowering.py."""
