"""Primitives behind ``custom_jvp`` and ``custom_vjp``.

``custom_jvp_call`` holds the primal function as a closed jaxpr (its closed-over
values are leading operands, ``num_consts``) and the user's JVP rule as a
``CustomJVPRule`` (a flat Python callable, printed by name). Its JVP rule runs
the user's rule; every other interpreter transforms ``call_jaxpr``.

``custom_vjp_call`` holds the primal jaxpr, the forward rule (``CustomVJPFwd``)
and the backward rule (``CustomVJPBwd``). Its JVP runs ``fwd`` and emits
``custom_lin`` on the tangents: a linear primitive whose transpose calls
``bwd`` and whose evaluation raises JAX's TypeError (no forward mode).

The api layer (``api/custom_derivatives.py``) builds the rule objects from the
user's pytree-level functions.
"""
from __future__ import annotations

from typing import Callable, Sequence

from openjax._src import dtypes, tree_util
from openjax._src.core import (ClosedJaxpr, Jaxpr, Primitive, ShapedArray, eval_jaxpr, get_aval,
                               pp_eqn, program_of)
from openjax._src.core.sharding_rules import TYPED_BY_SUB_JAXPR
from openjax._src.interpreters.batching import batch_jaxpr
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.interpreters.transpose import transpose_jaxpr
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal, tangent_aval
from openjax._src.primitives.base.structural import instantiate_zeros, moveaxis, reduce_sum
from openjax._src.primitives.base.batch_util import bdim_at_front


# ---------------------------------------------------- user-facing zero types
class SymbolicZero:
  """A zero tangent/cotangent passed to rules defined with
  ``symbolic_zeros=True``: it has the tangent's ``aval`` (and its ``shape``,
  ``dtype``...), but no value; a rule may also return one."""

  def __init__(self, aval: ShapedArray) -> None:
    self.aval = aval

  def __repr__(self) -> str:
    return self.__class__.__name__

  def __getattr__(self, name):
    if name == "aval":
      raise AttributeError(name)
    try:
      return getattr(self.aval, name)
    except AttributeError:
      raise AttributeError(f"{self.__class__.__name__} has no attribute {name}") from None

  @staticmethod
  def from_primal_value(val) -> "SymbolicZero":
    return SymbolicZero(tangent_aval(get_aval(val)))


def zero_from_primal(val, symbolic_zeros: bool = False):
  """Zero tangents for the pytree ``val`` (``SymbolicZero``s if asked)."""
  def f(x):
    t_aval = tangent_aval(get_aval(x))
    return SymbolicZero(t_aval) if symbolic_zeros else instantiate_zeros(Zero(t_aval))
  return tree_util.tree_map(f, val)


def to_rule_tangent(t, symbolic_zeros: bool):
  """An internal tangent as a rule sees it: instantiated, or SymbolicZero."""
  if type(t) is Zero:
    return SymbolicZero(t.aval) if symbolic_zeros else instantiate_zeros(t)
  return t


def from_rule_tangent(t):
  """A rule's output tangent as an internal one (SymbolicZero -> Zero)."""
  return Zero(t.aval) if type(t) is SymbolicZero else t


# -------------------------------------------------------------- rule objects
class _NamedRule:
  """A flat rule function that prints as its user-facing name in jaxprs.
  ``closure`` holds the values its call's leading (closed-over) operands had
  when it was bound: batching maps them to their batched values."""
  __slots__ = ("fn", "name", "closure")

  def __init__(self, fn: Callable, name: str, closure: Sequence = ()):
    self.fn = fn
    self.name = name
    self.closure = tuple(closure)

  def __str__(self):
    return self.name

  __repr__ = __str__


class CustomJVPRule(_NamedRule):
  """``rule(primals, tangents) -> (primals_out, tangents_out)`` on flat lists.
  Tangents arrive as arrays or ``SymbolicZero`` (as the api wrapper chose);
  outputs may hold ``SymbolicZero``."""
  __slots__ = ()

  def __call__(self, primals, tangents):
    return self.fn(list(primals), list(tangents))


class CustomVJPFwd(_NamedRule):
  """``fwd(primals, in_zeros) -> (residuals, primals_out)`` on flat lists."""
  __slots__ = ()

  def __call__(self, primals, in_zeros):
    return self.fn(list(primals), list(in_zeros))


