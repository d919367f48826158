"""Array creation: ``array``/``asarray``, the ``zeros``/``ones``/``full``
family and the ``*_like`` functions, copies, and construction from buffers.

Host data (lists, NumPy arrays, Python scalars) is converted on the host and
becomes one constant Array; only values that are being traced go through lax
ops. Ranges, grids and diagonals live in ``ranges.py``.
"""
from __future__ import annotations

import operator
import types
from typing import Any

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import Array, Tracer, array_of, eval_trace, make_array, trace_state
from openjax._src.core.array import ShardedBuffer
from openjax._src.core.avals import ordered_axes, shaped_array
from openjax._src.core.mesh import get_concrete_mesh
from openjax._src.core.sharding import NamedSharding, PartitionSpec, traced_out_sharding
from openjax._src.core.trace import eager_config
from openjax._src.numpy import util
from openjax._src.numpy.eager_programs import quiet_dtype
from openjax._src.primitives.base.util import is_int_tuple
from openjax._src.primitives.collectives.varying import pvary
from openjax._src.runtime.transfer import device_put

__all__ = [
    "array", "asarray", "copy", "empty", "empty_like", "from_dlpack", "frombuffer",
    "fromfile", "fromiter", "fromstring", "full", "full_like", "load", "ones", "ones_like",
    "zeros", "zeros_like",
]


# ------------------------------------------------------------------- helpers
def is_weak(x: Any) -> bool:
  """JAX's weak-type test: Python int/float/complex and weak arrays (a Python
  bool is not weak: ``jnp.array(True)`` is a strong bool)."""
  return type(x) is not bool and dtypes.is_weakly_typed(x)


def user_dtype(dtype: Any, fun_name: str):
  """A user-requested dtype, canonicalised (warns when x64 truncates it)."""
  if dtype is None:
    return None
  # (a class, a NumPy dtype or a name is never an array: the Array check
  # goes through its metaclass: jnp.int8 2.4 -> 0.5 us)
  if not isinstance(dtype, (type, np.dtype, str)) and (isinstance(dtype, Array)
                                                       or isinstance(dtype, Tracer)):
    raise ValueError("Passing an array as a dtype argument is no longer supported; "
                     "instead of dtype=arr use dtype=arr.dtype.")
  return dtypes.explicit_dtype(dtype, fun_name)


def _np_cast(value: Any, dtype: np.dtype) -> np.ndarray:
  """A fresh host array of ``dtype`` (ml_dtypes floats cast via float32, as
  NumPy has no direct cast between some of them)."""
  arr = np.asarray(value)
  if arr.dtype != dtype and arr.dtype in dtypes.custom_float_dtypes \
      and dtype in dtypes.custom_float_dtypes:
    arr = arr.astype(np.float32)
  return np.array(arr, dtype=dtype, copy=True)


def host_array(value: Any, dtype: np.dtype, weak: bool = False) -> Array:
  """A constant Array holding a private copy of host data ``value``."""
  return make_array(_np_cast(value, dtype), weak_type=weak and dtype != np.bool_)


def canonicalize_shape(shape: Any, context: str = "") -> tuple[int, ...]:
  """A shape tuple from an int or a sequence of ints (JAX's TypeError otherwise)."""
  if isinstance(shape, types.GeneratorType):
    raise TypeError("expected sequence object with len >= 0 or a single integer")
  if not isinstance(shape, (tuple, list)) and np.ndim(shape) == 0:
    shape = (shape,)
  try:
    return tuple(operator.index(d) for d in shape)
  except TypeError:
    pass
  msg = f"Shapes must be 1D sequences of concrete values of integer type, got {tuple(shape)}."
  if context:
    msg += f" {context}."
  if any(isinstance(d, Tracer) and d.to_concrete_value() is None for d in shape):
    msg += ("\nIf using `jit`, try using `static_argnums` or applying `jit` to "
            "smaller subfunctions.")
  raise TypeError(msg)


