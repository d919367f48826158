"""The eager fast path of elementwise ``jax.numpy`` functions and ``Array``
operators.

Outside every transformation (the current trace is the eval trace) an
elementwise function on ready, NumPy-backed Arrays and Python scalars comes
down to: promote the dtypes, cast, run one NumPy kernel, wrap the result. The
general path does that through several primitive binds and costs ~20 µs; this
path does it in about a microsecond more than NumPy itself, by

- caching a *plan* per combination of operand (dtype, weak type) or Python
  scalar type, and ``jax_enable_x64``: the promoted dtype, which operands to
  cast, the kernel and the result's (dtype, weak type). A plan is built by the
  same dtype functions (``dtypes.result_type``) and the primitive's own
  abstract evaluation that the general path uses, so it raises nothing: a
  combination the general path rejects or treats specially gets no plan;
- calling the NumPy kernel that the primitive's ``impl`` calls, without the
  impl's per-call ``np.errstate`` (which alone costs twice a 1000-element
  multiply): floating-point warnings are silenced by setting NumPy's error
  state context variable directly;
- converting Python scalars once per (value, dtype) (through the general
  path's own conversion) and reusing the result's abstract value.

Anything else (tracers, NumPy arrays, Arrays whose value is still being
computed, broadcasting between different ranks, dtypes NumPy has no kernels
for, ``jax_debug_nans``, a thread-local flag override) takes the general path,
which stays the definition: ``tests/test_eager_fast_path.py`` checks that both
give the same values, dtypes and weak types.
"""
from __future__ import annotations

import functools

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import Array, eval_trace, ShapedArray, trace_state
from openjax._src.core.trace import eager_config, shaped_array
from openjax._src.primitives.base.util import FP_ERRSTATE, FP_IGNORE
from openjax._src.primitives.base.convert import convert_numpy

__all__ = ["eager_binary", "eager_unary", "eager_value", "run_quiet", "wrap_result", "remember"]

_ndarray = np.ndarray
_asarray = np.asarray
_setflags = np.ndarray.setflags
_SCALAR_TYPES = frozenset((int, float, complex, bool))
_MISSING = object()


# NumPy's floating-point warnings are silenced by setting its error-state
# context variable directly (``np.errstate`` costs twice a 1000-element multiply).
_errstate_set, _errstate_reset = FP_ERRSTATE.set, FP_ERRSTATE.reset
_IGNORE = FP_IGNORE


def eager_value(x):
  """The NumPy value of ``x`` when an eager fast path may use it: ``x`` is a
  ready Array, this thread is not transforming, no debug flag or flag
  override is active. None otherwise (take the general path)."""
  if type(x) is not Array:
    return None
  cfg = eager_config
  if cfg.enabled or (cfg.flags_ok and trace_state.trace is eval_trace):
    return x._np
  return None


def run_quiet(kernel, *args, **kwargs):
  """``kernel(*args, **kwargs)`` with NumPy's floating-point warnings off (XLA
  produces inf/NaN silently), at a fraction of ``np.errstate``'s cost."""
  token = _errstate_set(_IGNORE)
  try:
    return kernel(*args, **kwargs)
  finally:
    _errstate_reset(token)


def wrap_result(out, aval: ShapedArray) -> Array:
  """A fast path's NumPy result (a fresh array, a view of a read-only one or
  a NumPy scalar) as a read-only Array with ``aval``."""
  if type(out) is not _ndarray:
    out = _asarray(out)
  _setflags(out, False)
  return Array(out, aval)


def remember(plans: dict, key, plan):
  """Store ``plan`` under ``key`` in a bounded plan cache; returns ``plan``."""
  if len(plans) >= 1024:
    plans.clear()
  plans[key] = plan
  return plan


# ---------------------------------------------------------------- kernels
# The NumPy function each primitive's impl applies for NumPy's own dtypes
# (bool, integers, float16/32/64, complex64/128). The ml_dtypes types
# (bfloat16, float8, int4) compute through float32 in the impls: they take
# the general path.
NUMPY_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128))