class CustomVJPBwd(_NamedRule):
  """``bwd(residuals, cts_out) -> cts_in`` on flat lists; ``cts_in`` holds
  ``Zero`` where the rule gave no cotangent."""
  __slots__ = ()

  def __call__(self, res, cts):
    return self.fn(list(res), list(cts))


def convert_constvars(closed: ClosedJaxpr) -> tuple[Jaxpr, list]:
  """``closed``'s constants as leading inputs: (open jaxpr, const values)."""
  j = closed.jaxpr
  if not j.constvars:
    return j, []
  return Jaxpr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns, j.debug_info), \
      list(closed.consts)


def _func_name(jaxpr: ClosedJaxpr) -> str:
  d = jaxpr.jaxpr.debug_info
  return getattr(d, "func_name", None) or "<unknown>"


def _move_to_front(vals, dims):
  """Batched values with their batch dimension first (unbatched untouched)."""
  out = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
  return out, [None if d is None else 0 for d in dims]


def _unbatched(aval: ShapedArray, d) -> ShapedArray:
  if d is None:
    return aval
  return ShapedArray(aval.shape[:d] + aval.shape[d + 1:], aval.dtype, aval.weak_type)


def batch_closed(closed: ClosedJaxpr, dims, axis_data):
  """Batch ``closed``, leaving outputs that do not depend on batched inputs
  unbatched: (jaxpr with its constants as leading inputs, consts, out_dims)."""
  batched, out_dims = batch_jaxpr(
      closed, list(dims), axis_data.size, axis_data.name,
      spmd_axis_name=axis_data.spmd_name, instantiate=False)
  jaxpr, consts = convert_constvars(batched)
  return jaxpr.replace(debug_info=closed.jaxpr.debug_info), consts, list(out_dims)


def _lifted_closure(rule: _NamedRule, vals, dims) -> dict:
  """id(closed-over value) -> (batched value, dim) for the rule's closure
  entries that this batching maps (tracers of the batch trace at work)."""
  return {id(c): (v, d) for c, v, d in zip(rule.closure, vals, dims) if d is not None}


def _batched_call(fn: Callable, avals: Sequence[ShapedArray], args: Sequence, in_dims,
                  axis_data, lifted: dict, choose_dims: Callable):
  """Run the flat function ``fn`` (unbatched avals -> flat outputs, possibly
  holding ``Zero``) vectorised over ``args`` batched at ``in_dims``: it is
  traced to a jaxpr and batched (closed-over values in ``lifted`` become
  batched inputs), then evaluated. ``choose_dims(natural_dims)`` picks the
  output dims (0 or None; unbatched outputs are broadcast to 0 as needed).
  Symbolic-zero outputs come back as ``Zero`` of the unbatched aval.
  Returns (outputs, out_dims)."""
  zero_box: list = []

  def flat(*xs):
    outs = fn(*xs)
    zero_box.append([o if type(o) is Zero else None for o in outs])
    return [instantiate_zeros(o) for o in outs]

  jaxpr, consts = trace_to_jaxpr(flat, list(avals))
  lift = [id(c) in lifted for c in consts]
  if any(lift):
    lifted_vars = [v for v, l in zip(jaxpr.constvars, lift) if l]
    extra = [lifted[id(c)] for c, l in zip(consts, lift) if l]
    jaxpr = jaxpr.replace(constvars=[v for v, l in zip(jaxpr.constvars, lift) if not l],
                          invars=lifted_vars + list(jaxpr.invars))
    consts = [c for c, l in zip(consts, lift) if not l]
    args = [v for v, _ in extra] + list(args)
    in_dims = [d for _, d in extra] + list(in_dims)
  batched, natural = batch_jaxpr(
      ClosedJaxpr(jaxpr, consts), list(in_dims), axis_data.size, axis_data.name,
      spmd_axis_name=axis_data.spmd_name, instantiate=False)
  outs = eval_jaxpr(batched.jaxpr, batched.consts, *args)
  out_dims = list(choose_dims(list(natural)))
  for i, (o, have, want) in enumerate(zip(outs, natural, out_dims)):
    if have == want:
      continue
    if want is None:
      raise ValueError("custom rule under vmap: an output that should be unbatched (like the "
                       "custom function's own output) came out batched")
    outs[i] = bdim_at_front(o, have, axis_data.size)
  outs = [z if z is not None else o for o, z in zip(outs, zero_box[0])]
  return outs, out_dims


