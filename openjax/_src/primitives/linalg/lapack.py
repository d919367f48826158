"""Eager kernels on LAPACK: ``getrf`` (LU), ``trsm`` (triangular solve),
``gehrd`` (Hessenberg reduction), ``gees`` (Schur form), ``orgqr``/
``ormqr`` (Householder reflectors' ``Q``, formed or applied), ``sytrd``
(Hermitian tridiagonal reduction) and ``gtsv`` (tridiagonal solve) from the
``scipy-openblas32`` library (``openjax/_src/openblas.py``; NumPy exposes
none of them), called through ctypes on one matrix of a batch after the
other, in the four LAPACK types (float32/64, complex64/128).

These are the routines JAX's CPU backend calls, so pivots, reflectors and
Schur forms are LAPACK's own; the NumPy kernels they replace (``lu_kernels``,
``schur``) loop over columns in Python (LU 32x32: ~230 us against getrf's
~9 us). Callers check ``available()`` and keep their NumPy code for when the
library is missing or ``OPENJAX_HOST_BLAS=0``.

Fortran routines read column-major matrices, so a C-ordered batch ``[b, m,
n]`` is copied as its transpose ``[b, n, m]`` (each matrix column-major)
and its results read back through the transpose; ``trsm`` goes through
CBLAS, which takes row-major matrices as they are.
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np

from openjax._src import openblas

__all__ = ["available", "vectorized_batch_is_faster", "getrf", "trsm", "gehrd", "gees",
           "orgqr", "ormqr", "sytrd", "gtsv"]

_F32, _F64, _C64, _C128 = (np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                                  np.complex128))
# The element types LAPACK computes in (callers cast others) and their letters.
_LETTER = {_F32: "s", _F64: "d", _C64: "c", _C128: "z"}

_int, _ptr, _byref = ctypes.c_int, ctypes.c_void_p, ctypes.byref
# Fortran's hidden lengths of character arguments (one character each).
_LEN1 = ctypes.c_size_t(1)


def available() -> bool:
  """Whether the library loads (the ``scipy-openblas32`` wheel, not
  switched off by ``OPENJAX_HOST_BLAS=0``)."""
  return openblas.library() is not None


def vectorized_batch_is_faster(batch: int, n: int) -> bool:
  """Whether a batch of ``batch`` ``n x n`` problems runs faster in the
  NumPy kernels, whose steps each cover the whole batch, than in one LAPACK
  call a matrix (~1.1 us each). Measured for LU (us, NumPy/LAPACK): 64 4x4
  89/108, 256 8x8 398/453, 256 16x16 1943/1139, 64 8x8 193/139."""
  return batch > 16 * n


@functools.cache
def _routine(name: str, dtype: np.dtype):
  fn = getattr(openblas.library(), f"scipy_{name.replace('?', _LETTER[dtype])}")
  fn.restype = None
  return fn


def _address(x: np.ndarray) -> int:
  """The address of a contiguous, non-empty array's data (for a writable
  one a third of ``x.ctypes.data``'s ~1 us)."""
  if x.flags.writeable:
    return ctypes.addressof(ctypes.c_char.from_buffer(x))
  return x.ctypes.data


def _column_major(a: np.ndarray) -> np.ndarray:
  """A C-contiguous copy of ``a``'s transpose (``[b, m, n] -> [b, n, m]``):
  each matrix of the batch in column-major order, for Fortran to overwrite.
  (The method calls: ``np.swapaxes`` and ``np.ascontiguousarray`` add ~0.4 us.)"""
  return a.transpose(0, 2, 1).copy()


def _row_major(f: np.ndarray) -> np.ndarray:
  return f.transpose(0, 2, 1).copy()


def _query_work(call, dtype: np.dtype) -> int:
  """The optimal workspace size from a workspace query (``lwork = -1``)."""
  work = np.zeros(1, dtype)
  call(work, -1)
  return max(1, int(work[0].real))


