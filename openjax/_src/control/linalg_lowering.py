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
from openjax._src.primitives.linalg import linalg_rules
from openjax._src.primitives.linalg.linalg_rules import (H, T, conj, const, diagonal, eye_like,
                                                         flatten_batch, is_complex, mm, mv,
                                                         real_dtype, tril, triu, unflatten_batch)
from openjax._src.primitives.elementwise import arithmetic
from openjax._src.primitives.elementwise.arithmetic import (add, div, imag, mul, neg, real, square,
                                                            sub)
from openjax._src.primitives.elementwise.logic import (bitwise_and, bitwise_not, eq, ge, gt, le, lt,
                                                       ne, select)
from openjax._src.primitives.elementwise.transcendental import rsqrt, sqrt
from openjax._src.primitives.base.structural import (broadcast_in_dim, broadcasted_iota, reduce_sum,
                                                     reshape)
from openjax._src.primitives.shape.shape import concatenate, full, full_like, rev, slice
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.index.dynamic_slicing import dynamic_slice, dynamic_update_slice
from openjax._src.primitives.linalg.linalg import (cholesky_p, eigh_p, lu_p,
                                                   lu_pivots_to_permutation_p, qr_p, svd_p,
                                                   triangular_solve_p)
from openjax._src.primitives.reduce.reductions import argmax, reduce_max, reduce_or
from openjax._src.primitives.sort.sort import sort

_I32 = np.dtype(np.int32)
_MAX_SWEEPS = 30


def lower_traced(ctx, fun, operands):
  """Trace ``fun`` (lax wrappers) on the equation's input avals and emit its
  StableHLO into the current block; returns the output values."""
  if all(a.size == 0 for a in ctx.avals_out):
    # Empty matrices (0x0 or a 0 batch): nothing to compute, and the
    # decompositions' column loops cannot slice a column of width 0.
    return [ctx.full(0, a.shape, a.dtype) for a in ctx.avals_out]
  def flat(*xs):
    out = fun(*xs)
    return list(out) if isinstance(out, (list, tuple)) else [out]
  jaxpr, consts = trace_to_jaxpr(flat, list(ctx.avals_in))
  return ctx.lower_jaxpr_inline(jaxpr, list(operands), consts)


# ------------------------------------------------------------------ helpers
def _i32(v):
  return np.array(v, _I32)


def _index(i):
  """A start index as int32: loop counters are int64 under x64, and a
  dynamic slice's indices must share one type."""
  if isinstance(i, (int, np.integer, np.ndarray)):
    return _i32(i)
  return i if get_aval(i).dtype == _I32 else convert_element_type(i, _I32)


def _fori(n, body, init):
  """``fori_loop(0, n, body, init)`` with an int32 index (a static loop's
  index is the default integer, int64 under x64, which the int32 index
  grids and slices of this module must not meet)."""
  return fori_loop(0, n, lambda i, state: body(_index(i), state), init)


def _slice(a, starts, sizes):
  return dynamic_slice(a, tuple(_index(i) for i in starts), sizes, allow_negative_indices=False)


def _update_slice(a, update, starts):
  return dynamic_update_slice(a, update, tuple(_index(i) for i in starts),
                              allow_negative_indices=False)


def _zero():
  return _i32(0)


def _row(a, i):
  """``a[:, i, :]`` of a ``[b, m, n]`` array at a traced row ``i``."""
  b, _, n = get_aval(a).shape
  return reshape(_slice(a, (_zero(), i, _zero()), (b, 1, n)), (b, n))


def _col(a, j):
  """``a[:, :, j]`` at a traced column ``j``."""
  b, m, _ = get_aval(a).shape
  return reshape(_slice(a, (_zero(), _zero(), j), (b, m, 1)), (b, m))


def _set_row(a, i, r):
  b, _, n = get_aval(a).shape
  return _update_slice(a, reshape(r, (b, 1, n)), (_zero(), i, _zero()))


def _set_col(a, j, c):
  b, m, _ = get_aval(a).shape
  return _update_slice(a, reshape(c, (b, m, 1)), (_zero(), _zero(), j))


