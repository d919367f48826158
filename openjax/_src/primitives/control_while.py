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
import weakref
from typing import Callable, Sequence

import numpy as np

from openjax._src import dtypes, tree_util
from openjax._src.config import config
from openjax._src.core import (ClosedJaxpr, Jaxpr, JaxprTypeError, Literal, Primitive,
                               ShapedArray, Tracer, Var, array_hooks, canonical_value,
                               eval_jaxpr, get_aval, jaxpr_transforms)
from openjax._src.errors import ConcretizationTypeError
from openjax._src.primitives.convert import convert_element_type

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
  if config.read("jax_disable_jit"):
    try:
      val = tree_util.tree_map(_as_array, init_val)
      while cond_fun(val):
        val = tree_util.tree_map(_as_array, body_fun(val))
      return val
    except ConcretizationTypeError:
      pass   # a traced predicate (e.g. under vmap): run the primitive instead

  paths_leaves, in_tree = tree_util.tree_flatten_with_path(init_val)
  paths = [p for p, _ in paths_leaves]
  init_vals = [leaf for _, leaf in paths_leaves]
  init_avals = [get_aval(x) for x in init_vals]
  cond_jaxpr, cond_consts, body_jaxpr, body_consts, out_tree = _trace_loop(
      cond_fun, body_fun, in_tree, init_avals)
  body_out_avals = body_jaxpr.out_avals
  if len(body_out_avals) != len(init_avals):
    check_carry_type("while_loop body", body_fun, in_tree, paths, init_avals, out_tree,
                     body_out_avals)
  # A weakly typed initial value (a Python scalar) takes the type the body
  # gives it, and the loop is traced again with the joined type.
  changed = False
  for i, (x, a, o) in enumerate(zip(init_vals, init_avals, body_out_avals)):
    if a.weak_type and not _typematch(a, o):
      init_vals[i] = convert_element_type(x, dtypes.result_type(x, o))
      changed = True
  if changed:
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
  loop_vals = init_vals
  if any(move):
    cond_jaxpr = _fresh_jaxpr(cond_jaxpr, invars=cond_jaxpr.invars[:n_cc] + [
        v for v, m in zip(cond_jaxpr.invars[n_cc:], move) if not m])
    carry_in = body_jaxpr.invars[n_bc:]
    body_jaxpr = _fresh_jaxpr(
        body_jaxpr,
        invars=([v for v, m in zip(carry_in, move) if m] + body_jaxpr.invars[:n_bc]
                + [v for v, m in zip(carry_in, move) if not m]),
        outvars=[o for o, m in zip(body_jaxpr.outvars, move) if not m])
    body_consts = [x for x, m in zip(init_vals, move) if m] + body_consts
    loop_vals = [x for x, m in zip(init_vals, move) if not m]
  outs = while_p.bind(*cond_consts, *body_consts, *loop_vals,
                      cond_nconsts=len(cond_consts), cond_jaxpr=ClosedJaxpr(cond_jaxpr, []),
                      body_nconsts=len(body_consts), body_jaxpr=ClosedJaxpr(body_jaxpr, []))
  if any(move):
    it = iter(outs)
    outs = [x if m else next(it) for x, m in zip(init_vals, move)]
  return tree_util.tree_unflatten(out_tree, outs)


def _as_array(x):
  if isinstance(x, Tracer) or type(x) is array_hooks.array_type:
    return x
  return array_hooks.make_array(canonical_value(x), get_aval(x))


def _typematch(a: ShapedArray, b: ShapedArray) -> bool:
  """Equal types up to weak typing."""
  return a.shape == b.shape and a.dtype == b.dtype


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

  jaxpr, consts = jaxpr_transforms.trace_to_jaxpr(flat_fun, list(in_avals))
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
  diffs = []
  for path, a, o in zip(in_paths, in_avals, out_avals):
    if _typematch(a, o):
      continue
    why = [w for w, bad in (("the dtypes do not match", a.dtype != o.dtype),
                            ("the shapes do not match", a.shape != o.shape)) if bad]
    extra = ", so " + (why[0] if len(why) == 1 else f"{why[0]}, and {why[1]}")
    diffs.append(f"{component(path)} has type {a.str_short()} but the corresponding "
                 f"output carry component has type {o.str_short()}{extra}")
  if diffs:
    raise TypeError(
        f"{name} function carry input and carry output must have equal types, but they "
        f"differ:\n\n{_bulleted(diffs)}\n"
        "Revise the function so that all output types match the corresponding input "
        "types.")


