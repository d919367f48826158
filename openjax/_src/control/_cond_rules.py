"""``cond_p`` (the primitive of ``lax.cond``/``lax.switch``) with all its rules,
and ``empty2_p``, the placeholder residual of the branches not taken.

Operands: an int32 index, then the operands every branch takes. Parameter:
``branches``, a tuple of ClosedJaxprs with identical input and output types;
branch ``index`` runs (out of range: the last one, like ``stablehlo.case``).

Transformations work branch by branch and then make the branches agree again:
JVP differentiates every branch with the union of nonzero tangents;
partial evaluation splits every branch into a known and an unknown part, and
the residuals of all branches are joined into one list (a branch fills the
slots of the others with ``empty2`` placeholders, as JAX does); transposition
transposes every branch; batching either batches every branch (unbatched
index) or, with a batched index, evaluates every branch and selects per
example (``select_n``), as JAX does.
"""
from __future__ import annotations

import enum
import itertools
from typing import NamedTuple, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.core import (ClosedJaxpr, Jaxpr, JaxprEqn, Primitive, ShapedArray, Var,
                               dce_jaxpr, eval_jaxpr, get_aval, set_current_trace)
from openjax._src.core.jaxpr import JaxprTypeError
from openjax._src.core.sharding_rules import TYPED_BY_SUB_JAXPR, replicated_rule
from openjax._src.control.nested_calls import loop_runner
from openjax._src.interpreters.batching import batch_jaxpr
from openjax._src.interpreters.jvp import jvp_jaxpr
from openjax._src.interpreters.partial_eval import partial_eval_jaxpr
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.interpreters.transpose import transpose_jaxpr
from openjax._src.primitives.base.ad_util import (Zero, is_undefined_primal, stop_gradient,
                                                  tangent_aval)
from openjax._src.primitives.base.structural import broadcast_in_dim, instantiate_zeros, moveaxis
from openjax._src.primitives.base.batch_util import bdim_at_front
from openjax._src.primitives.elementwise.logic import eq, select, select_n

# -------------------------------------------------------------------- empty2
class MemorySpace(enum.Enum):
  """Where an ``empty2`` buffer lives (printed ``MemorySpace.Device``, as JAX)."""
  Device = "device"


empty2_p = Primitive("empty2")


@empty2_p.def_impl
def _empty2_impl(*, dtype, memory_space):
  return [np.zeros((), dtype)]


@empty2_p.def_abstract_eval
def _empty2_abstract_eval(*, dtype, memory_space):
  return [ShapedArray((), dtype)]


empty2_p.def_sharding_rule(replicated_rule)


@empty2_p.def_jvp
def _empty2_jvp(primals, tangents, *, dtype, memory_space):
  out = empty2_p.bind1(dtype=dtype, memory_space=memory_space)
  return [out], [Zero(tangent_aval(get_aval(out)))]


@empty2_p.def_batch
def _empty2_batch(vals, dims, *, dtype, memory_space):
  return [empty2_p.bind1(dtype=dtype, memory_space=memory_space)], [None]


@empty2_p.def_lower
def _empty2_lower(ctx, *, dtype, memory_space):
  # Its value is never read (only untaken branches produce it): zeros.
  return [ctx.constant(np.zeros((), dtype))]


def empty_like(aval: ShapedArray):
  """A value of ``aval`` whose contents do not matter (``empty2``, then
  broadcast), standing in for a residual another branch computes."""
  if aval.dtype == dtypes.float0:
    return np.zeros(aval.shape, dtypes.float0)
  x = empty2_p.bind1(dtype=aval.dtype, memory_space=MemorySpace.Device)
  return x if not aval.shape else broadcast_in_dim(x, aval.shape, ())


# ---------------------------------------------------------------------- cond
cond_p = Primitive("cond", multiple_results=True)


def select_branch(index, n: int) -> int:
  """The branch a concrete index runs; out of range runs the last one
  (``stablehlo.case``'s rule)."""
  i = int(index)
  return i if 0 <= i < n else n - 1


@cond_p.def_impl
def _cond_impl(index, *args, branches):
  branch = branches[select_branch(index, len(branches))]
  return loop_runner(branch)(args)


def _typematch(a: ShapedArray, b: ShapedArray) -> bool:
  return a.shape == b.shape and a.dtype == b.dtype


def _avals_short(avals) -> str:
  return "(" + ", ".join(a.str_short() for a in avals) + ")"


