"""``jax.numpy.convolve`` and ``jax.numpy.correlate``: NumPy's 1-D discrete
convolution and cross-correlation, each one ``lax.conv_general_dilated``."""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import get_aval
from openjax._src.numpy import util
from openjax._src.numpy.shape_reshaping import _flip_staged

__all__ = ["convolve", "correlate"]

_MODES = ("full", "same", "valid")


def _conj(x):
  return lax.conj(x) if dtypes.kind(get_aval(x).dtype) == "c" else x


def _conv_1d(x, y, mode: str, op: str, precision, preferred_element_type):
  x, y = util.ensure_arraylike(op, x, y)
  if np.ndim(x) != 1 or np.ndim(y) != 1:
    raise ValueError(f"{op}() only support 1-dimensional inputs.")
  return _conv(x, y, mode=mode, op=op, precision=precision,
               preferred_element_type=preferred_element_type)


# JAX's jit ``_conv`` (make_jaxpr prints it inside convolve's and correlate's);
# eagerly inlined in their one program.
@util.jit(static_argnames=('mode', 'op', 'precision', 'preferred_element_type'))
def _conv(x, y, mode: str, op: str, precision, preferred_element_type):
  if preferred_element_type is None:
    # NumPy convolves integers in floating point; so does jnp by default.
    x, y = util.promote_dtypes_inexact(x, y)
  else:
    x, y = util.promote_dtypes(x, y)
  n, m = get_aval(x).shape[0], get_aval(y).shape[0]
  if n == 0 or m == 0:
    raise ValueError(f"{op}: inputs cannot be empty, got shapes {get_aval(x).shape} and "
                     f"{get_aval(y).shape}.")
  reverse_out = False
  if op == "correlate":
    y = _conj(y)
    if n < m:
      # correlate(a, v)[k] = correlate(v, a)[-k] (conjugated); the longer
      # operand slides, the result is read backwards.
      x, y, n, m, reverse_out = y, x, m, n, True
  else:
    if n < m:
      x, y, n, m = y, x, m, n
    y = _flip_staged(y, None)
  if mode == "valid":
    padding = [(0, 0)]
  elif mode == "same":
    padding = [(m // 2, m - m // 2 - 1)]
  elif mode == "full":
    padding = [(m - 1, m - 1)]
  else:
    raise ValueError(f"mode must be one of {list(_MODES)}")
  out = lax.conv_general_dilated(
      lax.broadcast_in_dim(x, (1, 1, n), (2,)), lax.broadcast_in_dim(y, (1, 1, m), (2,)),
      (1,), padding, precision=precision, preferred_element_type=preferred_element_type)
  if reverse_out:   # (reversed before the squeeze, as JAX)
    out = lax.rev(out, (2,))
  return lax.squeeze(out, (0, 1))


@util.jit(static_argnames=('mode', 'precision', 'preferred_element_type'))
def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
  """Discrete linear convolution of two 1-D arrays (``numpy.convolve``):
  ``c[k] = sum_j a[k - j] v[j]``.

  ``mode``: ``'full'`` (default, length ``N + M - 1``), ``'same'`` (length
  ``max(N, M)``, centred) or ``'valid'`` (only full overlaps). Integer inputs
  are computed in floating point unless ``preferred_element_type`` is given.
  """
  return _conv_1d(a, v, mode, "convolve", precision, preferred_element_type)


@util.jit(static_argnames=('mode', 'precision', 'preferred_element_type'))
def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None):
  """Cross-correlation of two 1-D arrays (``numpy.correlate``):
  ``c[k] = sum_n a[n + k] conj(v[n])``.

  ``mode``: ``'valid'`` (default), ``'same'`` or ``'full'``, as in
  ``convolve``.
  """
  return _conv_1d(a, v, mode, "correlate", precision, preferred_element_type)