def _check_forgot_shape_tuple(name: str, shape: Any, dtype: Any) -> None:
  if isinstance(dtype, int) and isinstance(shape, int) and not isinstance(dtype, bool):
    raise TypeError(
        f"Cannot interpret '{dtype}' as a data type.\n\nDid you accidentally write "
        f"`jax.numpy.{name}({shape}, {dtype})` when you meant "
        f"`jax.numpy.{name}(({shape}, {dtype}))`, i.e. with a single tuple argument "
        "for the shape?")


def fill(shape: tuple[int, ...], fill_value: Any, dtype: np.dtype, weak: bool,
         sharding: Any = None):
  """``lax.full``: broadcast a scalar ``fill_value`` (cast to ``dtype``) to
  ``shape`` (typed as laid out by ``sharding``, traced code's); the scalar
  stays a literal when traced."""
  if type(fill_value) not in dtypes.python_scalar_dtypes and np.ndim(fill_value):
    raise TypeError("full must be called with scalar fill_value, got fill_value.shape "
                    f"{np.shape(fill_value)}.")
  scalar = lax._convert_element_type(fill_value, dtype, weak)
  if not shape:
    return scalar if hasattr(scalar, "aval") else host_array(scalar, dtype, weak)
  return lax.broadcast_in_dim(scalar, shape, (), out_sharding=sharding)


def _traced_layout(name: str, device: Any, out_sharding: Any):
  """In traced code (jit, a shard_map body) ``out_sharding`` types the
  created value, as JAX's ``lax.full(sharding=)`` does: the NamedSharding
  its broadcast is asked for (None eagerly, where ``put_on`` lays the
  concrete result out, and for ``device``, which JAX ignores there). Either
  way it must name Explicit axes only (JAX's error)."""
  if out_sharding is None or device is not None:
    return None
  sharding = traced_out_sharding(out_sharding, name)
  return None if trace_state.trace is eval_trace else sharding


def _shape_of(a: Any) -> tuple[int, ...]:
  return tuple(a.shape) if hasattr(a, "shape") else np.shape(a)


def put_on(x, device, out_sharding=None, *, typed: bool = True):
  """``x`` committed to ``device`` (a Device or Sharding) or laid out by
  ``out_sharding`` (a Sharding, or a PartitionSpec under ``jax.set_mesh``)
  when one is given; otherwise, eagerly under ``jax.set_mesh(mesh)``,
  replicated over that mesh as JAX's creation functions give it (an
  operation's result, ``typed``, spells the spec per dimension over a mesh
  with Explicit axes, ``P(None,)``; a converted value and Auto meshes
  ``P()``)."""
  target = device if device is not None else out_sharding
  if target is None:
    if isinstance(x, Tracer):
      return x   # traced
    mesh = get_concrete_mesh()
    # (the mesh first: an Array's ``sharding`` is made per read, ~1.5 us)
    if mesh.empty or (type(x) is Array and isinstance(x.sharding, NamedSharding)):
      return x   # no mesh, or laid out over a mesh already (kept, as JAX)
    whole = typed and mesh._any_axis_explicit
    target = NamedSharding(mesh, PartitionSpec(*[None] * np.ndim(x)) if whole
                           else PartitionSpec())
  return device_put(x, target)


# ------------------------------------------------------------ array / asarray
def _flatten(obj: Any, leaves: list) -> None:
  if isinstance(obj, (list, tuple)):
    for o in obj:
      _flatten(o, leaves)
  else:
    leaves.append(obj)


def _jax_array_leaf(x: Any) -> Any:
  if type(x) is Array:   # (a failed attribute lookup costs ~1 us a leaf)
    return x
  m = getattr(x, "__jax_array__", None)
  return x if m is None else m()


def _replace_leaves(obj: Any, fn):
  if isinstance(obj, (list, tuple)):
    return [_replace_leaves(o, fn) for o in obj]
  return fn(obj)


