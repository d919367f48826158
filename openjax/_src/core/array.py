"""``Array``: openjax's immutable concrete array (``jax.Array``).

The value type lives in core, as in JAX, so the eval trace builds Arrays and
every layer recognises them by their class. An Array holds either a
read-only NumPy value (results of eager operations, ``device_put``) or a
device buffer supplied by the runtime (results of compiled calls, which
return before their work is done), or both once the buffer has been read.
The buffer is the runtime's object; the Array only calls its methods:
``read(aval)`` waits for the computation that writes it (raising its
``ExecutionError``) and returns the value as a read-only NumPy array,
``wait(aval)`` only waits, ``is_ready()`` never blocks. Arithmetic dunders and
the jnp method forms are attached by ``openjax.numpy``.

An Array over several devices holds a ``ShardedBuffer`` as its buffer: its
sharding and one single-device Array per device (``Shard.data``); reading
it gathers the pieces into one NumPy value.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.core.avals import AbstractToken, AvalQueries, ShapedArray, shaped_array
from openjax._src.core.devices import default_device, default_device_chosen, first_device
from openjax._src.core.sharding import Shard, SingleDeviceSharding, aval_sharding, replica_ids
from openjax._src.core.tracer import Tracer


def _deleted_error(what: str) -> RuntimeError:
  return RuntimeError(f"Array has been deleted with shape={what}.")


class _ArrayMeta(type):
  # ``isinstance(x, jax.Array)`` is True for tracers and for the classes
  # registered with ``Array.register`` (typed PRNG key arrays), as in JAX.
  _virtual: tuple = (Tracer,)

  def __instancecheck__(cls, inst):
    return type.__instancecheck__(cls, inst) or (cls is Array and
                                                 isinstance(inst, _ArrayMeta._virtual))

  def __subclasscheck__(cls, sub):
    return type.__subclasscheck__(cls, sub) or (cls is Array and
                                                issubclass(sub, _ArrayMeta._virtual))

  def register(cls, sub: type) -> type:
    """Make ``sub`` a virtual subclass of ``Array`` (``abc.ABC.register``)."""
    _ArrayMeta._virtual = _ArrayMeta._virtual + (sub,)
    return sub


class ShardedBuffer:
  """The storage of an Array split over devices: its ``sharding``, each
  device's ``indices`` (tuples of slices into the global array, in
  ``sharding._device_assignment`` order) and ``shards``: one single-device
  Array per device, committed to it. Built from a global NumPy value, the
  shards are made on first use, as read-only views of it (so an eager
  operation that keeps a sharding costs no copies). ``idev`` is None: the
  runtime never passes this storage to a compiled call as one buffer (it
  reads the gathered value, or the shards one by one)."""
  __slots__ = ("sharding", "indices", "_shards", "_value", "_weak_type", "_replicas")
  idev = None

  def __init__(self, sharding, indices: list, shards: list | None = None,
               value: np.ndarray | None = None, weak_type: bool = False):
    self.sharding = sharding
    self.indices = indices
    self._shards = shards
    self._value = value
    self._weak_type = weak_type
    self._replicas = None

  @property
  def shards(self) -> list:
    shards = self._shards
    if shards is None:
      value, weak, shards = self._value, self._weak_type, []
      for device, index in zip(self.sharding._device_assignment, self.indices):
        piece = value[index] if index else value   # () on a 0-d value gives a scalar
        shards.append(Array(piece, ShapedArray(piece.shape, value.dtype, weak), device))
      self._shards = shards
    return shards

  @property
  def replicas(self) -> list:
    """Each shard's replica id."""
    r = self._replicas
    if r is None:
      r = self._replicas = replica_ids(self.indices)
    return r

  def wait(self, aval: ShapedArray) -> None:
    if self._value is None:
      for shard in self._shards:
        shard.block_until_ready()

  def is_ready(self) -> bool:
    return self._value is not None or all(shard.is_ready() for shard in self._shards)

  def read(self, aval: ShapedArray) -> np.ndarray:
    """The global value, gathered from the first replica of each piece."""
    if self._value is not None:
      return self._value
    out = np.empty(aval.shape, aval.dtype)
    for shard, index, replica in zip(self._shards, self.indices, self.replicas):
      if replica == 0:
        out[index] = shard._value
    out.setflags(False)
    self._value = out
    return out

  def delete(self) -> None:
    for shard in self._shards or ():
      shard.delete()
    self._shards = self._value = None


