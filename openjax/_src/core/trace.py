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
import contextvars
import math
import operator
import os
import sys
import threading
from typing import Any, Callable

import numpy as np

from openjax._src import dtypes
from openjax._src.config import config
from openjax._src.core.array import Array, ShardedBuffer, sharded_array_of
from openjax._src.core.avals import ShapedArray, shaped_array
from openjax._src.core.memory import aligned_result
from openjax._src.core.mesh import Mesh
from openjax._src.core.placement import committed_device
from openjax._src.core.sharding import NamedSharding, PartitionSpec, result_sharding
from openjax._src.core.tracer import Trace, Tracer
from openjax._src.core.transfer_guard import guard_eager_operands
from openjax._src.errors import ConcretizationTypeError, ShardingTypeError, UnexpectedTracerError


def canonical_value(x: Any) -> np.ndarray:
  """A NumPy value of JAX's canonical dtype for a non-tracer operand."""
  t = type(x)
  if t is Array:
    return x._value
  if t in dtypes.python_scalar_dtypes:
    dt = dtypes.dtype(x)
    return python_int_value(x, dt) if t is int else np.asarray(x, dt)
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


# ------------------------------------------------ NumPy's floating-point state
def _fp_errstate():
  """NumPy's error-state context variable and its all-"ignore" value. Setting
  it directly costs a fifth of ``np.errstate(all="ignore")`` (~1.4 µs, more
  than a 1000-element multiply); an equivalent built on ``np.errstate`` where
  NumPy keeps the state elsewhere."""
  try:
    from numpy._core._ufunc_config import _extobj_contextvar as var
  except ImportError:
    var = None
  if isinstance(var, contextvars.ContextVar):
    with np.errstate(all="ignore"):
      return var, var.get()

  class _ErrstateVar:
    def set(self, _value):
      state = np.errstate(all="ignore")
      state.__enter__()
      return state

    def reset(self, state):
      state.__exit__(None, None, None)
  return _ErrstateVar(), None


#: ``token = FP_ERRSTATE.set(FP_IGNORE)`` ... ``FP_ERRSTATE.reset(token)``:
#: NumPy's floating-point warnings off in between (XLA produces inf/nan silently).
FP_ERRSTATE, FP_IGNORE = _fp_errstate()


# ------------------------------------------------------------ the eval trace
def _escaped(tracer) -> UnexpectedTracerError:
  return UnexpectedTracerError(
      f"Encountered an unexpected tracer: {tracer!r}. A function transformed "
      "by JAX (jit, grad, vmap, ...) had a side effect: a value it computed was "
      "stored outside it (in a global, a closure or an object attribute) and "
      "used after the transformation ended. Return the value from the "
      "transformed function instead of storing it.")


class EagerConfig:
  """The flags every eager operation depends on, kept current by a config
  listener (``config.read`` and a thread-local read cost a good part of an
  eager operation).

  ``flags_ok``: no ``jax_debug_nans``/``jax_debug_infs``, standard dtype
  promotion, no host-to-device transfer guard, and no thread overrides one
  of ``FLAGS`` locally
  (``config.override``); otherwise eager code reads every flag itself. ``x64``
  is the global ``jax_enable_x64``.
  """
  __slots__ = ("flags_ok", "x64", "_overriding", "_lock")
  FLAGS = ("jax_enable_x64", "jax_debug_nans", "jax_debug_infs", "jax_numpy_dtype_promotion",
           "jax_transfer_guard", "jax_transfer_guard_host_to_device", "jax_no_execution")

  def __init__(self):
    self._overriding: set = set()   # ids of threads with a local override
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
                           or values["jax_transfer_guard"] != "allow"
                           or values["jax_transfer_guard_host_to_device"] not in (None, "allow")
                           or values["jax_no_execution"] or self._overriding)

  def read_x64(self) -> bool:
    """``jax_enable_x64`` as this thread sees it."""
    return self.x64 if self.flags_ok else bool(config.read("jax_enable_x64"))


