"""The non-symmetric reductions of ``jax.lax.linalg``: ``hessenberg``
(Householder reduction to upper Hessenberg form, LAPACK ``gehrd``'s packed
output) and ``schur`` (the Schur form ``a = Z T Z^H``: upper triangular
``T`` for complex input, quasi-triangular with 2x2 blocks for complex
conjugate eigenvalue pairs for real input, as ``gees``).

Eager impls call LAPACK's ``gehrd``/``gees`` (``lapack.py``, as JAX's CPU
kernels). Without the library, and for large batches of small Hessenberg
reductions, they run the NumPy code here (NumPy has no ``gehrd``/``gees``):
Householder reflectors, then a Schur form from ``geev``'s eigenvectors, or
shifted QR iterations with deflation (Francis' implicit double shift for
real input, Wilkinson single shifts for complex). The compiled lowerings
(``control/linalg_schur_lowering.py``) run the same iterations with lax
loops. Neither is differentiable, as in JAX.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from openjax._src.core import Primitive, ShapedArray
from openjax._src.core.sharding_rules import replicated_rule
from openjax._src.primitives.base.util import check_dtypes
from openjax._src.primitives.linalg import lapack
from openjax._src.primitives.linalg.linalg_rules import batch_at_front, lapack_dtype

__all__ = ["hessenberg", "hessenberg_p", "hessenberg_impl", "schur", "schur_p", "schur_from_eig"]

_INEXACT = (np.floating, np.complexfloating)
_MAX_SWEEPS_PER_EIGENVALUE = 60


def _check_square(name: str, x) -> None:
  check_dtypes(name, [x], [_INEXACT])
  if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
    raise ValueError(f"{name}: the input must be a (batch of) square matrices [..., n, n]; "
                     f"got shape {x.shape}")


def _batched_impl(fun, x: np.ndarray, n_out: int):
  """Run ``fun`` (one matrix to ``n_out`` arrays) over the leading dims."""
  work = x if x.dtype.kind == "c" or x.dtype in (np.float32, np.float64) else \
      x.astype(np.float32)
  flat = work.reshape(-1, *work.shape[-2:]).astype(np.result_type(work.dtype, np.float64))
  results = [fun(m) for m in flat]
  outs = []
  for i in range(n_out):
    stacked = np.stack([r[i] for r in results]) if results else np.zeros((0,), work.dtype)
    outs.append(stacked.reshape(x.shape[:-2] + stacked.shape[1:]).astype(x.dtype))
  return outs



def _not_differentiable(name: str):
  def rule(primals, tangents, **params):
    raise NotImplementedError(f"The derivative of lax.linalg.{name} is not implemented (as in "
                              "JAX); differentiate a function of its results that does not "
                              "depend on the non-unique factors, e.g. via eigh or expm")
  return rule


# ----------------------------------------------------------- Householder
def _hessenberg_one(a: np.ndarray):
  """``(packed, taus)``: ``H`` on and above the subdiagonal, reflector tails
  below it; ``a = Q H Q^H`` with ``Q = H_0 ... H_{n-2}``.

  Each reflector is LAPACK ``larfg``'s: ``v[0] = 1`` and ``(I - tau v
  v^H)^H x = beta e_1`` with real ``beta``; ``tau = 0`` (no update) when
  ``x`` already is ``beta e_1``. The scalars are Python numbers and the
  updates four NumPy calls a side: the column loop's cost is its calls."""
  a = a.copy()
  n = a.shape[-1]
  is_complex = a.dtype.kind == "c"
  taus = np.zeros(max(n - 1, 0), a.dtype)
  # n - 1 reflectors, as gehrd: the last has no tail and only makes a
  # complex subdiagonal entry real (tau = 0 for real input).
  for k in range(n - 1):
    x = a[k + 1:, k]
    alpha = complex(x[0]) if is_complex else float(x[0])
    tail = math.sqrt(np.vdot(x[1:], x[1:]).real) if len(x) > 1 else 0.0
    if tail == 0 and alpha.imag == 0:
      x[1:] = 0      # the reflector's tail (entries whose squares underflow)
      continue
    beta = -math.copysign(math.hypot(abs(alpha), tail), alpha.real)
    tau = (beta - alpha) / beta
    v = x.copy()
    v[0] = 1
    v[1:] /= alpha - beta
    taus[k] = tau
    # H^H from the left, H from the right (H = I - tau v v^H).
    vh = np.conj(v) if is_complex else v
    block = a[k + 1:, k:]
    block -= np.multiply.outer(v, (tau.conjugate() * vh) @ block)
    cols = a[:, k + 1:]
    cols -= np.multiply.outer(cols @ (tau * v), vh)
    a[k + 1, k] = beta
    a[k + 2:, k] = v[1:]
  return a, taus


