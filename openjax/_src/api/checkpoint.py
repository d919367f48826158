"""``checkpoint``/``remat`` (gradient checkpointing), its policies,
``checkpoint_name`` and ``print_saved_residuals``.

``checkpoint(f)`` traces ``f`` to a jaxpr and binds ``remat2``; when it is
differentiated, values the policy does not save are recomputed on the
backward pass (see ``control/remat.py``).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import types
from typing import Any, Callable, Sequence

from openjax._src import tree_util
from openjax._src.api.shapes import abstractify
from openjax._src.config import config
from openjax._src.core import Literal, Tracer, set_current_trace
from openjax._src.errors import ConcretizationTypeError
from openjax._src.interpreters.partial_eval import linearize_flat
from openjax._src.interpreters.staging import DebugInfo
from openjax._src.primitives.base.ad_util import tangent_aval
from openjax._src.control.remat import (RecordingTrace, name_p, nothing_saveable, remat_p,
                                        source_state, trace_recording_sources)
from openjax._src.control.custom_derivatives import convert_constvars
from openjax._src.primitives.dot_conv.dot import dot_general_p

# ------------------------------------------------------------------ policies


def everything_saveable(*_, **__) -> bool:
  """Save everything: as if ``jax.checkpoint`` were not used at all."""
  return True


@dataclasses.dataclass(frozen=True)
class DotsSaveable:
  """Save the results of matrix multiplications (``dot_general``); with
  ``only_if_no_batch_dims``, only those without batch dimensions."""
  only_if_no_batch_dims: bool

  def __call__(self, prim, *args, **params):
    if prim is not dot_general_p:
      return prim.name == "conv_general_dilated" and not self.only_if_no_batch_dims
    if not self.only_if_no_batch_dims:
      return True
    (_, _), (lhs_b, rhs_b) = params["dimension_numbers"]
    return not lhs_b and not rhs_b


dots_saveable = checkpoint_dots = DotsSaveable(False)
dots_with_no_batch_dims_saveable = DotsSaveable(True)


@dataclasses.dataclass(frozen=True)
class SaveOnlyTheseNames:
  saveable_names: frozenset

  def __call__(self, prim, *_, **params):
    return prim is name_p and params["name"] in self.saveable_names


@dataclasses.dataclass(frozen=True)
class SaveAnyNamesButThese:
  names: frozenset

  def __call__(self, prim, *_, **params):
    return prim is name_p and params["name"] not in self.names


def save_only_these_names(*names_which_can_be_saved):
  """Save only named values (``checkpoint_name``), and only among these names."""
  return SaveOnlyTheseNames(frozenset(names_which_can_be_saved))


def save_any_names_but_these(*names_not_to_save):
  """Save only named values, excluding the names given."""
  return SaveAnyNamesButThese(frozenset(names_not_to_save))


def save_anything_except_these_names(*names_not_to_save):
  """Save any values (not just named ones) excluding the names given
  (JAX 0.10.2 implements it as saving everything)."""
  return lambda *_, **__: True


class _RematCase:
  """A policy decision: ``Saveable`` or ``Recompute`` (JAX's partial_eval
  constants); decisions are used for their truth value."""
  __slots__ = ("_name", "_save")

  def __init__(self, name: str, save: bool):
    self._name, self._save = name, save

  def __bool__(self):
    return self._save

  def __repr__(self):
    return self._name


Saveable = _RematCase("Saveable", True)
Recompute = _RematCase("Recompute", False)


@dataclasses.dataclass(frozen=True)
class Offloadable:
  """Save the value in another memory space (``dst``). On the CPU every
  memory space is host memory: the value is simply saved."""
  src: str
  dst: str

  def __bool__(self):
    return True


@dataclasses.dataclass(frozen=True)
class OffloadDotWithNoBatchDims:
  offload_src: str
  offload_dst: str

  def __call__(self, prim, *_, **params):
    if prim is dot_general_p:
      (_, _), (lhs_b, rhs_b) = params["dimension_numbers"]
      if not lhs_b and not rhs_b:
        return Offloadable(src=self.offload_src, dst=self.offload_dst)
    return Recompute


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
  """Like ``dots_with_no_batch_dims_saveable``, but offload instead of saving."""
  return OffloadDotWithNoBatchDims(offload_src, offload_dst)


@dataclasses.dataclass(frozen=True)
class SaveAndOffloadOnlyTheseNames:
  names_which_can_be_saved: frozenset
  names_which_can_be_offloaded: frozenset
  offload_src: str
  offload_dst: str

  def __call__(self, prim, *_, **params):
    if prim is name_p and params["name"] in self.names_which_can_be_saved:
      return Saveable
    if prim is name_p and params["name"] in self.names_which_can_be_offloaded:
      return Offloadable(src=self.offload_src, dst=self.offload_dst)
    return Recompute


def save_and_offload_only_these_names(*, names_which_can_be_saved,
                                      names_which_can_be_offloaded, offload_src, offload_dst):
  """Like ``save_only_these_names``, with a second set of names to offload."""
  saved = frozenset(names_which_can_be_saved)
  offloaded = frozenset(names_which_can_be_offloaded)
  intersection = saved & offloaded
  if intersection:
    raise ValueError(
        "The names should be exclusive and should not intersect in"
        " `names_which_can_be_saved` and `names_which_can_be_offloaded`. Got"
        f" names_which_can_be_saved={set(saved)},"
        f" names_which_can_be_offloaded={set(offloaded)} and"
        f" the intersection={set(intersection)}")
  return SaveAndOffloadOnlyTheseNames(saved, offloaded, offload_src, offload_dst)


def save_from_both_policies(policy_1, policy_2):
  """Logical OR of two policies."""
  def policy(prim, *args, **params):
    out1 = policy_1(prim, *args, **params)
    out2 = policy_2(prim, *args, **params)
    if not (isinstance(out1, bool) and isinstance(out2, bool)):
      raise ValueError(
          "The return value of the policies should be a boolean. Got:"
          f" {out1} and {out2}. Please write a custom policy function directly,"
          " rather than using this helper function.")
    return out1 or out2
  return policy


checkpoint_policies = types.SimpleNamespace(
    SaveOnlyTheseNames=SaveOnlyTheseNames,
    SaveAnyNamesButThese=SaveAnyNamesButThese,
    SaveAndOffloadOnlyTheseNames=SaveAndOffloadOnlyTheseNames,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies)


# ------------------------------------------------------------- checkpoint
def _check_static_argnums(static_argnums, nargs: int) -> frozenset:
  if type(static_argnums) is int:
    static_argnums = (static_argnums,)
  elif not (type(static_argnums) is tuple and all(type(d) is int for d in static_argnums)):
    raise TypeError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` must "
                    f"be an int, tuple of ints or, bool, but got value {static_argnums}")
  if not all(-nargs <= d < nargs for d in static_argnums):
    raise ValueError("the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can "
                     "only take integer values greater than or equal to `-len(args)` and "
                     f"less than `len(args)`, but got {static_argnums}, while `len(args)` "
                     f"= {nargs}")
  return frozenset(d % nargs for d in static_argnums)


def checkpoint(fun: Callable, *, prevent_cse: bool | Sequence[bool] = True,
               policy: Callable[..., bool] | None = None,
               static_argnums: int | tuple[int, ...] = (),
               static_argnames: str | Sequence[str] = ()) -> Callable:
  """Make ``fun`` recompute its internal values when differentiated.

  Differentiating ``checkpoint(fun)`` saves only ``fun``'s inputs (and the
  values ``policy`` allows) from the forward pass; everything else that the
  backward pass needs is recomputed from them. ``policy(prim, *avals,
  **params) -> bool`` (see ``checkpoint_policies``) picks saveable values;
  ``static_argnums`` marks arguments passed as Python values.
  """
  if not isinstance(prevent_cse, (bool, tuple, list)):
    raise TypeError(f"prevent_cse must be a bool or tuple of bools, got {type(prevent_cse)=}")
  cse = prevent_cse if isinstance(prevent_cse, bool) else any(
      tree_util.tree_leaves(tuple(prevent_cse)))
  if isinstance(static_argnames, str):
    static_argnames = (static_argnames,)

  # Traced jaxprs, reused while the arguments' structure, avals and static
  # values (and the config) stay the same, as JAX does.
  cache: dict = {}

  @functools.wraps(fun)
  def fun_remat(*args, **kwargs):
    static = _check_static_argnums(static_argnums, len(args)) if static_argnums != () else \
        frozenset()
    static_kw = {k: kwargs[k] for k in static_argnames if k in kwargs}
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_kw}
    dyn_args = tuple(a for i, a in enumerate(args) if i not in static)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
    avals = [abstractify(x) for x in leaves]
    key = (in_tree, tuple(avals), tuple((i, _Hashably(args[i])) for i in sorted(static)),
           tuple((k, _Hashably(v)) for k, v in sorted(static_kw.items())),
           config.values_snapshot())
    hit = cache.get(key) if source_state.sources is None else None
    if hit is not None:
      jaxpr, consts, out_tree = hit
      outs = remat_p.bind(*consts, *leaves, jaxpr=jaxpr, prevent_cse=cse,
                          differentiated=False, policy=policy)
      return tree_util.tree_unflatten(out_tree, outs)
    box: list = []

    def flat(*xs):
      d_args, d_kwargs = tree_util.tree_unflatten(in_tree, xs)
      it = iter(d_args)
      full = [args[i] if i in static else next(it) for i in range(len(args))]
      out = fun(*full, **d_kwargs, **static_kw)
      out_leaves, out_tree = tree_util.tree_flatten(out)
      box.append(out_tree)
      return out_leaves

    dbg = DebugInfo("checkpoint / remat", fun, _arg_names(fun, dyn_args, dyn_kwargs))
    try:
      closed = trace_recording_sources(flat, avals, dbg)
    except ConcretizationTypeError as e:
      msg = e.args[0] if e.args else ""
      if "for checkpoint" in msg:
        e.args = (msg + "\n\nConsider using the `static_argnums` parameter for `jax.remat` or "
                  "`jax.checkpoint`. See the `jax.checkpoint` docstring and its example "
                  "involving `static_argnums`:\n"
                  "https://docs.jax.dev/en/latest/_autosummary/jax.checkpoint.html\n",)
      raise
    jaxpr, consts = convert_constvars(closed)
    if not any(isinstance(c, Tracer) for c in consts) and len(cache) < 64:
      cache[key] = (jaxpr, consts, box[0])
    outs = remat_p.bind(*consts, *leaves, jaxpr=jaxpr, prevent_cse=cse,
                        differentiated=False, policy=policy)
    return tree_util.tree_unflatten(box[0], outs)

  return fun_remat


class _Hashably:
  """A static argument as a cache key: by value when hashable, else by id."""
  __slots__ = ("val", "_key")

  def __init__(self, val):
    self.val = val
    try:
      hash(val)
      self._key = (True, val)
    except TypeError:
      self._key = (False, id(val))

  def __hash__(self):
    return hash(self._key)

  def __eq__(self, other):
    if not isinstance(other, _Hashably) or self._key[0] != other._key[0]:
      return False
    if not self._key[0]:
      return self._key[1] == other._key[1]
    try:
      return type(self.val) is type(other.val) and bool(self.val == other.val)
    except Exception:  # noqa: BLE001 - user __eq__ may fail
      return False


def remat(fun: Callable, *, prevent_cse: bool = True, policy: Callable[..., bool] | None = None,
          static_argnums: int | tuple[int, ...] = ()) -> Callable:
  """Alias of ``checkpoint``."""
  return checkpoint(fun, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums)


def checkpoint_name(x, name):
  """Name ``x`` (a pytree of arrays) for checkpoint policies such as
  ``save_only_these_names``; the identity on values."""
  return tree_util.tree_map(lambda leaf: name_p.bind1(leaf, name=name), x)


# -------------------------------------------------------- saved residuals


def _arg_names(fun, args, kwargs) -> list[str]:
  """JAX's debug names of the flattened arguments: ``x``, ``params['w']``."""
  try:
    bound = inspect.signature(fun).bind(*args, **kwargs)
    items = list(bound.arguments.items())
    params = inspect.signature(fun).parameters
  except (TypeError, ValueError):
    items = [(f"args[{i}]", a) for i, a in enumerate(args)] + list(kwargs.items())
    params = {}
  names = []
  for name, val in items:
    p = params.get(name)
    if p is not None and p.kind == p.VAR_KEYWORD:
      for k, v in val.items():
        names += [f"{k}{tree_util.keystr(kp)}" for kp, _ in
                  tree_util.tree_flatten_with_path(v)[0]]
      continue
    names += [f"{name}{tree_util.keystr(kp)}" for kp, _ in
              tree_util.tree_flatten_with_path(val)[0]]
  return names