eager_config = EagerConfig()
config.add_listener(eager_config.refresh)


# ------------------------------------------------------------ the plan cache
_ndarray = np.ndarray
_asarray = np.asarray
_setflags = np.ndarray.setflags
_fp_set, _fp_reset = FP_ERRSTATE.set, FP_ERRSTATE.reset
SCALAR_TYPES = frozenset(dtypes.python_scalar_dtypes)   # Python scalar operand types
# NumPy scalar types of JAX's dtypes (``np.float32(2)``): strongly typed rank-0 operands
NUMPY_SCALAR_TYPES = dtypes.numpy_scalar_types
_SCALAR_VALUES: dict = {}


def python_int_dtype(x: int) -> np.dtype:
  """The dtype JAX gives the Python int ``x``, a weak int32 (int64 with x64),
  after checking it holds the value (OverflowError naming it otherwise,
  whatever the other operand: ``int32 + 2**40``, ``float32 + 2**40``)."""
  own = dtypes.dtype(x)
  info = dtypes.iinfo(own)
  if not info.min <= x <= info.max:
    raise OverflowError(f"Python int {x} too large to convert to {own.name}")
  return own


def python_int_value(x: int, dt: np.dtype) -> np.ndarray:
  """A Python int as an operand of dtype ``dt``, as JAX makes it
  (``python_int_dtype``), then cast to ``dt`` (``int8 + 300`` wraps, as
  JAX's does)."""
  return np.asarray(x, python_int_dtype(x)).astype(dt)


def scalar_value(x, dt: np.dtype) -> np.ndarray:
  """The read-only 0-d value of the Python scalar ``x`` in ``dt`` (its
  canonical dtype), made once per (type, value, dtype): converting costs
  more than adding two small arrays."""
  t = type(x)
  # 0.0 == -0.0 and nan != nan: those are converted every time.
  cacheable = t is int or t is bool or (x == x and x != 0)
  if cacheable:
    v = _SCALAR_VALUES.get((t, x, dt))
    if v is not None:
      return v
  v = python_int_value(x, dt) if t is int else np.asarray(x, dt)
  v.setflags(False)
  if cacheable:
    if len(_SCALAR_VALUES) >= 4096:
      _SCALAR_VALUES.clear()
    _SCALAR_VALUES[(t, x, dt)] = v
  return v


def _shared_aval(aval, in_avals):
  """``aval``, as an operand's aval object when equal (chains of operations
  then keep hitting the inline caches), else the shared one of its kind."""
  if type(aval) is not ShapedArray:
    return aval
  for a in in_avals:
    if a == aval:
      return a
  return shaped_array(aval.shape, aval.dtype, aval.weak_type)


def _eval_kernel(primitive, avals, params, out_avals):
  """The lean kernel ``primitive`` declares for these operands (one NumPy
  call on the values, no params), checked once on zeros to give the abstract
  result's dtype; None: call the impl."""
  rule = primitive.eval_kernel
  if rule is None or len(out_avals) != 1 or type(out_avals[0]) is not ShapedArray:
    return None
  kernel = rule(*avals, **params)
  if kernel is None:
    return None
  # Small operands are sampled at their shapes; large ones with each
  # dimension at most 1 (a kernel that needs the real shapes, such as a
  # reshape, then fails the check and the impl runs: its cost is the data's).
  small = all(math.prod(a.shape) <= 4096 for a in avals)
  try:
    with np.errstate(all="ignore"):
      sample = kernel(*[np.zeros(a.shape if small else tuple([min(d, 1) for d in a.shape]),
                                 a.dtype) for a in avals])
  except Exception:  # noqa: BLE001 - a kernel that cannot run these operands: the impl runs
    return None
  out = out_avals[0]
  if _asarray(sample).dtype != out.dtype:
    return None
  return aligned_result(kernel, out.shape, out.dtype)


