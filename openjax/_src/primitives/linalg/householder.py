"""Householder-reflector primitives of ``jax.lax.linalg``: ``householder_product``
(LAPACK ``orgqr``/``ungqr``: the unitary ``Q`` of packed reflectors), ``ormqr``
(``ormqr``/``unmqr``: ``Q`` or ``Q^H`` applied to a matrix without forming
it) and ``tridiagonal`` (``sytrd``/``hetrd``: the Hermitian reduction to real
tridiagonal form, in LAPACK's packed output).

Reflectors follow LAPACK: ``H_i = I - tau_i v_i v_i^H`` with ``v_i`` zero above
row ``i``, one at row ``i`` and the packed column's entries below it; ``Q = H_0
H_1 ... H_{k-1}``. Eager impls call LAPACK's ``orgqr``/``ormqr``/``sytrd``
(``lapack.py``), or, for large batches of small matrices and without the
library, NumPy's compact WY products and Hessenberg reduction; the compiled
lowerings (``control/linalg_extra_lowering.py``) run the same loops with lax
wrappers. None of these has a derivative in JAX, and none here: their jvp slots
say so.
"""
from __future__ import annotations

import math

import numpy as np

from openjax._src.core import Primitive, ShapedArray
from openjax._src.core.sharding_rules import replicated_rule
from openjax._src.primitives.base.util import check_dtypes, check_same_dtypes
from openjax._src.primitives.linalg import lapack
from openjax._src.primitives.linalg.linalg_rules import (batch_at_front, check_batch,
                                                         lapack_dtype, real_dtype)
from openjax._src.primitives.linalg.schur import hessenberg_impl

__all__ = ["householder_product", "householder_product_p", "ormqr", "ormqr_p", "tridiagonal",
           "tridiagonal_p"]

_INEXACT = (np.floating, np.complexfloating)



def _no_derivative(prim: Primitive) -> None:
  prim.mark_not_applicable(
      "jvp", f"JAX defines no derivative of lax.linalg.{prim.name}; differentiate the "
      "decomposition it comes from (qr, eigh) instead")


def _work_dtype(dtype) -> np.dtype:
  """The dtype the NumPy impls compute in: float64/complex128 (results are
  cast back), as LAPACK's double routines would for narrower inputs."""
  return np.dtype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64)


def reflector_vectors(a: np.ndarray, k: int) -> np.ndarray:
  """``[..., m, k]``: the first ``k`` packed columns of ``a`` as LAPACK's
  reflector vectors (unit diagonal, zeros above it)."""
  m = a.shape[-2]
  v = np.tril(a[..., :, :k], -1)
  return v + np.eye(m, k, dtype=a.dtype)


def apply_reflectors(v: np.ndarray, taus: np.ndarray, c: np.ndarray, *, left: bool,
                     transpose: bool) -> np.ndarray:
  """``Q c``, ``Q^H c``, ``c Q`` or ``c Q^H`` for ``Q = H_0 ... H_{k-1}``
  (``v`` ``[..., m, k]``, ``taus`` ``[..., k]``, batch dims shared), by the
  compact WY form ``Q = I - V T V^H`` (LAPACK ``larft``/``larfb``): three
  matrix products in place of a rank-1 update of ``c`` per reflector."""
  t = _wy_triangle(v, taus)
  if transpose:
    t = np.conj(np.swapaxes(t, -1, -2))
  vh = np.conj(np.swapaxes(v, -1, -2))
  if left:     # Q c = c - V T (V^H c)
    return c - np.matmul(v, np.matmul(t, np.matmul(vh, c)))
  return c - np.matmul(np.matmul(np.matmul(c, v), t), vh)   # c Q = c - (c V) T V^H


def _wy_triangle(v: np.ndarray, taus: np.ndarray) -> np.ndarray:
  """The upper triangular ``T`` (``[..., k, k]``) of ``H_0 ... H_{k-1} =
  I - V T V^H`` (``larft``, forward and columnwise): ``T[i, i] = tau_i``,
  ``T[:i, i] = -tau_i T[:i, :i] (V[:, :i]^H v_i)``."""
  k = taus.shape[-1]
  gram = np.matmul(np.conj(np.swapaxes(v, -1, -2)), v)      # V^H V, one product
  t = np.zeros(taus.shape + (k,), np.result_type(v.dtype, taus.dtype))
  if k:
    t[..., 0, 0] = taus[..., 0]
  for i in range(1, k):
    # einsum's loop, not BLAS: a threaded gemv a column stalls on a loaded
    # machine (200 reflectors: ~100 ms, against ~5 ms).
    t[..., :i, i] = -taus[..., i, None] * np.einsum("...ij,...j->...i", t[..., :i, :i],
                                                     gram[..., :i, i])
    t[..., i, i] = taus[..., i]
  return t


