"""Linear-algebra primitives (``jax.lax.linalg``): ``cholesky``,
``triangular_solve``, ``eigh``, ``qr``, ``lu``, ``lu_pivots_to_permutation``
and ``svd``, with JAX's names, parameters and output orders (``hessenberg``
and ``schur``, from ``schur.py``, are part of the same namespace).

Every primitive works on ``[..., m, n]`` operands whose leading dimensions
index independent problems, so batching moves batch dimensions to the front
and binds again. Eager impls run LAPACK: ``lu`` and ``triangular_solve``
call getrf and trsm of the scipy-openblas32 library
(``lapack.py``; NumPy's kernels in ``lu_kernels.py`` when it is unavailable
and for large batches of small matrices), the others ``numpy.linalg``;
compiled code runs the algorithms of ``control/linalg_lowering.py`` (which
sets each primitive's lowering), written with StableHLO loops (IREE has no
LAPACK). Like LAPACK in JAX, a failed factorisation (a matrix that is not
positive definite) gives NaNs, never an exception.
"""
from __future__ import annotations

import math

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules import replicated_rule
from openjax._src.primitives.base.ad_util import Zero
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.base.structural import broadcast_in_dim
from openjax._src.primitives.base.util import check_dtypes, check_same_dtypes
from openjax._src.primitives.elementwise.arithmetic import (add, div, integer_pow, mul, neg, real,
                                                            sub)
from openjax._src.primitives.elementwise.logic import eq
from openjax._src.primitives.linalg import lapack, linalg_rules, lu_kernels
from openjax._src.primitives.linalg.schur import hessenberg, hessenberg_p, schur, schur_p
from openjax._src.primitives.linalg.linalg_rules import (H, T, batch_at_front, conj, const,
                                                         diag_matrix, diagonal, eye_like,
                                                         is_complex, lapack_dtype, mm,
                                                         permute_rows, real_dtype, symmetrize,
                                                         tril, triu)
from openjax._src.primitives.shape.shape import concatenate, pad, slice

__all__ = ["cholesky", "cholesky_p", "triangular_solve", "triangular_solve_p", "eigh", "eigh_p",
           "qr", "qr_p", "lu", "lu_p", "lu_pivots_to_permutation", "lu_pivots_to_permutation_p",
           "svd", "svd_p", "hessenberg", "hessenberg_p", "schur", "schur_p"]

_INEXACT = (np.floating, np.complexfloating)


# ------------------------------------------------------------------ shared
def _check_ranks(name: str, avals, ranks) -> None:
  """JAX's linalg shape checks: minimum ranks, equal numbers of batch dims."""
  for i, (aval, rank) in enumerate(zip(avals, ranks)):
    if aval.ndim < rank:
      raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got "
                      f"shape={aval.shape}")
  nbatch = [a.ndim - r for a, r in zip(avals, ranks)]
  if any(n != nbatch[0] for n in nbatch):
    raise TypeError(f"All inputs to {name} must have the same number of batch dimensions, "
                    f"but got {nbatch} batch dimensions for the inputs.")


def _check_float(name: str, avals) -> None:
  check_dtypes(name, avals, [_INEXACT] * len(avals))



def _real(dtype) -> np.dtype:
  return real_dtype(dtype)


# ---------------------------------------------------------------- cholesky
cholesky_p = Primitive("cholesky")


def cholesky(x, *, symmetrize_input: bool = True):
  """The lower Cholesky factor ``L`` of Hermitian positive-definite matrices
  ``x`` (``[..., n, n]``): ``x = L @ L^H``. With ``symmetrize_input`` the
  factor is of ``(x + x^H) / 2``. A matrix that is not positive definite
  gives NaNs. Only the lower triangle of the result is meaningful; the upper
  is zero here."""
  if symmetrize_input:
    x = symmetrize(x)
  return tril(cholesky_p.bind1(x))