# ----------------------------------------------------------- custom_jvp_call
custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
custom_jvp_call_p.batch_needs_axis = True   # to pass the axis to the rule's batching


@custom_jvp_call_p.def_impl
def _custom_jvp_call_impl(*args, call_jaxpr, jvp_jaxpr_fun, num_consts, symbolic_zeros):
  return program_of(call_jaxpr.jaxpr).runner(call_jaxpr.consts)(args)


@custom_jvp_call_p.def_abstract_eval
def _custom_jvp_call_abstract_eval(*avals, call_jaxpr, jvp_jaxpr_fun, num_consts,
                                   symbolic_zeros):
  return list(call_jaxpr.out_avals)


custom_jvp_call_p.mark_not_applicable("sharding_rule", TYPED_BY_SUB_JAXPR)


def apply_custom_jvp_rule(rule: CustomJVPRule, primals, tangents, symbolic_zeros: bool):
  """Run the user's JVP rule on internal tangents (``Zero`` allowed); returns
  primal outputs and internal tangents (``Zero`` for symbolic zeros and for
  integer outputs)."""
  p_out, t_out = rule(primals, [to_rule_tangent(t, symbolic_zeros) for t in tangents])
  t_out = [from_rule_tangent(t) for t in t_out]
  t_out = [Zero(tangent_aval(get_aval(p))) if type(t) is not Zero and
           get_aval(t).dtype == dtypes.float0 else t for p, t in zip(p_out, t_out)]
  return list(p_out), t_out


@custom_jvp_call_p.def_jvp
def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp_jaxpr_fun, num_consts,
                         symbolic_zeros):
  # Closed-over values (the first num_consts operands) are constants to the
  # rule, as in JAX: the rule closes over them itself.
  return apply_custom_jvp_rule(jvp_jaxpr_fun, primals[num_consts:], tangents[num_consts:],
                               symbolic_zeros)


@custom_jvp_call_p.def_transpose
def _custom_jvp_call_transpose(cts, *invals, call_jaxpr, jvp_jaxpr_fun, num_consts,
                               symbolic_zeros):
  # Only reached when the function is applied to tangents (it is then linear).
  linear = [is_undefined_primal(x) for x in invals]
  transposed = transpose_jaxpr(call_jaxpr, linear)
  nonlinear = [x for x, lin in zip(invals, linear) if not lin]
  outs = iter(eval_jaxpr(transposed.jaxpr, transposed.consts, *nonlinear,
                         *(instantiate_zeros(c) for c in cts)))
  return [next(outs) if lin else None for lin in linear]


