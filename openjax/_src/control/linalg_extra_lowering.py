"""The StableHLO lowerings of ``householder_product``, ``ormqr``,
``tridiagonal``, ``cholesky_update``, ``symmetric_product``,
``tridiagonal_solve`` and ``eig`` (the primitives are in
``primitives/linalg/householder.py`` and ``linalg_extra.py``).

All but ``eig`` are traced from lax wrappers and emitted inline
(``linalg_lowering.lower_traced``), running the eager impls' algorithms with
loops: reflectors applied one at a time (``fori_loop``), the tridiagonal
reduction by two-sided reflectors on a whole batch at once, Givens rotations,
and ``tridiagonal_solve``'s pivoted eliminations as scans over the rows.
``eig`` has no compiled kernel, in JAX either (on the CPU it calls LAPACK
``geev`` on the host): the compiled program calls its eager impl on the host
through a host call (``runtime/host_calls.py``).
"""
from __future__ import annotations

import numpy as np

from openjax._src.control.linalg_lowering import (_abs2, _col, _entry, _fori,
                                                  _hermitian_from_triangle, _index_grid,
                                                  _lower_with, _outer, _set_col, _slice, _to,
                                                  _update_slice)
from openjax._src.control.scan import scan
from openjax._src.core import get_aval
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.base.structural import (broadcast_in_dim, broadcasted_iota,
                                                     reduce_sum, reshape, transpose)
from openjax._src.primitives.elementwise import arithmetic
from openjax._src.primitives.elementwise.arithmetic import add, div, imag, mul, neg, real, sub
from openjax._src.primitives.elementwise.logic import (bitwise_and, bitwise_not, bitwise_or,
                                                       bitcast_convert_type, eq, ge, gt, lt, ne,
                                                       select, shift_left, shift_right_logical)
from openjax._src.primitives.elementwise.transcendental import rsqrt, sqrt
from openjax._src.primitives.linalg.householder import (householder_product_p, ormqr_p,
                                                        tridiagonal_p)
from openjax._src.primitives.linalg.linalg_extra import (cholesky_update_p, eig_p,
                                                         symmetric_product_p,
                                                         tridiagonal_solve_p)
from openjax._src.primitives.linalg import linalg_rules
from openjax._src.primitives.linalg.linalg_rules import (H, T, conj, const, diagonal, eye_like,
                                                         flatten_batch, is_complex, mm, mv,
                                                         tri_mask, tril, unflatten_batch)
from openjax._src.primitives.reduce.reductions import reduce_max, reduce_or
from openjax._src.primitives.shape.shape import concatenate, full, full_like, rev, slice
from openjax._src.runtime import host_calls

_I32 = np.dtype(np.int32)


def _bcast(v, shape):
  """``[b]`` -> ``shape`` (``[b, ...]``)."""
  return broadcast_in_dim(v, shape, (0,))


def _at(v, i):
  """``v[:, i]`` of a ``[b, m]`` array at a traced index."""
  b = get_aval(v).shape[0]
  return reshape(_slice(v, (np.array(0, _I32), i), (b, 1)), (b,))


def _set_at(v, i, value):
  b = get_aval(v).shape[0]
  return _update_slice(v, reshape(value, (b, 1)), (np.array(0, _I32), i))


# ------------------------------------------------------------- reflectors
def _reflector_vectors(a, k: int):
  """``[b, m, k]``: LAPACK's reflector vectors packed below ``a``'s diagonal."""
  b, m, _ = get_aval(a).shape
  v = tril(slice(a, (0, 0, 0), (b, m, k)), -1)
  return add(v, broadcast_in_dim(linalg_rules.eye(get_aval(a).dtype, m, k), (b, m, k), (1, 2)))