def _infer_dtype(leaves: list) -> tuple[np.dtype, list]:
  """JAX's dtype for nested data: the lattice join of the leaves (Python
  scalars are weak); objects without a dtype are read through NumPy."""
  if not leaves:
    return dtypes.default_float_dtype(), leaves
  reps = _representatives(leaves)
  key = None
  if not any(type(k) is int for k in reps):   # (no leaf known by its id alone)
    key = (tuple(reps), dtypes._lattice_key(), dtypes.x64_enabled())
    dt = _INFERRED_DTYPES.get(key)
    if dt is not None:
      return dt, leaves
  try:
    dt, _ = dtypes.lattice_result_type(*reps.values())
  except TypeError:
    leaves = [x if _has_dtype(x) else np.asarray(x) for x in leaves]
    dt, _ = dtypes.lattice_result_type(*_representatives(leaves).values())
    key = None
  if not isinstance(dt, np.dtype):  # a weak lattice node, e.g. bool_ x float
    dt = dtypes.default_dtype_of_kind(dt.kind)
  if key is not None:
    if len(_INFERRED_DTYPES) >= 1024:
      _INFERRED_DTYPES.clear()
    _INFERRED_DTYPES[key] = dt
  return dt, leaves


# (the leaves' kinds: Python scalar types, dtypes, Arrays' (dtype, weak type);
# the promotion mode; x64) -> their join: ``jnp.array([x, 1.5, 2])`` joins
# once per kind of data (the lattice ~2-3 us a call).
_INFERRED_DTYPES: dict = {}


def _representatives(leaves: list) -> dict:
  # The join only depends on each leaf's (dtype, weak type): keep one leaf per
  # Python scalar type and per NumPy dtype, so long lists stay cheap.
  reps: dict = {}
  for x in leaves:
    t = type(x)
    if t in dtypes.python_scalar_dtypes:
      key = t
    elif isinstance(x, (np.ndarray, np.generic)):
      key = x.dtype
    elif t is Array:   # (the join reads only its dtype and weak type)
      key = (x.aval.dtype, x.aval.weak_type)
    else:
      key = id(x)
    reps.setdefault(key, x)
  return reps


def _has_dtype(x: Any) -> bool:
  try:
    dtypes.dtype(x)
  except TypeError:
    return False
  return True


def _check_python_int(x: Any, dtype: np.dtype) -> None:
  # Python ints have no size: JAX refuses those the default int cannot hold.
  if type(x) is int and dtypes.kind(dtype) in "iu":
    info = np.iinfo(dtype)
    if not info.min <= x <= info.max:
      raise OverflowError(f"Python int {x} too large to convert to {dtype}")


def _stack_traced(obj: Any, dtype: np.dtype):
  """Nested lists holding tracers: build with lax (expand + concatenate)."""
  if not isinstance(obj, (list, tuple)):
    if isinstance(obj, Tracer):
      return lax._convert_element_type(obj, dtype, False)
    return host_array(np.asarray(obj, dtype=dtype), dtype)
  if not obj:
    return host_array(np.array([], dtype=dtype), dtype)
  parts = [_stack_traced(o, dtype) for o in obj]
  shapes = {tuple(np.shape(p)) for p in parts}
  if len(shapes) != 1:
    raise ValueError("jnp.array: setting an array element with a sequence. The requested "
                     f"array has an inhomogeneous shape: elements have shapes {sorted(shapes)}. "
                     "Give every element of a list the same shape.")
  return lax.concatenate([lax.expand_dims(p, (0,)) for p in parts], 0)


def fresh_copy(x: Array) -> Array:
  """A new Array object with the value of ``x``."""
  # Arrays are immutable: a copy shares storage but is a distinct object, so
  # deleting (or donating) one leaves the other intact.
  sharding = x.sharding
  if isinstance(sharding, NamedSharding):
    return device_put(np.asarray(x), sharding)
  return Array(np.asarray(x), x.aval, x._device)   # committed only if x is


