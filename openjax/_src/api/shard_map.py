"""``jax.shard_map`` and ``jax.pmap``: per-device programs over a mesh.

``shard_map(f, mesh=..., in_specs=..., out_specs=...)`` traces ``f`` once on
the block shapes (each argument's dimensions divided by the mesh axes its
PartitionSpec names) with the mesh axes bound as named axes and, with
``check_vma``, every value typed with the mesh axes it varies over; checks
the outputs' replication and binds ``shard_map_p``. ``axis_names`` a subset
of the mesh axes leaves the others automatic; ``smap`` is that over one
axis with vmap-style in/out axes.

``pmap(f, axis_name)`` is ``shard_map`` over a one-axis mesh of the first
``n`` devices, as in JAX 0.10.2: the mapped axis moves to the front, each
device's block of one row is squeezed before ``f`` and its results get the
row back.
"""
from __future__ import annotations

import contextlib
import functools
from typing import Callable

import numpy as np

from openjax._src import tree_util
from openjax._src.api.shapes import abstractify
from openjax._src.api.vmap import check_callable, fun_name, wraps
from openjax._src.control.shard_map import (assemble, local_aval, manual_submesh,
                                            mesh_axis_sizes, named_sharding, onto_whole_mesh,
                                            partial_parents, run_on_devices, shard_map_p,
                                            shards_for)
from openjax._src.control.shard_map_auto import auto_axes, auto_in_spec, with_auto_split
from openjax._src.control.shard_map_eager import ShardMapTrace, ShardMapTracer, eager_blocks
from openjax._src.control.shard_map_jit import compiler_labelled
from openjax._src.control.shard_map_rules import (check_out_replication, check_replication,
                                                  context_meshes)
from openjax._src.core import ShapedArray, Tracer, eval_trace, set_current_trace, trace_state
from openjax._src.core.mesh import (AbstractMesh, AxisType, Mesh, get_abstract_mesh,
                                   get_concrete_mesh, set_context_mesh)
from openjax._src.core.sharding import NamedSharding, PartitionSpec, dim_axes
from openjax._src.core.avals import manual_axis_order
from openjax._src.interpreters.staging import trace_to_closed_jaxpr
from openjax._src.primitives.collectives.collectives import current_axis_env, extend_axis_env
from openjax._src.primitives.collectives.varying import (checking_vma, not_checking_vma, pvary,
                                                         vma_checked_axes, vma_of)

__all__ = ["shard_map", "smap", "Infer", "bind_shard_map", "trace_shard_map"]


class _InferFromArgs:
  """``jax.sharding.Infer``: in_specs read from the arguments' shardings."""

  def __repr__(self):
    return "Infer"


Infer = _InferFromArgs()


def _is_spec_leaf(x) -> bool:
  return x is None or isinstance(x, PartitionSpec)


def _flat_specs(name: str, treedef, specs) -> list:
  dummy = tree_util.tree_unflatten(treedef, [0] * treedef.num_leaves)
  try:
    flat = tree_util.broadcast_prefix(specs, dummy, is_leaf=_is_spec_leaf)
  except ValueError as e:
    raise ValueError(f"shard_map {name} must be a tree prefix of the corresponding value "
                     f"(leaves PartitionSpecs): {e}") from None
  out = []
  for s in flat:
    if s is None:
      raise TypeError(f"shard_map {name}: a None entry where a PartitionSpec is expected; use "
                      "P() for a value replicated over every mesh axis.")
    out.append(s)
  return out


def _resolve_mesh(mesh):
  if mesh is None:
    mesh = get_concrete_mesh()
    if mesh is None or mesh.empty:
      abstract = get_abstract_mesh()
      if abstract is None or abstract.empty:
        raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                         "enter into a mesh context, or pass mesh= to shard_map.")
      raise ValueError("shard_map: only an abstract mesh is in context; pass a concrete "
                       "jax.sharding.Mesh as mesh=, or enter one with jax.set_mesh(mesh).")
  if isinstance(mesh, AbstractMesh):
    raise ValueError("shard_map: an AbstractMesh has no devices to run on; pass a "
                     "jax.sharding.Mesh.")
  if not isinstance(mesh, Mesh):
    raise TypeError(f"shard_map requires a jax.sharding.Mesh as mesh=, got {mesh!r}")
  return mesh


