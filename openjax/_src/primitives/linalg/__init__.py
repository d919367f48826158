"""Linear-algebra family (``jax.lax.linalg``): cholesky, triangular_solve,
eigh, lu, qr, svd, ... (their traced lowerings are in control/)."""
