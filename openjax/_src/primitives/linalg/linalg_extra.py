"""More of ``jax.lax.linalg``: the algorithm enums (``EigImplementation``,
``EighImplementation``, ``SvdAlgorithm``), ``eig`` (general eigenproblem,
LAPACK ``geev``), ``cholesky_update`` (rank-1 update of a Cholesky factor by
Givens rotations), ``symmetric_product`` (``alpha a a^T + beta c``, BLAS
``syrk``) and ``tridiagonal_solve`` (LAPACK ``gtsv``: Gaussian elimination
with partial pivoting on a tridiagonal matrix).

Eager impls are NumPy, except ``tridiagonal_solve``'s, which calls LAPACK's
``gtsv`` (``lapack.py``) where the library loads; ``eig`` has no compiled
kernel (neither has JAX: on the CPU it calls LAPACK on the host), so its
lowering calls its impl on the host (``control/linalg_extra_lowering.py``,
which holds the lowerings of the others too).
"""
from __future__ import annotations

import enum
import math
import warnings

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules import replicated_rule
from openjax._src.primitives.base.ad_util import Zero
from openjax._src.primitives.base.batch_util import axis_size, bdim_at_front
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.base.structural import (broadcast_in_dim, broadcasted_iota,
                                                     reduce_sum, reshape, transpose)
from openjax._src.primitives.base.util import check_dtypes, check_same_dtypes
from openjax._src.primitives.elementwise.arithmetic import (abs as abs_, add, complex as complex_,
                                                            div, imag, mul, neg, real, sub)
from openjax._src.primitives.elementwise.logic import eq
from openjax._src.primitives.linalg import gtsv_kernels, lapack
from openjax._src.primitives.linalg.linalg import lu, triangular_solve
from openjax._src.primitives.linalg.linalg_rules import (H, T, batch_at_front, check_batch, conj,
                                                         const, diagonal, eye_like, lapack_dtype,
                                                         mm, permute_rows, tril)
from openjax._src.primitives.reduce.reductions import argmax
from openjax._src.primitives.shape.shape import full_like, pad, slice

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "eig", "eig_p",
           "cholesky_update", "cholesky_update_p", "symmetric_product", "symmetric_product_p",
           "tridiagonal_solve", "tridiagonal_solve_p"]

_INEXACT = (np.floating, np.complexfloating)


class EigImplementation(enum.Enum):
  """Enum for eigendecomposition algorithm."""
  CUSOLVER = "cusolver"
  MAGMA = "magma"
  LAPACK = "lapack"


class EighImplementation(enum.Enum):
  """Implementation for symmetric/Hermitian eigendecomposition."""
  QR = "qr"
  JACOBI = "jacobi"
  QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
  """Enum for SVD algorithm."""
  DEFAULT = "default"
  QR = "QR"
  JACOBI = "Jacobi"
  POLAR = "polar"
  DIVIDE_AND_CONQUER = "divide_and_conquer"



def _solve(a, b):
  """``a^-1 b`` for square ``a`` (LU with partial pivoting, then two
  triangular solves), over shared leading batch dimensions."""
  lu_, _, perm = lu(a)
  y = triangular_solve(lu_, permute_rows(b, perm), left_side=True, lower=True,
                       unit_diagonal=True)
  return triangular_solve(lu_, y, left_side=True, lower=False)


# --------------------------------------------------------------------- eig
eig_p = Primitive("eig", multiple_results=True)


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation: EigImplementation | None = None,
        use_magma: bool | None = None):
  """Eigenvalues ``w`` and left/right eigenvectors of general square
  matrices ``x`` (``[..., n, n]``), as LAPACK ``geev``: ``[w, vl, vr]``
  (complex), ``vl``/``vr`` only when asked for. ``x @ vr[..., :, j] = w[j]
  vr[..., :, j]`` and ``vl[..., :, j]^H x = w[j] vl[..., :, j]^H``; each
  eigenvector has unit norm and a real largest component. A matrix whose
  decomposition fails gives NaNs. The derivative covers the eigenvalues, and
  the eigenvectors with ``enable_eigvec_derivs`` (distinct eigenvalues only)."""
  if use_magma is not None:
    warnings.warn("use_magma is deprecated, please use implementation=EigImplementation.MAGMA "
                  "instead.", DeprecationWarning, stacklevel=2)
    implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
  if implementation is not None and implementation != EigImplementation.LAPACK:
    raise ValueError(f"lax.linalg.eig: implementation={implementation} runs on GPUs only; "
                     "only the lapack implementation is supported on CPU (pass "
                     "implementation=None or EigImplementation.LAPACK).")
  return eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                    compute_right_eigenvectors=bool(compute_right_eigenvectors),
                    enable_eigvec_derivs=bool(enable_eigvec_derivs),
                    implementation=implementation)


