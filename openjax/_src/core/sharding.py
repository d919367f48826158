"""Shardings: how an array is laid out across devices (``jax.sharding``).

``PartitionSpec`` (``P``) names, per array dimension, the mesh axes that
split it (None: not split; a tuple: split over several axes, the first
major). ``NamedSharding(mesh, spec)`` pairs it with a ``Mesh``;
``SingleDeviceSharding(device)`` is an array whole on one device. A
``Shard`` is one device's piece of an Array.

An abstract value's sharding (``ShapedArray.sharding``) is a NamedSharding
over an ``AbstractMesh`` whose spec names only ``Explicit`` axes, one entry
per dimension (``float32[8@x,4]``); it is None when no dimension is split
over an Explicit axis, so unsharded code pays nothing for it.
"""
from __future__ import annotations

import contextlib
import functools
import math
from typing import Any

from openjax._src.core.mesh import (AbstractMesh, AxisType, Mesh, get_abstract_mesh,
                                    get_concrete_mesh)


class UnconstrainedSingleton:
  """``P.UNCONSTRAINED``: the compiler may choose this dimension's sharding."""
  __slots__ = ()

  def __repr__(self):
    return "UNCONSTRAINED"

  def __reduce__(self):
    return (_unconstrained, ())


UNCONSTRAINED = UnconstrainedSingleton()


def _unconstrained():
  return UNCONSTRAINED


def _canonicalize_partition(p):
  # A one-axis tuple is that axis and an empty one is None, as in JAX
  # (P(('x',)) == P('x')); lists are tuples.
  if isinstance(p, (tuple, list)):
    p = tuple(p)
    if len(p) == 0:
      return None
    if len(p) == 1:
      return p[0]
  return p


def _check_unreduced(partitions: tuple, unreduced: frozenset, reduced: frozenset) -> None:
  for name, axes in (("unreduced", unreduced), ("reduced", reduced)):
    if None in axes:
      raise ValueError(f"{name} cannot contain None. All elements in {name} should refer to "
                       "the mesh axes.")
  if unreduced & reduced:
    raise ValueError("`unreduced` and `reduced` argument to PartitionSpec cannot overlap. "
                     f"Got unreduced: {unreduced} and reduced: {reduced}")
  for p in partitions:
    for a in (p if isinstance(p, tuple) else (p,)):
      for name, axes in (("unreduced", unreduced), ("reduced", reduced)):
        if a in axes:
          raise ValueError(f"partitions cannot overlap with {name} axes passed to "
                           f"PartitionSpec. Got partitions: {partitions} and {name} axes: "
                           f"{axes}")


def _canonicalize_axis_set(name: str, val) -> frozenset:
  if isinstance(val, frozenset):
    return val
  if not isinstance(val, set):
    raise TypeError(f"{name} argument of PartitionSpec should of type `frozenset` or "
                    f"`set`. Got type {type(val)}")
  return frozenset(val)


