"""``while_p``: the primitive of ``lax.while_loop``.

Operands are the cond function's constants, the body's constants, then the
loop carry; parameters are the two closed jaxprs and the constant counts::

  outs = while[body_jaxpr={...} body_nconsts=N cond_jaxpr={...} cond_nconsts=M] *ops

``cond_jaxpr`` maps (cond consts, carry) to a boolean predicate; ``body_jaxpr``
maps (body consts, carry) to the next carry. Under ``vmap`` with a batched
predicate the predicate has the batch shape (a prefix of every carry's shape):
the loop runs while any lane is active and lanes that are done keep their
carry (``select_n``), as in JAX.
"""
from __future__ import annotations

import inspect
from typing import Callable, Sequence

import numpy as np

from openjax._src import dtypes, tree_util
from openjax._src.config import config
from openjax._src.core import (Array, ClosedJaxpr, Jaxpr, JaxprEqn, JaxprTypeError, Primitive,
                               ShapedArray, Tracer, Var, array_of, canonical_value, get_aval,
                               eqn_effects, jaxpr_effects, jaxprs_in_params, live_eqns,
                               set_current_trace, typematch)
from openjax._src.core.avals import ordered_axes
from openjax._src.core.sharding_rules import TYPED_BY_SUB_JAXPR
from openjax._src.errors import ConcretizationTypeError
from openjax._src.interpreters.batching import batch_jaxpr
from openjax._src.interpreters.jvp import jvp_jaxpr
from openjax._src.interpreters.partial_eval import partial_eval_jaxpr
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.control.trace_cache import TraceCache, avals_key, fun_key
from openjax._src.primitives.collectives.collectives import current_axis_env
from openjax._src.control.loop_dispatch import carry_in_place, fits_one_dispatch, in_one_dispatch
from openjax._src.control.nested_calls import loop_runner, while_runner
from openjax._src.primitives.base.reduce_lowering import reduce, select
from openjax._src.primitives.base.ad_util import Zero, tangent_aval
from openjax._src.primitives.base.structural import broadcast_in_dim, instantiate_zeros, moveaxis
from openjax._src.primitives.base.convert import convert_element_type

while_p = Primitive("while", multiple_results=True)


# ------------------------------------------------------------- the wrapper
def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
  """Call ``body_fun`` repeatedly while ``cond_fun`` is True.

  The semantics are those of this Python loop::

    def while_loop(cond_fun, body_fun, init_val):
      val = init_val
      while cond_fun(val):
        val = body_fun(val)
      return val

  but ``cond_fun`` and ``body_fun`` are traced once and the loop is one
  ``while`` primitive (one ``stablehlo.while`` under ``jit``), so a long loop
  does not unroll. The carry ``init_val`` may be any pytree of arrays;
  ``body_fun`` must return the same structure with the same shapes and
  dtypes, and ``cond_fun`` must return a boolean scalar.

  ``while_loop`` is differentiable in forward mode (``jvp``, ``linearize``)
  but not in reverse mode: use ``lax.scan`` or ``lax.fori_loop`` with static
  bounds for ``grad``. Under ``jax.disable_jit()`` it runs as the Python loop.

  Args:
    cond_fun: function of the carry returning a boolean scalar.
    body_fun: function of the carry returning the next carry.
    init_val: the initial carry (an array, scalar or pytree of them).

  Returns:
    The carry after the last iteration (``init_val`` if ``cond_fun`` is
    False at once).
  """
  if not (callable(body_fun) and callable(cond_fun)):
    raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")
  return keyed_while_loop(cond_fun, body_fun, init_val, None)


