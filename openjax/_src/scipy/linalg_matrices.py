"""``jax.scipy.linalg``'s special matrices: ``block_diag``, ``toeplitz``,
``hankel``, ``circulant``, ``leslie``, ``companion``, ``fiedler``,
``fiedler_companion``, ``convolution_matrix`` (built from array arguments,
batched over leading dimensions like JAX's) and ``hilbert``, ``invhilbert``,
``pascal``, ``invpascal``, ``helmert``, ``hadamard``, ``dft`` (functions of a
static size ``n``, computed exactly on the host as constants)."""
from __future__ import annotations

import math
import operator
from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.numpy import util
from openjax._src.scipy import jnp

__all__ = ["block_diag", "toeplitz", "hankel", "circulant", "leslie", "companion", "fiedler",
           "fiedler_companion", "convolution_matrix", "hilbert", "invhilbert", "pascal",
           "invpascal", "helmert", "hadamard", "dft"]


def block_diag(*arrs):
  """The block-diagonal matrix of the (at most 2-d) arrays ``arrs``; with no
  argument, a ``[1, 0]`` array."""
  if len(arrs) == 0:
    arrs = (jnp.zeros((1, 0)),)
  arrs = util.promote_dtypes(*arrs)
  for i, a in enumerate(arrs):
    if np.ndim(a) > 2:
      raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                       f"dimensions, got {a} at argument {i}.")
  blocks = [jnp.atleast_2d(a) for a in arrs]
  total = sum(b.shape[1] for b in blocks)
  rows, col = [], 0
  for b in blocks:
    rows.append(jnp.pad(b, ((0, 0), (col, total - col - b.shape[1]))))
    col += b.shape[1]
  return jnp.concatenate(rows, axis=0)


@util.jit   # one cached program per signature: eagerly ~1 us a step
@partial(jnp.vectorize, signature="(m),(n)->(m,n)")
def _toeplitz(c, r):
  m, n = c.shape[0], r.shape[0]
  dtype = dtypes.result_type(c, r)
  if m == 0 or n == 0:
    return jnp.empty((m, n), dtype=dtype)
  # elems[k] holds the diagonal i - j = m - 1 - k.
  elems = jnp.concatenate((c[::-1], r[1:])).astype(dtype)
  return _sliding_rows(elems, m, n, reverse=True)


def _sliding_rows(elems, m: int, n: int, reverse: bool):
  """The m x n matrix of windows of ``elems`` (length m + n - 1): row i is
  ``elems[i:i + n]``, or ``elems[m - 1 - i:m - 1 - i + n]`` when ``reverse``.
  m copies of ``elems`` laid end to end and read in rows of length L + 1
  shift each row by one: copies and slices, where a gather would build and
  read an m x n index array."""
  length = m + n - 1
  flat = jnp.broadcast_to(elems, (m + 1, length)).reshape(-1)[:m * (length + 1)]
  windows = flat.reshape(m, length + 1)[:, :n]
  return windows[::-1] if reverse else windows


def toeplitz(c, r=None):
  """The Toeplitz matrix with first column ``c`` and first row ``r`` (default
  ``conj(c)``; ``r[0]`` is ignored). Leading dimensions batch."""
  if r is None:
    util.check_arraylike("toeplitz", c)
    r = jnp.conjugate(jnp.asarray(c))
  else:
    util.check_arraylike("toeplitz", c, r)
  return _toeplitz(jnp.atleast_1d(jnp.asarray(c)), jnp.atleast_1d(jnp.asarray(r)))


@util.jit   # one cached program per signature: eagerly ~1 us a step
@partial(jnp.vectorize, signature="(m),(n)->(m,n)")
def _hankel(c, r):
  m, n = c.shape[0], r.shape[0]
  dtype = dtypes.result_type(c, r)
  if m == 0 or n == 0:
    return jnp.empty((m, n), dtype=dtype)
  elems = jnp.concatenate((c, r[1:])).astype(dtype)
  return _sliding_rows(elems, m, n, reverse=False)


def hankel(c, r=None):
  """The Hankel matrix with first column ``c`` and last row ``r`` (default
  zeros; ``r[0]`` is ignored). Leading dimensions batch."""
  if r is None:
    util.check_arraylike("hankel", c)
    c = jnp.asarray(c)
    r = jnp.zeros_like(c)
  else:
    util.check_arraylike("hankel", c, r)
    c, r = jnp.asarray(c), jnp.asarray(r)
  if c.ndim == 0:
    raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
  if r.ndim == 0:
    raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
  if c.ndim < r.ndim:
    c = lax.expand_dims(c, tuple(range(r.ndim - c.ndim)))
  elif r.ndim < c.ndim:
    r = lax.expand_dims(r, tuple(range(c.ndim - r.ndim)))
  return _hankel(c, r)


@util.jit   # one cached program per signature: eagerly ~1 us a step
@partial(jnp.vectorize, signature="(n)->(n,n)")
def _circulant(c):
  # The Toeplitz matrix of first column c and first row c[0], c[n-1], ..., c[1].
  return _toeplitz(c, jnp.concatenate((c[:1], c[:0:-1])))