class PartitionSpec:
  """How each dimension of an array is split over mesh axes (``jax.P``).

  ``P('x', None, ('y', 'z'))``: dimension 0 over axis ``x``, dimension 1
  whole, dimension 2 over ``y`` and ``z`` (``y`` major). Dimensions beyond
  the spec's length are not split. ``P.UNCONSTRAINED`` leaves a dimension to
  the compiler (Auto axes only).
  """
  __slots__ = ("_partitions", "unreduced", "reduced", "_hash")

  UNCONSTRAINED = UNCONSTRAINED

  def __init__(self, *partitions, unreduced=frozenset(), reduced=frozenset()):
    partitions = tuple(_canonicalize_partition(p) for p in partitions)
    unreduced = _canonicalize_axis_set("unreduced", unreduced)
    reduced = _canonicalize_axis_set("reduced", reduced)
    _check_unreduced(partitions, unreduced, reduced)
    object.__setattr__(self, "_partitions", partitions)
    object.__setattr__(self, "unreduced", unreduced)
    object.__setattr__(self, "reduced", reduced)
    object.__setattr__(self, "_hash", hash((partitions, unreduced, reduced)))

  def __init_subclass__(cls, *args, **kwargs):
    raise TypeError("Subclassing `jax.P` is prohibited.")

  def __setattr__(self, name, value):
    raise AttributeError("PartitionSpec is immutable")

  @property
  def partitions(self) -> tuple:
    return self._partitions

  def __eq__(self, other):
    return (self is other or type(other) is PartitionSpec
            and self._partitions == other._partitions
            and self.unreduced == other.unreduced and self.reduced == other.reduced)

  def __hash__(self):
    return self._hash

  def __repr__(self):
    parts = repr(self._partitions)[1:-1]
    if not self.unreduced and not self.reduced:
      return f"P({parts})"
    sets = []
    if self.unreduced:
      sets.append(f"unreduced={set(self.unreduced)!r}")
    if self.reduced:
      sets.append(f"reduced={set(self.reduced)!r}")
    parts = "" if not parts else f"{parts} " if parts.endswith(",") else f"{parts}, "
    return f"P({parts}{', '.join(sets)})"

  __str__ = __repr__

  def __reduce__(self):
    return (_partition_spec, (self._partitions, self.unreduced, self.reduced))

  def __getitem__(self, i):
    return self._partitions[i]

  def __iter__(self):
    return iter(self._partitions)

  def __len__(self):
    return len(self._partitions)

  def __add__(self, other):
    if isinstance(other, PartitionSpec):
      return PartitionSpec(*self._partitions, *other._partitions,
                           unreduced=self.unreduced | other.unreduced,
                           reduced=self.reduced | other.reduced)
    if isinstance(other, tuple):
      return PartitionSpec(*self._partitions, *other)
    return NotImplemented

  def __radd__(self, other):
    if isinstance(other, tuple):
      return PartitionSpec(*other, *self._partitions)
    return NotImplemented

  def index(self, value) -> int:
    return self._partitions.index(_canonicalize_partition(value))

  def count(self, value) -> int:
    return self._partitions.count(_canonicalize_partition(value))

  def update(self, partitions=None, unreduced=None, reduced=None) -> "PartitionSpec":
    return PartitionSpec(*(self._partitions if partitions is None else partitions),
                         unreduced=self.unreduced if unreduced is None else unreduced,
                         reduced=self.reduced if reduced is None else reduced)

  def _normalized_spec_for_aval(self, ndim: int) -> "PartitionSpec":
    out = [None if p is UNCONSTRAINED else p for p in self._partitions]
    out.extend([None] * (ndim - len(out)))
    return self.update(partitions=out)


def _partition_spec(partitions, unreduced, reduced) -> PartitionSpec:
  return PartitionSpec(*partitions, unreduced=unreduced, reduced=reduced)


P = PartitionSpec


def dim_axes(p) -> tuple:
  """The mesh axes one spec entry splits its dimension over (major first)."""
  if p is None or p is UNCONSTRAINED:
    return ()
  return p if isinstance(p, tuple) else (p,)


class IndivisibleError(ValueError):
  """A sharding splits a dimension into pieces that do not divide its size."""


class DuplicateSpecError(ValueError):
  """A PartitionSpec names one mesh axis for two dimensions."""


