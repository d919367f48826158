"""Sharding rules of the operations whose results JAX keeps split where the
operand's layout allows (``core/sharding_rules.py`` has the general ones):
results whose shape differs from the operand's (pad, split, dynamic_slice,
reduce_window, conv), gather and scatter (batch and passed-through
dimensions), top_k, tile, stack/unstack, fft, dynamic_update_slice. Each
gives what JAX 0.10.2 gives, or raises its ShardingTypeError with its
message.
"""
from __future__ import annotations

import math

from openjax._src.core.sharding import dim_axes
from openjax._src.core.sharding_rules import is_replicated, operands_split_alike, type_str
from openjax._src.errors import ShardingTypeError


def _mesh_of(avals):
  for a in avals:
    if a.sharding is not None:
      return a.sharding.mesh
  return None


def _parts(avals, entry) -> int:
  """How many pieces a dimension split over ``entry``'s axes has."""
  mesh = _mesh_of(avals)
  if mesh is None:
    return 1
  sizes = mesh.shape
  return math.prod(sizes[a] for a in dim_axes(entry))


def _axes_str(entry) -> str:
  return ", ".join(dim_axes(entry))


def varying_shape_spec(name: str, spec: tuple, aval, out_shape) -> tuple:
  """The operand's ``spec`` for a result of ``out_shape`` (same rank): a split
  dimension whose size changes must stay divisible by its pieces (JAX then
  moves the data); a result of only size-1 dimensions is whole."""
  if not out_shape or all(n == 1 for n in out_shape):
    return (None,) * len(out_shape)
  for d, p in enumerate(spec):
    if p is None or out_shape[d] == aval.shape[d]:
      continue
    k = _parts([aval], p)
    if out_shape[d] % k:
      raise ShardingTypeError(
          f"{name} on sharded dims where out dim ({out_shape[d]}) is not divisible by mesh "
          f"axes ({k}) with spec ({_axes_str(p)}) is not implemented. Got input "
          f"type={type_str(aval, spec, short=True)} and output shape="
          f"{tuple(int(n) for n in out_shape)}")
  return tuple(spec)


def varying_shape_rule(name: str, operand: int = 0):
  """Results laid out as operand ``operand`` (pad, split, dynamic_slice,
  reduce_window): see ``varying_shape_spec``."""
  def rule(specs, avals, out_avals, **params):
    return [varying_shape_spec(name, specs[operand], avals[operand], a.shape)
            for a in out_avals]
  return rule


def fft_rule(specs, avals, out_avals, **params):
  """The operand's layout, dimension by dimension (JAX's fft keeps the
  operand's sharding; its transformed sizes may change)."""
  return [tuple(specs[0])]


def top_k_rule(specs, avals, out_avals, *, k, axis, **params):
  spec = specs[0]
  if spec[axis] is not None:
    raise ShardingTypeError(
        "The input should be unsharded over the axis along which to compute the top_k "
        f"values. Got input type={type_str(avals[0], spec)} and axis={axis}")
  return [tuple(spec)] * len(out_avals)


def tile_rule(specs, avals, out_avals, *, reps, **params):
  spec = specs[0]
  for d, (p, r) in enumerate(zip(spec, reps)):
    if p is not None and r != 1:
      raise ShardingTypeError(
          f"Operand cannot be sharded on dimension {d} when the tiling is non-trivial. Got "
          f"input type: {type_str(avals[0], spec)} with reps: {tuple(reps)}")
  return [tuple(spec)]


def stack_rule(specs, avals, out_avals, *, axis, **params):
  spec = operands_split_alike(specs, avals)
  return [spec[:axis] + (None,) + spec[axis:]]


def unstack_rule(specs, avals, out_avals, *, axis, **params):
  spec = specs[0]
  if spec[axis] is not None:
    raise ShardingTypeError(
        f"unstack operand cannot be sharded on the unstacking axis {axis}. Got operand "
        f"type={type_str(avals[0], spec, short=True)}")
  return [spec[:axis] + spec[axis + 1:]] * len(out_avals)


def _typed_with_axes(aval, spec) -> str:
  """``float32[8@x,4]({Explicit: ('x', 'y')})``: a type and its mesh's axis
  types, as JAX's ``str_short(mesh_axis_types=True)``."""
  mesh = aval.sharding.mesh if aval.sharding is not None else None
  if mesh is None:
    return type_str(aval, spec)
  groups: dict = {}
  for name, t in zip(mesh.axis_names, mesh.axis_types):
    groups.setdefault(t.name, []).append(name)
  shown = ", ".join(f"{k}: {tuple(v)!r}" for k, v in groups.items())
  return f"{type_str(aval, spec)}({{{shown}}})"


def dynamic_update_slice_rule(specs, avals, out_avals, **params):
  """Operand and update laid out alike (JAX's rule). Also accepted, as
  openjax's own library code writes whole pieces into split values and
  split pieces into whole buffers: a whole update (each device slices it),
  or a whole operand (split where the update spans a dimension)."""
  (operand, update), (x, u) = specs[:2], avals[:2]
  if is_replicated(update):
    return [tuple(operand)]
  if is_replicated(operand):
    # (a transpose's zeros): split where the update spans the dimension
    return [tuple(p if u.shape[d] == x.shape[d] else None for d, p in enumerate(update))]
  if operand != update:
    if u.sharding is None and x.sharding is not None:
      u = u.update(sharding=x.sharding)   # shows the mesh, as JAX does
    raise ShardingTypeError(
        "dynamic_update_slice operand sharding must be equal to update sharding, got "
        f"operand sharding {_typed_with_axes(x, operand)} and update sharding "
        f"{_typed_with_axes(u, update)}.")
  return [tuple(operand)]


