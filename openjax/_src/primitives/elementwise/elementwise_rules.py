"""Rule builders shared by the elementwise and special-function primitives:
JAX's dtype classes and its dtype-error messages, the standard unary and
n-ary abstract evaluations, and NumPy helpers (float32 detour for ml_dtypes
floats, silenced floating-point warnings)."""
from __future__ import annotations

import builtins

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, pp_eqn
from openjax._src.primitives.base.util import broadcasting_shape, quiet

# ------------------------------------------------------------ dtype classes
# (types, the names JAX lists in its "Accepted dtypes are subtypes of" messages)
FLOAT = ((np.floating,), "floating")
INEXACT = ((np.floating, np.complexfloating), "floating, complexfloating")
COMPLEX = ((np.complexfloating,), "complexfloating")
INT = ((np.integer,), "integer")
NUM = ((np.integer, np.floating, np.complexfloating), "integer, floating, complexfloating")
ANY = ((np.integer, np.floating, np.complexfloating, np.bool_),
       "integer, floating, complexfloating, bool")
ORDERED = ((np.integer, np.floating, np.bool_), "integer, floating, bool")
INT_OR_BOOL = ((np.integer, np.bool_), "integer, bool")
INT_OR_FLOAT = ((np.integer, np.floating), "integer, floating")
ABS = ((np.signedinteger, np.floating, np.complexfloating),
       "floating, complexfloating, signedinteger")
CONJ = ((np.float32, np.float64, np.complexfloating), "float32, complexfloating, float64")
COMPLEX_PARTS = ((np.float32, np.float64), "float32, float64")

# lax names whose same-dtype error suggests a jnp function (as JAX's does).
JNP_EQUIVALENT = {
    "add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "max": "maximum",
    "min": "minimum", "eq": "equal", "ne": "not_equal", "atan2": "arctan2",
    "nextafter": "nextafter", "shift_left": "left_shift", "shift_right_logical": "right_shift",
    "shift_right_arithmetic": "right_shift", "select": "where",
}


def accepts(dt, types) -> bool:
  return builtins.any(dtypes.issubdtype(dt, t) for t in types)


def float0_error(name: str, i: int) -> TypeError:
  return TypeError(
      f"Called {name} with a float0 at position {i}. float0s do not support any "
      "operations by design: they are the tangents of integer values. If you "
      "didn't expect a float0, you may have taken a gradient with respect to an "
      "integer argument.")


def check_unary(name: str, x: ShapedArray, accepted) -> None:
  types, names = accepted
  if not accepts(x.dtype, types):
    if x.dtype == dtypes.float0:
      raise float0_error(name, 0)
    raise TypeError(f"{name} does not accept dtype {x.dtype.name}. Accepted dtypes "
                    f"are subtypes of {names}.")


def check_nary(name: str, avals, accepted, require_same: bool = True) -> None:
  for i, (aval, (types, names)) in enumerate(zip(avals, accepted)):
    if not accepts(aval.dtype, types):
      if aval.dtype == dtypes.float0:
        raise float0_error(name, i)
      raise TypeError(f"{name} does not accept dtype {aval.dtype.name} at position {i}. "
                      f"Accepted dtypes at position {i} are subtypes of {names}.")
  if require_same:
    check_same_dtypes(name, avals)


def check_same_dtypes(name: str, avals) -> None:
  """JAX's ``lax.<name> requires arguments to have the same dtypes`` check."""
  if any(a.dtype != avals[0].dtype for a in avals[1:]):
    msg = (f"lax.{name} requires arguments to have the same dtypes, got "
           f"{', '.join(a.dtype.name for a in avals)}.")
    if name in JNP_EQUIVALENT:
      msg += (f" (Tip: jnp.{JNP_EQUIVALENT[name]} is a similar function that does "
              "automatic type promotion on inputs).")
    raise TypeError(msg)


def weak(*avals) -> bool:
  return builtins.all(a.weak_type for a in avals)


# ---------------------------------------------------------------- unary table
def unop(name: str, impl, accepted, *, result_dtype=None, kind="differentiable",
          accuracy=False, lower=None) -> Primitive:
  """A unary primitive; ``result_dtype(in_dtype)`` gives the result dtype;
  ``lower`` is its StableHLO lowering rule."""
  p = Primitive(name, kind=kind)
  if lower is not None:
    p.def_lower(lower)
  out_dt = result_dtype or (lambda dt: dt)

  @p.def_impl
  @quiet   # XLA produces inf/NaN silently
  def _impl(x, **params):
    params.pop("accuracy", None)
    return [np.asarray(impl(x, **params)).astype(out_dt(x.dtype), copy=False)]

  @p.def_abstract_eval
  def _abstract_eval(x, **params):
    check_unary(name, x, accepted)
    return [ShapedArray(x.shape, out_dt(x.dtype), x.weak_type)]

  if accuracy:
    p.def_pp(pp_hide_none("accuracy"))
    WITH_ACCURACY.add(p)
  return p


WITH_ACCURACY: set = set()   # unary primitives with JAX's ``accuracy`` parameter


def pp_hide_none(*names):
  # JAX prints these parameters only when they are set.
  def rule(eqn, ctx):
    params = {k: eqn.params[k] for k in sorted(eqn.params)
              if not (k in names and eqn.params[k] is None)}
    return pp_eqn(eqn, ctx, params=params)
  return rule


REAL_OF = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}
COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def real_dtype(dt):
  return REAL_OF.get(dt, dt)


def complex_dtype(dt):
  return COMPLEX_OF.get(dt, dt)


def bool_dtype(_):
  return dtypes.bool_


def via_float32(fn):
  """Run ``fn`` on ml_dtypes floats (bfloat16, float8) in float32 and round back;
  NumPy has no transcendental loops for them."""
  def impl(x, *args, **params):
    if x.dtype in dtypes.custom_float_dtypes:
      out = fn(x.astype(np.float32), *(a.astype(np.float32) for a in args), **params)
      return np.asarray(out).astype(x.dtype)
    return fn(x, *args, **params)
  return impl


def fl(fn):
  return via_float32(fn)


def naryop(name: str, impl, accepted, *, result_dtype=None, kind="differentiable",
           out_dtype_param=False, lower=None) -> Primitive:
  """An elementwise primitive of ``len(accepted)`` operands (one dtype class
  each, or one class for all when given a single class) with equal dtypes;
  ``result_dtype(first operand's dtype)`` gives the result dtype; ``lower``
  is its StableHLO lowering rule."""
  p = Primitive(name, kind=kind)
  if lower is not None:
    p.def_lower(lower)
  out_dt = result_dtype or (lambda dt: dt)
  if isinstance(accepted[1], str):   # one class for both operands of a binary op
    accepted = (accepted, accepted)

  @p.def_impl
  @quiet   # XLA produces inf/NaN silently
  def _impl(*args, out_dtype=None):
    if out_dtype is not None:
      args = [a.astype(out_dtype) for a in args]
    return [np.asarray(impl(*args)).astype(out_dt(args[0].dtype), copy=False)]

  @p.def_abstract_eval
  def _abstract_eval(*avals, out_dtype=None):
    check_nary(name, avals, accepted, require_same=out_dtype is None)
    shape = broadcasting_shape(name, avals)
    dt = np.dtype(out_dtype) if out_dtype is not None else out_dt(avals[0].dtype)
    return [ShapedArray(shape, dt, weak(*avals))]

  if out_dtype_param:
    p.def_pp(pp_hide_none("out_dtype"))
  return p
