"""``jax.scipy.linalg.expm`` (Higham's scaling and squaring with Padé
approximants of degree 3 to 13, chosen by the 1-norm as in JAX) and
``expm_frechet`` (the JVP of ``expm``)."""
from __future__ import annotations

from functools import partial

import numpy as np

from openjax._src import lax
from openjax._src.api.autodiff import jvp
from openjax._src.numpy import util
from openjax._src.scipy import jnp
from openjax._src.scipy.linalg import jit, solve_triangular

__all__ = ["expm", "expm_frechet"]

# Padé numerator coefficients b_0..b_m (Higham 2005, table 2.3).
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880.,
        3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.),
}
# theta_m: the largest 1-norms for which degree m is accurate enough, per
# precision; above the last, the matrix is scaled by 2^-s first.
_THETA = {
    "double": ((3, 1.495585217958292e-002), (5, 2.539398330063230e-001),
               (7, 9.504178996162932e-001), (9, 2.097847961257068e+000), (13, 5.371920351148152)),
    "single": ((3, 4.258730016922831e-001), (5, 1.880152677804762e+000),
               (7, 3.925724783138660)),
}


def _dot(a, b):
  return jnp.matmul(a, b, precision=lax.Precision.HIGHEST)


def _pade(m: int, a):
  """``(U, V)``: the odd and even parts of the degree-``m`` Padé numerator
  ``p_m(A) = U + V``; the denominator is ``q_m(A) = V - U``."""
  b = _PADE[m]
  ident = jnp.eye(a.shape[0], dtype=a.dtype)
  a2 = _dot(a, a)
  if m == 13:
    a4 = _dot(a2, a2)
    a6 = _dot(a4, a2)
    u = _dot(a, _dot(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
    v = _dot(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * ident
    return u, v
  powers = [ident, a2]                      # A^0, A^2, A^4, ...
  while len(powers) <= m // 2:
    powers.append(_dot(powers[-1], a2))
  u = sum(b[2 * k + 1] * powers[k] for k in range(m // 2 + 1))
  v = sum(b[2 * k] * powers[k] for k in range(m // 2 + 1))
  return _dot(a, u), v


def _expm_2d(a, *, upper_triangular: bool, max_squarings: int):
  double = a.dtype in (np.float64, np.complex128)
  thetas = _THETA["double" if double else "single"]
  norm = jnp.linalg.norm(a, 1)
  n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(norm / thetas[-1][1])))
  a = a / (2 ** n_squarings).astype(a.dtype)
  index = jnp.digitize(norm, np.array([t for _, t in thetas[:-1]], norm.dtype))
  u, v = lax.switch(index, [partial(_pade, m) for m, _ in thetas], a)
  p, q = u + v, v - u
  r = solve_triangular(q, p) if upper_triangular else jnp.linalg.solve(q, p)

  # JAX's loop squares while i < n_squarings with a cond per trip; a select
  # gives the same values (the square of a trip that keeps r is dropped)
  # with fewer eager steps than a cond's branch call (~5 us a trip), and
  # keeps the loop a scan (reverse-differentiable).
  def square(i, x):
    return jnp.where(i < n_squarings, _dot(x, x), x)
  r = lax.fori_loop(0, max_squarings, square, r)
  # A norm that needs more squarings than allowed gives NaNs, as in JAX.
  return jnp.where(n_squarings > max_squarings, jnp.full_like(r, np.nan), r)


@partial(jit, static_argnames=("upper_triangular", "max_squarings"))
def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):
  """The matrix exponential of square matrices ``A`` (``[..., n, n]``).
  ``upper_triangular`` solves the Padé system by back substitution;
  matrices whose 1-norm needs more than ``max_squarings`` halvings give NaN."""
  A, = util.promote_dtypes_inexact(jnp.asarray(A))
  if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
    raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={A.shape}.")
  if A.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
    # The Padé degrees are tuned for single and double precision only.
    raise TypeError(f"A.dtype={A.dtype} is not supported.")
  return jnp.vectorize(partial(_expm_2d, upper_triangular=upper_triangular,
                               max_squarings=max_squarings), signature="(n,n)->(n,n)")(A)


@partial(jit, static_argnames=("method", "compute_expm"))
def expm_frechet(A, E, *, method=None, compute_expm: bool = True):
  """The Fréchet derivative of ``expm`` at ``A`` in direction ``E`` (the
  JVP), with ``expm(A)`` first when ``compute_expm``."""
  del method
  A, E = jnp.asarray(A), jnp.asarray(E)
  if A.ndim < 2 or A.shape[-2] != A.shape[-1]:
    raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={A.shape}")
  if E.ndim < 2 or E.shape[-2] != E.shape[-1]:
    raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={E.shape}")
  if A.shape != E.shape:
    raise ValueError("expected A and E to be the same shape, got "
                     f"A.shape={A.shape} E.shape={E.shape}")
  A, E = util.promote_dtypes_inexact(A, E)
  expm_a, frechet = jvp(partial(expm, upper_triangular=False, max_squarings=16), (A,), (E,))
  return (expm_a, frechet) if compute_expm else frechet
