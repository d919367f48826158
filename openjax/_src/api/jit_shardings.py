"""The shardings ``jit`` is given (``in_shardings``/``out_shardings``): pytree
prefixes expanded to one per leaf, and results relabelled as asked; the
device-mismatch errors of a call, naming its arguments as JAX does."""
from __future__ import annotations

import inspect

from openjax._src import tree_util
from openjax._src.core import Array, Literal
from openjax._src.core.placement import IncompatibleDevicesError, devices_phrase
from openjax._src.core.array import ShardedBuffer, sharded_array_of_shards
from openjax._src.core.mesh import get_concrete_mesh
from openjax._src.core.sharding import (Mesh, NamedSharding, PartitionSpec, Sharding, dim_axes,
                                        resolve_sharding)


def is_sharding_leaf(s) -> bool:
  return s is None or isinstance(s, (Sharding, PartitionSpec))


def as_asked(x, sharding):
  """``x`` relabelled with ``sharding`` where that is the same layout as its
  own, written otherwise."""
  if (isinstance(sharding, NamedSharding) and type(x) is Array
      and type(x._buffer) is ShardedBuffer and x._buffer.sharding != sharding
      and x._buffer.sharding.mesh == sharding.mesh
      and x._buffer.sharding.is_equivalent_to(sharding, x.ndim)):
    return sharded_array_of_shards(x.aval, sharding, x._buffer.shards)
  return x


def prefix_leaves(shardings, tree, what: str) -> list:
  """One sharding (or None) per leaf of ``tree`` from ``shardings``, a
  pytree prefix of it."""
  n = tree.num_leaves
  if is_sharding_leaf(shardings):
    return [resolve_sharding(shardings, "jit")] * n
  placeholder = tree_util.tree_unflatten(tree, [object() for _ in range(n)])
  out = []

  def expand(s, sub):
    out.extend([resolve_sharding(s, "jit")] * tree_util.tree_structure(sub).num_leaves)
  try:
    tree_util.tree_map(expand, shardings, placeholder, is_leaf=is_sharding_leaf)
  except ValueError as e:
    raise ValueError(f"jit: {what} is not a pytree prefix of the values it describes: "
                     f"{e}") from None
  return out


def used_leaves(closed, leaves: list, cache: dict) -> list:
  """``leaves`` with the arguments the program never reads left out (None):
  JAX drops those (``keep_unused=False``), so they place nothing. ``cache``:
  the call's per-program dict (the flags are computed once)."""
  used = cache.get("used")
  if used is None:
    read = _read_vars(closed.jaxpr)
    used = cache["used"] = tuple(v in read for v in closed.jaxpr.invars)
  return [x if u else None for x, u in zip(leaves, used)]


def _read_vars(jaxpr) -> set:
  read = {v for eqn in jaxpr.eqns for v in eqn.invars if not isinstance(v, Literal)}
  read.update(v for v in jaxpr.outvars if not isinstance(v, Literal))
  return read


def context_mesh(name: str, leaves: list):
  """The mesh of ``jax.set_mesh`` a call lays its results out over when
  nothing else places it (JAX's device assignment is the context mesh's),
  or None when no mesh is set. An argument committed to one device (not the
  mesh's only one) raises JAX's incompatible-devices error."""
  mesh = get_concrete_mesh()
  if mesh.empty:
    return None
  whole = NamedSharding(mesh, PartitionSpec())
  for i, x in enumerate(leaves):
    if type(x) is Array and x._device is not None and \
        whole._device_assignment != (x._device,):
      raise IncompatibleDevicesError(
          name, [(str(i), x), (None, f"jit's context mesh {devices_phrase(whole)}")])
  return mesh


def meshless_results(closed, leaves: list, mesh, cache: dict) -> tuple:
  """Per result of a call over ``mesh`` whether its type names no mesh, so
  JAX spells its replicated sharding ``P()``: over Auto axes a value read
  from no argument (not labelled as the first argument); over Explicit
  ones (rather than ``P(None,)``) an argument passed through that was not
  laid out over the mesh, or, with no mesh set, a value read from no
  argument over it (a constant). ``cache``: the call's per-program dict."""
  on_mesh = tuple(type(x) is Array and type(x._buffer) is ShardedBuffer
                  and x._buffer.sharding.mesh == mesh for x in leaves)
  key = ("meshless", mesh, on_mesh, get_concrete_mesh().empty)
  flags = cache.get(key)
  if flags is None:
    flags = cache[key] = tuple(_meshless(closed.jaxpr, on_mesh, mesh, key[3]))
  return flags


def _meshless(jaxpr, on_mesh_flags: tuple, mesh, no_context_mesh: bool) -> list:
  if not mesh._any_axis_explicit:
    # (under jax.set_mesh JAX labels a constant as the first argument
    # too, unless that argument is never read: dropped, it labels nothing)
    if not no_context_mesh and jaxpr.invars and jaxpr.invars[0] in _read_vars(jaxpr):
      return [False] * len(jaxpr.outvars)
    return [v not in _reading(jaxpr, set(jaxpr.invars)) for v in jaxpr.outvars]
  on_mesh = {v for v, m in zip(jaxpr.invars, on_mesh_flags) if m}
  typed = _reading(jaxpr, on_mesh) if no_context_mesh else None
  invars = set(jaxpr.invars)
  out = []
  for v in jaxpr.outvars:
    if isinstance(v, Literal):
      out.append(typed is not None)
    elif v in invars:
      out.append(v not in on_mesh)
    else:
      out.append(typed is not None and v not in typed)
  return out