_VIEW_KERNELS = frozenset((operator.itemgetter, operator.methodcaller))


def make_plan(primitive, avals, params) -> tuple:
  """``(kernel, lean, quiet, out_avals, casts)`` for ``primitive`` on
  operands of ``avals``: a lean kernel (called on the values alone, its one
  result wrapped as is) or the impl; ``quiet``: NumPy's floating-point
  warnings off around a lean kernel (the impls silence their own); ``casts``:
  the dtype each Python scalar operand is made in (None for arrays)."""
  out_avals = primitive.rule("abstract_eval")(*avals, **params)
  out_avals = [_shared_aval(a, avals) for a in out_avals]
  casts = tuple([a.dtype for a in avals])
  kernel = _eval_kernel(primitive, avals, params, out_avals)
  if kernel is None:
    return (primitive.rule("impl"), False, False, out_avals, casts)
  # Indexing and ndarray view methods (slice, squeeze, reshape, transpose)
  # do no arithmetic: no floating-point state to set around them.
  quiet = type(kernel) not in _VIEW_KERNELS and any(
      dtypes.kind(a.dtype) in "fc" for a in (*avals, *out_avals))
  return (kernel, True, quiet, out_avals, casts)


class _NumpyOperand:
  """A NumPy array operand's place in a plan's signature: its shape and dtype
  as given, and the canonical dtype its value is made in."""
  __slots__ = ("shape", "dtype", "cast")

  def __init__(self, shape, dtype, cast):
    self.shape, self.dtype, self.cast = shape, dtype, cast


def _numpy_value(x: np.ndarray, cast: np.dtype) -> np.ndarray:
  """The value of a NumPy operand: in its canonical dtype, and never the
  caller's writeable array itself (results must not alias what the caller may
  mutate later)."""
  if x.dtype != cast:
    return x.astype(cast)
  return x.copy() if x.flags.writeable else x


def _numpy_operand_value(x, s):
  """The value of ``x`` when it is a NumPy array fitting the plan's NumPy
  operand ``s`` (shape and dtype), else None."""
  if type(x) is not _ndarray or type(s) is not _NumpyOperand or x.dtype != s.dtype \
      or x.shape != s.shape:
    return None
  return _numpy_value(x, s.cast)


def _match(entry, args):
  """The operands' values when ``args`` fit the signature of the cached
  ``entry`` (Arrays by aval identity, Python scalars by type, NumPy arrays
  by shape and dtype), else None."""
  sig, casts = entry[0], entry[7]
  if len(args) != len(sig):
    return None
  vals = []
  for i, x in enumerate(args):
    t = type(x)
    s = sig[i]
    if t is Array:
      v = x._np
      if x.aval is not s or v is None:
        return None
    elif t is s:
      v = scalar_value(x, casts[i])
    elif t is _ndarray:
      if type(s) is not _NumpyOperand or x.dtype != s.dtype or x.shape != s.shape:
        return None
      v = _numpy_value(x, s.cast)
    else:
      return None
    vals.append(v)
  return vals