# ------------------------------------------------------ householder_product
householder_product_p = Primitive("householder_product")


def householder_product(a, taus):
  """The unitary ``[..., m, n]`` matrix ``H_0 H_1 ... H_{k-1}`` (its first
  ``n`` columns) of the elementary reflectors packed below the diagonal of
  ``a`` (``m >= n``) with scalar factors ``taus`` ``[..., k]``, ``k <= n``:
  LAPACK ``orgqr``/``ungqr``."""
  return householder_product_p.bind1(a, taus)


@householder_product_p.def_impl
def _householder_product_impl(a, taus):
  *batch, m, n = a.shape
  size = math.prod(batch)
  if lapack.available() and not lapack.vectorized_batch_is_faster(size, n):
    q = lapack.orgqr(lapack_dtype(a).reshape(size, m, n),
                     lapack_dtype(taus).reshape(size, taus.shape[-1]))
    return [q.reshape(a.shape).astype(a.dtype, copy=False)]
  work = _work_dtype(a.dtype)
  m, n = a.shape[-2:]
  k = taus.shape[-1]
  v = reflector_vectors(a.astype(work), k)
  eye = np.broadcast_to(np.eye(m, n, dtype=work), a.shape)
  q = apply_reflectors(v, taus.astype(work), eye, left=True, transpose=False)
  return [q.astype(a.dtype)]


@householder_product_p.def_abstract_eval
def _householder_product_abstract_eval(a, taus):
  check_dtypes("householder_product", [a, taus], [_INEXACT] * 2)
  check_same_dtypes("householder_product", [a, taus])
  check_batch("householder_product", [a, taus], [2, 1])
  m, n = a.shape[-2:]
  if m < n:
    raise ValueError("The first argument to householder_product must have at least as many "
                     f"rows as columns, got shape {a.shape}")
  if taus.shape[-1] > min(m, n):
    raise ValueError("The second argument to householder_product must not have more rows "
                     "than the minimum of the first argument's rows and columns; got "
                     f"shapes {a.shape} and {taus.shape}")
  return [ShapedArray(a.shape, a.dtype)]


householder_product_p.def_sharding_rule(replicated_rule)
_no_derivative(householder_product_p)
batch_at_front(householder_product_p)


# -------------------------------------------------------------------- ormqr
ormqr_p = Primitive("ormqr")


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
  """``Q @ c`` (``left``), ``c @ Q`` (not ``left``), with ``Q^H`` in place
  of ``Q`` when ``transpose``, for the ``Q = H_0 ... H_{k-1}`` of the
  reflectors packed below the diagonal of ``a`` ``[..., m, n]`` with scalar
  factors ``taus`` ``[..., k]`` (LAPACK ``ormqr``/``unmqr``); ``Q`` is never
  formed."""
  return ormqr_p.bind1(a, taus, c, left=bool(left), transpose=bool(transpose))


@ormqr_p.def_impl
def _ormqr_impl(a, taus, c, *, left, transpose):
  size = math.prod(c.shape[:-2])
  if lapack.available() and not lapack.vectorized_batch_is_faster(size, a.shape[-2]):
    out = lapack.ormqr(lapack_dtype(a).reshape(size, *a.shape[-2:]),
                       lapack_dtype(taus).reshape(size, taus.shape[-1]),
                       lapack_dtype(c).reshape(size, *c.shape[-2:]), left=left,
                       transpose=transpose)
    return [out.reshape(c.shape).astype(c.dtype, copy=False)]
  work = _work_dtype(c.dtype)
  v = reflector_vectors(a.astype(work), taus.shape[-1])
  out = apply_reflectors(v, taus.astype(work), c.astype(work), left=left, transpose=transpose)
  return [out.astype(c.dtype)]


@ormqr_p.def_abstract_eval
def _ormqr_abstract_eval(a, taus, c, *, left, transpose):
  check_dtypes("ormqr", [a, taus, c], [_INEXACT] * 3)
  check_same_dtypes("ormqr", [a, taus, c])
  check_batch("ormqr", [a, taus, c], [2, 1, 2])
  m, n = a.shape[-2:]
  if taus.shape[-1] > min(m, n):
    raise ValueError(f"ormqr: taus {taus.shape} holds more factors than the reflectors "
                     f"packed in a {a.shape} (at most {min(m, n)})")
  if left and c.shape[-2] != m:
    raise ValueError("ormqr with left=True expects c to have the same number of rows as the "
                     f"Householder matrix a. Got a shape {a.shape} and c shape {c.shape}.")
  if not left and c.shape[-1] != m:
    raise ValueError("ormqr with left=False expects c to have the same number of columns as "
                     f"the Householder matrix a has rows. Got a shape {a.shape} and c shape "
                     f"{c.shape}.")
  return [ShapedArray(c.shape, c.dtype)]