@cond_p.def_abstract_eval
def _cond_abstract_eval(index, *avals, branches):
  if not isinstance(branches, tuple) or not branches or not all(
      isinstance(b, ClosedJaxpr) for b in branches):
    raise JaxprTypeError("cond: branches must be a non-empty tuple of ClosedJaxpr, got "
                         f"{branches!r}")
  b0 = branches[0]
  for i, b in enumerate(branches[1:], 1):
    if len(b.in_avals) != len(b0.in_avals) or not all(map(_typematch, b0.in_avals, b.in_avals)):
      raise JaxprTypeError(f"cond branches 0 and {i} have mismatching input types: "
                           f"{_avals_short(b0.in_avals)} vs {_avals_short(b.in_avals)}")
    if len(b.out_avals) != len(b0.out_avals) or not all(
        map(_typematch, b0.out_avals, b.out_avals)):
      raise JaxprTypeError(f"cond branches 0 and {i} have mismatching output types: "
                           f"{_avals_short(b0.out_avals)} vs {_avals_short(b.out_avals)}")
  if len(avals) != len(b0.in_avals):
    raise JaxprTypeError(f"cond called with {len(avals)} non-predicate operands, but "
                         f"branches take {len(b0.in_avals)} inputs")
  if index.dtype != np.int32 or index.shape != ():
    raise JaxprTypeError(f"cond called with index of type {index.str_short()} instead of "
                         "i32[]; lax.cond and lax.switch convert the index to int32")
  if not all(map(_typematch, b0.in_avals, avals)):
    raise JaxprTypeError(f"cond branches take input types {_avals_short(b0.in_avals)}, "
                         f"called with operands of type {_avals_short(avals)}")
  # The outputs take branch 0's weak types, as in JAX.
  return list(b0.out_avals)


cond_p.mark_not_applicable("sharding_rule", TYPED_BY_SUB_JAXPR)


def _cond_vma(in_vma, *, branches):
  # As JAX 0.10.2: the results vary as the branches' results do; an index
  # varying over a manual axis does not make them vary (each device takes its
  # own branch, yet the type says invariant, and an out_specs P() returns
  # device 0's value).
  return [a.vma for a in branches[0].out_avals]


cond_p.vma_rule = _cond_vma


@cond_p.def_lower
def _cond_lower(ctx, index, *args, branches):
  # stablehlo.case: one region per branch, without block arguments; the
  # regions read the operands from the enclosing block.
  out_types = [ctx.aval_type(a) for a in ctx.avals_out]
  regions = []
  for branch in branches:
    with ctx.region([]) as region:
      ctx.ret(ctx.lower_jaxpr_inline(branch, args))
    regions.append(region)
  return list(ctx.op("stablehlo.case", [index], out_types, regions=regions))


# ----------------------------------------------------------------------- JVP
@cond_p.def_jvp
def _cond_jvp(primals, tangents, *, branches):
  index, *ops = primals
  ops_nz = [type(t) is not Zero for t in tangents[1:]]
  first = [jvp_jaxpr(b, ops_nz, False) for b in branches]
  out_nz = [any(nz) for nz in zip(*(nz for _, nz in first))]
  if not out_nz:
    out_nz = [False] * len(branches[0].out_avals)
  # Every branch must produce the tangents any branch produces.
  branches_jvp = tuple(j if nz == out_nz else jvp_jaxpr(b, ops_nz, out_nz)[0]
                       for b, (j, nz) in zip(branches, first))
  ops_dot = [t for t in tangents[1:] if type(t) is not Zero]
  outs = cond_p.bind(index, *ops, *ops_dot, branches=branches_jvp)
  n = len(out_nz)
  rest = iter(outs[n:])
  tangents_out = [next(rest) if nz else Zero(tangent_aval(a))
                  for a, nz in zip(branches[0].out_avals, out_nz)]
  return outs[:n], tangents_out


# -------------------------------------------------------- partial evaluation
class _Split(NamedTuple):
  known: tuple          # branches: known operands -> known outputs + residuals
  unknown: tuple        # branches: residuals + unknown operands -> unknown outputs
  out_unknowns: list
  res_avals: list


def _split_branches(branches: Sequence[ClosedJaxpr], ops_unknown: Sequence[bool]) -> _Split:
  """Split every branch in a known and an unknown part with the same
  unknown outputs (the union over branches) and the same residuals."""
  parts = [partial_eval_jaxpr(b.jaxpr, list(ops_unknown)) for b in branches]
  n_out = len(branches[0].out_avals)
  out_uks = [any(u) for u in zip(*(p[2] for p in parts))] or [False] * n_out
  known, unknown, res_avals = [], [], []
  for b, (k, u, b_uks, n_res) in zip(branches, parts):
    k, u, res = _make_unknown(k, u, b_uks, n_res, out_uks)
    known.append(ClosedJaxpr(k, b.consts))
    unknown.append(u)
    res_avals.append(res)
  all_res, slots = _merge_branch_residuals(res_avals)
  n_known = out_uks.count(False)
  known_out = tuple(_fill_residuals(k, n_known, s, all_res) for k, s in zip(known, slots))
  unknown_out = tuple(_take_all_residuals(u, s, all_res) for u, s in zip(unknown, slots))
  return _Split(known_out, unknown_out, out_uks, all_res)