def keyed_while_loop(cond_fun: Callable, body_fun: Callable, init_val,
                     make_funs: Callable | None):
  """``while_loop(cond_fun, body_fun, init_val)`` whose trace runs the
  functions ``make_funs()`` gives, (cond, body): wrappers of ``cond_fun``
  and ``body_fun`` that trace to the same jaxprs (``lax.while_loop``'s, which
  call them in a mutable-ref scope). The loop is keyed by ``cond_fun`` and
  ``body_fun`` themselves, so a call that finds its traced loop makes no
  wrappers (two ``functools.wraps`` closures) and keys no wrapper code;
  None: the functions themselves."""
  if config.read("jax_disable_jit"):
    cond, body = (cond_fun, body_fun) if make_funs is None else make_funs()
    try:
      val = tree_util.tree_map(_as_array, init_val)
      while cond(val):
        val = tree_util.tree_map(_as_array, body(val))
      return val
    except ConcretizationTypeError:
      pass   # a traced predicate (e.g. under vmap): run the primitive instead

  init_vals, in_tree = tree_util.tree_flatten(init_val)
  init_avals = tuple(get_aval(x) for x in init_vals)
  key = (fun_key(cond_fun), fun_key(body_fun), in_tree, avals_key(init_avals),
         config.values_snapshot(), current_axis_env())
  loop = _loops.get(key)
  if loop is None:
    # The carry's paths (for error messages) only when tracing: ~1 us a call.
    paths = [p for p, _ in tree_util.tree_flatten_with_path(init_val)[0]]
    cond, body = (cond_fun, body_fun) if make_funs is None else make_funs()
    loop = _PreparedWhile(cond, body, in_tree, paths, list(init_vals), list(init_avals))
    if not loop.holds_tracers:
      _loops.put(key, loop, (*loop.cond_consts, *loop.body_consts))
  return loop.bind(init_vals)


# (fun_key(cond_fun), fun_key(body_fun), carry tree and types, flags, axis env)
# -> _PreparedWhile: an eager loop called again with the same functions (or
# fresh closures of the same code over the same values) binds the same
# jaxprs, so neither tracing nor the eval trace's plan runs again.
_loops = TraceCache()


class _PreparedWhile:
  """A traced ``while_loop``: its jaxprs, constants, the weak carries the
  body's types join, and the carries that are loop constants."""

  def __init__(self, cond_fun, body_fun, in_tree, paths, init_vals: list, init_avals: list):
    cond_jaxpr, cond_consts, body_jaxpr, body_consts, out_tree = _trace_loop(
        cond_fun, body_fun, in_tree, init_avals)
    body_out_avals = body_jaxpr.out_avals
    if len(body_out_avals) != len(init_avals):
      check_carry_type("while_loop body", body_fun, in_tree, paths, init_avals, out_tree,
                       body_out_avals)
    # A weakly typed carry takes the body's type: (position, body's aval).
    self.joins = [(i, o) for i, (a, o) in enumerate(zip(init_avals, body_out_avals))
                  if a.weak_type and not typematch(a, o)]
    if self.joins:
      join_carries(init_vals, self.joins)
      init_avals = [get_aval(x) for x in init_vals]
      cond_jaxpr, cond_consts, body_jaxpr, body_consts, out_tree = _trace_loop(
          cond_fun, body_fun, in_tree, init_avals)
    check_carry_type("while_loop body", body_fun, in_tree, paths, init_avals, out_tree,
                     body_jaxpr.out_avals)

    # A carry the body passes through unchanged and the cond never reads is a
    # loop constant: make it a body constant (so a batched predicate does not
    # batch it, and the loop carries less).
    n_bc = len(body_consts)
    fwd = [isinstance(o, Var) and o in body_jaxpr.invars[n_bc:] and
           body_jaxpr.invars.index(o) == n_bc + i for i, o in enumerate(body_jaxpr.outvars)]
    cond_reads = _used_invars(cond_jaxpr)
    n_cc = len(cond_consts)
    move = [f and not cond_reads[n_cc + i] for i, f in enumerate(fwd)]
    if any(move):
      cond_jaxpr = _fresh_jaxpr(cond_jaxpr, invars=cond_jaxpr.invars[:n_cc] + [
          v for v, m in zip(cond_jaxpr.invars[n_cc:], move) if not m])
      carry_in = body_jaxpr.invars[n_bc:]
      body_jaxpr = _fresh_jaxpr(
          body_jaxpr,
          invars=([v for v, m in zip(carry_in, move) if m] + body_jaxpr.invars[:n_bc]
                  + [v for v, m in zip(carry_in, move) if not m]),
          outvars=[o for o, m in zip(body_jaxpr.outvars, move) if not m])
    self.move = move if any(move) else None
    self.cond_consts, self.body_consts, self.out_tree = cond_consts, body_consts, out_tree
    self.params = dict(cond_nconsts=len(cond_consts), cond_jaxpr=ClosedJaxpr(cond_jaxpr, []),
                       body_nconsts=len(body_consts) + sum(move),
                       body_jaxpr=ClosedJaxpr(body_jaxpr, []))
    self.holds_tracers = any(isinstance(c, Tracer) for c in (*cond_consts, *body_consts))

  def bind(self, init_vals: list):
    if self.joins:
      join_carries(init_vals, self.joins)
    move = self.move
    if move is None:
      outs = while_p.bind(*self.cond_consts, *self.body_consts, *init_vals, **self.params)
      return tree_util.tree_unflatten(self.out_tree, outs)
    moved = [x for x, m in zip(init_vals, move) if m]
    loop_vals = [x for x, m in zip(init_vals, move) if not m]
    outs = while_p.bind(*self.cond_consts, *moved, *self.body_consts, *loop_vals, **self.params)
    it = iter(outs)
    outs = [x if m else next(it) for x, m in zip(init_vals, move)]
    return tree_util.tree_unflatten(self.out_tree, outs)


