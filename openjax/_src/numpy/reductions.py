"""NumPy-style reductions (``jnp.sum``, ``mean``, ``var``, ``argmax``, the
``cumsum``, ...) built on the reduction primitives; the ``nan*`` family is in
``nan_reductions``.

Dtype rules are JAX's: sums and products of small integers and bools
accumulate in the default integer (``promote_integers``), float16/bfloat16
sums accumulate in float32, means and variances of integers are floats, and
every result is strongly typed.
"""
from __future__ import annotations

import builtins
import functools
import inspect
import math
import operator
from typing import Any, Callable

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.library_compile import NO_KEY, eager_leaf_key
from openjax._src.core import Array, Tracer, concrete_or_error, eval_trace, trace_state
from openjax._src.core.trace import eager_config
from openjax._src.numpy import util
from openjax._src.numpy._ufunc_helpers import _where as _where_jit
from openjax._src.numpy.reduction_plans import (
    _ReductionPlan, _canonical_dtype, _convert, _expand_dims, _init_value, _initial_key,
    _operand_key, _plan_program, _reduction_dims, _replay, _static_axes, _static_or_traced,
    keep_operand_program, last_operand_program, operand_program, run_operand_program)

__all__ = [
    "sum", "prod", "max", "min", "amax", "amin", "all", "any", "mean", "var", "std", "ptp",
    "count_nonzero", "argmax", "argmin", "cumsum", "cumprod", "cumulative_sum", "cumulative_prod",
]

_py_all = builtins.all  # this module defines its own ``all``


# ------------------------------------------------------------ private helpers
def _const(x, value) -> np.ndarray:
  """A strongly typed constant with ``x``'s dtype (a literal under tracing)."""
  return np.array(value).astype(util.dtype_of(x))


def _isnan(x):
  return lax.ne(x, x)


def _where(cond, x, y):
  """``jnp.where(cond, x, y)`` for this module: promotes and broadcasts."""
  dt, weak = dtypes.result_type(x, y, return_weak_type_flag=True)
  x, y = (_static_or_traced(v, dt, weak) for v in (x, y))
  shape = np.broadcast_shapes(np.shape(cond), np.shape(x), np.shape(y))
  return lax.select(util.broadcast_to_shape(cond, shape), util.broadcast_to_shape(x, shape),
                    util.broadcast_to_shape(y, shape))


def _ravel(x):
  return lax.reshape(x, (int(np.size(x)),)) if np.ndim(x) != 1 else x


def _upcast_f16(dtype) -> np.dtype:
  dtype = np.dtype(dtype)
  return np.dtype(np.float32) if dtype in (dtypes.float16, dtypes.bfloat16) else dtype


def _promote_integer_dtype(dtype) -> np.dtype:
  """Bools and integers narrower than the default accumulate in the default
  (unsigned) integer, as in JAX (NumPy would always use 64 bits)."""
  dtype = np.dtype(dtype)
  if dtype == np.bool_:
    return dtypes.default_int_dtype()
  k = dtypes.kind(dtype)
  if k == "u" and dtype.itemsize < dtypes.default_uint_dtype().itemsize:
    return dtypes.default_uint_dtype()
  if k == "i" and dtype.itemsize < dtypes.default_int_dtype().itemsize:
    return dtypes.default_int_dtype()
  return dtype


def _user_dtype(dtype, name: str) -> np.dtype:
  return dtypes.explicit_dtype(dtype, name)


def _check_out(name: str, out) -> None:
  if out is not None:
    raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


def _check_where(name: str, where):
  if where is None:
    return None
  where = util.ensure_arraylike(name, where)
  if util.dtype_of(where) != np.bool_:
    raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                     f"where.dtype=dtype('{util.dtype_of(where).name}').")
  return where


# (name, reducer, preproc, ..., operand aval, axis, dtype, keepdims, where's
# aval, initial, x64) -> _ReductionPlan: the static work of ``_reduction``
# (checks, axes, dtypes, the ``where`` fill and the ``initial`` constant)
# done once; replaying it makes the same lax calls.
_REDUCTION_PLANS: dict = {}
# name -> (the key's parts compared by identity, plan) of its last plan found
_LAST_PLAN: dict = {}


