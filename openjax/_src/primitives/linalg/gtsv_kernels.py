"""NumPy kernels of ``tridiagonal_solve``'s eager impl: Gaussian elimination
with partial pivoting on tridiagonal systems, row by row (the elimination is
inherently serial), vectorised over a batch of systems.

``gtsv``/``gtsv_one``: LAPACK ``gtsv``'s pivoting (the larger of the pivot
and the entry below it); a zero pivot of ``U`` makes the system singular
(NaNs). ``gtsv_perturbed``: ``perturb_singular=True`` as JAX's CPU kernel
computes it: pivoting scaled by the rows' sizes (LAPACK ``lagtf``'s rule),
then back substitution where a pivot smaller than one whose quotient would
overflow is moved away from zero by ``eps * max|U|`` (doubled until the
quotient fits, ``lagts``' rule) and the result is finite. The compiled
lowering (``control/linalg_extra_lowering.py``) follows the same steps.

Rows: ``sub[i] = A[i+1, i]``, ``sup[i] = A[i, i+1]``; ``U`` has a second
superdiagonal ``sup2`` where rows were swapped.
"""
from __future__ import annotations

import numpy as np


def pivot_size(x: np.ndarray) -> np.ndarray:
  # zgtsv compares |re| + |im|, dgtsv |x|.
  return np.abs(x.real) + np.abs(x.imag) if x.dtype.kind == "c" else np.abs(x)


def gtsv(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray) -> np.ndarray:
  """LAPACK ``gtsv`` over a batch (``[B, m]`` diagonals, ``[B, m, k]``
  right-hand sides): ``x``, NaNs for singular systems."""
  m = d.shape[1]
  sub, d, sup = dl[:, 1:].copy(), d.copy(), du[:, :-1].copy()
  sup2 = np.zeros_like(sub)
  b = b.copy()
  for i in range(m - 1):
    swap = pivot_size(d[:, i]) < pivot_size(sub[:, i])
    # No swap: row i+1 -= fact * row i. A zero pivot (then the entry below is
    # zero too) eliminates nothing and leaves U singular.
    piv = np.where(swap, sub[:, i], d[:, i])
    fact = np.where(swap, d[:, i], sub[:, i]) / np.where(piv == 0, 1, piv)
    d_next = d[:, i + 1].copy()
    sup_i = sup[:, i].copy()
    sup_next = sup[:, i + 1].copy() if i + 1 < m - 1 else np.zeros_like(sup_i)
    d[:, i] = piv
    # No swap: U's row i is (d_i, sup_i, 0); row i+1 becomes (d_{i+1} - f sup_i, sup_{i+1}).
    # Swap: U's row i is (sub_i, d_{i+1}, sup_{i+1}); row i+1 becomes
    # (sup_i - f d_{i+1}, -f sup_{i+1}).
    d[:, i + 1] = np.where(swap, sup_i - fact * d_next, d_next - fact * sup_i)
    sup[:, i] = np.where(swap, d_next, sup_i)
    sup2[:, i] = np.where(swap, sup_next, 0)
    if i + 1 < m - 1:
      sup[:, i + 1] = np.where(swap, -fact * sup_next, sup_next)
    bi, bn = b[:, i].copy(), b[:, i + 1].copy()
    sw = swap[:, None]
    b[:, i] = np.where(sw, bn, bi)
    b[:, i + 1] = np.where(sw, bi - fact[:, None] * bn, bn - fact[:, None] * bi)
  x = np.zeros_like(b)
  for i in reversed(range(m)):
    r = b[:, i].copy()
    if i + 1 < m:
      r -= sup[:, i, None] * x[:, i + 1]
    if i + 2 < m:
      r -= sup2[:, i, None] * x[:, i + 2]
    x[:, i] = r / np.where(d[:, i] == 0, 1, d[:, i])[:, None]
  x[np.any(d == 0, axis=1)] = np.nan
  return x


def gtsv_one(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray) -> np.ndarray:
  """``gtsv`` of one system (``[m]`` diagonals, ``[m, k]`` ``b``) on NumPy
  scalars: the same operations as ``gtsv``'s (the same bits for real
  dtypes), without its per-row array calls."""
  m, k = b.shape
  zero = d.dtype.type(0)
  sub, d, sup = list(dl[1:]), list(d), [*du[:-1], zero]
  sup2 = [zero] * m
  rows = [list(r) for r in b]
  for i in range(m - 1):
    di, dn, si, supi, supn = d[i], d[i + 1], sub[i], sup[i], sup[i + 1]
    if abs(di) < abs(si):         # swap rows i and i+1
      fact = di / si
      d[i], d[i + 1], sup[i], sup2[i], sup[i + 1] = si, supi - fact * dn, dn, supn, -fact * supn
      bi, bn = rows[i], rows[i + 1]
      rows[i], rows[i + 1] = bn, [x - fact * y for x, y in zip(bi, bn)]
    else:                         # a zero pivot (and zero below it) eliminates nothing
      fact = si / (di if di != 0 else 1)
      d[i + 1] = dn - fact * supi
      rows[i + 1] = [y - fact * x for x, y in zip(rows[i], rows[i + 1])]
  x = [None] * m
  for i in reversed(range(m)):
    r = rows[i]
    if i + 1 < m:
      r = [a - sup[i] * c for a, c in zip(r, x[i + 1])]
    if i + 2 < m:
      r = [a - sup2[i] * c for a, c in zip(r, x[i + 2])]
    x[i] = [a / (d[i] if d[i] != 0 else 1) for a in r]
  out = np.array(x, d[0].dtype if m else b.dtype).reshape(m, k)
  if any(v == 0 for v in d):
    out[:] = np.nan
  return out