def join_carries(init_vals: list, joins: list) -> None:
  """Convert the weakly typed carries ``joins`` names, (position, the
  body's aval), to the body's type, in place."""
  for i, o in joins:
    init_vals[i] = convert_element_type(init_vals[i], dtypes.result_type(init_vals[i], o))


def _as_array(x):
  if isinstance(x, Tracer) or type(x) is Array:
    return x
  return array_of(canonical_value(x), get_aval(x))


def trace_to_open_jaxpr(fun: Callable, in_tree, in_avals) -> tuple[Jaxpr, list, object]:
  """Trace ``fun`` (one pytree argument, built from ``in_avals`` by
  ``in_tree``) to a jaxpr whose leading inputs are its closed-over constants.
  Returns (jaxpr, consts, out_tree)."""
  out_tree_box: list = []

  def flat_fun(*leaves):
    out = fun(tree_util.tree_unflatten(in_tree, leaves))
    out_leaves, out_tree = tree_util.tree_flatten(out)
    out_tree_box.append(out_tree)
    return out_leaves

  jaxpr, consts = trace_to_jaxpr(flat_fun, list(in_avals))
  jaxpr = Jaxpr([], [*jaxpr.constvars, *jaxpr.invars], jaxpr.outvars, jaxpr.eqns,
                jaxpr.debug_info)
  return jaxpr, consts, out_tree_box[0]


def _trace_loop(cond_fun, body_fun, in_tree, init_avals):
  cond_jaxpr, cond_consts, cond_tree = trace_to_open_jaxpr(cond_fun, in_tree, init_avals)
  body_jaxpr, body_consts, body_tree = trace_to_open_jaxpr(body_fun, in_tree, init_avals)
  if not tree_util.treedef_is_leaf(cond_tree) or len(cond_jaxpr.outvars) != 1:
    raise TypeError(f"cond_fun must return a boolean scalar, but got pytree {cond_tree}.")
  pred = cond_jaxpr.outvars[0].aval
  if pred.shape != () or pred.dtype != np.dtype(np.bool_):
    raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                    f"{cond_jaxpr.out_avals}.")
  return cond_jaxpr, cond_consts, body_jaxpr, body_consts, body_tree


def _capitalize(s: str) -> str:
  return s[:1].upper() + s[1:]


def _bulleted(diffs: list[str]) -> str:
  if len(diffs) == 1:
    return f"{_capitalize(diffs[0])}.\n"
  return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