def saved_residuals(f: Callable, *args, **kwargs) -> list[tuple[Any, str]]:
  """The residuals reverse-mode differentiation of ``f`` saves: a list of
  ``(aval, description)``."""
  leaves, in_tree = tree_util.tree_flatten((args, kwargs))
  arg_names = _arg_names(f, args, kwargs)
  if len(arg_names) != len(leaves):
    arg_names = [""] * len(leaves)

  def f_flat(*xs):
    a, k = tree_util.tree_unflatten(in_tree, xs)
    return tree_util.tree_leaves(f(*a, **k))

  prev = source_state.sources
  source_state.sources = {}
  trace = RecordingTrace(DebugInfo("saved_residuals", f, arg_names))
  try:
    tracers = [trace.new_arg(abstractify(x)) for x in leaves]
    with set_current_trace(trace):
      _, lin, _ = linearize_flat(f_flat, tracers, [tangent_aval(t.aval) for t in tracers])
      res_atoms = [trace.to_jaxpr_tracer(r).atom for r in lin.residuals]
    return _describe_residuals(trace, res_atoms, arg_names)
  finally:
    trace.invalidate()
    source_state.sources = prev


def _describe_residuals(trace, res_atoms, arg_names) -> list[tuple[Any, str]]:
  res_set = set()
  results = []
  for a in res_atoms:
    if isinstance(a, Literal):
      results.append((a.aval, "from a literal"))
    else:
      res_set.add(a)
  for v in trace.constvar_to_val:
    if v in res_set:
      results.append((v.aval, "from a constant"))
  for i, v in enumerate(trace.invars):
    if v in res_set:
      name = arg_names[i] if i < len(arg_names) else ""
      results.append((v.aval, f"from the argument {name}" if name
                      else f"from the argument at flattened index {i}"))
  for eqn in trace.eqns:
    for v in eqn.outvars:
      if v not in res_set:
        continue
      src = source_state.sources.get(id(eqn), (None, "<unknown>"))[1]
      if eqn.primitive is name_p:
        results.append((v.aval, f"named '{eqn.params['name']}' from {src}"))
      elif eqn.primitive.name == "jit":
        results.append((v.aval, f"output of jitted function '{eqn.params['name']}' from {src}"))
      else:
        results.append((v.aval, f"output of {eqn.primitive.name} from {src}"))
  return results


def print_saved_residuals(f: Callable, *args, **kwargs) -> None:
  """Print the residuals ``saved_residuals`` finds, one per line, as
  ``f32[3] from the argument x`` / ``f32[3] output of sin from file:line:col (f)``."""
  for aval, src in saved_residuals(f, *args, **kwargs):
    print(f"{aval.str_short(short_dtypes=True)} {src}")


__all__ = ["checkpoint", "remat", "checkpoint_policies", "checkpoint_name", "Saveable",
           "Recompute", "Offloadable",
           "print_saved_residuals", "saved_residuals"]