def _entry(a, i, j):
  """``a[:, i, j]`` as ``[b]``."""
  b = get_aval(a).shape[0]
  return reshape(_slice(a, (_zero(), i, j), (b, 1, 1)), (b,))


def _index_grid(b: int, m: int):
  return broadcasted_iota(_I32, (b, m), 1)


def _bcast_vec(v, shape):
  """``[b]`` -> ``shape`` (``[b, ...]``)."""
  return broadcast_in_dim(v, shape, (0,))


def _abs2(x):
  if is_complex(x):
    return add(square(real(x)), square(imag(x)))
  return square(x)


def _to(x, like):
  """``x`` converted to ``like``'s dtype (real -> complex)."""
  dt = get_aval(like).dtype
  return x if get_aval(x).dtype == dt else convert_element_type(x, dt)


def _outer(u, v):
  """``u[:, :, None] * v[:, None, :]``."""
  b, m = get_aval(u).shape
  n = get_aval(v).shape[1]
  return mul(broadcast_in_dim(u, (b, m, n), (0, 1)), broadcast_in_dim(v, (b, m, n), (0, 2)))


def _any_nan(x):
  """``bool[b]``: whether each matrix of ``[b, m, n]`` holds a NaN."""
  return reduce_or(ne(x, x), (1, 2))


def _permute_cols(x, perm):
  """``x[:, :, perm[:, j]]`` for ``[b, m, n]`` ``x`` and ``[b, k]`` ``perm``."""
  n = get_aval(x).shape[2]
  p = linalg_rules.onehot(perm, n, get_aval(x).dtype)        # p[b, j, c] = (perm[b, j] == c)
  return mm(x, T(p))


# ---------------------------------------------------------------- cholesky
def cholesky(x):
  a, batch = flatten_batch(x)
  b, n, _ = get_aval(a).shape
  rows = _index_grid(b, n)

  def column(j, l):
    # L[:, j] = (A[:, j] - L L[j, :]^H) / d, d = sqrt of its j-th entry;
    # columns >= j of L are still zero, so the product sums k < j only.
    v = sub(_col(a, j), mv(l, conj(_row(l, j))))
    vj = _entry(reshape(v, (b, n, 1)), j, _zero())
    d = sqrt(real(vj) if is_complex(vj) else vj)
    d_b = _bcast_vec(_to(d, v), (b, n))
    col = select(gt(rows, j), div(v, d_b),
                 select(eq(rows, j), d_b, full_like(v, 0)))
    return _set_col(l, j, col)

  l = _fori(n, column, full_like(a, 0))
  # A failed factorisation is all NaN, as LAPACK's in JAX.
  bad = _bcast_vec(_any_nan(l), (b, n, n))
  return unflatten_batch(select(bad, full_like(l, np.nan), l), batch)


# -------------------------------------------------------- triangular_solve
def _forward_substitution(t, rhs):
  b, n, _ = get_aval(t).shape
  k = get_aval(rhs).shape[2]

  def step(i, x):
    # Rows >= i of x are still zero.
    t_row = _slice(t, (_zero(), i, _zero()), (b, 1, n))
    r = sub(_slice(rhs, (_zero(), i, _zero()), (b, 1, k)), mm(t_row, x))
    d = _slice(t, (_zero(), i, i), (b, 1, 1))
    d = broadcast_in_dim(reshape(d, (b,)), (b, 1, k), (0,))
    return _update_slice(x, div(r, d), (_zero(), i, _zero()))

  return _fori(n, step, full_like(rhs, 0))


