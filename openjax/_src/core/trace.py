"""The eval trace, the current-trace context and how operands become values.

``Primitive.bind`` hands the operation to the *current* trace. The bottom trace
is ``EvalTrace``, which runs each primitive's ``impl`` on concrete values;
transformations install their own trace for the duration of a call
(``set_current_trace``), and a trace processes values that belong to it while
treating anything else as a constant. A tracer whose trace has ended and that
is used again raises ``UnexpectedTracerError``.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable

import numpy as np

from openjax._src import dtypes
from openjax._src.config import config
from openjax._src.core.array import Array
from openjax._src.core.avals import ShapedArray
from openjax._src.core.tracer import Trace, Tracer
from openjax._src.errors import ConcretizationTypeError, UnexpectedTracerError


def canonical_value(x: Any) -> np.ndarray:
  """A NumPy value of JAX's canonical dtype for a non-tracer operand."""
  t = type(x)
  if t is Array:
    return x._value
  if t in dtypes.python_scalar_dtypes:
    return np.asarray(x, dtypes.dtype(x))
  if isinstance(x, Tracer):
    raise _escaped(x)
  if hasattr(x, "__jax_array__"):
    return canonical_value(x.__jax_array__())
  arr = np.asarray(x)
  dt = dtypes.dtype(arr)   # validates and canonicalises (float64 -> float32)
  if arr.dtype != dt:
    return arr.astype(dt)
  # A caller's ndarray may be mutated later: results must never alias it.
  return arr.copy() if arr is x else arr


def get_aval(x: Any) -> ShapedArray:
  """The abstract value of any operand (tracer, Array, NumPy value, scalar)."""
  aval = getattr(x, "aval", None)
  if aval is not None:
    return aval
  t = type(x)
  if t in dtypes.python_scalar_dtypes:
    return ShapedArray((), dtypes.dtype(x), weak_type=t is not bool)
  if hasattr(x, "__jax_array__"):
    return get_aval(x.__jax_array__())
  arr = np.asarray(x) if not hasattr(x, "dtype") or not hasattr(x, "shape") else x
  return ShapedArray(np.shape(arr), dtypes.dtype(arr), False)


def is_concrete(x: Any) -> bool:
  return not isinstance(x, Tracer) or x.to_concrete_value() is not None


def to_concrete_value(x: Any):
  """A NumPy value for ``x`` or None when it is an abstract tracer."""
  if isinstance(x, Tracer):
    return x.to_concrete_value()
  if type(x) is Array:
    return x._value
  return x


def concrete_or_error(force: Callable | None, val: Any, context: str = ""):
  """``force(val)`` for a concrete value; ConcretizationTypeError otherwise.

  Library functions use it for arguments that must be static (shapes, axes).
  """
  force = force or (lambda v: v)
  if isinstance(val, Tracer):
    c = val.to_concrete_value()
    if c is None:
      raise ConcretizationTypeError(val, f"{context}\n" if context else "")
    return force(c)
  return force(val)


# ------------------------------------------------------------ the eval trace
def _escaped(tracer) -> UnexpectedTracerError:
  return UnexpectedTracerError(
      f"Encountered an unexpected tracer: {tracer!r}. A function transformed "
      "by JAX (jit, grad, vmap, ...) had a side effect: a value it computed was "
      "stored outside it (in a global, a closure or an object attribute) and "
      "used after the transformation ended. Return the value from the "
      "transformed function instead of storing it.")


class EagerConfig:
  """What the eager fast paths check on every call, kept current by a config
  listener and by ``set_current_trace`` (``config.read`` and a thread-local
  read cost a good part of such a call).

  ``flags_ok``: no ``jax_debug_nans``/``jax_debug_infs``, and no thread
  overrides one of ``FLAGS`` locally (``config.override``); otherwise the fast
  paths step aside and the general path reads every flag itself. ``x64`` is
  the global ``jax_enable_x64``. ``enabled``: ``flags_ok`` and no thread is
  inside a transformation, so the current trace of every thread is the eval
  trace; while some thread transforms, a fast path must also check that its
  own thread's trace is the eval trace.
  """
  __slots__ = ("enabled", "flags_ok", "x64", "_overriding", "_tracing", "_lock")
  FLAGS = ("jax_enable_x64", "jax_debug_nans", "jax_debug_infs", "jax_numpy_dtype_promotion")

  def __init__(self):
    self._overriding: set = set()   # ids of threads with a local override
    self._tracing = 0               # set_current_trace blocks with a non-eval trace
    self._lock = threading.Lock()
    self.refresh("jax_enable_x64")

  def refresh(self, name: str) -> None:
    if name not in self.FLAGS:
      return
    local = config._local.values   # the overrides of the thread changing a flag
    with self._lock:
      if any(f in local for f in self.FLAGS):
        self._overriding.add(threading.get_ident())
      else:
        self._overriding.discard(threading.get_ident())
      values = config._values
      self.x64 = bool(values["jax_enable_x64"])
      self.flags_ok = not (values["jax_debug_nans"] or values["jax_debug_infs"]
                           or values["jax_numpy_dtype_promotion"] != "standard"
                           or self._overriding)
      self.enabled = self.flags_ok and not self._tracing

  def _count_trace(self, delta: int) -> None:
    with self._lock:
      self._tracing += delta
      self.enabled = self.flags_ok and not self._tracing