class Array(AvalQueries, metaclass=_ArrayMeta):
  """An immutable array on a device (``jax.Array``)."""
  __slots__ = ("_np", "aval", "_device", "_home", "_deleted", "_buffer", "__weakref__")
  __array_priority__ = 100

  def __init__(self, value: np.ndarray | None, aval: ShapedArray, device=None, buffer=None):
    self._np = value          # read-only NumPy value; None until a buffer is read
    self.aval = aval
    self._device = device     # the device it is committed to; None: uncommitted
    # Where an uncommitted Array is: the default device when it was made (as
    # in JAX, it stays there after a ``jax.default_device`` block ends, and a
    # computation on it alone runs on the default device of its time). None:
    # the first device, made while no default device was chosen.
    self._home = default_device() if device is None and default_device_chosen[0] else None
    self._deleted = False
    self._buffer = buffer     # the runtime's device buffer (computed results; cached imports)

  # ``_value`` is read by the eval trace for every eager operation: a plain
  # slot read when the NumPy value exists, a wait + map the first time for a
  # computed result.
  @property
  def _value(self) -> np.ndarray:
    v = self._np
    if v is None:
      v = self._materialize()
    return v

  def _materialize(self) -> np.ndarray:
    if self._deleted:
      raise _deleted_error(self.aval.str_short(short_dtypes=False))
    v = self._buffer.read(self.aval)
    self._np = v
    return v

  # ---- static properties (shape, dtype, ndim, size, weak_type: AvalQueries) ----
  @property
  def itemsize(self):
    return self.aval.dtype.itemsize

  @property
  def nbytes(self):
    return self.aval.size * self.aval.dtype.itemsize

  # ---- storage ----
  def _check_alive(self):
    if self._deleted:
      raise _deleted_error(self.aval.str_short(short_dtypes=False))

  def __array__(self, dtype=None, copy=None):
    self._check_alive()
    v = self._value
    if copy:
      return np.array(v, dtype=dtype, copy=True)
    return v if dtype is None else np.asarray(v, dtype=dtype)

  def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    self._check_alive()
    v = self._value
    if max_version is None:
      return v.__dlpack__(stream=stream)
    return v.__dlpack__(stream=stream, max_version=max_version, copy=copy)

  def __dlpack_device__(self):
    return (1, 0)  # kDLCPU, device 0

  def block_until_ready(self):
    """Wait until the value is computed; returns ``self``. An error of the
    computation that produces it is raised here."""
    self._check_alive()
    buffer = self._buffer
    if buffer is not None and self._np is None:
      buffer.wait(self.aval)
    return self

  def is_ready(self) -> bool:
    """Whether the value is computed (never blocks)."""
    self._check_alive()
    buffer = self._buffer
    return buffer is None or self._np is not None or buffer.is_ready()

  def is_deleted(self) -> bool:
    return self._deleted

  def delete(self) -> None:
    """Free the storage; any later use raises RuntimeError."""
    b = self._buffer
    if type(b) is ShardedBuffer:
      b.delete()
    self._deleted = True
    self._np = None
    self._buffer = None

  def copy_to_host_async(self):
    return None

  def _placement(self):
    """The device of a single-device Array: the one it is committed to, else
    the one it was made on."""
    return self._device or self._home or first_device()

  @property
  def device(self):
    """The device of a single-device Array; the sharding of one over several."""
    b = self._buffer
    if type(b) is ShardedBuffer:
      return b.sharding
    return self._placement()

  def devices(self):
    b = self._buffer
    if type(b) is ShardedBuffer:
      return b.sharding.device_set
    return {self._placement()}

  @property
  def committed(self) -> bool:
    """Whether the Array was placed on its device(s) explicitly
    (``device_put`` with a device or sharding, or computed from such Arrays);
    an uncommitted one moves to meet committed operands."""
    return self._device is not None or type(self._buffer) is ShardedBuffer

  @property
  def sharding(self):
    b = self._buffer
    if type(b) is ShardedBuffer:
      return b.sharding
    return SingleDeviceSharding(self._placement())

  @property
  def addressable_shards(self) -> list:
    self._check_alive()
    b = self._buffer
    if type(b) is ShardedBuffer:
      return [Shard(a._device, index, replica, a)
              for a, index, replica in zip(b.shards, b.indices, b.replicas)]
    return [Shard(self._placement(), tuple(slice(None) for _ in self.shape),
                  0, self)]

  @property
  def global_shards(self) -> list:
    # One process addresses every device.
    return self.addressable_shards

  @property
  def is_fully_addressable(self) -> bool:
    return True

  @property
  def is_fully_replicated(self) -> bool:
    return self.sharding.is_fully_replicated

  def addressable_data(self, index: int) -> "Array":
    """The ``index``-th device's piece (a single-device Array)."""
    self._check_alive()
    b = self._buffer
    if type(b) is ShardedBuffer:
      return b.shards[index]
    if index != 0:
      raise IndexError(f"addressable_data: index {index} out of range for an Array on "
                       "1 device")
    return self

  # ---- Python conversions ----
  def item(self, *args):
    self._check_alive()
    return self._value.item(*args)

  def tolist(self):
    self._check_alive()
    return self._value.tolist()

  def __bool__(self):
    self._check_alive()
    return bool(self._value)

  def __int__(self):
    self._check_alive()
    return int(self._value)

  def __float__(self):
    self._check_alive()
    return float(self._value)

  def __complex__(self):
    self._check_alive()
    return complex(self._value)

  def __index__(self):
    self._check_alive()
    if not dtypes.issubdtype(self.dtype, np.integer):
      raise TypeError(f"only integer scalar arrays can be converted to a scalar index; "
                      f"got {self.aval.str_short()}")
    return int(self._value)

  def __hash__(self):
    raise TypeError("unhashable type: 'Array'")

  def __setitem__(self, idx, value):
    raise TypeError(
        "'Array' object does not support item assignment. JAX arrays are "
        "immutable. Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or "
        "another .at[] method: "
        "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")

  def __reduce__(self):
    self._check_alive()
    return (_reconstruct, (np.array(self._value), self.weak_type))

  def __copy__(self):
    return self

  def __deepcopy__(self, memo):
    return self

  # ---- printing ----
  def __repr__(self):
    self._check_alive()   # as JAX: a deleted Array's repr raises RuntimeError
    if type(self.aval) is AbstractToken:
      return "Token()"
    prefix, line_width = "Array(", np.get_printoptions()["linewidth"]
    dtype_str = f"dtype={self.dtype.name}"
    if self.weak_type:
      dtype_str += ", weak_type=True"
    dtype_str += ")"
    v = self._value
    if v.size == 0 and v.ndim > 0:
      return f"{prefix}[], shape={v.shape}, {dtype_str}"
    s = np.array2string(v, prefix=prefix, suffix=",", separator=", ",
                        max_line_width=line_width)
    last_line_len = len(s) - s.rfind("\n") + 1
    sep = " "
    if last_line_len + len(dtype_str) + 1 > line_width:
      sep = "\n" + " " * len(prefix)
    return f"{prefix}{s},{sep}{dtype_str}"

  def __str__(self):
    self._check_alive()
    if type(self.aval) is AbstractToken:
      return "Token()"
    return str(self._value)

  def __format__(self, spec):
    self._check_alive()
    if self.ndim == 0:
      return format(self._value.item(), spec)
    return format(str(self._value), spec)