def triangular_solve(a, b_, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
  t = tril(a) if lower else triu(a)
  if unit_diagonal:
    t = select(ne(eye_like(t), const(t, 0)), full_like(t, 1), t)
  if conjugate_a:
    t = conj(t)
  if transpose_a:
    t = T(t)
  is_lower = lower != transpose_a
  rhs = b_
  if not left_side:              # x t = b  <=>  t^T x^T = b^T
    t, rhs, is_lower = T(t), T(rhs), not is_lower
  nd = get_aval(t).ndim
  if not is_lower:               # reversing rows and columns makes t lower
    t, rhs = rev(t, (nd - 2, nd - 1)), rev(rhs, (nd - 2,))
  tf, batch = flatten_batch(t)
  rf, _ = flatten_batch(rhs)
  x = unflatten_batch(_forward_substitution(tf, rf), batch)
  if not is_lower:
    x = rev(x, (nd - 2,))
  if not left_side:
    x = T(x)
  return x


# ------------------------------------------------------------------ Jacobi
def _jacobi_rotation(app, aqq, apq):
  """The rotation that zeroes the off-diagonal entry of the Hermitian 2x2
  ``[[app, apq], [conj(apq), aqq]]`` (``app``, ``aqq`` real): returns the
  real ``c``, ``s`` and the phase ``w`` (of ``apq``; 1 for real input)."""
  if is_complex(apq):
    mag = arithmetic.abs(apq)
    w = select(eq(mag, const(mag, 0)), full_like(apq, 1),
               div(apq, _to(mag, apq)))
  else:
    mag, w = apq, None
  zero = eq(mag, const(mag, 0))
  safe = select(zero, full_like(mag, 1), mag)
  theta = div(sub(aqq, app), mul(const(mag, 2), safe))
  sign = select(ge(theta, const(theta, 0)), full_like(theta, 1),
                full_like(theta, -1))
  t = div(sign, add(arithmetic.abs(theta), sqrt(add(square(theta),
                                                    const(theta, 1)))))
  t = select(zero, full_like(t, 0), t)
  c = rsqrt(add(square(t), const(t, 1)))
  return c, mul(t, c), w


def _rotate(xp, xq, c, s, w):
  """``(c xp - s w xq, s xp + c w xq)`` with ``[b]`` factors over ``[b, n]``."""
  shape = get_aval(xp).shape
  c, s = _bcast_vec(_to(c, xp), shape), _bcast_vec(_to(s, xp), shape)
  wq = xq if w is None else mul(_bcast_vec(w, shape), xq)
  return sub(mul(c, xp), mul(s, wq)), add(mul(s, xp), mul(c, wq))


def _pairs(n: int):
  ps, qs = zip(*[(p, q) for p in range(n) for q in range(p + 1, n)])
  return np.array(ps, _I32), np.array(qs, _I32)


def _pair_at(ps, qs, idx):
  p = reshape(_slice(ps, (idx,), (1,)), ())
  q = reshape(_slice(qs, (idx,), (1,)), ())
  return p, q


def _real_part(x):
  return real(x) if is_complex(x) else x


def _off_diagonal_ratio(a):
  """max over the batch of ||offdiag(a)||^2 / ||a||^2."""
  sq = _abs2(a)
  total = reduce_sum(sq, (1, 2))
  off = reduce_sum(mul(sq, sub(const(sq, 1), eye_like(sq))), (1, 2))
  ratio = div(off, arithmetic.max(total, np.array(np.finfo(get_aval(sq).dtype).tiny,
                                                  get_aval(sq).dtype)))
  return reduce_max(ratio, (0,))


def _sweeps(sweep, state, converged):
  """Run ``sweep`` until ``converged(state)`` or ``_MAX_SWEEPS`` sweeps."""
  def cond(carry):
    count, *st = carry
    return bitwise_and(lt(count, _i32(_MAX_SWEEPS)), bitwise_not(converged(*st)))

  def body(carry):
    count, *st = carry
    return [add(count, _i32(1)), *sweep(*st)]
  return while_loop(cond, body, [_i32(0), *state])[1:]


def _hermitian_from_triangle(a, lower: bool):
  tri = tril(a) if lower else triu(a)
  strict = tril(a, -1) if lower else triu(a, 1)
  herm = add(tri, H(strict))
  if is_complex(herm):   # the diagonal of a Hermitian matrix is real
    eye = eye_like(herm)
    herm = add(mul(herm, sub(const(eye, 1), eye)), mul(_to(real(herm), herm), eye))
  return herm


def eigh(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
  a, batch = flatten_batch(_hermitian_from_triangle(x, lower))
  b, n, _ = get_aval(a).shape
  dtype = get_aval(a).dtype
  v = broadcast_in_dim(linalg_rules.eye(dtype, n), (b, n, n), (1, 2))
  if n > 1:
    ps, qs = _pairs(n)
    eps = float(np.finfo(real_dtype(dtype)).eps)

    def rotation(idx, state):
      a_, v_ = state
      p, q = _pair_at(ps, qs, idx)
      c, s, w = _jacobi_rotation(_real_part(_entry(a_, p, p)), _real_part(_entry(a_, q, q)),
                                 _entry(a_, p, q))
      rp, rq = _rotate(_row(a_, p), _row(a_, q), c, s, w)         # U^H A
      a_ = _set_row(_set_row(a_, p, rp), q, rq)
      wc = None if w is None else arithmetic.conj(w)
      cp, cq = _rotate(_col(a_, p), _col(a_, q), c, s, wc)        # (U^H A) U
      a_ = _set_col(_set_col(a_, p, cp), q, cq)
      vp, vq = _rotate(_col(v_, p), _col(v_, q), c, s, wc)        # V U
      return [a_, _set_col(_set_col(v_, p, vp), q, vq)]

    def sweep(a_, v_):
      return _fori(len(ps), rotation, [a_, v_])

    def converged(a_, v_):
      return le(_off_diagonal_ratio(a_), np.array(eps * eps, real_dtype(dtype)))

    a, v = _sweeps(sweep, [a, v], converged)
  w = _real_part(diagonal(a))
  if sort_eigenvalues:
    idx = broadcasted_iota(_I32, (b, n), 1)
    w, perm = sort((w, idx), dimension=1, num_keys=1)
    v = _permute_cols(v, perm)
  if subset_by_index is not None:
    lo, hi = subset_by_index
    w = slice(w, (0, lo), (b, hi))
    v = slice(v, (0, 0, lo), (b, n, hi))
  return [unflatten_batch(v, batch), unflatten_batch(w, batch)]


# ---------------------------------------------------------------------- qr
def _householder(a, q, k):
  """One step of LAPACK's geqrf on column ``k``: the reflector
  ``H = I - tau v v^H`` with ``H^H x = beta e_k`` (``beta`` real, its sign
  opposite to ``re(x_k)``; ``tau = 0`` when nothing is below a real diagonal)."""
  b, m, _ = get_aval(a).shape
  rows = _index_grid(b, m)
  col = _col(a, k)
  x = select(ge(rows, k), col, full_like(col, 0))
  alpha = _entry(a, k, k)
  below = select(gt(rows, k), x, full_like(x, 0))
  xnorm2 = reduce_sum(_abs2(below), (1,))
  alpha_re = _real_part(alpha)
  norm = sqrt(add(_abs2(alpha), xnorm2))
  beta = select(ge(alpha_re, const(alpha_re, 0)), neg(norm), norm)
  skip = eq(xnorm2, const(xnorm2, 0))
  if is_complex(alpha):
    skip = bitwise_and(skip, eq(imag(alpha), const(xnorm2, 0)))
  beta_c = _to(beta, alpha)
  tau = select(skip, full_like(alpha, 0), div(sub(beta_c, alpha), beta_c))
  denom = select(skip, full_like(alpha, 1), sub(alpha, beta_c))
  v = select(eq(rows, k), full_like(x, 1), div(below, _bcast_vec(denom, (b, m))))
  # A <- H^H A = A - conj(tau) v (v^H A);  Q <- Q H = Q - tau (Q v) v^H
  # [b, n]: (v^H A)_j = sum_i conj(v_i) A[i, j] = conj(sum_i conj(A[i, j]) v_i)
  vha = mv(H(a), v)
  vha = conj(vha) if is_complex(vha) else vha
  n = get_aval(a).shape[2]
  a = sub(a, _outer(mul(_bcast_vec(conj(tau), (b, m)), v), vha))
  new_col = select(lt(rows, k), col,
                   select(eq(rows, k),
                          _bcast_vec(select(skip, alpha, beta_c), (b, m)),
                          full_like(col, 0)))
  a = _set_col(a, k, new_col) if n else a
  qv = mv(q, v)
  q = sub(q, _outer(mul(_bcast_vec(tau, (b, m)), qv), conj(v)))
  return a, q


def qr(x, *, pivoting, full_matrices, use_magma):
  a, batch = flatten_batch(x)
  b, m, n = get_aval(a).shape
  dtype = get_aval(a).dtype
  q = broadcast_in_dim(linalg_rules.eye(dtype, m), (b, m, m), (1, 2))
  steps = min(m, n)
  if steps:
    a, q = _fori(steps, lambda k, s: list(_householder(s[0], s[1], k)),
                     [a, q])
  r = triu(a)
  if not full_matrices and m > n:
    q = slice(q, (0, 0, 0), (b, m, n))
    r = slice(r, (0, 0, 0), (b, n, n))
  return [unflatten_batch(q, batch), unflatten_batch(r, batch)]


# ---------------------------------------------------------------------- lu
def _swap_rows(x, j, i):
  """Swap rows ``j`` (traced scalar) and ``i`` (``[b]``) of each ``[b, m, ...]``."""
  shape = get_aval(x).shape
  b, m = shape[:2]
  onehot = linalg_rules.onehot(reshape(i, (b, 1)), m, get_aval(x).dtype)   # [b, 1, m]
  if len(shape) == 2:
    row_i = reduce_sum(mul(reshape(onehot, (b, m)), x), (1,))
    row_j = reshape(_slice(x, (_zero(), j), (b, 1)),
                    (b,))
  else:
    weights = broadcast_in_dim(reshape(onehot, (b, m)), shape, (0, 1))
    row_i = reduce_sum(mul(weights, x), (1,))
    row_j = _row(x, j)
  rows = broadcasted_iota(_I32, shape, 1)
  i_b = broadcast_in_dim(i, shape, (0,))
  kept = (0,) if len(shape) == 2 else (0, 2)

  def exp(r):
    return broadcast_in_dim(r, shape, kept)

  return select(eq(rows, j), exp(row_i), select(eq(rows, i_b), exp(row_j), x))


def lu(x):
  a, batch = flatten_batch(x)
  b, m, n = get_aval(a).shape
  k = min(m, n)
  rows = _index_grid(b, m)
  grid_c = broadcasted_iota(_I32, (b, m, n), 2)

  def step(j, state):
    a_, piv, perm = state
    col = _col(a_, j)
    mag = (add(arithmetic.abs(real(col)), arithmetic.abs(imag(col))) if is_complex(col)
           else arithmetic.abs(col))
    mag = select(ge(rows, j), mag, full_like(mag, -np.inf))
    i = argmax(mag, 1, _I32)
    piv = _update_slice(piv, reshape(i, (b, 1)), (_zero(), j))
    a_ = _swap_rows(a_, j, i)
    perm = _swap_rows(perm, j, i)
    col = _col(a_, j)
    d = _bcast_vec(_entry(a_, j, j), (b, m))
    ok = bitwise_and(gt(rows, j), ne(d, const(d, 0)))
    col = select(ok, div(col, select(ok, d, full_like(d, 1))), col)
    a_ = _set_col(a_, j, col)
    lower = select(gt(rows, j), col, full_like(col, 0))
    update = _outer(lower, _row(a_, j))
    a_ = sub(a_, select(gt(grid_c, j), update, full_like(update, 0)))
    return [a_, piv, perm]

  piv = full((b, k), 0, _I32)
  perm = broadcasted_iota(_I32, (b, m), 1)
  if k:
    a, piv, perm = _fori(k, step, [a, piv, perm])
  return [unflatten_batch(a, batch), unflatten_batch(piv, batch),
          unflatten_batch(perm, batch)]


def lu_pivots_to_permutation(pivots, *, permutation_size):
  piv, batch = flatten_batch(pivots, 1)
  b, k = get_aval(piv).shape
  perm = broadcasted_iota(_I32, (b, permutation_size), 1)

  def step(j, perm_):
    i = reshape(_slice(piv, (_zero(), j), (b, 1)), (b,))
    return _swap_rows(perm_, j, i)

  if k:
    perm = _fori(k, step, perm)
  return unflatten_batch(perm, batch)


# --------------------------------------------------------------------- svd
def _one_sided_jacobi(a):
  """Orthogonalise the columns of ``[b, m, n]`` ``a`` (m >= n) by plane
  rotations; returns the rotated ``a`` (= U S) and ``V`` (``A V = U S``)."""
  b, m, n = get_aval(a).shape
  dtype = get_aval(a).dtype
  rdt = real_dtype(dtype)
  v = broadcast_in_dim(linalg_rules.eye(dtype, n), (b, n, n), (1, 2))
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
    gamma = reduce_sum(mul(conj(ap), aq), (1,))     # (A^H A)[p, q]
    scale = sqrt(mul(alpha, beta))
    rel = div(arithmetic.abs(gamma), arithmetic.max(scale, np.array(np.finfo(rdt).tiny, rdt)))
    worst = arithmetic.max(worst, reduce_max(rel, (0,)))
    c, s, w = _jacobi_rotation(alpha, beta, gamma)
    wc = None if w is None else arithmetic.conj(w)
    cp, cq = _rotate(ap, aq, c, s, wc)
    a_ = _set_col(_set_col(a_, p, cp), q, cq)
    vp, vq = _rotate(_col(v_, p), _col(v_, q), c, s, wc)
    return [a_, _set_col(_set_col(v_, p, vp), q, vq), worst]

  def sweep(a_, v_, worst):
    # The sweep's worst ratio starts at min(previous, 0), i.e. 0 (or NaN),
    # rather than a constant: a loop carry only the predicate reads, its
    # result unused, is dropped by MLIR from the values the condition
    # forwards to the body, which IREE's stream conversion fails on ("region
    # branch point has 6 operands, but region successor needs 8 inputs";
    # qr and svd in one program). Barriers on the carries broke lstsq at run
    # time instead.
    return _fori(len(ps), rotation, [a_, v_, arithmetic.min(worst, np.array(0, rdt))])

  def converged(a_, v_, worst):
    return le(worst, np.array(eps, rdt))

  a, v, _ = _sweeps(sweep, [a, v, np.array(np.inf, rdt)], converged)
  return a, v


def _complete_basis(u):
  """``[b, m, k]`` orthonormal columns extended to a unitary ``[b, m, m]``."""
  b, m, k = get_aval(u).shape
  if k == m:
    return u
  q, _ = qr(u, pivoting=False, full_matrices=True, use_magma=None)
  return concatenate([u, slice(q, (0, 0, k), (b, m, m))], 2)


def svd(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
  a, batch = flatten_batch(x)
  b, m, n = get_aval(a).shape
  wide = m < n
  if wide:
    a = H(a)
  us, v = _one_sided_jacobi(a)
  rows, k = get_aval(us).shape[1:]
  s = sqrt(reduce_sum(_abs2(us), (1,)))                  # [b, k]
  # Descending singular values: sort the negated values.
  idx = broadcasted_iota(_I32, (b, k), 1)
  neg_s, perm = sort((neg(s), idx), dimension=1, num_keys=1)
  s = neg(neg_s)
  if not compute_uv:
    return [unflatten_batch(s, batch)]
  us, v = _permute_cols(us, perm), _permute_cols(v, perm)
  nonzero = gt(s, const(s, 0))
  safe = select(nonzero, s, full_like(s, 1))
  u = div(us, broadcast_in_dim(_to(safe, us), (b, rows, k), (0, 2)))
  if full_matrices:
    u = _complete_basis(u)
  if wide:   # A^H = U S V^H  =>  A = V S U^H
    u, v = v, u
  return [unflatten_batch(s, batch), unflatten_batch(u, batch),
          unflatten_batch(H(v), batch)]


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