@custom_jvp_call_p.def_batch
def _custom_jvp_call_batch(vals, dims, *, axis_data, call_jaxpr, jvp_jaxpr_fun,
                           num_consts, symbolic_zeros):
  if all(d is None for d in dims):
    return custom_jvp_call_p.bind(*vals, call_jaxpr=call_jaxpr, jvp_jaxpr_fun=jvp_jaxpr_fun,
                                  num_consts=num_consts, symbolic_zeros=symbolic_zeros), \
        [None] * len(call_jaxpr.out_avals)
  vals, dims = _move_to_front(vals, dims)
  jaxpr, consts, out_dims = batch_closed(call_jaxpr, dims, axis_data)
  lifted = _lifted_closure(jvp_jaxpr_fun, vals[:num_consts], dims[:num_consts])
  rule_dims = dims[num_consts:]
  rule_avals = [_unbatched(get_aval(v), d) for v, d in zip(vals[num_consts:], rule_dims)]
  n, m = len(rule_avals), len(out_dims)
  # While this bind runs, a JVP above may call the rule: then, as in JAX, the
  # outputs are batched wherever the rule's primal or tangent output is.
  state = {"binding": True, "dims": None}

  def choose(natural):
    if not state["binding"]:
      return out_dims + out_dims
    merged = [0 if (p is not None or t is not None) else None
              for p, t in zip(natural[:m], natural[m:])]
    state["dims"] = merged
    return merged + merged

  def batched_rule(primals, tangents):
    tangents = [from_rule_tangent(t) for t in tangents]
    nz = [type(t) is not Zero for t in tangents]

    def flat(*xs):
      rest = iter(xs[n:])
      tans = [next(rest) if z else Zero(tangent_aval(a)) for a, z in zip(rule_avals, nz)]
      p_out, t_out = apply_custom_jvp_rule(jvp_jaxpr_fun, xs[:n], tans, symbolic_zeros)
      return p_out + t_out

    t_avals = [tangent_aval(a) for a, z in zip(rule_avals, nz) if z]
    t_dims = [d for d, z in zip(rule_dims, nz) if z]
    outs, dims_out = _batched_call(flat, rule_avals + t_avals,
                                   list(primals) + [t for t in tangents if type(t) is not Zero],
                                   rule_dims + t_dims, axis_data, lifted, choose)
    return outs[:m], [SymbolicZero(_batched_aval(t.aval, axis_data.size, d))
                      if type(t) is Zero else t for t, d in zip(outs[m:], dims_out[m:])]

  rule = CustomJVPRule(batched_rule, jvp_jaxpr_fun.name, closure=[*consts, *vals[:num_consts]])
  try:
    outs = custom_jvp_call_p.bind(*consts, *vals, call_jaxpr=ClosedJaxpr(jaxpr, []),
                                  jvp_jaxpr_fun=rule, num_consts=len(consts) + num_consts,
                                  symbolic_zeros=symbolic_zeros)
  finally:
    state["binding"] = False
  return outs, state["dims"] or out_dims


def _batched_aval(aval: ShapedArray, size: int, d) -> ShapedArray:
  if d is None:
    return aval
  return ShapedArray((size,) + aval.shape, aval.dtype, aval.weak_type)


@custom_jvp_call_p.def_lower
def _custom_jvp_call_lower(ctx, *args, call_jaxpr, **params):
  return ctx.lower_jaxpr_inline(call_jaxpr, args)


@custom_jvp_call_p.def_pp
def _custom_jvp_call_pp(eqn, ctx):
  p = eqn.params
  params = {"name": _func_name(p["call_jaxpr"]), "call_jaxpr": p["call_jaxpr"],
            "jvp": str(p["jvp_jaxpr_fun"])}
  if p["num_consts"]:
    params["num_consts"] = p["num_consts"]
  params["symbolic_zeros"] = p["symbolic_zeros"]
  return pp_eqn(eqn, ctx, params=params)


# ----------------------------------------------------------- custom_vjp_call
custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_vjp_call_p.batch_needs_axis = True

_CLOSED_OVER_MSG = (
    "Detected differentiation of a custom_vjp function with respect to a closed-over "
    "value. That isn't supported because the custom VJP rule only specifies how to "
    "differentiate the custom_vjp function with respect to explicit input parameters. "
    "Try passing the closed-over value into the custom_vjp function as an argument, and "
    "adapting the custom_vjp fwd and bwd rules.")


class CustomVJPException(Exception):
  """Differentiation of a custom_vjp function with respect to a closed-over value."""

  def __init__(self):
    super().__init__(_CLOSED_OVER_MSG)


@custom_vjp_call_p.def_impl
def _custom_vjp_call_impl(*args, call_jaxpr, fwd_jaxpr_thunk, bwd, num_consts, out_trees,
                          symbolic_zeros):
  return program_of(call_jaxpr.jaxpr).runner(call_jaxpr.consts)(args)


@custom_vjp_call_p.def_abstract_eval
def _custom_vjp_call_abstract_eval(*avals, call_jaxpr, fwd_jaxpr_thunk, bwd, num_consts,
                                   out_trees, symbolic_zeros):
  return list(call_jaxpr.out_avals)


custom_vjp_call_p.mark_not_applicable("sharding_rule", TYPED_BY_SUB_JAXPR)


