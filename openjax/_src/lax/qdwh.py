"""``lax.linalg.qdwh``: the polar decomposition ``x = u h`` by the QR-based
dynamically weighted Halley iteration (Nakatsukasa, Bai and Gygi, SIAM J.
Matrix Anal. Appl. 31(5), 2010), as JAX runs it: the iteration's weights
are computed ahead in Python from the lower bound ``l`` on the scaled
matrix's smallest singular value; steps with a large weight ``c`` use a QR
factorisation of ``[sqrt(c) u; I]``, the others a Cholesky factorisation of
``I + c u^H u``; then plain Halley steps until the iterate settles, and one
Newton-Schulz step. Written with lax wrappers, so it traces, compiles,
vmaps and differentiates as they do.
"""
from __future__ import annotations

import functools

import numpy as np

from openjax._src import dtypes
from openjax._src.api.jit import jit
from openjax._src.control.scan import fori_loop
from openjax._src.core import get_aval
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.base.structural import broadcasted_iota, reduce_sum
from openjax._src.primitives.elementwise.arithmetic import abs as abs_, add, div, mul, sub
from openjax._src.primitives.elementwise.logic import (bitwise_and, bitwise_not, eq, gt, lt,
                                                       select)
from openjax._src.primitives.elementwise.transcendental import cbrt, rsqrt, sqrt
from openjax._src.primitives.index.dynamic_slicing import (dynamic_index_in_dim, dynamic_slice,
                                                           dynamic_update_slice)
from openjax._src.primitives.linalg.linalg import cholesky, qr, triangular_solve
from openjax._src.primitives.linalg.linalg_rules import H, const, mm
from openjax._src.primitives.reduce.reductions import reduce_max
from openjax._src.primitives.shape.shape import full_like, pad, slice

__all__ = ["qdwh"]

# Steps whose weight c exceeds this use the QR form (better conditioned).
_CHOLESKY_CUTOFF = 100


def _mask(x, dims, alternative=None):
  """``x`` with entries beyond the true sizes ``dims`` (None: whole) replaced
  by ``alternative`` (zero when None)."""
  shape = get_aval(x).shape
  keep = None
  for axis, size in enumerate(dims):
    if size is not None:
      inside = lt(broadcasted_iota(np.dtype(np.int32), shape, axis),
                  convert_element_type(size, np.int32))
      keep = inside if keep is None else bitwise_and(keep, inside)
  if keep is None:
    return x
  return select(keep, x, full_like(x, 0) if alternative is None else alternative)


def _weights(l: float, tol_l: float, max_iterations: int):
  """The weights ``(a, b, c)`` of the dynamically weighted steps, computed
  ahead from the lower bound ``l`` (each step raises it towards 1)."""
  out = []
  while l + tol_l < 1 and len(out) < max_iterations:
    l2 = l * l
    dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
    sqd = (1.0 + dd) ** (1 / 2)
    a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
    b = (a - 1) ** 2 / 4
    c = a + b - 1
    l = l * (a + b * l2) / (1 + c * l2)
    out.append((a, b, c))
  return out


def _qr_step(u, m, n, params):
  """``e u + (a - e)/sqrt(c) q1 q2^H`` with ``[sqrt(c) u; I] = [q1; q2] r``."""
  a_minus_e_by_sqrt_c, sqrt_c, e = params
  rows, cols = get_aval(u).shape
  dtype = get_aval(u).dtype
  stacked = pad(mul(u, sqrt_c), np.array(0, dtype), [(0, cols, 0), (0, 0, 0)])
  at = np.array(rows, np.int32) if m is None else convert_element_type(m, np.int32)
  # The identity as a constant: built from iotas it costs four steps a trip.
  stacked = dynamic_update_slice(stacked, np.eye(cols, dtype=dtype),
                                 (at, np.array(0, np.int32)))
  q, _ = qr(stacked, full_matrices=False)
  q1 = _mask(slice(q, (0, 0), (rows, cols)), (m, n))
  q2 = _mask(dynamic_slice(q, (at, np.array(0, np.int32)), (cols, cols)), (n, n))
  return add(mul(u, e), mul(mm(q1, H(q2)), a_minus_e_by_sqrt_c))


def _cholesky_step(u, m, n, params):
  """``e u + (a - e) u (I + c u^H u)^-1``, by a Cholesky factorisation."""
  a_minus_e, c, e = params
  cols = get_aval(u).shape[1]
  ident = np.eye(cols, dtype=get_aval(u).dtype)
  # The identity in the padded corner keeps the factorisation defined.
  x = _mask(add(mul(mm(H(u), u), c), ident), (n, n), ident)
  y = cholesky(x, symmetrize_input=False)                       # x = y y^H
  t = triangular_solve(y, H(u), left_side=True, lower=True)
  z = triangular_solve(y, t, left_side=True, lower=True, transpose_a=True, conjugate_a=True)
  return add(mul(u, e), mul(H(z), a_minus_e))


def _frobenius(x):
  a = abs_(x)
  return sqrt(reduce_sum(mul(a, a), (0, 1)))


