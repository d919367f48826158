"""Device meshes: ``Mesh`` (named axes over concrete devices), ``AbstractMesh``
(only the axes' names, sizes and types, what tracing sees) and ``AxisType``;
the mesh in context (``set_mesh``, ``get_abstract_mesh``, ``get_mesh``,
``use_abstract_mesh``).

Equality is by value (devices, names, types), as JAX's interned meshes
behave: two meshes built from the same arguments compare and hash equal.
"""
from __future__ import annotations

import collections
import enum
import math
import threading
import warnings
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np


class AxisType(enum.Enum):
  """How a mesh axis is partitioned: by the compiler (``Auto``), in the
  types (``Explicit``: avals name the axis, ``float32[8@x]``) or by the user's
  per-device code (``Manual``, inside ``shard_map``)."""
  Auto = enum.auto()
  Explicit = enum.auto()
  Manual = enum.auto()

  def __repr__(self):
    return self.name


def _normalize_axis_types(axis_names: tuple, axis_types, name: str, default: AxisType) -> tuple:
  if axis_types is None:
    axis_types = (default,) * len(axis_names)
  if not isinstance(axis_types, tuple):
    axis_types = (axis_types,)
  if not all(isinstance(a, AxisType) for a in axis_types):
    raise TypeError(
        f"axis_types passed to {name} must be of type `jax.sharding.AxisType`."
        f" Got {axis_types} of type {tuple(type(a) for a in axis_types)}")
  if len(axis_names) != len(axis_types):
    raise ValueError(
        "Number of axis names should match the number of axis_types. Got"
        f" axis_names={axis_names} and axis_types={axis_types}")
  return axis_types


class BaseMesh:
  """What ``Mesh`` and ``AbstractMesh`` share: axis names, sizes and types."""
  __slots__ = ()
  axis_names: tuple
  axis_types: tuple

  @property
  def shape(self) -> collections.OrderedDict:
    return collections.OrderedDict(self.shape_tuple)

  @property
  def shape_tuple(self) -> tuple:
    return tuple(zip(self.axis_names, self.axis_sizes))

  @property
  def empty(self) -> bool:
    return self.size == 0

  @property
  def _name_to_type(self) -> dict:
    return dict(zip(self.axis_names, self.axis_types))

  def _axes_of_type(self, ty: AxisType) -> tuple:
    return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is ty)

  @property
  def auto_axes(self) -> tuple:
    return self._axes_of_type(AxisType.Auto)

  @property
  def explicit_axes(self) -> tuple:
    return self._axes_of_type(AxisType.Explicit)

  @property
  def manual_axes(self) -> tuple:
    return self._axes_of_type(AxisType.Manual)

  def _all(self, *types) -> bool:
    return bool(self.axis_types) and all(t in types for t in self.axis_types)

  @property
  def are_all_axes_auto(self) -> bool:
    return self._all(AxisType.Auto)

  @property
  def are_all_axes_explicit(self) -> bool:
    return self._all(AxisType.Explicit)

  @property
  def are_all_axes_manual(self) -> bool:
    return self._all(AxisType.Manual)

  @property
  def _any_axis_auto(self) -> bool:
    return AxisType.Auto in self.axis_types

  @property
  def _any_axis_explicit(self) -> bool:
    return AxisType.Explicit in self.axis_types

  @property
  def _any_axis_manual(self) -> bool:
    return AxisType.Manual in self.axis_types