def check_carry_type(name: str, body_fun: Callable, in_tree, in_paths, in_avals,
                     out_tree, out_avals) -> None:
  """JAX's TypeError when a loop body's output carry differs from its input
  carry in pytree structure or in types (weak types aside). ``name`` is like
  ``'while_loop body'``; ``in_paths`` are the key paths of the carry leaves."""
  try:
    carry_name = next(iter(inspect.signature(body_fun).parameters), None)
  except (ValueError, TypeError):
    carry_name = None

  def component(path) -> str:
    if carry_name:
      return (f"the input carry component {carry_name}{tree_util.keystr(path)}" if path
              else f"the input carry {carry_name}")
    return (f"the input carry at path {tree_util.keystr(path)}" if path
            else "the input carry")

  if in_tree != out_tree:
    diffs = [f"{component(path)} is a {thing1} but the corresponding component of the "
             f"carry output is a {thing2}, so {why}"
             for path, thing1, thing2, why in tree_util.equality_errors(
                 tree_util.tree_unflatten(in_tree, in_avals),
                 tree_util.tree_unflatten(out_tree, out_avals))]
    if not diffs:
      return   # equal structures up to node metadata
    raise TypeError(
        f"{name} function carry input and carry output must have the same pytree "
        f"structure, but they differ:\n\n{_bulleted(diffs)}\n"
        "Revise the function so that the carry output has the same pytree structure as "
        "the carry input.")
  diffs, pcasts = [], []
  for path, a, o in zip(in_paths, in_avals, out_avals):
    # Inside a check_vma shard_map a carry's type includes the manual axes it
    # varies over (JAX's typematch compares them): a body that makes the
    # carry vary more (or less) than it came in is an error, not a widening.
    same_vma = a.vma == o.vma
    if typematch(a, o) and same_vma:
      continue
    why = [w for w, bad in (("the dtypes do not match", a.dtype != o.dtype),
                            ("the shapes do not match", a.shape != o.shape),
                            ("the manual axis types do not match", not same_vma)) if bad]
    extra = ", so " + (why[0] if len(why) == 1 else f"{', '.join(why[:-1])}, and {why[-1]}")
    diffs.append(f"{component(path)} has type {a.str_short(short_dtypes=False)} but the "
                 "corresponding output carry component has type "
                 f"{o.str_short(short_dtypes=False)}{extra}")
    if o.vma - a.vma:
      pcasts.append(f"applying `jax.lax.pcast(..., {ordered_axes(o.vma - a.vma)}, "
                    f"to='varying')`, to the initial carry value corresponding to "
                    f"{component(path)}")
  if diffs:
    fix = ""
    if pcasts:
      fix = ("This might be fixed by " + pcasts[0] + ".\n" if len(pcasts) == 1 else
             "This might be fixed by:\n" + _bulleted(pcasts))
      fix += ("See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma for "
              "more information.\n\n")
    raise TypeError(
        f"{name} function carry input and carry output must have equal types, but they "
        f"differ:\n\n{_bulleted(diffs)}\n{fix}"
        "Revise the function so that all output types match the corresponding input "
        "types.")


# ------------------------------------------------------------ jaxpr helpers
def _used_invars(jaxpr: Jaxpr) -> list[bool]:
  """Which inputs the (dead-code-free part of the) jaxpr reads."""
  live = {a for a in jaxpr.outvars if isinstance(a, Var)}
  for eqn in reversed(jaxpr.eqns):
    if any(v in live for v in eqn.outvars) or eqn_effects(eqn):
      live.update(a for a in eqn.invars if isinstance(a, Var))
  return [v in live for v in jaxpr.invars]


def _fresh_jaxpr(jaxpr: Jaxpr, invars=None, outvars=None) -> Jaxpr:
  """A copy of ``jaxpr`` (with ``invars``/``outvars`` chosen among its own
  variables, plus new input variables) over fresh variables, without its
  dead equations: transformed loops never share variables with the jaxpr
  they came from (the printer names variables by identity)."""
  invars = jaxpr.invars if invars is None else invars
  outvars = jaxpr.outvars if outvars is None else outvars
  kept = live_eqns(jaxpr.eqns, outvars)
  env: dict = {}

  def new(v):
    env[v] = nv = Var(v.aval)
    return nv

  def read(a):
    return env.get(a, a) if isinstance(a, Var) else a

  new_constvars = [new(v) for v in jaxpr.constvars]
  new_invars = [new(v) for v in invars]
  eqns = [e.replace(invars=[read(a) for a in e.invars], outvars=[new(v) for v in e.outvars])
          for e in kept]
  return Jaxpr(new_constvars, new_invars, [read(a) for a in outvars], eqns, jaxpr.debug_info)


# ----------------------------------------------------------------- impl
def _select_done(pred: np.ndarray, new: np.ndarray, old: np.ndarray) -> np.ndarray:
  """Lanes where ``pred`` holds take ``new``; ``pred``'s shape is a prefix of
  the carry's."""
  return np.where(pred.reshape(pred.shape + (1,) * (new.ndim - pred.ndim)), new, old)


@while_p.def_impl
def _while_impl(*args, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int,
                body_nconsts: int):
  cond_consts = list(args[:cond_nconsts])
  body_consts = list(args[cond_nconsts:cond_nconsts + body_nconsts])
  carry = list(args[cond_nconsts + body_nconsts:])
  if cond_jaxpr.out_avals[0].shape == ():
    run = while_runner(cond_jaxpr, body_jaxpr)
    if run is not None:
      return run(cond_consts, body_consts, carry)
  run_cond, run_body = loop_runner(cond_jaxpr), loop_runner(body_jaxpr)
  if cond_jaxpr.out_avals[0].shape == ():   # debug flags: checked steps
    while run_cond(cond_consts + carry)[0]:
      carry = run_body(body_consts + carry)
    return carry
  # A batched predicate: run until every lane is done; finished lanes keep
  # their carry.
  while True:
    pred = run_cond(cond_consts + carry)[0]
    if not pred.any():
      return carry
    new = run_body(body_consts + carry)
    carry = new if pred.all() else [_select_done(pred, n, c) for n, c in zip(new, carry)]


