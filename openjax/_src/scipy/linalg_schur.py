"""``jax.scipy.linalg``'s functions of the Schur form: ``schur``,
``hessenberg``, ``rsf2csf`` (real to complex Schur form), ``sqrtm``
(principal square root by the Schur method), ``funm`` (a matrix function by
Parlett's recurrence) and ``solve_sylvester`` (Bartels-Stewart)."""
from __future__ import annotations

from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.transform_cache import call_transformed
from openjax._src.numpy import util
from openjax._src.scipy import jnp
from openjax._src.scipy.linalg import jit

__all__ = ["schur", "hessenberg", "rsf2csf", "sqrtm", "funm", "solve_sylvester"]

_HIGHEST = lax.Precision.HIGHEST


def _mm(a, b):
  return jnp.matmul(a, b, precision=_HIGHEST)


def _square(fun: str, a):
  if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
    raise ValueError(f"{fun}: expected a (batch of) square matrices [..., n, n]; got shape "
                     f"{a.shape}")


# ------------------------------------------------------------------ schur
@jit(static_argnames=("output",))
def _schur(a, output: str):
  if output == "complex":
    a = a.astype(dtypes.to_complex_dtype(a.dtype))
  return tuple(lax.linalg.schur(a))


def schur(a, output: str = "real"):
  """The Schur decomposition ``a = z @ t @ z^H`` of square ``a``:
  ``(t, z)``. ``output='real'`` keeps real input real (``t``
  quasi-triangular, with 2x2 blocks for complex eigenvalue pairs);
  ``'complex'`` gives triangular complex ``t``."""
  if output not in ("real", "complex"):
    raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got output={output!r}.")
  a, = util.promote_dtypes_inexact(util.ensure_arraylike("scipy.schur", a))
  _square("schur", a)
  return _schur(a, output)


# ------------------------------------------------------------- hessenberg
@jit(static_argnames=("calc_q", "overwrite_a", "check_finite"))
def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True):
  """The upper Hessenberg form ``h`` of square ``a`` (``a = q h q^H``), and
  the unitary ``q`` with ``calc_q``."""
  del overwrite_a, check_finite
  a, = util.promote_dtypes_inexact(jnp.asarray(a))
  _square("hessenberg", a)
  if a.shape[-1] == 0:
    return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
  packed, taus = lax.linalg.hessenberg(a)
  h = jnp.triu(packed, -1)
  if not calc_q:
    return h
  # Q = H_0 ... H_{n-2}, whose reflectors act on rows 1..n-1 (orgqr on the
  # packed block below the first row, as JAX): one primitive, not a
  # program step per reflector.
  q = lax.linalg.householder_product(packed[..., 1:, :-1], taus)
  n = a.shape[-1]
  batch = a.shape[:-2]
  q = jnp.block([[jnp.ones(batch + (1, 1), dtype=a.dtype), jnp.zeros(batch + (1, n - 1), dtype=a.dtype)],
                 [jnp.zeros(batch + (n - 1, 1), dtype=a.dtype), q]])
  return h, q


# ---------------------------------------------------------------- rsf2csf
def _rsf2csf_2d(t, z):
  t, z = util.promote_dtypes_complex(t, z)
  n = t.shape[0]
  if n == 1:
    return t, z
  eps = np.finfo(t.dtype).eps
  idx = np.arange(n, dtype=np.int32)   # the loop counter's type: no converts a trip

  # Starts are m - 1 >= 0 and m <= n - 1: no wrapping of negative starts
  # (three steps per traced start index, half of a trip's steps).
  dyn_slice = partial(lax.dynamic_slice, allow_negative_indices=False)
  dyn_slice_in_dim = partial(lax.dynamic_slice_in_dim, allow_negative_indices=False)
  dyn_update_in_dim = partial(lax.dynamic_update_slice_in_dim, allow_negative_indices=False)

  def reduce_block(m, m1, blk, tz):
    """Zero ``t[m, m1]`` (``m1 = m - 1``) by a rotation built from an
    eigenvalue of the 2x2 block ``blk`` at ``m1`` (SciPy's algorithm)."""
    t, z = tz
    a, b, c, d = blk[0, 0], blk[0, 1], blk[1, 0], blk[1, 1]
    half = (a - d) / 2
    mu = (a + d) / 2 + jnp.sqrt(half * half + b * c) - d
    r = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(c) ** 2).astype(t.dtype)
    cs, sn = mu / r, c / r
    g = jnp.stack([jnp.conj(cs), sn, -sn, cs]).reshape(2, 2)
    g_h = jnp.conj(g.T)
    rows = dyn_slice_in_dim(t, m1, 2, axis=0)
    rows = jnp.where(idx >= m1, _mm(g, rows), rows)
    t = dyn_update_in_dim(t, rows, m1, axis=0)
    cols = dyn_slice_in_dim(t, m1, 2, axis=1)
    cols = jnp.where((idx <= m)[:, None], _mm(cols, g_h), cols)
    t = dyn_update_in_dim(t, cols, m1, axis=1)
    zc = dyn_slice_in_dim(z, m1, 2, axis=1)
    z = dyn_update_in_dim(z, _mm(zc, g_h), m1, axis=1)
    return t, z

  def step(i, tz):
    t, z = tz
    m = n - i
    m1 = m - 1
    blk = dyn_slice(t, (m1, m1), (2, 2))
    big = jnp.abs(blk[1, 0]) > eps * (jnp.abs(blk[0, 0]) + jnp.abs(blk[1, 1]))
    t, z = lax.cond(big, lambda tz: reduce_block(m, m1, blk, tz), lambda tz: tz, (t, z))
    zero = jnp.zeros((1, 1), t.dtype)
    return lax.dynamic_update_slice(t, zero, (m, m1), allow_negative_indices=False), z
  return lax.fori_loop(1, n, step, (t, z))