def _pad_hint(shape: tuple, dim: int, parts: int) -> str:
  # The fix JAX users apply (the seed's padding solution), spelled out.
  target = -(-shape[dim] // parts) * parts
  pads = ", ".join("(0, %d)" % (target - shape[dim]) if i == dim else "(0, 0)"
                   for i in range(len(shape)))
  pads = f"({pads},)" if len(shape) == 1 else f"({pads})"
  return (f" To shard it, pad axis {dim} to the next multiple of {parts} ({target}), "
          f"e.g. x = jnp.pad(x, {pads}), and slice the result back with "
          f"[:{shape[dim]}] along that axis once it is whole again (jax.reshard(y, "
          f"NamedSharding(mesh, P())), or np.asarray(y)).")


# ------------------------------------------------------------- Sharding
class Sharding:
  """How an Array is laid out across devices (``jax.sharding.Sharding``).

  Subclasses give ``device_set``, ``_device_assignment`` (devices in order),
  ``devices_indices_map``, ``is_fully_replicated`` and ``memory_kind``.
  """
  __slots__ = ()

  @property
  def device_set(self) -> set:
    raise NotImplementedError("Subclasses should implement this method.")

  @property
  def _device_assignment(self) -> tuple:
    raise NotImplementedError("Subclasses should implement this method.")

  @property
  def is_fully_replicated(self) -> bool:
    raise NotImplementedError("Subclasses should implement this method.")

  @property
  def memory_kind(self) -> str | None:
    return "device"

  def devices_indices_map(self, global_shape: tuple) -> dict:
    raise NotImplementedError("Subclasses should implement this method.")

  @property
  def is_fully_addressable(self) -> bool:
    # One process sees every device.
    return True

  @property
  def num_devices(self) -> int:
    return len(self.device_set)

  @property
  def addressable_devices(self) -> set:
    return self.device_set

  @property
  def has_addressable_devices(self) -> bool:
    return True

  @property
  def _addressable_device_assignment(self) -> tuple:
    return self._device_assignment

  def addressable_devices_indices_map(self, global_shape: tuple) -> dict:
    return self.devices_indices_map(global_shape)

  def shard_shape(self, global_shape: tuple) -> tuple:
    """The shape of each device's piece of an array of ``global_shape``."""
    global_shape = tuple(global_shape)
    index = next(iter(self.devices_indices_map(global_shape).values()))
    return tuple(len(range(*s.indices(n))) for s, n in zip(index, global_shape))

  def is_equivalent_to(self, other: "Sharding", ndim: int) -> bool:
    """Whether both place the same pieces of an ``ndim``-d array on the same
    devices (in the same order)."""
    if self._device_assignment != other._device_assignment:
      return False
    # Every dimension of this shape divides into any number of pieces that
    # either sharding can make (a divisor of its device count).
    shape = (math.lcm(self.num_devices, other.num_devices),) * ndim

    def placement(sharding):
      # slice(None) and slice(0, n) are the same piece.
      return {d: tuple(s.indices(n) for s, n in zip(index, shape))
              for d, index in sharding.devices_indices_map(shape).items()}
    return placement(self) == placement(other)

  def with_memory_kind(self, kind: str) -> "Sharding":
    raise NotImplementedError("Subclasses should implement this method.")


class SingleDeviceSharding(Sharding):
  """The sharding of an array that lives whole on one device."""
  __slots__ = ("_device", "_memory_kind")

  def __init__(self, device, *, memory_kind: str | None = None):
    self._device = device
    self._memory_kind = memory_kind

  @property
  def device_set(self) -> set:
    return {self._device}

  @property
  def _device_assignment(self) -> tuple:
    return (self._device,)

  @property
  def num_devices(self) -> int:
    return 1

  @property
  def memory_kind(self) -> str:
    return self._memory_kind or "device"

  def with_memory_kind(self, kind: str) -> "SingleDeviceSharding":
    return SingleDeviceSharding(self._device, memory_kind=kind)

  def devices_indices_map(self, global_shape: tuple) -> dict:
    return {self._device: tuple(slice(None) for _ in global_shape)}

  def shard_shape(self, global_shape: tuple) -> tuple:
    return tuple(global_shape)

  @property
  def is_fully_replicated(self) -> bool:
    return True

  def __eq__(self, other):
    return (isinstance(other, SingleDeviceSharding) and other._device == self._device
            and other.memory_kind == self.memory_kind)

  def __hash__(self):
    return hash(("SingleDeviceSharding", self._device.id))

  def __repr__(self):
    return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self.memory_kind})"


def make_single_device_sharding(device) -> SingleDeviceSharding:
  return SingleDeviceSharding(device)


