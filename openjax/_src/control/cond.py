"""``cond_p``: ``lax.cond`` and ``lax.switch``.

``cond_p`` takes an int32 index and operands, and holds one closed jaxpr per
branch (``branches``); it runs ``branches[index]`` on the operands. Both
wrappers trace every branch to a jaxpr; values the branches close over become
explicit leading operands (the constants of all branches, joined), as in JAX,
so the branch jaxprs are closed over nothing a transformation must see.

This module holds the wrappers (tracing the branches, JAX's checks and
errors); ``_cond_rules`` holds the primitive and all its rules.
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Callable

import numpy as np

from openjax._src import dtypes, tree_util
from openjax._src.config import config
from openjax._src.core import (Array, ClosedJaxpr, Jaxpr, ShapedArray, Tracer, Var, array_of,
                               canonical_value, get_aval, is_concrete, typematch)
from openjax._src.control._cond_rules import cond_p
from openjax._src.control.ref_threading import RefThreading, rerun_threading_refs
from openjax._src.control.trace_cache import TraceCache, avals_key, fun_key
from openjax._src.core.avals import ordered_axes
from openjax._src.core.ref import RefDiscovered, close_scope
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.collectives.collectives import current_axis_env
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.elementwise.logic import clamp

_no_operand = object()   # ``operand=`` not passed (JAX's older calling convention)


# ------------------------------------------------------------------ wrappers
def cond(pred, true_fun: Callable, false_fun: Callable, *operands, operand=_no_operand):
  """Apply ``true_fun(*operands)`` if ``pred`` is true, else ``false_fun(*operands)``.

  ``pred`` is a scalar boolean (a number is compared with zero). Both
  branches are traced (they must return pytrees of the same structure and
  the same shapes and dtypes); only the chosen one runs. Under ``vmap``
  with a batched ``pred`` both branches run and the results are selected
  per example, as with ``jnp.where``. With ``jax.disable_jit()`` and a
  concrete ``pred`` the chosen branch is simply called.

  Args:
    pred: boolean (or numeric) scalar choosing the branch.
    true_fun, false_fun: callables taking ``*operands``.
    operands: the branch arguments (any pytrees).

  Returns:
    the chosen branch's output.
  """
  if not (callable(true_fun) and callable(false_fun)):
    # JAX's older form: cond(pred, true_operand, true_fun, false_operand, false_fun).
    if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
      x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
      return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
    raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
  operands = _operands(operands, operand)
  if pred is None:
    raise TypeError("cond predicate is None")
  if isinstance(pred, Sequence) or np.ndim(pred) != 0:
    raise TypeError(f"Pred must be a scalar, got {pred} of " + (
        f"type {type(pred)}" if isinstance(pred, Sequence) else f"shape {np.shape(pred)}."))
  try:
    pred_dtype = dtypes.result_type(pred)
  except TypeError as err:
    raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from err
  if pred_dtype.kind != "b":
    if pred_dtype.kind not in "iuf":
      raise TypeError(f"Pred type must be either boolean or number, got {pred_dtype}.")
    pred = pred != 0
  if config.read("jax_disable_jit") and is_concrete(pred):
    return true_fun(*operands) if pred else false_fun(*operands)
  index = convert_element_type(pred, np.int32)
  # Branch 0 runs for index 0 (false), branch 1 for index 1 (true).
  return _bind_cond(index, (true_fun, false_fun), operands, "cond",
                    ("true_fun", "false_fun"), order=(1, 0))


def switch(index, branches: Sequence[Callable], *operands, operand=_no_operand):
  """Apply ``branches[index](*operands)``; ``index`` is clamped to
  ``[0, len(branches) - 1]``.

  ``index`` is an integer scalar. Every branch is traced (all must return
  pytrees of the same structure, shapes and dtypes); only the chosen one
  runs. Under ``vmap`` with a batched ``index`` all branches run and the
  results are selected per example.

  Args:
    index: integer scalar choosing the branch.
    branches: sequence of callables taking ``*operands``.
    operands: the branch arguments (any pytrees).

  Returns:
    the chosen branch's output.
  """
  if not all(callable(b) for b in branches):
    raise TypeError("lax.switch: branches argument should be a sequence of callables.")
  operands = _operands(operands, operand)
  if len(np.shape(index)) != 0:
    raise TypeError(f"Branch index must be scalar, got {index} of shape {np.shape(index)}.")
  try:
    if isinstance(index, (str, bytes)):   # NumPy would read it as a dtype name
      raise TypeError(index)
    index_dtype = dtypes.result_type(index)
  except TypeError as err:
    raise TypeError(f"Index type must be an integer, got {index}.") from err
  if index_dtype.kind not in "iu":
    raise TypeError(f"Index type must be an integer, got {index} as {index_dtype}")
  branches = tuple(branches)
  if not branches:
    raise ValueError("Empty branch sequence")
  if len(branches) == 1:
    return branches[0](*operands)
  index = convert_element_type(index, np.int32)
  index = clamp(np.array(0, np.int32), index, np.array(len(branches) - 1, np.int32))
  if config.read("jax_disable_jit") and is_concrete(index):
    return branches[int(index)](*operands)
  names = ("branch 0",) + tuple(f"branch{i}" for i in range(1, len(branches)))
  return _bind_cond(index, branches, operands, "switch", names,
                    order=tuple(range(len(branches))))


def _operands(operands: tuple, operand) -> tuple:
  if operand is _no_operand:
    return operands
  if operands:
    raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                    f"passed, got operand={operand!r} and positional operands {operands}")
  return (operand,)


# ----------------------------------------------------------- tracing branches
class _Traced:
  """One branch traced: its jaxpr (constvars = closed-over values), the
  constant values, and the output tree and avals."""
  __slots__ = ("jaxpr", "consts", "out_tree", "assembled", "__weakref__")

  def __init__(self, jaxpr: Jaxpr, consts: list, out_tree):
    self.jaxpr, self.consts, self.out_tree = jaxpr, consts, out_tree
    # (all branches' _Traced, order) -> _assemble's result, so that a cond
    # called again binds the very same branch jaxprs (the eval trace's
    # abstract-eval cache then hits instead of growing).
    self.assembled: dict = {}


# (fun_key(fun), in_tree, in_avals, flags, axis env) -> _Traced. Like JAX, a
# branch function traced again with the same input types reuses its jaxpr (so
# identical branches print as one shared jaxpr), and so does a fresh closure
# of the same code over the same values (control/trace_cache.py); only traces
# closing over concrete values are kept, never ones holding tracers.
_trace_cache = TraceCache()


def _trace_branch(fun: Callable, in_tree, in_avals: tuple, api_name: str, state,
                  context: tuple) -> _Traced:
  # ``context``: the flags and the bound axis names and sizes, which shape a
  # trace too (psum of a constant is folded).
  key = (fun_key(fun), in_tree, avals_key(in_avals), context)
  hit = _trace_cache.get(key)
  if hit is not None:
    return hit
  box: list = []

  def flat_fun(*leaves):
    scope = state.open()   # a use of an outside ref raises RefDiscovered for it
    try:
      out = fun(*tree_util.tree_unflatten(in_tree, leaves))
    finally:
      close_scope(scope)
    out_leaves, out_tree = tree_util.tree_flatten(out)
    box.append(out_tree)
    for path, x in zip(_leaf_paths(out_tree), out_leaves):
      if not _is_jax_type(x):
        where = f" at output component {tree_util.keystr(tuple(path))}" if path else ""
        raise TypeError(f"function {_fun_sourceinfo(fun)} traced for {api_name} returned a "
                        f"value of type {type(x)}{where}, which is not a valid JAX type")
    return out_leaves

  jaxpr, consts = trace_to_jaxpr(flat_fun, list(in_avals))
  traced = _Traced(jaxpr, consts, box[0])
  if not any(isinstance(c, Tracer) for c in consts):
    _trace_cache.put(key, traced, consts)
  return traced


def _fun_sourceinfo(fun) -> str:
  while hasattr(fun, "func") and hasattr(fun, "args"):   # functools.partial
    fun = fun.func
  try:
    code = fun.__code__
    return f"{fun.__name__} at {code.co_filename}:{code.co_firstlineno}"
  except AttributeError:
    return "<unknown>"


def _is_jax_type(x) -> bool:
  if isinstance(x, str):
    return False
  try:
    get_aval(x)
  except (TypeError, ValueError):
    return False
  return True


def _operand_aval(x) -> ShapedArray:
  if isinstance(x, str):
    raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")
  try:
    return get_aval(x)
  except (TypeError, ValueError) as err:
    raise TypeError(f"Argument '{x}' of type '{type(x)}' is not a valid JAX type") from err


def _bind_cond(index, funs: Sequence[Callable], operands: tuple, api_name: str,
               names: Sequence[str], order: Sequence[int]):
  """Trace ``funs`` (in the user's order, named ``names`` in errors), check
  their outputs agree, and bind ``cond_p`` with branch ``k`` = ``funs[order[k]]``.
  Refs the branches use are threaded through as operands and results
  (``control/ref_threading.py``)."""
  state = RefThreading()
  try:   # inline, not run_threading_refs: eager conds are called in loops
    return _bind_branches(index, funs, operands, api_name, names, order, state)
  except RefDiscovered as err:
    if not state.owns(err):
      raise
    state.refs.append(err.ref)

  def threaded(state):
    branches = [functools.partial(_threaded_branch, state, f) for f in funs]
    out, finals = _bind_branches(index, branches, (state.values(), *operands), api_name,
                                 names, order, state)
    state.write_back(finals)
    return out
  return rerun_threading_refs(state, threaded)


def _threaded_branch(state, fun, values, *operands):
  return state.call(fun, values, *operands)


def _bind_branches(index, funs, operands, api_name, names, order, state):
  leaves, in_tree = tree_util.tree_flatten(operands)
  in_avals = tuple(_operand_aval(x) for x in leaves)
  context = (config.values_snapshot(), current_axis_env())
  traced = [_trace_branch(f, in_tree, in_avals, api_name, state, context) for f in funs]
  key = (tuple(traced), tuple(order))
  assembled = traced[0].assembled.get(key)
  if assembled is None:
    for i in range(1, len(funs)):
      _check_branch_outputs(api_name, names[0], names[i], funs[0], funs[i], traced[0],
                            traced[i])
    assembled = _assemble(traced, order)
    if not any(isinstance(c, Tracer) for t in traced for c in t.consts):
      traced[0].assembled[key] = assembled     # never keep tracers alive
  consts, branches, in_fwd = assembled
  outs = iter(cond_p.bind(index, *consts, *leaves, branches=branches))
  all_inputs = [*consts, *leaves]
  out_leaves = [next(outs) if f is None else _as_array(all_inputs[f]) for f in in_fwd]
  return tree_util.tree_unflatten(traced[0].out_tree, out_leaves)


def _assemble(traced: list[_Traced], order: Sequence[int]):
  """(consts, branches, in_fwd): the values the branches close over (each
  once, in the user's branch order), which become leading operands; the
  branch jaxprs taking them; and, per output, the input every branch
  forwards unchanged to it (such outputs are dropped from the cond, as in
  JAX) or None."""
  consts, const_ids = [], {}
  for t in traced:
    for c in t.consts:
      if id(c) not in const_ids:
        const_ids[id(c)] = len(consts)
        consts.append(c)
  branch_jaxprs = [_consts_as_operands(t, consts, const_ids) for t in traced]
  fwds = [_forwarded_inputs(j) for j in branch_jaxprs]
  in_fwd = [f[0] if len(set(f)) == 1 else None for f in zip(*fwds)]
  if any(f is not None for f in in_fwd):
    keep = [f is None for f in in_fwd]
    branch_jaxprs = [j.replace(outvars=[v for v, k in zip(j.outvars, keep) if k])
                     for j in branch_jaxprs]
  branches = tuple(ClosedJaxpr(branch_jaxprs[k], []) for k in order)
  return consts, branches, in_fwd


def _consts_as_operands(traced: _Traced, consts: list, const_ids: dict) -> Jaxpr:
  j = traced.jaxpr
  if not consts:
    return j                      # the cached jaxpr itself (shared when reused)
  own = {const_ids[id(c)]: v for c, v in zip(traced.consts, j.constvars)}
  const_invars = [own.get(i) or Var(get_aval(c)) for i, c in enumerate(consts)]
  return Jaxpr([], const_invars + j.invars, j.outvars, j.eqns, j.debug_info)


def _forwarded_inputs(j: Jaxpr) -> list:
  pos = {v: i for i, v in enumerate(j.invars)}
  return [pos.get(v) if isinstance(v, Var) else None for v in j.outvars]


def _as_array(x):
  if isinstance(x, Tracer) or type(x) is Array:
    return x
  return array_of(canonical_value(x), get_aval(x))


def _check_branch_outputs(api_name: str, name1: str, name2: str, f1, f2,
                          t1: _Traced, t2: _Traced) -> None:
  """JAX's errors for branches whose outputs differ in structure or type."""
  info = f"{name1} is {_fun_sourceinfo(f1)}\n{name2} is {_fun_sourceinfo(f2)}\n\n"
  if t1.out_tree != t2.out_tree:
    diffs = [f"{name1} output{_at_path(p)} is a {a} but {name2} output{_at_path(p)} is a "
             f"{b}, so {why}"
             for p, a, b, why in tree_util.equality_errors_pytreedef(t1.out_tree, t2.out_tree)]
    if not diffs:
      return
    if len(diffs) == 1:
      differences = f"{diffs[0]}.\n"
    else:
      differences = "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
    raise TypeError(
        f"{api_name} branch outputs must have the same pytree structure, but they differ:\n\n"
        f"{info}{differences}\nRevise {name1} and/or {name2} so that they have the same "
        "pytree structure.")
  avals1 = [v.aval for v in t1.jaxpr.outvars]
  avals2 = [v.aval for v in t2.jaxpr.outvars]
  paths = _leaf_paths(t1.out_tree)
  # Inside a check_vma shard_map the manual axes a value varies over are part
  # of its type: branches must agree on them too.
  diffs = [f"the output of {name1}{_at_path(p)} has type {a.str_short(short_dtypes=False)} "
           f"but the corresponding output of {name2} has type "
           f"{b.str_short(short_dtypes=False)}{_mismatch(a, b)}"
           for p, a, b in zip(paths, avals1, avals2) if not _same_type(a, b)]
  if not diffs:
    return
  if len(diffs) == 1:
    differences = f"{diffs[0][0].upper()}{diffs[0][1:]}.\n"
  else:
    differences = "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"
  raise TypeError(
      f"{api_name} branches must have equal output types but they differ.\n\n"
      f"{info}{differences}\n{_pcast_advice(name1, name2, paths, avals1, avals2)}"
      f"Revise {name1} and/or {name2} so that all output types match.")


def _same_type(a: ShapedArray, b: ShapedArray) -> bool:
  return typematch(a, b) and a.vma == b.vma


def _pcast_advice(name1: str, name2: str, paths, avals1, avals2) -> str:
  """JAX's suggestion for branches that vary over different manual axes. Its
  text names the branch whose output varies more, and the axes the other
  varies over beyond it (``()`` when one's are a subset of the other's): kept
  as JAX prints it, since users match on JAX's messages."""
  fixes = [f"applying `jax.lax.pcast(..., {ordered_axes(other.vma - mine.vma)}, "
           f"to='varying')` to the output of {n}{_at_path(p)}"
           for p, a, b in zip(paths, avals1, avals2)
           for n, other, mine in ((name1, b, a), (name2, a, b))
           if not _same_type(a, b) and mine.vma - other.vma]
  if not fixes:
    return ""
  if len(fixes) == 1:
    advice = f"This might be fixed by {fixes[0]}.\n"
  else:
    advice = ("This might be fixed by:\n" + "\n".join(f"  * {d};" for d in fixes[:-1])
              + f"\n  * {fixes[-1]}.\n")
  return advice + ("See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma "
                   "for more information.\n\n")


def _leaf_paths(tree) -> list:
  """The key path of every leaf of ``tree`` (a treedef)."""
  placeholder = object()     # a leaf (None would be an empty subtree)
  with_path, _ = tree_util.tree_flatten_with_path(
      tree_util.tree_unflatten(tree, [placeholder] * tree.num_leaves))
  return [p for p, _ in with_path]


def _at_path(path) -> str:
  return f" at path {tree_util.keystr(tuple(path))}" if path else ""


def _mismatch(a: ShapedArray, b: ShapedArray) -> str:
  what = []
  if a.dtype != b.dtype:
    what.append("the dtypes do not match")
  if a.shape != b.shape:
    what.append("the shapes do not match")
  if a.vma != b.vma:
    what.append("the manual axis types do not match")
  if not what:
    return ""
  return ", so " + (what[0] if len(what) == 1 else ", ".join(what[:-1]) + ", and " + what[-1])


__all__ = ["cond", "switch", "cond_p"]
