"""The linear-algebra primitives' StableHLO lowerings (the primitives and
their other rules are in ``primitives/linalg/linalg.py``).

IREE has no LAPACK, so each decomposition is written here with lax wrappers
(loops over columns with dynamic slices, ``while_loop``/``fori_loop``) and
the lowering rule traces it and emits it inline (``lower_traced``): Cholesky
column by column, triangular solves by forward substitution, Householder QR
with LAPACK's reflector convention (so ``r``'s diagonal signs match
``geqrf``), LU with partial pivoting, Hermitian eigendecomposition by cyclic
Jacobi sweeps and the SVD by one-sided (Hestenes) Jacobi. Every function takes ``[..., m, n]`` operands and
flattens the batch dimensions to one.
"""
from __future__ import annotations

import numpy as np

from openjax._src.control.scan import fori_loop
from openjax._src.control.while_loop import while_loop
from openjax._src.core import get_aval
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.linalg import linalg_rules as lr
from openjax._src.primitives.elementwise import arithmetic as ew
from openjax._src.primitives.shape import shape as sh
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.index.dynamic_slicing import dynamic_slice, dynamic_update_slice
from openjax._src.primitives.linalg.linalg import (cholesky_p, eigh_p, lu_p,
                                                   lu_pivots_to_permutation_p, qr_p, svd_p,
                                                   triangular_solve_p)
from openjax._src.primitives.reduce.reductions import argmax, reduce_max, reduce_or, reduce_sum
from openjax._src.primitives.sort import sort

_I32 = np.dtype(np.int32)
_MAX_SWEEPS = 30


def lower_traced(ctx, fun, operands):
  """Trace ``fun`` (lax wrappers) on the equation's input avals and emit its
  StableHLO into the current block; returns the output values."""
  def flat(*xs):
    out = fun(*xs)
    return list(out) if isinstance(out, (list, tuple)) else [out]
  jaxpr, consts = trace_to_jaxpr(flat, list(ctx.avals_in))
  return ctx.lower_jaxpr_inline(jaxpr, list(operands), consts)


# ------------------------------------------------------------------ helpers
def _i32(v):
  return np.array(v, _I32)


def _zero():
  return _i32(0)


def _row(a, i):
  """``a[:, i, :]`` of a ``[b, m, n]`` array at a traced row ``i``."""
  b, _, n = get_aval(a).shape
  return sh.reshape(dynamic_slice(a, (_zero(), i, _zero()), (b, 1, n),
                                  allow_negative_indices=False), (b, n))


def _col(a, j):
  """``a[:, :, j]`` at a traced column ``j``."""
  b, m, _ = get_aval(a).shape
  return sh.reshape(dynamic_slice(a, (_zero(), _zero(), j), (b, m, 1),
                                  allow_negative_indices=False), (b, m))


def _set_row(a, i, r):
  b, _, n = get_aval(a).shape
  return dynamic_update_slice(a, sh.reshape(r, (b, 1, n)), (_zero(), i, _zero()),
                              allow_negative_indices=False)


def _set_col(a, j, c):
  b, m, _ = get_aval(a).shape
  return dynamic_update_slice(a, sh.reshape(c, (b, m, 1)), (_zero(), _zero(), j),
                              allow_negative_indices=False)


def _entry(a, i, j):
  """``a[:, i, j]`` as ``[b]``."""
  b = get_aval(a).shape[0]
  return sh.reshape(dynamic_slice(a, (_zero(), i, j), (b, 1, 1),
                                  allow_negative_indices=False), (b,))


def _index_grid(b: int, m: int):
  return sh.broadcasted_iota(_I32, (b, m), 1)


def _bcast_vec(v, shape):
  """``[b]`` -> ``shape`` (``[b, ...]``)."""
  return sh.broadcast_in_dim(v, shape, (0,))


def _abs2(x):
  if lr.is_complex(x):
    return ew.add(ew.square(ew.real(x)), ew.square(ew.imag(x)))
  return ew.square(x)


def _to(x, like):
  """``x`` converted to ``like``'s dtype (real -> complex)."""
  dt = get_aval(like).dtype
  return x if get_aval(x).dtype == dt else convert_element_type(x, dt)


def _outer(u, v):
  """``u[:, :, None] * v[:, None, :]``."""
  b, m = get_aval(u).shape
  n = get_aval(v).shape[1]
  return ew.mul(sh.broadcast_in_dim(u, (b, m, n), (0, 1)), sh.broadcast_in_dim(v, (b, m, n), (0, 2)))