def apply_custom_vjp_fwd(fwd: CustomVJPFwd, bwd: CustomVJPBwd, primals, tangents,
                         symbolic_zeros: bool):
  """The JVP of a custom_vjp function: run ``fwd`` on the primals, then
  ``custom_lin`` on the nonzero tangents (its transpose runs ``bwd``)."""
  in_zeros = [type(t) is Zero for t in tangents]
  res, primals_out = fwd(primals, in_zeros)
  out_avals = tuple(tangent_aval(get_aval(p)) for p in primals_out)
  nz = [t for t in tangents if type(t) is not Zero]
  tangents_out = custom_lin_p.bind(*res, *nz, num_res=len(res), bwd=bwd, out_avals=out_avals,
                                   symbolic_zeros=symbolic_zeros, in_zeros=tuple(in_zeros))
  tangents_out = [Zero(a) if a.dtype == dtypes.float0 else t
                  for a, t in zip(out_avals, tangents_out)]
  return list(primals_out), tangents_out


@custom_vjp_call_p.def_jvp
def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd_jaxpr_thunk, bwd, num_consts,
                         out_trees, symbolic_zeros):
  if any(type(t) is not Zero for t in tangents[:num_consts]):
    raise CustomVJPException()
  return apply_custom_vjp_fwd(fwd_jaxpr_thunk, bwd, primals[num_consts:],
                              tangents[num_consts:], symbolic_zeros)


@custom_vjp_call_p.def_transpose
def _custom_vjp_call_transpose(cts, *invals, call_jaxpr, **params):
  linear = [is_undefined_primal(x) for x in invals]
  transposed = transpose_jaxpr(call_jaxpr, linear)
  nonlinear = [x for x, lin in zip(invals, linear) if not lin]
  outs = iter(eval_jaxpr(transposed.jaxpr, transposed.consts, *nonlinear,
                         *(instantiate_zeros(c) for c in cts)))
  return [next(outs) if lin else None for lin in linear]


@custom_vjp_call_p.def_batch
def _custom_vjp_call_batch(vals, dims, *, axis_data, call_jaxpr, fwd_jaxpr_thunk,
                           bwd, num_consts, out_trees, symbolic_zeros):
  params = dict(call_jaxpr=call_jaxpr, fwd_jaxpr_thunk=fwd_jaxpr_thunk, bwd=bwd,
                num_consts=num_consts, out_trees=out_trees, symbolic_zeros=symbolic_zeros)
  if all(d is None for d in dims):
    return custom_vjp_call_p.bind(*vals, **params), [None] * len(call_jaxpr.out_avals)
  vals, dims = _move_to_front(vals, dims)
  jaxpr, consts, out_dims = batch_closed(call_jaxpr, dims, axis_data)
  lifted = _lifted_closure(fwd_jaxpr_thunk, vals[:num_consts], dims[:num_consts])
  rule_dims = dims[num_consts:]
  rule_avals = [_unbatched(get_aval(v), d) for v, d in zip(vals[num_consts:], rule_dims)]
  n_out = len(out_dims)
  state = {"binding": True, "dims": None, "res_dims": None}

  def batched_fwd(primals, in_zeros):
    def flat(*xs):
      res, outs = fwd_jaxpr_thunk(xs, in_zeros)
      return list(res) + list(outs)

    def choose(natural):
      n_res = len(natural) - n_out
      out = natural[n_res:] if state["binding"] else out_dims
      if state["binding"]:
        state["dims"] = [0 if d is not None else None for d in out]
      state["res_dims"] = [0 if d is not None else None for d in natural[:n_res]]
      return state["res_dims"] + [0 if d is not None else None for d in out]

    outs, dims_out = _batched_call(flat, rule_avals, primals, rule_dims, axis_data, lifted,
                                   choose)
    n_res = len(outs) - n_out
    return outs[:n_res], outs[n_res:]

  def batched_bwd(res, cts):
    # cts hold SymbolicZero (of the batched aval) when symbolic_zeros is on.
    res_dims = state["res_dims"] or [0] * len(res)
    cts_dims = state["dims"] or out_dims
    res_avals = [_unbatched(get_aval(r), d) for r, d in zip(res, res_dims)]
    ct_avals = [_unbatched(c.aval if type(c) is SymbolicZero else get_aval(c), d)
                for c, d in zip(cts, cts_dims)]
    nz = [type(c) is not SymbolicZero for c in cts]
    nr = len(res)

    def flat(*xs):
      rest = iter(xs[nr:])
      return bwd(xs[:nr], [next(rest) if z else SymbolicZero(a) for a, z in zip(ct_avals, nz)])

    outs, dims_out = _batched_call(
        flat, res_avals + [a for a, z in zip(ct_avals, nz) if z],
        list(res) + [c for c in cts if type(c) is not SymbolicZero],
        res_dims + [d for d, z in zip(cts_dims, nz) if z], axis_data, {},
        lambda natural: natural)
    # Cotangents of unbatched inputs sum over the batch; batched ones need it.
    return [Zero(_batched_aval(o.aval, axis_data.size, want)) if type(o) is Zero else
            o if have == want else
            reduce_sum(o, (0,)) if want is None else bdim_at_front(o, None, axis_data.size)
            for o, have, want in zip(outs, dims_out, rule_dims)]

  try:
    outs = custom_vjp_call_p.bind(
        *consts, *vals, call_jaxpr=ClosedJaxpr(jaxpr, []),
        fwd_jaxpr_thunk=CustomVJPFwd(batched_fwd, fwd_jaxpr_thunk.name,
                                     closure=[*consts, *vals[:num_consts]]),
        bwd=CustomVJPBwd(batched_bwd, bwd.name), num_consts=len(consts) + num_consts,
        out_trees=out_trees, symbolic_zeros=symbolic_zeros)
  finally:
    state["binding"] = False
  return outs, state["dims"] or out_dims


