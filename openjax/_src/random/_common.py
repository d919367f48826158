"""Argument checks and small helpers shared by the samplers (JAX's messages)."""
from __future__ import annotations

from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.jit import jit as _api_jit
from openjax._src.core import get_aval
from openjax._src.random.keys import canonicalize_shape

# Samplers are jitted as in JAX, but never tiered: the interpreter's exp/log
# (NumPy's) differ from the compiled code's (IREE's) in the last bits, so a
# sampler always runs compiled under the iree executor, also inside the
# interpreted first call of a user's jitted function (jit_p's ``tiered``):
# the same key gives the same bits on every call.
jit = partial(_api_jit, _tiered=False)

UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
               64: np.dtype(np.uint64)}


def shape_of(x) -> tuple[int, ...]:
  return tuple(np.shape(x)) if not hasattr(x, "aval") else get_aval(x).shape


def check_shape(name: str, shape, *param_shapes) -> None:
  if param_shapes:
    shape_ = lax.broadcast_shapes(tuple(shape), *param_shapes)
    if tuple(shape) != tuple(shape_):
      msg = ("{} parameter shapes must be broadcast-compatible with shape "
             "argument, and the result of broadcasting the shapes must equal "
             "the shape argument, but got result {} for shape argument {}.")
      raise ValueError(msg.format(name, shape_, shape))


def check_broadcast_shapes(name: str, shape, *args):
  arg_shapes = [shape_of(a) for a in args]
  if shape is None:
    return lax.broadcast_shapes(*arg_shapes) if arg_shapes else ()
  shape = canonicalize_shape(shape)
  check_shape(name, shape, *arg_shapes)
  return shape


def check_all_safe_to_cast(name: str, dtype, *args) -> None:
  for arg in args:
    in_dtype = dtypes.dtype(arg)
    if in_dtype != dtype and dtypes.result_type(arg, dtype) != dtype:
      raise dtypes.TypePromotionError(
          f"In arguments to {name}, cannot safely cast argument of type {in_dtype} "
          f"to {dtype}")


def user_dtype(dtype, default=float):
  """``dtypes.check_and_canonicalize_user_dtype(default if None else dtype)``."""
  return np.dtype(dtypes.explicit_dtype(default if dtype is None else dtype))


def float_dtype(name: str, dtype, *, inexact: bool = False):
  """The canonical float dtype a sampler was asked for; JAX's ValueError
  otherwise (``inexact`` also allows complex, as ``normal`` does)."""
  dtype = user_dtype(dtype)
  kind = np.inexact if inexact else np.floating
  if not dtypes.issubdtype(dtype, kind):
    what = "a float or complex dtype" if inexact else "a float dtype"
    raise ValueError(f"dtype argument to `{name}` must be {what}, got {dtype}")
  return dtype


def const(example, val):
  """``val`` as a NumPy constant of ``example``'s dtype (``lax._const``)."""
  return np.array(val, get_aval(example).dtype)


def isnan(x):
  return lax.ne(x, x)