class EvalTrace(Trace):
  """The bottom trace: runs each primitive on NumPy values.

  Every eager operation comes here through ``bind``. A *plan* per
  (primitive, operands' (shape, dtype, weak type) or Python scalar type,
  params, x64) holds what a call needs besides the values: the kernel (the
  primitive's lean eval kernel or its impl), the dtype Python scalars are
  made in, and the result avals (so abstract evaluation runs once per plan).
  The plans used last by each primitive (up to ``RECENT``, most recent first)
  are checked first, by the identity of the operands' aval objects: a loop
  repeating operations skips building and hashing a key, also when one
  primitive alternates between a few signatures (a ``jnp`` function that
  compares, selects and broadcasts operands of two shapes). Tracers, Arrays
  not yet computed or deleted take the general path (``_process``), which
  converts operands as ``canonical_value`` does and waits for (or raises on)
  such Arrays.
  """
  RECENT = 4

  def __init__(self):
    super().__init__()
    self._plans: dict = {}   # key -> plan (``make_plan``)
    # primitive -> its recent calls, [(sig, params, x64, *plan), ...]
    self._last: dict = {}

  def clear_cache(self) -> None:
    self._plans.clear()
    self._last.clear()

  def process_primitive(self, primitive, args, params) -> list:
    cfg = eager_config
    if cfg.flags_ok:
      x64 = cfg.x64
    else:
      x64 = bool(config.read("jax_enable_x64"))
      if config.read("jax_no_execution"):
        raise RuntimeError(f"JAX tried to execute {primitive.name}, but the no_execution config "
                           "option is set")
      # NumPy operands are host-to-device transfers.
      guard_eager_operands(args, get_aval)
    recent = self._last.get(primitive)
    if recent is None:
      return self._process(primitive, args, params, x64)
    entry = recent[0]
    try:
      if entry[2] is not x64 or entry[1] != params:
        return self._recent(primitive, args, params, x64, recent)
    except (TypeError, ValueError):   # parameters that do not compare (arrays)
      return self._process(primitive, args, params, x64)
    # The operands against the last call's: Arrays by aval identity (and a
    # value that exists), Python scalars by type. One and two operands, most
    # calls, are checked inline, more in a loop.
    sig = entry[0]
    n = len(args)
    # ``device``: where committed operands are (results are placed there
    # too); operands committed to two devices take the general path, which
    # raises.
    device = None
    if n == 2 and len(sig) == 2:
      x, y = args
      t = type(x)
      if t is Array:
        xv = x._np   # None while being computed, or deleted: the general path
        if x.aval is not sig[0] or xv is None:
          return self._recent(primitive, args, params, x64, recent)
        device = x._device
      elif t is sig[0]:
        xv = scalar_value(x, entry[7][0])
      else:
        xv = _numpy_operand_value(x, sig[0])
        if xv is None:
          return self._recent(primitive, args, params, x64, recent)
      t = type(y)
      if t is Array:
        yv = y._np
        if y.aval is not sig[1] or yv is None:
          return self._recent(primitive, args, params, x64, recent)
        d = y._device
        if d is not device and d is not None:
          if device is not None:
            return self._process(primitive, args, params, x64)
          device = d
      elif t is sig[1]:
        yv = scalar_value(y, entry[7][1])
      else:   # (a NumPy operand: a gather's or scatter's indices)
        yv = _numpy_operand_value(y, sig[1])
        if yv is None:
          return self._recent(primitive, args, params, x64, recent)
      vals = (xv, yv)
    elif n == 1 and len(sig) == 1:
      x, = args
      if type(x) is Array:
        xv = x._np if x.aval is sig[0] else None
        device = x._device
      else:   # a NumPy operand (jnp.sin(np_array), a promotion's cast of one)
        xv = _numpy_operand_value(x, sig[0])
      if xv is None:
        return self._recent(primitive, args, params, x64, recent)
      vals = (xv,)
    elif n == len(sig) and n:
      # Three or more operands (select, clamp, dynamic_slice's starts, a
      # scatter's indices and updates): the same checks in a loop.
      casts = entry[7]
      vals = []
      for k in range(n):
        x = args[k]
        t = type(x)
        if t is Array:
          xv = x._np
          if x.aval is not sig[k] or xv is None:
            return self._recent(primitive, args, params, x64, recent)
          d = x._device
          if d is not device and d is not None:
            if device is not None:
              return self._process(primitive, args, params, x64)
            device = d
        elif t is sig[k]:
          xv = scalar_value(x, casts[k])
        else:
          xv = _numpy_operand_value(x, sig[k])
          if xv is None:
            return self._recent(primitive, args, params, x64, recent)
        vals.append(xv)
    else:
      return self._recent(primitive, args, params, x64, recent)
    if entry[4]:   # a lean kernel, inline: its one result
      if entry[5]:
        token = _fp_set(FP_IGNORE)
        try:
          out = entry[3](*vals)
        finally:
          _fp_reset(token)
      else:
        out = entry[3](*vals)
      if type(out) is not _ndarray:   # rank-0 results come back as NumPy scalars
        out = _asarray(out)
      _setflags(out, False)
      result = [Array(out, entry[6][0], device)]
      if not cfg.flags_ok and (config.read("jax_debug_nans") or config.read("jax_debug_infs")):
        _check_nans(primitive, result)
      return result
    outs = entry[3](*vals, **params)
    if len(outs) != 1:
      result = _concrete_results(outs, entry[6])
      if device is not None:
        _place(result, device)
    else:   # most impls: one result, inline as a lean kernel's (``_concrete_result``)
      out = outs[0]
      if type(out) is not _ndarray:
        out = _asarray(out)
      aval = entry[6][0]
      if out.dtype != aval.dtype:
        out = out.astype(aval.dtype)
      _setflags(out, False)
      result = [Array(out, aval, device)]
    if not cfg.flags_ok and (config.read("jax_debug_nans") or config.read("jax_debug_infs")):
      _check_nans(primitive, result)
    return result

  def _recent(self, primitive, args, params, x64, recent) -> list:
    """The call against each of the primitive's recent plans (the inline
    check of the most recent one failed or does not apply); a hit moves to
    the front."""
    for i, entry in enumerate(recent):
      try:
        if entry[2] is not x64 or entry[1] != params:
          continue
      except (TypeError, ValueError):
        return self._process(primitive, args, params, x64)
      vals = _match(entry, args)
      if vals is not None:
        if i:
          del recent[i]
          recent.insert(0, entry)
        device = _operands_device(primitive, args)
        result = _run(primitive, entry[3], entry[4], entry[5], entry[6], vals, params)
        return result if device is None else _place(result, device)
    return self._process(primitive, args, params, x64)

  def _process(self, primitive, args, params, x64) -> list:
    """The plan of operands seen for the first time (or not Arrays, Python
    scalars or NumPy arrays): looked up by key, made on a miss."""
    sig, keys, vals = [], [], []
    plain = True   # only ready Arrays, Python scalars, NumPy arrays: a recent plan may hold it
    sharded = None   # the operands split over devices
    for x in args:
      t = type(x)
      if t is Array and x._np is not None and type(x._buffer) is not ShardedBuffer:
        a = x.aval
        sig.append(a)
        keys.append((a.shape, a.dtype, a.weak_type))
        vals.append(x._np)
      elif t in SCALAR_TYPES:
        sig.append(t)
        keys.append(t)
        vals.append(None)   # made by the plan's cast below
      elif t is _ndarray:
        cast = dtypes.dtype(x)   # validates and canonicalises (float64 -> float32)
        sig.append(_NumpyOperand(x.shape, x.dtype, cast))
        keys.append((x.shape, cast, False))
        vals.append(_numpy_value(x, cast))
      else:
        plain = False
        if t is Array and type(x._buffer) is ShardedBuffer:
          sharded = [x] if sharded is None else sharded + [x]
        v = canonical_value(x)   # waits for an Array, raises for a deleted one or a tracer
        a = x.aval if t is Array else shaped_array(v.shape, v.dtype, dtypes.is_weakly_typed(x))
        sig.append(a)
        keys.append((a.shape, a.dtype, a.weak_type))
        vals.append(v)
    try:
      key = (primitive, tuple(keys), tuple(params.items()) if params else (), x64)
      plan = self._plans.get(key)
    except TypeError:   # an unhashable parameter: no caching
      key = plan = None
    if plan is None:
      avals = [shaped_array((), dtypes.dtype(s), s is not bool) if type(s) is type
               else shaped_array(s.shape, s.cast, False) if type(s) is _NumpyOperand else s
               for s in sig]
      plan = make_plan(primitive, avals, params)
      if key is not None:
        if len(self._plans) >= 100_000:
          self._plans.clear()
        self._plans[key] = plan
    kernel, lean, quiet, out_avals, casts = plan
    for i, s in enumerate(sig):
      if type(s) is type:
        vals[i] = scalar_value(args[i], casts[i])
    # A result layout asked for (``out_sharding=``) is applied below, on
    # every call: such calls keep out of the recent plans' fast path.
    asked = params.get("sharding") if params else None
    if plain and key is not None and asked is None:
      # Results take this call's operand aval object when equal (the plan's
      # may be another call's): a chain of operations then passes the same
      # aval objects along and keeps hitting the recent plans.
      operand_avals = [s for s in sig if type(s) is ShapedArray]
      out_avals = [_shared_aval(a, operand_avals) for a in out_avals]
      entry = (tuple(sig), params, x64, kernel, lean, quiet, out_avals, casts)
      recent = self._last.get(primitive)
      if recent is None:
        self._last[primitive] = [entry]
      else:
        recent.insert(0, entry)
        del recent[self.RECENT:]
    device = None if sharded is not None else _operands_device(primitive, args)
    result = _run(primitive, kernel, lean, quiet, out_avals, vals, params)
    if sharded is not None:
      return _keep_sharding(primitive, args, params, sharded, result)
    if asked is not None:
      return _asked_layout(primitive, args, params, asked, result)
    return result if device is None else _place(result, device)


