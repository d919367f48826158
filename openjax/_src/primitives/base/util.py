"""Checks and helpers every family's rules use: dtype checks with JAX's
messages, lax's broadcasting shape rule, the shape rule of reductions over
axes, NumPy impl helpers (floating-point warnings off, ml_dtypes floats
computed in float32) and ``pp_hide_none`` for the jaxpr printer."""
from __future__ import annotations

import operator
from typing import Callable, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.core import ShapedArray, pp_eqn
from openjax._src.core.trace import FP_ERRSTATE, FP_IGNORE

def dtype_name(dt) -> str:
  return np.dtype(dt).name


def check_dtypes(name: str, avals: Sequence[ShapedArray], accepted: Sequence[tuple]) -> None:
  for i, (aval, types) in enumerate(zip(avals, accepted)):
    if not any(dtypes.issubdtype(aval.dtype, t) for t in types):
      if aval.dtype == dtypes.float0:
        raise TypeError(
            f"Called {name} with a float0 at position {i}. float0s do not support "
            "any operations by design: they are the tangents of integer values. "
            "If you didn't expect a float0, you may have taken a gradient with "
            "respect to an integer argument.")
      names = ", ".join(t.__name__ for t in types)
      raise TypeError(f"{name} does not accept dtype {dtype_name(aval.dtype)} at "
                      f"position {i}. Accepted dtypes at position {i} are subtypes "
                      f"of {names}.")


# lax names whose same-dtype error suggests a jnp function (as JAX's does).
JNP_EQUIVALENT = {
    "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "max": "maximum",
    "min": "minimum", "eq": "equal", "ne": "not_equal", "atan2": "arctan2",
    "nextafter": "nextafter", "shift_left": "left_shift", "shift_right_logical": "right_shift",
    "shift_right_arithmetic": "right_shift", "select": "where", "concatenate": "concatenate",
}


def check_same_dtypes(name: str, avals: Sequence[ShapedArray]) -> None:
  """JAX's ``lax.<name> requires arguments to have the same dtypes`` check."""
  if any(a.dtype != avals[0].dtype for a in avals[1:]):
    msg = (f"lax.{name} requires arguments to have the same dtypes, got "
           f"{', '.join(dtype_name(a.dtype) for a in avals)}.")
    if name in JNP_EQUIVALENT:
      msg += (f" (Tip: jnp.{JNP_EQUIVALENT[name]} is a similar function that does "
              "automatic type promotion on inputs).")
    raise TypeError(msg)


def broadcasting_shape(name: str, avals: Sequence[ShapedArray]) -> tuple[int, ...]:
  """lax's rule: rank-0 operands broadcast; others need equal rank, and each
  dimension equal or 1."""
  shapes = [a.shape for a in avals if a.shape]
  if not shapes:
    return ()
  if len({len(s) for s in shapes}) != 1:
    raise TypeError(f"{name}: arrays must have the same number of dimensions, "
                    f"got {{{', '.join(str(len(s)) for s in shapes)}}}")
  out = []
  for ds in zip(*shapes):
    non1 = [d for d in ds if d != 1]
    if not non1:
      out.append(1)
    elif all(d == non1[0] for d in non1):
      out.append(non1[0])
    else:
      raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                      f"{', '.join(str(tuple(s)) for s in shapes)}.")
  return tuple(out)


def pp_hide_none(*names):
  """A pretty-printing rule that shows the parameters ``names`` only when they
  are set (as JAX prints them)."""
  def rule(eqn, ctx):
    params = {k: eqn.params[k] for k in sorted(eqn.params)
              if not (k in names and eqn.params[k] is None)}
    return pp_eqn(eqn, ctx, params=params)
  return rule


_fp_set, _fp_reset = FP_ERRSTATE.set, FP_ERRSTATE.reset


def quiet(fn: Callable) -> Callable:
  """Silence NumPy's floating-point warnings (XLA produces inf/nan silently)."""
  def impl(*args, **kw):
    token = _fp_set(FP_IGNORE)
    try:
      return fn(*args, **kw)
    finally:
      _fp_reset(token)
  return impl


# ------------------------------------------------- reductions over axes
def is_int_tuple(obj) -> bool:
  """A tuple of Python ints (most wrapper arguments, taken as they are)."""
  if type(obj) is not tuple:
    return False
  for d in obj:
    if type(d) is not int:
      return False
  return True


def shape_of(x) -> tuple[int, ...]:
  """An operand's shape: its aval's for Arrays and tracers (np.shape costs
  ~0.4 us of function frames)."""
  aval = getattr(x, "aval", None)
  return aval.shape if aval is not None else tuple(np.shape(x))


def axes_tuple(fun: str, axes) -> tuple[int, ...]:
  try:
    return tuple(operator.index(a) for a in axes)
  except TypeError:
    raise TypeError(f"lax.{fun}: axes must be a sequence of integers, got {axes!r}") from None


def reduced_shape(operand: ShapedArray, axes) -> tuple[int, ...]:
  # JAX's shape rule for every reduction over ``axes`` (messages included).
  if len(axes) != len(set(axes)):
    raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
  if not all(0 <= a < operand.ndim for a in axes):
    raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for {operand}.")
  return tuple(d for i, d in enumerate(operand.shape) if i not in axes)


def check_number(name: str, operand: ShapedArray) -> None:
  if not dtypes.issubdtype(operand.dtype, np.number):
    raise TypeError(f"{name} does not accept dtype {operand.dtype.name}. Accepted dtypes "
                    "are subtypes of number.")


def in_float32(x: np.ndarray) -> tuple[np.ndarray, np.dtype]:
  """ml_dtypes floats computed in float32 (exact for comparisons, and XLA
  accumulates them in float32 too)."""
  if x.dtype in dtypes.custom_float_dtypes:
    return x.astype(np.float32), x.dtype
  return x, x.dtype


def check_shapelike(fun: str, arg: str, obj, *, non_zero: bool = False) -> None:
  """lax's check that ``obj`` is a 1-D tuple of non-negative (or, with
  ``non_zero``, positive) integers."""
  if not isinstance(obj, (tuple, list, np.ndarray)):
    raise TypeError(f"{fun} {arg} must be of type tuple/list/ndarray, got {type(obj)}.")
  if not len(obj):
    return
  try:
    vals = [operator.index(d) for d in obj]
  except TypeError:
    raise TypeError(f"{fun} {arg} must have every element be an integer type, got "
                    f"{tuple(map(type, obj))}.") from None
  if not all(d >= 0 for d in vals):
    raise TypeError(f"{fun} {arg} must have every element be nonnegative, got {tuple(obj)}.")
  if non_zero and not all(d > 0 for d in vals):
    raise TypeError(f"{fun} {arg} must have every element be strictly positive, "
                    f"got {tuple(obj)}.")


def int_tuple(fun: str, arg: str, obj) -> tuple[int, ...]:
  if is_int_tuple(obj):
    return obj
  try:
    return tuple(operator.index(d) for d in obj)
  except TypeError:
    raise TypeError(f"{fun}: {arg} must be a sequence of integers, got {obj!r}") from None