def _normalize_columns(v: np.ndarray) -> np.ndarray:
  """Unit-norm columns whose largest-magnitude entry is real and positive
  (``geev``'s normalisation for complex eigenvectors)."""
  if v.size == 0:
    return v
  v = v / np.linalg.norm(v, axis=-2, keepdims=True)
  k = np.argmax(np.abs(v), axis=-2)[..., None, :]
  big = np.take_along_axis(v, k, axis=-2)
  v = v * (np.conj(big) / np.abs(big))
  np.put_along_axis(v, k, np.abs(big).astype(v.dtype), axis=-2)   # exactly real
  return v


def _eig_one(a: np.ndarray, left: bool):
  """``(w, vl, vr)`` of one matrix or a batch; raises ``LinAlgError`` when
  LAPACK fails or the input is not finite."""
  w, vr = np.linalg.eig(a)
  cdt = np.result_type(a.dtype, np.complex64)
  w, vr = w.astype(cdt), vr.astype(cdt)
  if not left:
    return w, None, vr
  # The rows of vr^-1 are the left eigenvectors (u_j^H a = w_j u_j^H) in the
  # order of w; a defective matrix has no such basis (pinv is its best try).
  try:
    inv = np.linalg.inv(vr)
  except np.linalg.LinAlgError:
    inv = np.linalg.pinv(vr)
  vl = _normalize_columns(np.conj(np.swapaxes(inv, -1, -2)))
  if a.dtype.kind != "c":   # geev's eigenvectors of real eigenvalues are real
    vl = np.where((w.imag == 0)[..., None, :], vl.real, vl).astype(cdt)
  return w, vl, vr


@eig_p.def_impl
def _eig_impl(x, *, compute_left_eigenvectors, compute_right_eigenvectors,
              enable_eigvec_derivs, implementation):
  a = lapack_dtype(x)
  n = a.shape[-1]
  cdt = dtypes.to_complex_dtype(x.dtype)
  flat = a.reshape(math.prod(a.shape[:-2]), n, n)
  w = np.full(flat.shape[:-1], np.nan, cdt)
  vl = np.full(flat.shape, np.nan, cdt)
  vr = np.full(flat.shape, np.nan, cdt)
  try:
    w[:], vl_all, vr[:] = _eig_one(flat, compute_left_eigenvectors)
    if vl_all is not None:
      vl[:] = vl_all
  except np.linalg.LinAlgError:   # LAPACK's info != 0 for one of them: NaNs for that one
    for i in range(flat.shape[0]):
      try:
        wi, vli, vri = _eig_one(flat[i], compute_left_eigenvectors)
      except np.linalg.LinAlgError:
        continue
      w[i], vr[i] = wi, vri
      if vli is not None:
        vl[i] = vli
  outs = [w.reshape(x.shape[:-1])]
  if compute_left_eigenvectors:
    outs.append(vl.reshape(x.shape))
  if compute_right_eigenvectors:
    outs.append(vr.reshape(x.shape))
  return outs


@eig_p.def_abstract_eval
def _eig_abstract_eval(x, *, compute_left_eigenvectors, compute_right_eigenvectors,
                       enable_eigvec_derivs, implementation):
  check_dtypes("eig", [x], [_INEXACT])
  check_batch("eig", [x], [2])
  if x.shape[-2] != x.shape[-1]:
    raise ValueError(f"The input to eig must be a square matrix. Got shape {x.shape[-2:]}.")
  cdt = dtypes.to_complex_dtype(x.dtype)
  count = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
  return [ShapedArray(x.shape[:-1], cdt)] + [ShapedArray(x.shape, cdt)] * count