def _make_unknown(known: Jaxpr, unknown: Jaxpr, b_uks, n_res: int, out_uks):
  """Make the outputs unknown in ``out_uks`` but known in this branch
  unknown here too: the known part passes them on as extra residuals and
  the unknown part returns them. Returns (known, unknown, residual avals)."""
  n_k = len(known.outvars) - n_res
  k_outs, res_outs = known.outvars[:n_k], known.outvars[n_k:]
  unknown_in = unknown.invars[n_res:]
  if not any(out_uks):     # nothing staged: no residuals needed
    return (known.replace(outvars=k_outs),
            Jaxpr([], [Var(v.aval) for v in unknown_in], [], []), [])
  kept, forced = [], []
  k_iter = iter(k_outs)
  for b_uk, uk in zip(b_uks, out_uks):
    if not b_uk:
      (forced if uk else kept).append(next(k_iter))
  residuals = list(res_outs) + forced
  forced_vars = [Var(a.aval) for a in forced]
  u_iter, f_iter = iter(unknown.outvars), iter(forced_vars)
  outvars = [next(u_iter) if b_uk else next(f_iter)
             for b_uk, uk in zip(b_uks, out_uks) if uk]
  unknown = Jaxpr([], unknown.invars[:n_res] + forced_vars + unknown_in, outvars, unknown.eqns)
  return known.replace(outvars=kept + residuals), unknown, [a.aval for a in residuals]


def _merge_branch_residuals(branch_res_avals: list[list]) -> tuple[list, list[list[int]]]:
  """One residual list serving every branch: residuals of equal type are
  shared across branches (the k-th of a type in one branch takes the slot of
  the k-th of that type in another). Returns (avals, per-branch slots)."""
  def tagged(avals):
    counts: dict = {}
    out = []
    for a in avals:
      n = counts.get(a, 0)
      counts[a] = n + 1
      out.append((a, n))
    return out

  tags = [tagged(avals) for avals in branch_res_avals]
  order = list(dict.fromkeys(itertools.chain.from_iterable(tags)))
  slot = {t: i for i, t in enumerate(order)}
  return [a for a, _ in order], [[slot[t] for t in ts] for ts in tags]


def _fill_residuals(known: ClosedJaxpr, n_out: int, slots: list[int],
                    all_res: list) -> ClosedJaxpr:
  """``known`` returning every branch's residual slots: its own residuals in
  its slots, placeholders (``empty2``) in the others."""
  if not all_res:
    return known
  def fill(*args):
    outs = eval_jaxpr(known.jaxpr, known.consts, *args)
    res = [empty_like(a) for a in all_res]
    for s, r in zip(slots, outs[n_out:]):
      res[s] = r
    return outs[:n_out] + res

  jaxpr, consts = trace_to_jaxpr(fill, known.in_avals)
  return ClosedJaxpr(jaxpr, consts)


def _take_all_residuals(unknown: Jaxpr, slots: list[int], all_res: list) -> ClosedJaxpr:
  """``unknown`` taking every residual slot (reading only its own)."""
  res_vars = [Var(a) for a in all_res]
  for s, v in zip(slots, unknown.invars):
    res_vars[s] = v
  return ClosedJaxpr(unknown.replace(invars=res_vars + unknown.invars[len(slots):]), [])


@cond_p.def_partial_eval
def _cond_partial_eval(pe_trace, unknowns, args, params):
  # Known index: the known parts of the branches run now in one cond that
  # also returns the residuals; the unknown parts are staged as a second
  # cond on the same index. An unknown index stages the whole cond.
  index_uk, *ops_uk = unknowns
  if index_uk:
    return pe_trace.builder.process_primitive(cond_p, args, params)
  split = _split_branches(params["branches"], ops_uk)
  index, *ops = args
  with set_current_trace(pe_trace.parent):
    known_outs = cond_p.bind(index, *(x for x, u in zip(ops, ops_uk) if not u),
                             **dict(params, branches=split.known))
  n_known = len(known_outs) - len(split.res_avals)
  unknown_outs = []
  if any(split.out_unknowns):
    unknown_outs = pe_trace.builder.process_primitive(
        cond_p, [index, *known_outs[n_known:], *(x for x, u in zip(ops, ops_uk) if u)],
        dict(params, branches=split.unknown))
  k, u = iter(known_outs[:n_known]), iter(unknown_outs)
  return [next(u) if uk else next(k) for uk in split.out_unknowns]