@jit(static_argnames=("check_finite",))
def rsf2csf(T, Z, check_finite: bool = True):
  """Convert a real Schur form ``(T, Z)`` to the complex one: upper
  triangular complex ``T`` and unitary ``Z`` with the same product
  ``Z T Z^H``."""
  del check_finite
  t, z = jnp.asarray(T), jnp.asarray(Z)
  if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
    raise ValueError("Input 'T' must be square.")
  if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
    raise ValueError("Input 'Z' must be square.")
  if t.shape[-1] != z.shape[-1]:
    raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
  return jnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


# ------------------------------------------------------------------ sqrtm
def _sqrtm_triangular(t):
  """The upper triangular square root ``u`` of upper triangular ``t``
  (``u @ u = t``; Björck & Hammarling), one superdiagonal at a time: with
  the diagonals below ``d`` known and the rest zero, ``(u @ u)[i, i + d]`` is
  the sum over i < k < i + d the recurrence needs, so a trip is a matrix
  product and elementwise updates of the whole matrix (n - 1 trips, where an
  entry at a time took n (n - 1) / 2)."""
  diag = jnp.sqrt(jnp.diagonal(t))
  n = diag.shape[0]
  # j - i (int32, the loop counter's type)
  offset = (np.arange(n)[None, :] - np.arange(n)[:, None]).astype(np.int32)
  den = diag[:, None] + diag[None, :]

  def superdiagonal(d, u):
    s = _mm(u, u)
    value = jnp.where(t == s, 0, (t - s) / den)
    return jnp.where(offset == d, value, u)
  return lax.fori_loop(1, n, superdiagonal, jnp.diag(diag))


@jit
def _sqrtm(a):
  t, z = schur(a, output="complex")
  root = jnp.vectorize(_sqrtm_triangular, signature="(n,n)->(n,n)")(t)
  return _mm(_mm(z, root), jnp.conj(jnp.swapaxes(z, -1, -2)))


def sqrtm(A, blocksize: int = 1):
  """The principal square root of square ``A`` (complex result), by the
  Schur method."""
  if blocksize > 1:
    raise NotImplementedError("sqrtm: the blocked algorithm (blocksize > 1) is not "
                              "implemented, as in JAX; use blocksize=1")
  a, = util.promote_dtypes_inexact(util.ensure_arraylike("scipy.sqrtm", A))
  _square("sqrtm", a)
  return _sqrtm(a)


# ------------------------------------------------------------------- funm
@jit
def _parlett(f, t):
  """Parlett's recurrence (Golub & Van Loan, algorithm 11.1.1) for the
  off-diagonal of ``f(t)``, ``t`` upper triangular, ``f`` holding
  ``func(diag(t))`` on its diagonal; also the smallest eigenvalue gap. One
  superdiagonal at a time: with the diagonals below ``p`` known and the rest
  zero, ``(t @ f - f @ t)[i, i + p]`` is the recurrence's numerator, so a
  trip is two matrix products and elementwise updates (n - 1 trips, where an
  entry at a time took n (n - 1) / 2). Jitted, as JAX's recurrence is: the
  loop body closes over ``t``, so an eager loop traced it on every call
  (funm of 4 x 4 2.3 ms)."""
  n = t.shape[0]
  # j - i (int32, the loop counter's type)
  offset = (np.arange(n)[None, :] - np.arange(n)[:, None]).astype(np.int32)
  diag = jnp.diagonal(t)
  den = diag[None, :] - diag[:, None]                       # t[j, j] - t[i, i]
  nonzero = den != 0                                        # once, not every trip
  safe_den = jnp.where(nonzero, den, 1)

  def superdiagonal(p, f):
    s = _mm(t, f) - _mm(f, t)
    return jnp.where(offset == p, jnp.where(nonzero, s / safe_den, s), f)
  f = lax.fori_loop(1, n, superdiagonal, f)
  gaps = jnp.where(offset > 0, jnp.abs(den), jnp.inf)
  return f, jnp.minimum(jnp.abs(t[0, 0]), jnp.min(gaps).astype(jnp.abs(t[0, 0]).dtype))