def _to_array(obj: Any, dtype, weak: bool, copy: bool):
  if isinstance(obj, (bool, int, float, complex)):
    if dtype is None:
      dtype = dtypes.dtype(obj)
      _check_python_int(obj, dtype)
      return lax._convert_element_type(obj, dtype, weak) if weak else host_array(obj, dtype)
    return host_array(np.asarray(obj, dtype=dtype), dtype)
  obj = _jax_array_leaf(obj)
  if isinstance(obj, Tracer) or type(obj) is Array:
    out = lax._convert_element_type(obj, obj.dtype if dtype is None else dtype, weak)
    return fresh_copy(out) if copy and out is obj and type(out) is Array else out
  if isinstance(obj, np.ndarray):
    return host_array(obj, dtypes.dtype(obj) if dtype is None else dtype)
  leaves: list = []
  _flatten(obj, leaves)
  if any(x is None for x in leaves):
    raise ValueError("None is not a valid value for jnp.array")
  leaves = [_jax_array_leaf(x) for x in leaves]
  if dtype is None:
    dtype, leaves = _infer_dtype(leaves)
  if any(isinstance(x, Tracer) for x in leaves):
    it = iter(leaves)
    return _stack_traced(_replace_leaves(obj, lambda _: next(it)), dtype)
  if any(type(x) is Array for x in leaves):
    it = iter(leaves)
    obj = _replace_leaves(obj, lambda _: np.asarray(next(it)))
  try:
    value = np.array(obj, dtype=dtype)  # always a private copy (buffers may be shared)
  except TypeError as err:
    raise TypeError(f"Unexpected input type for array: {type(obj)}: {err}") from None
  return make_array(value)


def array(object: Any, dtype: Any = None, copy: bool = True, order: str | None = "K",
          ndmin: int = 0, *, device: Any = None, out_sharding: Any = None):
  """Convert ``object`` (scalars, nested lists/tuples, NumPy or JAX arrays) to
  an Array; ``jnp.array(3.0)`` is weakly typed, ``jnp.array([1, 2])`` is not."""
  if order is not None and order != "K":
    raise NotImplementedError("Only implemented for order='K'")
  if (type(object) is Array and type(ndmin) is int and device is None and out_sharding is None
      and object._np is not None and type(object._buffer) is not ShardedBuffer
      and get_concrete_mesh().empty):
    # An eager Array on one device (``jnp.array(x)``, ``jnp.copy(x)``,
    # ``jnp.float32(x)``): ``_to_array``'s cast and ``expand_dims`` without
    # the general path's walk; a copy is the value as it is (immutable) in a
    # new Array object, as ``fresh_copy`` gives (jnp.array 12.8 -> ~2 us,
    # with a dtype 25 -> ~7 us at 10 elements).
    out = object if dtype is None else lax._convert_element_type(
        object, user_dtype(dtype, "array"), False)
    nd = len(out.aval.shape)
    if ndmin > nd:
      return lax.expand_dims(out, tuple(range(ndmin - nd)))
    return Array(out._np, out.aval, out._device) if copy and out is object else out
  dtype = user_dtype(dtype, "array")
  ndmin = operator.index(ndmin)
  if (type(object) is np.ndarray and not ndmin and device is None and out_sharding is None
      and get_concrete_mesh().empty):
    return _numpy_array(object, dtype)   # most calls: the cases below do not apply
  weak = dtype is None and is_weak(object)
  out = _to_array(object, dtype, weak, bool(copy))
  nd = np.ndim(out)
  if ndmin > nd:
    out = lax.expand_dims(out, tuple(range(ndmin - nd)))
  # (an operation on an Array, ``jnp.array(jnp.zeros(4))``, is typed as one)
  _traced_layout("jnp.array", device, out_sharding)   # (checked: put_on lays it out)
  return put_on(out, device if device is not None else out_sharding,
                typed=isinstance(object, Array))


# (NumPy dtype, x64) -> the canonical dtype of a NumPy array of that dtype.
_HOST_DTYPES: dict = {}


def _numpy_array(a: np.ndarray, dtype) -> Array:
  """``jnp.array``'s result for the NumPy array ``a`` (``dtype``: a user
  dtype already checked, or None) outside a mesh: a private read-only copy
  in ``dtype`` or ``a``'s canonical dtype, never weak (4.5 -> ~1.3 us at 10
  elements, where ``array`` walked the cases of other inputs)."""
  if dtype is not None:
    return host_array(a, dtype)
  key = (a.dtype, eager_config.read_x64())
  dt = _HOST_DTYPES.get(key)
  if dt is None:
    dt = dtypes.dtype(a)   # validates it (TypeError for object arrays and the like)
    _HOST_DTYPES[key] = dt
  value = a.astype(dt)   # a private copy
  return array_of(value, shaped_array(value.shape, dt, False))