def _reconstruct(value, weak_type):
  return make_array(np.asarray(value), weak_type=weak_type)


def array_of(value: np.ndarray, aval: ShapedArray) -> Array:
  """An Array of ``aval`` over ``value`` (a NumPy array of ``aval``'s dtype
  and shape that no one else writes), which becomes read-only."""
  value.setflags(False)   # write=False, positional: a third of ``flags.writeable``'s cost
  return Array(value, aval)


def sharded_array_of(value: np.ndarray, sharding, weak_type: bool = False) -> Array:
  """An Array of the NumPy ``value`` (canonical dtype, private) laid out by
  ``sharding`` (a NamedSharding): each device holds a read-only view of its
  piece (Arrays are immutable, so pieces and replicas may share memory; the
  runtime copies a piece that it cannot import as is). Raises JAX's
  ValueError when a dimension does not divide evenly."""
  value.setflags(False)
  shape = value.shape
  aval = ShapedArray(shape, value.dtype, weak_type, aval_sharding(sharding, shape))
  return Array(value, aval, None, ShardedBuffer(sharding, sharding._indices(shape), value=value,
                                               weak_type=weak_type))


def sharded_array_of_shards(aval: ShapedArray, sharding, shards: list) -> Array:
  """An Array of ``aval`` (global shape, its aval sharding set) assembled
  from ``shards``: one single-device Array per device of
  ``sharding._device_assignment``, in that order."""
  return Array(None, aval, None, ShardedBuffer(sharding, sharding._indices(aval.shape),
                                               shards=list(shards)))


def make_array(value, dtype=None, weak_type: bool = False) -> Array:
  """An Array holding a private, read-only copy-free view of ``value`` (which
  must already have JAX's canonical dtype). Its aval is the shared one of
  its type (``shaped_array``): the eval trace's recent plans match operands
  by aval identity, so ``jnp.asarray(a) + 1`` in a loop reuses its plan."""
  v = np.asarray(value, dtype=dtype)
  return array_of(v, shaped_array(v.shape, v.dtype, bool(weak_type)))


__all__ = ["Array", "ShardedBuffer", "array_of", "make_array", "sharded_array_of",
           "sharded_array_of_shards"]