BINARY_KERNELS = {
    lax.add_p: np.add, lax.sub_p: np.subtract, lax.mul_p: np.multiply,
    lax.div_p: np.true_divide,          # inexact dtypes only: see _kernel_applies
    lax.max_p: np.maximum, lax.min_p: np.minimum,
    lax.and_p: np.bitwise_and, lax.or_p: np.bitwise_or, lax.xor_p: np.bitwise_xor,
    lax.eq_p: np.equal, lax.ne_p: np.not_equal, lax.lt_p: np.less, lax.le_p: np.less_equal,
    lax.gt_p: np.greater, lax.ge_p: np.greater_equal,
}

UNARY_KERNELS = {
    lax.neg_p: np.negative, lax.exp_p: np.exp, lax.exp2_p: np.exp2,
    lax.log_p: np.log, lax.log1p_p: np.log1p,
    lax.expm1_p: np.expm1, lax.tanh_p: np.tanh, lax.sin_p: np.sin,
    lax.cos_p: np.cos, lax.tan_p: np.tan, lax.asin_p: np.arcsin, lax.acos_p: np.arccos,
    lax.atan_p: np.arctan, lax.sinh_p: np.sinh, lax.cosh_p: np.cosh,
    lax.asinh_p: np.arcsinh, lax.atanh_p: np.arctanh, lax.sqrt_p: np.sqrt,
    lax.floor_p: np.floor, lax.ceil_p: np.ceil,
}


def _kernel_applies(prim, dt: np.dtype) -> bool:
  if dt not in NUMPY_DTYPES:
    return False
  if prim is lax.div_p:   # integer division has XLA's rounding and x / 0 rules
    return dtypes.kind(dt) in "fc"
  return True


def _needs_quiet(dt: np.dtype) -> bool:
  # Only floating-point loops raise NumPy's floating-point warnings.
  return dtypes.kind(dt) in "fc"


# ------------------------------------------------------------ Python scalars
_SCALAR_VALUES: dict = {}


def _scalar_value(x, dt: np.dtype) -> np.ndarray:
  """The 0-d value the general path makes of the Python scalar ``x`` as an
  operand of dtype ``dt`` (it converts scalars itself, with XLA's casts)."""
  t = type(x)
  cacheable = t is int or t is bool or (t is float and x != 0)   # keeps -0.0 apart from 0.0
  if cacheable:
    v = _SCALAR_VALUES.get((t, x, dt))
    if v is not None:
      return v
  v = lax._convert_element_type(x, dt, weak_type=True)._value
  if cacheable:
    if len(_SCALAR_VALUES) >= 4096:
      _SCALAR_VALUES.clear()
    _SCALAR_VALUES[(t, x, dt)] = v
  return v


# ------------------------------------------------------------------- plans
def _checked_result(prim, kernel, dt, weak, in_dtypes):
  """The result's (dtype, weak type), or None when the primitive's abstract
  evaluation rejects the operands or the kernel's result dtype differs."""
  avals = [ShapedArray((), dt, weak) for _ in in_dtypes]
  try:
    out, = prim.abstract_eval(*avals)
  except Exception:  # noqa: BLE001 - the general path raises it for the user
    return None
  with np.errstate(all="ignore"):
    sample = kernel(*(np.zeros((), dt) for _ in in_dtypes))
  if _asarray(sample).dtype != out.dtype:
    return None
  return out.dtype, out.weak_type


def _cast_for(x, dt):
  """What an operand needs before the kernel: None (nothing), or ``dt``."""
  if type(x) is Array:
    return None if x.aval.dtype == dt else dt
  return dt   # Python scalars always become a 0-d array of dt