def _cond_partial_eval_jaxpr_custom(eqn: JaxprEqn, unknowns: Sequence[bool]):
  """The jaxpr-level split (``partial_eval_jaxpr`` of an enclosing jit):
  (known_eqn, unknown_eqn, out_unknowns); with an unknown index nothing is
  known (known_eqn None) and the whole equation is staged."""
  index_uk, *ops_uk = unknowns
  if index_uk:
    return None, eqn, [True] * len(eqn.outvars)
  split = _split_branches(eqn.params["branches"], ops_uk)
  # As in JAX, the known branches of a split jaxpr lose their dead code
  # (the placeholders of the residual slots a branch fills itself).
  known = tuple(ClosedJaxpr(dce_jaxpr(b.jaxpr), b.consts) for b in split.known)
  index, *ops = eqn.invars
  res_vars = [Var(a) for a in split.res_avals]
  known_eqn = JaxprEqn(
      [index, *(x for x, u in zip(ops, ops_uk) if not u)],
      [v for v, u in zip(eqn.outvars, split.out_unknowns) if not u] + res_vars,
      cond_p, dict(eqn.params, branches=known))
  unknown_eqn = JaxprEqn(
      [index, *res_vars, *(x for x, u in zip(ops, ops_uk) if u)],
      [v for v, u in zip(eqn.outvars, split.out_unknowns) if u],
      cond_p, dict(eqn.params, branches=split.unknown))
  return known_eqn, unknown_eqn, split.out_unknowns


cond_p.partial_eval_jaxpr_custom = _cond_partial_eval_jaxpr_custom


# ----------------------------------------------------------------- transpose
@cond_p.def_transpose
def _cond_transpose(cts, index, *ops, branches):
  if is_undefined_primal(index):
    raise TypeError("cond transpose: the branch index cannot be a linear input")
  linear = [is_undefined_primal(x) for x in ops]
  transposed = tuple(transpose_jaxpr(b, linear) for b in branches)
  residuals = [x for x, lin in zip(ops, linear) if not lin]
  outs = iter(cond_p.bind(index, *residuals, *(instantiate_zeros(c) for c in cts),
                          branches=transposed))
  return [None] + [next(outs) if lin else None for lin in linear]


# ------------------------------------------------------------------ batching
# The vmapped axis's name must reach collectives inside the branches even
# when no operand is batched.
cond_p.batch_needs_axis = True


def _bcast_to(pred, like):
  shape = get_aval(like).shape
  if get_aval(pred).ndim == len(shape):
    return pred
  return broadcast_in_dim(pred, shape, tuple(range(get_aval(pred).ndim)))


def _bcast_select(pred, on_true, on_false):
  return select(_bcast_to(pred, on_true), on_true, on_false)


@cond_p.def_batch
def _cond_batch(vals, dims, *, axis_data, branches):
  size, name, spmd = axis_data.size, axis_data.name, axis_data.spmd_name
  index, *ops = vals
  index_dim, *op_dims = dims
  if index_dim is not None:
    # A batched index: run every branch on all examples and pick each
    # example's result (like JAX; side-effect-free branches make this exact).
    index, *ops = (bdim_at_front(x, d, size) for x, d in zip(vals, dims))
    outs_per_branch = []
    for i, b in enumerate(branches):
      batched, _ = batch_jaxpr(b, [0] * len(ops), size, name, spmd_axis_name=spmd)
      # Operands of the untaken examples carry no gradient into this branch
      # (so NaNs of a branch's derivative at inputs it never sees stay out).
      taken = eq(index, np.int32(i))
      branch_ops = [_bcast_select(taken, x, stop_gradient(x)) for x in ops]
      outs_per_branch.append(eval_jaxpr(batched.jaxpr, batched.consts, *branch_ops))
    outs = [select_n(_bcast_to(index, cases[0]), *cases) for cases in zip(*outs_per_branch)]
    return outs, [0] * len(outs)
  ops = [x if d is None else moveaxis(x, d, 0) for x, d in zip(ops, op_dims)]
  in_dims = [None if d is None else 0 for d in op_dims]
  first = [batch_jaxpr(b, in_dims, size, name, spmd_axis_name=spmd, instantiate=False)
           for b in branches]
  out_dims = [0 if any(d is not None for d in ds) else None
              for ds in zip(*(d for _, d in first))]
  # An output batched in any branch is batched in all of them.
  batched = tuple(j if d == out_dims else
                  batch_jaxpr(b, in_dims, size, name, out_dims=out_dims, spmd_axis_name=spmd)[0]
                  for b, (j, d) in zip(branches, first))
  return cond_p.bind(index, *ops, branches=batched), out_dims


__all__: list[str] = []