class NamedSharding(Sharding):
  """A ``PartitionSpec`` over a ``Mesh`` (``jax.NamedSharding``).

  ``NamedSharding(mesh, P('x', None))`` splits dimension 0 over mesh axis
  ``x`` and copies each piece to every device along the other axes. The mesh
  may be an ``AbstractMesh`` (the sharding of an abstract value), which has
  no devices.
  """

  def __init__(self, mesh, spec, *, memory_kind: str | None = None):
    if not isinstance(mesh, (Mesh, AbstractMesh)):
      raise TypeError("NamedSharding: mesh must be a jax.sharding.Mesh or AbstractMesh; "
                      f"got {type(mesh).__name__}")
    if not isinstance(spec, PartitionSpec):
      raise TypeError("NamedSharding: spec must be a PartitionSpec (jax.P); got "
                      f"{spec!r}. Wrap it: P(*spec).")
    if memory_kind is None and isinstance(mesh, Mesh) and not mesh.empty:
      memory_kind = "device"   # a concrete mesh's default memory, as JAX resolves it
    self.mesh, self.spec, self._memory_kind = mesh, spec, memory_kind
    self._hash = None
    _check_pspec(mesh, spec)

  @property
  def memory_kind(self) -> str | None:
    return self._memory_kind

  def __eq__(self, other):
    if self is other:
      return True
    return (isinstance(other, NamedSharding) and self.spec == other.spec
            and self._memory_kind == other._memory_kind and self.mesh == other.mesh)

  def __hash__(self):
    h = self._hash
    if h is None:
      h = self._hash = hash((self.mesh, self._memory_kind, self.spec))
    return h

  def __repr__(self):
    mem = "" if self._memory_kind is None else f", memory_kind={self._memory_kind}"
    return f"NamedSharding(mesh={self.mesh}, spec={self.spec}{mem})"

  def __reduce__(self):
    return (_named_sharding, (self.mesh, self.spec, self._memory_kind))

  def _concrete_mesh(self, what: str) -> Mesh:
    if isinstance(self.mesh, AbstractMesh):
      raise ValueError(f"{what} is not implemented for `jax.sharding.AbstractMesh`.")
    return self.mesh

  @property
  def device_set(self) -> set:
    return self._concrete_mesh("device_set")._flat_devices_set

  @property
  def _device_assignment(self) -> tuple:
    return self._concrete_mesh("_device_assignment")._flat_devices_tuple

  @property
  def num_devices(self) -> int:
    return self.mesh.size

  @property
  def is_fully_addressable(self) -> bool:
    self._concrete_mesh("is_fully_addressable")
    return True

  @property
  def addressable_devices(self) -> set:
    return self._concrete_mesh("addressable_devices")._flat_devices_set

  @functools.cached_property
  def is_fully_replicated(self) -> bool:
    if self.mesh.size == 1:
      return True
    if self.spec.unreduced:
      return False
    sizes = self.mesh.shape
    return math.prod(sizes[a] for p in self.spec for a in dim_axes(p)) == 1

  @functools.cached_property
  def replicated_axes(self) -> frozenset:
    used = {a for p in self.spec for a in dim_axes(p)}
    return frozenset(self.mesh.axis_names) - used - self.spec.unreduced - self.spec.reduced

  def with_memory_kind(self, kind: str) -> "NamedSharding":
    return NamedSharding(self.mesh, self.spec, memory_kind=kind)

  def update(self, **kwargs) -> "NamedSharding":
    spec = kwargs.pop("spec", self.spec)
    if not isinstance(spec, PartitionSpec):
      spec = PartitionSpec(*spec)
    return NamedSharding(kwargs.pop("mesh", self.mesh), spec,
                         memory_kind=kwargs.pop("memory_kind", self._memory_kind))

  def check_compatible_aval(self, shape: tuple) -> None:
    if len(shape) < len(self.spec):
      extra = " For scalars the PartitionSpec should be P()" if len(shape) == 0 else ""
      raise ValueError(
          f"Sharding {self} is only valid for values of rank at least {len(self.spec)}, "
          f"but was applied to a value of rank {len(shape)}.{extra}")

  def _parts_per_dim(self, ndim: int) -> list:
    sizes = self.mesh.shape
    parts = [math.prod(sizes[a] for a in dim_axes(p)) for p in self.spec]
    return parts + [1] * (ndim - len(parts))

  def shard_shape(self, global_shape: tuple) -> tuple:
    global_shape = tuple(global_shape)
    self.check_compatible_aval(global_shape)
    parts = self._parts_per_dim(len(global_shape))
    out = []
    for dim, (n, k) in enumerate(zip(global_shape, parts)):
      quotient, remainder = divmod(n, k)
      if remainder:
        raise IndivisibleError(
            f"Sharding {self} implies that array axis {dim} is partitioned {k} times, but "
            f"the dimension size is {n} (full shape: {global_shape}, per-dimension tiling "
            f"factors: {parts} should evenly divide the shape)"
            + _pad_hint(global_shape, dim, k))
      out.append(quotient)
    return tuple(out)

  def devices_indices_map(self, global_shape: tuple) -> dict:
    global_shape = tuple(global_shape)
    return dict(zip(self._device_assignment, self._indices(global_shape)))

  def _indices(self, global_shape: tuple) -> list:
    """Each device's index (a tuple of slices), in device-assignment order."""
    return _indices_of(self, global_shape)