def perturbed_pivots(p: np.ndarray, step: np.ndarray, row: np.ndarray):
  """``(p, row)`` with pivots ``p`` (``[B]``) below one moved where the
  quotient ``row / p`` (``[B, k]``) would overflow: by ``step`` (``eps *
  max|U|``, at least the smallest normal, with ``p``'s sign), doubled until
  it fits -- ``step (2^j - 1)`` for the least such ``j`` -- or, for a
  subnormal pivot whose quotient fits, ``p`` and ``row`` scaled up by
  ``1 / tiny``."""
  finfo = np.finfo(np.abs(p).dtype)
  tiny, big = finfo.tiny, 1 / finfo.tiny
  mag = np.abs(p)
  largest = np.max(np.abs(row), axis=1, initial=0)
  need = largest * tiny                                        # the least safe |p|
  small = mag < tiny
  bump = (mag < 1) & np.where(small, (mag == 0) | (need > mag), largest > mag * big)
  scale = (mag < 1) & small & ~bump
  t = np.copysign(np.maximum(np.abs(step), tiny), p.real).astype(mag.dtype)
  # The least j >= 1 with |p| + |t| (2^j - 1) >= need (where the doubling
  # loop ends), from the exponent of r = (need - |p|) / |t| + 1, exactly.
  frac, e = np.frexp(np.maximum((need - mag) / np.abs(t), 0) + 1)
  j = np.maximum(np.where(frac == 0.5, e - 1, e), 1)
  p = np.where(bump, p + t * (np.ldexp(np.ones_like(mag), j) - 1), p)
  p = np.where(scale, p * big, p)
  return p, np.where(scale[:, None], row * big, row)


def gtsv_perturbed(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray) -> np.ndarray:
  """``perturb_singular=True`` over a batch: finite ``x`` for singular
  systems too (see the module's docstring)."""
  nb, m, k = b.shape
  eps = np.finfo(np.abs(d).dtype).eps
  if m == 1:
    p, row = perturbed_pivots(d[:, 0], eps * np.abs(d[:, 0]), b[:, 0])
    return (row / p[:, None])[:, None, :]
  u0, u1, u2 = d.copy(), np.zeros_like(d), np.zeros_like(d)   # U's three diagonals
  u1[:, 0] = du[:, 0]
  x = b.copy()
  max_u = np.maximum(np.abs(d[:, 0]), np.abs(du[:, 0]))
  scale1 = np.abs(d[:, 0]) + np.abs(du[:, 0])
  for i in range(m - 1):
    s = dl[:, i + 1]
    scale2 = np.abs(s) + np.abs(d[:, i + 1])
    if i < m - 2:
      scale2 = scale2 + np.abs(du[:, i + 1])
    piv1 = np.where(u0[:, i] == 0, 0, np.abs(u0[:, i]) / scale1)
    swap = (s != 0) & (np.abs(s) / scale2 > piv1)
    keep = (s != 0) & ~swap
    fact = np.where(swap, u0[:, i], s) / np.where(swap, s, np.where(keep, u0[:, i], 1))
    ui1, ui0 = u1[:, i].copy(), u0[:, i].copy()
    du_next = du[:, i + 1] if i < m - 2 else np.zeros_like(s)
    u0[:, i] = np.where(swap, s, ui0)
    u0[:, i + 1] = np.where(swap, ui1 - fact * d[:, i + 1],
                            np.where(keep, d[:, i + 1] - fact * ui1, d[:, i + 1]))
    u1[:, i] = np.where(swap, d[:, i + 1], ui1)
    u2[:, i] = np.where(swap, du_next, 0)
    u1[:, i + 1] = np.where(swap, -fact * du_next, du[:, i + 1])
    xi = x[:, i].copy()
    x[:, i] = np.where(swap[:, None], b[:, i + 1], xi)
    x[:, i + 1] = np.where(swap[:, None], xi - fact[:, None] * b[:, i + 1],
                           np.where(keep[:, None], b[:, i + 1] - fact[:, None] * xi,
                                    b[:, i + 1]))
    scale1 = np.where(swap, np.abs(u0[:, i + 1]) + np.abs(u1[:, i + 1]), scale2)
    if i < m - 2:   # JAX's kernel leaves row m-2 out of max|U|
      max_u = np.maximum(max_u, np.maximum(np.abs(u0[:, i]),
                                           np.maximum(np.abs(u1[:, i]), np.abs(u2[:, i]))))
  max_u = np.maximum(max_u, np.abs(u0[:, m - 1]))
  step = eps * max_u
  for i in reversed(range(m)):
    row = x[:, i].copy()
    if i + 1 < m:
      row -= u1[:, i, None] * x[:, i + 1]
    if i + 2 < m:
      row -= u2[:, i, None] * x[:, i + 2]
    p, row = perturbed_pivots(u0[:, i], step, row)
    x[:, i] = row * (1 / p)[:, None]
  return x
