"""The StableHLO lowerings of ``householder_product``, ``ormqr``,
``tridiagonal``, ``cholesky_update``, ``symmetric_product``,
``tridiagonal_solve`` and ``eig`` (the primitives are in
``primitives/linalg/householder.py`` and ``linalg_extra.py``).

All but ``eig`` are traced from lax wrappers and emitted inline
(``linalg_lowering.lower_traced``), running the eager impls' algorithms with
``fori_loop``: reflectors applied one at a time, the tridiagonal reduction
as the Hessenberg reduction of the Hermitian matrix (whose lowering is
``hessenberg``'s), Givens rotations, and ``gtsv``'s pivoted elimination.
``eig`` has no compiled kernel, in JAX either (on the CPU it calls LAPACK
``geev`` on the host): the compiled program calls its eager impl on the host
through a host call (``runtime/host_calls.py``).
"""
from __future__ import annotations

import numpy as np

from openjax._src.control.linalg_lowering import (_abs2, _col, _entry, _fori,
                                                  _hermitian_from_triangle, _index, _index_grid,
                                                  _lower_with, _outer, _row, _set_col, _set_row,
                                                  _slice, _to, _update_slice)
from openjax._src.control.scan import fori_loop
from openjax._src.core import get_aval
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.base.structural import broadcast_in_dim, reduce_sum, reshape
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
from openjax._src.primitives.shape.shape import full, full_like, pad, rev, slice
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
  rf, batch = flatten_batch(r)
  wf, _ = flatten_batch(w, 1)
  b, n, _ = get_aval(rf).shape

  def step(k, state):
    r_, z = state
    c, s = _givens(_entry(r_, k, k), _at(z, k))
    c, s = _bcast(c, (b, n)), _bcast(s, (b, n))
    row = _row(r_, k)
    return [_set_row(r_, k, sub(mul(c, row), mul(s, z))), add(mul(c, z), mul(s, row))]

  if n:
    rf, _ = _fori(n, step, [rf, wf])
  return unflatten_batch(rf, batch)


def symmetric_product(a, c, *, alpha, beta):
  return add(mul(mm(a, T(a)), const(c, alpha)), mul(c, const(c, beta)))


# -------------------------------------------------------------------- gtsv
_GTSV_UNROLL = 8


def _fori_unrolled(n, body, init):
  """``_fori`` with ``_GTSV_UNROLL`` rows a trip: each row is a few scalar
  operations, so the compiled loop's per-trip cost dominates otherwise."""
  return fori_loop(0, n, lambda i, state: body(_index(i), state), init,
                   unroll=min(_GTSV_UNROLL, n))


def _pivot_size(x):
  if is_complex(x):
    return add(arithmetic.abs(real(x)), arithmetic.abs(imag(x)))
  return arithmetic.abs(x)


