"""``linear_solve_p``: ``lax.custom_linear_solve``'s primitive.

It solves ``matvec(x) = b`` by running the ``solve`` jaxpr, and differentiates
through the linear system instead of through the solver's iterations:

- JVP: ``x_dot = solve(b_dot - matvec_dot(x))``, where ``matvec_dot`` is the
  tangent of ``matvec`` w.r.t. the values it closes over, as a second bind.
- transpose (``b`` is the linear input): ``ct_b = transpose_solve(ct_x)``, the
  same primitive with ``matvec``/``vecmat`` and ``solve``/``transpose_solve``
  swapped.
- batching batches all four jaxprs with ``b`` batched.

Operands: the constants of matvec, vecmat, solve and transpose_solve (in that
order, counts in ``const_lengths``), then the leaves of ``b``. Each jaxpr takes
its constants then the vector leaves; ``solve``'s outputs are the solution
leaves then any auxiliary outputs (``has_aux``; they get zero tangents).
"""
from __future__ import annotations

from typing import NamedTuple

from openjax._src.core import ClosedJaxpr, Primitive, eval_jaxpr, program_of
from openjax._src.core.sharding_rules import TYPED_BY_SUB_JAXPR
from openjax._src.interpreters.batching import batch_jaxpr
from openjax._src.interpreters.jvp import jvp_jaxpr
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal
from openjax._src.primitives.base.batch_util import axis_size, bdim_at_front
from openjax._src.primitives.base.structural import instantiate_zeros, moveaxis
from openjax._src.primitives.elementwise.arithmetic import sub


class LinearSolveTuple(NamedTuple):
  """One entry each for matvec, vecmat, solve and transpose_solve."""
  matvec: object
  vecmat: object
  solve: object
  transpose_solve: object

  def transpose(self) -> LinearSolveTuple:
    return LinearSolveTuple(self.vecmat, self.matvec, self.transpose_solve, self.solve)


linear_solve_p = Primitive("custom_linear_solve", multiple_results=True)
linear_solve_p.mark_not_applicable("sharding_rule", TYPED_BY_SUB_JAXPR)


def linear_solve(consts: LinearSolveTuple, b_leaves, *, jaxprs: LinearSolveTuple) -> list:
  """Bind ``linear_solve_p``: ``consts`` holds each jaxpr's constant operands,
  ``jaxprs`` the ClosedJaxprs taking those operands then the vector leaves
  (vecmat and transpose_solve may be None)."""
  const_lengths = LinearSolveTuple(*(len(c) for c in consts))
  flat = [c for group in consts for c in group]
  return linear_solve_p.bind(*flat, *b_leaves, const_lengths=const_lengths, jaxprs=jaxprs,
)


def _split(args, const_lengths):
  groups, i = [], 0
  for n in const_lengths:
    groups.append(list(args[i:i + n]))
    i += n
  return LinearSolveTuple(*groups), list(args[i:])


def _run(jaxpr: ClosedJaxpr, consts, args) -> list:
  return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *consts, *args)


@linear_solve_p.def_impl
def _linear_solve_impl(*args, const_lengths, jaxprs):
  consts, b = _split(args, const_lengths)
  # The solve's program on the eval trace's kernels, as cond's impl runs its
  # branch (``eval_jaxpr`` would bind each equation).
  solve = jaxprs.solve
  return program_of(solve.jaxpr).runner(solve.consts)([*consts.solve, *b])


@linear_solve_p.def_abstract_eval
def _linear_solve_abstract_eval(*avals, const_lengths, jaxprs):
  _, b = _split(avals, const_lengths)
  solution = jaxprs.solve.out_avals[:len(b)]
  for i, (x, bi) in enumerate(zip(solution, b)):
    if x.shape != bi.shape or x.dtype != bi.dtype:
      raise TypeError(f"custom_linear_solve: solve's output {i} is {x.str_short()} but b's "
                      f"leaf {i} is {bi.str_short()}; solve must return a vector like b")
  return list(jaxprs.solve.out_avals)