def _any_nan(x):
  """``bool[b]``: whether each matrix of ``[b, m, n]`` holds a NaN."""
  return reduce_or(ew.ne(x, x), (1, 2))


def _permute_cols(x, perm):
  """``x[:, :, perm[:, j]]`` for ``[b, m, n]`` ``x`` and ``[b, k]`` ``perm``."""
  n = get_aval(x).shape[2]
  p = lr.onehot(perm, n, get_aval(x).dtype)        # p[b, j, c] = (perm[b, j] == c)
  return lr.mm(x, lr.T(p))


# ---------------------------------------------------------------- cholesky
def cholesky(x):
  a, batch = lr.flatten_batch(x)
  b, n, _ = get_aval(a).shape
  rows = _index_grid(b, n)

  def column(j, l):
    # L[:, j] = (A[:, j] - L L[j, :]^H) / d, d = sqrt of its j-th entry;
    # columns >= j of L are still zero, so the product sums k < j only.
    v = ew.sub(_col(a, j), lr.mv(l, lr.conj(_row(l, j))))
    vj = _entry(sh.reshape(v, (b, n, 1)), j, _zero())
    d = ew.sqrt(ew.real(vj) if lr.is_complex(vj) else vj)
    d_b = _bcast_vec(_to(d, v), (b, n))
    col = ew.select(ew.gt(rows, j), ew.div(v, d_b),
                    ew.select(ew.eq(rows, j), d_b, sh.full_like(v, 0)))
    return _set_col(l, j, col)

  l = fori_loop(_i32(0), _i32(n), column, sh.full_like(a, 0))
  # A failed factorisation is all NaN, as LAPACK's in JAX.
  bad = _bcast_vec(_any_nan(l), (b, n, n))
  return lr.unflatten_batch(ew.select(bad, sh.full_like(l, np.nan), l), batch)


# -------------------------------------------------------- triangular_solve
def _forward_substitution(t, rhs):
  b, n, _ = get_aval(t).shape
  k = get_aval(rhs).shape[2]

  def step(i, x):
    # Rows >= i of x are still zero.
    t_row = dynamic_slice(t, (_zero(), i, _zero()), (b, 1, n), allow_negative_indices=False)
    r = ew.sub(dynamic_slice(rhs, (_zero(), i, _zero()), (b, 1, k),
                             allow_negative_indices=False), lr.mm(t_row, x))
    d = dynamic_slice(t, (_zero(), i, i), (b, 1, 1), allow_negative_indices=False)
    d = sh.broadcast_in_dim(sh.reshape(d, (b,)), (b, 1, k), (0,))
    return dynamic_update_slice(x, ew.div(r, d), (_zero(), i, _zero()),
                                allow_negative_indices=False)

  return fori_loop(_i32(0), _i32(n), step, sh.full_like(rhs, 0))