def _hessenberg_batch(a: np.ndarray):
  """``_hessenberg_one`` over a batch ``[b, n, n]`` (``n >= 2``), every
  step vectorised over the batch (a loop over matrices paid the column
  loop's calls once a matrix)."""
  a = a.copy()
  b, n, _ = a.shape
  taus = np.zeros((b, n - 1), a.dtype)
  for k in range(n - 1):
    x = a[:, k + 1:, k]
    alpha = x[:, 0].copy()
    tail = np.sqrt((x[:, 1:].real ** 2 + x[:, 1:].imag ** 2).sum(axis=1))
    trivial = (tail == 0) & (alpha.imag == 0)
    beta = -np.copysign(np.hypot(np.abs(alpha), tail), alpha.real)
    tau = np.where(trivial, 0, (beta - alpha) / np.where(trivial, 1, beta))
    v = x.copy()
    v[:, 0] = 1
    v[:, 1:] = np.where(trivial[:, None], 0, v[:, 1:] / np.where(trivial, 1, alpha - beta)[:, None])
    vh = np.conj(v)
    block = a[:, k + 1:, k:]
    w = np.matmul((np.conj(tau)[:, None] * vh)[:, None, :], block)[:, 0]
    block -= v[:, :, None] * w[:, None, :]
    cols = a[:, :, k + 1:]
    u = np.matmul(cols, (tau[:, None] * v)[:, :, None])[:, :, 0]
    cols -= u[:, :, None] * vh[:, None, :]
    a[:, k + 1, k] = np.where(trivial, alpha, beta)
    a[:, k + 2:, k] = v[:, 1:]
    taus[:, k] = tau
  return a, taus


def _q_from_reflectors(packed: np.ndarray, taus: np.ndarray) -> np.ndarray:
  n = packed.shape[-1]
  q = np.eye(n, dtype=packed.dtype)
  for k in reversed(range(n - 1)):
    v = np.concatenate([[1], packed[k + 2:, k]]).astype(packed.dtype)
    block = q[k + 1:, k + 1:]
    block -= taus[k] * np.outer(v, np.conj(v) @ block)
  return q


# ------------------------------------------------------------------ Schur
def _small(h: np.ndarray, i: int) -> bool:
  """Whether the subdiagonal entry ``h[i, i-1]`` is negligible against its
  diagonal neighbours (LAPACK's test; a zero diagonal pair falls back to a
  tiny multiple of the matrix norm)."""
  eps = np.finfo(h.dtype).eps
  local = np.abs(h[i - 1, i - 1]) + np.abs(h[i, i])
  return np.abs(h[i, i - 1]) <= eps * max(local, eps * np.linalg.norm(h))


def _active_start(h: np.ndarray, hi: int) -> int:
  """The first row of the unreduced block ending at ``hi``; the negligible
  subdiagonal entry above it is set to zero."""
  lo = hi
  while lo > 0 and not _small(h, lo):
    lo -= 1
  if lo > 0:
    h[lo, lo - 1] = 0
  return lo


