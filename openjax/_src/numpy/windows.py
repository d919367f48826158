"""Window functions of ``jax.numpy`` (``bartlett``, ``blackman``, ``hamming``,
``hanning``, ``kaiser``): tapers of static length ``M`` in the default float
dtype, as JAX returns them (strongly typed)."""
from __future__ import annotations

import operator

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.numpy import util
from openjax._src.numpy.creation import full
from openjax._src.numpy.ufuncs import abs as _abs, cos, sqrt
from openjax._src.numpy.ufuncs_float import i0

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _positions(name: str, M):
  """``(n, M)``: the sample positions ``0..M-1`` in the default float dtype,
  or ``(ones, M)`` for ``M <= 1``."""
  try:
    M = operator.index(M)
  except TypeError:
    raise TypeError(f"jax.numpy.{name}: M must be a static Python int; got {M!r}.") from None
  dtype = dtypes.canonicalize_dtype(np.float64)
  if M <= 1:
    return full((max(M, 0),), 1, dtype), M
  return lax.iota(dtype, M), M


def bartlett(M):
  """The triangular Bartlett window of ``M`` points."""
  n, M = _positions("bartlett", M)
  return n if M <= 1 else 1 - _abs(2 * n + 1 - M) / (M - 1)


def blackman(M):
  """The Blackman window of ``M`` points (three cosine terms)."""
  n, M = _positions("blackman", M)
  if M <= 1:
    return n
  return (0.42 - 0.5 * cos(2 * np.pi * n / (M - 1))
          + 0.08 * cos(4 * np.pi * n / (M - 1)))


def hamming(M):
  """The Hamming window of ``M`` points."""
  n, M = _positions("hamming", M)
  return n if M <= 1 else 0.54 - 0.46 * cos(2 * np.pi * n / (M - 1))


def hanning(M):
  """The Hann window of ``M`` points."""
  n, M = _positions("hanning", M)
  return n if M <= 1 else 0.5 * (1 - cos(2 * np.pi * n / (M - 1)))


def kaiser(M, beta):
  """The Kaiser window of ``M`` points with shape parameter ``beta``."""
  n, M = _positions("kaiser", M)
  if M <= 1:
    return n
  beta = util.ensure_arraylike("kaiser", beta)
  alpha = 0.5 * (M - 1)
  return i0(beta * sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)