def circulant(c):
  """The circulant matrix with first column ``c``. Leading dimensions batch."""
  util.check_arraylike("circulant", c)
  return _circulant(jnp.atleast_1d(jnp.asarray(c)))


@util.jit   # one cached program per signature: eagerly ~1 us a step
@partial(jnp.vectorize, signature="(n),(m)->(n,n)")
def _leslie(f, s):
  f, s = util.promote_dtypes(f, s)
  return jnp.diag(s, k=-1).at[0].set(f)


def leslie(f, s):
  """The Leslie matrix of fecundities ``f`` (``[..., n]``) and survival
  rates ``s`` (``[..., n - 1]``)."""
  util.check_arraylike("leslie", f, s)
  f, s = jnp.atleast_1d(f), jnp.atleast_1d(s)
  if f.shape[-1] < 2:
    raise ValueError("The length of f along the last axis must be at least 2; got shape "
                     f"{f.shape}.")
  if s.shape[-1] != f.shape[-1] - 1:
    raise ValueError("Incorrect lengths for f and s. The length of s along the last axis must "
                     f"be one less than the length of f; got f shape {f.shape} and s shape "
                     f"{s.shape}.")
  return _leslie(f, s)


@util.jit   # one cached program per signature: eagerly ~1 us a step
@partial(jnp.vectorize, signature="(n)->(m,m)")
def _companion(a):
  first_row = -a[1:] / a[0]
  m = a.shape[0] - 1
  return jnp.eye(m, m, k=-1, dtype=first_row.dtype).at[0].set(first_row)


def companion(a):
  """The companion matrix of the polynomial with coefficients ``a`` (highest
  degree first); its eigenvalues are the roots."""
  a, = util.promote_dtypes_inexact(jnp.atleast_1d(jnp.asarray(a)))
  if a.shape[-1] < 2:
    raise ValueError("The length of `a` along the last axis must be at least 2; got shape "
                     f"{a.shape}.")
  return _companion(a)


def fiedler(a):
  """The symmetric Fiedler matrix ``|a[i] - a[j]|``."""
  util.check_arraylike("fiedler", a)
  a = jnp.atleast_1d(jnp.asarray(a))
  return jnp.abs(a[..., None] - a[..., None, :])


def _fiedler_layout(n: int):
  """Rows, columns and sources of the nonzeros of Fiedler's pentadiagonal
  companion matrix of degree n >= 2: source k >= 0 stands for -a[k], -1 for
  a one. First column -a[1], 1; even rows i carry -a[i+2] at (i, i+1), 1 at
  (i, i+2) and -a[i+1] at (i, i-1); odd rows i >= 3 carry 1 at (i, i-2)."""
  entries = [(0, 0, 1), (1, 0, -1)]
  for i in range(0, n, 2):
    if i + 1 < n:
      entries.append((i, i + 1, i + 2))
    if i + 2 < n:
      entries.append((i, i + 2, -1))
    if i >= 2:
      entries.append((i, i - 1, i + 1))
  entries += [(i, i - 2, -1) for i in range(3, n, 2)]
  return tuple(np.array(column, np.int32) for column in zip(*entries))


@util.jit   # one cached program per signature: eagerly ~1 us a step
@partial(jnp.vectorize, signature="(n)->(m,m)")
def _fiedler_companion(a):
  n = a.shape[0] - 1
  if n == 0:
    return jnp.zeros((0, 0), a.dtype)
  a = a / a[0]
  if n == 1:
    return -a[1:].reshape(1, 1)
  # Its 2n - 1 nonzeros scattered into zeros (a select over n x n masks
  # touched every entry six times).
  rows, cols, sources = _fiedler_layout(n)
  values = jnp.concatenate((-a, jnp.ones((1,), a.dtype)))[sources]
  return jnp.zeros((n, n), a.dtype).at[rows, cols].set(values, unique_indices=True)


def fiedler_companion(a):
  """Fiedler's pentadiagonal companion matrix of the polynomial ``a``
  (highest degree first): the eigenvalues are the roots."""
  a, = util.promote_dtypes_inexact(jnp.atleast_1d(jnp.asarray(a)))
  if a.shape[-1] == 0:
    raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero length, "
                     f"but got an array of shape {a.shape}.")
  return _fiedler_companion(a)


def convolution_matrix(a, n: int, mode: str = "full"):
  """The Toeplitz matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for
  ``v`` of length ``n``. Leading dimensions of ``a`` batch."""
  n = operator.index(n)
  if n <= 0:
    raise ValueError(f"n must be a positive integer; got {n}.")
  util.check_arraylike("convolution_matrix", a)
  a = jnp.asarray(a)
  if a.ndim == 0:
    raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
  m = a.shape[-1]
  if m < 1:
    raise ValueError(f"len(a) must be at least 1; got shape {a.shape}.")
  if mode not in ("full", "valid", "same"):
    raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
  widths = [(0, 0)] * (a.ndim - 1) + [(0, n - 1)]
  az = jnp.pad(a, widths)
  raz = jnp.pad(jnp.flip(a, axis=-1), widths)
  length = m + n - 1
  if mode == "same":
    trim = min(n, m) - 1
    tb, te = trim // 2, trim - trim // 2
  elif mode == "valid":
    tb = te = min(n, m) - 1
  else:
    tb = te = 0
  return toeplitz(az[..., tb:length - te], raz[..., length - n - tb:length - tb])


