"""The StableHLO lowerings of ``hessenberg`` and ``schur`` (the primitives
are in ``primitives/linalg/schur.py``), traced from lax wrappers as the other
linear-algebra lowerings are (``linalg_lowering.lower_traced``).

Hessenberg: one Householder reflector per column in a ``fori_loop``
(LAPACK ``larfg``'s convention). Schur: the Hessenberg reduction, then
explicitly shifted QR steps -- ``qr`` of the shifted active block, padded
with the identity so that the factor leaves the deflated part alone -- until
the last subdiagonal entry of the active block is negligible: Wilkinson
single shifts for complex input; for real input Francis' double shift
``T^2 - s T + t I`` with 2x2 deflations, a 2x2 block with real eigenvalues
split by a rotation. A matrix that does not converge gives NaNs. Batches run
one matrix at a time in a ``fori_loop``.
"""
from __future__ import annotations

import numpy as np

from openjax._src.control.cond import cond
from openjax._src.control.linalg_lowering import lower_traced
from openjax._src.control.scan import fori_loop
from openjax._src.control.while_loop import while_loop
from openjax._src.core import get_aval
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.base.structural import (broadcast_in_dim, broadcasted_iota, reduce_sum,
                                                     reshape)
from openjax._src.primitives.dot_conv.dot import Precision, dot_general
from openjax._src.primitives.elementwise.arithmetic import (abs as _abs, add, div, imag, mul, neg,
                                                            real, sub)
from openjax._src.primitives.elementwise.logic import (bitwise_and, bitwise_not, bitwise_or, eq, gt,
                                                       le, lt, select)
from openjax._src.primitives.elementwise.transcendental import sqrt
from openjax._src.primitives.index.dynamic_slicing import dynamic_slice, dynamic_update_slice
from openjax._src.primitives.linalg.linalg import qr
from openjax._src.primitives.linalg.linalg_rules import (H, conj, flatten_batch, is_complex,
                                                         real_dtype, unflatten_batch)
from openjax._src.primitives.linalg.schur import hessenberg_p, schur_p
from openjax._src.primitives.shape.shape import full

_I32 = np.dtype(np.int32)
_MAX_STEPS_PER_EIGENVALUE = 60


# ------------------------------------------------------------------ helpers
def _i32(v):
  return np.array(v, _I32)


def _mm(a, b):
  return dot_general(a, b, (((1,), (0,)), ((), ())), precision=(Precision.HIGHEST,) * 2)


def _grid(n: int):
  return broadcasted_iota(_I32, (n, n), 0), broadcasted_iota(_I32, (n, n), 1)


def _eye(n: int, dtype):
  rows, cols = _grid(n)
  return convert_element_type(eq(rows, cols), dtype)


def _to(x, dtype):
  return x if get_aval(x).dtype == dtype else convert_element_type(x, dtype)


def _entry(a, i, j):
  return reshape(dynamic_slice(a, (i, j), (1, 1), allow_negative_indices=False), ())


def _set_entry(a, i, j, value):
  return dynamic_update_slice(a, reshape(_to(value, get_aval(a).dtype), (1, 1)), (i, j))


def _abs2(x):
  """``|x|^2``, real."""
  if is_complex(x):
    return add(mul(real(x), real(x)), mul(imag(x), imag(x)))
  return mul(x, x)


def _fro(a):
  return sqrt(reduce_sum(_abs2(a), tuple(range(get_aval(a).ndim))))


def _re(x):
  return real(x) if is_complex(x) else x


def _zeros_vector(n: int, dtype):
  """``zeros(n, dtype)``. A complex one is converted from real zeros: IREE
  3.x fails on a splat complex constant carried into a loop ("'arith.constant'
  op attribute 'value' failed to satisfy constraint")."""
  rdtype = real_dtype(dtype)
  return _to(full((n,), 0, rdtype), dtype)


