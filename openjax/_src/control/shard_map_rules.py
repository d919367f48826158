"""Rules of ``shard_map_p`` besides its evaluation: the replication check
(``check_vma``: the body's results are typed with the mesh axes they vary
over, ``primitives/collectives/varying.py``), printing, JVP, transpose,
batching, partial evaluation and lowering. Each transforms the per-device
program (with the mesh axes bound, so its collectives trace) and binds
``shard_map_p`` again with matching specs."""
from __future__ import annotations

import math

import numpy as np

from openjax._src.control.shard_map import (global_aval, manual_submesh, mesh_axis_sizes,
                                            partial_parents, shard_map_as_vmap, shard_map_p)
from openjax._src.control.shard_map_plan import COLLECTIVES
from openjax._src.core import (ClosedJaxpr, Literal, ShapedArray, eval_jaxpr, pp_eqn,
                               set_current_trace)
from openjax._src.core.jaxpr import jaxprs_in_params
from openjax._src.core.mesh import MeshIdentityMap
from openjax._src.core.sharding import PartitionSpec, dim_axes
from openjax._src.interpreters.batching import batch_jaxpr
from openjax._src.interpreters.jvp import jvp_jaxpr
from openjax._src.interpreters.partial_eval import partial_eval_jaxpr
from openjax._src.interpreters.staging import trace_to_closed_jaxpr
from openjax._src.interpreters.transpose import transpose_jaxpr
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal, tangent_aval
from openjax._src.primitives.base.structural import (expand_dims, instantiate_zeros, moveaxis,
                                                     squeeze)
from openjax._src.primitives.collectives.collectives import (all_gather_p, axis_index_p,
                                                             extend_axis_env, psum_p)
from openjax._src.primitives.elementwise.arithmetic import div

__all__ = ["check_replication", "check_out_replication", "varying_after", "context_meshes",
           "manual_submesh", "partial_parents"]


def _mesh_env(mesh):
  return extend_axis_env(mesh_axis_sizes(mesh).items())


def _spec_axes(spec) -> set:
  return {a for e in spec for a in dim_axes(e)}


# ------------------------------------------------------ replication check

def varying_after(p, params: dict, ins: frozenset, n_out: int) -> list:
  """The mesh axes each of a primitive's ``n_out`` results varies over,
  from its operands' (the eager shard_map's bookkeeping; staging types
  traced values the same way)."""
  if p.vma_rule is not None:
    vma = p.vma_rule(ins, **params)
    return [frozenset(v) for v in vma] if type(vma) is list else [frozenset(vma)] * n_out
  if jaxprs_in_params(params):
    inner = set()
    for j in jaxprs_in_params(params):
      inner |= _jaxpr_varying(j)
    return [ins | inner] * n_out
  return [ins] * n_out


def _jaxpr_varying(jaxpr) -> set:
  """Axes a sub-program's collectives make vary (axis_index and friends)."""
  out = set()
  for eqn in jaxpr.eqns:
    if eqn.primitive.vma_needs is not None or eqn.primitive is axis_index_p:
      names = eqn.params.get("axis_name", ())
      out |= set(names if isinstance(names, tuple) else (names,))
    for j in jaxprs_in_params(eqn.params):
      out |= _jaxpr_varying(j)
  return out


def check_replication(jaxpr: ClosedJaxpr, mesh, in_specs, out_specs, name: str) -> None:
  """JAX's check_vma error: an output whose out_spec leaves a mesh axis out
  (claims it replicated over that axis) must not vary over it. The body was
  traced with vma types, so its results' types say what they vary over."""
  check_out_replication([a.vma for a in jaxpr.out_avals], out_specs, mesh, name)


def check_out_replication(vmas: list, out_specs, mesh, name: str) -> None:
  msgs = []
  single = len(out_specs) == 1
  for i, (vma, spec) in enumerate(zip(vmas, out_specs)):
    mentioned = _spec_axes(spec)
    if not set(vma) - mentioned:
      continue
    key = "" if single else f"[{i}]"
    unmentioned = [a for a in mesh.axis_names if a not in mentioned]
    if len(unmentioned) > 1:
      need = ",".join(str(a) for a in mesh.axis_names if a in mentioned)
      got = ",".join(str(a) for a in mesh.axis_names if a in vma)
      diff = ",".join(str(a) for a in unmentioned if a in vma)
      msgs.append(f"* out_specs{key} is {spec} which implies that the corresponding output "
                  f"value is only varying across mesh axes {{{need}}} and not {{{diff}}}, but "
                  f"it was inferred to be possibly varying over {{{got}}}")
    else:
      msgs.append(f"* out_specs{key} is {spec} which implies that the corresponding output "
                  f"value is replicated across mesh axis '{unmentioned[0]}', but could not "
                  "infer replication over any axes")
  if not msgs:
    return
  if len(msgs) == 1:
    msgs = [msgs[0][2:]]
  raise ValueError(
      f"shard_map applied to the function '{name}' was given out_specs which require "
      "replication which can't be statically inferred given the mesh:\n\n"
      f"The mesh given has shape {tuple(mesh.devices.shape)} with corresponding axis "
      f"names {mesh.axis_names}.\n\n" + "\n\n".join(msgs) + "\n\n"
      "Check if these output values are meant to be replicated over those mesh axes. If "
      "not, consider revising the corresponding out_specs entries. If so, consider "
      "disabling the check by passing the check_vma=False argument to "
      "`jax.shard_map`.")