def _named_sharding(mesh, spec, memory_kind) -> NamedSharding:
  return NamedSharding(mesh, spec, memory_kind=memory_kind)


@functools.lru_cache(maxsize=4096)
def _indices_of(sharding: NamedSharding, global_shape: tuple) -> list:
  shard = sharding.shard_shape(global_shape)   # raises the divisibility error
  mesh = sharding.mesh
  names = mesh.axis_names
  sizes = mesh.axis_sizes
  spec = list(sharding.spec) + [None] * (len(global_shape) - len(sharding.spec))
  out = []
  for flat in range(mesh.size):
    # The device's position along each mesh axis (row-major over the mesh).
    pos, rest = {}, flat
    for name, size in zip(reversed(names), reversed(sizes)):
      rest, pos[name] = divmod(rest, size)
    index = []
    for p, n, k in zip(spec, global_shape, shard):
      axes = dim_axes(p)
      if all(mesh.shape[a] == 1 for a in axes):
        # Unsplit (no axes, or only size-1 ones): the whole dimension, as
        # JAX writes it.
        index.append(slice(None))
        continue
      chunk = 0
      for a in axes:   # the first axis is the major one
        chunk = chunk * mesh.shape[a] + pos[a]
      index.append(slice(chunk * k, (chunk + 1) * k))
    out.append(tuple(index))
  return out


def _check_pspec(mesh, spec: PartitionSpec) -> None:
  seen: dict = {}
  for p in spec:
    for a in dim_axes(p):
      seen[a] = seen.get(a, 0) + 1
  duplicates = [a for a, c in seen.items() if c > 1]
  if duplicates:
    shown = duplicates[0] if len(duplicates) == 1 else tuple(duplicates)
    raise DuplicateSpecError(
        "A single NamedSharding spec specification can map every mesh axis to at most one "
        f"positional dimension, but {spec} has duplicate entries for `{shown}`")
  for p in spec:
    for a in dim_axes(p):
      if a not in mesh.axis_names:
        raise ValueError(f"Resource axis: {a} of {spec} is not found in mesh: "
                         f"{tuple(mesh.axis_names)}.")
  if AxisType.Auto not in mesh.axis_types and UNCONSTRAINED in spec.partitions:
    raise ValueError(f"{spec} cannot contain `P.UNCONSTRAINED` when no mesh axis_types are "
                     f"`Auto`. Got mesh axis_types: {mesh.axis_types}")
  for kind, axes in (("Unreduced", spec.unreduced), ("Reduced", spec.reduced)):
    for a in axes:
      if a not in mesh.axis_names:
        raise ValueError(f"{kind} axes {a} is not found in mesh.axis_names="
                         f"{mesh.axis_names}. Got pspec={spec}")


def replica_ids(indices: list) -> list:
  """Each device's replica number among the devices holding the same index
  (in device-assignment order, as JAX counts them)."""
  counts: dict = {}
  out = []
  for index in indices:
    key = tuple((s.start, s.stop) for s in index)
    out.append(counts.get(key, 0))
    counts[key] = out[-1] + 1
  return out