def _check_specs(mesh, specs, what: str) -> None:
  names = set(mesh.axis_names)
  for spec in specs:
    seen = []
    for e in spec:
      for a in dim_axes(e):
        if a not in names:
          raise ValueError(f"shard_map {what} {spec} refers to the axis {a!r}, which the mesh "
                           f"with axes {mesh.axis_names} does not have.")
        if a in seen:
          raise ValueError(f"shard_map {what} {spec} names the mesh axis {a!r} twice.")
        seen.append(a)


def _arg_spec(x, ndim: int) -> PartitionSpec:
  """The layout of an argument over an Explicit mesh: its type's sharding
  (its Array's, eagerly); a value split over no mesh axis is replicated."""
  sharding = x.aval.sharding if isinstance(x, Tracer) else getattr(x, "sharding", None)
  spec = getattr(sharding, "spec", None)
  if spec is None:
    return PartitionSpec(*[None] * ndim)
  return PartitionSpec(*spec)._normalized_spec_for_aval(ndim)


def _check_explicit_in_specs(leaves, specs) -> None:
  """Over a mesh whose axes are all Explicit, an argument's type says how it
  is laid out: in_specs must say the same (JAX reshards nothing here)."""
  for x, spec in zip(leaves, specs):
    aval = abstractify(x)
    want = PartitionSpec(*spec)._normalized_spec_for_aval(aval.ndim)
    have = _arg_spec(x, aval.ndim)
    if tuple(want) != tuple(have):
      raise ValueError(
          f"in_specs passed to shard_map: {want} does not match the specs of the input: "
          f"{have} for arg: {aval}. `in_specs` is an optional argument so you can omit "
          "specifying it and shard_map will infer the in_specs from the arguments. If you "
          "want to reshard your inputs, you can use `jax.reshard` on the arguments and then "
          "pass those args to shard_map.")


def _infer_specs(leaves, manual: frozenset) -> list:
  """in_specs=Infer: each argument's own layout over the manual axes (its
  type's sharding under a transformation, its Array's sharding eagerly); a
  value laid out on no mesh axis is replicated (P())."""
  specs = []
  for x in leaves:
    if isinstance(x, Tracer):
      sharding = x.aval.sharding
    else:
      sharding = getattr(x, "sharding", None)
    spec = getattr(sharding, "spec", None)
    if spec is None:
      specs.append(PartitionSpec())
      continue
    entries = []
    for e in spec:
      names = tuple(a for a in dim_axes(e) if a in manual)
      entries.append(None if not names else names[0] if len(names) == 1 else names)
    while entries and entries[-1] is None:
      entries.pop()
    specs.append(PartitionSpec(*entries))
  return specs


def _manual_axes(mesh, axis_names) -> frozenset:
  if not isinstance(axis_names, (frozenset, set)):
    raise TypeError("`axis_names` argument of shard_map should be of type `frozenset` or "
                    f"`set`. Got type: {type(axis_names)}")
  manual = frozenset(axis_names) if axis_names else frozenset(mesh.axis_names)
  if not manual <= frozenset(mesh.axis_names):
    raise ValueError(f"jax.shard_map requires axis_names={manual} to be a subset of "
                     f"mesh.axis_names={frozenset(mesh.axis_names)}")
  return manual


def _check_manual_specs(specs, manual: frozenset, prefix: str) -> None:
  msgs = [f"  {prefix}_specs{'' if len(specs) == 1 else f'[{i}]'} refers to {a!r}"
          for i, spec in enumerate(specs) for e in spec for a in dim_axes(e)
          if a not in manual]
  if msgs:
    raise ValueError(f"shard_map {prefix}_specs argument must refer to an axis marked as "
                     f"manual ({manual}), but:\n\n" + "\n\n".join(msgs) +
                     f"\n\nCheck the {prefix}_specs values passed to shard_map.")


def body_typed(block: ShapedArray, arg: ShapedArray, sub: Mesh) -> ShapedArray:
  """A partially manual body's input ``block`` typed as JAX types it: split
  along the non-manual Explicit axes the argument ``arg`` is split over, on
  the mesh with the manual axes marked Manual (``f32[4,4@j]``)."""
  if arg.sharding is None:
    return block
  manual = set(sub.axis_names)
  entries = []
  for e in arg.sharding.spec:
    names = tuple(a for a in dim_axes(e) if a not in manual)
    entries.append(None if not names else names[0] if len(names) == 1 else names)
  if all(e is None for e in entries):
    return block
  body_mesh = partial_parents[sub].abstract_mesh.update_axis_types(
      {a: AxisType.Manual for a in manual})
  return block.update(sharding=NamedSharding(body_mesh, PartitionSpec(*entries)))