eig_p.def_sharding_rule(replicated_rule)


def _eig_vec_jvp(w, v, da):
  """``(dw, dv)`` of the eigenpairs ``(w, v)`` (``a v = v diag(w)``) under
  ``geev``'s normalisation: first-order perturbation theory gives ``dv_j =
  u_j + c_j v_j`` with ``u = v (F * (v^-1 da v))``, ``F_ij = 1 / (w_j - w_i)``;
  the unit norm and the real largest component fix ``c_j``."""
  shape = get_aval(v).shape
  nd = len(shape)
  eye = eye_like(v)
  w_row = broadcast_in_dim(w, shape, (*range(nd - 2), nd - 1))    # w_j at [i, j]
  w_col = broadcast_in_dim(w, shape, tuple(range(nd - 1)))        # w_i at [i, j]
  f = sub(div(const(eye, 1), add(eye, sub(w_row, w_col))), eye)
  p = mm(_solve(v, da), v)
  dw = diagonal(p)
  u = mm(v, mul(f, p))
  k = argmax(abs_(v), nd - 2, np.dtype(np.int32))                  # [..., n]
  rows = broadcasted_iota(np.dtype(np.int32), shape, nd - 2)
  mask = eq(rows, broadcast_in_dim(k, shape, (*range(nd - 2), nd - 1)))
  mask = convert_element_type(mask, get_aval(v).dtype)
  re_part = neg(real(reduce_sum(mul(conj(v), u), (nd - 2,))))
  im_part = neg(div(imag(reduce_sum(mul(mask, u), (nd - 2,))),
                    real(reduce_sum(mul(mask, v), (nd - 2,)))))
  c = complex_(re_part, im_part)
  return dw, add(u, mul(v, broadcast_in_dim(c, shape, (*range(nd - 2), nd - 1))))


@eig_p.def_jvp
def _eig_jvp(primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors,
             enable_eigvec_derivs, implementation):
  (a,), (da,) = primals, tangents
  if (compute_left_eigenvectors or compute_right_eigenvectors) and not enable_eigvec_derivs:
    raise NotImplementedError(
        "Derivatives of non-symmetric eigenvectors are only valid under assumptions on the "
        "input that JAX cannot check (see the enable_eigvec_derivs argument to "
        "jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to jax.lax.linalg.eig to opt "
        "in, or compute_left_eigenvectors=False, compute_right_eigenvectors=False to "
        "differentiate the eigenvalues only.")
  # The right eigenvectors serve the rule. When only eigenvalues were asked
  # for, their derivatives are opted in: a second derivative of the
  # eigenvalues needs them, under the distinct-eigenvalue assumption the
  # first derivative already makes.
  outs = eig_p.bind(a, compute_left_eigenvectors=compute_left_eigenvectors,
                    compute_right_eigenvectors=True,
                    enable_eigvec_derivs=enable_eigvec_derivs or not compute_right_eigenvectors,
                    implementation=implementation)
  w, vr = outs[0], outs[-1]
  if type(da) is Zero:
    kept = outs if compute_right_eigenvectors else outs[:-1]
    return kept, [Zero.from_primal_value(o) for o in kept]
  da = convert_element_type(da, get_aval(vr).dtype)
  if not (compute_left_eigenvectors or compute_right_eigenvectors):
    # dw_j = (vr^-1 da vr)_jj
    return [w], [reduce_sum(mul(_solve(vr, da), T(vr)), (get_aval(vr).ndim - 1,))]
  dw, dvr = _eig_vec_jvp(w, vr, da)
  primal_out, tangent_out = [w], [dw]
  if compute_left_eigenvectors:
    vl = outs[1]
    # Left eigenvectors are the right ones of a^H, whose eigenvalues are conj(w).
    _, dvl = _eig_vec_jvp(conj(w), vl, H(da))
    primal_out.append(vl)
    tangent_out.append(dvl)
  if compute_right_eigenvectors:
    primal_out.append(vr)
    tangent_out.append(dvr)
  return primal_out, tangent_out