# ---------------------------------------------------- abstract shardings
def result_sharding(sharding: NamedSharding, ndim: int) -> NamedSharding:
  """The sharding JAX reports for a computed result: the spec with one entry
  per dimension (``P('x')`` of a 2-d result reads ``P('x', None)``)."""
  # Kept on the sharding itself (not in a global cache, which could hand
  # out a mesh of Device objects from before a change of device count).
  cache = sharding.__dict__.setdefault("_result_shardings", {})
  out = cache.get(ndim)
  if out is None:
    spec = sharding.spec._normalized_spec_for_aval(ndim)
    out = cache[ndim] = sharding if spec == sharding.spec else sharding.update(spec=spec)
  return out


@functools.lru_cache(maxsize=4096)
def aval_sharding(sharding, shape: tuple):
  """The sharding an abstract value of ``shape`` records for ``sharding``:
  a NamedSharding over the abstract mesh naming only Explicit axes, one
  entry per dimension, or None when no dimension is split over an Explicit
  axis. Raises JAX's ValueError (with the padding fix) when an Explicit
  split does not divide its dimension."""
  if not isinstance(sharding, NamedSharding):
    return None
  mesh = sharding.mesh
  if not mesh._any_axis_explicit:
    return None
  types = mesh._name_to_type
  spec = []
  for p in sharding.spec:
    axes = tuple(a for a in dim_axes(p) if types[a] is AxisType.Explicit)
    spec.append(None if not axes else axes[0] if len(axes) == 1 else axes)
  if all(p is None for p in spec):
    return None
  spec += [None] * (len(shape) - len(spec))
  out = NamedSharding(mesh.abstract_mesh, PartitionSpec(*spec))
  sizes = mesh.shape
  for dim, (p, n) in enumerate(zip(out.spec, shape)):
    axes = dim_axes(p)
    k = math.prod(sizes[a] for a in axes)
    if n % k:
      raise ValueError(
          f"Sharding spec {axes} implies that array axis {dim} is partitioned {k} times, "
          f"but does not evenly divide the dimension size {n}. Got shape: {tuple(shape)} "
          f"and sharding {out}" + _pad_hint(tuple(shape), dim, k))
  return out


def shape_sharding_str(shape: tuple, sharding) -> str:
  """``8@x,4`` / ``8@(x,y)``: the dimensions of a sharded type."""
  out = []
  for n, p in zip(shape, sharding.spec):
    if p is None:
      out.append(str(n))
    elif isinstance(p, tuple):
      out.append(f"{n}@({','.join(p)})")
    else:
      out.append(f"{n}@{p}")
  return ",".join(out)


def resolve_sharding(sharding: Any, api_name: str):
  """A Sharding for ``sharding``, a bare PartitionSpec resolved against the
  mesh ``jax.set_mesh`` installed."""
  if not isinstance(sharding, PartitionSpec):
    return sharding
  mesh = get_concrete_mesh()
  if mesh.empty:
    raise ValueError(
        f"{api_name}: Using PartitionSpec when you are not under a mesh context is not "
        f"allowed. Please pass a NamedSharding instance or enter into a mesh context via "
        f"`jax.set_mesh`. Got {sharding}")
  return NamedSharding(mesh, sharding)


def traced_out_sharding(sharding: Any, api_name: str):
  """JAX's ``canonicalize_sharding`` for a creation function's ``out_sharding``
  in traced code: a PartitionSpec over the abstract mesh in context (a
  shard_map body's, its manual axes Manual), a NamedSharding as given. Its
  axes must be Explicit (an Auto or Manual axis cannot type a value), and a
  NamedSharding's mesh must be the one in context when there is one."""
  if sharding is None:
    return None
  context = get_abstract_mesh()
  if isinstance(sharding, PartitionSpec):
    if context.empty:
      raise ValueError(
          "Using PartitionSpec when you are not under a mesh context is not allowed. Please "
          "pass a NamedSharding instance or enter into a mesh context via `jax.set_mesh`. "
          f"Got {sharding}")
    sharding = NamedSharding(context, sharding)
  elif not isinstance(sharding, NamedSharding):
    return sharding
  elif not context.empty and context != sharding.mesh.abstract_mesh:
    raise ValueError(f"Context mesh {context} should match the mesh of sharding "
                     f"{sharding.mesh.abstract_mesh} passed to {api_name}.")
  types = sharding.mesh._name_to_type
  for p in sharding.spec:
    for a in dim_axes(p):
      if types[a] is not AxisType.Explicit:
        raise ValueError(
            f"PartitionSpec passed to {api_name} cannot contain axis names that are of type "
            f"Auto or Manual. Got PartitionSpec: {sharding.spec} with axis name: {a} of type: "
            f"AxisType.{types[a].name}.")
  return sharding