def asarray(a: Any, dtype: Any = None, order: str | None = None, *, copy: bool | None = None,
            device: Any = None, out_sharding: Any = None):
  """Convert ``a`` to an Array, copying only when needed."""
  t = type(a)
  if ((t is np.ndarray or (t is Array and not copy)) and dtype is None and order is None
      and device is None and out_sharding is None and get_concrete_mesh().empty):
    # Most calls: ``array``'s checks do not apply; an Array is its own
    # result (2.7 -> ~0.5 us).
    return a if t is Array else _numpy_array(a, None)
  dtype = user_dtype(dtype, "asarray")
  return array(a, dtype=dtype, copy=bool(copy), order=order, device=device,
               out_sharding=out_sharding)


def copy(a: Any, order: str | None = None):
  """A copy of the array ``a``."""
  util.check_arraylike("copy", a)
  return array(a, copy=True, order=order)


# -------------------------------------------------------- zeros / ones / full
def _filled(name: str, shape: Any, value: Any, dtype: Any, device: Any, out_sharding: Any):
  _check_forgot_shape_tuple(name, shape, dtype)
  dtype = dtypes.explicit_dtype(float if dtype is None else dtype, name)
  shape = canonicalize_shape(shape)
  sharding = _traced_layout(f"jnp.{name}", device, out_sharding)
  if sharding is not None:
    return fill(shape, value, dtype, False, sharding)
  return put_on(fill(shape, value, dtype, False), device, out_sharding)


def zeros(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None):
  """An array of ``shape`` filled with zeros (float32 by default)."""
  return _filled("zeros", shape, 0, dtype, device, out_sharding)


def ones(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None):
  """An array of ``shape`` filled with ones (float32 by default)."""
  return _filled("ones", shape, 1, dtype, device, out_sharding)


def empty(shape: Any, dtype: Any = None, *, device: Any = None, out_sharding: Any = None):
  """An array of ``shape`` (zero-filled, as in JAX 0.10)."""
  return _filled("empty", shape, 0, dtype, device, out_sharding)


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device: Any = None,
         out_sharding: Any = None):
  """An array of ``shape`` filled with ``fill_value`` (broadcast when it is an
  array); the dtype defaults to the fill value's, weak for Python scalars."""
  if (type(fill_value) is Array and device is None and out_sharding is None
      and (type(shape) is int or is_int_tuple(shape)) and _eager_on_one_device(fill_value)
      and quiet_dtype(dtype)):
    # An eager Array fill: its cast and broadcast as one library program
    # (the front end's checks and ~4.5 us a bind against ~0.6 a step:
    # full((2,), f32 scalar, dtype=int32) 48 -> 12 us, an array fill 29 -> 10).
    return _full_program(shape, fill_value, dtype)
  return _full(shape, fill_value, dtype, device, out_sharding)


def _eager_on_one_device(x: Array) -> bool:
  """Whether the Array ``x`` is an eager value on one device, outside a mesh
  (nothing to lay out: its joins may run as library programs)."""
  return (trace_state.trace is eval_trace and x._np is not None and x._device is None
          and type(x._buffer) is not ShardedBuffer and get_concrete_mesh().empty)