eager_config = EagerConfig()
config.add_listener(eager_config.refresh)

_new_aval = ShapedArray.__new__
_AVALS: dict = {}


def shaped_array(shape: tuple, dtype: np.dtype, weak_type: bool) -> ShapedArray:
  """``ShapedArray(shape, dtype, weak_type)`` for an already-canonical tuple
  of ints and ``np.dtype``, shared through a cache (the constructor's checks
  cost more than a whole eager operation)."""
  key = (shape, dtype, weak_type)
  aval = _AVALS.get(key)
  if aval is None:
    aval = _new_aval(ShapedArray)
    aval.shape, aval.dtype, aval.weak_type, aval._hash = shape, dtype, weak_type, None
    if len(_AVALS) >= 10_000:
      _AVALS.clear()
    _AVALS[key] = aval
  return aval


class EvalTrace(Trace):
  """The bottom trace: runs each primitive's ``impl`` on NumPy values."""

  def __init__(self):
    super().__init__()
    # (primitive, in avals, params) -> out avals; and primitive -> (avals,
    # params, out avals) of its last evaluation: an operation repeated on the
    # same (shared) aval objects skips building and hashing its key.
    self._aval_cache: dict = {}

  def process_primitive(self, primitive, args, params) -> list:
    vals, avals = [], []
    for x in args:
      if type(x) is Array:
        v = x._np   # the value, unless still being computed (or deleted)
        vals.append(v if v is not None else x._value)
        avals.append(x.aval)
      else:
        if isinstance(x, Tracer):
          raise _escaped(x)
        v = canonical_value(x)
        vals.append(v)
        avals.append(shaped_array(v.shape, v.dtype, dtypes.is_weakly_typed(x)))
    out_avals = self._abstract_eval(primitive, avals, params)
    outs = (primitive.impl or primitive.rule("impl"))(*vals, **params)
    if len(outs) == 1:   # most primitives: no loop
      result = [_concrete_result(outs[0], out_avals[0])]
    else:
      result = [_concrete_result(o, a) for o, a in zip(outs, out_avals)]
    if not eager_config.flags_ok and (config.read("jax_debug_nans")
                                     or config.read("jax_debug_infs")):
      _check_nans(primitive, result)
    return result

  def _abstract_eval(self, primitive, avals, params):
    # First the primitive's last evaluation (same aval objects, equal
    # parameters), then a cache keyed on plain tuples: hashing and comparing
    # them runs in C, where ShapedArray's __hash__/__eq__ are Python calls.
    last = self._aval_cache.get(primitive)
    if last is not None and len(last[0]) == len(avals) and last[1] == params:
      for a, b in zip(last[0], avals):
        if a is not b:
          break
      else:
        return last[2]
    try:
      key = (primitive, tuple([(a.shape, a.dtype, a.weak_type) for a in avals]),
             tuple(params.items()) if params else ())
      hit = self._aval_cache.get(key)
    except TypeError:  # an unhashable parameter: no caching
      return primitive.rule("abstract_eval")(*avals, **params)
    if hit is None:
      hit = primitive.rule("abstract_eval")(*avals, **params)
      if len(self._aval_cache) < 100_000:
        self._aval_cache[key] = hit
    self._aval_cache[primitive] = (avals, params, hit)
    return hit


def _concrete_result(o, aval: ShapedArray) -> Array:
  """An impl's result as an Array of ``aval`` (NumPy scalars become arrays)."""
  if type(o) is not np.ndarray:
    o = np.asarray(o)
  if o.dtype != aval.dtype:
    o = o.astype(aval.dtype)
  o.setflags(False)   # write=False, positional: a third of ``flags.writeable``'s cost
  return Array(o, aval)


def _check_nans(primitive, outs) -> None:
  check_nans(primitive, [o._value for o in outs])


def check_nans(primitive, values) -> None:
  """Raise FloatingPointError naming ``primitive`` when ``jax_debug_nans``
  (``jax_debug_infs``) is on and one of its result ``values`` (NumPy arrays)
  holds a nan (an inf)."""
  for v in values:
    if dtypes.kind(v.dtype) not in "fc":
      continue
    if config.read("jax_debug_nans") and np.isnan(v).any():
      raise FloatingPointError(f"invalid value (nan) encountered in {primitive.name}")
    if config.read("jax_debug_infs") and np.isinf(v).any():
      raise FloatingPointError(f"invalid value (inf) encountered in {primitive.name}")


class _TraceState(threading.local):
  def __init__(self):
    self.trace: Trace = eval_trace


eval_trace = EvalTrace()
trace_state = _TraceState()


def current_trace() -> Trace:
  return trace_state.trace


@contextlib.contextmanager
def set_current_trace(trace: Trace):
  """Make ``trace`` the current trace for the duration of a block."""
  prev = trace_state.trace
  counted = trace is not eval_trace
  if counted:
    eager_config._count_trace(1)
  trace_state.trace = trace
  try:
    yield
  finally:
    trace_state.trace = prev
    if counted:
      eager_config._count_trace(-1)


def find_top_trace(args) -> Trace:
  """The current trace (kept for API symmetry with JAX's older model)."""
  return trace_state.trace