def funm(A, func, disp: bool = True):
  """The matrix function ``func(A)`` of square ``A`` (``func`` maps arrays
  of eigenvalues elementwise): the complex Schur form, ``func`` on its
  diagonal, Parlett's recurrence above it. With ``disp=False`` also an
  error estimate (large when eigenvalues are close)."""
  a = jnp.asarray(A)
  if a.ndim != 2 or a.shape[0] != a.shape[1]:
    raise ValueError("expected square array_like input")
  # One cached program per effect-free ``func`` (keyed by what it computes):
  # the Schur steps, ``func`` and the recurrence in one program, where op by
  # op each of ~10 calls entered its own (4 x 4: ~400 us).
  return call_transformed(("scipy.linalg.funm", disp), func,
                          lambda a: _funm(a, func, disp), (a,), {})


def _funm(a, func, disp: bool):
  t, z = schur(a)
  t, z = rsf2csf(t, z)
  f = jnp.diag(func(jnp.diagonal(t))).astype(t.dtype)
  f, gap = _parlett(f, t)
  f = _mm(_mm(z, f), jnp.conj(z.T))
  if disp:
    return f
  tol = np.finfo(f.dtype).eps
  gap = jnp.where(gap == 0, tol, gap)
  err = jnp.where(jnp.any(jnp.isinf(f)), np.inf,
                  jnp.minimum(1, jnp.maximum(tol, (tol / gap)
                                             * jnp.linalg.norm(jnp.triu(t, 1), 1))))
  return f, err


# -------------------------------------------------------- solve_sylvester
def _triangular_sylvester(r, s, f):
  """Solve ``r y + y s = f`` for upper triangular ``r`` and lower
  triangular ``s``, one antidiagonal ``i + j = d`` at a time from the
  bottom-right corner: with the later antidiagonals known and the rest zero,
  ``r @ y + y @ s`` at (i, j) is the sum over k > i and k > j the entry
  needs, so a trip is two matrix products and elementwise updates (m + n - 1
  trips, where an entry at a time took m n)."""
  m, n = f.shape
  antidiagonal = (np.arange(m)[:, None] + np.arange(n)[None, :]).astype(np.int32)
  den = jnp.diagonal(r)[:, None] + jnp.diagonal(s)[None, :]

  def step(k, y):
    value = (f - _mm(r, y) - _mm(y, s)) / den
    return jnp.where(antidiagonal == m + n - 2 - k, value, y)
  return lax.fori_loop(0, m + n - 1, step, jnp.zeros_like(f))


def _sylvester_2d(a, b, c, *, method: str, tol):
  if method == "schur":
    r, u = schur(a, output="complex")
    s, v = schur(jnp.conj(b.T), output="complex")
    f = _mm(_mm(jnp.conj(u.T), c.astype(r.dtype)), v)
    y = _triangular_sylvester(r, jnp.conj(s.T), f)
    x = _mm(_mm(u, y), jnp.conj(v.T))
    lam_a, lam_b = jnp.diagonal(r), jnp.conj(jnp.diagonal(s))
  elif method == "eigen":
    # Diagonalise both (jnp.linalg.eig, LAPACK geev on the host):
    # A = Ua Ra Ua^-1, B = Ub Rb Ub^-1, so Y = Ua^-1 C Ub / (ra + rb).
    lam_a, ua = jnp.linalg.eig(a)
    lam_b, ub = jnp.linalg.eig(b)
    f = jnp.linalg.solve(ua, _mm(c.astype(lam_a.dtype), ub))
    y = f / (lam_a[:, None] + lam_b[None, :])
    x = _mm(_mm(ua, y), jnp.linalg.inv(ub))
  else:
    raise ValueError(f'Unrecognized method {method}. The two valid methods are either "schur" '
                     'or "eigen".')
  if dtypes.kind(c.dtype) != "c":
    x = jnp.real(x)
  # Eigenvalues of A and -B that (nearly) coincide make the equation
  # singular: NaNs, as in JAX.
  singular = jnp.any(jnp.abs(lam_a[:, None] + lam_b[None, :]) < tol)
  return jnp.where(singular, jnp.full_like(x, np.nan), x)


@partial(jit, static_argnames=("method",))
def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
  """Solve the Sylvester equation ``A X + X B = C``: ``method='schur'``
  (Bartels-Stewart: Schur forms of ``A`` and ``B^H``, then a triangular
  solve) or ``'eigen'`` (eigendecompositions by ``jnp.linalg.eig``). NaNs where ``A`` and ``-B`` share an eigenvalue
  (within ``tol``)."""
  a, b, c = util.promote_dtypes_inexact(jnp.asarray(A), jnp.asarray(B), jnp.asarray(C))
  m, n = c.shape[-2:]
  if a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
    raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\nB: {b.shape}"
                     f"\nC: {c.shape}")
  return jnp.vectorize(partial(_sylvester_2d, method=method, tol=tol),
                       signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)