def _gtsv(dlf, df, duf, bf):
  """``gtsv_kernels.gtsv`` with lax loops (``[nb, m]`` diagonals, ``[nb, m, k]`` b)."""
  nb, m, k = get_aval(bf).shape
  dtype = get_aval(bf).dtype
  zero = np.array(0, dtype)
  # Entries i of sub/sup: A[i+1, i] and A[i, i+1]; padded to m with zeros.
  sub_ = pad(slice(dlf, (0, 1), (nb, m)), zero, [(0, 0, 0), (0, 1, 0)])
  sup = select(lt(_index_grid(nb, m), np.array(m - 1, _I32)), duf, full_like(duf, 0))
  sup2 = full_like(duf, 0)

  def step(i, state):
    d_, sup_, sup2_, rhs = state
    i1 = add(i, np.array(1, _I32))
    di, dn, subi = _at(d_, i), _at(d_, i1), _at(sub_, i)
    supi, supn = _at(sup_, i), _at(sup_, i1)
    swap = lt(_pivot_size(di), _pivot_size(subi))
    piv = select(swap, subi, di)
    fact = div(select(swap, di, subi), select(eq(piv, const(piv, 0)), full_like(piv, 1), piv))
    d_ = _set_at(_set_at(d_, i, piv), i1, select(swap, sub(supi, mul(fact, dn)),
                                                  sub(dn, mul(fact, supi))))
    sup_ = _set_at(_set_at(sup_, i, select(swap, dn, supi)), i1,
                   select(swap, neg(mul(fact, supn)), supn))
    sup2_ = _set_at(sup2_, i, select(swap, supn, full_like(supn, 0)))
    bi, bn = _row(rhs, i), _row(rhs, i1)
    sw, f = _bcast(swap, (nb, k)), _bcast(fact, (nb, k))
    rhs = _set_row(_set_row(rhs, i, select(sw, bn, bi)), i1,
                   select(sw, sub(bi, mul(f, bn)), sub(bn, mul(f, bi))))
    return [d_, sup_, sup2_, rhs]

  if m > 1:
    df, sup, sup2, bf = _fori_unrolled(m - 1, step, [df, sup, sup2, bf])
  singular = reduce_or(eq(df, const(df, 0)), (1,))
  safe_d = select(eq(df, const(df, 0)), full_like(df, 1), df)

  def back(j, x):
    i = sub(np.array(m - 1, _I32), j)
    r = sub(_row(bf, i), mul(_bcast(_at(sup, i), (nb, k)), _row(x, add(i, np.array(1, _I32)))))
    r = sub(r, mul(_bcast(_at(sup2, i), (nb, k)), _row(x, add(i, np.array(2, _I32)))))
    return _set_row(x, i, div(r, _bcast(_at(safe_d, i), (nb, k))))

  x = _fori_unrolled(m, back, full((nb, m + 2, k), 0, dtype))    # two zero rows below: x[i+2] exists
  x = slice(x, (0, 0, 0), (nb, m, k))
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
  """``gtsv_kernels.gtsv_perturbed`` with lax loops."""
  nb, m, k = get_aval(b_).shape
  eps = np.finfo(get_aval(arithmetic.abs(d)).dtype).eps
  d0 = reshape(slice(d, (0, 0), (nb, 1)), (nb,))
  if m == 1:
    p, row = _perturbed_pivots(d0, mul(arithmetic.abs(d0), const(arithmetic.abs(d0), eps)),
                               reshape(b_, (nb, k)))
    return reshape(div(row, _bcast(p, (nb, k))), (nb, 1, k))
  cols = _index_grid(nb, m)
  du = select(lt(cols, np.array(m - 1, _I32)), du, full_like(du, 0))   # du[m-1] unused
  du0 = reshape(slice(du, (0, 0), (nb, 1)), (nb,))
  u1 = select(eq(cols, np.array(0, _I32)), du, full_like(du, 0))
  max_u = arithmetic.max(arithmetic.abs(d0), arithmetic.abs(du0))
  scale1 = add(arithmetic.abs(d0), arithmetic.abs(du0))

  def step(i, state):
    u0, u1_, u2, x, scale1_, max_u_ = state
    i1 = add(i, np.array(1, _I32))
    s, d1, du1 = _at(dl, i1), _at(d, i1), _at(du, i1)
    u0i, u1i = _at(u0, i), _at(u1_, i)
    scale2 = add(add(arithmetic.abs(s), arithmetic.abs(d1)), arithmetic.abs(du1))
    zero_u = eq(u0i, const(u0i, 0))
    piv1 = select(zero_u, full_like(scale2, 0),
                  div(arithmetic.abs(u0i), select(zero_u, full_like(scale1_, 1), scale1_)))
    nonzero = ne(s, const(s, 0))
    safe_scale2 = select(nonzero, scale2, full_like(scale2, 1))
    swap = bitwise_and(nonzero, gt(div(arithmetic.abs(s), safe_scale2), piv1))
    keep = bitwise_and(nonzero, bitwise_not(swap))
    fact = div(select(swap, u0i, s), select(swap, s, select(keep, u0i, full_like(s, 1))))
    new_u0i1 = select(swap, sub(u1i, mul(fact, d1)), select(keep, sub(d1, mul(fact, u1i)), d1))
    new_u1i1 = select(swap, neg(mul(fact, du1)), du1)
    u0 = _set_at(_set_at(u0, i, select(swap, s, u0i)), i1, new_u0i1)
    new_u1i = select(swap, d1, u1i)
    u1_ = _set_at(_set_at(u1_, i, new_u1i), i1, new_u1i1)
    new_u2i = select(swap, du1, full_like(du1, 0))
    u2 = _set_at(u2, i, new_u2i)
    xi, bn = _row(x, i), _row(b_, i1)
    sw, kp, f = _bcast(swap, (nb, k)), _bcast(keep, (nb, k)), _bcast(fact, (nb, k))
    x = _set_row(_set_row(x, i, select(sw, bn, xi)), i1,
                 select(sw, sub(xi, mul(f, bn)), select(kp, sub(bn, mul(f, xi)), bn)))
    scale1_ = select(swap, add(arithmetic.abs(new_u0i1), arithmetic.abs(new_u1i1)), scale2)
    row_max = arithmetic.max(arithmetic.abs(select(swap, s, u0i)),
                             arithmetic.max(arithmetic.abs(new_u1i), arithmetic.abs(new_u2i)))
    # JAX's kernel leaves row m-2 out of max|U|.
    max_u_ = select(lt(i, np.array(m - 2, _I32)), arithmetic.max(max_u_, row_max), max_u_)
    return [u0, u1_, u2, x, scale1_, max_u_]

  u0, u1, u2, x, _, max_u = _fori_unrolled(
      m - 1, step, [d, u1, full_like(d, 0), b_, scale1, max_u])
  max_u = arithmetic.max(max_u, arithmetic.abs(_at(u0, np.array(m - 1, _I32))))
  step_size = mul(max_u, const(max_u, eps))
  x = pad(x, np.array(0, get_aval(x).dtype), [(0, 0, 0), (0, 2, 0), (0, 0, 0)])

  def back(j, x_):
    i = sub(np.array(m - 1, _I32), j)
    row = sub(_row(x_, i), mul(_bcast(_at(u1, i), (nb, k)), _row(x_, add(i, np.array(1, _I32)))))
    row = sub(row, mul(_bcast(_at(u2, i), (nb, k)), _row(x_, add(i, np.array(2, _I32)))))
    p, row = _perturbed_pivots(_at(u0, i), step_size, row)
    return _set_row(x_, i, mul(row, _bcast(div(const(p, 1), p), (nb, k))))

  x = _fori_unrolled(m, back, x)
  return slice(x, (0, 0, 0), (nb, m, k))


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
  def run(a):
    return eig_p.impl(np.asarray(a), **params)
  host = host_calls.register(run, ctx.avals_in, ctx.avals_out,
                             key=("lax.linalg.eig", tuple(sorted(params.items()))))
  return ctx.call_import(host.symbol, [x], ctx.avals_out)


householder_product_p.def_lower(_lower_with(householder_product))
ormqr_p.def_lower(_lower_with(ormqr))
tridiagonal_p.def_lower(_lower_with(tridiagonal))
cholesky_update_p.def_lower(_lower_with(cholesky_update))
symmetric_product_p.def_lower(_lower_with(symmetric_product))
tridiagonal_solve_p.def_lower(_lower_with(tridiagonal_solve))