def _apply_reflectors(v, taus, c, *, left: bool, transpose: bool):
  """``Q c``/``Q^H c``/``c Q``/``c Q^H`` for ``Q = H_0 ... H_{k-1}``
  (``[b, m, k]`` vectors, ``[b, k]`` factors, ``[b, r, s]`` ``c``)."""
  b, k = get_aval(taus).shape
  if k == 0:
    return c
  if transpose:
    taus = conj(taus)
  reverse = left != transpose   # Q c and c Q^H apply H_{k-1} first

  def body(i, c_):
    idx = sub(np.array(k - 1, _I32), i) if reverse else i
    vi = _col(v, idx)                                         # [b, m]
    tau = _bcast(_at(taus, idx), get_aval(c_).shape)
    if left:     # H c = c - tau v (v^H c)
      update = _outer(vi, mv(T(c_), conj(vi)))
    else:        # c H = c - tau (c v) v^H
      update = _outer(mv(c_, vi), conj(vi))
    return sub(c_, mul(tau, update))

  return _fori(k, body, c)


def householder_product(a, taus):
  af, batch = flatten_batch(a)
  tf, _ = flatten_batch(taus, 1)
  b, m, n = get_aval(af).shape
  eye = broadcast_in_dim(linalg_rules.eye(get_aval(a).dtype, m, n), (b, m, n), (1, 2))
  v = _reflector_vectors(af, get_aval(tf).shape[1])
  return unflatten_batch(_apply_reflectors(v, tf, eye, left=True, transpose=False), batch)


def ormqr(a, taus, c, *, left, transpose):
  af, batch = flatten_batch(a)
  tf, _ = flatten_batch(taus, 1)
  cf, _ = flatten_batch(c)
  v = _reflector_vectors(af, get_aval(tf).shape[1])
  return unflatten_batch(_apply_reflectors(v, tf, cf, left=left, transpose=transpose), batch)


def _sytrd_lower(a):
  """LAPACK ``sytrd``/``hetrd`` (lower) of Hermitian ``[b, n, n]`` ``a``, all
  matrices at once: ``(reduced, store, taus)``; ``store`` holds the
  subdiagonal (``beta`` of each reflector) and the reflector tails below it.
  Reflector ``k`` is ``larfg``'s for column ``k`` below the diagonal,
  applied from both sides."""
  b, n, _ = get_aval(a).shape
  rows = _index_grid(b, n)

  def step(k, state):
    a_, store, taus = state
    k1 = add(k, np.array(1, _I32))
    col = _col(a_, k)
    alpha = _entry(a_, k1, k)
    below = select(gt(rows, k1), col, full_like(col, 0))
    xnorm2 = reduce_sum(_abs2(below), (1,))
    alpha_re = real(alpha) if is_complex(alpha) else alpha
    norm = sqrt(add(_abs2(alpha), xnorm2))
    beta = _to(select(ge(alpha_re, const(alpha_re, 0)), neg(norm), norm), alpha)
    skip = eq(xnorm2, const(xnorm2, 0))
    if is_complex(alpha):
      skip = bitwise_and(skip, eq(imag(alpha), const(xnorm2, 0)))
    tau = select(skip, full_like(alpha, 0), div(sub(beta, alpha), beta))
    denom = _bcast(select(skip, full_like(alpha, 1), sub(alpha, beta)), (b, n))
    v = select(eq(rows, k1), full_like(col, 1), div(below, denom))
    # a <- H^H a H with H = I - tau v v^H.
    vha = conj(mv(H(a_), v))                       # (v^H a)_j
    a_ = sub(a_, _outer(mul(_bcast(conj(tau), (b, n)), v), vha))
    a_ = sub(a_, _outer(mul(_bcast(tau, (b, n)), mv(a_, v)), conj(v)))
    sub_entry = _bcast(select(skip, alpha, beta), (b, n))
    store = _set_col(store, k, select(gt(rows, k1), v,
                                      select(eq(rows, k1), sub_entry, full_like(v, 0))))
    return [a_, store, _set_at(taus, k, tau)]

  store = full_like(a, 0)
  taus = full((b, max(n - 1, 0)), 0, get_aval(a).dtype)
  if n > 1:
    a, store, taus = _fori(n - 1, step, [a, store, taus])
  return a, store, taus