# -------------------------------------------------------------------- getrf
def getrf(a: np.ndarray):
  """``(lu, pivots)`` of a batch ``[b, m, n]`` (a LAPACK type): getrf's
  packed ``L``/``U`` and its row swaps as zero-based int32 ``[b, min(m,
  n)]``. A singular matrix is factored all the same (info > 0), as JAX."""
  b, m, n = a.shape
  k = min(m, n)
  f = _column_major(a)
  pivots = np.empty((b, k), np.int32)
  if f.size:
    fn, rows, cols, info = _getrf_args(a.dtype, m, n)
    step, pstep = m * n * a.itemsize, k * 4
    base, pbase = _address(f), _address(pivots)
    for i in range(b):
      fn(rows, cols, _ptr(base + i * step), rows, _ptr(pbase + i * pstep), info)
    pivots -= 1
  return _row_major(f), pivots


@functools.lru_cache(maxsize=256)
def _getrf_args(dtype: np.dtype, m: int, n: int) -> tuple:
  """``(fn, rows, cols, info)`` for ``m x n`` matrices: made once per shape
  (~1 us of the small call's ~6); ``info`` is written, never read."""
  return (_routine("?getrf_", dtype), _byref(_int(m)), _byref(_int(n)), _byref(_int()))


# --------------------------------------------------------------------- trsm
_ROW_MAJOR = 101
_NO_TRANS, _TRANS, _CONJ_TRANS = 111, 112, 113
_UPPER, _LOWER = 121, 122
_NON_UNIT, _UNIT = 131, 132
_LEFT, _RIGHT = 141, 142


@functools.cache
def _one(dtype: np.dtype):
  """trsm's ``alpha = 1``: a C scalar, or for complex types the address of one."""
  if dtype.kind == "c":
    one = np.ones((), dtype)
    return one, _ptr(one.ctypes.data)
  return None, (ctypes.c_float if dtype == _F32 else ctypes.c_double)(1.0)


def trsm(a: np.ndarray, b: np.ndarray, *, left_side: bool, lower: bool, transpose_a: bool,
         conjugate_a: bool, unit_diagonal: bool) -> np.ndarray:
  """``x`` with ``op(a) x = b`` (``left_side``) or ``x op(a) = b`` for
  batches ``a [B, n, n]`` and ``b [B, m, k]`` of one LAPACK type; only the
  ``lower``/upper triangle of ``a`` is read. ``op`` conjugates without
  transposing by conjugating ``b`` and ``x`` (BLAS has no such ``op``)."""
  conj_only = conjugate_a and not transpose_a and a.dtype.kind == "c"
  if conj_only:
    x = np.empty(b.shape, b.dtype)    # C-contiguous (a ufunc's output keeps b's order)
    np.conj(b, out=x)
  else:
    x = np.array(b, order="C")        # a C-contiguous copy in one call
  batch, m, k = x.shape
  n = a.shape[-1]
  if not x.size or not n:
    return x
  a = np.ascontiguousarray(a)
  trans = (_CONJ_TRANS if conjugate_a else _TRANS) if transpose_a else _NO_TRANS
  fn, flags, lda, ldx = _trsm_args(x.dtype, left_side, lower, trans, unit_diagonal, m, k, n)
  if batch == 1:
    fn(*flags, _ptr(_address(a)), lda, _ptr(_address(x)), ldx)
  else:
    astep, xstep = n * n * a.itemsize, m * k * x.itemsize
    abase, xbase = _address(a), _address(x)
    for i in range(batch):
      fn(*flags, _ptr(abase + i * astep), lda, _ptr(xbase + i * xstep), ldx)
  return np.conj(x, out=x) if conj_only else x