def _full(shape: Any, fill_value: Any, dtype: Any, device: Any, out_sharding: Any):
  dtype = user_dtype(dtype, "full")
  util.check_arraylike("full", fill_value)
  shape = canonicalize_shape(shape)
  sharding = _traced_layout("full", device, out_sharding)
  if np.ndim(fill_value) == 0:
    weak = dtype is None and is_weak(fill_value)
    dt = dtypes.dtype(fill_value) if dtype is None else dtype
    if sharding is not None:
      return fill(shape, fill_value, dt, weak, sharding)
    return put_on(fill(shape, fill_value, dt, weak), device, out_sharding)
  value = asarray(fill_value, dtype=dtype)
  vshape = np.shape(value)
  if sharding is not None and len(vshape) <= len(shape) and all(
      a in (1, b) for a, b in zip(vshape[::-1], shape[::-1])):
    return lax.broadcast_in_dim(value, shape, tuple(range(len(shape) - len(vshape), len(shape))),
                                out_sharding=sharding)
  return put_on(util.broadcast_to_shape(value, shape), device, out_sharding)


_full_program = util.jit(lambda shape, fill_value, dtype: _full(shape, fill_value, dtype, None, None),
                         static_argnums=(0, 2))


def _like_args(name: str, a: Any, dtype: Any, shape: Any):
  if type(a) is Array and dtype is None and shape is None:
    aval = a.aval   # most calls: what the checks below read, from the aval
    return a, aval.dtype, aval.shape, aval.weak_type
  if not (hasattr(a, "dtype") and hasattr(a, "shape")):
    a = _jax_array_leaf(a)
    util.check_arraylike(name, a)
  dtype = user_dtype(dtype, name)
  shape = _shape_of(a) if shape is None else canonicalize_shape(shape)
  weak = dtype is None and is_weak(a)
  return a, (dtypes.dtype(a) if dtype is None else dtype), shape, weak


def _like_layout(a: Any, shape: tuple, out_sharding: Any):
  """The layout of a ``*_like`` result: ``a``'s when it lies over a mesh and
  the shape is kept (as JAX's), unless one is asked for."""
  if (out_sharding is None and type(a) is Array and isinstance(a.sharding, NamedSharding)
      and tuple(a.shape) == tuple(shape)):
    return a.sharding
  return out_sharding


def _filled_like(name: str, a: Any, shape: tuple, value: Any, dtype, weak: bool, device: Any,
                 out_sharding: Any):
  """A ``*_like`` result filled with the scalar ``value``. Of a traced ``a``
  it is typed as JAX's ``lax.full_like`` types it: split as ``a`` (same
  shape) or as ``out_sharding`` asks, and varying over ``a``'s manual axes
  inside a shard_map body."""
  if (type(a) is Array and device is None and out_sharding is None
      and type(a._buffer) is not ShardedBuffer and get_concrete_mesh().empty):
    # An eager Array on one device, no mesh (most calls): no layout to keep
    # or give, so ``put_on`` returns the fill as it is (reading ``a.sharding``
    # made a sharding object per call).
    return fill(shape, value, dtype, weak)
  if not isinstance(a, Tracer) or device is not None:
    return put_on(fill(shape, value, dtype, weak), device, _like_layout(a, shape, out_sharding))
  aval = a.aval
  sharding = (traced_out_sharding(out_sharding, f"jnp.{name}") if out_sharding is not None
              else aval.sharding if tuple(aval.shape) == tuple(shape) else None)
  out = fill(shape, value, dtype, weak, sharding)
  vma = getattr(aval, "vma", ())
  return pvary(out, ordered_axes(vma)) if vma else out


def zeros_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None,
               out_sharding: Any = None):
  """Zeros with the shape and dtype of ``a`` (either may be overridden)."""
  _, dt, shp, weak = _like_args("zeros_like", a, dtype, shape)
  return _filled_like("zeros_like", a, shp, 0, dt, weak, device, out_sharding)


def ones_like(a: Any, dtype: Any = None, shape: Any = None, *, device: Any = None,
              out_sharding: Any = None):
  """Ones with the shape and dtype of ``a`` (either may be overridden)."""
  _, dt, shp, weak = _like_args("ones_like", a, dtype, shape)
  return _filled_like("ones_like", a, shp, 1, dt, weak, device, out_sharding)