# -------------------------------------------------------------- Hessenberg
def _hessenberg_one(a):
  """``(packed, taus, q)`` of one ``[n, n]`` matrix: ``gehrd``'s packed form
  and the unitary ``q`` with ``a = q h q^H``."""
  n = get_aval(a).shape[0]
  dtype = get_aval(a).dtype
  rdtype = real_dtype(dtype)
  rows, cols = _grid(n)
  idx = broadcasted_iota(_I32, (n,), 0)
  zeros_n = full((n,), 0, dtype)
  if n < 2:
    return a, _zeros_vector(0, dtype), _eye(n, dtype)

  def step(k, state):
    h, store, taus, q = state
    k = _to(k, _I32)          # the loop index is int64 under x64
    k1 = add(k, _i32(1))
    x = reshape(dynamic_slice(h, (_i32(0), k), (n, 1), allow_negative_indices=False), (n,))
    below = gt(idx, k1)                                   # rows k + 2 ...
    alpha = reshape(dynamic_slice(x, (k1,), (1,), allow_negative_indices=False), ())
    tail = select(below, x, zeros_n)
    tail2 = reduce_sum(_abs2(tail), (0,))
    norm = sqrt(add(_abs2(alpha), tail2))
    # larfg: beta = -sign(Re alpha) |x|; tau = 0 when x is already beta e_1.
    beta = select(lt(_re(alpha), np.array(0, rdtype)), norm, neg(norm))
    trivial = eq(tail2, np.array(0, rdtype))
    if is_complex(alpha):
      trivial = bitwise_and(trivial, eq(imag(alpha), np.array(0, rdtype)))
    beta_c = _to(select(trivial, np.array(1, rdtype), beta), dtype)
    tau = select(trivial, np.array(0, dtype), div(sub(beta_c, alpha), beta_c))
    denom = select(trivial, np.array(1, dtype), sub(alpha, beta_c))
    v = select(below, div(tail, broadcast_in_dim(denom, (n,), ())),
               select(eq(idx, k1), full((n,), 1, dtype), zeros_n))
    v_col, v_row = reshape(v, (n, 1)), reshape(conj(v), (1, n))
    tau_c = conj(tau)
    # h <- H^H h H, q <- q H, with H = I - tau v v^H.
    h = sub(h, _mm(mul(broadcast_in_dim(tau_c, (n, 1), ()), v_col), _mm(v_row, h)))
    h = sub(h, _mm(_mm(h, v_col), mul(broadcast_in_dim(tau, (1, n), ()), v_row)))
    q = sub(q, _mm(_mm(q, v_col), mul(broadcast_in_dim(tau, (1, n), ()), v_row)))
    in_col = eq(cols, k)
    tail_cells = bitwise_and(in_col, gt(rows, k1))
    h = select(tail_cells, full((n, n), 0, dtype), h)
    beta_cell = bitwise_and(bitwise_and(in_col, eq(rows, k1)),
                            broadcast_in_dim(bitwise_not(trivial), (n, n), ()))
    h = select(beta_cell, broadcast_in_dim(_to(beta, dtype), (n, n), ()), h)
    store = select(tail_cells, broadcast_in_dim(v, (n, n), (0,)), store)
    taus = dynamic_update_slice(taus, reshape(tau, (1,)), (k,))
    return h, store, taus, q

  # The taus start from zeros computed from the input, not a constant: IREE
  # 3.13 let a batch's first matrix lose its first tau when they started from
  # a zero constant (complex input, inside _over_batch's loop).
  first_row = reshape(dynamic_slice(_re(a), (_i32(0), _i32(0)), (1, n - 1),
                                    allow_negative_indices=False), (n - 1,))
  taus0 = _to(mul(first_row, np.array(0, rdtype)), dtype)
  state = (a, full((n, n), 0, dtype), taus0, _eye(n, dtype))
  # n - 1 reflectors, as gehrd (the last only makes a complex entry real).
  h, store, taus, q = fori_loop(0, n - 1, step, state)
  packed = select(gt(rows, add(cols, _i32(1))), store, h)
  return packed, taus, q


def _over_batch(fun, x, n_out: int, out_shapes):
  """``fun`` (one ``[n, n]`` matrix to ``n_out`` arrays) over ``[b, n, n]``."""
  b, n, _ = get_aval(x).shape
  dtype = get_aval(x).dtype

  def body(i, outs):
    i = _to(i, _I32)
    m = reshape(dynamic_slice(x, (i, _i32(0), _i32(0)), (1, n, n),
                              allow_negative_indices=False), (n, n))
    res = fun(m)
    return tuple(dynamic_update_slice(o, reshape(r, (1,) + get_aval(r).shape),
                                      (i,) + (_i32(0),) * get_aval(r).ndim)
                 for o, r in zip(outs, res))
  init = tuple(_to(full((b,) + s, 0, real_dtype(dtype)), dtype) for s in out_shapes)
  return fori_loop(0, b, body, init)


def hessenberg(x):
  a, batch = flatten_batch(x)
  n = get_aval(a).shape[-1]
  packed, taus = _over_batch(lambda m: _hessenberg_one(m)[:2], a, 2, [(n, n), (max(n - 1, 0),)])
  return [unflatten_batch(packed, batch), unflatten_batch(taus, batch)]