def _asked_layout(primitive, args, params, asked, result: list) -> list:
  """Results of an eager operation on unsplit operands asked to be laid out
  by ``asked`` (``lax.broadcasted_iota(..., out_sharding=)``): laid out as
  its sharding rule gives, typed as under jit (JAX's eager operations are
  compiled programs)."""
  rule = primitive.sharding_rule
  if rule is None or not isinstance(asked, NamedSharding) or type(asked.mesh) is not Mesh:
    return result
  avals = [x.aval if type(x) is Array else shaped_array(np.shape(x), np.result_type(x), False)
           for x in args]
  out_specs = rule([(None,) * len(a.shape) for a in avals], avals, [r.aval for r in result],
                   **params)
  return [sharded_array_of(r._value, NamedSharding(asked.mesh, PartitionSpec(*spec)),
                           r.weak_type) if type(r) is Array else r
          for r, spec in zip(result, out_specs)]


def _operands_device(primitive, args):
  """The device of the committed Arrays among ``args`` (None: none is
  committed); committed to two devices raises ValueError."""
  for x in args:
    if type(x) is Array and x._device is not None:
      return committed_device(args, primitive.name)
  return None


def _place(result: list, device) -> list:
  """Results of an operation on operands committed to ``device``: placed
  there too (fresh Arrays, so placing them changes no one else's)."""
  for r in result:
    r._device = device
  return result