def conv_rule(specs, avals, out_avals, *, dimension_numbers, out_sharding=None, **params):
  """JAX's: the ``out_sharding`` asked for (transposes ask for their
  primal's); else, with a whole kernel and the input's feature dimension
  whole, the input's layout (dimension by dimension, as JAX's rule returns
  the input's sharding); otherwise an ``out_sharding`` is needed."""
  if out_sharding is not None:
    return [tuple(out_sharding.spec._normalized_spec_for_aval(len(out_avals[0].shape)))]
  lhs_spec = dimension_numbers[0]
  if is_replicated(specs[1]) and specs[0][lhs_spec[1]] is None:
    return [varying_shape_spec("conv_general_dilated", specs[0], avals[0],
                               out_avals[0].shape)]
  raise ShardingTypeError("Please specify the output sharding via `out_sharding` parameter "
                          "of `conv_general_dilated`")


def gather_rule(specs, avals, out_avals, *, dimension_numbers, slice_sizes, **params):
  """JAX's gather rule: operand dimensions sliced into must be whole (or
  taken whole), batching dimensions agree between operand and indices,
  index dimensions that are not batching ones are whole; the result takes
  the passed-through operand dimensions' and the indices' layouts."""
  dn = dimension_numbers
  operand, indices = list(specs[0]), list(specs[1])
  x = avals[0]
  if is_replicated(operand) and is_replicated(indices):
    return [(None,) * len(out_avals[0].shape)]
  sliced_whole = all(slice_sizes[d] == x.shape[d] or operand[d] is None
                     for d in dn.start_index_map)
  batching_agree = all(indices[i] == operand[o] or operand[o] is None or indices[i] is None
                       for o, i in zip(dn.operand_batching_dims,
                                       dn.start_indices_batching_dims))
  queries_whole = all(p is None for i, p in enumerate(indices)
                      if i not in dn.start_indices_batching_dims)
  if not (sliced_whole and batching_agree and queries_whole):
    raise ShardingTypeError(
        "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
        "indexing as out sharding could not be resolved unambiguously (or would require "
        f"collectives on inputs). Got operand=ShapedArray({type_str(x, specs[0])}), "
        f"indices=ShapedArray({type_str(avals[1], specs[1])})")
  for o, i in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
    indices[i] = indices[i] or operand[o]
  passed = iter(d for d in range(len(slice_sizes))
                if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims)
  from_indices = iter(indices)
  out = []
  for j in range(len(out_avals[0].shape)):
    out.append(operand[next(passed)] if j in dn.offset_dims else next(from_indices))
  return [tuple(out)]


def _updates_batching_dims(indices_batching_dims, update_window_dims, index_vector_dim,
                           n_updates) -> tuple:
  scatter_dims: list = list(range(index_vector_dim))
  for i in update_window_dims:
    scatter_dims.insert(i, None)
  return tuple(scatter_dims.index(i) for i in indices_batching_dims)


def scatter_rule(specs, avals, out_avals, *, dimension_numbers, **params):
  """JAX's scatter rule (its gather rule inverted): the result takes the
  operand's layout, completed by the updates' batching and window
  dimensions, when batching dimensions agree, window dimensions agree (or
  are whole), and query and index-vector dimensions are whole."""
  dn = dimension_numbers
  operand, indices, updates = specs[0], specs[1], specs[2]
  x, u = avals[0], avals[2]
  if is_replicated(operand) and is_replicated(indices) and is_replicated(updates):
    return [(None,) * len(x.shape)]
  index_vector_dim = len(indices) - 1
  updates_batching = _updates_batching_dims(dn.scatter_indices_batching_dims,
                                            dn.update_window_dims, index_vector_dim,
                                            len(updates))
  operand_window = [d for d in range(len(x.shape))
                    if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
  ok = (all(len({a for a in (operand[o], indices[i], updates[b]) if a is not None}) <= 1
            for o, i, b in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims,
                               updates_batching))
        # JAX's ``.at[]`` and gather transposes lay the updates and the
        # zeros they scatter into out alike; openjax's leave one whole,
        # which each device slices: a whole side takes the other's split.
        and all((u.shape[ud] == x.shape[od]
                 and (updates[ud] == operand[od] or None in (updates[ud], operand[od])))
                or (updates[ud] is None and operand[od] is None)
                for ud, od in zip(dn.update_window_dims, operand_window))
        and all(operand[d] is None for d in dn.inserted_window_dims)
        and all(p is None for d, p in enumerate(updates)
                if d not in updates_batching and d not in dn.update_window_dims)
        and all(p is None for d, p in enumerate(indices[:index_vector_dim])
                if d not in dn.scatter_indices_batching_dims)
        and indices[index_vector_dim] is None)
  if not ok:
    raise ShardingTypeError(
        "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for "
        "the scatter update as out sharding could not be resolved unambiguously (or would "
        f"require collectives on inputs). Got operand=ShapedArray({type_str(x, operand)}), "
        f"indices=ShapedArray({type_str(avals[1], indices)}), "
        f"updates=ShapedArray({type_str(u, updates)})")
  out = list(operand)
  for o, i, b in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims,
                     updates_batching):
    if out[o] is None:
      out[o] = indices[i] or updates[b]
  for ud, od in zip(dn.update_window_dims, operand_window):
    if out[od] is None:
      out[od] = updates[ud]
  return [tuple(out)]


__all__ = ["conv_rule", "dynamic_update_slice_rule", "fft_rule", "gather_rule",
           "scatter_rule", "stack_rule", "tile_rule", "top_k_rule", "unstack_rule",
           "varying_shape_rule", "varying_shape_spec"]