batch_at_front(eig_p)


# --------------------------------------------------------- cholesky_update
cholesky_update_p = Primitive("cholesky_update")


def cholesky_update(r_matrix, w_vector):
  """The upper Cholesky factor of ``R^T R + w w^T`` from the upper factor
  ``r_matrix`` (``R``, ``[..., n, n]``) of ``R^T R`` and ``w_vector``
  (``[..., n]``), by ``n`` Givens rotations (O(n^2))."""
  return cholesky_update_p.bind1(r_matrix, w_vector)


def givens_coefficients(x, y):
  """``(c, s)`` rotating ``(x, y)`` onto ``(r, 0)`` with ``r >= 0`` as
  ``(c x - s y, c y + s x)`` (BLAS ``rotg``, scaled against overflow); the
  identity where ``y`` is zero. NumPy arrays."""
  big = np.maximum(np.abs(x), np.abs(y))
  safe = np.where(big == 0, 1, big)
  xs, ys = x / safe, y / safe
  with np.errstate(all="ignore"):
    rh = 1 / np.sqrt(xs * xs + ys * ys)
  zero = y == 0
  return np.where(zero, 1, xs * rh).astype(x.dtype), np.where(zero, 0, -ys * rh).astype(x.dtype)


@cholesky_update_p.def_impl
def _cholesky_update_impl(r, w):
  r, z = r.copy(), w.copy()
  for k in range(r.shape[-1]):
    c, s = givens_coefficients(r[..., k, k], z[..., k])
    row = r[..., k, :].copy()
    r[..., k, :] = c[..., None] * row - s[..., None] * z
    z = c[..., None] * z + s[..., None] * row
  return [r]


@cholesky_update_p.def_abstract_eval
def _cholesky_update_abstract_eval(r, w):
  check_dtypes("cholesky_update", [r, w], [(np.floating,)] * 2)
  check_same_dtypes("cholesky_update", [r, w])
  check_batch("cholesky_update", [r, w], [2, 1])
  if r.shape[-1] != r.shape[-2] or w.shape[-1] != r.shape[-1]:
    raise ValueError("Rank-1 update to Cholesky decomposition takes a square matrix and a "
                     f"vector of the same size as input. Got shapes {r.shape} and {w.shape} "
                     "instead")
  return [ShapedArray(r.shape, r.dtype)]


cholesky_update_p.def_sharding_rule(replicated_rule)


# JAX defines no derivative: the rotations read whole rows of R, so the
# result depends on entries below R's diagonal that a Cholesky-based rule
# would ignore.
cholesky_update_p.mark_not_applicable(
    "jvp", "JAX defines no derivative of lax.linalg.cholesky_update; differentiate "
    "cholesky(a + w w^T) instead")
batch_at_front(cholesky_update_p)


# ------------------------------------------------------- symmetric_product
symmetric_product_p = Primitive("symmetric_product")


def symmetric_product(a_matrix, c_matrix, *, alpha: float = 1., beta: float = 0.,
                      symmetrize_output: bool = False):
  """``alpha a a^T + beta c`` for ``a`` ``[..., m, n]`` and symmetric ``c``
  ``[..., m, m]``. Only the lower triangle is specified (JAX's GPU kernel
  leaves the upper alone); ``symmetrize_output`` mirrors it into the upper."""
  result = symmetric_product_p.bind1(a_matrix, c_matrix, alpha=float(alpha), beta=float(beta))
  if symmetrize_output:
    result = add(tril(result), T(tril(result, -1)))
  return result


@symmetric_product_p.def_impl
def _symmetric_product_impl(a, c, *, alpha, beta):
  out = alpha * np.matmul(a, np.swapaxes(a, -1, -2)) + beta * c
  return [out.astype(c.dtype)]