@functools.lru_cache(maxsize=256)
def _trsm_args(dtype: np.dtype, left_side: bool, lower: bool, trans: int, unit_diagonal: bool,
               m: int, k: int, n: int) -> tuple:
  """``(fn, flags, lda, ldx)``: trsm's routine and C arguments for one
  shape and layout, made once (eight C ints cost ~2 us of a 3x3 solve's ~8)."""
  _, alpha = _one(dtype)
  flags = (_int(_ROW_MAJOR), _int(_LEFT if left_side else _RIGHT),
           _int(_LOWER if lower else _UPPER), _int(trans),
           _int(_UNIT if unit_diagonal else _NON_UNIT), _int(m), _int(k), alpha)
  return _routine("cblas_?trsm", dtype), flags, _int(n), _int(k)


# -------------------------------------------------------------------- gehrd
@functools.cache
def _gehrd_args(dtype: np.dtype, n: int):
  """``(fn, lwork, n, ilo, ihi, lda, lwork)``: the routine, its optimal
  workspace (a query) and its constant arguments for ``n x n`` matrices
  (made once: ~0.25 us each)."""
  fn = _routine("?gehrd_", dtype)
  dim, one = _byref(_int(n)), _byref(_int(1))
  a = np.zeros((n, n), dtype)
  tau = np.zeros(n, dtype)
  lwork = _query_work(lambda work, size: fn(
      dim, one, dim, _ptr(a.ctypes.data), dim, _ptr(tau.ctypes.data), _ptr(work.ctypes.data),
      _byref(_int(size)), _byref(_int())), dtype)
  return fn, lwork, dim, one, dim, dim, _byref(_int(lwork))


def gehrd(a: np.ndarray):
  """``(packed, taus)`` of a batch ``[b, n, n]`` (a LAPACK type, ``n >=
  2``): gehrd's Hessenberg form with its reflectors' tails below the
  subdiagonal, and their ``taus`` ``[b, n - 1]``."""
  b, n, _ = a.shape
  f = _column_major(a)
  if not b:
    return f, np.zeros((0, n - 1), a.dtype)
  fn, lwork, dim, ilo, ihi, lda, lw = _gehrd_args(a.dtype, n)
  # The taus and the workspace in one buffer (one address to look up).
  scratch = np.zeros(b * (n - 1) + lwork, a.dtype)
  info = _byref(_int())
  step, tstep = n * n * a.itemsize, (n - 1) * a.itemsize
  base, tbase = _address(f), _address(scratch)
  work = _ptr(tbase + b * tstep)
  for i in range(b):
    fn(dim, ilo, ihi, _ptr(base + i * step), lda, _ptr(tbase + i * tstep), work, lw, info)
  return _row_major(f), scratch[:b * (n - 1)].reshape(b, n - 1)


# --------------------------------------------------------------------- gees
_REAL_SCRATCH = 3     # wr, wi and bwork (as wide as an element), n each


def _gees_call(fn, complex_kind: bool, dim, a_ptr: int, vs_ptr: int, ldvs, jobvs: bytes,
               scratch: int, n: int, itemsize: int, work: int, lwork, info):
  """One ``?gees`` call (no sorting) on the column-major matrix at
  ``a_ptr``; ``scratch`` is the address of the eigenvalue and real work
  arrays (``_REAL_SCRATCH * n`` elements), ``work`` of the workspace."""
  sdim = _byref(_int())
  if complex_kind:
    # w (n complex), rwork (n reals) and bwork (n ints) in n complex each
    w, rwork, bwork = (_ptr(scratch + j * n * itemsize) for j in range(3))
    fn(jobvs, b"N", None, dim, _ptr(a_ptr), dim, sdim, w, _ptr(vs_ptr), ldvs, _ptr(work),
       lwork, rwork, bwork, info, _LEN1, _LEN1)
  else:
    wr, wi, bwork = (_ptr(scratch + j * n * itemsize) for j in range(3))
    fn(jobvs, b"N", None, dim, _ptr(a_ptr), dim, sdim, wr, wi, _ptr(vs_ptr), ldvs, _ptr(work),
       lwork, bwork, info, _LEN1, _LEN1)