def _single_shift_start(h: np.ndarray, lo: int, hi: int, mu) -> int:
  """The row where the QR sweep starts: the lowest ``m > lo`` whose
  subdiagonal ``h[m, m-1]`` is negligible against the shifted first column
  there (two consecutive small subdiagonals, LAPACK ``lahqr``), else ``lo``.
  Starting below ``lo`` keeps nearly split blocks from stalling the sweep at
  the rounding floor."""
  eps = np.finfo(h.dtype).eps
  for m in range(hi - 1, lo, -1):
    h11s = h[m, m] - mu
    scale = abs(h11s) + abs(h[m + 1, m])
    if scale == 0:
      continue
    if (abs(h[m, m - 1]) * abs(h[m + 1, m]) / scale
        <= eps * abs(h11s) / scale * (abs(h[m - 1, m - 1]) + abs(h[m, m]))):
      return m
  return lo


def _double_shift_column(h: np.ndarray, m: int, s, t):
  """The first column's nonzeros of ``h^2 - s h + t I`` at row ``m``."""
  return (h[m, m] ** 2 + h[m, m + 1] * h[m + 1, m] - s * h[m, m] + t,
          h[m + 1, m] * (h[m, m] + h[m + 1, m + 1] - s),
          h[m + 1, m] * h[m + 2, m + 1])


def _double_shift_start(h: np.ndarray, lo: int, hi: int, s, t):
  """As ``_single_shift_start`` for the double shift (EISPACK ``hqr``)."""
  eps = np.finfo(h.dtype).eps
  for m in range(hi - 2, lo, -1):
    x, y, zz = _double_shift_column(h, m, s, t)
    scale = abs(x) + abs(y) + abs(zz)
    if scale == 0:
      continue
    if (abs(h[m, m - 1]) * (abs(y) + abs(zz)) / scale
        <= eps * abs(x) / scale * (abs(h[m - 1, m - 1]) + abs(h[m, m]) + abs(h[m + 1, m + 1]))):
      return m, (x, y, zz)
  return lo, _double_shift_column(h, lo, s, t)


def _schur_complex(h: np.ndarray, z: np.ndarray):
  n = h.shape[-1]
  hi, sweeps = n - 1, 0
  while hi > 0:
    lo = _active_start(h, hi)
    if lo == hi:
      hi, sweeps = hi - 1, 0
      continue
    sweeps += 1
    if sweeps > _MAX_SWEEPS_PER_EIGENVALUE:
      h[:] = np.nan
      return h, z
    # The Wilkinson shift: the eigenvalue of the trailing 2x2 nearer h[hi, hi]
    # (an exceptional shift every 10 sweeps breaks cycles).
    a, b, c, d = h[hi - 1, hi - 1], h[hi - 1, hi], h[hi, hi - 1], h[hi, hi]
    half_tr = (a + d) / 2
    disc = np.sqrt((a - d) ** 2 / 4 + b * c + 0j)
    mu1, mu2 = half_tr + disc, half_tr - disc
    mu = mu1 if abs(mu1 - d) < abs(mu2 - d) else mu2
    if sweeps % 10 == 0:
      mu = d + 0.75 * abs(h[hi, hi - 1])
    start = _single_shift_start(h, lo, hi, mu)
    x, y = h[start, start] - mu, h[start + 1, start]
    for k in range(start, hi):
      r = np.hypot(abs(x), abs(y))
      cs, sn = (1.0, 0.0) if r == 0 else (x / r, y / r)
      g = np.array([[np.conj(cs), np.conj(sn)], [-sn, cs]], h.dtype)
      h[k:k + 2, :] = g @ h[k:k + 2, :]
      h[:, k:k + 2] = h[:, k:k + 2] @ np.conj(g.T)
      z[:, k:k + 2] = z[:, k:k + 2] @ np.conj(g.T)
      if k < hi - 1:
        x, y = h[k + 1, k], h[k + 2, k]
    h[np.tril_indices(n, -2)] = 0      # the chased bulge, zero up to rounding
  return np.triu(h), z


def _householder_real(x: np.ndarray):
  """``(v, beta)`` with ``(I - beta v v^T) x`` a multiple of ``e_1``."""
  alpha = np.linalg.norm(x)
  v = x.copy()
  if alpha == 0:
    return v, 0.0
  v[0] += np.copysign(alpha, x[0])
  return v, 2.0 / (v @ v)