# The arguments of the function a ``jit`` call is tracing whose values lie
# on no mesh (a single device's Array, NumPy data, Python scalars), by id:
# JAX types those with the empty mesh even under ``jax.set_mesh``. Filled
# while the function runs (``meshless_arguments``).
_meshless_arguments: dict = {}


@contextlib.contextmanager
def meshless_arguments(tracers: list):
  """While tracing: ``tracers`` (jit's arguments from values on no mesh)
  typed with the empty mesh (``jax.typeof(x).sharding.mesh``)."""
  for t in tracers:
    _meshless_arguments[id(t)] = t
  try:
    yield
  finally:
    for t in tracers:
      _meshless_arguments.pop(id(t), None)


def is_meshless_argument(x) -> bool:
  return _meshless_arguments.get(id(x)) is x


class ManualAxisType:
  """The type of a value over Manual mesh axes (inside ``shard_map``): the
  axes along which it is ``varying``, and those over which it holds partial
  sums (``unreduced``) or is already ``reduced``."""
  __slots__ = ("varying", "unreduced", "reduced", "_hash")

  def __init__(self, *, varying=frozenset(), unreduced=frozenset(), reduced=frozenset()):
    varying = _canonicalize_axis_set("varying", varying)
    unreduced = _canonicalize_axis_set("unreduced", unreduced)
    reduced = _canonicalize_axis_set("reduced", reduced)
    _check_unreduced((), unreduced, reduced)
    object.__setattr__(self, "varying", varying)
    object.__setattr__(self, "unreduced", unreduced)
    object.__setattr__(self, "reduced", reduced)
    object.__setattr__(self, "_hash", hash((varying, unreduced, reduced)))

  def __setattr__(self, name, value):
    raise AttributeError("ManualAxisType is immutable")

  def __eq__(self, other):
    return type(other) is ManualAxisType and (
        (self.varying, self.unreduced, self.reduced)
        == (other.varying, other.unreduced, other.reduced))

  def __hash__(self):
    return self._hash

  def __repr__(self):
    return (f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, "
            f"reduced={self.reduced})")

  def __reduce__(self):
    return (_manual_axis_type, (self.varying, self.unreduced, self.reduced))

  @property
  def empty(self) -> bool:
    return not (self.varying or self.unreduced or self.reduced)

  def update(self, **kwargs) -> "ManualAxisType":
    for name in ("varying", "unreduced", "reduced"):
      kwargs.setdefault(name, getattr(self, name))
    return ManualAxisType(**kwargs)


def _manual_axis_type(varying, unreduced, reduced) -> ManualAxisType:
  return ManualAxisType(varying=varying, unreduced=unreduced, reduced=reduced)


class Shard:
  """One device's piece of an Array: its ``device``, ``index`` (a tuple of
  slices into the global array), ``replica_id`` and ``data`` (an Array on
  that device)."""
  __slots__ = ("device", "index", "replica_id", "data")

  def __init__(self, device, index, replica_id, data):
    self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

  def __repr__(self):
    return (f"Shard(device={self.device!r}, index={self.index}, "
            f"replica_id={self.replica_id}, data={self.data})")


__all__ = ["DuplicateSpecError", "IndivisibleError", "ManualAxisType", "NamedSharding", "P",
           "PartitionSpec", "Shard", "Sharding", "SingleDeviceSharding", "UNCONSTRAINED",
           "aval_sharding", "dim_axes", "is_meshless_argument",
           "make_single_device_sharding", "meshless_arguments", "replica_ids",
           "resolve_sharding", "result_sharding", "shape_sharding_str", "traced_out_sharding"]