@functools.cache
def _gees_work(dtype: np.dtype, n: int, jobvs: bytes) -> int:
  a = np.zeros((n, n), dtype)
  vs = np.zeros((n, n), dtype)
  scratch = np.zeros(_REAL_SCRATCH * n, dtype)
  fn = _routine("?gees_", dtype)
  ldvs = _byref(_int(n if jobvs == b"V" else 1))
  return _query_work(lambda work, lwork: _gees_call(
      fn, dtype.kind == "c", _byref(_int(n)), a.ctypes.data, vs.ctypes.data, ldvs, jobvs,
      scratch.ctypes.data, n, dtype.itemsize, work.ctypes.data, _byref(_int(lwork)),
      _byref(_int())), dtype)


def gees(a: np.ndarray, compute_schur_vectors: bool):
  """``(t, vs)`` of a batch ``[b, n, n]`` (a LAPACK type): gees' Schur
  form (quasi-triangular for real types) and Schur vectors (``vs`` is None
  without ``compute_schur_vectors``). A matrix whose QR iteration fails
  (info > 0, e.g. non-finite entries) gives NaNs, as in JAX."""
  b, n, _ = a.shape
  f = _column_major(a)
  jobvs = b"V" if compute_schur_vectors else b"N"
  if not f.size:
    return f, (f.copy() if compute_schur_vectors else None)
  lwork = _gees_work(a.dtype, n, jobvs)
  # vs (or one unused element), the scratch arrays and the workspace in one buffer
  vs_size = b * n * n if compute_schur_vectors else 1
  buffer = np.empty(vs_size + _REAL_SCRATCH * n + lwork, a.dtype)
  step = n * n * a.itemsize
  base, vbase = _address(f), _address(buffer)
  scratch = vbase + vs_size * a.itemsize
  work = scratch + _REAL_SCRATCH * n * a.itemsize
  fn = _routine("?gees_", a.dtype)
  dim, lw, status = _byref(_int(n)), _byref(_int(lwork)), _int()
  ldvs = _byref(_int(n if compute_schur_vectors else 1))
  info = _byref(status)
  failed = []
  for i in range(b):
    _gees_call(fn, a.dtype.kind == "c", dim, base + i * step,
               vbase + i * step if compute_schur_vectors else vbase, ldvs, jobvs, scratch, n,
               a.itemsize, work, lw, info)
    if status.value:
      failed.append(i)
  t = _row_major(f)
  vs = _row_major(buffer[:vs_size].reshape(b, n, n)) if compute_schur_vectors else None
  for i in failed:
    t[i] = np.nan
    if vs is not None:
      vs[i] = np.nan
  return t, vs


# ------------------------------------------------------------ orgqr, ormqr
@functools.cache
def _orgqr_args(dtype: np.dtype, m: int, n: int, k: int):
  """``(fn, lwork, m, n, k, lda, lwork)`` of ``?orgqr``/``?ungqr`` (the
  optimal workspace from a query)."""
  fn = _routine("?ungqr_" if dtype.kind == "c" else "?orgqr_", dtype)
  rows, cols, count = _byref(_int(m)), _byref(_int(n)), _byref(_int(k))
  lda = _byref(_int(max(1, m)))
  a = np.zeros((max(1, m), max(1, n)), dtype)
  tau = np.zeros(max(1, k), dtype)
  lwork = _query_work(lambda work, size: fn(
      rows, cols, count, _ptr(a.ctypes.data), lda, _ptr(tau.ctypes.data),
      _ptr(work.ctypes.data), _byref(_int(size)), _byref(_int())), dtype)
  return fn, lwork, rows, cols, count, lda, _byref(_int(lwork))