@linear_solve_p.def_jvp
def _linear_solve_jvp(primals, tangents, *, const_lengths, jaxprs):
  outs = linear_solve_p.bind(*primals, const_lengths=const_lengths, jaxprs=jaxprs,
)
  consts, b = _split(primals, const_lengths)
  n_x = len(b)
  x = outs[:n_x]
  consts_dot, b_dot = _split(tangents, const_lengths)
  rhs = [instantiate_zeros(t) for t in b_dot]
  nonzero = [type(t) is not Zero for t in consts_dot.matvec]
  if any(nonzero):
    # matvec(x) depends on its constants too: move their contribution to the rhs.
    jvp_closed, _ = jvp_jaxpr(jaxprs.matvec, nonzero + [False] * n_x, True)
    nz_tangents = [t for t, nz in zip(consts_dot.matvec, nonzero) if nz]
    matvec_out = eval_jaxpr(jvp_closed.jaxpr, jvp_closed.consts, *consts.matvec, *x,
                            *nz_tangents)
    matvec_dot = matvec_out[len(matvec_out) // 2:]
    rhs = [sub(r, m) for r, m in zip(rhs, matvec_dot)]
  x_dot = linear_solve_p.bind(*primals[:sum(const_lengths)], *rhs,
                              const_lengths=const_lengths, jaxprs=jaxprs)
  aux_dot = [Zero.from_primal_value(a) for a in outs[n_x:]]
  return outs, x_dot[:n_x] + aux_dot


@linear_solve_p.def_transpose
def _linear_solve_transpose(cts, *args, const_lengths, jaxprs):
  if jaxprs.transpose_solve is None:
    raise TypeError("transpose_solve required for backwards mode automatic differentiation "
                    "of custom_linear_solve: pass transpose_solve= (or symmetric=True)")
  consts, b = _split(args, const_lengths)
  if any(is_undefined_primal(c) for group in consts for c in group):
    raise TypeError("custom_linear_solve: cannot transpose with respect to the values that "
                    "matvec or solve close over (the solve is linear only in b)")
  cts_x = [instantiate_zeros(ct) for ct in cts[:len(b)]]
  t_consts = consts.transpose()
  ct_b = linear_solve_p.bind(*(c for group in t_consts for c in group), *cts_x,
                             const_lengths=const_lengths.transpose(),
                             jaxprs=jaxprs.transpose())
  return [None] * sum(const_lengths) + ct_b[:len(b)]


@linear_solve_p.def_batch
def _linear_solve_batch(vals, dims, *, const_lengths, jaxprs):
  size = axis_size(vals, dims)
  vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
  dims = [None if d is None else 0 for d in dims]
  consts, b = _split(vals, const_lengths)
  const_dims, b_dims = _split(dims, const_lengths)
  # The solution (and so every vector the jaxprs see) is batched whenever anything is.
  b = [bdim_at_front(v, d, size) for v, d in zip(b, b_dims)]
  batched = []
  for jaxpr, cdims in zip(jaxprs, const_dims):
    if jaxpr is None:
      batched.append(None)
      continue
    closed, _ = batch_jaxpr(jaxpr, list(cdims) + [0] * len(b), size)
    batched.append(closed)
  new_jaxprs = LinearSolveTuple(*batched)
  outs = linear_solve_p.bind(*(c for group in consts for c in group), *b,
                             const_lengths=const_lengths, jaxprs=new_jaxprs)
  return outs, [0] * len(outs)


@linear_solve_p.def_lower
def _linear_solve_lower(ctx, *args, const_lengths, jaxprs):
  consts, b = _split(args, const_lengths)
  return ctx.lower_jaxpr_inline(jaxprs.solve, [*consts.solve, *b])


__all__ = ["LinearSolveTuple", "linear_solve", "linear_solve_p"]