# --------------------------------------------------------------- printing
#: Meshes shard_map took from the context (``jax.set_mesh``) rather than
#: from ``mesh=``: JAX's jaxpr shows those as their AbstractMesh. By identity:
#: an equal mesh passed as ``mesh=`` prints as a Mesh.
context_meshes = MeshIdentityMap()


def _shard_map_pp(eqn, ctx):
  params = {k: eqn.params[k] for k in sorted(eqn.params)}
  mesh = partial_parents.get(params["mesh"], params["mesh"])
  params["mesh"] = mesh.abstract_mesh if mesh in context_meshes else mesh
  return pp_eqn(eqn, ctx, params)


shard_map_p.pp_rule = _shard_map_pp


# ------------------------------------------------------------------ rules
def _params(params, jaxpr, in_specs, out_specs) -> dict:
  return dict(params, jaxpr=jaxpr, in_specs=tuple(in_specs), out_specs=tuple(out_specs))


@shard_map_p.def_jvp
def _shard_map_jvp(primals, tangents, **params):
  jaxpr, in_specs, out_specs = params["jaxpr"], params["in_specs"], params["out_specs"]
  nonzeros = [type(t) is not Zero for t in tangents]
  with _mesh_env(params["mesh"]):
    jvp_closed, out_nz = jvp_jaxpr(jaxpr, nonzeros, False)
  tans = [t for t in tangents if type(t) is not Zero]
  t_specs = [s for s, nz in zip(in_specs, nonzeros) if nz]
  o_specs = [s for s, nz in zip(out_specs, out_nz) if nz]
  outs = shard_map_p.bind(*primals, *tans,
                          **_params(params, jvp_closed, [*in_specs, *t_specs],
                                    [*out_specs, *o_specs]))
  n = len(out_specs)
  rest = iter(outs[n:])
  sizes = mesh_axis_sizes(params["mesh"])
  tangents_out = [next(rest) if nz else Zero(tangent_aval(global_aval(a, s, sizes)))
                  for a, s, nz in zip(jaxpr.out_avals, out_specs, out_nz)]
  return outs[:n], tangents_out


def _unmentioned_count(mesh, spec) -> int:
  sizes = mesh_axis_sizes(mesh)
  used = _spec_axes(spec)
  return math.prod(s for a, s in sizes.items() if a not in used)


@shard_map_p.def_transpose
def _shard_map_transpose(cts, *invals, **params):
  jaxpr, mesh = params["jaxpr"], params["mesh"]
  in_specs, out_specs = params["in_specs"], params["out_specs"]
  linear = [is_undefined_primal(x) for x in invals]
  with _mesh_env(mesh):
    transposed = transpose_jaxpr(jaxpr, linear)
  names = tuple(mesh.axis_names)
  lin_specs = [s for s, lin in zip(in_specs, linear) if lin]
  n_nonlin = sum(not lin for lin in linear)
  # With check_vma the body is typed: an input replicated over an axis met
  # varying values through a pvary (whose transpose sums the devices'
  # cotangents) and a psum's transpose hands each device the invariant
  # cotangent, so cotangents pass through as they are. Without types every
  # device's copy of a replicated output takes a share of its cotangent and
  # a replicated input sums its devices' shares.
  typed = params["check_vma"]
  counts = [1 if typed else _unmentioned_count(mesh, s) for s in out_specs]

  def body(*args):
    # An output replicated over axes: every device's copy took a share of
    # its cotangent; an input replicated over axes sums its devices' shares.
    nonlin, cts_in = args[:n_nonlin], args[n_nonlin:]
    cts_in = [c if k == 1 else div(c, np.asarray(k, c.aval.dtype))
              for c, k in zip(cts_in, counts)]
    outs = eval_jaxpr(transposed.jaxpr, transposed.consts, *nonlin, *cts_in)
    summed = []
    for o, s in zip(outs, lin_specs):
      missing = () if typed else tuple(a for a in names if a not in _spec_axes(s))
      summed.append(psum_p.bind1(o, axes=missing, axis_index_groups=None) if missing else o)
    return summed

  with _mesh_env(mesh):
    wrapped = trace_to_closed_jaxpr(body, transposed.in_avals)
  nonlinear = [x for x, lin in zip(invals, linear) if not lin]
  nonlin_specs = [s for s, lin in zip(in_specs, linear) if not lin]
  outs = shard_map_p.bind(*nonlinear, *(instantiate_zeros(c) for c in cts),
                          **_params(params, wrapped, [*nonlin_specs, *out_specs], lin_specs))
  rest = iter(outs)
  return [next(rest) if lin else None for lin in linear]