def binary_plan(promote, choose, x, y):
  """A plan for ``choose(promoted dtype)``'s primitive on ``x`` and ``y``:
  ``(kernel, cast_x, cast_y, out_dtype, out_weak, quiet)`` or None.

  ``promote`` is ``dtypes.result_type``'s refinement the jnp function uses
  (identity for ``promote_args``, ``to_inexact_dtype`` for
  ``promote_args_inexact``); ``choose(dtype)`` returns the primitive the
  function binds for operands of that dtype, or None when it does more.
  """
  if type(x) is not Array and type(y) is not Array:
    return None
  dt, weak = dtypes.result_type(x, y, return_weak_type_flag=True)
  dt = promote(dt)
  prim = choose(dt)
  kernel = BINARY_KERNELS.get(prim)
  if kernel is None or not _kernel_applies(prim, dt):
    return None
  result = _checked_result(prim, kernel, dt, weak, (dt, dt))
  if result is None:
    return None
  return (kernel, _cast_for(x, dt), _cast_for(y, dt), *result, _needs_quiet(dt))


def unary_plan(promote, prim, x):
  """A plan ``(kernel, cast, out_dtype, out_weak, quiet)`` for ``prim`` on the
  Array ``x`` after ``promote``, or None."""
  aval = x.aval
  if promote is None:   # promote_args of one operand: the value as it is
    dt, weak = aval.dtype, aval.weak_type
  else:
    dt, weak = dtypes.result_type(x, return_weak_type_flag=True)
    dt = promote(dt)
  kernel = UNARY_KERNELS.get(prim)
  if kernel is None or not _kernel_applies(prim, dt):
    return None
  result = _checked_result(prim, kernel, dt, weak, (dt,))
  if result is None:
    return None
  return (kernel, None if aval.dtype == dt else dt, *result, _needs_quiet(dt))


def _plan_key(x):
  # What a plan depends on: an Array's (dtype, weak type), a scalar's type.
  if type(x) is Array:
    return x.aval.dtype, x.aval.weak_type
  return type(x)


def _binary_entry(plans, make_plan, x, y, xk, yk, x64):
  """The inline-cache entry for operands like ``x`` and ``y`` (``xk``/``yk``:
  their avals or scalar types): the plan plus the result's abstract value, or
  None for the general path."""
  key = (_plan_key(x), _plan_key(y), x64)
  plan = plans.get(key, _MISSING)
  if plan is _MISSING:
    plan = remember(plans, key, make_plan(x, y))
  if plan is None:
    return None
  kernel, cx, cy, odt, ow, quiet = plan
  # Equal shapes or a rank-0 operand: other broadcasting takes the general
  # path (its rank-promotion checks and errors).
  xs = x.aval.shape if type(x) is Array else ()
  ys = y.aval.shape if type(y) is Array else ()
  if xs != ys and xs and ys:
    return None
  aval = shaped_array(xs or ys, odt, ow)
  for a in (xk, yk):   # share the operand's aval when it is the result's
    if type(a) is ShapedArray and a == aval:
      aval = a
  return (xk, yk, x64, kernel, cx, cy, aval, quiet)


def _cast(x, value, t, dt, memo):
  """An operand's value cast to ``dt``: NumPy values with XLA's casts, a
  Python scalar (``value is t``, its type) as the general path converts it,
  once per scalar (``memo`` holds the last one)."""
  if value is not t:
    return convert_numpy(value, dt)
  m = memo[0]
  if m[0] is x and m[1] is dt:
    return m[2]
  value = _scalar_value(x, dt)
  memo[0] = (x, dt, value)
  return value


_NO_ENTRY = (None,) * 8
_NO_MEMO = (None, None, None)