def shard_map(f: Callable | None = None, /, *, out_specs, in_specs=Infer, mesh=None,
              axis_names=frozenset(), check_vma: bool = True):
  """Map ``f`` over the devices of ``mesh``: each device gets its block of
  every argument (as ``in_specs`` splits it) and ``f``'s results, one block
  per device, are assembled as ``out_specs`` says. With ``axis_names`` a
  subset of the mesh axes, only those are manual; along the others every
  block is whole."""
  if f is None:
    return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                             axis_names=axis_names, check_vma=check_vma)
  return _shard_map(f, out_specs, in_specs, mesh, axis_names, check_vma, False)


def smap(f: Callable | None = None, /, *, in_axes=Infer, out_axes, axis_name):
  """``shard_map`` over the one context-mesh axis ``axis_name`` (the others
  stay automatic), with vmap-style ``in_axes``/``out_axes``: an int is the
  array dimension split over the axis, None a replicated value."""
  if f is None:
    return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
  if isinstance(axis_name, (list, tuple)):
    raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got {axis_name}")
  is_none = lambda x: x is None
  if (in_axes is not None and in_axes is not Infer
      and not isinstance(in_axes, (int, tuple))):
    raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of "
                    "entries corresponding to the positional arguments passed to the "
                    f"function, but got {in_axes}.")
  if in_axes is not Infer and not all(isinstance(a, int) for a in tree_util.tree_leaves(in_axes)):
    raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or (nested) "
                    f"container with those types as leaves, but got {in_axes}.")
  if not all(isinstance(a, int) for a in tree_util.tree_leaves(out_axes)):
    raise TypeError("smap out_axes must be an int, None, or (nested) container with those "
                    f"types as leaves, but got {out_axes}.")

  def spec(axis):
    return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, axis_name)
  in_specs = (Infer if in_axes is Infer
              else tree_util.tree_map(spec, in_axes, is_leaf=is_none))
  out_specs = tree_util.tree_map(spec, out_axes, is_leaf=is_none)
  return _shard_map(f, out_specs, in_specs, None, frozenset({axis_name}), True, True)


def _shard_map(f, out_specs, in_specs, mesh, axis_names, check_vma: bool, from_smap: bool):
  check_callable(f)
  cache: dict = {}

  @wraps(f)
  def shard_map_f(*args):
    m = _resolve_mesh(mesh)
    if mesh is None:
      context_meshes[m] = True
    manual = _manual_axes(m, axis_names)
    full = m
    if manual != frozenset(m.axis_names):
      # Partially manual: the other mesh axes stay automatic. Each block is
      # whole along them, so the body runs over the manual axes' sub-mesh;
      # its results are then laid out over the whole mesh (replicated along
      # the automatic axes).
      m = manual_submesh(m, manual)
    leaves, in_tree = tree_util.tree_flatten(args)
    if in_specs is Infer:
      types = [t for a, t in zip(full.axis_names, full.axis_types) if a in manual]
      if not all(t is AxisType.Explicit for t in types):
        shown = ", ".join(str(t) for t in types)
        raise TypeError(f"in_axes was not specified when axis_name={set(manual)} was of "
                        f"type {shown}" if from_smap else
                        "shard_map in_specs argument must be a pytree of "
                        "`jax.sharding.PartitionSpec` instances, but it was `None` when "
                        f"axis_names={manual} are of type {shown}")
      specs = _infer_specs(leaves, manual)
    else:
      specs = _flat_specs("in_specs", in_tree, tuple(in_specs) if isinstance(in_specs, list)
                          else in_specs)
    if m is not full:
      _check_manual_specs(specs, manual, "in")
    _check_specs(m, specs, "in_specs")
    if m is full and all(t is AxisType.Explicit for t in m.axis_types):
      _check_explicit_in_specs(leaves, specs)
    if trace_state.trace is eval_trace:
      return _run_eagerly(f, m, leaves, in_tree, specs, out_specs, check_vma)
    avals = [abstractify(x) for x in leaves]
    key = (m, in_tree, tuple((a.shape, a.dtype, a.weak_type, a.sharding) for a in avals),
           tuple(specs),
           current_axis_env(), vma_checked_axes())
    entry = cache.get(key)
    if entry is None:
      entry = cache[key] = trace_shard_map(f, m, in_tree, avals, specs, out_specs, check_vma)
    jaxpr, out_tree, flat_out_specs = entry
    outs = bind_shard_map(leaves, jaxpr=jaxpr, mesh=m, in_specs=tuple(specs),
                          out_specs=tuple(flat_out_specs), check_vma=bool(check_vma),
                          newly_manual_axes=manual)
    return tree_util.tree_unflatten(out_tree, outs)

  return shard_map_f