# ------------------------------------------------------------------ Schur
def _negligible(t, i):
  """Whether ``t[i, i-1]`` is negligible against its diagonal neighbours."""
  eps = np.finfo(real_dtype(get_aval(t).dtype)).eps
  local = add(_abs(_entry(t, sub(i, _i32(1)), sub(i, _i32(1)))), _abs(_entry(t, i, i)))
  floor = mul(np.array(eps, get_aval(local).dtype), _fro(t))
  bound = mul(np.array(eps, get_aval(local).dtype), select(gt(local, floor), local, floor))
  return le(_abs(_entry(t, i, sub(i, _i32(1)))), bound)


def _active(n: int, hi):
  rows, cols = _grid(n)
  return bitwise_and(le(rows, hi), le(cols, hi))


def _qr_step(t, z, poly):
  """``t <- Q^H t Q``, ``z <- z Q`` for ``Q`` of ``qr(poly)``."""
  q, _ = qr(poly, full_matrices=True)
  t = _mm(_mm(H(q), t), q)
  return t, _mm(z, q)


def _clean(t):
  """Zero the rounding left below the subdiagonal by the QR steps."""
  n = get_aval(t).shape[0]
  rows, cols = _grid(n)
  return select(gt(rows, add(cols, _i32(1))), full((n, n), 0, get_aval(t).dtype), t)


def _schur_start(a):
  """What both Schur iterations start from: n, dtype, the Hessenberg form
  T = Z^H A Z with its Z, the identity, and the loop's predicate (an
  unreduced part remains and the step budget is not spent)."""
  n = get_aval(a).shape[0]
  dtype = get_aval(a).dtype
  _, _, z = _hessenberg_one(a)
  t = _clean(_mm(_mm(H(z), a), z))
  max_steps = _MAX_STEPS_PER_EIGENVALUE * n

  def keep_going(state):
    _, _, hi, steps = state
    return bitwise_and(gt(hi, _i32(0)), lt(steps, _i32(max_steps)))
  return n, dtype, t, z, _eye(n, dtype), keep_going


def _schur_complex_one(a):
  n, dtype, t, z, eye, keep_going = _schur_start(a)

  def body(state):
    t, z, hi, steps = state
    lo = sub(hi, _i32(1))

    def deflate(t, z):
      return _set_entry(t, hi, lo, np.array(0, dtype)), z, sub(hi, _i32(1))

    def sweep(t, z):
      a_, b_ = _entry(t, lo, lo), _entry(t, lo, hi)
      c_, d_ = _entry(t, hi, lo), _entry(t, hi, hi)
      half = div(sub(a_, d_), np.array(2, dtype))
      disc = sqrt(add(mul(half, half), mul(b_, c_)))
      mid = div(add(a_, d_), np.array(2, dtype))
      mu1, mu2 = add(mid, disc), sub(mid, disc)
      mu = select(lt(_abs(sub(mu1, d_)), _abs(sub(mu2, d_))), mu1, mu2)
      shifted = sub(t, mul(broadcast_in_dim(mu, (n, n), ()), eye))
      poly = select(_active(n, hi), shifted, eye)
      t, z = _qr_step(t, z, poly)
      return _clean(t), z, hi
    t, z, hi = cond(_negligible(t, hi), deflate, sweep, t, z)
    return t, z, hi, add(steps, _i32(1))

  t, z, hi, _ = while_loop(keep_going, body, (t, z, _i32(n - 1), _i32(0)))
  failed = gt(hi, _i32(0))
  nan = full((n, n), np.nan, dtype)
  rows, cols = _grid(n)
  t = select(gt(rows, cols), full((n, n), 0, dtype), t)
  return select(broadcast_in_dim(failed, (n, n), ()), nan, t), z