def _reading(jaxpr, sources: set) -> set:
  """``sources`` and the variables of ``jaxpr`` computed from them."""
  reached = set(sources)
  for eqn in jaxpr.eqns:
    if any(not isinstance(v, Literal) and v in reached for v in eqn.invars):
      reached.update(eqn.outvars)
  return reached


def spelled_meshless(outs: list, meshless: tuple) -> list:
  """Replicated results ``outs`` flagged in ``meshless`` relabelled ``P()``."""
  if not any(meshless):
    return outs
  placed = []
  for o, m in zip(outs, meshless):
    if m and type(o) is Array and type(o._buffer) is ShardedBuffer:
      own = o._buffer.sharding
      # (by the spec, not is_fully_replicated: that maps every device's indices)
      if own.spec != _WHOLE and _replicated(own):
        o = sharded_array_of_shards(o.aval, _whole_over(own.mesh), o._buffer.shards)
    placed.append(o)
  return placed


_WHOLE = PartitionSpec()


_replicated_specs: dict = {}


def _replicated(sharding: NamedSharding) -> bool:
  key = (sharding.mesh, sharding.spec)
  whole = _replicated_specs.get(key)
  if whole is None:
    if len(_replicated_specs) > 1024:
      _replicated_specs.clear()
    sizes = sharding.mesh.shape
    whole = _replicated_specs[key] = all(sizes[a] == 1 for p in sharding.spec
                                         for a in dim_axes(p))
  return whole
_wholes: dict = {}


def _whole_over(mesh) -> NamedSharding:
  s = _wholes.get(mesh)
  if s is None:
    if len(_wholes) > 256:
      _wholes.clear()
    s = _wholes[mesh] = NamedSharding(mesh, _WHOLE)
  return s


__all__ = ["as_asked", "context_mesh", "is_sharding_leaf", "meshless_results", "prefix_leaves",
           "spelled_meshless", "used_leaves"]


def fun_qual_name(fun) -> str:
  """The function's name as JAX's errors give it (``f``, ``outer.<locals>.g``)."""
  return getattr(fun, "__qualname__", None) or str(fun)


def leaf_arg_names(fun, args: tuple, kwargs: dict, static_argnums=(),
                   static_argnames=()) -> list[str]:
  """A name per leaf of the call's non-static arguments, in the order jit
  flattens them (positional, then keywords sorted): the parameter's name and
  the leaf's key path in it (``x``, ``t['p']``, ``args[1]``, ``kw['z']``),
  as JAX names arguments in its errors."""
  try:
    params = list(inspect.signature(fun).parameters.values())
  except (TypeError, ValueError):
    params = []
  positional = [p.name for p in params
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
  var_args = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), "args")
  var_kwargs = next((p.name for p in params if p.kind is p.VAR_KEYWORD), None)
  roots = []
  for i, a in enumerate(args):
    if i in static_argnums:
      continue
    name = (positional[i] if i < len(positional)
            else f"{var_args}[{i - len(positional)}]")
    roots.append((name, a))
  for k in sorted(kwargs):
    if k in static_argnames:
      continue
    named = any(p.name == k and p.kind is not p.POSITIONAL_ONLY for p in params)
    roots.append((k if named or var_kwargs is None else f"{var_kwargs}[{k!r}]", kwargs[k]))
  names = []
  for name, value in roots:
    for path, _ in tree_util.tree_flatten_with_path(value)[0]:
      names.append(name + tree_util.keystr(path))
  return names


def named_device_error(err: IncompatibleDevicesError, fun, leaves: list, args: tuple,
                       kwargs: dict, static_argnums=(), static_argnames=()):
  """``err`` with the call's arguments named, when it is about the call's own
  arguments (a nested call's error stays as it is)."""
  for n, a in err.placed:
    if n is not None and not (int(n) < len(leaves) and leaves[int(n)] is a):
      return err
  return err.renamed(fun_qual_name(fun), leaf_arg_names(fun, args, kwargs, static_argnums,
                                                        static_argnames))


def check_devices_agree(name: str, leaves: list, out_shardings) -> None:
  """JAX's error when the committed arguments of a sharded call (or its
  ``out_shardings``) sit on different sets of devices: the first argument
  that fixes devices and the first thing that disagrees with it."""
  first = None
  for i, x in enumerate(leaves):
    if type(x) is not Array or (x._device is None and type(x._buffer) is not ShardedBuffer):
      continue   # uncommitted: goes where the call runs
    assignment = x.sharding._device_assignment
    if first is None:
      first = (str(i), x, assignment)
    elif assignment != first[2]:
      raise IncompatibleDevicesError(name, [first[:2], (str(i), x)])
  for s in out_shardings or ():
    if (first is not None and isinstance(s, NamedSharding) and isinstance(s.mesh, Mesh)
        and s._device_assignment != first[2]):
      raise IncompatibleDevicesError(
          name, [first[:2], (None, f"explicit output sharding {devices_phrase(s)}")])


def check_in_shardings(leaves: list, in_shardings) -> None:
  """JAX's error for a committed argument laid out otherwise than the
  ``in_shardings`` entry for it (the layouts compared without the device
  ids, as XLA's shardings are)."""
  for x, s in zip(leaves, in_shardings or ()):
    if (not isinstance(s, Sharding) or type(x) is not Array
        or (x._device is None and type(x._buffer) is not ShardedBuffer)):
      continue
    own = x.sharding
    if _layout(own, x.shape) != _layout(s, x.shape):
      raise ValueError("Sharding passed to jit does not match the sharding on the "
                       f"respective arg. Got jit sharding: {s},\narg sharding: {own} for "
                       f"arg type: {x.aval}")


def _layout(sharding, shape: tuple) -> list:
  return [tuple((i.start, i.stop) for i in index)
          for index in sharding.devices_indices_map(shape).values()]