# -------------------------------------------- matrices of a static size n
def _float_const(values: np.ndarray):
  return jnp.asarray(values.astype(dtypes.default_float_dtype()))


def _binomials(n: int) -> np.ndarray:
  """Exact ``binom(i, j)`` for ``0 <= i, j < n`` (Python integers)."""
  return np.array([[math.comb(i, j) for j in range(n)] for i in range(n)], dtype=object)


def hilbert(n: int):
  """The ``n x n`` Hilbert matrix ``1 / (i + j + 1)``."""
  n = operator.index(n)
  a = np.arange(n, dtype=np.float64)[:, None]
  return _float_const(1.0 / (a + a.T + 1.0))


def invhilbert(n: int):
  """The exact inverse of ``hilbert(n)`` (integer entries, as floats)."""
  n = operator.index(n)
  h = np.empty((n, n), dtype=object)
  for i in range(n):
    for j in range(n):
      s = i + j
      h[i, j] = ((-1) ** s * (s + 1) * math.comb(n + i, n - j - 1) * math.comb(n + j, n - i - 1)
                 * math.comb(s, i) ** 2)
  return _float_const(h.astype(np.float64))


_KINDS = ("symmetric", "lower", "upper")


def pascal(n: int, kind: str | None = None):
  """The Pascal matrix: ``binom(i + j, i)`` (``kind='symmetric'``), its lower
  factor ``binom(i, j)`` or the upper factor (floats)."""
  n = operator.index(n)
  kind = "symmetric" if kind is None else kind
  if kind not in _KINDS:
    raise ValueError(f"Expected kind to be on of: {list(_KINDS)}; got {kind}")
  low = _binomials(n)
  out = {"lower": low, "upper": low.T}.get(kind)
  if out is None:
    out = low.dot(low.T)
  return _float_const(out.astype(np.float64))


def invpascal(n: int, kind: str | None = None):
  """The exact inverse of ``pascal(n, kind)`` (floats)."""
  n = operator.index(n)
  kind = "symmetric" if kind is None else kind
  if kind not in _KINDS:
    raise ValueError(f"Expected kind to be one of: {list(_KINDS)}; got {kind}")
  idx = np.arange(n)
  signs = np.where((idx[:, None] - idx[None, :]) % 2 == 0, 1, -1).astype(object)
  low_inv = signs * _binomials(n)
  out = {"lower": low_inv, "upper": low_inv.T}.get(kind)
  if out is None:
    out = low_inv.T.dot(low_inv)
  return _float_const(out.astype(np.float64))


def helmert(n: int, full: bool = False):
  """The Helmert matrix: ``n - 1`` orthonormal contrasts (``[n - 1, n]``), or
  ``[n, n]`` with the constant row ``1/sqrt(n)`` first when ``full``."""
  n = operator.index(n)
  if n < 1:
    raise ValueError(f"n must be a positive integer; got {n}.")
  i = np.arange(n - 1)[:, None]
  j = np.arange(n)[None, :]
  k = (i + 1).astype(np.float64)
  denom = np.sqrt(k * (k + 1))
  h = np.where(j <= i, 1.0 / denom, np.where(j == i + 1, -k / denom, 0.0))
  if full:
    h = np.concatenate([np.full((1, n), 1.0 / np.sqrt(n)), h], axis=0)
  return _float_const(h)


def hadamard(n: int, dtype=int):
  """The ``n x n`` Sylvester Hadamard matrix (``n`` a power of 2)."""
  n = operator.index(n)
  if n < 1 or not math.log2(n).is_integer():
    raise ValueError(f"n must be a positive power of 2; got {n}.")
  h = np.ones((1, 1), dtype=np.int64)
  for _ in range(int(math.log2(n))):
    h = np.block([[h, h], [h, -h]])
  return jnp.asarray(h, dtype=dtype)


def dft(n: int, scale: str | None = None, *, dtype=None):
  """The ``n x n`` discrete Fourier transform matrix ``exp(-2 pi i jk / n)``,
  divided by ``sqrt(n)`` (``scale='sqrtn'``) or ``n`` (``'n'``)."""
  n = operator.index(n)
  if scale is not None and scale not in ("sqrtn", "n"):
    raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
  if dtype is None:
    dtype = dtypes.default_complex_dtype()
  else:
    dtype = dtypes.explicit_dtype(dtype, "dft")
    if not dtypes.issubdtype(dtype, np.complexfloating):
      raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
  jk = np.outer(np.arange(n), np.arange(n)) % max(n, 1)   # exact angles: jk mod n
  omegas = np.exp(-2j * np.pi * jk / max(n, 1))
  if scale == "sqrtn":
    omegas = omegas / np.sqrt(n)
  elif scale == "n":
    omegas = omegas / n
  return jnp.asarray(omegas.astype(dtype))