ormqr_p.def_sharding_rule(replicated_rule)
_no_derivative(ormqr_p)
batch_at_front(ormqr_p)


# -------------------------------------------------------------- tridiagonal
tridiagonal_p = Primitive("tridiagonal", multiple_results=True)


def tridiagonal(a, *, lower: bool = True):
  """The reduction of Hermitian ``a`` (``[..., n, n]``; only the triangle
  named by ``lower`` is read) to real tridiagonal form ``Q^H a Q``, as LAPACK
  ``sytrd``/``hetrd``: ``(arr, d, e, taus)``. ``arr`` holds the tridiagonal
  matrix on the diagonal and first sub- (``lower``) or superdiagonal, the
  reflector vectors beyond it and the other triangle of ``a`` unchanged;
  ``d`` is the diagonal, ``e`` the off-diagonal (both real) and ``taus`` the
  reflectors' scalar factors."""
  return tridiagonal_p.bind(a, lower=bool(lower))


def hermitian_from_triangle(a: np.ndarray, lower: bool) -> np.ndarray:
  """The Hermitian matrix whose ``lower`` (or upper) triangle is ``a``'s;
  the diagonal's imaginary part is dropped, as ``hetrd`` does."""
  tri = np.tril(a) if lower else np.triu(a)
  strict = np.tril(a, -1) if lower else np.triu(a, 1)
  herm = tri + np.conj(np.swapaxes(strict, -1, -2))
  if a.dtype.kind == "c":
    idx = np.arange(a.shape[-1])
    herm[..., idx, idx] = herm[..., idx, idx].real
  return herm


@tridiagonal_p.def_impl
def _tridiagonal_impl(a, *, lower):
  *batch, n, _ = a.shape
  size = math.prod(batch)
  rdt = real_dtype(a.dtype)
  if lapack.available() and not lapack.vectorized_batch_is_faster(size, n):
    arr, d, e, taus = lapack.sytrd(lapack_dtype(a).reshape(size, n, n), lower)
    return [arr.reshape(a.shape).astype(a.dtype, copy=False),
            d.reshape(*batch, n).astype(rdt, copy=False),
            e.reshape(*batch, n - 1).astype(rdt, copy=False),
            taus.reshape(*batch, n - 1).astype(a.dtype, copy=False)]
  work = a.astype(_work_dtype(a.dtype))
  # The upper reduction (sytrd with uplo='U', reflectors from the last
  # column back) is the lower one of the matrix with rows and columns reversed.
  b = work if lower else work[..., ::-1, ::-1]
  packed, taus = hessenberg_impl(hermitian_from_triangle(b, True))
  idx = np.arange(n)
  d = packed[..., idx, idx].real
  e = packed[..., idx[1:], idx[:-1]].real
  arr = np.where(np.triu(np.ones((n, n), bool), 1), b, packed)
  arr[..., idx, idx] = d
  if not lower:
    arr, d, e, taus = arr[..., ::-1, ::-1], d[..., ::-1], e[..., ::-1], taus[..., ::-1]
  return [np.ascontiguousarray(arr).astype(a.dtype), np.ascontiguousarray(d).astype(rdt),
          np.ascontiguousarray(e).astype(rdt), np.ascontiguousarray(taus).astype(a.dtype)]


@tridiagonal_p.def_abstract_eval
def _tridiagonal_abstract_eval(a, *, lower):
  check_dtypes("tridiagonal", [a], [_INEXACT])
  if a.ndim < 2 or a.shape[-1] != a.shape[-2] or a.shape[-1] == 0:
    raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape {a.shape}.")
  *batch, n, _ = a.shape
  rdt = real_dtype(a.dtype)
  return [ShapedArray(a.shape, a.dtype), ShapedArray((*batch, n), rdt),
          ShapedArray((*batch, n - 1), rdt), ShapedArray((*batch, n - 1), a.dtype)]


tridiagonal_p.def_sharding_rule(replicated_rule)
_no_derivative(tridiagonal_p)
batch_at_front(tridiagonal_p)
