"""What ``numpy/reductions.py`` decides once per signature and replays: the
dtype conversions that keep constants literals, the plans of ``jnp.sum`` and
kin (``_ReductionPlan``), their plan keys, and the eager library program a
plan of several operations runs as."""
from __future__ import annotations

import functools
import operator
from typing import Callable

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.library_compile import NO_KEY, eager_leaf_key
from openjax._src.core import Array, Tracer, concrete_or_error, eval_trace, trace_state
from openjax._src.core.trace import eager_config
from openjax._src.numpy import util


def _is_static(x) -> bool:
  return isinstance(x, (np.ndarray, np.generic)) or type(x) in dtypes.python_scalar_dtypes


def _static_or_traced(x, dtype, weak: bool = False):
  # NumPy/Python constants are converted here, so they stay literals (no
  # equation), as JAX does; arrays and tracers go through lax.
  aval = getattr(x, "aval", None)
  if aval is not None and aval.dtype == dtype and aval.weak_type == weak:
    return x   # nothing to convert (most operands)
  if _is_static(x) and not weak:
    return np.asarray(x).astype(dtype)
  return lax._convert_element_type(util.asarray_operand(x), dtype, weak_type=weak)


def _expand_dims(x, dims):
  """Insert size-1 axes at the (result) positions ``dims``."""
  dims = frozenset(dims)
  if not dims:
    return x
  shape = list(np.shape(x))
  for d in sorted(dims):
    shape.insert(d, 1)
  return lax.broadcast_in_dim(x, tuple(shape), tuple(i for i in range(len(shape))
                                                     if i not in dims))


def _convert(x, dtype):
  return _static_or_traced(x, dtype)


def _static_axes(axis):
  """``axis`` as None, an int or a tuple of ints; it must be static."""
  if axis is None or type(axis) is int:   # the common cases
    return axis
  def force(ax):
    if ax is None:
      return None
    try:
      return operator.index(ax)
    except TypeError:
      return tuple(operator.index(i) for i in ax)
  return concrete_or_error(force, axis, "The axis argument must be known statically.")


def _reduction_dims(a, axis) -> tuple[int, ...]:
  ndim = len(util.shape_of(a))
  if axis is None:
    return tuple(range(ndim))
  axes = tuple(axis) if isinstance(axis, (tuple, list, np.ndarray)) else (axis,)
  dims = tuple(util.canonicalize_axis(ax, ndim) for ax in axes)
  if len(dims) != len(set(dims)):
    raise ValueError(f"duplicate value in 'axis': {axis}")
  return dims


def _init_value(dtype: np.dtype, value) -> np.ndarray:
  """The reduction's identity in ``dtype`` (±inf saturate for integers and for
  floats without infinities)."""
  if dtype == np.bool_:
    return np.array(value > 0, dtype=dtype)
  k = dtypes.kind(dtype)
  if k in "iu" and np.isinf(value):
    info = dtypes.iinfo(dtype)
    return np.array(info.min if value < 0 else info.max, dtype=dtype)
  if k == "f" and np.isinf(value) and not np.isinf(np.array(value).astype(dtype)):
    info = dtypes.finfo(dtype)
    return np.array(info.min if value < 0 else info.max, dtype=dtype)
  return np.array(value).astype(dtype)


class _ReductionPlan:
  __slots__ = ("dims", "computation_dtype", "result_dtype", "reducer", "op", "shape",
               "fill", "fill_array", "initial", "several", "program", "masked_program")

  def __init__(self, dims, computation_dtype, result_dtype, reducer, op, shape, fill, initial):
    self.dims, self.computation_dtype, self.result_dtype = dims, computation_dtype, result_dtype
    self.reducer, self.op, self.shape, self.fill = reducer, op, shape, fill
    # The fill broadcast to the operand's shape once, for eager calls (a
    # traced call stages the broadcast, as the general path does).
    self.fill_array = None
    self.initial = initial
    # Eager calls of a plan of several operations (a float16 sum's upcast,
    # reduce and cast back; a mask's select; keepdims' reshape): its lax
    # calls as one cached library program (~0.6 us a step and ~3 us a call,
    # where each bind costs 2-6 us), the same kernels and bits; made at the
    # first eager call (a plan may be made by a trace).
    self.several = False
    self.program = self.masked_program = None   # (operand) and (operand, mask) calls

  def run(self, a, where_):
    """The reduction of ``a`` (masked by ``where_``), before ``initial``."""
    a = _convert(a, self.computation_dtype)
    if where_ is not None:
      shape = self.shape
      eager = type(a) is Array
      cond, a = util.broadcast_to_shape(where_, shape), util.broadcast_to_shape(a, shape)
      if eager:
        fill = self.fill_array
        if fill is None:
          fill = self.fill_array = util.broadcast_to_shape(self.fill, shape)
      else:
        fill = util.broadcast_to_shape(self.fill, shape)
      a = lax.select(cond, a, fill)
    return self.reducer(a, self.dims)