class Mesh(BaseMesh):
  """Named axes over an array of devices (``jax.sharding.Mesh``).

  ``Mesh(np.array(jax.devices()).reshape(4, 2), ('x', 'y'))``; axis types
  default to ``Auto`` here (``jax.make_mesh`` defaults to ``Explicit``).
  """
  __slots__ = ("devices", "axis_names", "axis_types", "size", "_key", "_hash", "__weakref__")

  def __init__(self, devices, axis_names, axis_types=None):
    if not isinstance(devices, np.ndarray):
      devices = np.array(devices, dtype=object)
    if isinstance(axis_names, str):
      axis_names = (axis_names,)
    axis_names = tuple(axis_names)
    if any(n is None for n in axis_names):
      raise ValueError(f"Mesh axis names cannot be None. Got: {axis_names}")
    if devices.ndim != len(axis_names):
      raise ValueError(
          "Mesh requires the ndim of its first argument (`devices`) to equal "
          "the length of its second argument (`axis_names`), but got "
          f"devices.ndim == {devices.ndim} and len(axis_names) == {len(axis_names)}.")
    devices = devices.copy()
    devices.flags.writeable = False
    self.devices = devices
    self.axis_names = axis_names
    self.axis_types = _normalize_axis_types(axis_names, axis_types, "Mesh", AxisType.Auto)
    empty = not axis_names and devices.flat[0] is None
    self.size = 0 if empty else math.prod(devices.shape)
    self._key = (tuple(d.id if d is not None else None for d in devices.flat),
                 devices.shape, axis_names, self.axis_types)
    self._hash = hash(self._key)

  def __eq__(self, other):
    return self is other or (type(other) is Mesh and self._key == other._key)

  def __hash__(self):
    return self._hash

  def __reduce__(self):
    return (Mesh, (self.devices, self.axis_names, self.axis_types))

  @property
  def axis_sizes(self) -> tuple:
    return self.devices.shape

  @property
  def is_scalar(self) -> bool:
    return self.size == 1 and not self.axis_names

  @property
  def device_ids(self) -> np.ndarray:
    return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

  @property
  def _flat_devices_tuple(self) -> tuple:
    return tuple(self.devices.flat)

  @property
  def _flat_devices_set(self) -> set:
    return set(self.devices.flat)

  @property
  def local_devices(self) -> list:
    return list(self.devices.flat)

  @property
  def local_mesh(self) -> "Mesh":
    return self

  @property
  def is_multi_process(self) -> bool:
    return False

  @property
  def abstract_mesh(self) -> "AbstractMesh":
    if not self.axis_names:
      return empty_abstract_mesh
    d = self.devices.flat[0]
    device = None if d is None else AbstractDevice(d.device_kind, None, d.platform)
    return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types,
                        abstract_device=device)

  def update(self, devices=None, axis_names=None, axis_types=None) -> "Mesh":
    return Mesh(self.devices if devices is None else devices,
                self.axis_names if axis_names is None else axis_names,
                self.axis_types if axis_types is None else axis_types)

  # ``with mesh:`` is JAX's deprecated way to set the mesh that bare
  # PartitionSpecs of jit's in/out shardings refer to; ``jax.set_mesh`` is
  # its replacement and the only one that changes ``get_abstract_mesh``.
  def __enter__(self):
    warnings.warn("`with mesh:` context manager has been deprecated. Please use `with"
                  " jax.set_mesh(mesh):` instead.", DeprecationWarning, stacklevel=2)
    _context.physical_meshes = _context.physical_meshes + (self,)
    return self

  def __exit__(self, exc_type, exc_value, traceback):
    _context.physical_meshes = _context.physical_meshes[:-1]
    return False

  def __str__(self):
    if self.empty:
      return "Mesh()"
    axes = ", ".join(f"'{k}': {v}" for k, v in self.shape_tuple)
    return f"Mesh({axes}, axis_types={self.axis_types})"

  def __repr__(self):
    if self.empty:
      return "Mesh(axis_sizes=(), axis_names=())"
    return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names!r}, "
            f"axis_types={self.axis_types})")


@dataclass(frozen=True, slots=True)
class AbstractDevice:
  """The kind of device an ``AbstractMesh`` stands for."""
  device_kind: str
  num_cores: int | None
  platform: str

  def __repr__(self):
    return f"AbstractDevice({self._repr()})"

  def _repr(self) -> str:
    return (f"device_kind={self.device_kind}, num_cores={self.num_cores}, "
            f"platform={self.platform}")


class AbstractMesh(BaseMesh):
  """A mesh's axis names, sizes and types without devices: what an abstract
  value's sharding refers to (``AbstractMesh((2, 4), ('a', 'b'))``; axis types
  default to ``Explicit``)."""
  __slots__ = ("axis_sizes", "axis_names", "axis_types", "abstract_device", "size",
               "_key", "_hash", "__weakref__")

  def __init__(self, axis_sizes, axis_names, axis_types=None, *, abstract_device=None):
    axis_sizes, axis_names = tuple(axis_sizes), tuple(axis_names)
    self.axis_sizes = axis_sizes
    self.axis_names = axis_names
    self.axis_types = _normalize_axis_types(axis_names, axis_types, "AbstractMesh",
                                            AxisType.Explicit)
    self.abstract_device = abstract_device
    self.size = math.prod(axis_sizes) if axis_sizes else 0
    self._key = (axis_sizes, axis_names, self.axis_types, abstract_device)
    self._hash = hash(self._key)

  def __eq__(self, other):
    return self is other or (type(other) is AbstractMesh and self._key == other._key)

  def __hash__(self):
    return self._hash

  def __reduce__(self):
    return (_abstract_mesh, self._key)

  @property
  def abstract_mesh(self) -> "AbstractMesh":
    return self

  def update(self, axis_sizes=None, axis_names=None, axis_types=None, **kwargs) -> "AbstractMesh":
    kwargs.setdefault("abstract_device", self.abstract_device)
    return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                        self.axis_names if axis_names is None else axis_names,
                        self.axis_types if axis_types is None else axis_types, **kwargs)

  def update_axis_types(self, name_to_type: dict) -> "AbstractMesh":
    return self.update(axis_types=tuple(name_to_type.get(n, t) for n, t in
                                        zip(self.axis_names, self.axis_types)))

  def _no_devices(self, what: str):
    raise ValueError(f"AbstractMesh does not implement {what}")

  devices = property(lambda self: self._no_devices("devices"))
  device_ids = property(lambda self: self._no_devices("device_ids"))
  local_devices = property(lambda self: self._no_devices("local_devices"))
  local_mesh = property(lambda self: self._no_devices("local_mesh"))
  is_multi_process = property(lambda self: self._no_devices("is_multi_process"))

  def __enter__(self):
    self._no_devices("__enter__")

  def __exit__(self, exc_type, exc_value, traceback):
    self._no_devices("__exit__")

  def __repr__(self):
    axes = ", ".join(f"'{n}': {v}" for n, v in self.shape_tuple) or "()"
    device = "" if self.abstract_device is None else f", {self.abstract_device._repr()}"
    return f"AbstractMesh({axes}, axis_types={self.axis_types}{device})"