# ------------------------------------------------------------ jaxpr helpers
def _used_invars(jaxpr: Jaxpr) -> list[bool]:
  """Which inputs the (dead-code-free part of the) jaxpr reads."""
  live = {a for a in jaxpr.outvars if isinstance(a, Var)}
  for eqn in reversed(jaxpr.eqns):
    if any(v in live for v in eqn.outvars):
      live.update(a for a in eqn.invars if isinstance(a, Var))
  return [v in live for v in jaxpr.invars]


def _fresh_jaxpr(jaxpr: Jaxpr, invars=None, outvars=None) -> Jaxpr:
  """A copy of ``jaxpr`` (with ``invars``/``outvars`` chosen among its own
  variables, plus new input variables) over fresh variables, without its
  dead equations: transformed loops never share variables with the jaxpr
  they came from (the printer names variables by identity)."""
  invars = jaxpr.invars if invars is None else invars
  outvars = jaxpr.outvars if outvars is None else outvars
  live = {a for a in outvars if isinstance(a, Var)}
  kept = []
  for eqn in reversed(jaxpr.eqns):
    if any(v in live for v in eqn.outvars):
      kept.append(eqn)
      live.update(a for a in eqn.invars if isinstance(a, Var))
  kept.reverse()
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
class _NumpyProgram:
  """A jaxpr prepared for repeated evaluation on NumPy values: each step
  calls a primitive's ``impl`` directly (no tracing dispatch, no abstract
  evaluation: the output dtypes are the jaxpr's)."""
  __slots__ = ("constvars", "invars", "outvars", "steps")

  def __init__(self, jaxpr: Jaxpr):
    self.constvars, self.invars = jaxpr.constvars, jaxpr.invars
    self.outvars = [(True, np.asarray(a.val, a.aval.dtype)) if type(a) is Literal else (False, a)
                    for a in jaxpr.outvars]
    self.steps = []
    for eqn in jaxpr.eqns:
      ins = tuple((True, np.asarray(a.val, a.aval.dtype)) if type(a) is Literal else (False, a)
                  for a in eqn.invars)
      outs = tuple((v, v.aval.dtype) for v in eqn.outvars)
      self.steps.append((eqn.primitive.rule("impl"), eqn.params, ins, outs))

  def __call__(self, consts, args) -> list:
    env = dict(zip(self.constvars, consts))
    env.update(zip(self.invars, args))
    for impl, params, ins, outs in self.steps:
      results = impl(*[x if lit else env[x] for lit, x in ins], **params)
      for (v, dt), o in zip(outs, results):
        o = np.asarray(o)
        env[v] = o if o.dtype == dt else o.astype(dt)
    return [x if lit else env[x] for lit, x in self.outvars]


_programs: "weakref.WeakKeyDictionary[Jaxpr, _NumpyProgram]" = weakref.WeakKeyDictionary()


def _numpy_runner(closed: ClosedJaxpr) -> Callable[[Sequence], list]:
  """``args -> outs`` evaluating ``closed`` on NumPy values."""
  consts = [canonical_value(c) for c in closed.consts]
  if config.read("jax_debug_nans") or config.read("jax_debug_infs"):
    # The checked path: every equation through the eval trace.
    return lambda args: [canonical_value(o) for o in eval_jaxpr(closed.jaxpr, consts, *args)]
  prog = _programs.get(closed.jaxpr)
  if prog is None:
    prog = _programs[closed.jaxpr] = _NumpyProgram(closed.jaxpr)
  return lambda args: prog(consts, args)


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
  run_cond, run_body = _numpy_runner(cond_jaxpr), _numpy_runner(body_jaxpr)
  if cond_jaxpr.out_avals[0].shape == ():
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
      if not _typematch(a, e):
        raise JaxprTypeError(f"while: input {i} of {what} is {e.str_short()} but the "
                             f"loop gives it {a.str_short()}")
  outs = body_jaxpr.out_avals
  if len(outs) != len(carry) or not all(map(_typematch, outs, carry)):
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


__all__ = ["while_p", "while_loop"]