def _canonical_dtype(dtype) -> bool:
  """Whether ``dtype`` (a dtype or a scalar type: ``jnp.float32``, ``bool``)
  names a dtype that ``explicit_dtype`` keeps as it is (so no truncation
  warning is skipped by replaying a plan)."""
  try:
    dt = np.dtype(dtype)
  except TypeError:
    return False
  return dtypes.canonicalize_dtype(dt) == dt


def _operand_key(x):
  """The plan-key part of a ``where`` operand: None, or an Array's or
  tracer's aval; False for operands the plans do not take."""
  if x is None:
    return None
  if type(x) is Array or isinstance(x, Tracer):
    return x.aval
  return False


def _initial_key(initial):
  """The plan-key part of ``initial``: None, or a Python scalar with its type
  (so 1 and 1.0 and True differ); False for others (arrays, NaN)."""
  if initial is None:
    return None
  t = type(initial)
  if t in (int, float, bool) and initial == initial:
    return (t, initial)
  return False


def _replay(plan: _ReductionPlan, a, where_, preproc: Callable | None, keepdims: bool):
  """The reduction ``plan`` describes, op by op (eagerly or traced)."""
  result = plan.run(preproc(a) if preproc else a, where_)
  if plan.initial is not None:
    result = plan.op(plan.initial, result)
  if keepdims:
    result = _expand_dims(result, plan.dims)
  return _convert(result, plan.result_dtype)


def _plan_program(name: str, plan: _ReductionPlan, preproc: Callable | None, keepdims: bool,
                  masked: bool):
  """The eager library function of a plan: its replay, traced once per
  operand type; ``masked``: it takes the ``where`` mask too."""
  if masked:
    def reduction(a, where_):
      return _replay(plan, a, where_, preproc, keepdims)
  else:
    def reduction(a):
      return _replay(plan, a, None, preproc, keepdims)
  reduction.__name__ = reduction.__qualname__ = name
  return util.jit(reduction)


# (name, function, static arguments) -> the eager library function of
# ``a -> function(a, *static)`` (``operand_program``).
_OPERAND_PROGRAMS: dict = {}


def operand_program(name: str, fun: Callable, *static):
  """An eager library function of the operand alone: ``fun(a, *static)``,
  traced once per operand type. Called with one positional Array it takes
  the library call's fast path (its runner found by the Array's aval),
  where a call with static keyword arguments builds and hashes a key
  (jnp.nancumsum f32[3,4] axis=0 ~2 us less). ``static`` must hash."""
  key = (name, fun, static)
  program = _OPERAND_PROGRAMS.get(key)
  if program is None:
    def call(a):
      return fun(a, *static)
    call.__name__ = call.__qualname__ = name
    if len(_OPERAND_PROGRAMS) >= 1024:
      _OPERAND_PROGRAMS.clear()
    program = _OPERAND_PROGRAMS[key] = util.jit(call)
  return program


# name -> (operand aval, static arguments, x64, program) of the last eager
# call of an operand program (``keep_operand_program``)
_LAST_OPERAND: dict = {}


def keep_operand_program(name: str, a, program, *static) -> None:
  """Remember ``program`` (``operand_program``'s, or ``a``'s plan's one
  operation) as ``name``'s eager call on ``a``'s aval with ``static``."""
  _LAST_OPERAND[name] = (a.aval, static, eager_config.x64, program)


def run_operand_program(name: str, fun: Callable, a, *static):
  """``operand_program(name, fun, *static)`` run on ``a`` and kept as
  ``name``'s last eager call (``keep_operand_program``)."""
  program = operand_program(name, fun, *static)
  keep_operand_program(name, a, program, *static)
  return program(a)


def last_operand_program(name: str, a, *static):
  """The program ``keep_operand_program`` kept for ``name`` when this eager
  call on the Array ``a`` has the same aval and static arguments (by
  identity) and flags, else None: no plan key or dtype check to build and
  hash (jnp.cumsum(i32[3,4], axis=0, dtype=jnp.float32): a scalar type's
  hash and two dtype canonicalizations, ~5 of ~19 us)."""
  last = _LAST_OPERAND.get(name)
  if (last is None or last[0] is not a.aval or last[2] is not eager_config.x64
      or not eager_config.flags_ok or eager_leaf_key(a) is NO_KEY):
    return None
  kept = last[1]
  if len(kept) != len(static):
    return None
  for x, y in zip(kept, static):
    if x is not y:
      return None
  return last[3]


def operand_alone(jitted):
  """``jitted`` (nancumsum, nancumprod), except that eager calls on an Array
  with a static axis and dtype run its program of the operand alone
  (``operand_program``): 10 elements ~2 us less."""
  @functools.wraps(jitted)
  def call(a, axis=None, dtype=None, out=None):
    if axis is None and dtype is None and out is None:
      return jitted(a)   # (positional already: the fast path)
    if type(a) is Array and out is None and trace_state.trace is eval_trace:
      name = jitted.__name__
      program = last_operand_program(name, a, axis, dtype)
      if program is not None:
        return program(a)
      if (type(axis) is int and (dtype is None or _canonical_dtype(dtype))
          and eager_leaf_key(a) is not NO_KEY):
        return run_operand_program(name, jitted.fun, a, axis, dtype)
    return jitted(a, axis=axis, dtype=dtype, out=out)
  return call