def orgqr(a: np.ndarray, taus: np.ndarray) -> np.ndarray:
  """The first ``n`` columns of ``Q = H_0 ... H_{k-1}`` for reflectors
  packed in a batch ``a [b, m, n]`` (``m >= n >= k``) with factors ``taus
  [b, k]``, both of one LAPACK type: ``?orgqr``/``?ungqr``."""
  b, m, n = a.shape
  k = taus.shape[-1]
  f = _column_major(a)
  if not f.size:
    return _row_major(f)
  fn, lwork, rows, cols, count, lda, lw = _orgqr_args(a.dtype, m, n, k)
  # The taus (contiguous, as LAPACK reads them) and the workspace in one buffer.
  scratch = np.empty(b * k + lwork, a.dtype)
  scratch[:b * k] = taus.reshape(-1)
  info = _byref(_int())
  step, tstep = m * n * a.itemsize, k * a.itemsize
  base, tbase = _address(f), _address(scratch)
  work = _ptr(tbase + b * tstep)
  for i in range(b):
    fn(rows, cols, count, _ptr(base + i * step), lda, _ptr(tbase + i * tstep), work, lw, info)
  return _row_major(f)


@functools.cache
def _ormqr_args(dtype: np.dtype, left: bool, transpose: bool, m: int, n: int, k: int, ma: int):
  """The routine, optimal workspace and constant arguments of ``?ormqr``/
  ``?unmqr`` for a ``c`` of ``m x n`` and reflectors ``ma x k``."""
  fn = _routine("?unmqr_" if dtype.kind == "c" else "?ormqr_", dtype)
  side = b"L" if left else b"R"
  trans = (b"C" if dtype.kind == "c" else b"T") if transpose else b"N"
  consts = (side, trans, _byref(_int(m)), _byref(_int(n)), _byref(_int(k)))
  lda, ldc = _byref(_int(max(1, ma))), _byref(_int(max(1, m)))
  a = np.zeros((max(1, k), max(1, ma)), dtype)
  c = np.zeros((max(1, n), max(1, m)), dtype)
  tau = np.zeros(max(1, k), dtype)
  lwork = _query_work(lambda work, size: fn(
      *consts, _ptr(a.ctypes.data), lda, _ptr(tau.ctypes.data), _ptr(c.ctypes.data), ldc,
      _ptr(work.ctypes.data), _byref(_int(size)), _byref(_int()), _LEN1, _LEN1), dtype)
  return fn, lwork, consts, lda, ldc, _byref(_int(lwork))


def ormqr(a: np.ndarray, taus: np.ndarray, c: np.ndarray, *, left: bool,
          transpose: bool) -> np.ndarray:
  """``Q c``, ``Q^H c`` (``transpose``), ``c Q`` or ``c Q^H`` (not
  ``left``) for ``Q = H_0 ... H_{k-1}`` of the reflectors packed in a batch
  ``a [b, ma, na]`` with factors ``taus [b, k]`` and ``c [b, m, n]``, all
  of one LAPACK type: ``?ormqr``/``?unmqr``."""
  b, ma, na = a.shape
  _, m, n = c.shape
  k = taus.shape[-1]
  out = _column_major(c)
  if not out.size or not k:
    return _row_major(out)
  # The reflectors' first k columns, column-major (LAPACK reads ma x k).
  f = _column_major(a[:, :, :k])
  fn, lwork, consts, lda, ldc, lw = _ormqr_args(a.dtype, left, transpose, m, n, k, ma)
  scratch = np.empty(b * k + lwork, a.dtype)
  scratch[:b * k] = taus.reshape(-1)
  info = _byref(_int())
  astep, cstep, tstep = ma * k * a.itemsize, m * n * a.itemsize, k * a.itemsize
  abase, cbase, tbase = _address(f), _address(out), _address(scratch)
  work = _ptr(tbase + b * tstep)
  for i in range(b):
    fn(*consts, _ptr(abase + i * astep), lda, _ptr(tbase + i * tstep), _ptr(cbase + i * cstep),
       ldc, work, lw, info, _LEN1, _LEN1)
  return _row_major(out)