def _run_eagerly(f, mesh, leaves, in_tree, specs, out_specs, check_vma):
  """JAX's eager shard_map: ``f`` runs op by op on every device's block."""
  sizes = mesh_axis_sizes(mesh)
  for x, s in zip(leaves, specs):
    a = abstractify(x)
    local_aval(ShapedArray(a.shape, a.dtype, a.weak_type), s, sizes)   # divisibility errors
  trace = ShardMapTrace(eval_trace, mesh, check_vma)
  tracers = []
  partial = mesh in partial_parents
  auto = auto_axes(partial_parents[mesh], mesh.axis_names) if partial else frozenset()
  if auto:
    trace.typing_mesh = partial_parents[mesh].abstract_mesh.update_axis_types(
        {a: AxisType.Explicit for a in auto})
  for x, s in zip(leaves, specs):
    blocks = shards_for(x, named_sharding(mesh, s), np.shape(x))
    t = ShardMapTracer(trace, list(blocks), frozenset(_spec_axes(s)))
    if partial:
      t.split = body_typed(t.aval, abstractify(x), mesh).sharding
      t.auto = auto_in_spec(x, partial_parents[mesh], auto, np.ndim(x))
    tracers.append(t)
  try:
    with set_current_trace(trace), extend_axis_env(sizes.items()), _vma_context(mesh, check_vma):
      out = f(*tree_util.tree_unflatten(in_tree, tracers))
    out_leaves, out_tree = tree_util.tree_flatten(out)
    flat = _flat_specs("out_specs", out_tree, out_specs)
    _check_specs(mesh, flat, "out_specs")
    per_output = [eager_blocks(trace, o) for o in out_leaves]
    body_avals = [o.aval if isinstance(o, ShardMapTracer) else ShapedArray(
        np.shape(o), np.result_type(o)) for o in out_leaves]
    if auto:
      body_avals = [with_auto_split(a, o.auto, partial_parents[mesh])
                    if isinstance(o, ShardMapTracer) and a.sharding is None else a
                    for a, o in zip(body_avals, out_leaves)]
  finally:
    trace.invalidate()
  if check_vma:
    # JAX names its eager per-op helper here, not the function.
    check_out_replication([varying for _, varying in per_output], flat, mesh, "_rem_singleton")
  results = [[blocks[k] for blocks, _ in per_output] for k in range(mesh.devices.size)]
  avals = [ShapedArray(b[0].shape, b[0].dtype, b[0].weak_type) for b, _ in per_output]
  outs = assemble(results, avals, mesh, flat, sizes)
  if partial:
    outs = onto_whole_mesh(outs, mesh, body_avals)
    if auto:   # labelled as XLA lays them out, as JAX's eager run is compiled
      outs = [compiler_labelled(o, partial_parents[mesh]) for o in outs]
  return tree_util.tree_unflatten(out_tree, outs)


def _spec_axes(spec) -> set:
  return {a for e in spec for a in dim_axes(e)}


def bind_shard_map(args, **params) -> list:
  """``shard_map_p`` on ``args``; called eagerly (not under a transformation)
  it runs on the devices directly, so its results stay sharded Arrays (the
  eval trace would hand an impl's results back as whole host values)."""
  if trace_state.trace is eval_trace:
    return run_on_devices(args, params["jaxpr"], params["mesh"], params["in_specs"],
                          params["out_specs"])
  return shard_map_p.bind(*args, **params)