@cholesky_p.def_impl
def _cholesky_impl(x):
  a = lapack_dtype(x)
  try:
    # One gufunc call for the whole batch; a matrix that is not positive
    # definite makes it raise, and then each matrix is factored alone.
    return [np.linalg.cholesky(a).astype(x.dtype, copy=False)]
  except np.linalg.LinAlgError:
    pass
  out = np.empty_like(a)
  # An explicit batch count: -1 cannot be inferred for 0x0 matrices.
  flat_shape = (math.prod(a.shape[:-2]), *a.shape[-2:])
  flat_a, flat_out = a.reshape(flat_shape), out.reshape(flat_shape)
  for i in range(flat_a.shape[0]):
    try:
      flat_out[i] = np.linalg.cholesky(flat_a[i])
    except np.linalg.LinAlgError:   # LAPACK's info > 0: JAX returns NaNs
      flat_out[i] = np.nan
  return [out.astype(x.dtype, copy=False)]


@cholesky_p.def_abstract_eval
def _cholesky_abstract_eval(x):
  _check_float("cholesky", [x])
  _check_ranks("cholesky", [x], [2])
  if x.shape[-2] != x.shape[-1]:
    raise ValueError(f"The input to cholesky must be a square matrix. Got shape "
                     f"{x.shape[-2:]}.")
  return [ShapedArray(x.shape, x.dtype)]


cholesky_p.def_sharding_rule(replicated_rule)


@cholesky_p.def_jvp
def _cholesky_jvp(primals, tangents):
  # L_dot = L phi(L^-1 A_dot L^-H), phi: the lower triangle, diagonal halved
  # (Murray 2016, arXiv:1602.07527).
  (x,), (x_dot,) = primals, tangents
  L = tril(cholesky_p.bind1(x))
  if type(x_dot) is Zero:
    return [L], [Zero.from_primal_value(L)]
  tmp = triangular_solve(L, x_dot, left_side=False, lower=True, transpose_a=True,
                         conjugate_a=True)
  inner = triangular_solve(L, tmp, left_side=True, lower=True)
  phi = div(tril(inner), add(const(inner, 1), eye_like(inner)))
  return [L], [mm(L, phi)]


batch_at_front(cholesky_p)


# -------------------------------------------------------- triangular_solve
triangular_solve_p = Primitive("triangular_solve")


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
  """Solve ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b`` for
  triangular ``a``: ``op`` transposes (``transpose_a``) and conjugates
  (``conjugate_a``); only the triangle named by ``lower`` is read, and
  ``unit_diagonal`` takes its diagonal as ones."""
  conjugate_a = bool(conjugate_a) and dtypes.kind(get_aval(a).dtype) == "c"
  return triangular_solve_p.bind1(a, b, left_side=bool(left_side), lower=bool(lower),
                                  transpose_a=bool(transpose_a), conjugate_a=conjugate_a,
                                  unit_diagonal=bool(unit_diagonal))


