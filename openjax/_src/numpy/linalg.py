"""``jax.numpy.linalg``: decompositions, solves, determinants, norms and the
matrix products of the array API, written on the ``lax.linalg`` primitives.

Decompositions return JAX's named tuples (``EighResult``, ``QRResult``,
``SVDResult``, ``SlogdetResult``, ``EigResult``).
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.numpy import util
from openjax._src.numpy.creation import asarray
from openjax._src.numpy.indexing import take_along_axis
from openjax._src.numpy.linalg_ops import (
    cross as _cross, diagonal as _diagonal, matmul as _matmul, outer as _outer,
    tensordot as _tensordot, trace as _trace, vecdot as _vecdot)
from openjax._src.numpy.misc import where
from openjax._src.numpy.ranges import eye
from openjax._src.numpy.reductions import amax, count_nonzero, prod, sum as _sum
from openjax._src.numpy.shape_reshaping import expand_dims, matrix_transpose, moveaxis, reshape
from openjax._src.numpy.sorting import argsort
from openjax._src.numpy.ufuncs import abs as _abs, log, sign, sqrt
from openjax._src.numpy.ufuncs_float import conj, real
from openjax._src.primitives.linalg import linalg, linalg_extra
from openjax._src.primitives.linalg.linalg import lu, triangular_solve

# The decompositions are jitted as in JAX (``util.jit``: traced, they stage a
# jit call; eager, their jaxpr runs on the eager kernels, never compiled):
# their eager impls are LAPACK's, as JAX's are, while compiled ones are
# openjax's own loops (other eigenvector signs and last bits), and a tiered
# first call would differ from later ones.

__all__ = ["cholesky", "eigh", "eigvalsh", "eig", "eigvals", "qr", "svd", "svdvals", "inv",
           "solve", "det", "slogdet", "pinv", "norm", "matrix_norm", "vector_norm",
           "matrix_power", "matrix_rank", "lstsq", "tensorsolve", "tensorinv", "cross",
           "outer", "multi_dot", "vecdot", "matmul", "trace", "diagonal", "matrix_transpose",
           "cond", "tensordot", "EighResult", "QRResult", "SVDResult", "SlogdetResult"]


class EighResult(NamedTuple):
  eigenvalues: object
  eigenvectors: object


class EigResult(NamedTuple):
  eigenvalues: object
  eigenvectors: object


class QRResult(NamedTuple):
  Q: object
  R: object


class SVDResult(NamedTuple):
  U: object
  S: object
  Vh: object


class SlogdetResult(NamedTuple):
  sign: object
  logabsdet: object


# ------------------------------------------------------------------ helpers
def _inexact(fun: str, *args):
  checked = util.ensure_arraylike(f"jnp.linalg.{fun}", *args)
  args = (checked,) if len(args) == 1 else checked
  return [asarray(x) for x in util.promote_dtypes_inexact(*args)]


def _square(fun: str, a):
  if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
    raise ValueError(f"jnp.linalg.{fun}: argument must be a stack of square matrices "
                     f"[..., n, n], got {a.aval.str_short() if hasattr(a, 'aval') else a.shape}; "
                     "pass a matrix (or a batch of matrices) with equal last two dimensions.")


def _H(x):
  return conj(matrix_transpose(x)) if dtypes.kind(x.dtype) == "c" else matrix_transpose(x)


def _real_dtype(dt):
  dt = np.dtype(dt)
  return np.finfo(dt).dtype if dt.kind == "c" else dt


# ---------------------------------------------------------- decompositions
@util.jit(static_argnames=("upper", "symmetrize_input"))
def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
  """The Cholesky factor of Hermitian positive-definite ``a`` (``[..., n, n]``):
  lower ``L`` with ``a = L @ L^H``, or upper ``U = L^H`` when ``upper``.
  Matrices that are not positive definite give NaNs."""
  a, = _inexact("cholesky", a)
  L = linalg.cholesky(a, symmetrize_input=symmetrize_input)
  return _H(L) if upper else L


@util.jit(static_argnames=("UPLO", "symmetrize_input"))
def eigh(a, UPLO: str | None = None, symmetrize_input: bool = True):
  """Eigenvalues (ascending) and eigenvectors of Hermitian matrices ``a``:
  ``EighResult(eigenvalues, eigenvectors)``. ``UPLO`` ('L' or 'U') names the
  triangle read when the input is not symmetrized."""
  a, = _inexact("eigh", a)
  if UPLO is None or UPLO == "L":
    lower = True
  elif UPLO == "U":
    lower = False
  else:
    raise ValueError(f"jnp.linalg.eigh: UPLO must be 'L' or 'U', got {UPLO!r}.")
  v, w = linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
  return EighResult(w, v)


@util.jit(static_argnames=("UPLO", "symmetrize_input"))
def eigvalsh(a, UPLO: str | None = "L", *, symmetrize_input: bool = True):
  """The eigenvalues (ascending, real) of Hermitian matrices ``a``."""
  w, _ = eigh(a, UPLO, symmetrize_input)
  return w


@util.jit(static_argnames=("mode",))
def qr(a, mode: str = "reduced"):
  """QR decomposition ``a = Q @ R``: ``mode`` 'reduced' (``Q`` [..., m, k],
  k = min(m, n)), 'complete' (``Q`` [..., m, m]) or 'r' (``R`` only)."""
  a, = _inexact("qr", a)
  if mode == "raw":
    raise NotImplementedError("jnp.linalg.qr: mode='raw' is not implemented (as in JAX); "
                              "use 'reduced', 'complete' or 'r'.")
  if mode in ("reduced", "r", "full"):
    full_matrices = False
  elif mode == "complete":
    full_matrices = True
  else:
    raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
  q, r = linalg.qr(a, pivoting=False, full_matrices=full_matrices)
  if mode == "r":
    return r
  return QRResult(q, r)


@util.jit(static_argnames=("full_matrices", "compute_uv", "hermitian", "subset_by_index"))
def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index=None):
  """Singular value decomposition ``a = U @ diag(S) @ Vh`` (``S`` descending):
  ``SVDResult(U, S, Vh)``, or ``S`` alone without ``compute_uv``. With
  ``hermitian`` it is computed from ``eigh``."""
  a, = _inexact("svd", a)
  if hermitian:
    w, v = linalg.eigh(a, subset_by_index=subset_by_index)
    s = _abs(w)
    if not compute_uv:
      return -lax.sort(-s, dimension=s.ndim - 1)
    order = argsort(-s, axis=-1)
    s = take_along_axis(s, order, axis=-1)
    sgn = take_along_axis(sign(w), order, axis=-1)
    u = take_along_axis(v, order[..., None, :], axis=-1)
    vh = _H(u * sgn[..., None, :].astype(u.dtype))
    return SVDResult(u, s, vh)
  if compute_uv:
    u, s, vh = linalg.svd(a, full_matrices=full_matrices, compute_uv=True,
                          subset_by_index=subset_by_index)
    return SVDResult(u, s, vh)
  return linalg.svd(a, full_matrices=full_matrices, compute_uv=False,
                    subset_by_index=subset_by_index)


@util.jit
def svdvals(x):
  """The singular values of ``x`` (descending)."""
  return svd(x, compute_uv=False)


@util.jit
def eig(a):
  """Eigenvalues and right eigenvectors of general square matrices
  (complex results), as LAPACK ``geev`` (``lax.linalg.eig``; compiled code
  calls it on the host, as JAX does on the CPU)."""
  a, = _inexact("eig", a)
  w, v = linalg_extra.eig(a, compute_left_eigenvectors=False)
  return EigResult(w, v)


@util.jit
def eigvals(a):
  """Eigenvalues of general square matrices (complex; see ``eig``)."""
  a, = _inexact("eigvals", a)
  return linalg_extra.eig(a, compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)[0]


# ------------------------------------------------------------------ solves
def _lu_solve(lu_, perm, b, trans: int):
  """Solve ``A x = b`` (trans 0) or ``A^T x = b`` (trans 1) from ``P A = L U``;
  ``b`` is ``[..., m, k]`` with the batch dims of ``lu_``."""
  if trans == 0:
    x = take_along_axis(b, perm[..., :, None], axis=-2)
    x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_, x, left_side=True, lower=False)
  x = triangular_solve(lu_, b, left_side=True, lower=False, transpose_a=True)
  x = triangular_solve(lu_, x, left_side=True, lower=True, transpose_a=True,
                       unit_diagonal=True)
  inv_perm = argsort(perm, axis=-1)
  return take_along_axis(x, inv_perm[..., :, None], axis=-2)


@util.jit
def solve(a, b):
  """The solution ``x`` of ``a @ x = b`` for square ``a`` (``[..., m, m]``)
  and ``b`` ``[..., m]`` or ``[..., m, k]`` (batch dims broadcast)."""
  a, b = _inexact("solve", a, b)
  if not (a.ndim >= 2 and a.shape[-1] == a.shape[-2] and b.ndim >= 1
          and b.shape[-1 if b.ndim == 1 or b.ndim == a.ndim - 1 else -2] == a.shape[-1]):
    raise ValueError("The arguments to solve must have shapes a=[..., m, m] and "
                     f"b=[..., m, k] or b=[..., m]; got a={a.shape} and b={b.shape}")
  vector = b.ndim == 1 or b.ndim == a.ndim - 1
  if vector:
    b = b[..., None]
  batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
  a = util.broadcast_to_shape(a, batch + a.shape[-2:])
  b = util.broadcast_to_shape(b, batch + b.shape[-2:])
  # Derivatives flow through lu's and triangular_solve's JVP rules (JAX
  # wraps this in custom_linear_solve, which openjax does not have).
  lu_, _, perm = lu(a)
  x = _lu_solve(lu_, perm, b, 0)
  return x[..., 0] if vector else x


@util.jit
def inv(a):
  """The inverse of square matrices ``a`` (``[..., n, n]``)."""
  a, = _inexact("inv", a)
  _square("inv", a)
  return solve(a, lax.broadcast(eye(a.shape[-1], dtype=a.dtype), a.shape[:-2]))


# ------------------------------------------------------------ determinants
def _slogdet_lu(a):
  lu_, pivots, _ = lu(a)
  diag = _diagonal(lu_, axis1=-2, axis2=-1)
  is_zero = (diag == 0).any(axis=-1)
  parity = count_nonzero(pivots != np.arange(a.shape[-1], dtype=np.int32), axis=-1)
  if dtypes.kind(a.dtype) == "c":
    phase = prod(diag / _abs(diag).astype(diag.dtype), axis=-1)
    sgn = phase * (1 - 2 * (parity % 2)).astype(a.dtype)
  else:
    parity = parity + count_nonzero(diag < 0, axis=-1)
    sgn = (1 - 2 * (parity % 2)).astype(a.dtype)
  logdet = _sum(log(_abs(diag)), axis=-1)
  sgn = where(is_zero, np.array(0, a.dtype), sgn)
  logdet = where(is_zero, np.array(-np.inf, logdet.dtype), logdet)
  return sgn, logdet


@util.jit(static_argnames=("method",))
def slogdet(a, *, method: str | None = None):
  """Sign and natural log of the absolute determinant of square matrices:
  ``SlogdetResult(sign, logabsdet)``."""
  a, = _inexact("slogdet", a)
  _square("slogdet", a)
  if method not in (None, "lu"):
    raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' "
                     "(`None`).")
  sgn, logdet = _slogdet_lu(a)
  return SlogdetResult(sgn, logdet)


def _det_2x2(a):
  return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]


def _det_3x3(a):
  return (a[..., 0, 0] * a[..., 1, 1] * a[..., 2, 2] + a[..., 0, 1] * a[..., 1, 2] * a[..., 2, 0]
          + a[..., 0, 2] * a[..., 1, 0] * a[..., 2, 1] - a[..., 0, 2] * a[..., 1, 1] * a[..., 2, 0]
          - a[..., 0, 0] * a[..., 1, 2] * a[..., 2, 1] - a[..., 0, 1] * a[..., 1, 0] * a[..., 2, 2])


@util.jit
def det(a):
  """The determinant of square matrices ``a`` (``[..., n, n]``)."""
  a, = _inexact("det", a)
  _square("det", a)
  n = a.shape[-1]
  if n == 2:
    return _det_2x2(a)
  if n == 3:
    return _det_3x3(a)
  sgn, logdet = _slogdet_lu(a)
  return sgn * lax.exp(logdet).astype(sgn.dtype)


# ------------------------------------------------------ pseudo-inverse etc.
def _default_rtol(a):
  return np.array(10. * max(a.shape[-2:]) * np.finfo(_real_dtype(a.dtype)).eps,
                  _real_dtype(a.dtype))


@util.jit(static_argnames=("hermitian",))
def pinv(a, rtol=None, hermitian: bool = False):
  """The Moore-Penrose pseudo-inverse of ``a`` (``[..., m, n]``): singular
  values at most ``rtol * max(s)`` count as zero."""
  a, = _inexact("pinv", a)
  a = conj(a) if dtypes.kind(a.dtype) == "c" else a
  rtol = _default_rtol(a) if rtol is None else asarray(rtol)
  u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
  # initial: empty matrices (no singular values) have the empty pseudo-inverse.
  cutoff = (asarray(rtol)[..., None] * amax(s, axis=-1, keepdims=True, initial=0)
            ).astype(s.dtype)
  s_inv = where(s > cutoff, 1 / where(s > cutoff, s, 1), 0).astype(s.dtype)
  res = _matmul(matrix_transpose(vh) * s_inv[..., None, :].astype(vh.dtype),
                   matrix_transpose(u), precision="highest")
  return res


@util.jit(static_argnames=("tol_is_none",))
def _matrix_rank(M, rtol, tol_is_none):
  s = svd(M, compute_uv=False)
  if tol_is_none:
    rtol = _default_rtol(M) if rtol is None else rtol
    tol = amax(s, axis=-1, keepdims=True) * asarray(rtol)[..., None]
  else:
    tol = asarray(rtol)[..., None]
  return _sum(s > tol, axis=-1)


def matrix_rank(M, rtol=None, *, tol=None):
  """The rank of matrices ``M``: the number of singular values above
  ``rtol * max(s)`` (or above ``tol``)."""
  M, = _inexact("matrix_rank", M)
  if M.ndim < 2:
    return (M != 0).any().astype(np.int32)
  if tol is not None:
    return _matrix_rank(M, tol, False)
  return _matrix_rank(M, rtol, True)


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
  """Least-squares solution of ``a @ x = b``: ``(x, residuals, rank, s)``
  (the SVD-based algorithm of ``numpy.linalg.lstsq``)."""
  a, b = _inexact("lstsq", a, b)
  if a.ndim != 2:
    raise TypeError(f"jnp.linalg.lstsq: a must be 2-D, got shape {a.shape}; pass a matrix.")
  b_vector = b.ndim == 1
  if b_vector:
    b = b[:, None]
  if b.ndim != 2 or b.shape[0] != a.shape[0]:
    raise TypeError(f"jnp.linalg.lstsq: incompatible shapes a={a.shape}, b={b.shape}; b "
                    "needs as many rows as a.")
  m, n = a.shape
  dtype = a.dtype
  eps = np.finfo(_real_dtype(dtype)).eps
  rcond = eps * max(n, m) if rcond is None else rcond
  u, s, vt = svd(a, full_matrices=False)
  mask = s >= asarray(rcond, dtype=s.dtype) * (s[0] if s.size else 0)
  rank = mask.sum()
  safe_s = where(mask, s, 1).astype(dtype)
  s_inv = where(mask, 1 / safe_s, 0)[:, None]
  uTb = _matmul(_H(u), b, precision="highest")
  x = _matmul(_H(vt), s_inv * uTb, precision="highest")
  if numpy_resid and (rank < n or m <= n):
    resid = asarray([], dtype=_real_dtype(dtype))
  else:
    b_est = _matmul(a, x, precision="highest")
    resid = _sum(_abs(b - b_est) ** 2, axis=0)
  if b_vector:
    x = x[:, 0]
    resid = resid[0] if resid.size else resid
  return x, resid, rank, s


# ------------------------------------------------------------------- norms
def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):
  """The ``ord``-norm of vectors along ``axis`` (all axes when None)."""
  x, = _inexact("vector_norm", x)
  if axis is None:
    out = norm(reshape(x, (-1,)), ord=ord)
    return reshape(out, (1,) * x.ndim) if keepdims else out
  return norm(x, ord=ord, axis=axis, keepdims=keepdims)


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):
  """The ``ord``-norm of the matrices in the last two dimensions of ``x``."""
  x, = _inexact("matrix_norm", x)
  return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


@util.jit(static_argnames=("ord", "axis", "keepdims"))
def norm(x, ord=None, axis=None, keepdims: bool = False):
  """Vector norms (one axis) and matrix norms (two axes): ``ord`` None/2-norm
  or Frobenius, ``inf``, ``-inf``, 0, 1, -1, ``'fro'``, ``'nuc'``, 2, -2 and
  any other number for vectors."""
  x, = _inexact("norm", x)
  x_shape = x.shape
  ndim = len(x_shape)
  if axis is None:
    result = sqrt(_sum(real(x * conj(x)), keepdims=keepdims))
    if ord is None or ord in ("f", "fro") and ndim == 2 or ord == 2 and ndim == 1:
      return result
    axis = tuple(range(ndim))
  elif isinstance(axis, tuple):
    axis = tuple(util.canonicalize_axis(a, ndim) for a in axis)
  else:
    axis = (util.canonicalize_axis(operator.index(axis), ndim),)
  num_axes = len(axis)
  if num_axes == 1:
    return _vector_norm(x, ord, axis, keepdims)
  if num_axes == 2:
    return _matrix_norm(x, ord, axis, keepdims)
  raise ValueError(f"Invalid axis values ({axis}) for jnp.linalg.norm.")


def _vector_norm(x, ord, axis, keepdims):
  if ord is None or ord == 2:
    return sqrt(_sum(real(x * conj(x)), axis=axis, keepdims=keepdims))
  if ord == np.inf:
    return amax(_abs(x), axis=axis, keepdims=keepdims)
  if ord == -np.inf:
    from_min = -amax(-_abs(x), axis=axis, keepdims=keepdims)
    return from_min
  if ord == 0:
    return _sum(x != 0, dtype=_real_dtype(x.dtype), axis=axis, keepdims=keepdims)
  if ord == 1:
    return _sum(_abs(x), axis=axis, keepdims=keepdims)
  if isinstance(ord, str):
    raise ValueError(f"Invalid order '{ord}' for vector norm.")
  abs_x = _abs(x)
  ord_arr = np.array(ord, _real_dtype(x.dtype))
  out = _sum(abs_x ** ord_arr, axis=axis, keepdims=keepdims)
  return out ** (np.array(1, ord_arr.dtype) / ord_arr)


def _matrix_norm(x, ord, axis, keepdims):
  row_axis, col_axis = axis
  if ord is None or ord in ("f", "fro"):
    return sqrt(_sum(real(x * conj(x)), axis=axis, keepdims=keepdims))
  if ord == 1:
    if not keepdims and col_axis > row_axis:
      col_axis -= 1
    return amax(_sum(_abs(x), axis=row_axis, keepdims=keepdims), axis=col_axis,
                keepdims=keepdims)
  if ord == -1:
    if not keepdims and col_axis > row_axis:
      col_axis -= 1
    return -amax(-_sum(_abs(x), axis=row_axis, keepdims=keepdims), axis=col_axis,
                 keepdims=keepdims)
  if ord == np.inf:
    if not keepdims and row_axis > col_axis:
      row_axis -= 1
    return amax(_sum(_abs(x), axis=col_axis, keepdims=keepdims), axis=row_axis,
                keepdims=keepdims)
  if ord == -np.inf:
    if not keepdims and row_axis > col_axis:
      row_axis -= 1
    return -amax(-_sum(_abs(x), axis=col_axis, keepdims=keepdims), axis=row_axis,
                 keepdims=keepdims)
  if ord in ("nuc", 2, -2):
    y = moveaxis(x, (row_axis, col_axis), (-2, -1))
    s = svd(y, compute_uv=False)
    if ord == 2:
      out = amax(s, axis=-1, initial=0)   # 0 for empty matrices, as JAX
    elif ord == -2:
      out = -amax(-s, axis=-1)
    else:
      out = _sum(s, axis=-1)
    if keepdims:
      out = expand_dims(out, axis)
    return out
  raise ValueError(f"Invalid order '{ord}' for matrix norm.")


@util.jit
def cond(x, p=None):
  """The condition number of ``x`` (2-norm by default)."""
  x, = _inexact("cond", x)
  if p is None or p == 2:
    s = svd(x, compute_uv=False)
    return s[..., 0] / s[..., -1]
  return norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))


# ----------------------------------------------------------- other matrices
def matrix_power(a, n: int):
  """``a`` raised to the integer power ``n`` (repeated squaring; negative
  powers invert first)."""
  a = asarray(a)
  if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
    raise TypeError(f"jnp.linalg.matrix_power: a must be a stack of square matrices, got "
                    f"shape {a.shape}.")
  try:
    n = operator.index(n)
  except TypeError as err:
    raise TypeError(f"exponent must be an integer, got {n}") from err
  if n == 0:
    return lax.broadcast(eye(a.shape[-1], dtype=a.dtype), a.shape[:-2])
  if n < 0:
    a = inv(a)
    n = -n
  result = None
  z = a
  while n > 0:
    if n & 1:
      result = z if result is None else _matmul(result, z)
    n >>= 1
    if n:
      z = _matmul(z, z)
  return result


def tensorinv(a, ind: int = 2):
  """The inverse of ``a`` under ``tensordot(a, x, ind)``."""
  a = asarray(a)
  ind = operator.index(ind)
  if ind <= 0:
    raise ValueError(f"ind must be a positive integer, got {ind}.")
  contract, batch = a.shape[:ind], a.shape[ind:]
  prod_in, prod_out = int(np.prod(contract)), int(np.prod(batch))
  if prod_in != prod_out:
    raise ValueError(f"jnp.linalg.tensorinv: the first {ind} dimensions of a (product "
                     f"{prod_in}) must match the rest (product {prod_out}); got shape "
                     f"{a.shape}.")
  return reshape(inv(reshape(a, (prod_in, prod_out))), batch + contract)


def tensorsolve(a, b, axes=None):
  """The ``x`` with ``tensordot(a, x, x.ndim) == b``."""
  a, b = _inexact("tensorsolve", a, b)
  if axes is not None:
    a = moveaxis(a, axes, len(axes) * (a.ndim - 1,))
  out_shape = a.shape[b.ndim:]
  if int(np.prod(a.shape[:b.ndim])) != int(np.prod(out_shape)):
    raise ValueError("jnp.linalg.tensorsolve: the leading dimensions of a (those of b) and "
                     f"the rest must have equal products; got a={a.shape}, b={b.shape}.")
  n = int(np.prod(out_shape))
  return reshape(solve(reshape(a, (n, n)), reshape(b, (n,))), out_shape)


def multi_dot(arrays, *, precision=None):
  """The product of a chain of matrices (the first may be 1-D, a row vector;
  the last 1-D, a column vector)."""
  arrays = [asarray(x) for x in arrays]
  if len(arrays) < 2:
    raise ValueError(f"multi_dot requires at least two arrays, got {len(arrays)}.")
  out = arrays[0]
  for x in arrays[1:]:
    out = _matmul(out, x, precision=precision)
  return out


def outer(x1, x2, /):
  """The outer product of two 1-D arrays."""
  x1, x2 = util.ensure_arraylike("jnp.linalg.outer", x1, x2)
  if x1.ndim != 1 or x2.ndim != 1:
    raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={x1.ndim} "
                     f"and x2.ndim={x2.ndim}")
  return _outer(x1, x2)


def cross(x1, x2, /, *, axis: int = -1):
  """The cross product of 3-vectors along ``axis``."""
  x1, x2 = util.ensure_arraylike("jnp.linalg.cross", x1, x2)
  if x1.shape[axis] != 3 or x2.shape[axis] != 3:
    raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                     f"have x1.shape[{axis}]={x1.shape[axis]}, x2.shape[{axis}]="
                     f"{x2.shape[axis]}")
  return _cross(x1, x2, axis=axis)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
  """The matrix product of ``x1`` and ``x2`` (``x1 @ x2``)."""
  return _matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None,
              out_sharding=None):
  """``jnp.tensordot`` with the array API's signature (``axes`` keyword-only)."""
  return _tensordot(x1, x2, axes, precision=precision,
                    preferred_element_type=preferred_element_type, out_sharding=out_sharding)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
  """The conjugated dot product of vectors along ``axis``."""
  return _vecdot(x1, x2, axis=axis, precision=precision,
                    preferred_element_type=preferred_element_type)


def trace(x, /, *, offset: int = 0, dtype=None):
  """The sum of the ``offset`` diagonal of the matrices in the last two axes."""
  return _trace(x, offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x, /, *, offset: int = 0):
  """The ``offset`` diagonal of the matrices in the last two axes."""
  return _diagonal(x, offset=offset, axis1=-2, axis2=-1)