_named_shardings: dict = {}


def _named_sharding(mesh, spec: tuple) -> NamedSharding:
  """``NamedSharding(mesh, P(*spec))``, made once per (mesh, spec): eager
  operations on split Arrays ask for a few on every call, and building one
  (its spec checked against the mesh) took ~20 us."""
  key = (mesh, spec)
  hit = _named_shardings.get(key)
  if hit is None:
    if len(_named_shardings) > 1024:
      _named_shardings.clear()
    hit = _named_shardings[key] = NamedSharding(mesh, PartitionSpec(*spec))
  return hit


def _keep_sharding(primitive, args, params, sharded: list, result: list) -> list:
  """Results of an eager operation on Arrays split over devices, laid out as
  the primitive's sharding rule gives (as JAX's eager operations, which are
  compiled programs, lay them out); an operation whose rule rejects the
  operands' layouts raises JAX's ShardingTypeError over Explicit axes.
  Without a rule (or over another mesh) results whose shape is the operands'
  keep their common sharding, and other results are whole on the default
  device."""
  sharding = sharded[0].sharding
  mesh = sharding.mesh
  rule = primitive.sharding_rule
  if rule is not None and all(x.sharding.mesh == mesh for x in sharded):
    specs, avals = [], []
    for x in args:
      aval = x.aval if type(x) is Array else shaped_array(np.shape(x), np.result_type(x), False)
      spec = (tuple(x.sharding.spec._normalized_spec_for_aval(aval.ndim))
              if type(x) is Array and type(x._buffer) is ShardedBuffer
              else (None,) * aval.ndim)
      specs.append(spec)
      avals.append(aval.update(sharding=_named_sharding(mesh, spec)))
    try:
      out_specs = rule(specs, avals, [r.aval for r in result], **params)
    except ShardingTypeError:
      if mesh._any_axis_explicit:
        raise
      out_specs = None
    if out_specs is not None:
      # A whole result over a mesh of Auto axes is spelled P(), as JAX's.
      auto = not mesh._any_axis_explicit
      return [sharded_array_of(r._value, _named_sharding(
                  mesh, () if auto and all(p is None for p in spec) else tuple(spec)),
                  r.weak_type)
              if type(r) is Array else r for r, spec in zip(result, out_specs)]
  shape = sharded[0].shape
  sharding = result_sharding(sharding, len(shape))
  for x in sharded[1:]:
    if x.shape != shape or result_sharding(x.sharding, len(shape)) != sharding:
      return result
  return [sharded_array_of(r._value, sharding, r.weak_type)
          if type(r) is Array and r.shape == shape else r for r in result]


