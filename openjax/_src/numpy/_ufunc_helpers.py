"""Small private building blocks of the ufunc modules: constants typed like an
operand, ``full_like``, a three-argument ``where``, ``asarray`` and NumPy-style
broadcasting, written only with lax wrappers; ``_where``, ``jnp.where``'s
three-term jit (here so that ``indexing``, below ``misc``, stages it too)."""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.numpy import util


def dtype_of(x) -> np.dtype:
  return dtypes.dtype(x)


def is_kind(x, *kinds) -> bool:
  """Whether ``x``'s dtype is of one of the NumPy kinds ('b', 'i', 'u', 'f', 'c')."""
  return dtypes.kind(dtypes.dtype(x)) in kinds


def asarray(x):
  """``x`` as an operand that is an openjax value (Array or tracer), keeping
  the weak type of Python scalars."""
  if hasattr(x, "aval"):
    if x.aval.weak_type and x.aval.dtype == np.bool_:   # Python bools are not weak in JAX
      return lax._convert_element_type(x, np.bool_, weak_type=False)
    return x
  weak = dtypes.is_python_scalar(x) and type(x) is not bool
  return lax._convert_element_type(util.asarray_operand(x), dtypes.dtype(x), weak_type=weak)


def const(x, val):
  """``val`` as a constant of ``x``'s dtype: weakly typed when ``x`` is a weak
  scalar (so the result keeps ``x``'s weak type), strong otherwise."""
  dt = dtypes.dtype(x)
  if dtypes.is_weakly_typed(x) and np.ndim(x) == 0:
    return lax._convert_element_type(_python_scalar(val, dt), dt, weak_type=True)
  return np.array(val, dt)


def weak_scalar(x, val):
  """``val`` as a weakly typed scalar of ``x``'s dtype: what a Python scalar in
  ``x - 1`` becomes."""
  dt = dtypes.dtype(x)
  return lax._convert_element_type(_python_scalar(val, dt), dt, weak_type=True)


def constant_like(x, val):
  """``val`` as a strongly typed constant of ``x``'s dtype."""
  return np.array(val, dtypes.dtype(x))


def _python_scalar(val, dt):
  k = dtypes.kind(dt)
  return complex(val) if k == "c" else float(val) if k == "f" else bool(val) if k == "b" \
      else int(val)


def full_like(x, fill_value, dtype=None):
  """An array of ``x``'s shape filled with ``fill_value`` (weak when ``x`` is
  and no dtype is given)."""
  weak = dtype is None and dtypes.is_weakly_typed(x)
  dt = dtypes.dtype(x) if dtype is None else np.dtype(dtype)
  fill = (lax._convert_element_type(_python_scalar(fill_value, dt), dt, weak_type=True)
          if weak else np.array(fill_value, dt))
  return lax.broadcast_in_dim(fill, np.shape(x), ())


def broadcast_arrays(*args) -> list:
  """Broadcast operands to their common shape with NumPy's rules."""
  shapes = [np.shape(a) for a in args]
  if all(s == shapes[0] for s in shapes):
    return list(args)
  shape = np.broadcast_shapes(*shapes)
  return [a if s == shape else util.broadcast_to_shape(a, shape) for a, s in zip(args, shapes)]


def where(condition, x, y):
  """``x`` where ``condition`` else ``y``, promoting and broadcasting like
  ``jnp.where``."""
  condition, x, y = util.ensure_arraylike("where", condition, x, y)
  if dtypes.dtype(condition) != np.bool_:
    condition = lax.ne(condition, np.zeros((), dtypes.dtype(condition)))
  x, y = util.promote_dtypes(x, y)
  if np.ndim(condition) == 0:   # select takes a scalar predicate as it is
    x, y = broadcast_arrays(x, y)
  else:
    condition, x, y = broadcast_arrays(condition, x, y)
  return lax.select(condition, x, y)


def to_bool(x):
  return x if dtypes.dtype(x) == np.bool_ else lax.ne(x, const(x, 0))


def broadcast_shapes(*shapes) -> tuple[int, ...]:
  try:
    return tuple(np.broadcast_shapes(*shapes))
  except ValueError:
    raise ValueError(
        f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}") from None


def _broadcast_all(*args) -> list:
  shp = broadcast_shapes(*(np.shape(a) for a in args))
  return [util.broadcast_to_shape(a, shp) for a in args]


def _shape_of(x) -> tuple[int, ...]:
  aval = getattr(x, "aval", None)   # Arrays and tracers: their static shape
  return aval.shape if aval is not None else np.shape(x)


# JAX's three-term where is a jit named ``_where`` (make_jaxpr prints it so);
# eagerly one cached program (~27 -> ~6 us at 3 elements).
@util.jit
def _where(condition, x, y):
  condition, x, y = util.ensure_arraylike("where", condition, x, y)
  if dtypes.dtype(condition) != np.bool_:
    condition = lax.ne(condition, np.zeros((), dtypes.dtype(condition)))
  x, y = util.promote_dtypes(x, y)
  shape = _shape_of(x)
  if _shape_of(y) != shape or _shape_of(condition) not in ((), shape):
    # Broadcasting (the common case of equal shapes needs none).
    if np.ndim(condition) == 0:
      x, y = _broadcast_all(x, y)
    else:
      condition, x, y = _broadcast_all(condition, x, y)
    shape = _shape_of(x)
  if 0 in shape:
    return x
  return lax.select(condition, x, y)