@while_p.def_abstract_eval
def _while_abstract_eval(*avals, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                         cond_nconsts: int, body_nconsts: int):
  cond_consts = avals[:cond_nconsts]
  body_consts = avals[cond_nconsts:cond_nconsts + body_nconsts]
  carry = avals[cond_nconsts + body_nconsts:]
  for what, jaxpr, ins in (("cond_jaxpr", cond_jaxpr, cond_consts + carry),
                           ("body_jaxpr", body_jaxpr, body_consts + carry)):
    expected = jaxpr.in_avals
    if len(expected) != len(ins):
      raise JaxprTypeError(f"while: {what} takes {len(expected)} inputs but the loop "
                           f"gives it {len(ins)} (constants and carry)")
    for i, (a, e) in enumerate(zip(ins, expected)):
      if not typematch(a, e):
        raise JaxprTypeError(f"while: input {i} of {what} is {e.str_short()} but the "
                             f"loop gives it {a.str_short()}")
  outs = body_jaxpr.out_avals
  if len(outs) != len(carry) or not all(map(typematch, outs, carry)):
    raise JaxprTypeError(
        "while: body_jaxpr maps the carry "
        f"({', '.join(a.str_short() for a in carry)}) to "
        f"({', '.join(a.str_short() for a in outs)}); they must have equal types")
  pred = cond_jaxpr.out_avals
  if (len(pred) != 1 or pred[0].dtype != np.dtype(np.bool_)
      or any(pred[0].shape != c.shape[:pred[0].ndim] for c in carry)):
    raise JaxprTypeError(f"while: cond_jaxpr must return one boolean scalar (or a batch "
                         f"of them), got ({', '.join(a.str_short() for a in pred)})")
  return list(outs)


while_p.mark_not_applicable("sharding_rule", TYPED_BY_SUB_JAXPR)


def _split3(xs: Sequence, cond_nconsts: int, body_nconsts: int) -> tuple[list, list, list]:
  """(cond consts, body consts, carry) of a while's operands."""
  xs = list(xs)
  return (xs[:cond_nconsts], xs[cond_nconsts:cond_nconsts + body_nconsts],
          xs[cond_nconsts + body_nconsts:])


# ------------------------------------------------------------------ JVP
@while_p.def_jvp
def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  nonzero = [type(t) is not Zero for t in tangents]
  _, bconst_nz, carry_nz = _split3(nonzero, cond_nconsts, body_nconsts)
  # A carry has a tangent if its initial value has one or the body gives it
  # one from a carry that has: iterate to the fixpoint (each round adds one).
  for _ in range(len(carry_nz) + 1):
    body_jvp, out_nz = jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, carry_nz)
    if out_nz == carry_nz:
      break
    carry_nz = [a or b for a, b in zip(carry_nz, out_nz)]
  cconst, bconst, carry = _split3(primals, cond_nconsts, body_nconsts)
  _, bconst_t, carry_t = _split3(tangents, cond_nconsts, body_nconsts)
  bconst_dot = [t for t, nz in zip(bconst_t, bconst_nz) if nz]
  carry_dot = [instantiate_zeros(t) for t, nz in zip(carry_t, carry_nz) if nz]
  # The JVP body takes (bconst, carry, bconst_dot, carry_dot); the loop
  # passes (bconst, bconst_dot) as constants and (carry, carry_dot) as carry.
  n_b, n_c, n_bd = len(bconst), len(carry), len(bconst_dot)
  inv = body_jvp.jaxpr.invars
  body = body_jvp.jaxpr.replace(invars=(inv[:n_b] + inv[n_b + n_c:n_b + n_c + n_bd]
                                        + inv[n_b:n_b + n_c] + inv[n_b + n_c + n_bd:]))
  cond_in = cond_jaxpr.jaxpr.invars + [Var(get_aval(t)) for t in carry_dot]
  cond = ClosedJaxpr(_fresh_jaxpr(cond_jaxpr.jaxpr, invars=cond_in), cond_jaxpr.consts)
  outs = while_p.bind(*cconst, *bconst, *bconst_dot, *carry, *carry_dot,
                      cond_nconsts=cond_nconsts, cond_jaxpr=cond,
                      body_nconsts=n_b + n_bd, body_jaxpr=ClosedJaxpr(body, body_jvp.consts))
  dots = iter(outs[n_c:])
  return outs[:n_c], [next(dots) if nz else Zero(tangent_aval(a))
                      for a, nz in zip(body_jaxpr.out_avals, carry_nz)]