def tridiagonal(a, *, lower):
  nd = get_aval(a).ndim
  shape = get_aval(a).shape
  n = shape[-1]
  # sytrd's upper reduction is the lower one with rows and columns reversed.
  b_ = a if lower else rev(a, (nd - 2, nd - 1))
  herm, batch = flatten_batch(_hermitian_from_triangle(b_, True))
  reduced, store, taus = _sytrd_lower(herm)
  reduced, store = unflatten_batch(reduced, batch), unflatten_batch(store, batch)
  taus = unflatten_batch(taus, batch)
  d = real(diagonal(reduced)) if is_complex(reduced) else diagonal(reduced)
  sub_diag = diagonal(slice(store, (*(0,) * (nd - 2), 1, 0), (*shape[:-2], n, n - 1)))
  e = real(sub_diag) if is_complex(sub_diag) else sub_diag
  grid = (nd - 2, nd - 1)
  strictly_lower = broadcast_in_dim(tri_mask(n, n, -1), shape, grid)
  on_diag = ne(eye_like(reduced), const(reduced, 0))
  d_full = _to(broadcast_in_dim(d, shape, tuple(range(nd - 1))), reduced)
  # The strict upper triangle is the input's, untouched (as LAPACK's).
  arr = select(strictly_lower, store, select(on_diag, d_full, b_))
  if not lower:
    arr, d = rev(arr, (nd - 2, nd - 1)), rev(d, (nd - 2,))
    e, taus = rev(e, (nd - 2,)), rev(taus, (nd - 2,))
  return [arr, d, e, taus]


# ----------------------------------------------------------- rank-1 update
def _givens(x, y):
  """BLAS ``rotg``'s ``(c, s)`` as in ``linalg_extra.givens_coefficients``."""
  big = arithmetic.max(arithmetic.abs(x), arithmetic.abs(y))
  safe = select(eq(big, const(big, 0)), full_like(big, 1), big)
  xs, ys = div(x, safe), div(y, safe)
  rh = rsqrt(add(mul(xs, xs), mul(ys, ys)))
  zero = eq(y, const(y, 0))
  return (select(zero, full_like(x, 1), mul(xs, rh)),
          select(zero, full_like(x, 0), neg(mul(ys, rh))))


def cholesky_update(r, w):
  # A scan over R's rows: the carry is the rotated vector z, the rows go
  # through once (n = 300: 20 -> 2.8 ms against slicing R in a fori_loop).
  rf, batch = flatten_batch(r)
  wf, _ = flatten_batch(w, 1)
  b, n, _ = get_aval(rf).shape

  def step(z, xs):
    k, row = xs
    c, s = _givens(_at(row, k), _at(z, k))
    c, s = _bcast(c, (b, n)), _bcast(s, (b, n))
    return add(mul(c, z), mul(s, row)), sub(mul(c, row), mul(s, z))

  if n:
    _, rows = scan(step, wf, [broadcasted_iota(_I32, (n,), 0), _rows_first(rf)])
    rf = _rows_first(rows)
  return unflatten_batch(rf, batch)


def symmetric_product(a, c, *, alpha, beta):
  return add(mul(mm(a, T(a)), const(c, alpha)), mul(c, const(c, beta)))


# -------------------------------------------------------------------- gtsv
# The eliminations run as scans over the rows (carry: the row being
# eliminated; xs: the next row's entries; ys: U's finished rows), unrolled
# 32 rows a trip: ~20x faster compiled than loops that slice and update
# whole [nb, m] arrays each row (m = 100: 6.9 -> 0.4 ms; m = 1000: 77 -> 3.7
# ms), with the same operations, so the same results.
_GTSV_UNROLL = 32


def _pivot_size(x):
  if is_complex(x):
    return add(arithmetic.abs(real(x)), arithmetic.abs(imag(x)))
  return arithmetic.abs(x)


def _rows_first(v):
  """``[nb, m, ...]`` -> ``[m, nb, ...]``."""
  nd = get_aval(v).ndim
  return transpose(v, (1, 0, *range(2, nd)))


