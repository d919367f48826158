"""NumPy kernels of the eager ``lu``, ``lu_pivots_to_permutation`` and
``triangular_solve`` impls (``lu`` and ``triangular_solve`` call LAPACK's
getrf/trsm through ``lapack.py`` instead where the library loads, except for
large batches of small matrices): a recursive partial-pivoting LU with LAPACK
getrf's pivots, the permutation of a pivot sequence, and a blocked forward
substitution (trsm). Matrix products go to BLAS; the loops left are the
inherently sequential ones (a panel's pivot search, the rows of a
substitution block), whose cost is their NumPy calls.
"""
from __future__ import annotations

import math

import numpy as np


def forward_substitution(t: np.ndarray, b: np.ndarray, unit_diagonal: bool) -> np.ndarray:
  """Solve ``t x = b`` for lower-triangular ``t`` (``[..., n, n]``,
  ``[..., n, k]``; equal batch dims; only the lower triangle is read, the
  diagonal only without ``unit_diagonal``) as blocked trsm: recursive
  halves, the off-diagonal block's update one matrix product (BLAS-3), down
  to ``_SUBSTITUTION_ROWS`` rows solved row by row. A 1000 x 1000 system
  with 1000 right-hand sides took ~120-300 ms row by row (a matrix-vector
  product a row), LAPACK ~20-100 ms on the loaded machine."""
  x = np.empty(b.shape, b.dtype)
  if math.prod(b.shape[:-2]) == 1:
    # One system: 2-D steps (a third cheaper a row than batched ones).
    _substitute_into(t.reshape(t.shape[-2:]), b.reshape(b.shape[-2:]), x.reshape(b.shape[-2:]),
                     unit_diagonal)
  else:
    _substitute_into(t, b, x, unit_diagonal)
  return x


def _substitute_into(t: np.ndarray, b: np.ndarray, x: np.ndarray, unit: bool) -> None:
  n = t.shape[-1]
  if n > _SUBSTITUTION_ROWS:
    h = n // 2
    _substitute_into(t[..., :h, :h], b[..., :h, :], x[..., :h, :], unit)
    _substitute_into(t[..., h:, h:], b[..., h:, :] - np.matmul(t[..., h:, :h], x[..., :h, :]),
                     x[..., h:, :], unit)
    return
  if not n:
    return
  x[..., 0, :] = b[..., 0, :] if unit else b[..., 0, :] / t[..., 0, 0, None]
  if x.ndim == 2:
    for i in range(1, n):
      x[i] = b[i] - t[i, :i] @ x[:i]
      if not unit:
        x[i] /= t[i, i]
    return
  for i in range(1, n):
    x[..., i, :] = b[..., i, :] - np.matmul(t[..., i, None, :i], x[..., :i, :])[..., 0, :]
    if not unit:
      x[..., i, :] /= t[..., i, i, None]


_SUBSTITUTION_ROWS = 32


def partial_pivoting_lu(a: np.ndarray):
  """Partial-pivoting LU of a batch ``[b, m, n]`` with LAPACK getrf's pivots
  (the first row of largest magnitude, |re| + |im| for complex numbers).

  Recursive (Toledo's LU, as OpenBLAS's getrf): the left half of the columns
  is factored, the top rows of the right half solved with its unit lower
  triangle, the rest of the right half updated by one matrix product, then
  the right half factored. Panels of up to ``_LU_LEAF`` columns are
  eliminated column by column; everything else is BLAS-3 (``np.matmul``,
  ``np.linalg.solve``). A float64 1000 x 1000 LU took ~80 ms by panels of 32
  with row-by-row panel solves; the per-column Python steps were the cost."""
  b, m, n = a.shape
  k = min(m, n)
  a = a.copy()
  pivots = np.zeros((b, k), np.int32)
  if b > 1 and k <= _LU_LEAF:
    a = _lu_small_batch(a, pivots)
    return a, pivots, pivots_to_permutation(pivots, m)
  leaf = _lu_leaf_one if b == 1 else _lu_leaf_batch
  _lu_recursive(a, pivots, 0, k, leaf)
  if k < n:   # the columns right of a wide matrix's square part: rows of U
    a[:, :, k:] = _unit_lower_solve(a[:, :, :k], a[:, :, k:])
  # The permutation from the pivots afterwards, not swapped along each column.
  perm = pivots_to_permutation(pivots, m)
  return a, pivots, perm


_LU_LEAF = 32


def _lu_recursive(a, pivots, j0: int, j1: int, leaf) -> None:
  """Factor columns ``j0:j1`` (rows ``j0:``) in place; row swaps move whole
  rows, as getrf's ``laswp`` on both sides."""
  if j1 - j0 <= _LU_LEAF:
    leaf(a, pivots, j0, j1)
    return
  h = j0 + (j1 - j0) // 2
  _lu_recursive(a, pivots, j0, h, leaf)
  # U12 = L11^-1 A12, then A22 -= L21 U12.
  a[:, j0:h, h:j1] = _unit_lower_solve(a[:, j0:h, j0:h], a[:, j0:h, h:j1])
  a[:, h:, h:j1] -= np.matmul(a[:, h:, j0:h], a[:, j0:h, h:j1])
  _lu_recursive(a, pivots, h, j1, leaf)