def _qdwh(x, m, n, max_iterations: int, eps):
  dtype = get_aval(x).dtype
  rdt = np.dtype(dtypes.finfo(dtype).dtype)
  if eps is None:
    eps = float(dtypes.finfo(dtype).eps)
  # Scale by 1/sqrt(|x|_1 |x|_inf) >= 1/|x|_2, so the iterate's singular
  # values lie in (0, 1].
  mag = abs_(x)
  one_norm = reduce_max(reduce_sum(mag, (0,)), (0,))
  inf_norm = reduce_max(reduce_sum(mag, (1,)), (0,))
  alpha_inv = mul(rsqrt(one_norm), rsqrt(inf_norm))
  alpha_inv = select(eq(one_norm, const(one_norm, 0)), full_like(alpha_inv, 1), alpha_inv)
  u = mul(x, convert_element_type(alpha_inv, dtype))
  tol_l = 10.0 * eps / 2.0
  tol_norm = cbrt(np.array(tol_l, rdt))
  weights = _weights(eps, tol_l, max_iterations)
  qr_coefs = [((a - b / c) / c ** 0.5, c ** 0.5, b / c) for a, b, c in weights
              if c > _CHOLESKY_CUTOFF]
  chol_coefs = [(a - b / c, c, b / c) for a, b, c in weights if c <= _CHOLESKY_CUTOFF]

  def step(update, coefs, test):
    def body(k, state):
      u_prev, _ = state
      # k counts up from 0: no wrapping of negative indices (three steps each).
      params = tuple(dynamic_index_in_dim(coefs[:, j], k, keepdims=False,
                                          allow_negative_indices=False) for j in range(3))
      u_new = update(u_prev, m, n, params)
      moving = gt(_frobenius(sub(u_new, u_prev)), tol_norm) if test else np.array(True)
      return [u_new, moving]
    return body

  not_converged = np.array(True)
  for update, coefs, test in ((_qr_step, qr_coefs, False), (_cholesky_step, chol_coefs, True)):
    if coefs:
      table = np.array(coefs, dtype)
      u, not_converged = fori_loop(0, len(coefs), step(update, table, test), [u, not_converged])

  # Once l has converged, Halley's iteration (a, b, c = 3, 1, 3) until u settles.
  halley = (np.array(3 - 1 / 3, dtype), np.array(3, dtype), np.array(1 / 3, dtype))

  # A fori_loop over the remaining iteration budget with the iterate frozen
  # once settled, rather than a while_loop: IREE 3.13 fails to compile the
  # while_loop's form here when num_iters and is_converged go unused
  # ("'scf.while' op ... region branch point has 6 operands, but region
  # successor needs 8 inputs"). Results are the same; settled steps are wasted work.
  def body(_, state):
    k, u_prev, moving = state
    u_new = _cholesky_step(u_prev, m, n, halley)
    still = gt(_frobenius(sub(u_new, u_prev)), tol_norm)
    return [select(moving, add(k, np.array(1, np.int32)), k), select(moving, u_new, u_prev),
            bitwise_and(moving, still)]

  num_iters, u, not_converged = fori_loop(
      0, max(max_iterations - len(weights), 0), body,
      [np.array(len(weights), np.int32), u, not_converged])
  # One Newton-Schulz step polishes the unitary factor.
  u = sub(mul(u, np.array(1.5, dtype)), mul(mm(u, mm(H(u), u)), np.array(0.5, dtype)))
  h = mm(H(u), x)
  h = div(add(h, H(h)), np.array(2, dtype))
  return u, h, num_iters, bitwise_not(not_converged)


@functools.partial(jit, static_argnames=("is_hermitian", "max_iterations", "eps"), _eager=True)
def qdwh(x, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None):
  """The polar decomposition ``x = u h`` of a full-rank ``M x N`` matrix
  (``M >= N``; it may be padded from the true shape ``dynamic_shape``) by
  QDWH: returns ``(u, h, num_iters, is_converged)``, ``u`` with orthonormal
  columns, ``h`` Hermitian positive semi-definite, the number of iterations
  and whether the iterate settled (``|u_k - u_{k-1}|_F`` below
  ``(5 eps)^(1/3)``) within ``max_iterations`` (default 10).
  ``is_hermitian`` is unused, as in JAX."""
  del is_hermitian
  x_aval = get_aval(x)
  if len(x_aval.shape) != 2:
    raise ValueError(f"lax.linalg.qdwh: x must be a matrix M x N; got {x_aval.str_short()}")
  rows, cols = x_aval.shape
  if rows < cols:
    raise ValueError("The input matrix of shape M x N must have M >= N; got "
                     f"{x_aval.str_short()} (apply qdwh to its conjugate transpose).")
  max_iterations = 10 if max_iterations is None else int(max_iterations)
  if dynamic_shape is not None:
    m, n = dynamic_shape
    x = _mask(x, (m, n))
  else:
    m, n = None, None
  return _qdwh(x, m, n, max_iterations, None if eps is None else float(eps))