def _apply_real(h, z, k: int, v, beta, hi: int):
  """The similarity by ``I - beta v v^T`` on rows/columns ``k..k+len(v)-1``."""
  m = len(v)
  h[k:k + m, :] -= beta * np.outer(v, v @ h[k:k + m, :])
  h[:, k:k + m] -= beta * np.outer(h[:, k:k + m] @ v, v)
  z[:, k:k + m] -= beta * np.outer(z[:, k:k + m] @ v, v)


def _split_real_pair(h, z, i: int):
  """Triangularise the 2x2 block at ``i`` when its eigenvalues are real."""
  a, b, c, d = h[i, i], h[i, i + 1], h[i + 1, i], h[i + 1, i + 1]
  disc = ((a - d) / 2) ** 2 + b * c
  if c == 0 or disc < 0:
    return
  lam = (a + d) / 2 + np.copysign(np.sqrt(disc), (a - d) / 2 if a != d else 1.0)
  vec = np.array([b, lam - a]) if abs(b) + abs(lam - a) > abs(lam - d) + abs(c) else \
      np.array([lam - d, c])
  vec = vec / np.linalg.norm(vec)
  g = np.array([[vec[0], -vec[1]], [vec[1], vec[0]]], h.dtype)
  h[i:i + 2, :] = g.T @ h[i:i + 2, :]
  h[:, i:i + 2] = h[:, i:i + 2] @ g
  z[:, i:i + 2] = z[:, i:i + 2] @ g
  h[i + 1, i] = 0


def _schur_real(h: np.ndarray, z: np.ndarray):
  n = h.shape[-1]
  hi, sweeps = n - 1, 0
  while hi > 0:
    lo = _active_start(h, hi)
    if lo == hi:
      hi, sweeps = hi - 1, 0
      continue
    if lo == hi - 1:
      _split_real_pair(h, z, hi - 1)
      hi, sweeps = hi - 2, 0
      continue
    sweeps += 1
    if sweeps > _MAX_SWEEPS_PER_EIGENVALUE:
      h[:] = np.nan
      return h, z
    # Francis' double shift by the trailing 2x2's eigenvalues (their sum s
    # and product t; exceptional values every 10 sweeps).
    s = h[hi - 1, hi - 1] + h[hi, hi]
    t = h[hi - 1, hi - 1] * h[hi, hi] - h[hi - 1, hi] * h[hi, hi - 1]
    if sweeps % 10 == 0:
      # EISPACK hqr's exceptional shifts: roots of (l - c)^2 - 1.5 w (l - c)
      # + w^2 around c = h[hi, hi].
      w = abs(h[hi, hi - 1]) + abs(h[hi - 1, hi - 2])
      c = h[hi, hi]
      s, t = 2 * c + 1.5 * w, c * c + 1.5 * w * c + w * w
    start, (x, y, zz) = _double_shift_start(h, lo, hi, s, t)
    for k in range(start, hi - 1):
      v, beta = _householder_real(np.array([x, y, zz]))
      _apply_real(h, z, k, v, beta, hi)
      x, y = h[k + 1, k], h[k + 2, k]
      if k < hi - 2:
        zz = h[k + 3, k]
    v, beta = _householder_real(np.array([x, y]))
    _apply_real(h, z, hi - 1, v, beta, hi)
    # The reflectors zero the bulge up to rounding; keep h Hessenberg.
    h[np.tril_indices(n, -2)] = 0
  # Only the subdiagonal entries of 2x2 blocks survive below the diagonal.
  return np.triu(h, -1) * _quasi_mask(h), z


def _quasi_mask(h: np.ndarray) -> np.ndarray:
  n = h.shape[-1]
  mask = np.triu(np.ones((n, n), bool))
  sub = np.arange(n - 1)
  mask[sub + 1, sub] = h[sub + 1, sub] != 0
  return mask