def _unit_lower_solve(packed: np.ndarray, rhs: np.ndarray) -> np.ndarray:
  """``L^-1 rhs`` for the unit lower triangle ``L`` of square ``packed``
  (``[b, s, s]``; the entries on and above the diagonal are ignored): a
  recursive block solve (its updates matrix products) down to blocks of
  ``_SOLVE_BASE`` rows, each solved by LAPACK's gesv."""
  s = packed.shape[-1]
  if s > _SOLVE_BASE:
    h = s // 2
    top = _unit_lower_solve(packed[:, :h, :h], rhs[:, :h])
    bottom = _unit_lower_solve(packed[:, h:, h:], rhs[:, h:] - np.matmul(packed[:, h:, :h], top))
    return np.concatenate([top, bottom], axis=1)
  tri = np.tril(packed, -1)
  tri[:, range(s), range(s)] = 1
  try:
    # L is unit triangular, so never singular: gesv's pivoting only
    # reorders the solve.
    return np.linalg.solve(tri, rhs)
  except np.linalg.LinAlgError:    # a zero pivot from NaN/inf entries
    out = rhs.copy()
    for r in range(1, s):
      out[:, r] -= np.matmul(tri[:, r, None, :r], out[:, :r])[:, 0]
    return out


_SOLVE_BASE = 64


def _lu_leaf_one(a: np.ndarray, pivots, j0: int, j1: int) -> None:
  """Eliminate columns ``j0:j1`` of the single matrix ``a[0]`` (rows
  ``j0:``) in Crout's order: column ``j`` gets all its updates at once (a
  matrix-vector product with the finished columns), then its pivot, then row
  ``j`` of ``U`` within the panel. Two BLAS calls a column in place of a
  rank-1 update of the whole panel (~15 us a column of 1000 rows, 2.5x
  fewer than the right-looking order), and plain 2-D steps: a batch of one
  pays no fancy indexing."""
  x, piv = a[0], pivots[0]
  complex_kind = x.dtype.kind == "c"
  for j in range(j0, j1):
    if j > j0:
      x[j:, j] -= x[j:, j0:j] @ x[j0:j, j]
    col = x[j:, j]
    mag = np.abs(col.real) + np.abs(col.imag) if complex_kind else np.abs(col)
    i = j + int(mag.argmax())
    piv[j] = i
    if i != j:
      x[j], x[i] = x[i].copy(), x[j].copy()
    if j0 < j < j1 - 1:
      x[j, j + 1:j1] -= x[j, j0:j] @ x[j0:j, j + 1:j1]
    d = x[j, j]
    if d != 0:
      x[j + 1:, j] /= d


def _lu_leaf_batch(a: np.ndarray, pivots, j0: int, j1: int) -> None:
  """``_lu_leaf_one`` over a batch, right-looking: every step vectorised
  over the batch (a row swap is one gather, one scatter and one copy)."""
  rows = np.arange(a.shape[0])
  for j in range(j0, j1):
    col = a[:, j:, j]
    mag = np.abs(col.real) + np.abs(col.imag) if a.dtype.kind == "c" else np.abs(col)
    i = j + np.argmax(mag, axis=1)
    pivots[:, j] = i
    row_i = a[rows, i]
    a[rows, i] = a[:, j]      # rows i and j never share memory where i != j
    a[:, j] = row_i
    d = a[:, j, j]
    a[:, j + 1:, j] /= np.where(d != 0, d, 1)[:, None]   # a zero pivot leaves its column
    if j + 1 < j1:
      a[:, j + 1:, j + 1:j1] -= a[:, j + 1:, j, None] * a[:, j, None, j + 1:j1]


def _lu_small_batch(a: np.ndarray, pivots) -> np.ndarray:
  """Right-looking LU of a batch of small matrices with the batch as the
  last axis: every step's inner loop runs over the batch, contiguous (batch
  first, a [50, 8, 8] update is 200 inner loops of 4 elements: ~3x slower)."""
  at = np.ascontiguousarray(a.transpose(1, 2, 0))      # [m, n, b]
  rows = np.arange(at.shape[2])
  for j in range(pivots.shape[1]):
    col = at[j:, j]
    mag = np.abs(col.real) + np.abs(col.imag) if at.dtype.kind == "c" else np.abs(col)
    i = j + np.argmax(mag, axis=0)
    pivots[:, j] = i
    row_j = at[j].copy()
    at[j] = at[i, :, rows].T
    at[i, :, rows] = row_j.T
    d = at[j, j]
    at[j + 1:, j] /= np.where(d != 0, d, 1)       # a zero pivot leaves its column
    at[j + 1:, j + 1:] -= at[j + 1:, j, None] * at[j, None, j + 1:]
  return np.ascontiguousarray(at.transpose(2, 0, 1))


def pivots_to_permutation(pivots: np.ndarray, permutation_size: int) -> np.ndarray:
  """The permutation (int32 ``[..., permutation_size]``) made by applying
  the row swaps ``pivots`` (``[..., k]``) in order to ``arange``."""
  *batch, k = pivots.shape
  piv = pivots.reshape(math.prod(batch), k)   # -1 fails for k = 0
  if piv.shape[0] <= _PYTHON_SWAP_BATCH:
    # A few permutations: the swaps on Python lists (~0.1 us a swap, where
    # a fancy-indexed step over the batch costs ~10 us).
    perm = np.array([_swapped(permutation_size, row) for row in piv.tolist()], np.int32)
    return perm.reshape(*batch, permutation_size)
  perm = np.broadcast_to(np.arange(permutation_size, dtype=np.int32),
                         (piv.shape[0], permutation_size)).copy()
  rows = np.arange(piv.shape[0])
  for j in range(k):
    i = piv[:, j]
    swapped = perm[rows, i]
    perm[rows, i] = perm[:, j]      # entries i and j never share memory where i != j
    perm[:, j] = swapped
  return perm.reshape(*batch, permutation_size)


_PYTHON_SWAP_BATCH = 16


def _swapped(size: int, pivots: list) -> list:
  order = list(range(size))
  for j, i in enumerate(pivots):
    order[j], order[i] = order[i], order[j]
  return order