@triangular_solve_p.def_impl
def _triangular_solve_impl(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
  dtype = b.dtype
  t, b = lapack_dtype(a), lapack_dtype(b)
  batch, n = math.prod(b.shape[:-2]), a.shape[-1]
  if lapack.available() and not lapack.vectorized_batch_is_faster(batch, n):
    x = lapack.trsm(t.reshape(batch, n, n), b.reshape(batch, *b.shape[-2:]),
                    left_side=left_side, lower=lower, transpose_a=transpose_a,
                    conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
    return [x.reshape(b.shape).astype(dtype, copy=False)]
  # op(a) without masking its other triangle: the substitution reads only
  # the triangle it solves with (and the diagonal unless unit).
  if conjugate_a:
    t = np.conj(t)
  if transpose_a:
    t = np.swapaxes(t, -1, -2)
  is_lower = lower != transpose_a
  if not left_side:   # x t = b  <=>  t^T x^T = b^T
    t, b, is_lower = np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2), not is_lower
  if not is_lower:    # reversing rows and columns makes t lower
    t, b = t[..., ::-1, ::-1], b[..., ::-1, :]
  with np.errstate(all="ignore"):
    x = lu_kernels.forward_substitution(t, b, unit_diagonal)
  if not is_lower:
    x = x[..., ::-1, :]
  if not left_side:
    x = np.swapaxes(x, -1, -2)
  return [np.ascontiguousarray(x).astype(dtype, copy=False)]


@triangular_solve_p.def_abstract_eval
def _triangular_solve_abstract_eval(a, b, *, left_side, lower, transpose_a, conjugate_a,
                                    unit_diagonal):
  _check_float("triangular_solve", [a, b])
  check_same_dtypes("triangular_solve", [a, b])
  _check_ranks("triangular_solve", [a, b], [2, 2])
  if a.shape[-2] != a.shape[-1]:
    raise ValueError("The first input to triangular_solve must be a square matrix. Got "
                     f"shape {a.shape[-2:]}.")
  common = b.shape[-2] if left_side else b.shape[-1]
  if a.shape[-1] != common or a.shape[:-2] != b.shape[:-2]:
    raise ValueError(f"Incompatible shapes for arguments to triangular_solve: "
                     f"{a.shape} and {b.shape}.")
  return [ShapedArray(b.shape, b.dtype)]


triangular_solve_p.def_sharding_rule(replicated_rule)


@triangular_solve_p.def_jvp
def _triangular_solve_jvp(primals, tangents, **params):
  a, b = primals
  a_dot, b_dot = tangents
  x = triangular_solve_p.bind1(a, b, **params)
  out = None
  if type(b_dot) is not Zero:
    out = triangular_solve_p.bind1(a, b_dot, **params)
  if type(a_dot) is not Zero:
    # d(op(A)^-1 B) = -op(A)^-1 op(dA) X (left side), -X op(dA) op(A)^-1 (right)
    k = 1 if params["unit_diagonal"] else 0
    g = tril(a_dot, -k) if params["lower"] else triu(a_dot, k)
    g = neg(g)
    if params["conjugate_a"]:
      g = conj(g)
    if params["transpose_a"]:
      g = T(g)
    if params["left_side"]:
      contrib = triangular_solve_p.bind1(a, mm(g, x), **params)
    else:
      contrib = triangular_solve_p.bind1(a, mm(x, g), **params)
    out = contrib if out is None else add(out, contrib)
  return [x], [Zero.from_primal_value(x) if out is None else out]


@triangular_solve_p.def_transpose
def _triangular_solve_transpose(cts, a, b, *, left_side, lower, transpose_a, conjugate_a,
                                unit_diagonal):
  ct, = cts
  if type(ct) is Zero:
    return [None, Zero(b.aval)]
  return [None, triangular_solve_p.bind1(a, ct, left_side=left_side, lower=lower,
                                         transpose_a=not transpose_a,
                                         conjugate_a=conjugate_a,
                                         unit_diagonal=unit_diagonal)]


batch_at_front(triangular_solve_p)


# -------------------------------------------------------------------- eigh
eigh_p = Primitive("eigh", multiple_results=True)


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None, implementation=None):
  """Eigenvectors and eigenvalues ``(v, w)`` of Hermitian matrices ``x``
  (``[..., n, n]``): ``x @ v[..., :, i] = w[..., i] * v[..., :, i]``, ``w``
  ascending and real. ``lower`` names the triangle read when the input is not
  symmetrized."""
  if symmetrize_input:
    x = symmetrize(x)
  if subset_by_index is not None:
    subset_by_index = tuple(int(i) for i in subset_by_index)
  v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                     subset_by_index=subset_by_index, algorithm=implementation)
  return v, w