def triangular_solve(a, b_, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
  t = lr.tril(a) if lower else lr.triu(a)
  if unit_diagonal:
    t = ew.select(ew.ne(lr.eye_like(t), lr.const(t, 0)), sh.full_like(t, 1), t)
  if conjugate_a:
    t = lr.conj(t)
  if transpose_a:
    t = lr.T(t)
  is_lower = lower != transpose_a
  rhs = b_
  if not left_side:              # x t = b  <=>  t^T x^T = b^T
    t, rhs, is_lower = lr.T(t), lr.T(rhs), not is_lower
  nd = get_aval(t).ndim
  if not is_lower:               # reversing rows and columns makes t lower
    t, rhs = sh.rev(t, (nd - 2, nd - 1)), sh.rev(rhs, (nd - 2,))
  tf, batch = lr.flatten_batch(t)
  rf, _ = lr.flatten_batch(rhs)
  x = lr.unflatten_batch(_forward_substitution(tf, rf), batch)
  if not is_lower:
    x = sh.rev(x, (nd - 2,))
  if not left_side:
    x = lr.T(x)
  return x


# ------------------------------------------------------------------ Jacobi
def _jacobi_rotation(app, aqq, apq):
  """The rotation that zeroes the off-diagonal entry of the Hermitian 2x2
  ``[[app, apq], [conj(apq), aqq]]`` (``app``, ``aqq`` real): returns the
  real ``c``, ``s`` and the phase ``w`` (of ``apq``; 1 for real input)."""
  if lr.is_complex(apq):
    mag = ew.abs(apq)
    w = ew.select(ew.eq(mag, lr.const(mag, 0)), sh.full_like(apq, 1),
                  ew.div(apq, _to(mag, apq)))
  else:
    mag, w = apq, None
  zero = ew.eq(mag, lr.const(mag, 0))
  safe = ew.select(zero, sh.full_like(mag, 1), mag)
  theta = ew.div(ew.sub(aqq, app), ew.mul(lr.const(mag, 2), safe))
  sign = ew.select(ew.ge(theta, lr.const(theta, 0)), sh.full_like(theta, 1),
                   sh.full_like(theta, -1))
  t = ew.div(sign, ew.add(ew.abs(theta), ew.sqrt(ew.add(ew.square(theta),
                                                         lr.const(theta, 1)))))
  t = ew.select(zero, sh.full_like(t, 0), t)
  c = ew.rsqrt(ew.add(ew.square(t), lr.const(t, 1)))
  return c, ew.mul(t, c), w


def _rotate(xp, xq, c, s, w):
  """``(c xp - s w xq, s xp + c w xq)`` with ``[b]`` factors over ``[b, n]``."""
  shape = get_aval(xp).shape
  c, s = _bcast_vec(_to(c, xp), shape), _bcast_vec(_to(s, xp), shape)
  wq = xq if w is None else ew.mul(_bcast_vec(w, shape), xq)
  return ew.sub(ew.mul(c, xp), ew.mul(s, wq)), ew.add(ew.mul(s, xp), ew.mul(c, wq))


def _pairs(n: int):
  ps, qs = zip(*[(p, q) for p in range(n) for q in range(p + 1, n)])
  return np.array(ps, _I32), np.array(qs, _I32)


def _pair_at(ps, qs, idx):
  p = sh.reshape(dynamic_slice(ps, (idx,), (1,), allow_negative_indices=False), ())
  q = sh.reshape(dynamic_slice(qs, (idx,), (1,), allow_negative_indices=False), ())
  return p, q


def _real_part(x):
  return ew.real(x) if lr.is_complex(x) else x


def _off_diagonal_ratio(a):
  """max over the batch of ||offdiag(a)||^2 / ||a||^2."""
  sq = _abs2(a)
  total = reduce_sum(sq, (1, 2))
  off = reduce_sum(ew.mul(sq, ew.sub(lr.const(sq, 1), lr.eye_like(sq))), (1, 2))
  ratio = ew.div(off, ew.max(total, np.array(np.finfo(get_aval(sq).dtype).tiny,
                                             get_aval(sq).dtype)))
  return reduce_max(ratio, (0,))


def _sweeps(sweep, state, converged):
  """Run ``sweep`` until ``converged(state)`` or ``_MAX_SWEEPS`` sweeps."""
  def cond(carry):
    count, *st = carry
    return ew.bitwise_and(ew.lt(count, _i32(_MAX_SWEEPS)), ew.bitwise_not(converged(*st)))

  def body(carry):
    count, *st = carry
    return [ew.add(count, _i32(1)), *sweep(*st)]
  return while_loop(cond, body, [_i32(0), *state])[1:]


def _hermitian_from_triangle(a, lower: bool):
  tri = lr.tril(a) if lower else lr.triu(a)
  strict = lr.tril(a, -1) if lower else lr.triu(a, 1)
  full = ew.add(tri, lr.H(strict))
  if lr.is_complex(full):   # the diagonal of a Hermitian matrix is real
    eye = lr.eye_like(full)
    full = ew.add(ew.mul(full, ew.sub(lr.const(eye, 1), eye)),
                  ew.mul(_to(ew.real(full), full), eye))
  return full


def eigh(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
  a, batch = lr.flatten_batch(_hermitian_from_triangle(x, lower))
  b, n, _ = get_aval(a).shape
  dtype = get_aval(a).dtype
  v = sh.broadcast_in_dim(lr.eye(dtype, n), (b, n, n), (1, 2))
  if n > 1:
    ps, qs = _pairs(n)
    eps = float(np.finfo(lr.real_dtype(dtype)).eps)

    def rotation(idx, state):
      a_, v_ = state
      p, q = _pair_at(ps, qs, idx)
      c, s, w = _jacobi_rotation(_real_part(_entry(a_, p, p)), _real_part(_entry(a_, q, q)),
                                 _entry(a_, p, q))
      rp, rq = _rotate(_row(a_, p), _row(a_, q), c, s, w)         # U^H A
      a_ = _set_row(_set_row(a_, p, rp), q, rq)
      wc = None if w is None else ew.conj(w)
      cp, cq = _rotate(_col(a_, p), _col(a_, q), c, s, wc)        # (U^H A) U
      a_ = _set_col(_set_col(a_, p, cp), q, cq)
      vp, vq = _rotate(_col(v_, p), _col(v_, q), c, s, wc)        # V U
      return [a_, _set_col(_set_col(v_, p, vp), q, vq)]

    def sweep(a_, v_):
      return fori_loop(_i32(0), _i32(len(ps)), rotation, [a_, v_])

    def converged(a_, v_):
      return ew.le(_off_diagonal_ratio(a_), np.array(eps * eps, lr.real_dtype(dtype)))

    a, v = _sweeps(sweep, [a, v], converged)
  w = _real_part(lr.diagonal(a))
  if sort_eigenvalues:
    idx = sh.broadcasted_iota(_I32, (b, n), 1)
    w, perm = sort((w, idx), dimension=1, num_keys=1)
    v = _permute_cols(v, perm)
  if subset_by_index is not None:
    lo, hi = subset_by_index
    w = sh.slice(w, (0, lo), (b, hi))
    v = sh.slice(v, (0, 0, lo), (b, n, hi))
  return [lr.unflatten_batch(v, batch), lr.unflatten_batch(w, batch)]


# ---------------------------------------------------------------------- qr
def _householder(a, q, k):
  """One step of LAPACK's geqrf on column ``k``: the reflector
  ``H = I - tau v v^H`` with ``H^H x = beta e_k`` (``beta`` real, its sign
  opposite to ``re(x_k)``; ``tau = 0`` when nothing is below a real diagonal)."""
  b, m, _ = get_aval(a).shape
  rows = _index_grid(b, m)
  col = _col(a, k)
  x = ew.select(ew.ge(rows, k), col, sh.full_like(col, 0))
  alpha = _entry(a, k, k)
  below = ew.select(ew.gt(rows, k), x, sh.full_like(x, 0))
  xnorm2 = reduce_sum(_abs2(below), (1,))
  alpha_re = _real_part(alpha)
  norm = ew.sqrt(ew.add(_abs2(alpha), xnorm2))
  beta = ew.select(ew.ge(alpha_re, lr.const(alpha_re, 0)), ew.neg(norm), norm)
  skip = ew.eq(xnorm2, lr.const(xnorm2, 0))
  if lr.is_complex(alpha):
    skip = ew.bitwise_and(skip, ew.eq(ew.imag(alpha), lr.const(xnorm2, 0)))
  beta_c = _to(beta, alpha)
  tau = ew.select(skip, sh.full_like(alpha, 0), ew.div(ew.sub(beta_c, alpha), beta_c))
  denom = ew.select(skip, sh.full_like(alpha, 1), ew.sub(alpha, beta_c))
  v = ew.select(ew.eq(rows, k), sh.full_like(x, 1), ew.div(below, _bcast_vec(denom, (b, m))))
  # A <- H^H A = A - conj(tau) v (v^H A);  Q <- Q H = Q - tau (Q v) v^H
  vha = lr.mv(lr.H(a), lr.conj(v))                  # [b, n]: sum_i conj(v_i) A[i, :]
  vha = lr.conj(vha) if lr.is_complex(vha) else vha
  n = get_aval(a).shape[2]
  a = ew.sub(a, _outer(ew.mul(_bcast_vec(lr.conj(tau), (b, m)), v), vha))
  new_col = ew.select(ew.lt(rows, k), col,
                      ew.select(ew.eq(rows, k),
                                _bcast_vec(ew.select(skip, alpha, beta_c), (b, m)),
                                sh.full_like(col, 0)))
  a = _set_col(a, k, new_col) if n else a
  qv = lr.mv(q, v)
  q = ew.sub(q, _outer(ew.mul(_bcast_vec(tau, (b, m)), qv), lr.conj(v)))
  return a, q


def qr(x, *, pivoting, full_matrices, use_magma):
  a, batch = lr.flatten_batch(x)
  b, m, n = get_aval(a).shape
  dtype = get_aval(a).dtype
  q = sh.broadcast_in_dim(lr.eye(dtype, m), (b, m, m), (1, 2))
  steps = min(m, n)
  if steps:
    a, q = fori_loop(_i32(0), _i32(steps), lambda k, s: list(_householder(s[0], s[1], k)),
                     [a, q])
  r = lr.triu(a)
  if not full_matrices and m > n:
    q = sh.slice(q, (0, 0, 0), (b, m, n))
    r = sh.slice(r, (0, 0, 0), (b, n, n))
  return [lr.unflatten_batch(q, batch), lr.unflatten_batch(r, batch)]


# ---------------------------------------------------------------------- lu
def _swap_rows(x, j, i):
  """Swap rows ``j`` (traced scalar) and ``i`` (``[b]``) of each ``[b, m, ...]``."""
  shape = get_aval(x).shape
  b, m = shape[:2]
  onehot = lr.onehot(sh.reshape(i, (b, 1)), m, get_aval(x).dtype)   # [b, 1, m]
  if len(shape) == 2:
    row_i = reduce_sum(ew.mul(sh.reshape(onehot, (b, m)), x), (1,))
    row_j = sh.reshape(dynamic_slice(x, (_zero(), j), (b, 1), allow_negative_indices=False),
                       (b,))
  else:
    weights = sh.broadcast_in_dim(sh.reshape(onehot, (b, m)), shape, (0, 1))
    row_i = reduce_sum(ew.mul(weights, x), (1,))
    row_j = _row(x, j)
  rows = sh.broadcasted_iota(_I32, shape, 1)
  i_b = sh.broadcast_in_dim(i, shape, (0,))
  kept = (0,) if len(shape) == 2 else (0, 2)

  def exp(r):
    return sh.broadcast_in_dim(r, shape, kept)

  return ew.select(ew.eq(rows, j), exp(row_i), ew.select(ew.eq(rows, i_b), exp(row_j), x))


def lu(x):
  a, batch = lr.flatten_batch(x)
  b, m, n = get_aval(a).shape
  k = min(m, n)
  rows = _index_grid(b, m)
  grid_c = sh.broadcasted_iota(_I32, (b, m, n), 2)

  def step(j, state):
    a_, piv, perm = state
    col = _col(a_, j)
    mag = (ew.add(ew.abs(ew.real(col)), ew.abs(ew.imag(col))) if lr.is_complex(col)
           else ew.abs(col))
    mag = ew.select(ew.ge(rows, j), mag, sh.full_like(mag, -np.inf))
    i = argmax(mag, 1, _I32)
    piv = dynamic_update_slice(piv, sh.reshape(i, (b, 1)), (_zero(), j),
                               allow_negative_indices=False)
    a_ = _swap_rows(a_, j, i)
    perm = _swap_rows(perm, j, i)
    col = _col(a_, j)
    d = _bcast_vec(_entry(a_, j, j), (b, m))
    ok = ew.bitwise_and(ew.gt(rows, j), ew.ne(d, lr.const(d, 0)))
    col = ew.select(ok, ew.div(col, ew.select(ok, d, sh.full_like(d, 1))), col)
    a_ = _set_col(a_, j, col)
    lower = ew.select(ew.gt(rows, j), col, sh.full_like(col, 0))
    update = _outer(lower, _row(a_, j))
    a_ = ew.sub(a_, ew.select(ew.gt(grid_c, j), update, sh.full_like(update, 0)))
    return [a_, piv, perm]

  piv = sh.full((b, k), 0, _I32)
  perm = sh.broadcasted_iota(_I32, (b, m), 1)
  if k:
    a, piv, perm = fori_loop(_i32(0), _i32(k), step, [a, piv, perm])
  return [lr.unflatten_batch(a, batch), lr.unflatten_batch(piv, batch),
          lr.unflatten_batch(perm, batch)]


def lu_pivots_to_permutation(pivots, *, permutation_size):
  piv, batch = lr.flatten_batch(pivots, 1)
  b, k = get_aval(piv).shape
  perm = sh.broadcasted_iota(_I32, (b, permutation_size), 1)

  def step(j, perm_):
    i = sh.reshape(dynamic_slice(piv, (_zero(), j), (b, 1), allow_negative_indices=False), (b,))
    return _swap_rows(perm_, j, i)

  if k:
    perm = fori_loop(_i32(0), _i32(k), step, perm)
  return lr.unflatten_batch(perm, batch)


# --------------------------------------------------------------------- svd
def _one_sided_jacobi(a):
  """Orthogonalise the columns of ``[b, m, n]`` ``a`` (m >= n) by plane
  rotations; returns the rotated ``a`` (= U S) and ``V`` (``A V = U S``)."""
  b, m, n = get_aval(a).shape
  dtype = get_aval(a).dtype
  rdt = lr.real_dtype(dtype)
  v = sh.broadcast_in_dim(lr.eye(dtype, n), (b, n, n), (1, 2))
  if n < 2:
    return a, v
  ps, qs = _pairs(n)
  eps = float(np.finfo(rdt).eps)

  def rotation(idx, state):
    a_, v_, worst = state
    p, q = _pair_at(ps, qs, idx)
    ap, aq = _col(a_, p), _col(a_, q)
    alpha = reduce_sum(_abs2(ap), (1,))
    beta = reduce_sum(_abs2(aq), (1,))
    gamma = reduce_sum(ew.mul(lr.conj(ap), aq), (1,))     # (A^H A)[p, q]
    scale = ew.sqrt(ew.mul(alpha, beta))
    rel = ew.div(ew.abs(gamma), ew.max(scale, np.array(np.finfo(rdt).tiny, rdt)))
    worst = ew.max(worst, reduce_max(rel, (0,)))
    c, s, w = _jacobi_rotation(alpha, beta, gamma)
    wc = None if w is None else ew.conj(w)
    cp, cq = _rotate(ap, aq, c, s, wc)
    a_ = _set_col(_set_col(a_, p, cp), q, cq)
    vp, vq = _rotate(_col(v_, p), _col(v_, q), c, s, wc)
    return [a_, _set_col(_set_col(v_, p, vp), q, vq), worst]

  def sweep(a_, v_, worst):
    return fori_loop(_i32(0), _i32(len(ps)), rotation, [a_, v_, np.array(0, rdt)])

  def converged(a_, v_, worst):
    return ew.le(worst, np.array(eps, rdt))

  a, v, _ = _sweeps(sweep, [a, v, np.array(np.inf, rdt)], converged)
  return a, v


def _complete_basis(u):
  """``[b, m, k]`` orthonormal columns extended to a unitary ``[b, m, m]``."""
  b, m, k = get_aval(u).shape
  if k == m:
    return u
  q, _ = qr(u, pivoting=False, full_matrices=True, use_magma=None)
  return sh.concatenate([u, sh.slice(q, (0, 0, k), (b, m, m))], 2)


def svd(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
  a, batch = lr.flatten_batch(x)
  b, m, n = get_aval(a).shape
  wide = m < n
  if wide:
    a = lr.H(a)
  us, v = _one_sided_jacobi(a)
  rows, k = get_aval(us).shape[1:]
  s = ew.sqrt(reduce_sum(_abs2(us), (1,)))                  # [b, k]
  # Descending singular values: sort the negated values.
  idx = sh.broadcasted_iota(_I32, (b, k), 1)
  neg_s, perm = sort((ew.neg(s), idx), dimension=1, num_keys=1)
  s = ew.neg(neg_s)
  if not compute_uv:
    return [lr.unflatten_batch(s, batch)]
  us, v = _permute_cols(us, perm), _permute_cols(v, perm)
  nonzero = ew.gt(s, lr.const(s, 0))
  safe = ew.select(nonzero, s, sh.full_like(s, 1))
  u = ew.div(us, sh.broadcast_in_dim(_to(safe, us), (b, rows, k), (0, 2)))
  if full_matrices:
    u = _complete_basis(u)
  if wide:   # A^H = U S V^H  =>  A = V S U^H
    u, v = v, u
  return [lr.unflatten_batch(s, batch), lr.unflatten_batch(u, batch),
          lr.unflatten_batch(lr.H(v), batch)]


# ----------------------------------------------------------- lowering rules
def _lower_with(fun):
  """A lowering rule that traces ``fun(*operands, **params)`` (lax wrappers)
  and emits its StableHLO inline."""
  def rule(ctx, *operands, **params):
    return lower_traced(ctx, lambda *xs: fun(*xs, **params), operands)
  return rule


cholesky_p.def_lower(_lower_with(cholesky))
triangular_solve_p.def_lower(_lower_with(triangular_solve))
eigh_p.def_lower(_lower_with(eigh))
qr_p.def_lower(_lower_with(qr))
lu_p.def_lower(_lower_with(lu))
lu_pivots_to_permutation_p.def_lower(_lower_with(lu_pivots_to_permutation))
svd_p.def_lower(_lower_with(svd))