def _first_row(v):
  """``v[:, 0]`` of ``[nb, m, ...]``."""
  shape = get_aval(v).shape
  return reshape(slice(v, (0,) * len(shape), (shape[0], 1, *shape[2:])),
                 (shape[0], *shape[2:]))


def _later_rows(v):
  """``v[:, 1:]`` of ``[nb, m, ...]``, rows first."""
  shape = get_aval(v).shape
  return _rows_first(slice(v, (0, 1, *(0,) * (len(shape) - 2)), shape))


def _append_row(rows, last):
  """``rows`` (``[m-1, nb, ...]``) with ``last`` (``[nb, ...]``) below."""
  return concatenate([rows, reshape(last, (1, *get_aval(last).shape))], 0)


def _masked_du(du):
  nb, m = get_aval(du).shape
  return select(lt(_index_grid(nb, m), np.array(m - 1, _I32)), du, full_like(du, 0))


def _back_substitute(u0, u1, u2, rhs, divide):
  """``x`` (``[nb, m, k]``) from U's rows (``[m, nb]`` each; ``u1``/``u2``
  zero where they leave the matrix) and ``rhs`` ``[m, nb, k]``:
  ``x_i = divide(u0_i, rhs_i - u1_i x_{i+1} - u2_i x_{i+2})``."""
  def row(carry, xs):
    x1, x2 = carry
    p, s1, s2, r = xs
    shape = get_aval(r).shape
    r = sub(sub(r, mul(_bcast(s1, shape), x1)), mul(_bcast(s2, shape), x2))
    x = divide(p, r)
    return [x, x1], x

  zero = full_like(_first_row(_rows_first(rhs)), 0)
  _, xs = scan(row, [zero, zero], [u0, u1, u2, rhs], reverse=True, unroll=_GTSV_UNROLL)
  return _rows_first(xs)


def _gtsv(dlf, df, duf, bf):
  """``gtsv_kernels.gtsv`` with lax scans (``[nb, m]`` diagonals, ``[nb, m, k]`` b)."""
  nb, m, k = get_aval(bf).shape
  duf = _masked_du(duf)

  def step(carry, xs):
    di, supi, bi = carry
    subi, dn, supn, bn = xs
    swap = lt(_pivot_size(di), _pivot_size(subi))
    piv = select(swap, subi, di)
    fact = div(select(swap, di, subi), select(eq(piv, const(piv, 0)), full_like(piv, 1), piv))
    sw, f = _bcast(swap, (nb, k)), _bcast(fact, (nb, k))
    # Swap: U's row i is (sub_i, d_{i+1}, sup_{i+1}), row i+1 goes on as
    # (sup_i - f d_{i+1}, -f sup_{i+1}); else (d_i, sup_i, 0) and
    # (d_{i+1} - f sup_i, sup_{i+1}).
    u_row = [piv, select(swap, dn, supi), select(swap, supn, full_like(supn, 0)),
             select(sw, bn, bi)]
    carry = [select(swap, sub(supi, mul(fact, dn)), sub(dn, mul(fact, supi))),
             select(swap, neg(mul(fact, supn)), supn),
             select(sw, sub(bi, mul(f, bn)), sub(bn, mul(f, bi)))]
    return carry, u_row

  init = [_first_row(df), _first_row(duf), _first_row(bf)]
  if m > 1:
    (d_last, _, b_last), (piv, sup, sup2, rhs) = scan(
        step, init, [_later_rows(dlf), _later_rows(df), _later_rows(duf), _later_rows(bf)],
        unroll=_GTSV_UNROLL)
    zero = full_like(d_last, 0)
    piv, sup, sup2 = _append_row(piv, d_last), _append_row(sup, zero), _append_row(sup2, zero)
    rhs = _append_row(rhs, b_last)
  else:
    piv, rhs = _rows_first(df), _rows_first(bf)
    sup = sup2 = full_like(piv, 0)
  singular = reduce_or(eq(piv, const(piv, 0)), (0,))
  safe = select(eq(piv, const(piv, 0)), full_like(piv, 1), piv)
  x = _back_substitute(safe, sup, sup2, rhs, lambda p, r: div(r, _bcast(p, get_aval(r).shape)))
  return select(broadcast_in_dim(singular, (nb, m, k), (0,)), full_like(x, np.nan), x)