def _abstract_mesh(axis_sizes, axis_names, axis_types, abstract_device) -> AbstractMesh:
  return AbstractMesh(axis_sizes, axis_names, axis_types, abstract_device=abstract_device)


empty_abstract_mesh = AbstractMesh((), ())
empty_concrete_mesh = Mesh(np.empty((), dtype=object), ())


# ------------------------------------------------------ the mesh in context
class _MeshContext(threading.local):
  """Per thread: the mesh ``set_mesh`` installed (concrete and abstract, the
  abstract one also changed by ``use_abstract_mesh``) and the stack of
  ``with mesh:`` blocks."""

  def __init__(self):
    self.mesh: Mesh = empty_concrete_mesh
    self.abstract_mesh: AbstractMesh = empty_abstract_mesh
    self.physical_meshes: tuple = ()


_context = _MeshContext()


def get_abstract_mesh() -> AbstractMesh:
  """The abstract mesh in context (``AbstractMesh((), axis_types=())`` if none)."""
  return _context.abstract_mesh


def get_concrete_mesh() -> Mesh:
  """The mesh ``set_mesh`` installed (the empty mesh if none)."""
  return _context.mesh


def physical_mesh() -> Mesh:
  """The innermost ``with mesh:`` block's mesh, else the ``set_mesh`` one (the
  mesh bare PartitionSpecs of jit's shardings refer to)."""
  meshes = _context.physical_meshes
  return meshes[-1] if meshes else _context.mesh


def set_context_mesh(mesh: Mesh, abstract_mesh: AbstractMesh) -> tuple:
  """Install a mesh in this thread; returns what it replaced (for restoring)."""
  prev = (_context.mesh, _context.abstract_mesh)
  _context.mesh, _context.abstract_mesh = mesh, abstract_mesh
  return prev


class use_abstract_mesh:
  """``with jax.sharding.use_abstract_mesh(abstract_mesh):`` sets the abstract
  mesh in context (its size must match the one it replaces)."""
  __slots__ = ("mesh", "prev")

  def __init__(self, mesh: AbstractMesh):
    if not isinstance(mesh, AbstractMesh):
      raise ValueError("Expected mesh of type `jax.sharding.AbstractMesh`. Got type:"
                       f" {type(mesh)}")
    self.mesh = mesh

  def __enter__(self):
    prev = self.prev = _context.abstract_mesh
    if not prev.empty and not self.mesh.empty and prev.size != self.mesh.size:
      raise ValueError(
          "use_abstract_mesh cannot change the size of the mesh. Got new mesh:"
          f" {self.mesh} with size={self.mesh.size} and prev mesh:"
          f" {prev} with size={prev.size}")
    _context.abstract_mesh = self.mesh
    return self

  def __exit__(self, exc_type, exc_value, traceback):
    _context.abstract_mesh = self.prev


MeshAxisName = Any

class MeshIdentityMap:
  """A mapping from meshes, held weakly and matched by identity. Equal
  meshes are different keys: a mesh of one device that a partially manual
  shard_map made as its sub-mesh equals the mesh a later ``pmap`` over that
  device makes, and a WeakKeyDictionary gave the pmap the shard_map's whole
  mesh (its results were laid out over two devices)."""

  def __init__(self):
    self._items: dict = {}   # id(mesh) -> (weak reference to mesh, value)

  def __setitem__(self, mesh, value) -> None:
    key = id(mesh)

    def forget(ref, key=key):
      item = self._items.get(key)
      if item is not None and item[0] is ref:   # not a newer mesh that took the id
        del self._items[key]
    self._items[key] = (weakref.ref(mesh, forget), value)

  def get(self, mesh, default=None):
    item = self._items.get(id(mesh))
    if item is None or item[0]() is not mesh:
      return default
    return item[1]

  def __getitem__(self, mesh):
    item = self._items.get(id(mesh))
    if item is None or item[0]() is not mesh:
      raise KeyError(mesh)
    return item[1]

  def __contains__(self, mesh) -> bool:
    item = self._items.get(id(mesh))
    return item is not None and item[0]() is mesh


__all__ = ["AbstractDevice", "AbstractMesh", "AxisType", "BaseMesh", "Mesh", "MeshIdentityMap",
           "empty_abstract_mesh", "empty_concrete_mesh", "get_abstract_mesh",
           "get_concrete_mesh", "physical_mesh", "set_context_mesh", "use_abstract_mesh"]