@while_p.def_transpose
def _while_transpose(cts, *args, **params):
  raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or "
                   "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or "
                   "using fori_loop with static start/stop.")


# ------------------------------------------------------- partial evaluation
def _known_loop(unknowns: Sequence[bool], cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
                cond_nconsts: int, body_nconsts: int):
  """Which carries are unknown given which operands are, and the parameters
  of the loop computing the known carries from the known operands (None
  when the predicate is unknown or no carry is known: then the whole loop
  is unknown). Returns (operand_unknown, carry_unknown, known_params): the
  known loop's operands are those ``operand_unknown`` marks False (the
  carries found unknown by the fixpoint included)."""
  cconst_uk, bconst_uk, carry_uk = _split3(unknowns, cond_nconsts, body_nconsts)
  for _ in range(len(carry_uk) + 1):
    body_known, _, out_uk, _ = partial_eval_jaxpr(body_jaxpr.jaxpr, bconst_uk + carry_uk)
    if all(c or not o for c, o in zip(carry_uk, out_uk)):
      break
    carry_uk = [c or o for c, o in zip(carry_uk, out_uk)]
  cond_known, _, (pred_uk,), _ = partial_eval_jaxpr(cond_jaxpr.jaxpr, cconst_uk + carry_uk)
  operand_uk = cconst_uk + bconst_uk + carry_uk
  if pred_uk or all(carry_uk):
    return operand_uk, carry_uk, None
  # The known body's outputs are the known outputs then residuals: keep the
  # outputs of the known carries.
  known_outs = [v for v, o in zip(body_known.outvars, (i for i, u in enumerate(out_uk) if not u))
                if not carry_uk[o]]
  known_params = dict(
      cond_jaxpr=ClosedJaxpr(_fresh_jaxpr(cond_known, outvars=cond_known.outvars[:1]),
                             cond_jaxpr.consts),
      body_jaxpr=ClosedJaxpr(_fresh_jaxpr(body_known, outvars=known_outs), body_jaxpr.consts),
      cond_nconsts=cconst_uk.count(False), body_nconsts=bconst_uk.count(False))
  return operand_uk, carry_uk, known_params


@while_p.def_partial_eval
def _while_partial_eval(pe_trace, unknowns, args, params):
  # As in JAX: when the predicate depends only on known values, a loop over
  # the known part computes the known carries now, and the staged loop
  # recomputes everything (nothing is saved per iteration: the trip count is
  # dynamic). So primal outputs stay known under linearize / jvp-of-jit.
  operand_uk, carry_uk, known_params = _known_loop(unknowns, **params)
  staged = pe_trace.builder.process_primitive(while_p, list(args), params)
  if known_params is None:
    return staged
  with set_current_trace(pe_trace.parent):
    known = iter(while_p.bind(*(a for a, u in zip(args, operand_uk) if not u), **known_params))
  return [s if uk else next(known) for s, uk in zip(staged, carry_uk)]


def _while_partial_eval_jaxpr_custom(eqn: JaxprEqn, unknown_in: Sequence[bool]):
  """A while equation with known and unknown inputs, inside a jaxpr being
  split (jit's partial evaluation): the known loop for the known carries,
  and the whole loop staged. Returns (known_eqn or None, staged_eqn,
  out_unknowns)."""
  operand_uk, carry_uk, known_params = _known_loop(unknown_in, **eqn.params)
  if known_params is None:
    return None, eqn, [True] * len(eqn.outvars)
  known_eqn = JaxprEqn([a for a, u in zip(eqn.invars, operand_uk) if not u],
                       [v for v, u in zip(eqn.outvars, carry_uk) if not u], while_p, known_params)
  # The staged loop's known outputs are dead (the known loop defines them).
  staged_eqn = eqn.replace(outvars=[v if u else Var(v.aval)
                                    for v, u in zip(eqn.outvars, carry_uk)])
  return known_eqn, staged_eqn, carry_uk