shard_map_p.batch_needs_axis = True


@shard_map_p.def_batch
def _shard_map_batch(vals, dims, *, axis_data, **params):
  jaxpr, in_specs, out_specs = params["jaxpr"], params["in_specs"], params["out_specs"]
  moved = [v if d is None or d == 0 else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
  in_dims = [None if d is None else 0 for d in dims]
  with _mesh_env(params["mesh"]):
    batched, _ = batch_jaxpr(jaxpr, in_dims, axis_data.size, axis_data.name)
  new_in = [s if d is None else PartitionSpec(None, *s) for s, d in zip(in_specs, in_dims)]
  new_out = [PartitionSpec(None, *s) for s in out_specs]
  outs = shard_map_p.bind(*moved, **_params(params, batched, new_in, new_out))
  return outs, [0] * len(outs)


# Residuals are per-device values: each gets a leading dimension of one row
# per device, split over every mesh axis.
def _residual_spec(mesh) -> PartitionSpec:
  names = tuple(mesh.axis_names)
  return PartitionSpec(names if len(names) > 1 else names[0])


@shard_map_p.def_partial_eval
def _shard_map_partial_eval(pe_trace, unknowns, args, params):
  jaxpr, mesh = params["jaxpr"], params["mesh"]
  in_specs, out_specs = params["in_specs"], params["out_specs"]
  with _mesh_env(mesh):
    known, unknown, out_unknowns, n_res = partial_eval_jaxpr(jaxpr.jaxpr, unknowns)
  known_closed = ClosedJaxpr(known, jaxpr.consts)
  n_known_out = len(known.outvars) - n_res

  def known_body(*xs):
    outs = eval_jaxpr(known_closed.jaxpr, known_closed.consts, *xs)
    return [*outs[:n_known_out], *(expand_dims(r, (0,)) for r in outs[n_known_out:])]

  res_avals = [v.aval for v in known.outvars[n_known_out:]]
  unknown_closed = ClosedJaxpr(unknown, [])

  def unknown_body(*xs):
    res = [squeeze(r, (0,)) for r in xs[:n_res]]
    return eval_jaxpr(unknown_closed.jaxpr, unknown_closed.consts, *res, *xs[n_res:])

  with _mesh_env(mesh):
    known_w = trace_to_closed_jaxpr(known_body, known_closed.in_avals)
    res_in = [ShapedArray((1, *a.shape), a.dtype, a.weak_type) for a in res_avals]
    unknown_w = trace_to_closed_jaxpr(unknown_body, [*res_in, *unknown_closed.in_avals[n_res:]])
  rspec = _residual_spec(mesh)
  known_in = [s for s, u in zip(in_specs, unknowns) if not u]
  known_out = [s for s, u in zip(out_specs, out_unknowns) if not u]
  unknown_in = [s for s, u in zip(in_specs, unknowns) if u]
  unknown_out = [s for s, u in zip(out_specs, out_unknowns) if u]
  known_args = [a for a, u in zip(args, unknowns) if not u]
  with set_current_trace(pe_trace.parent):
    known_outs = shard_map_p.bind(*known_args, **_params(
        params, known_w, known_in, [*known_out, *[rspec] * n_res]))
  residuals = known_outs[n_known_out:]
  unknown_args = [a for a, u in zip(args, unknowns) if u]
  unknown_outs = pe_trace.builder.process_primitive(
      shard_map_p, [*residuals, *unknown_args],
      _params(params, unknown_w, [*[rspec] * n_res, *unknown_in], unknown_out))
  k, u = iter(known_outs[:n_known_out]), iter(unknown_outs)
  return [next(u) if unk else next(k) for unk in out_unknowns]


@shard_map_p.def_lower
def _shard_map_lower(ctx, *args, jaxpr, mesh, in_specs, out_specs, check_vma,
                     newly_manual_axes):
  # Inside a compiled program: one program for all devices, the per-device
  # program mapped over the mesh axes (exact collectives, one device).
  in_avals = [v for v in ctx.avals_in]
  closed = trace_to_closed_jaxpr(
      lambda *xs: shard_map_as_vmap(xs, jaxpr, mesh, in_specs, out_specs), in_avals)
  return ctx.lower_jaxpr_inline(closed, args)