@eigh_p.def_impl
def _eigh_impl(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
  w, v = np.linalg.eigh(lapack_dtype(x), UPLO="L" if lower else "U")
  if subset_by_index is not None:
    lo, hi = subset_by_index
    w, v = w[..., lo:hi], v[..., lo:hi]
  return [v.astype(x.dtype, copy=False), w.astype(_real(x.dtype), copy=False)]


@eigh_p.def_abstract_eval
def _eigh_abstract_eval(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
  _check_float("eigh", [x])
  _check_ranks("eigh", [x], [2])
  if x.shape[-2] != x.shape[-1]:
    raise ValueError("Argument to symmetric eigendecomposition must have shape [..., n, n], "
                     f"got shape {x.shape}")
  n = x.shape[-1]
  d = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
  batch = x.shape[:-2]
  return [ShapedArray((*batch, n, d), x.dtype), ShapedArray((*batch, d), _real(x.dtype))]


eigh_p.def_sharding_rule(replicated_rule)


@eigh_p.def_jvp
def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index, algorithm):
  # Non-degenerate perturbation theory: dw = diag(V^H dA V),
  # dV = V (F * (V^H dA V)) with F_ij = 1 / (w_j - w_i) off the diagonal.
  (a,), (a_dot,) = primals, tangents
  n = get_aval(a).shape[-1]
  if subset_by_index is not None and tuple(subset_by_index) != (0, n):
    raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
  v, w_real = eigh_p.bind(symmetrize(a), lower=lower, sort_eigenvalues=sort_eigenvalues,
                          subset_by_index=subset_by_index, algorithm=algorithm)
  if type(a_dot) is Zero:
    return [v, w_real], [Zero.from_primal_value(v), Zero.from_primal_value(w_real)]
  dtype = get_aval(a).dtype
  w = convert_element_type(w_real, dtype) if dtypes.kind(dtype) == "c" else w_real
  nd = get_aval(w).ndim
  shape = get_aval(v).shape
  w_col = broadcast_in_dim(w, shape, (*range(nd - 1), nd))
  w_row = broadcast_in_dim(w, shape, tuple(range(nd)))
  eye = eye_like(v)
  f = sub(integer_pow(add(eye, sub(w_col, w_row)), -1), eye)
  vdag_adot_v = mm(mm(H(v), a_dot), v)
  dv = mm(v, mul(f, vdag_adot_v))
  dw = diagonal(real(vdag_adot_v) if dtypes.kind(dtype) == "c" else vdag_adot_v)
  return [v, w_real], [dv, dw]


batch_at_front(eigh_p)


# ---------------------------------------------------------------------- qr
qr_p = Primitive("qr", multiple_results=True)


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
  """The QR decomposition ``x = q @ r`` of ``[..., m, n]`` matrices: ``q``
  unitary ``[..., m, m]`` (``[..., m, min(m, n)]`` unless ``full_matrices``)
  and ``r`` upper triangular."""
  if pivoting:
    raise NotImplementedError("lax.linalg.qr: pivoting=True is not supported by openjax; "
                              "use pivoting=False.")
  q, r = qr_p.bind(x, pivoting=False, full_matrices=bool(full_matrices), use_magma=use_magma)
  return q, r


@qr_p.def_impl
def _qr_impl(x, *, pivoting, full_matrices, use_magma):
  # np.linalg.qr (geqrf + orgqr) rather than lapack.py's: the sweep's
  # rank-deficient inputs (a 37x27 matrix tiled from a 4x3 one) take 43 us in
  # the scipy-openblas32 geqrf against NumPy's whole qr's 31 us.
  q, r = np.linalg.qr(lapack_dtype(x), mode="complete" if full_matrices else "reduced")
  return [q.astype(x.dtype, copy=False), r.astype(x.dtype, copy=False)]


@qr_p.def_abstract_eval
def _qr_abstract_eval(x, *, pivoting, full_matrices, use_magma):
  _check_float("qr", [x])
  _check_ranks("qr", [x], [2])
  *batch, m, n = x.shape
  k = m if full_matrices else min(m, n)
  return [ShapedArray((*batch, m, k), x.dtype), ShapedArray((*batch, k, n), x.dtype)]


qr_p.def_sharding_rule(replicated_rule)


def _thin_qr_jvp(q, r, dx):
  """Tangents of the thin QR of ``[..., m, n]`` matrices with m >= n."""
  dx_rinv = triangular_solve(r, dx)             # dx r^-1 (right side, upper)
  qt_dx_rinv = mm(H(q), dx_rinv)
  lower = tril(qt_dx_rinv, -1)
  do = sub(lower, H(lower))               # skew-Hermitian part
  if is_complex(qt_dx_rinv):                 # imaginary diagonal of Q^H dX R^-1
    imag_diag = sub(qt_dx_rinv, convert_element_type(real(qt_dx_rinv),
                                                     get_aval(qt_dx_rinv).dtype))
    do = add(do, mul(eye_like(do), imag_diag))
  dq = add(mm(q, sub(do, qt_dx_rinv)), dx_rinv)
  dr = mm(sub(qt_dx_rinv, do), r)
  return dq, dr


@qr_p.def_jvp
def _qr_jvp(primals, tangents, *, pivoting, full_matrices, use_magma):
  (x,), (dx,) = primals, tangents
  q, r = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
  if type(dx) is Zero:
    return [q, r], [Zero.from_primal_value(q), Zero.from_primal_value(r)]
  *batch, m, n = get_aval(x).shape
  nb = len(batch)
  if m < n:
    # x = [x1 x2] with x1 square: (q, r1) is the QR of x1 and r2 = q^H x2.
    x2 = slice(x, (*(0,) * nb, 0, m), (*batch, m, n))
    dx1 = slice(dx, (0,) * (nb + 2), (*batch, m, m))
    dx2 = slice(dx, (*(0,) * nb, 0, m), (*batch, m, n))
    r1 = slice(r, (0,) * (nb + 2), (*batch, m, m))
    dq, dr1 = _thin_qr_jvp(q, r1, dx1)
    dr2 = add(mm(H(dq), x2), mm(H(q), dx2))
    return [q, r], [dq, concatenate([dr1, dr2], nb + 1)]
  if full_matrices and m != n:
    raise NotImplementedError(
        "qr: the derivative of the full (m, m) Q of a tall m x n matrix (m > n) is not "
        "implemented; use full_matrices=False (jnp.linalg.qr(x, mode='reduced')).")
  return [q, r], list(_thin_qr_jvp(q, r, dx))


batch_at_front(qr_p)


# ---------------------------------------------------------------------- lu
lu_p = Primitive("lu", multiple_results=True)


def lu(x):
  """LU decomposition with partial pivoting, ``P x = L U``: returns ``(lu,
  pivots, permutation)``; ``lu`` holds ``L`` (unit diagonal implied) below the
  diagonal and ``U`` on and above it, ``pivots`` the int32 row swaps and
  ``permutation`` the int32 row order."""
  lu_, pivots, perm = lu_p.bind(x)
  return lu_, pivots, perm


@lu_p.def_impl
def _lu_impl(x):
  *batch, m, n = x.shape
  a = lapack_dtype(x).reshape(math.prod(batch), m, n)   # -1 fails for 0x0
  k = min(m, n)
  if lapack.available() and not lapack.vectorized_batch_is_faster(a.shape[0], k):
    lu_, piv = lapack.getrf(a)
    perm = lu_kernels.pivots_to_permutation(piv, m)
  else:
    with np.errstate(all="ignore"):
      lu_, piv, perm = lu_kernels.partial_pivoting_lu(a)
  return [lu_.reshape(x.shape).astype(x.dtype, copy=False), piv.reshape(*batch, k),
          perm.reshape(*batch, m)]


@lu_p.def_abstract_eval
def _lu_abstract_eval(x):
  _check_float("lu", [x])
  _check_ranks("lu", [x], [2])
  *batch, m, n = x.shape
  i32 = np.dtype(np.int32)
  return [ShapedArray(x.shape, x.dtype), ShapedArray((*batch, min(m, n)), i32),
          ShapedArray((*batch, m), i32)]


lu_p.def_sharding_rule(replicated_rule)


@lu_p.def_jvp
def _lu_jvp(primals, tangents):
  # LU = PA: L' = L tril(L^-1 P dA U^-1, -1), U' = triu(L^-1 P dA U^-1) U
  # (de Hoog, Anderssen and Lukas), with L padded to m x m and U to n x n.
  (a,), (a_dot,) = primals, tangents
  lu_, pivots, perm = lu_p.bind(a)
  zeros_int = [Zero.from_primal_value(pivots), Zero.from_primal_value(perm)]
  if type(a_dot) is Zero:
    return [lu_, pivots, perm], [Zero.from_primal_value(lu_), *zeros_int]
  *batch, m, n = get_aval(a).shape
  nb, k = len(batch), min(m, n)
  dtype = get_aval(a).dtype
  zero = np.array(0, dtype)
  no_pad = [(0, 0, 0)] * nb
  l = slice(lu_, (0,) * (nb + 2), (*batch, m, k))
  l = pad(tril(l, -1), zero, [*no_pad, (0, 0, 0), (0, m - k, 0)])
  l = add(l, eye_like(l))
  u = slice(lu_, (0,) * (nb + 2), (*batch, k, n))
  u = pad(triu(u), zero, [*no_pad, (0, n - k, 0), (0, 0, 0)])
  u_eye = pad(linalg_rules.eye(dtype, n - k), zero, [(k, 0, 0), (k, 0, 0)])
  u = add(u, broadcast_in_dim(u_eye, (*batch, n, n), (nb, nb + 1)))
  pa_dot = permute_rows(a_dot, perm)
  la = triangular_solve(l, pa_dot, left_side=True, lower=True, unit_diagonal=True)
  lau = triangular_solve(u, la, left_side=False, lower=False)
  l_dot = mm(l, tril(lau, -1))
  u_dot = mm(triu(lau), u)
  return [lu_, pivots, perm], [add(l_dot, u_dot), *zeros_int]


batch_at_front(lu_p)


# ------------------------------------------------- lu_pivots_to_permutation
lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation", kind="nondifferentiable")


def lu_pivots_to_permutation(pivots, permutation_size: int):
  """The permutation (int32 ``[..., permutation_size]``) made by applying the
  row swaps ``pivots`` in order to ``arange(permutation_size)``."""
  return lu_pivots_to_permutation_p.bind1(pivots, permutation_size=int(permutation_size))


@lu_pivots_to_permutation_p.def_impl
def _lu_pivots_to_permutation_impl(pivots, *, permutation_size):
  return [lu_kernels.pivots_to_permutation(pivots, permutation_size)]


@lu_pivots_to_permutation_p.def_abstract_eval
def _lu_pivots_to_permutation_abstract_eval(pivots, *, permutation_size):
  check_dtypes("lu_pivots_to_permutation", [pivots], [(np.int32,)])
  _check_ranks("lu_pivots_to_permutation", [pivots], [1])
  if not permutation_size >= pivots.shape[-1]:
    raise ValueError(f"Output permutation size {permutation_size} has to exceed the "
                     f"trailing dimension of the pivots. Got pivots size {pivots.shape[-1]}")
  return [ShapedArray((*pivots.shape[:-1], permutation_size), np.dtype(np.int32))]


lu_pivots_to_permutation_p.def_sharding_rule(replicated_rule)


@lu_pivots_to_permutation_p.def_jvp
def _lu_pivots_to_permutation_jvp(primals, tangents, **params):
  out = lu_pivots_to_permutation_p.bind(*primals, **params)
  return out, [Zero.from_primal_value(out[0])]


batch_at_front(lu_pivots_to_permutation_p)


# --------------------------------------------------------------------- svd
svd_p = Primitive("svd", multiple_results=True)


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
  """Singular value decomposition ``x = u @ diag(s) @ vh`` of ``[..., m, n]``
  matrices; ``s`` descending and real. Returns ``(u, s, vh)``, or ``s`` alone
  when ``compute_uv`` is False."""
  outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                    subset_by_index=subset_by_index, algorithm=algorithm)
  if compute_uv:
    s, u, vh = outs
    return u, s, vh
  return outs[0]