def _reduction(a, name: str, reducer: Callable, op: Callable, init_val, *,
               has_identity: bool = True, preproc: Callable | None = None,
               bool_reducer: Callable | None = None, bool_op: Callable | None = None,
               upcast_f16_for_computation: bool = False, axis=None, dtype=None, out=None,
               keepdims: bool = False, initial=None, where_=None,
               promote_integers: bool = False):
  if type(a) in dtypes.python_scalar_dtypes:
    # Its weakly typed 0-d Array (what the general path converts it to) keys
    # the plans: a scalar operand took the general path on every call.
    a = util.asarray_operand(a)
  where_key, initial_key = _operand_key(where_), _initial_key(initial)
  cacheable = (out is None and where_key is not False and initial_key is not False
               and (dtype is None or _canonical_dtype(dtype))
               and eager_config.flags_ok and (type(a) is Array or isinstance(a, Tracer)))
  if cacheable:
    # The call again: its checks, axes and dtypes come from the plan the
    # first such call recorded below; the same lax calls follow.
    aval = a.aval
    x64 = eager_config.x64
    last = _LAST_PLAN.get(name)
    # The name's last plan, by identity (a repeated call: no 15-part key to
    # build, hash and compare; x.all(axis=1) f32[3,4] ~1.5 us of ~14).
    if (last is not None and last[0] is aval and last[1] is axis and last[2] is dtype
        and last[3] is keepdims and last[4] is where_key and last[5] is reducer
        and last[6] is preproc and last[7] is x64 and last[8] == initial_key
        and last[9] is promote_integers and last[10] is has_identity
        and last[11] is upcast_f16_for_computation):
      plan = last[12]
    else:
      try:
        key = (name, reducer, preproc, has_identity, upcast_f16_for_computation, aval.shape,
               aval.dtype, aval.weak_type, axis, dtype, keepdims, promote_integers, where_key,
               initial_key, x64)
        plan = _REDUCTION_PLANS.get(key)
      except TypeError:   # an unhashable axis (a list): the general path
        cacheable, plan = False, None
      if plan is not None:
        _LAST_PLAN[name] = (aval, axis, dtype, keepdims, where_key, reducer, preproc, x64,
                            initial_key, promote_integers, has_identity,
                            upcast_f16_for_computation, plan)
    if plan is not None:
      if not plan.several:
        # One operation on an operand of the computation dtype (no mask, no
        # initial, no kept dims, no cast): the reducer itself; _replay's
        # casts and checks are no-ops here (jnp.sum f32[3,4] 10.9 -> 8.7 us).
        return plan.reducer(a, plan.dims)
      if (trace_state.trace is eval_trace and eager_leaf_key(a) is not NO_KEY
          and (where_ is None or eager_leaf_key(where_) is not NO_KEY)):
        # (committed Arrays: op by op)
        if where_ is None:
          # The operand alone: a call of one positional Array takes the
          # library call's fast path (keyed by its aval's identity), where
          # (a, None) built and hashed a key (jnp.any f32[3,4] 13.8 -> 9.6 us).
          program = plan.program
          if program is None:
            program = plan.program = _plan_program(name, plan, preproc, keepdims, False)
          return program(a)
        program = plan.masked_program
        if program is None:
          program = plan.masked_program = _plan_program(name, plan, preproc, keepdims, True)
        return program(a, where_)
      return _replay(plan, a, where_, preproc, keepdims)
  _check_out(name, out)
  a = util.ensure_arraylike(name, a)
  where_ = _check_where(name, where_)
  axis = _static_axes(axis)
  if initial is None and not has_identity and where_ is not None:
    raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                     "where mask one has to specify 'initial'")
  operand_dtype = util.dtype_of(a)
  a = preproc(a) if preproc else a
  dims = _reduction_dims(a, axis)
  shape = util.shape_of(a)
  if initial is None and not has_identity and not _py_all(shape[d] >= 1 for d in dims):
    raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
  if dtype is None:
    result_dtype = util.dtype_of(a)
    if promote_integers:
      result_dtype = _promote_integer_dtype(result_dtype)
  else:
    result_dtype = _user_dtype(dtype, name)
  computation_dtype = result_dtype
  if upcast_f16_for_computation and dtypes.kind(result_dtype) in "fc":
    computation_dtype = _upcast_f16(result_dtype)
  if computation_dtype == np.bool_:
    reducer, op = bool_reducer or reducer, bool_op or op
  fill, where_shape = None, None
  if where_ is not None:
    fill = _init_value(computation_dtype, init_val)
    where_shape = np.broadcast_shapes(np.shape(where_), shape)
  plan = _ReductionPlan(dims, computation_dtype, result_dtype, reducer, op, where_shape, fill,
                        None)
  result = plan.run(a, where_)
  if initial is not None:
    # Converted here, after the reduction (an initial that is traced stages
    # its conversion there); a plan keeps a Python scalar's constant.
    plan.initial = _convert(initial, computation_dtype)
    if np.shape(plan.initial) != ():
      raise ValueError("initial value must be a scalar. "
                       f"Got array of shape {np.shape(plan.initial)}")
    result = op(plan.initial, result)
  if cacheable:
    if len(_REDUCTION_PLANS) >= 4096:
      _REDUCTION_PLANS.clear()
    _REDUCTION_PLANS[key] = plan
    # (a weakly typed operand's result is cast to a strong type: several)
    plan.several = bool(where_ is not None or initial is not None or (keepdims and dims)
                        or aval.weak_type
                        or not operand_dtype == computation_dtype == result_dtype)
  if keepdims:
    result = _expand_dims(result, dims)
  return _convert(result, result_dtype)