def eager_binary(general, make_plan, *, swap: bool = False):
  """``general(x, y)`` with the eager fast path in front of it.

  ``make_plan(x, y)`` builds a plan (``binary_plan``) for operands like
  ``x`` and ``y``; plans are cached by the operands' (dtype, weak type) or
  Python scalar type, and the last one used sits in an inline cache checked
  by the identity of the operands' abstract values. With ``swap`` it is a
  reflected operator: called as ``__rsub__(self, other)`` it computes the
  function of ``(other, self)``, and ``general`` is that operator's own
  general path, called with the operands as given.
  """
  plans: dict = {}
  inline = [_NO_ENTRY]   # the last entry used (one tuple: safe across threads)
  memo = [_NO_MEMO]      # the last Python scalar converted: (scalar, dtype, value)
  # ``fast`` sees the operands in the function's order; a reflected
  # operator's general path takes them as given (self first).
  fallback = general if not swap else (lambda x, y: general(y, x))

  def fast(x, y):
    cfg = eager_config
    if cfg.enabled or (cfg.flags_ok and trace_state.trace is eval_trace):
      tx = type(x)
      if tx is Array:
        xv = x._np
        xk = x.aval
      elif tx in _SCALAR_TYPES:
        xv = xk = tx
      else:
        return fallback(x, y)
      ty = type(y)
      if ty is Array:
        yv = y._np
        yk = y.aval
      elif ty in _SCALAR_TYPES:
        yv = yk = ty
      else:
        return fallback(x, y)
      if xv is not None and yv is not None:
        entry = inline[0]
        if entry[0] is not xk or entry[1] is not yk or entry[2] is not cfg.x64:
          entry = _binary_entry(plans, make_plan, x, y, xk, yk, cfg.x64)
          if entry is None:
            return fallback(x, y)
          inline[0] = entry
        _, _, _, kernel, cx, cy, aval, quiet = entry
        if cx is not None:
          xv = _cast(x, xv, tx, cx, memo)
        if cy is not None:
          yv = _cast(y, yv, ty, cy, memo)
        if quiet:
          token = _errstate_set(_IGNORE)
          try:
            out = kernel(xv, yv)
          finally:
            _errstate_reset(token)
        else:
          out = kernel(xv, yv)
        if type(out) is not _ndarray:   # rank-0 results come back as NumPy scalars
          out = _asarray(out)
        _setflags(out, False)
        return Array(out, aval)
    return fallback(x, y)

  if swap:
    def reflected(a, b):
      return fast(b, a)
    functools.update_wrapper(reflected, general)
    return reflected
  functools.update_wrapper(fast, general)
  return fast


def eager_unary(general, make_plan):
  """``general(x)`` with the eager fast path in front of it; ``make_plan(x)``
  builds a ``unary_plan`` for Arrays like ``x``."""
  plans: dict = {}
  inline = [(None,) * 6]   # (aval, x64, kernel, cast, result aval, quiet)

  def fast(x):
    cfg = eager_config
    if type(x) is Array and (cfg.enabled or (cfg.flags_ok
                                             and trace_state.trace is eval_trace)):
      xv = x._np
      if xv is not None:
        xa = x.aval
        entry = inline[0]
        if entry[0] is not xa or entry[1] is not cfg.x64:
          key = (xa.dtype, xa.weak_type, cfg.x64)
          plan = plans.get(key, _MISSING)
          if plan is _MISSING:
            plan = remember(plans, key, make_plan(x))
          if plan is None:
            return general(x)
          kernel, cast, odt, ow, quiet = plan
          aval = shaped_array(xa.shape, odt, ow)
          entry = (xa, cfg.x64, kernel, cast, xa if xa == aval else aval, quiet)
          inline[0] = entry
        _, _, kernel, cast, aval, quiet = entry
        if cast is not None:
          xv = convert_numpy(xv, cast)
        if quiet:
          token = _errstate_set(_IGNORE)
          try:
            out = kernel(xv)
          finally:
            _errstate_reset(token)
        else:
          out = kernel(xv)
        if type(out) is not _ndarray:
          out = _asarray(out)
        _setflags(out, False)
        return Array(out, aval)
    return general(x)

  functools.update_wrapper(fast, general)
  return fast