# A Schur form from LAPACK's eigenvectors (geev), accepted when it is one to
# rounding: the dropped part below the (quasi-)triangle within this many
# n * eps64 * ||a||_F (LAPACK's gees guarantees a backward error of that order).
_EIG_SCHUR_TOLERANCE = 64


def schur_from_eig(work: np.ndarray):
  """``(t, z, ok)`` for a batch ``[b, n, n]`` (float64/complex128, ``n >=
  2``) from the eigenvectors: ``ok[i]`` says whether matrix ``i``'s
  ``(t[i], z[i])`` is a Schur form; the others take the QR iteration (the
  Python loop: ~1 ms at 5x5).

  geev computes ``a = Z T Z^H`` and ``T``'s eigenvectors ``Y`` (upper
  triangular), returning ``V = Z Y``; so the QR factorisation ``V = Q R``
  gives ``Q = Z`` up to column phases and ``Q^H a Q = R diag(w) R^-1`` is
  upper triangular, its diagonal geev's eigenvalues in geev's order. For
  real input each complex pair's ``(v, conj v)`` becomes ``(Re v, Im v)``,
  which gives a real 2x2 block. Defective or nearly defective matrices
  (an ill-conditioned ``V``) leave more than rounding below the triangle and
  fail the check, as do non-finite ones."""
  b, n, _ = work.shape
  ok = np.isfinite(work).all(axis=(1, 2))
  clean = np.where(ok[:, None, None], work, 0)
  try:
    w, v = np.linalg.eig(clean)
  except np.linalg.LinAlgError:
    return None, None, np.zeros(b, bool)
  pair_first = np.zeros(w.shape, bool)
  if work.dtype.kind != "c" and w.dtype.kind == "c":
    # Pairs come first the eigenvalue of positive imaginary part (geev).
    pair_first = w.imag > 0
    v = np.where((w.imag < 0)[:, None, :], v.imag, v.real)
  q = np.linalg.qr(v)[0]
  t = np.matmul(np.conj(np.swapaxes(q, -1, -2)), np.matmul(clean, q))
  drop = np.broadcast_to(_strict_lower(n), t.shape)
  if pair_first.any():
    drop = drop.copy()
    sub = np.arange(n - 1)
    drop[:, sub + 1, sub] = ~pair_first[:, :-1]
  bound = (_EIG_SCHUR_TOLERANCE * n * np.finfo(np.float64).eps) ** 2 * _sum_sq(clean)
  ok &= _sum_sq(np.where(drop, t, 0)) <= bound
  t[drop] = 0
  if pair_first.any():
    # Each 2x2 block must hold its complex pair (negative discriminant) to
    # be a real Schur form's block.
    m, i = np.nonzero(pair_first[:, :-1])
    a11, a12, a21, a22 = t[m, i, i], t[m, i, i + 1], t[m, i + 1, i], t[m, i + 1, i + 1]
    ok[m[((a11 - a22) / 2) ** 2 + a12 * a21 >= 0]] = False
  return t, q, ok


def _sum_sq(m: np.ndarray) -> np.ndarray:
  """The squared Frobenius norms of a batch ``[b, n, n]``."""
  return (m.real ** 2 + m.imag ** 2 if m.dtype.kind == "c" else m * m).sum(axis=(1, 2))


@functools.cache
def _strict_lower(n: int) -> np.ndarray:
  mask = np.tril(np.ones((n, n), bool), -1)
  mask.flags.writeable = False
  return mask


def _schur_one(a: np.ndarray, compute_schur_vectors: bool):
  packed, taus = _hessenberg_one(a)
  h = np.triu(packed, -1)
  z = _q_from_reflectors(packed, taus)
  t, z = (_schur_complex if a.dtype.kind == "c" else _schur_real)(h, z)
  return t, z


# ------------------------------------------------------------- hessenberg
hessenberg_p = Primitive("hessenberg", multiple_results=True, kind="nondifferentiable")