@symmetric_product_p.def_abstract_eval
def _symmetric_product_abstract_eval(a, c, *, alpha, beta):
  check_dtypes("symmetric_product", [a, c], [(np.floating,)] * 2)
  check_same_dtypes("symmetric_product", [a, c])
  check_batch("symmetric_product", [a, c], [2, 2])
  if a.shape[-2] != c.shape[-1] or c.shape[-2] != c.shape[-1]:
    raise ValueError("symmetric_product expects a rectangular matrix of shape (m, n) and a "
                     f"square matrix of shape (m, m). Got shapes {a.shape} and {c.shape}.")
  return [ShapedArray(c.shape, c.dtype)]


symmetric_product_p.def_sharding_rule(replicated_rule)


@symmetric_product_p.def_jvp
def _symmetric_product_jvp(primals, tangents, *, alpha, beta):
  a, c = primals
  da, dc = tangents
  out = symmetric_product_p.bind1(a, c, alpha=alpha, beta=beta)
  dout = None
  if type(da) is not Zero:
    da_at = mm(da, T(a))
    dout = mul(add(da_at, T(da_at)), const(da_at, alpha))
  if type(dc) is not Zero:
    dc = mul(dc, const(dc, beta))
    dout = dc if dout is None else add(dout, dc)
  return [out], [dout]


batch_at_front(symmetric_product_p)


# ------------------------------------------------------- tridiagonal_solve
tridiagonal_solve_p = Primitive("tridiagonal_solve")


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
  """Solve ``A x = b`` for tridiagonal ``A`` with sub-, main and
  superdiagonals ``dl`` (``dl[..., 0]`` unused), ``d`` and ``du``
  (``du[..., m-1]`` unused), each ``[..., m]``, and ``b`` ``[..., m, k]``,
  by Gaussian elimination with partial pivoting (LAPACK ``gtsv``). A singular
  matrix gives NaNs, unless ``perturb_singular``: then the pivoting is
  scaled by the rows' sizes and tiny pivots of ``U`` are moved by ``eps *
  max|U|`` (with their sign) where their quotient would overflow, as JAX's
  CPU kernel (LAPACK ``lagtf``/``lagts``' rules), so the result is finite."""
  return tridiagonal_solve_p.bind1(dl, d, du, b, perturb_singular=bool(perturb_singular))


@tridiagonal_solve_p.def_impl
def _tridiagonal_solve_impl(dl, d, du, b, *, perturb_singular):
  m, k = b.shape[-2:]
  work = np.result_type(lapack_dtype(b).dtype)
  nb = math.prod(b.shape[:-2])
  # No copies here: both kernels copy what they overwrite.
  flat = [v.astype(work, copy=False).reshape(nb, m) for v in (dl, d, du)]
  rhs = b.astype(work, copy=False).reshape(nb, m, k)
  if not perturb_singular and lapack.available() and not lapack.vectorized_batch_is_faster(nb, m):
    return [lapack.gtsv(*flat, rhs).reshape(b.shape).astype(b.dtype, copy=False)]
  with np.errstate(all="ignore"):
    if perturb_singular:
      x = gtsv_kernels.gtsv_perturbed(*flat, rhs)
    # Few narrow real systems: a scalar loop beats row-wise array calls with
    # the same bits (NumPy's complex scalar arithmetic rounds otherwise).
    elif rhs.shape[0] * k <= 16 and work.kind == "f":
      x = np.stack([gtsv_kernels.gtsv_one(*(v[i] for v in flat), rhs[i])
                    for i in range(rhs.shape[0])]) if rhs.shape[0] else rhs.copy()
    else:
      x = gtsv_kernels.gtsv(*flat, rhs)
  return [x.reshape(b.shape).astype(b.dtype)]


@tridiagonal_solve_p.def_abstract_eval
def _tridiagonal_solve_abstract_eval(dl, d, du, b, *, perturb_singular):
  check_dtypes("tridiagonal_solve", [dl, d, du, b], [_INEXACT] * 4)
  check_same_dtypes("tridiagonal_solve", [dl, d, du, b])
  check_batch("tridiagonal_solve", [dl, d, du, b], [1, 1, 1, 2])
  if dl.shape != d.shape or dl.shape != du.shape:
    raise TypeError("tridiagonal_solve requires that all diagonal arguments have the same "
                    f"shape; got dl {dl.shape}, d {d.shape}, du {du.shape}.")
  if dl.shape != b.shape[:-1]:
    raise TypeError("tridiagonal_solve requires that the leading ndim-1 dimensions of b equal "
                    f"the dimensions of the diagonal arguments; got b {b.shape} and "
                    f"diagonals {d.shape}.")
  return [ShapedArray(b.shape, b.dtype)]