def _cast_to_numeric(a):
  aval = getattr(a, "aval", None)
  if aval is not None and aval.dtype != np.bool_:
    return a   # already numeric
  return util.promote_dtypes_numeric(a)[0]


def _cast_to_bool(a):
  if dtypes.kind(util.dtype_of(a)) == "c":
    a = lax.real(a)
  return _convert(a, dtypes.bool_)


# ------------------------------------------------------------- the reductions
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None,  # noqa: A001
        where=None, promote_integers=True):
  """Sum of array elements over ``axis`` (``numpy.sum``). Bools and small
  integers accumulate in the default integer unless ``promote_integers=False``."""
  return _reduction(a, "sum", lax.reduce_sum, lax.add, 0, preproc=_cast_to_numeric,
                    bool_reducer=lax.reduce_or, bool_op=lax.bitwise_or,
                    upcast_f16_for_computation=dtype is None, axis=axis, dtype=dtype,
                    out=out, keepdims=keepdims, initial=initial, where_=where,
                    promote_integers=promote_integers)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
  """Product of array elements over ``axis`` (``numpy.prod``)."""
  return _reduction(a, "prod", lax.reduce_prod, lax.mul, 1, preproc=_cast_to_numeric,
                    bool_reducer=lax.reduce_and, bool_op=lax.bitwise_and,
                    upcast_f16_for_computation=dtype is None, axis=axis, dtype=dtype,
                    out=out, keepdims=keepdims, initial=initial, where_=where,
                    promote_integers=promote_integers)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
  """Maximum of array elements over ``axis`` (NaN propagates)."""
  return _reduction(a, "max", lax.reduce_max, lax.max, -np.inf, has_identity=False,
                    axis=axis, out=out, keepdims=keepdims, initial=initial, where_=where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
  """Minimum of array elements over ``axis`` (NaN propagates)."""
  return _reduction(a, "min", lax.reduce_min, lax.min, np.inf, has_identity=False,
                    axis=axis, out=out, keepdims=keepdims, initial=initial, where_=where)


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """Alias of ``max``."""
  return max(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """Alias of ``min``."""
  return min(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
  """Whether every element over ``axis`` is true."""
  return _reduction(a, "all", lax.reduce_and, lax.bitwise_and, True, preproc=_cast_to_bool,
                    axis=axis, out=out, keepdims=keepdims, where_=where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
  """Whether any element over ``axis`` is true."""
  return _reduction(a, "any", lax.reduce_or, lax.bitwise_or, False, preproc=_cast_to_bool,
                    axis=axis, out=out, keepdims=keepdims, where_=where)


def _axis_size(a, dims) -> int:
  return math.prod(np.shape(a)[d] for d in dims)


def _count(a, axis, keepdims, where, dtype):
  """How many elements each reduction over ``axis`` sees, in ``dtype``."""
  if where is None:
    return _convert(np.array(_axis_size(a, _reduction_dims(a, axis))), dtype)
  return sum(util.broadcast_to_shape(where, np.shape(a)), axis, dtype=dtype, keepdims=keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
  """Arithmetic mean over ``axis``; integers and bools give the default float."""
  return _mean(a, axis, dtype, out, keepdims, where=where,
               upcast_f16_for_computation=dtype is None)


# (operand aval, axis, dtype, keepdims, upcast, where aval, x64) -> _MeanPlan (no out)
_MEAN_PLANS: dict = {}


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None,
          upcast_f16_for_computation=True):
  if type(a) in dtypes.python_scalar_dtypes:   # as _reduction
    a = util.asarray_operand(a)
  where_key = _operand_key(where)
  cacheable = ((dtype is None or _canonical_dtype(dtype)) and out is None
               and where_key is not False and eager_config.flags_ok
               and (type(a) is Array or isinstance(a, Tracer)))
  if cacheable:   # the common call again: the same lax calls, decided once
    aval = a.aval
    try:
      key = (aval.shape, aval.dtype, aval.weak_type, axis, dtype, keepdims,
             upcast_f16_for_computation, where_key, eager_config.x64)
      plan = _MEAN_PLANS.get(key)
    except TypeError:   # an unhashable axis (a list): the general path
      cacheable, plan = False, None
    if plan is not None:
      if (plan.several and trace_state.trace is eval_trace and eager_leaf_key(a) is not NO_KEY
          and eager_leaf_key(where) is not NO_KEY):
        if where is None:   # the operand alone: the library call's fast path
          program = plan.program
          if program is None:
            program = plan.program = operand_program("mean", _operand_mean, plan, axis,
                                                     keepdims)
          return program(a)
        program = plan.masked_program
        if program is None:
          program = plan.masked_program = _mean_program(plan, axis, keepdims)
        return program(a, where)
      return _planned_mean(plan, a, axis, keepdims, where)
  a = util.ensure_arraylike("mean", a)
  where = _check_where("mean", where)
  _check_out("mean", out)
  axis = _static_axes(axis)
  if dtype is None:
    result_dtype = util.to_inexact_dtype(util.dtype_of(a))
  else:
    result_dtype = _user_dtype(dtype, "mean")
  computation_dtype = result_dtype
  if upcast_f16_for_computation and dtypes.kind(result_dtype) in "fc":
    computation_dtype = _upcast_f16(result_dtype)
  normalizer = _count(a, axis, keepdims, where, computation_dtype)
  total = sum(a, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
  if cacheable:
    if len(_MEAN_PLANS) >= 4096:
      _MEAN_PLANS.clear()
    # The normalizer as a 0-d Array (a literal when traced, as the NumPy
    # constant is): an operand the eval trace's inline cache takes as it is
    # (with a mask it is counted on each call).
    _MEAN_PLANS[key] = _MeanPlan(
        computation_dtype, result_dtype,
        None if where is not None else lax._convert_element_type(normalizer, computation_dtype),
        where is not None or keepdims
        or not util.dtype_of(a) == computation_dtype == result_dtype)
  return _convert(lax.div(total, normalizer), result_dtype)


class _MeanPlan:
  """What a mean without out decided: its dtypes, its normalizer
  (None with a mask: counted per call); eager means of more than a sum and
  a division (a cast of the operand or of the result, a mask, keepdims) run
  as one cached program, made at the first eager call."""
  __slots__ = ("computation_dtype", "result_dtype", "normalizer", "several", "program",
               "masked_program")

  def __init__(self, computation_dtype, result_dtype, normalizer, several: bool):
    self.computation_dtype, self.result_dtype = computation_dtype, result_dtype
    self.normalizer, self.several = normalizer, several
    self.program = self.masked_program = None   # (operand) and (operand, mask) calls


def _mean_program(plan: _MeanPlan, axis, keepdims):
  def mean(a, where):
    return _planned_mean(plan, a, axis, keepdims, where)
  return util.jit(mean)


def _operand_mean(a, plan: _MeanPlan, axis, keepdims):
  return _planned_mean(plan, a, axis, keepdims, None)


def _planned_mean(plan: _MeanPlan, a, axis, keepdims, where):
  """A mean whose checks and dtypes ``plan`` decided."""
  normalizer = plan.normalizer
  if where is not None:   # _count's masked sum, then the total
    normalizer = sum(util.broadcast_to_shape(where, util.shape_of(a)), axis,
                     dtype=plan.computation_dtype, keepdims=keepdims)
  total = sum(a, axis, dtype=plan.computation_dtype, keepdims=keepdims, where=where)
  return _convert(lax.div(total, normalizer), plan.result_dtype)


def _var_promote_types(a_dtype, dtype) -> tuple[np.dtype, np.dtype]:
  if dtype:
    if dtypes.kind(np.dtype(dtype)) != "c" and dtypes.kind(a_dtype) == "c":
      raise ValueError(
          "jax.numpy.var does not yet support real dtype parameters when computing the "
          "variance of an array of complex values. The semantics of numpy.var seem unclear "
          "in this case. Please comment on https://github.com/jax-ml/jax/issues/2283 if "
          "this behavior is important to you.")
    computation_dtype = dtype
  elif dtypes.kind(a_dtype) not in "fc":
    dtype = util.to_inexact_dtype(a_dtype)
    computation_dtype = dtype
  else:
    dtype = np.array(0, a_dtype).real.dtype if dtypes.kind(a_dtype) == "c" else a_dtype
    computation_dtype = a_dtype
  return _upcast_f16(computation_dtype), np.dtype(dtype)


def _correction(ddof, correction):
  if correction is None:
    return ddof
  if not isinstance(ddof, int) or ddof != 0:
    raise ValueError("ddof and correction can't be provided simultaneously.")
  return correction


def var(a, *args, **kwargs):
  """Variance over ``axis``; divides by ``N - correction`` (alias ``ddof``)."""
  if trace_state.trace is eval_trace:   # eagerly: the program of the static arguments
    return _var_program(a, *args, **kwargs)
  return _var_api(a, *args, **kwargs)


def _var_api(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
             mean=None, correction=None):  # noqa: A002 - NumPy's parameter name
  return _var(a, _static_axes(axis), dtype, out, _correction(ddof, correction), keepdims,
              where=where, mean=mean)


@util.jit(static_argnames=('axis', 'dtype', 'out', 'keepdims'))
def _var(a, axis, dtype, out, correction, keepdims, *, where=None, mean=None):  # noqa: A002
  a = util.ensure_arraylike("var", a)
  where = _check_where("var", where)
  dtype = None if dtype is None else _user_dtype(dtype, "var")
  _check_out("var", out)
  computation_dtype, dtype = _var_promote_types(util.dtype_of(a), dtype)
  a = _convert(a, computation_dtype)
  a_mean = (_mean(a, axis, dtype=computation_dtype, keepdims=True, where=where) if mean is None
            else _convert(util.ensure_arraylike("var", mean), computation_dtype))
  centered = _sub(a, a_mean)
  if dtypes.kind(computation_dtype) == "c":
    centered = lax.real(lax.mul(centered, lax.conj(centered)))
    computation_dtype = util.dtype_of(centered)
  else:
    centered = lax.square(centered)
  normalizer = _count(a, axis, keepdims, where, computation_dtype)
  normalizer = lax.sub(normalizer, _convert(correction, computation_dtype))
  result = sum(centered, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
  result = _convert(lax.div(result, normalizer), dtype)
  return _where_jit(lax.gt(normalizer, _const(normalizer, 0)), result, np.nan)


def _sub(x, y):
  """``x - y``; lax broadcasts size-1 axes of equal-rank operands itself."""
  if np.ndim(x) != np.ndim(y) and np.ndim(y):
    y = util.broadcast_to_shape(y, np.broadcast_shapes(np.shape(x), np.shape(y)))
  return lax.sub(x, y)


def std(a, *args, **kwargs):
  """Standard deviation over ``axis`` (the square root of ``var``)."""
  if trace_state.trace is eval_trace:   # as var
    return _std_program(a, *args, **kwargs)
  return _std_api(a, *args, **kwargs)


def _std_api(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
             mean=None, correction=None):  # noqa: A002 - NumPy's parameter name
  return _std(a, _static_axes(axis), dtype, out, _correction(ddof, correction), keepdims,
              where=where, mean=mean)


@util.jit(static_argnames=('axis', 'dtype', 'out', 'keepdims'))
def _std(a, axis, dtype, out, correction, keepdims, *, where=None, mean=None):  # noqa: A002
  a = util.ensure_arraylike("std", a)
  where = _check_where("std", where)
  if dtype is not None:
    dtype = _user_dtype(dtype, "std")
    if dtypes.kind(dtype) not in "fc":
      raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
  _check_out("std", out)
  return lax.sqrt(_var(a, axis, dtype, None, correction, keepdims, where=where, mean=mean))


# Traced calls stage JAX's jits _var and _std (``correction`` an operand: ``_var x 0:i32[]``);
# eager calls one program per static arguments (an operand would be converted per call).
_STATICS = ('axis', 'dtype', 'out', 'ddof', 'keepdims', 'correction')
_var_program = util.jit(_var_api, static_argnames=_STATICS)
_std_program = util.jit(_std_api, static_argnames=_STATICS)
var.__signature__ = inspect.signature(_var_api)
std.__signature__ = inspect.signature(_std_api)


@util.jit(static_argnames=('axis', 'out', 'keepdims'))
def ptp(a, axis=None, out=None, keepdims=False):
  """Range (maximum minus minimum) of values over ``axis``."""
  a = util.ensure_arraylike("ptp", a)
  _check_out("ptp", out)
  axis = _static_axes(axis)
  return lax.sub(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))


ptp.name = "_ptp"   # traced calls stage JAX's jit of that name


@util.jit(static_argnames=('axis', 'keepdims'))
def count_nonzero(a, axis=None, keepdims=False):
  """Number of non-zero elements over ``axis`` (default integer dtype)."""
  a = util.ensure_arraylike("count_nonzero", a)
  return sum(lax.ne(a, _const(a, 0)), axis=_static_axes(axis),
             dtype=dtypes.default_int_dtype(), keepdims=keepdims)


# ------------------------------------------------------------ argmax / argmin
# (name, operand aval, axis, keepdims, x64) -> (flat size or None, axis,
# index dtype, dims restored by keepdims or None) of argmax/argmin calls seen
# before: their checks done once; replays make the same lax calls.
_ARG_PLANS: dict = {}
# The same keys -> eager library functions of the plans of several operations.
_ARG_PROGRAMS: dict = {}


def _argminmax(name: str, lax_fn: Callable, a, axis, out, keepdims):
  cacheable = (out is None and eager_config.flags_ok and (axis is None or type(axis) is int)
               and (type(a) is Array or isinstance(a, Tracer)))
  if cacheable:
    if type(a) is Array and trace_state.trace is eval_trace:
      # the last eager call's program, by identity (jnp.argmax(f32[3,4]) ~1 us less)
      program = last_operand_program(name, a, axis, keepdims)
      if program is not None:
        return program(a)
    key = (name, a.aval, axis, bool(keepdims), eager_config.x64)
    plan = _ARG_PLANS.get(key)
    if plan is not None:
      if ((plan[0] is not None or plan[3] is not None) and trace_state.trace is eval_trace
          and eager_leaf_key(a) is not NO_KEY):   # several operations: one program
        program = _ARG_PROGRAMS.get(key)
        if program is None:
          program = _ARG_PROGRAMS[key] = _arg_program(name, lax_fn, plan)
        keep_operand_program(name, a, program, axis, keepdims)
        return program(a)
      return _argminmax_steps(lax_fn, a, *plan)
  a = util.ensure_arraylike(name, a)
  _check_out(name, out)
  axis = None if axis is None else operator.index(concrete_or_error(
      None, axis, f"The axis argument of jnp.{name} must be static."))
  keepdims = bool(keepdims)
  shape = util.shape_of(a)
  if axis is None:
    dims = tuple(range(len(shape)))
    flat = math.prod(shape) if len(shape) != 1 else None
    axis = 0
    size = math.prod(shape)
  else:
    axis = util.canonicalize_axis(axis, len(shape))
    dims, flat, size = (axis,), None, shape[axis]
  if size == 0:
    raise ValueError(f"attempt to get {name} of an empty sequence")
  plan = (flat, axis, dtypes.default_int_dtype(), dims if keepdims else None)
  if cacheable:
    if len(_ARG_PLANS) >= 4096:
      _ARG_PLANS.clear()
      _ARG_PROGRAMS.clear()
    _ARG_PLANS[key] = plan
  return _argminmax_steps(lax_fn, a, *plan)


def _arg_program(name: str, lax_fn: Callable, plan: tuple):
  """The eager library function of an argmin/argmax plan that flattens or
  keeps dims (its reshape, reduction and expand_dims)."""
  def arg_reduction(a):
    return _argminmax_steps(lax_fn, a, *plan)
  arg_reduction.__name__ = arg_reduction.__qualname__ = name
  return util.jit(arg_reduction)


def _argminmax_steps(lax_fn: Callable, a, flat, axis, index_dtype, keep_dims):
  if flat is not None:
    a = lax.reshape(a, (flat,))
  result = lax_fn(a, axis, index_dtype)
  return result if keep_dims is None else _expand_dims(result, keep_dims)


def argmax(a, axis=None, out=None, keepdims=None):
  """Index of the maximum along ``axis`` (first occurrence; NaN wins)."""
  return _argminmax("argmax", lax.argmax, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, keepdims=None):
  """Index of the minimum along ``axis`` (first occurrence; NaN wins)."""
  return _argminmax("argmin", lax.argmin, a, axis, out, keepdims)


# ------------------------------------------------------------- cumulative
# (name, reduction, operand aval, axis, dtype, promote_integers, x64) ->
# (flat size or None, axis, computation dtype, result dtype) of cumulative reductions
# without NaN filling, out or a bool dtype: checks done once; replays make the same calls.
_CUMULATIVE_PLANS: dict = {}


def _cumulative_reduction(name: str, reduction: Callable, a, axis, dtype, out=None,
                          fill_nan: bool = False, fill_value: Any = 0,
                          promote_integers: bool = False):
  key = None
  if (not fill_nan and out is None and eager_config.flags_ok
      and (axis is None or type(axis) is int) and (dtype is None or _canonical_dtype(dtype))
      and (type(a) is Array or isinstance(a, Tracer))):
    key = (name, reduction, a.aval, axis, dtype, promote_integers, eager_config.x64)
    plan = _CUMULATIVE_PLANS.get(key)
    if plan is not None:
      flat, axis, computation_dtype, result_dtype = plan
      if flat is not None:
        a = lax.reshape(a, (flat,))
      return _convert(reduction(_convert(a, computation_dtype), axis), result_dtype)
  a = util.ensure_arraylike(name, a)
  if out is not None:
    raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported")
  axis = concrete_or_error(None, axis, f"The axis argument of jnp.{name} must be static.")
  flat = None
  if axis is None:
    if np.ndim(a) != 1:
      flat = math.prod(np.shape(a))
    a = _ravel(a)
    axis = 0
  axis = util.canonicalize_axis(axis, np.ndim(a))
  if fill_nan:
    a = _where(_isnan(a), _const(a, fill_value), a)
  a_dtype = util.dtype_of(a)
  if dtype is None:
    if promote_integers or a_dtype == np.bool_:
      result_dtype = _promote_integer_dtype(a_dtype)
    else:
      result_dtype = a_dtype
    computation_dtype = result_dtype
  elif np.dtype(dtype) == np.bool_:
    result_dtype = dtypes.bool_
    if a_dtype != np.bool_:
      a = lax.ne(a, _const(a, 0))
    computation_dtype = _promote_integer_dtype(result_dtype)
  else:
    result_dtype = _user_dtype(dtype, name)
    computation_dtype = result_dtype
  if key is not None and (dtype is None or np.dtype(dtype) != np.bool_):
    if len(_CUMULATIVE_PLANS) >= 4096:
      _CUMULATIVE_PLANS.clear()
    _CUMULATIVE_PLANS[key] = (flat, axis, computation_dtype, result_dtype)
  a = _convert(a, computation_dtype)
  return _convert(reduction(a, axis), result_dtype)


def _one_operation(name: str, reduction: Callable, a, axis, dtype) -> bool:
  """Whether an eager ``cumsum``/``cumprod`` of the Array ``a`` is its plan's
  one operation (a bind costs less than a program's call), or a call of its
  plan the general path must make (a dtype ``explicit_dtype`` truncates: its
  warning every call); a cast, a flattening or a bool dtype are several."""
  if (dtype is not None and not _canonical_dtype(dtype)) or eager_leaf_key(a) is NO_KEY:
    return True
  try:
    plan = _CUMULATIVE_PLANS.get((name, reduction, a.aval, axis, dtype, False,
                                  eager_config.x64))
  except TypeError:   # an unhashable axis
    return True
  if plan is None:   # the first call makes it (a bool dtype has none)
    return dtype is None or np.dtype(dtype) != np.bool_
  flat, _, computation_dtype, result_dtype = plan
  return flat is None and a.aval.dtype == computation_dtype == result_dtype


def _eager_unjitted(name: str, reduction: Callable):
  """``jitted`` (JAX jits ``cumsum`` and ``cumprod``: traced calls stage its
  jit equation), except that eager calls on an Array of one operation run it
  directly through its plan: the program's dispatch costs more than it does."""
  def wrap(jitted):
    @functools.wraps(jitted)
    def call(a, axis=None, dtype=None, out=None):
      if type(a) is Array and out is None and trace_state.trace is eval_trace:
        program = last_operand_program(name, a, axis, dtype)
        if program is not None:
          return program(a)
        if dtype is None and type(axis) is int and eager_config.flags_ok:
          # An int axis, no dtype: one plan lookup, its one operation bound
          # directly (jnp.cumsum f32[3,4] axis=0 ~3 -> ~1 us over lax.cumsum).
          plan = _CUMULATIVE_PLANS.get((name, reduction, a.aval, axis, None, False,
                                        eager_config.x64))
          aval = a.aval
          if (plan is not None and plan[0] is None and not aval.weak_type
              and aval.dtype == plan[2] == plan[3]):
            return reduction(a, plan[1])
        if _one_operation(name, reduction, a, axis, dtype):
          return _cumulative_reduction(name, reduction, a, axis, dtype)
        if ((axis is None or type(axis) is int) and (dtype is None or _canonical_dtype(dtype))
            and eager_leaf_key(a) is not NO_KEY):
          # Several operations (a flattening, a cast): the program of this
          # (axis, dtype) called with the Array alone, the library call's fast
          # path (jitted's keywords: a key per call; bool[3,4] 14.5 -> 11 us).
          return run_operand_program(name, jitted.fun, a, axis, dtype)
      return jitted(a, axis=axis, dtype=dtype, out=out)
    return call
  return wrap


@_eager_unjitted("cumsum", lax.cumsum)
@util.jit(static_argnames=('axis', 'dtype', 'out'))
def cumsum(a, axis=None, dtype=None, out=None):
  """Cumulative sum along ``axis`` (flattened when None)."""
  return _cumulative_reduction("cumsum", lax.cumsum, a, axis, dtype, out)


@_eager_unjitted("cumprod", lax.cumprod)
@util.jit(static_argnames=('axis', 'dtype', 'out'))
def cumprod(a, axis=None, dtype=None, out=None):
  """Cumulative product along ``axis`` (flattened when None)."""
  return _cumulative_reduction("cumprod", lax.cumprod, a, axis, dtype, out)


# Traced cumulative_sum's JAX jit (eagerly one program: the jit's call would stay in it).
@util.jit(static_argnames=('axis', 'dtype'))
def _cumsum_with_promotion(a, axis, dtype):
  return _cumulative_reduction("cumulative_sum", lax.cumsum, a, axis, dtype, promote_integers=True)


def _cumulative_api(name: str, what: str, reduction: Callable, identity: int, x, axis, dtype,
                    include_initial: bool, promote_integers: bool, staged: bool = False):
  x = util.ensure_arraylike(name, x)
  if np.ndim(x) == 0:
    raise ValueError(f"The input must be non-scalar to take a cumulative {what}, however a "
                     "scalar value or scalar array was given.")
  if axis is None:
    axis = 0
    if np.ndim(x) > 1:
      raise ValueError(f"The input array has rank {np.ndim(x)}, however axis was not set to "
                       "an explicit value. The axis argument is only optional for "
                       "one-dimensional arrays.")
  axis = util.canonicalize_axis(axis, np.ndim(x))
  if dtype is not None:
    dtype = _user_dtype(dtype, name)
  out = (_cumsum_with_promotion(x, axis=axis, dtype=dtype) if staged and promote_integers else
         _cumulative_reduction(name, reduction, x, axis, dtype, promote_integers=promote_integers))
  if include_initial:
    shape = list(np.shape(x))
    shape[axis] = 1
    init = lax.broadcast_in_dim(_const(out, identity), tuple(shape), ())
    out = lax.concatenate([init, out], dimension=axis)
  return out


def _cumulative_sum(x, axis, dtype, include_initial, staged=False):
  return _cumulative_api("cumulative_sum", "sum", lax.cumsum, 0, x, axis, dtype,
                         include_initial, promote_integers=True, staged=staged)


def _cumulative_prod(x, axis, dtype, include_initial, staged=False):
  return _cumulative_api("cumulative_prod", "product", lax.cumprod, 1, x, axis, dtype,
                         include_initial, promote_integers=False)


# Eager calls of cumulative_sum/prod (the wrapper's checks, a cast, the
# initial value's broadcast and concatenate) as one cached library program;
# traced calls stage their equations, as JAX's (not jitted) do.
_CUMULATIVE_PROGRAMS = {f: util.jit(f, static_argnames=("axis", "dtype", "include_initial"))
                        for f in (_cumulative_sum, _cumulative_prod)}


def _cumulative_call(fun: Callable, x, axis, dtype, include_initial):
  if (trace_state.trace is eval_trace and type(x) is Array and eager_leaf_key(x) is not NO_KEY
      and (dtype is None or _canonical_dtype(dtype))):   # (else explicit_dtype's warning)
    if axis is None or type(axis) is int:   # the Array alone: the fast path
      name = fun.__name__
      program = last_operand_program(name, x, axis, dtype, include_initial)
      if program is None:
        program = operand_program(name, fun, axis, dtype, bool(include_initial))
        keep_operand_program(name, x, program, axis, dtype, include_initial)
      return program(x)
    return _CUMULATIVE_PROGRAMS[fun](x, axis=axis, dtype=dtype, include_initial=include_initial)
  return fun(x, axis, dtype, include_initial, staged=True)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
  """Cumulative sum (array API); ``include_initial`` prepends a zero."""
  return _cumulative_call(_cumulative_sum, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
  """Cumulative product (array API); ``include_initial`` prepends a one."""
  return _cumulative_call(_cumulative_prod, x, axis, dtype, include_initial)