@contextlib.contextmanager
def _vma_context(mesh, check_vma: bool):
  """The body runs typed by varying manual axes (check_vma) or untyped, with
  the whole mesh, its manual axes marked Manual, as the abstract mesh in
  context (JAX's ``get_abstract_mesh()`` and types inside the body)."""
  whole = partial_parents.get(mesh, mesh)
  body_mesh = whole.abstract_mesh.update_axis_types(
      {a: AxisType.Manual for a in mesh.axis_names})
  previous = set_context_mesh(get_concrete_mesh(), body_mesh)
  try:
    with manual_axis_order(mesh.axis_names), \
        (checking_vma(mesh.axis_names) if check_vma else not_checking_vma()):
      yield
  finally:
    set_context_mesh(*previous)


def _vary_over(x, axes: set, mesh):
  missing = axes - vma_of(x)
  if not missing:
    return x
  return pvary(x, tuple(a for a in mesh.axis_names if a in missing))


def _check_out_ranks(name: str, flat: list, avals: list, paths: list, out_specs) -> None:
  """JAX's error for out_specs entries longer than their results' ranks."""
  msgs = []
  for spec, aval, path in zip(flat, avals, paths):
    if len(spec) > aval.ndim:
      spec_key = "" if isinstance(out_specs, PartitionSpec) else path
      msgs.append(f"* out_specs{spec_key} is {spec} which has length {len(spec)}, but "
                  f"{name}(*args){path} has shape {aval.str_short(short_dtypes=False)}, which "
                  f"has rank {aval.ndim} (and {aval.ndim} < {len(spec)})")
  if not msgs:
    return
  if len(msgs) == 1:
    msgs = [msgs[0][2:]]
  msg = (f"shard_map applied to the function '{name}' was given an out_specs entry which is "
         "too long to be compatible with the corresponding output value from the "
         "function:\n\n" + "\n\n".join(msgs) + "\n\nEntries in out_specs must be of "
         "length no greater than the number of axes in the corresponding output value.\n\n"
         f"Either revise the spec to be shorter, or modify '{name}' so that its outputs "
         "have sufficient rank.")
  if any(not a.ndim for spec, a in zip(flat, avals) if len(spec) > a.ndim):
    msg += ("\n\nFor scalar values (rank 0), consider using an out_specs entry of `P()`, "
            "where `P = jax.sharding.PartitionSpec`. In particular, for rank 0 outputs which "
            "are not constant over the mesh, add at least one (singleton) axis to them so "
            "that they can be concatenated using out_specs.")
  raise ValueError(msg)


def trace_shard_map(f, mesh, in_tree, avals, specs, out_specs, check_vma):
  sizes = mesh_axis_sizes(mesh)
  local = [local_aval(ShapedArray(a.shape, a.dtype, a.weak_type), s, sizes)
           for a, s in zip(avals, specs)]
  if mesh in partial_parents:
    local = [body_typed(b, a, mesh) for b, a in zip(local, avals)]
  if check_vma:
    # An input varies over the mesh axes its spec splits it over.
    local = [a.with_vma(_spec_axes(s)) for a, s in zip(local, specs)]
  box: list = []
  paths: list = []

  def flat_fun(*xs):
    out = f(*tree_util.tree_unflatten(in_tree, xs))
    out_leaves, out_tree = tree_util.tree_flatten(out)
    paths.extend(tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(out)[0])
    # pmap's out_specs follow from out_axes, known once the body ran.
    flat = (list(out_specs(out_tree)) if callable(out_specs)
            else _flat_specs("out_specs", out_tree, out_specs))
    if mesh in partial_parents:
      _check_manual_specs(flat, frozenset(mesh.axis_names), "out")
    _check_specs(mesh, flat, "out_specs")
    box.append((out_tree, flat))
    if check_vma:
      # A result laid out over axes it does not vary over varies over them
      # from here (JAX's pvary): each device's cotangent block then sums
      # into the invariant value's.
      out_leaves = [_vary_over(x, _spec_axes(spec), mesh)
                    for x, spec in zip(out_leaves, flat)]
    return out_leaves

  with extend_axis_env(sizes.items()), _vma_context(mesh, check_vma):
    jaxpr = trace_to_closed_jaxpr(flat_fun, local)
  out_tree, flat = box[0]
  _check_out_ranks(fun_name(f), flat, jaxpr.out_avals, paths, out_specs)
  if check_vma:
    check_replication(jaxpr, mesh, specs, flat, fun_name(f))
  return jaxpr, out_tree, flat