def empty_like(prototype: Any, dtype: Any = None, shape: Any = None, *, device: Any = None):
  """Like ``zeros_like`` (JAX 0.10 fills "empty" arrays with zeros)."""
  _, dt, shp, weak = _like_args("empty_like", prototype, dtype, shape)
  return _filled_like("empty_like", prototype, shp, 0, dt, weak, device, None)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None, *,
              device: Any = None, out_sharding: Any = None):
  """``fill_value`` (a scalar, or an array to broadcast) with the shape and
  dtype of ``a``."""
  if hasattr(a, "dtype") and hasattr(a, "shape"):
    util.check_arraylike("full_like", 0, fill_value)
  else:
    util.check_arraylike("full_like", a, fill_value)
  _, dt, shp, weak = _like_args("full_like", a, dtype, shape)
  if (type(fill_value) is Array and fill_value.aval.shape and device is None
      and out_sharding is None and _eager_on_one_device(fill_value)
      and (type(a) is not Array or _eager_on_one_device(a))):
    # An eager array fill: its cast and broadcast as one library program
    # (full_like(f32[2, 3], i32[3]) 42 -> 11 us).
    return _fill_array_program(fill_value, dt, tuple(shp))
  if (type(fill_value) is Array and device is None and out_sharding is None
      and _eager_on_one_device(fill_value) and (type(a) is not Array or _eager_on_one_device(a))):
    # An eager 0-d Array fill: its cast (on the host as a concrete scalar,
    # ~10 us of checks) and broadcast as one library program, the same
    # kernels' bits (full_like(x, f32[], shape=(2, 2)) 23 -> 9 us).
    return _fill_scalar_program(fill_value, dt, tuple(shp), weak)
  if type(fill_value) in dtypes.python_scalar_dtypes or np.ndim(fill_value) == 0:
    return _filled_like("full_like", a, shp, fill_value, dt, weak, device, out_sharding)
  out_sharding = _like_layout(a, shp, out_sharding)
  return put_on(util.broadcast_to_shape(asarray(fill_value, dtype=dt), shp), device, out_sharding)


def _fill_array(value: Any, dtype: np.dtype, shape: tuple):
  return util.broadcast_to_shape(asarray(value, dtype=dtype), shape)


_fill_array_program = util.jit(_fill_array, static_argnums=(1, 2))
_fill_scalar_program = util.jit(lambda value, dtype, shape, weak: fill(shape, value, dtype, weak),
                                static_argnums=(1, 2, 3))


# ------------------------------------------------------------ host converters
def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0):
  """An array read from a bytes-like ``buffer`` (see ``numpy.frombuffer``)."""
  return asarray(np.frombuffer(buffer=buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str):
  """An array parsed from text ``string`` (see ``numpy.fromstring``)."""
  return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def _impure(name: str):
  def fn(*args, **kwargs):
    raise NotImplementedError(
        f"jnp.{name}() is not implemented because it may be non-pure and thus unsafe for "
        f"use with JIT and other JAX transformations. Consider using "
        f"jnp.asarray(np.{name}(...)) instead, although care should be taken if "
        f"np.{name} is used within a jax transformations because of its potential "
        "side-effect of consuming its input; for more information see "
        "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions")
  fn.__name__ = fn.__qualname__ = name
  fn.__doc__ = f"Not implemented: ``np.{name}`` is impure; use ``jnp.asarray(np.{name}(...))``."
  return fn


fromfile = _impure("fromfile")
fromiter = _impure("fromiter")


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None):
  """An Array holding the data of a DLPack-capable array ``x`` (its exact dtype)."""
  if not (hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__")):
    raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                    "__dlpack_device__ methods.")
  value = np.array(np.from_dlpack(x), copy=True)
  dtypes.dtype(value, canonicalize=False)  # validates: JAX dtypes only
  return put_on(make_array(value), device)


def load(file: Any, *args: Any, **kwargs: Any):
  """``numpy.load`` returning an Array for ``.npy`` files (bfloat16, saved by
  NumPy as 2-byte void, is restored)."""
  out = np.load(file, *args, **kwargs)
  if isinstance(out, np.ndarray):
    if out.dtype == "V2":
      out = out.view(dtypes.bfloat16)
    try:
      out = asarray(out)
    except (TypeError, AssertionError):  # a dtype JAX does not support
      pass
  return out