@custom_vjp_call_p.def_lower
def _custom_vjp_call_lower(ctx, *args, call_jaxpr, **params):
  return ctx.lower_jaxpr_inline(call_jaxpr, args)


@custom_vjp_call_p.def_pp
def _custom_vjp_call_pp(eqn, ctx):
  p = eqn.params
  params = {"name": _func_name(p["call_jaxpr"]), "bwd": str(p["bwd"]),
            "call_jaxpr": p["call_jaxpr"], "fwd": str(p["fwd_jaxpr_thunk"])}
  if p["num_consts"]:
    params["num_consts"] = p["num_consts"]
  params["symbolic_zeros"] = p["symbolic_zeros"]
  return pp_eqn(eqn, ctx, params=params)


# ---------------------------------------------------------------- custom_lin
custom_lin_p = Primitive("custom_lin", multiple_results=True, kind="linear")

_NO_JVP_MSG = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."


def _raise_custom_vjp_error_on_jvp(*_, **__):
  raise TypeError(_NO_JVP_MSG)


custom_lin_p.def_impl(_raise_custom_vjp_error_on_jvp)
custom_lin_p.def_jvp(_raise_custom_vjp_error_on_jvp)
custom_lin_p.def_lower(_raise_custom_vjp_error_on_jvp)


@custom_lin_p.def_batch
def _custom_lin_batch(vals, dims, **params):
  raise TypeError(_NO_JVP_MSG)


@custom_lin_p.def_abstract_eval
def _custom_lin_abstract_eval(*avals, num_res, bwd, out_avals, symbolic_zeros, in_zeros):
  return list(out_avals)


custom_lin_p.mark_not_applicable("sharding_rule", TYPED_BY_SUB_JAXPR)


@custom_lin_p.def_transpose
def _custom_lin_transpose(cts, *invals, num_res, bwd, out_avals, symbolic_zeros, in_zeros):
  res = invals[:num_res]
  cts = [to_rule_tangent(c, symbolic_zeros) for c in cts]
  cts_in = [from_rule_tangent(c) for c in bwd(res, cts)]
  nz = [c for c, z in zip(cts_in, in_zeros) if not z]
  return [None] * num_res + nz


@custom_lin_p.def_pp
def _custom_lin_pp(eqn, ctx):
  p = eqn.params
  params = {"bwd": str(p["bwd"]), "in_zeros": list(p["in_zeros"]), "num_res": p["num_res"],
            "symbolic_zeros": p["symbolic_zeros"]}
  return pp_eqn(eqn, ctx, params=params)


__all__ = ["SymbolicZero", "custom_jvp_call_p", "custom_vjp_call_p", "custom_lin_p",
           "zero_from_primal"]