def _run(primitive, kernel, lean, quiet, out_avals, vals, params) -> list:
  """Run a plan's kernel on ``vals``: its results as read-only Arrays."""
  if lean:
    if quiet:
      token = _fp_set(FP_IGNORE)
      try:
        out = kernel(*vals)
      finally:
        _fp_reset(token)
    else:
      out = kernel(*vals)
    if type(out) is not _ndarray:   # rank-0 results come back as NumPy scalars
      out = _asarray(out)
    _setflags(out, False)
    result = [Array(out, out_avals[0])]
  else:
    outs = kernel(*vals, **params)
    if len(outs) == 1:   # most primitives: no loop
      result = [_concrete_result(outs[0], out_avals[0])]
    else:
      result = _concrete_results(outs, out_avals)
  if not eager_config.flags_ok and (config.read("jax_debug_nans")
                                   or config.read("jax_debug_infs")):
    _check_nans(primitive, result)
  return result


def _concrete_results(outs, avals) -> list:
  """``_concrete_result`` of each result, inline for arrays of their aval's
  dtype (jnp.unstack's 1732 slices at 1e6 elements: 2.0-3.0 -> 1.6 ms)."""
  result = []
  for o, a in zip(outs, avals):
    if type(o) is _ndarray and o.dtype == a.dtype:
      _setflags(o, False)
      result.append(Array(o, a))
    else:
      result.append(_concrete_result(o, a))
  return result


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
      raise FloatingPointError(f"invalid value (nan) encountered in {primitive.name}"
                               f"{_user_line()}")
    if config.read("jax_debug_infs") and np.isinf(v).any():
      raise FloatingPointError(f"invalid value (inf) encountered in {primitive.name}"
                               f"{_user_line()}")


_OPENJAX_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _user_line() -> str:
  """`` at file:line (function)`` of the innermost frame outside openjax
  (the user's line that ran the operation), or "" when there is none."""
  frame = sys._getframe(1)
  while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
      _OPENJAX_DIR + os.sep):
    frame = frame.f_back
  if frame is None:
    return ""
  return f" at {frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"


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
  trace_state.trace = trace
  try:
    yield
  finally:
    trace_state.trace = prev


def find_top_trace(args) -> Trace:
  """The current trace (kept for API symmetry with JAX's older model)."""
  return trace_state.trace