tridiagonal_solve_p.def_sharding_rule(replicated_rule)


def _tridiagonal_product(dl, d, du, x):
  """``A x`` for the tridiagonal ``A`` of ``(dl, d, du)`` and ``x`` ``[..., m, k]``."""
  shape = get_aval(x).shape
  nd, m = len(shape), shape[-2]
  cols = lambda v: broadcast_in_dim(v, shape, tuple(range(nd - 1)))   # noqa: E731
  y = mul(cols(d), x)
  if m == 1:
    return y
  zero = np.array(0, get_aval(x).dtype)
  keep = [(0, 0, 0)] * (nd - 2)
  x_down = pad(slice(x, (0,) * nd, (*shape[:-2], m - 1, shape[-1])), zero,
               [*keep, (1, 0, 0), (0, 0, 0)])                       # x[i-1] at row i
  x_up = pad(slice(x, (*(0,) * (nd - 2), 1, 0), shape), zero,
             [*keep, (0, 1, 0), (0, 0, 0)])                          # x[i+1] at row i
  return add(y, add(mul(cols(dl), x_down), mul(cols(du), x_up)))


@tridiagonal_solve_p.def_jvp
def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular):
  *diags, b = primals
  *diag_dots, b_dot = tangents
  ans = tridiagonal_solve_p.bind1(*primals, perturb_singular=perturb_singular)
  rhs = b_dot
  if not all(type(t) is Zero for t in diag_dots):
    dots = [full_like(p, 0) if type(t) is Zero else t for p, t in zip(diags, diag_dots)]
    matvec = _tridiagonal_product(*dots, ans)
    rhs = neg(matvec) if type(b_dot) is Zero else sub(b_dot, matvec)
  return [ans], [tridiagonal_solve_p.bind1(*diags, rhs, perturb_singular=perturb_singular)]


@tridiagonal_solve_p.def_transpose
def _tridiagonal_solve_transpose(cts, dl, d, du, b, *, perturb_singular):
  # Linear in b only: the cotangent solves with A^T, whose subdiagonal is
  # du shifted down one place and superdiagonal dl shifted up.
  ct, = cts
  if type(ct) is Zero:
    return [None, None, None, Zero(b.aval)]
  nd = get_aval(du).ndim
  m = get_aval(du).shape[-1]
  batch = get_aval(du).shape[:-1]
  zero = np.array(0, get_aval(du).dtype)
  keep = [(0, 0, 0)] * (nd - 1)
  dl_t = pad(slice(du, (0,) * nd, (*batch, m - 1)), zero, [*keep, (1, 0, 0)])
  du_t = pad(slice(dl, (*(0,) * (nd - 1), 1), (*batch, m)), zero, [*keep, (0, 1, 0)])
  return [None, None, None,
          tridiagonal_solve_p.bind1(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


@tridiagonal_solve_p.def_batch
def _tridiagonal_solve_batch(vals, dims, *, perturb_singular):
  dl, d, du, b = vals
  if dims[0] is None and dims[1] is None and dims[2] is None:
    # One matrix for every batch member: fold the batch into b's columns.
    bd = dims[3]
    shape = get_aval(b).shape
    nd = len(shape)
    perm = [i for i in range(nd) if i != bd]
    perm.insert(nd - 2, bd)                        # [..., m, B, k]
    moved = transpose(b, tuple(perm))
    mshape = get_aval(moved).shape
    flat = reshape(moved, (*mshape[:-2], mshape[-2] * mshape[-1]))
    out = tridiagonal_solve_p.bind1(dl, d, du, flat, perturb_singular=perturb_singular)
    return [reshape(out, mshape)], [nd - 2]
  size = axis_size(vals, dims)
  args = [bdim_at_front(v, dim, size) for v, dim in zip(vals, dims)]
  return tridiagonal_solve_p.bind(*args, perturb_singular=perturb_singular), [0]