# -------------------------------------------------------------------- sytrd
@functools.cache
def _sytrd_args(dtype: np.dtype, lower: bool, n: int):
  """The routine, optimal workspace and constant arguments of ``?sytrd``/
  ``?hetrd`` for ``n x n`` matrices."""
  fn = _routine("?hetrd_" if dtype.kind == "c" else "?sytrd_", dtype)
  uplo, dim = (b"L" if lower else b"U"), _byref(_int(n))
  a = np.zeros((n, n), dtype)
  vec = np.zeros(n, dtype)
  lwork = _query_work(lambda work, size: fn(
      uplo, dim, _ptr(a.ctypes.data), dim, _ptr(vec.ctypes.data), _ptr(vec.ctypes.data),
      _ptr(vec.ctypes.data), _ptr(work.ctypes.data), _byref(_int(size)), _byref(_int()), _LEN1),
      dtype)
  return fn, lwork, uplo, dim, _byref(_int(lwork))


def sytrd(a: np.ndarray, lower: bool):
  """``(arr, d, e, taus)`` of a batch ``[b, n, n]`` (a LAPACK type, ``n >=
  1``): ``?sytrd``/``?hetrd``'s reduction of the Hermitian matrices whose
  ``lower`` (or upper) triangle ``a`` holds to real tridiagonal form."""
  b, n, _ = a.shape
  real = np.finfo(a.dtype).dtype
  f = _column_major(a)
  d, e = np.empty((b, n), real), np.empty((b, n - 1), real)
  taus = np.empty((b, n - 1), a.dtype)
  if not b:
    return f, d, e, taus
  fn, lwork, uplo, dim, lw = _sytrd_args(a.dtype, lower, n)
  # e and taus get one spare element each (LAPACK's n - 1 may be 0).
  e_buf, t_buf = np.empty(b * (n - 1) + 1, real), np.empty(b * (n - 1) + 1 + lwork, a.dtype)
  info = _byref(_int())
  step, rstep, cstep = n * n * a.itemsize, real.itemsize, a.itemsize
  base, dbase, ebase, tbase = _address(f), _address(d), _address(e_buf), _address(t_buf)
  work = _ptr(tbase + (b * (n - 1) + 1) * cstep)
  for i in range(b):
    fn(uplo, dim, _ptr(base + i * step), dim, _ptr(dbase + i * n * rstep),
       _ptr(ebase + i * (n - 1) * rstep), _ptr(tbase + i * (n - 1) * cstep), work, lw, info,
       _LEN1)
  e[...] = e_buf[:b * (n - 1)].reshape(b, n - 1)
  taus[...] = t_buf[:b * (n - 1)].reshape(b, n - 1)
  return _row_major(f), d, e, taus


# --------------------------------------------------------------------- gtsv
def gtsv(dl: np.ndarray, d: np.ndarray, du: np.ndarray, b: np.ndarray) -> np.ndarray:
  """``x`` with ``A x = b`` for tridiagonal ``A`` (JAX's layout: ``dl``,
  ``d``, ``du`` ``[B, m]`` with ``dl[:, 0]`` and ``du[:, m-1]`` unused,
  ``b [B, m, k]``, one LAPACK type) by ``?gtsv``; a singular system (info
  > 0) gives NaNs, as JAX's CPU kernel."""
  batch, m, k = b.shape
  x = _column_major(b)
  if not x.size:
    return _row_major(x)
  # gtsv overwrites the diagonals: copies, the unused ends dropped.
  sub, diag, sup = dl[:, 1:].copy(), d.copy(), du[:, :-1].copy()
  fn = _routine("?gtsv_", b.dtype)
  size, count, status = _byref(_int(m)), _byref(_int(k)), _int()
  info = _byref(status)
  # An empty sub/superdiagonal (m = 1) is never read.
  lbase = _address(sub) if sub.size else 0
  ubase = _address(sup) if sup.size else 0
  dbase, xbase = _address(diag), _address(x)
  off, dstep, xstep = (m - 1) * b.itemsize, m * b.itemsize, m * k * b.itemsize
  singular = []
  for i in range(batch):
    fn(size, count, _ptr(lbase + i * off), _ptr(dbase + i * dstep), _ptr(ubase + i * off),
       _ptr(xbase + i * xstep), size, info)
    if status.value:
      singular.append(i)
  out = _row_major(x)
  for i in singular:
    out[i] = np.nan
  return out