@svd_p.def_impl
def _svd_impl(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
  a = lapack_dtype(x)
  rdt = _real(x.dtype)
  if not compute_uv:
    return [np.linalg.svd(a, compute_uv=False).astype(rdt, copy=False)]
  u, s, vh = np.linalg.svd(a, full_matrices=full_matrices)
  return [s.astype(rdt, copy=False), u.astype(x.dtype, copy=False),
          vh.astype(x.dtype, copy=False)]


@svd_p.def_abstract_eval
def _svd_abstract_eval(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
  _check_float("svd", [x])
  _check_ranks("svd", [x], [2])
  if subset_by_index is not None:
    raise NotImplementedError("svd: subset_by_index is not supported by openjax; pass None.")
  *batch, m, n = x.shape
  k = min(m, n)
  s = ShapedArray((*batch, k), _real(x.dtype))
  if not compute_uv:
    return [s]
  return [s, ShapedArray((*batch, m, m if full_matrices else k), x.dtype),
          ShapedArray((*batch, n if full_matrices else k, n), x.dtype)]


svd_p.def_sharding_rule(replicated_rule)


@svd_p.def_jvp
def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm):
  (a,), (da,) = primals, tangents
  s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True,
                        subset_by_index=subset_by_index, algorithm=algorithm)
  *batch, m, n = get_aval(a).shape
  if compute_uv and full_matrices and m != n:
    raise NotImplementedError(
        "Singular value decomposition JVP not implemented for full matrices")
  if type(da) is Zero:
    outs = [s, u, vt] if compute_uv else [s]
    return outs, [Zero.from_primal_value(o) for o in outs]
  dtype = get_aval(a).dtype
  cplx = dtypes.kind(dtype) == "c"
  ut, v = H(u), H(vt)
  ds_mat = mm(mm(ut, da), v)
  ds = diagonal(real(ds_mat) if cplx else ds_mat)
  if not compute_uv:
    return [s], [ds]
  k = min(m, n)
  nb = len(batch)
  shape = (*batch, k, k)
  s_row = broadcast_in_dim(s, shape, (*range(nb), nb + 1))   # s_j at [i, j]
  s_col = broadcast_in_dim(s, shape, tuple(range(nb + 1)))   # s_i at [i, j]
  s_diffs = mul(add(s_row, s_col), sub(s_row, s_col))
  eye = eye_like(s_diffs)
  f = sub(div(const(eye, 1), add(s_diffs, eye)), eye)
  cast = (lambda t: convert_element_type(t, dtype)) if cplx else (lambda t: t)
  dss = mul(cast(s_row), ds_mat)
  sds = mul(cast(s_col), ds_mat)
  s_zeros = convert_element_type(eq(s, const(s, 0)), get_aval(s).dtype)
  s_inv = sub(div(const(s, 1), add(s, s_zeros)), s_zeros)
  dudv_diag = mul(mul(sub(ds_mat, H(ds_mat)), np.array(0.5, dtype)),
                  cast(diag_matrix(s_inv)))
  du = mm(u, add(mul(cast(f), add(dss, H(dss))), dudv_diag))
  dv = mm(v, mul(cast(f), add(sds, H(sds))))
  if m > n:
    dav = mm(da, v)
    du = add(du, div(sub(dav, mm(u, mm(ut, dav))),
                     broadcast_in_dim(cast(s), (*batch, m, k), (*range(nb), nb + 1))))
  if n > m:
    dahu = mm(H(da), u)
    dv = add(dv, div(sub(dahu, mm(v, mm(vt, dahu))),
                     broadcast_in_dim(cast(s), (*batch, n, k), (*range(nb), nb + 1))))
  return [s, u, vt], [ds, du, H(dv)]


batch_at_front(svd_p)