while_p.partial_eval_jaxpr_custom = _while_partial_eval_jaxpr_custom


# ------------------------------------------------------------- batching
def _broadcast_at(x, size: int, axis: int):
  aval = get_aval(x)
  shape = aval.shape[:axis] + (size,) + aval.shape[axis:]
  return broadcast_in_dim(x, shape, tuple(i if i < axis else i + 1 for i in range(aval.ndim)))


# The vmapped axis's name must reach collectives inside the loop.
while_p.batch_needs_axis = True


@while_p.def_batch
def _while_batch(vals, dims, *, axis_data, cond_jaxpr, body_jaxpr, cond_nconsts,
                 body_nconsts):
  size, name, spmd = axis_data.size, axis_data.name, axis_data.spmd_name

  def batch(closed, in_dims, out_dims, instantiate):
    return batch_jaxpr(closed, in_dims, size, name, out_dims=out_dims,
                                        spmd_axis_name=spmd, instantiate=instantiate)

  cconst_dims, bconst_dims, init_dims = _split3(dims, cond_nconsts, body_nconsts)
  # A carry is batched if its initial value is or the body makes it so from
  # a batched carry: iterate to the fixpoint.
  carry_bat = [d is not None for d in init_dims]
  for _ in range(len(carry_bat) + 1):
    trial = [0 if b else None for b in carry_bat]
    _, out_dims = batch(body_jaxpr, bconst_dims + trial, None, False)
    out_bat = [a or d is not None for a, d in zip(carry_bat, out_dims)]
    if out_bat == carry_bat:
      break
    carry_bat = out_bat
  _, (pred_dim,) = batch(cond_jaxpr, cconst_dims + [0 if b else None for b in carry_bat],
                         None, False)
  if pred_dim is not None:
    # A batched predicate batches every carry: lanes run until all are done.
    carry_dims = [0] * len(carry_bat)
    cond_b, _ = batch(cond_jaxpr, cconst_dims + carry_dims, [0], True)
  else:
    # The (unbatched) predicate's shape must stay a prefix of the carries'.
    rank = cond_jaxpr.out_avals[0].ndim
    carry_dims = [rank if b else None for b in carry_bat]
    cond_b, _ = batch(cond_jaxpr, cconst_dims + carry_dims, [None], True)
  body_b, _ = batch(body_jaxpr, bconst_dims + carry_dims, carry_dims, True)
  cconsts, bconsts, init = _split3(vals, cond_nconsts, body_nconsts)
  new_init = []
  for x, old, new in zip(init, init_dims, carry_dims):
    if new is None:
      new_init.append(x)
    elif old is None:
      new_init.append(_broadcast_at(x, size, new))
    else:
      new_init.append(moveaxis(x, old, new))
  outs = while_p.bind(*cconsts, *bconsts, *new_init, cond_nconsts=cond_nconsts,
                      cond_jaxpr=cond_b, body_nconsts=body_nconsts, body_jaxpr=body_b)
  return outs, carry_dims


# ------------------------------------------------------------- lowering
# A loop whose values are all small runs as one dispatch (loop_dispatch.py).
# Otherwise IREE runs the compiled loop in its VM on the host, each trip
# waiting for the predicate (several microseconds a trip), so loops over
# small carries run several guarded steps per trip: step j+1 is
# ``select(cond(c_j), body(c_j), c_j)``. A carry that finished keeps its
# value, so results are unchanged; the body may run (discarded) up to k-1
# times past the end, harmless for these pure functions. 10k steps of a
# scalar update: ~9 us -> ~0.5 us a step.
_GUARD_MAX_ELEMENTS = 4096
_GUARD_OP_BUDGET = 128
_GUARD_MAX_STEPS = 16


