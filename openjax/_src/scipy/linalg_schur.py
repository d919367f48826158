"""``jax.scipy.linalg``'s functions of the Schur form: ``schur``,
``hessenberg``, ``rsf2csf`` (real to complex Schur form), ``sqrtm``
(principal square root by the Schur method), ``funm`` (a matrix function by
Parlett's recurrence) and ``solve_sylvester`` (Bartels-Stewart)."""
from __future__ import annotations

from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
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
def _q_from_reflectors(packed, taus):
  """``Q = H_0 H_1 ... H_{n-2}`` from ``gehrd``'s packed reflectors."""
  n = packed.shape[-1]
  rows = np.arange(n)
  q = jnp.broadcast_to(jnp.eye(n, dtype=packed.dtype), packed.shape)
  for k in reversed(range(n - 1)):
    v = jnp.where(rows == k + 1, 1, jnp.where(rows > k + 1, packed[..., :, k], 0))
    v = v.astype(packed.dtype)
    tau = taus[..., k][..., None, None]
    # q <- H_k q with H_k = I - tau v v^H.
    vhq = jnp.einsum("...i,...ij->...j", jnp.conj(v), q, precision=_HIGHEST)
    q = q - tau * v[..., :, None] * vhq[..., None, :]
  return q


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
  return (h, _q_from_reflectors(packed, taus)) if calc_q else h


# ---------------------------------------------------------------- rsf2csf
def _rsf2csf_2d(t, z):
  t, z = util.promote_dtypes_complex(t, z)
  n = t.shape[0]
  if n == 1:
    return t, z
  eps = np.finfo(t.dtype).eps
  idx = np.arange(n)

  def reduce_block(m, tz):
    """Zero ``t[m, m-1]`` by a rotation built from an eigenvalue of the 2x2
    block at ``m - 1`` (SciPy's algorithm)."""
    t, z = tz
    blk = lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))
    a, b, c, d = blk[0, 0], blk[0, 1], blk[1, 0], blk[1, 1]
    half = (a - d) / 2
    mu = (a + d) / 2 + jnp.sqrt(half * half + b * c) - d
    r = jnp.sqrt(jnp.abs(mu) ** 2 + jnp.abs(c) ** 2).astype(t.dtype)
    cs, sn = mu / r, c / r
    g = jnp.stack([jnp.stack([jnp.conj(cs), sn]), jnp.stack([-sn, cs])])
    rows = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
    right = idx >= m - 1
    rows = jnp.where(right, _mm(g, rows), rows)
    t = lax.dynamic_update_slice_in_dim(t, rows, m - 1, axis=0)
    cols = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=1)
    upper = (idx < m + 1)[:, None]
    cols = jnp.where(upper, _mm(cols, jnp.conj(g.T)), cols)
    t = lax.dynamic_update_slice_in_dim(t, cols, m - 1, axis=1)
    zc = lax.dynamic_slice_in_dim(z, m - 1, 2, axis=1)
    z = lax.dynamic_update_slice_in_dim(z, _mm(zc, jnp.conj(g.T)), m - 1, axis=1)
    return t, z

  def step(i, tz):
    t, z = tz
    m = n - i
    big = jnp.abs(t[m, m - 1]) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
    t, z = lax.cond(big, lambda tz: reduce_block(m, tz), lambda tz: tz, (t, z))
    return t.at[m, m - 1].set(0), z
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
  (``u @ u = t``), column by column (Björck & Hammarling)."""
  diag = jnp.sqrt(jnp.diagonal(t))
  n = diag.shape[0]
  u = jnp.diag(diag)
  idx = np.arange(n)

  def column(j, u):
    def row(l, u):
      i = j - 1 - l
      # s = sum_{i < k < j} u[i, k] u[k, j]
      s = jnp.sum(jnp.where((idx > i) & (idx < j), u[i, :] * u[:, j], 0))
      value = jnp.where(t[i, j] == s, 0, (t[i, j] - s) / (diag[i] + diag[j]))
      return u.at[i, j].set(value)
    return lax.fori_loop(0, j, row, u)
  return lax.fori_loop(0, n, column, u)


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
def _parlett(f, t):
  """Parlett's recurrence (Golub & Van Loan, algorithm 11.1.1) for the
  off-diagonal of ``f(t)``, ``t`` upper triangular, ``f`` holding
  ``func(diag(t))`` on its diagonal; also the smallest eigenvalue gap."""
  n = t.shape[0]
  idx = np.arange(n)

  def superdiagonal(p, carry):
    def entry(i, carry):
      f, gap = carry
      j = i + p
      s = t[i - 1, j - 1] * (f[j - 1, j - 1] - f[i - 1, i - 1])
      between = (idx >= i) & (idx < j - 1)
      s = s + (jnp.sum(jnp.where(between, t[i - 1, :] * f[:, j - 1], 0))
               - jnp.sum(jnp.where(between, f[i - 1, :] * t[:, j - 1], 0)))
      den = t[j - 1, j - 1] - t[i - 1, i - 1]
      s = jnp.where(den != 0, s / jnp.where(den != 0, den, 1), s)
      return f.at[i - 1, j - 1].set(s), jnp.minimum(gap, jnp.abs(den))
    return lax.fori_loop(1, n - p + 1, entry, carry)
  return lax.fori_loop(1, n, superdiagonal, (f, jnp.abs(t[0, 0])))


def funm(A, func, disp: bool = True):
  """The matrix function ``func(A)`` of square ``A`` (``func`` maps arrays
  of eigenvalues elementwise): the complex Schur form, ``func`` on its
  diagonal, Parlett's recurrence above it. With ``disp=False`` also an
  error estimate (large when eigenvalues are close)."""
  a = jnp.asarray(A)
  if a.ndim != 2 or a.shape[0] != a.shape[1]:
    raise ValueError("expected square array_like input")
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
  triangular ``s``, entry by entry from the bottom-right corner."""
  m, n = f.shape

  def entry(step, y):
    idx = m * n - 1 - step
    i, j = idx // n, idx % n
    row_term = jnp.sum(jnp.where(np.arange(m) > i, r[i, :] * y[:, j], 0))
    col_term = jnp.sum(jnp.where(np.arange(n) > j, y[i, :] * s[:, j], 0))
    return y.at[i, j].set((f[i, j] - row_term - col_term) / (r[i, i] + s[j, j]))
  return lax.fori_loop(0, m * n, entry, jnp.zeros_like(f))


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