def _power_of_two_at_least(r):
  """``2^j`` for the least ``j >= 1`` with ``2^j >= r`` (``r >= 1``), read
  off ``r``'s exponent bits (exact, as ``gtsv_kernels``' frexp)."""
  dtype = get_aval(r).dtype
  finfo = np.finfo(dtype)
  idt = np.dtype(f"int{finfo.bits}")
  mant_bits, bias = finfo.nmant, finfo.maxexp - 1
  bits = bitcast_convert_type(r, idt)
  exponent = shift_right_logical(bits, np.array(mant_bits, idt))
  mantissa = bitwise_and(bits, np.array((1 << mant_bits) - 1, idt))
  exponent = add(exponent, convert_element_type(ne(mantissa, np.array(0, idt)), idt))
  exponent = arithmetic.max(exponent, np.array(bias + 1, idt))
  return bitcast_convert_type(shift_left(exponent, np.array(mant_bits, idt)), dtype)


def _perturbed_pivots(p, step, row):
  """``gtsv_kernels.perturbed_pivots`` with lax wrappers."""
  mag = arithmetic.abs(p)
  finfo = np.finfo(get_aval(mag).dtype)
  tiny, big = const(mag, finfo.tiny), const(mag, 1 / finfo.tiny)
  one = const(mag, 1)
  largest = arithmetic.max(reduce_max(arithmetic.abs(row), (1,)), const(mag, 0))
  need = mul(largest, tiny)
  small = lt(mag, tiny)
  bump = bitwise_and(lt(mag, one), select(small, bitwise_or(eq(mag, const(mag, 0)), gt(need, mag)),
                                          gt(largest, mul(mag, big))))
  scale = bitwise_and(bitwise_and(lt(mag, one), small), bitwise_not(bump))
  size = arithmetic.max(arithmetic.abs(step), tiny)
  p_re = real(p) if is_complex(p) else p
  negative = lt(div(const(p_re, 1), p_re), const(p_re, 0))     # copysign's test, -0 included
  t = select(negative, neg(size), size)
  r = add(arithmetic.max(div(sub(need, mag), size), const(mag, 0)), one)
  moved = mul(t, sub(_power_of_two_at_least(r), one))
  p = select(bump, add(p, _to(moved, p)), p)
  p = select(scale, mul(p, _to(big, p)), p)
  k = get_aval(row).shape[1]
  row = select(_bcast(scale, (get_aval(row).shape[0], k)), mul(row, _to(big, row)), row)
  return p, row


