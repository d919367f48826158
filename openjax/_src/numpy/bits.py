"""Bit packing: ``packbits`` (eight truth values per ``uint8``) and
``unpackbits`` (its inverse), in NumPy's big- or little-endian bit order."""
from __future__ import annotations

import operator

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.numpy import util
from openjax._src.numpy.creation import asarray
from openjax._src.numpy.reductions import sum as _sum
from openjax._src.numpy.shape_padding import pad
from openjax._src.numpy.shape_reshaping import moveaxis, ravel

__all__ = ["packbits", "unpackbits"]


def _bit_shifts(bitorder: str):
  if bitorder not in ("big", "little"):
    raise ValueError("'order' must be either 'little' or 'big'")
  shifts = np.arange(8, dtype=np.uint8)
  return asarray(shifts[::-1].copy() if bitorder == "big" else shifts)


@util.jit(static_argnames=('axis', 'bitorder'))
def packbits(a, axis=None, bitorder="big"):
  """Pack the truth values of ``a`` (ints or bools) into ``uint8`` along
  ``axis`` (the flattened array by default), zero-padding to whole bytes."""
  a = util.ensure_arraylike("packbits", a)
  if not (dtypes.issubdtype(a.dtype, np.integer) or dtypes.issubdtype(a.dtype, np.bool_)):
    raise TypeError("Expected an input array of integer or boolean data type")
  shifts = _bit_shifts(bitorder)
  bits = lax.convert_element_type(a > 0, np.uint8)
  if axis is None:
    bits, axis = ravel(bits), 0
  axis = util.canonicalize_axis(axis, bits.ndim)
  bits = moveaxis(bits, axis, -1)
  n = bits.shape[-1]
  extra = -n % 8
  if extra:
    bits = pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, extra)])
  bits = bits.reshape(bits.shape[:-1] + ((n + extra) // 8, 8))
  packed = _sum(lax.shift_left(bits, lax.broadcast_in_dim(shifts, bits.shape,
                                                              (bits.ndim - 1,))),
                    axis=-1, dtype=np.uint8)
  return moveaxis(packed, -1, axis)


@util.jit(static_argnames=('axis', 'count', 'bitorder'))
def unpackbits(a, axis=None, count=None, bitorder="big"):
  """Unpack the bits of the ``uint8`` array ``a`` along ``axis`` (the
  flattened array by default); ``count`` keeps that many bits (negative:
  drops them from the end)."""
  a = util.ensure_arraylike("unpackbits", a)
  if a.dtype != np.uint8:
    raise TypeError("Expected an input array of unsigned byte data type")
  shifts = _bit_shifts(bitorder)
  if axis is None:
    a, axis = ravel(a), 0
  axis = util.canonicalize_axis(axis, a.ndim)
  a = moveaxis(a, axis, -1)
  expanded = lax.broadcast_in_dim(a, a.shape + (8,), tuple(range(a.ndim)))
  shift_b = lax.broadcast_in_dim(shifts, expanded.shape, (expanded.ndim - 1,))
  bits = lax.bitwise_and(lax.shift_right_logical(expanded, shift_b), asarray(np.uint8(1)))
  bits = bits.reshape(a.shape[:-1] + (a.shape[-1] * 8,))
  if count is not None:
    count = operator.index(count)
    total = bits.shape[-1]
    keep = count if count >= 0 else max(total + count, 0)
    if keep <= total:
      bits = bits[..., :keep]
    else:
      bits = pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, keep - total)])
  return moveaxis(bits, -1, axis)
