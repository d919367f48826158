"""The user-facing sharding functions: ``jax.make_mesh``, ``jax.set_mesh``,
``jax.sharding.get_mesh``, ``jax.reshard``, ``jax.sharding.auto_axes`` and
``explicit_axes``.

``reshard``, ``auto_axes`` and ``explicit_axes`` have eager semantics: on
concrete Arrays they move data to the requested layout. On traced values
(inside ``jit``) ``reshard`` returns its operand unchanged: a layout never
changes values, and the sharded jit that records layouts in the jaxpr is
built on these classes later.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable, Sequence

import numpy as np

from openjax._src import tree_util
from openjax._src.config import config
from openjax._src.core import Array, Tracer, eval_trace, trace_state
from openjax._src.core.devices import devices as all_devices
from openjax._src.core.mesh import (AbstractMesh, AxisType, Mesh, empty_abstract_mesh, empty_concrete_mesh,
                                    get_abstract_mesh, get_concrete_mesh, set_context_mesh,
                                    use_abstract_mesh)
from openjax._src.core.sharding import NamedSharding, PartitionSpec, Sharding
from openjax._src.primitives.shape.sharding_constraint import reshard_to, sharding_constraint
from openjax._src.runtime.sharded_arrays import put_sharded


def make_mesh(axis_sizes: Sequence[int], axis_names: Sequence[str],
              axis_types: tuple | None = None, *, devices: Sequence | None = None) -> Mesh:
  """A ``Mesh`` of shape ``axis_sizes`` over the first devices (or ``devices``),
  in order; axis types default to ``Explicit`` (JAX 0.10.2)."""
  devices = all_devices() if devices is None else list(devices)
  try:
    sizes = tuple(int(s) for s in axis_sizes)
  except TypeError:
    raise ValueError("`axis_sizes` passed to `make_mesh` should be a sequence of ints. "
                     f"Got {axis_sizes}") from None
  n = math.prod(sizes)
  if n > len(devices):
    raise ValueError(f"Number of devices {len(devices)} must be >= the product of "
                     f"mesh_shape {sizes}")
  mesh_devices = np.array(devices[:n], dtype=object).reshape(sizes)
  if axis_types is None:
    axis_types = (AxisType.Explicit,) * len(sizes)
  return Mesh(mesh_devices, axis_names, axis_types=axis_types)


def _outside_jit(api_name: str, hint: str = "") -> None:
  if trace_state.trace is not eval_trace:
    raise ValueError(f"`{api_name}` can only be used outside of `jax.jit`.{hint}")


class set_mesh:
  """Install ``mesh`` for this thread: as a statement (``jax.set_mesh(mesh)``)
  or for a block (``with jax.set_mesh(mesh):``). Bare PartitionSpecs then
  refer to it, and ``get_abstract_mesh()`` returns its abstract mesh."""
  __slots__ = ("prev", "prev_state")

  def __init__(self, mesh: Mesh | None):
    if mesh is not None and not isinstance(mesh, Mesh):
      raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
    _outside_jit("set_mesh")
    if mesh is not None and mesh._any_axis_manual:
      raise ValueError(
          f"mesh {mesh} contains manual axes which is not allowed when using `jax.set_mesh`."
          " Please use `jax.shard_map` to enter into `Manual` mode instead.")
    if mesh is None:
      self.prev = set_context_mesh(empty_concrete_mesh, empty_abstract_mesh)
    else:
      self.prev = set_context_mesh(mesh, mesh.abstract_mesh)
    # (jit lays results out over the mesh: its fast path, keyed on the
    # flags' state, must not serve calls made under another)
    self.prev_state = config.set_local_state(
        "set_mesh", None if mesh is None or mesh.empty else mesh)

  def __enter__(self):
    return None

  def __exit__(self, exc_type, exc_value, traceback):
    set_context_mesh(*self.prev)
    config.set_local_state("set_mesh", self.prev_state)
    return False


def get_mesh() -> Mesh:
  """The mesh ``jax.set_mesh`` installed (an empty Mesh if none)."""
  _outside_jit("get_mesh", " Maybe you want `jax.sharding.get_abstract_mesh()`?")
  return get_concrete_mesh()


def _is_sharding_leaf(s: Any) -> bool:
  return s is None or isinstance(s, (Sharding, PartitionSpec))


def _concrete_sharding(s: Any, ndim: int, api_name: str) -> NamedSharding:
  """``s`` over concrete devices, its spec one entry per dimension; a bare
  spec refers to the mesh in context (with the axis types the abstract mesh
  in context gives them, which ``auto_axes``/``explicit_axes`` change)."""
  if isinstance(s, PartitionSpec):
    mesh = get_concrete_mesh()
    if mesh.empty:
      raise ValueError(
          f"{api_name}: Using PartitionSpec when you are not under a mesh context is not "
          "allowed. Please pass a NamedSharding instance or enter into a mesh context via "
          f"`jax.set_mesh`. Got {s}")
    abstract = get_abstract_mesh()
    if abstract.axis_names == mesh.axis_names and abstract.axis_types != mesh.axis_types:
      mesh = mesh.update(axis_types=abstract.axis_types)
    s = NamedSharding(mesh, s)
  if not isinstance(s, NamedSharding):
    raise ValueError(f"{api_name} should only be used with out_shardings which are non-None "
                     f"and have a non-empty mesh. Got sharding {s}.")
  if isinstance(s.mesh, AbstractMesh):
    # An abstract value's sharding (``jax.typeof(y).sharding``): over the
    # devices of the mesh in context.
    mesh = get_concrete_mesh()
    if mesh.axis_names != s.mesh.axis_names or mesh.axis_sizes != s.mesh.axis_sizes:
      raise ValueError(f"{api_name}: the sharding {s} is over an AbstractMesh; enter a mesh "
                       "of its axis names and sizes with `jax.set_mesh`, or pass a "
                       f"NamedSharding over a Mesh (the mesh in context is {mesh}).")
    s = NamedSharding(mesh.update(axis_types=s.mesh.axis_types), s.spec)
  return s.update(spec=s.spec._normalized_spec_for_aval(ndim))


def reshard(xs: Any, out_shardings: Any) -> Any:
  """``xs`` (a pytree of arrays) laid out by ``out_shardings`` (a Sharding, a
  PartitionSpec over the mesh in context, or a pytree prefix of those)."""
  def put(s, sub):
    def one(x):
      ndim = x.ndim if isinstance(x, (Array, Tracer)) else np.ndim(x)
      sharding = _concrete_sharding(s, ndim, "reshard")
      if isinstance(x, Tracer):
        return reshard_to(x, sharding)
      return put_sharded(x, sharding)
    return tree_util.tree_map(one, sub)
  if _is_sharding_leaf(out_shardings):
    return put(out_shardings, xs)
  return tree_util.tree_map(put, out_shardings, xs, is_leaf=_is_sharding_leaf)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
  """``x`` (a pytree of arrays) laid out by ``shardings`` (a Sharding, a
  PartitionSpec over the mesh in context, or a pytree prefix of those) from
  here on: inside ``jit`` the SPMD partition relays the value there; outside
  it moves the data, as ``reshard``. The spec may name Auto mesh axes only
  (use ``jax.reshard`` for Explicit ones)."""
  def constrain(s, sub):
    if isinstance(s, PartitionSpec):
      mesh = get_concrete_mesh()
      if mesh.empty:
        raise RuntimeError(
            "with_sharding_constraint requires a non-empty mesh in context if you are "
            "passing `PartitionSpec`s to shardings. You can define a context mesh via "
            "`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to shardings and then "
            "the mesh context manager is not required.")
      abstract = get_abstract_mesh()
      if abstract.axis_names == mesh.axis_names and abstract.axis_types != mesh.axis_types:
        mesh = mesh.update(axis_types=abstract.axis_types)   # (a shard_map body's Manual axes)
      s = NamedSharding(mesh, s)
    if not isinstance(s, NamedSharding):
      raise TypeError(f"with_sharding_constraint: expected a NamedSharding or a "
                      f"PartitionSpec, got {s!r}")
    types = s.mesh._name_to_type
    if any(types[a] is AxisType.Explicit for p in s.spec
           for a in (p if isinstance(p, tuple) else (p,)) if a in types):
      raise ValueError(
          "The spec of NamedSharding passed to with_sharding_constraint can only refer to "
          f"Auto axes of the mesh. Got spec={s.spec} and mesh={s.mesh.abstract_mesh}. You "
          "probably meant to use `reshard` API?")

    def one(v):
      if isinstance(v, Tracer):
        return sharding_constraint(v, s)
      return put_sharded(v, _concrete_sharding(s, np.ndim(v), "with_sharding_constraint"))
    return tree_util.tree_map(one, sub)
  if _is_sharding_leaf(shardings):
    return constrain(shardings, x)
  return tree_util.tree_map(constrain, shardings, x, is_leaf=_is_sharding_leaf)


def _mesh_with_axis_types(axes, axis_type: AxisType, shardings=None):
  """(abstract mesh in context, the same with ``axes`` of ``axis_type``), or
  None with no mesh in context or in ``shardings``."""
  current = get_abstract_mesh()
  mesh = current
  for s in tree_util.tree_leaves(shardings, is_leaf=_is_sharding_leaf):
    if isinstance(s, NamedSharding):
      if not current.empty and s.mesh.abstract_mesh != current:
        raise ValueError(f"Context mesh {current} must match the mesh passed to shardings "
                         f"{s.mesh.abstract_mesh}. Recommended approach is to use "
                         "`jax.set_mesh` context manager.")
      mesh = s.mesh.abstract_mesh
  if mesh.empty:
    return None
  axes = mesh.axis_names if axes is None else axes if isinstance(axes, tuple) else (axes,)
  for a in axes:
    if mesh._name_to_type[a] is AxisType.Manual:
      raise NotImplementedError(
          "Going from `Manual` AxisType to `Auto` or `Explicit` AxisType is not allowed. "
          "Please file a bug at https://github.com/jax-ml/jax/issues with your use case")
  return mesh, mesh.update_axis_types({a: axis_type for a in axes}), axes


def _spec_without(spec: PartitionSpec, mesh) -> PartitionSpec:
  # JAX's modify_spec_for_auto_manual: a spec names only Explicit axes.
  types = mesh._name_to_type
  out = []
  for p in spec:
    if p is None or p is PartitionSpec.UNCONSTRAINED:
      out.append(p)
    elif isinstance(p, tuple):
      out.append(tuple(a for a in p if types[a] is AxisType.Explicit))
    else:
      out.append(p if types[p] is AxisType.Explicit else None)
  return PartitionSpec(*out)


def _current_spec(x) -> PartitionSpec:
  s = getattr(x, "sharding", None)
  if isinstance(s, NamedSharding):
    return s.spec._normalized_spec_for_aval(np.ndim(x))
  return PartitionSpec(*([None] * np.ndim(x)))


def auto_axes(f: Callable | None = None, /, *, axes=None, out_sharding=None):
  """``f`` run with mesh ``axes`` (default: all) of type ``Auto``: its
  arguments lose those axes from their types, and its results are resharded
  to ``out_sharding`` (here or as a keyword of the call)."""
  if f is None:
    return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

  @functools.wraps(f)
  def wrapped(*args, **kwargs):
    target = out_sharding
    if target is None:
      if "out_sharding" not in kwargs:
        raise TypeError("Missing required keyword argument: 'out_sharding'")
      target = kwargs.pop("out_sharding")
    info = _mesh_with_axis_types(axes, AxisType.Auto, target)
    if info is None or set(info[0].auto_axes) == set(info[2]):
      return f(*args, **kwargs)
    with use_abstract_mesh(info[1]):
      args = tree_util.tree_map(
          lambda a: reshard(a, _spec_without(_current_spec(a), info[1])), args)
      out = f(*args, **kwargs)
    return reshard(out, target)
  return wrapped


def explicit_axes(f: Callable | None = None, /, *, axes=None, in_sharding=None):
  """``f`` run with mesh ``axes`` (default: all) of type ``Explicit``: its
  arguments are resharded to ``in_sharding`` (here or as a keyword of the
  call), and its results drop those axes from their types again."""
  if f is None:
    return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

  @functools.wraps(f)
  def wrapped(*args, **kwargs):
    target = in_sharding
    if target is None:
      if "in_sharding" not in kwargs:
        raise TypeError("Missing required keyword argument: 'in_sharding'")
      target = kwargs.pop("in_sharding")
    info = _mesh_with_axis_types(axes, AxisType.Explicit)
    if info is None:
      raise ValueError("Context mesh cannot be empty. Please use `jax.set_mesh` API to enter "
                       "into a mesh context when using `explicit_axes` API.")
    with use_abstract_mesh(info[1]):
      args = reshard(args, target)
      out = f(*args, **kwargs)
    return tree_util.tree_map(lambda o: reshard(o, _spec_without(_current_spec(o), info[0])),
                              out)
  return wrapped


__all__ = ["auto_axes", "explicit_axes", "get_mesh", "make_mesh", "reshard", "set_mesh",
           "with_sharding_constraint"]