def _guarded_steps(cond_jaxpr, body_jaxpr, carry_avals, body_nconsts: int) -> int:
  if sum(a.size for a in carry_avals) > _GUARD_MAX_ELEMENTS:
    return 1
  if _dead_carries(body_jaxpr.jaxpr, body_nconsts):
    # A carry the body overwrites without reading (``(i + 1, x * 2, max(x))``)
    # makes IREE's compiler fail on guarded steps, or abort the process
    # ("LLVM ERROR: out of memory" for 2 steps, iree-base-compiler 3.x).
    return 1
  n = len(cond_jaxpr.jaxpr.eqns) + len(body_jaxpr.jaxpr.eqns) + 1
  if any(jaxprs_in_params(e.params) for e in (*cond_jaxpr.jaxpr.eqns, *body_jaxpr.jaxpr.eqns)):
    return 1   # nested loops/conds: keep the body small
  if jaxpr_effects(cond_jaxpr) or jaxpr_effects(body_jaxpr):
    return 1   # a guarded step would run its prints/callbacks past the loop's end
  return max(1, min(_GUARD_MAX_STEPS, _GUARD_OP_BUDGET // n))


def _dead_carries(body, nconsts: int) -> list[int]:
  """Positions of the carries that enter the body unread (by no equation, no
  output): the body overwrites them, only the predicate reads them."""
  read = {id(v) for e in body.eqns for v in e.invars}
  read.update(id(v) for v in body.outvars)
  return [i for i, v in enumerate(body.invars[nconsts:]) if id(v) not in read]


@while_p.def_lower
def _while_lower(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  types = [ctx.aval_type(a) for a in ctx.avals_in]
  pred_aval = cond_jaxpr.out_avals[0]
  batched = pred_aval.ndim > 0
  carry_avals = body_jaxpr.out_avals
  one_dispatch = fits_one_dispatch([cond_jaxpr, body_jaxpr], ctx.avals_in,
                                   reduces_lanes=batched, static_trips=False)
  # In one dispatch a trip costs no host work: no guarded steps needed.
  steps = 1 if one_dispatch else _guarded_steps(cond_jaxpr, body_jaxpr, carry_avals,
                                                body_nconsts)
  # A carry only the predicate reads (the body overwrites it) makes IREE
  # (3.13) drop it from the values the condition forwards but not from the
  # body's arguments: "region branch point has 4 operands, but region
  # successor needs 6 inputs" once the program holds other work (a qr next
  # to the loop). The body keeps it as ``select(cond(carry), new, old)``: it
  # runs only while the predicate holds, so the value is ``new``, but the
  # body now reads ``old``. Batched loops select every carry already; a loop
  # in one dispatch never meets IREE's stream conversion; a predicate with
  # effects (prints, callbacks) must run once a trip.
  dead = ([] if one_dispatch or batched or jaxpr_effects(cond_jaxpr)
          else _dead_carries(body_jaxpr.jaxpr, body_nconsts))

  def guarded(active, new, carry):
    if batched:
      active = [ctx.broadcast_in_dim(active, a.shape, range(pred_aval.ndim))
                for a in carry_avals]
    else:
      active = [active] * len(carry)
    return [select(ctx, p, n, c) for p, n, c in zip(active, new, carry)]

  def loop(operands):
    # Constants ride along as loop-carried values the body returns unchanged.
    with ctx.region(types) as cond_region:
      cconst, _, carry = _split3(cond_region.args, cond_nconsts, body_nconsts)
      pred, = ctx.lower_jaxpr_inline(cond_jaxpr, cconst + carry)
      if batched:   # run while any lane is active
        pred = reduce(ctx, pred, tuple(range(pred_aval.ndim)), "or", False, np.bool_,
                      ShapedArray((), np.dtype(np.bool_)))
      ctx.ret([pred])
    with ctx.region(types) as body_region:
      cconst, bconst, carry = _split3(body_region.args, cond_nconsts, body_nconsts)
      new = ctx.lower_jaxpr_inline(body_jaxpr, bconst + carry)
      if dead:
        running, = ctx.lower_jaxpr_inline(cond_jaxpr, cconst + carry)
        new = [select(ctx, running, n, c) if i in dead else n
               for i, (n, c) in enumerate(zip(new, carry))]
      if batched:   # lanes that are done keep their carry
        active, = ctx.lower_jaxpr_inline(cond_jaxpr, cconst + carry)
        new = guarded(active, new, carry)
      for _ in range(steps - 1):
        active, = ctx.lower_jaxpr_inline(cond_jaxpr, cconst + new)
        new = guarded(active, ctx.lower_jaxpr_inline(body_jaxpr, bconst + new), new)
      if one_dispatch:
        new = carry_in_place(ctx, new, carry)
      ctx.ret(cconst + bconst + new)
    return ctx.op("stablehlo.while", list(operands), types,
                  regions=[cond_region, body_region])

  outs = in_one_dispatch(ctx, args, types, loop) if one_dispatch else loop(args)
  return outs[cond_nconsts + body_nconsts:]


__all__ = ["while_p", "while_loop", "keyed_while_loop", "check_carry_type", "trace_to_open_jaxpr", "join_carries"]