def _split_pair(t, z, i):
  """Triangularise the real 2x2 block at rows ``i, i+1`` when its
  eigenvalues are real (rotate onto an eigenvector)."""
  n = get_aval(t).shape[0]
  dtype = get_aval(t).dtype
  i1 = add(i, _i32(1))
  a_, b_, c_, d_ = _entry(t, i, i), _entry(t, i, i1), _entry(t, i1, i), _entry(t, i1, i1)
  half = div(sub(a_, d_), np.array(2, dtype))
  disc = add(mul(half, half), mul(b_, c_))
  real_pair = bitwise_and(le(np.array(0, dtype), disc), gt(_abs(c_), np.array(0, dtype)))
  root = sqrt(select(real_pair, disc, np.array(0, dtype)))
  signed = select(lt(half, np.array(0, dtype)), neg(root), root)
  lam = add(div(add(a_, d_), np.array(2, dtype)), signed)
  # An eigenvector (b, lam - a) or (lam - d, c), whichever is larger.
  use_first = gt(add(_abs(b_), _abs(sub(lam, a_))), add(_abs(sub(lam, d_)), _abs(c_)))
  v0 = select(use_first, b_, sub(lam, d_))
  v1 = select(use_first, sub(lam, a_), c_)
  r = sqrt(add(mul(v0, v0), mul(v1, v1)))
  safe = bitwise_and(real_pair, gt(r, np.array(0, dtype)))
  cs = select(safe, div(v0, select(safe, r, np.array(1, dtype))), np.array(1, dtype))
  sn = select(safe, div(v1, select(safe, r, np.array(1, dtype))), np.array(0, dtype))
  rows, cols = _grid(n)
  g = _eye(n, dtype)
  # g = I except the block [[cs, -sn], [sn, cs]] at (i, i).
  for (di, dj, val) in ((0, 0, cs), (0, 1, neg(sn)), (1, 0, sn), (1, 1, cs)):
    cell = bitwise_and(eq(rows, add(i, _i32(di))), eq(cols, add(i, _i32(dj))))
    g = select(cell, broadcast_in_dim(val, (n, n), ()), g)
  t = _mm(_mm(H(g), t), g)
  t = select(safe, _set_entry(t, i1, i, np.array(0, dtype)), t)
  return t, _mm(z, g)


def _schur_real_one(a):
  n, dtype, t, z, eye, keep_going = _schur_start(a)

  def body(state):
    t, z, hi, steps = state
    lo = sub(hi, _i32(1))
    one_by_one = _negligible(t, hi)
    two_by_two = bitwise_or(eq(hi, _i32(1)), _negligible(t, select(gt(hi, _i32(1)), lo, hi)))

    def deflate1(t, z):
      return _set_entry(t, hi, lo, np.array(0, dtype)), z, sub(hi, _i32(1))

    def deflate2(t, z):
      lo2 = select(gt(hi, _i32(1)), sub(hi, _i32(2)), _i32(0))
      t = select(gt(hi, _i32(1)), _set_entry(t, lo, lo2, np.array(0, dtype)), t)
      t, z = _split_pair(t, z, lo)
      return t, z, sub(hi, _i32(2))

    def sweep(t, z):
      a_, b_ = _entry(t, lo, lo), _entry(t, lo, hi)
      c_, d_ = _entry(t, hi, lo), _entry(t, hi, hi)
      s = add(a_, d_)
      p = sub(mul(a_, d_), mul(b_, c_))
      act = select(_active(n, hi), t, full((n, n), 0, dtype))
      poly = add(sub(_mm(act, act), mul(broadcast_in_dim(s, (n, n), ()), act)),
                 mul(broadcast_in_dim(p, (n, n), ()), eye))
      poly = select(_active(n, hi), poly, eye)
      t, z = _qr_step(t, z, poly)
      return _clean(t), z, hi

    def not_one(t, z):
      return cond(two_by_two, deflate2, sweep, t, z)
    t, z, hi = cond(one_by_one, deflate1, not_one, t, z)
    return t, z, hi, add(steps, _i32(1))

  t, z, hi, _ = while_loop(keep_going, body, (t, z, _i32(n - 1), _i32(0)))
  failed = gt(hi, _i32(0))
  rows, cols = _grid(n)
  t = select(gt(rows, add(cols, _i32(1))), full((n, n), 0, dtype), t)
  nan = full((n, n), np.nan, dtype)
  return select(broadcast_in_dim(failed, (n, n), ()), nan, t), z


def schur(x, *, compute_schur_vectors):
  a, batch = flatten_batch(x)
  n = get_aval(a).shape[-1]
  one = _schur_complex_one if is_complex(a) else _schur_real_one
  t, z = _over_batch(one, a, 2, [(n, n), (n, n)])
  t, z = unflatten_batch(t, batch), unflatten_batch(z, batch)
  return [t, z] if compute_schur_vectors else [t]


def _lower_with(fun):
  def rule(ctx, *operands, **params):
    return lower_traced(ctx, lambda *xs: fun(*xs, **params), operands)
  return rule


hessenberg_p.def_lower(_lower_with(hessenberg))
schur_p.def_lower(_lower_with(schur))