def _gtsv_perturbed(dl, d, du, b_):
  """``gtsv_kernels.gtsv_perturbed`` with lax scans."""
  nb, m, k = get_aval(b_).shape
  eps = np.finfo(get_aval(arithmetic.abs(d)).dtype).eps
  d0 = _first_row(d)
  if m == 1:
    p, row = _perturbed_pivots(d0, mul(arithmetic.abs(d0), const(arithmetic.abs(d0), eps)),
                               _first_row(b_))
    return reshape(div(row, _bcast(p, (nb, k))), (nb, 1, k))
  du = _masked_du(du)
  du0 = _first_row(du)
  # Rows 0 .. m-3 count towards max|U| (JAX's kernel leaves row m-2 out).
  counted = lt(broadcasted_iota(_I32, (m - 1, nb), 0), np.array(m - 2, _I32))

  def step(carry, xs):
    u0i, u1i, xi, scale1, max_u = carry
    s, d1, du1, bn, count = xs
    scale2 = add(add(arithmetic.abs(s), arithmetic.abs(d1)), arithmetic.abs(du1))
    zero_u = eq(u0i, const(u0i, 0))
    piv1 = select(zero_u, full_like(scale2, 0),
                  div(arithmetic.abs(u0i), select(zero_u, full_like(scale1, 1), scale1)))
    nonzero = ne(s, const(s, 0))
    safe_scale2 = select(nonzero, scale2, full_like(scale2, 1))
    swap = bitwise_and(nonzero, gt(div(arithmetic.abs(s), safe_scale2), piv1))
    keep = bitwise_and(nonzero, bitwise_not(swap))
    fact = div(select(swap, u0i, s), select(swap, s, select(keep, u0i, full_like(s, 1))))
    sw, kp, f = _bcast(swap, (nb, k)), _bcast(keep, (nb, k)), _bcast(fact, (nb, k))
    u_row = [select(swap, s, u0i), select(swap, d1, u1i), select(swap, du1, full_like(du1, 0)),
             select(sw, bn, xi)]
    u0n = select(swap, sub(u1i, mul(fact, d1)), select(keep, sub(d1, mul(fact, u1i)), d1))
    u1n = select(swap, neg(mul(fact, du1)), du1)
    xn = select(sw, sub(xi, mul(f, bn)), select(kp, sub(bn, mul(f, xi)), bn))
    scale1 = select(swap, add(arithmetic.abs(u0n), arithmetic.abs(u1n)), scale2)
    row_max = arithmetic.max(arithmetic.abs(u_row[0]),
                             arithmetic.max(arithmetic.abs(u_row[1]), arithmetic.abs(u_row[2])))
    max_u = select(count, arithmetic.max(max_u, row_max), max_u)
    return [u0n, u1n, xn, scale1, max_u], u_row

  init = [d0, du0, _first_row(b_), add(arithmetic.abs(d0), arithmetic.abs(du0)),
          arithmetic.max(arithmetic.abs(d0), arithmetic.abs(du0))]
  (u0_last, _, x_last, _, max_u), (u0, u1, u2, rhs) = scan(
      step, init, [_later_rows(dl), _later_rows(d), _later_rows(du), _later_rows(b_), counted],
      unroll=_GTSV_UNROLL)
  max_u = arithmetic.max(max_u, arithmetic.abs(u0_last))
  step_size = mul(max_u, const(max_u, eps))
  zero = full_like(u0_last, 0)
  u0, u1, u2 = _append_row(u0, u0_last), _append_row(u1, zero), _append_row(u2, zero)

  def divide(p, row):
    p, row = _perturbed_pivots(p, step_size, row)
    return mul(row, _bcast(div(const(p, 1), p), get_aval(row).shape))

  return _back_substitute(u0, u1, u2, _append_row(rhs, x_last), divide)


def tridiagonal_solve(dl, d, du, b_, *, perturb_singular):
  dlf, batch = flatten_batch(dl, 1)
  df, _ = flatten_batch(d, 1)
  duf, _ = flatten_batch(du, 1)
  bf, _ = flatten_batch(b_)
  solve = _gtsv_perturbed if perturb_singular else _gtsv
  return unflatten_batch(solve(dlf, df, duf, bf), batch)


# --------------------------------------------------------------------- eig
@eig_p.def_lower
def _eig_lower(ctx, x, **params):
  def run(a):   # the eager eig on the host, as JAX runs LAPACK's geev on the CPU
    return [np.asarray(o) for o in eig_p.bind(np.asarray(a), **params)]
  host = host_calls.register(run, ctx.avals_in, ctx.avals_out,
                             key=("lax.linalg.eig", tuple(sorted(params.items()))))
  return ctx.call_import(host.symbol, [x], ctx.avals_out)


householder_product_p.def_lower(_lower_with(householder_product))
ormqr_p.def_lower(_lower_with(ormqr))
tridiagonal_p.def_lower(_lower_with(tridiagonal))
cholesky_update_p.def_lower(_lower_with(cholesky_update))
symmetric_product_p.def_lower(_lower_with(symmetric_product))
tridiagonal_solve_p.def_lower(_lower_with(tridiagonal_solve))