def hessenberg(a):
  """The Hessenberg reduction of square ``a`` (``[..., n, n]``), in LAPACK
  ``gehrd``'s form: ``(a_out, taus)``, ``a_out`` holding ``H`` on and above
  the first subdiagonal and the Householder vectors below it."""
  return hessenberg_p.bind(a)


@hessenberg_p.def_impl
def hessenberg_impl(a):
  n = a.shape[-1]
  batch = math.prod(a.shape[:-2])
  if n >= 2 and lapack.available() and not lapack.vectorized_batch_is_faster(batch, n):
    packed, taus = lapack.gehrd(lapack_dtype(a).reshape(batch, n, n))
    return [packed.reshape(a.shape).astype(a.dtype, copy=False),
            taus.reshape(a.shape[:-2] + (n - 1,)).astype(a.dtype, copy=False)]
  if batch <= 1 or n < 2:
    return _batched_impl(_hessenberg_one, a, 2)
  work = a if a.dtype.kind == "c" or a.dtype in (np.float32, np.float64) else a.astype(np.float32)
  flat = work.reshape(batch, n, n).astype(np.result_type(work.dtype, np.float64))
  packed, taus = _hessenberg_batch(flat)
  return [packed.reshape(a.shape).astype(a.dtype), taus.reshape(a.shape[:-2] + (n - 1,))
          .astype(a.dtype)]


@hessenberg_p.def_abstract_eval
def _hessenberg_abstract_eval(a):
  _check_square("hessenberg", a)
  n = a.shape[-1]
  return [ShapedArray(a.shape, a.dtype), ShapedArray(a.shape[:-2] + (max(n - 1, 0),), a.dtype)]


hessenberg_p.def_sharding_rule(replicated_rule)


batch_at_front(hessenberg_p)


# ------------------------------------------------------------------ schur
schur_p = Primitive("schur", multiple_results=True)


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):
  """The Schur decomposition ``x = vs @ t @ vs^H`` of square ``x``:
  ``(t, vs)``, or ``(t,)`` without ``compute_schur_vectors``. Sorting the
  eigenvalues is not supported (as in JAX on most backends)."""
  if sort_eig_vals or select_callable is not None:
    raise NotImplementedError("lax.linalg.schur: sort_eig_vals and select_callable are not "
                              "supported by openjax")
  return schur_p.bind(x, compute_schur_vectors=bool(compute_schur_vectors))


@schur_p.def_impl
def _schur_impl(x, *, compute_schur_vectors):
  n = x.shape[-1]
  if lapack.available():
    t, vs = lapack.gees(lapack_dtype(x).reshape(math.prod(x.shape[:-2]), n, n),
                        compute_schur_vectors)
    outs = [t.reshape(x.shape).astype(x.dtype, copy=False)]
    if compute_schur_vectors:
      outs.append(vs.reshape(x.shape).astype(x.dtype, copy=False))
    return outs
  if n < 2 or x.size == 0:
    outs = _batched_impl(lambda m: _schur_one(m, compute_schur_vectors), x, 2)
    return outs if compute_schur_vectors else outs[:1]
  narrow = x.dtype.kind != "c" and x.dtype not in (np.float32, np.float64)
  work = (x.astype(np.float32) if narrow else x).reshape(-1, n, n)
  work = work.astype(np.result_type(work.dtype, np.float64))
  t, z, ok = schur_from_eig(work)
  if not ok.all():
    if t is None:
      t, z = np.empty_like(work), np.empty_like(work)
    for i in np.flatnonzero(~ok):
      t[i], z[i] = _schur_one(work[i], compute_schur_vectors)
  outs = [t.reshape(x.shape).astype(x.dtype), z.reshape(x.shape).astype(x.dtype)]
  return outs if compute_schur_vectors else outs[:1]


@schur_p.def_abstract_eval
def _schur_abstract_eval(x, *, compute_schur_vectors):
  _check_square("schur", x)
  out = ShapedArray(x.shape, x.dtype)
  return [out, out] if compute_schur_vectors else [out]


schur_p.def_sharding_rule(replicated_rule)


schur_p.def_jvp(_not_differentiable("schur"))
batch_at_front(schur_p)
