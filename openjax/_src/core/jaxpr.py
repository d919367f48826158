"""The jaxpr IR: ``Var``, ``Literal``, ``JaxprEqn``, ``Jaxpr``, ``ClosedJaxpr``,
the type checker, dead-code elimination and the printer (JAX's textual form);
the evaluator is ``program.py``."""
from __future__ import annotations

import contextlib

import itertools
import re
import weakref
from collections import Counter, deque
from typing import Any, Callable, Sequence

import numpy as np

from openjax._src.config import config
from openjax._src.core.pretty import Doc, brk, concat, group, join, nest, nil, text
from openjax._src.core.avals import ShapedArray
from openjax._src.core.array import array_of
from openjax._src.core.trace import get_aval

_var_ids = itertools.count()


class Var:
  """A jaxpr variable: an abstract value and an identity (names are given only
  when printing)."""
  __slots__ = ("aval", "count")

  def __init__(self, aval: ShapedArray):
    self.aval = aval
    self.count = next(_var_ids)

  def __repr__(self):
    return f"Var(id={self.count}):{self.aval.str_short()}"


class DropVar(Var):
  """An output that is never used, printed as ``_``."""
  __slots__ = ()

  def __repr__(self):
    return "_"


class Literal:
  """A scalar constant inlined into an equation, printed as ``2.0:f32[]``."""
  __slots__ = ("val", "aval", "_operand")

  def __init__(self, val: Any, aval: ShapedArray):
    self.val = val
    self.aval = aval
    self._operand = None

  @property
  def operand(self):
    """The value to bind when evaluating: an Array keeping the weak type."""
    op = self._operand
    if op is None:
      op = self._operand = array_of(np.array(self.val, self.aval.dtype), self.aval)
    return op

  def __repr__(self):
    return f"Literal({self.val})"

  def pretty(self) -> str:
    if np.shape(self.val):
      s = "[...]"
    else:
      s = str(np.asarray(self.val).item())
    return f"{s}:{self.aval.str_short()}"


Atom = Var | Literal


class JaxprEqn:
  """``outvars = primitive[params] invars``."""
  __slots__ = ("invars", "outvars", "primitive", "params")

  def __init__(self, invars, outvars, primitive, params):
    self.invars = list(invars)
    self.outvars = list(outvars)
    self.primitive = primitive
    self.params = dict(params)

  def replace(self, invars=None, outvars=None, primitive=None, params=None):
    return JaxprEqn(self.invars if invars is None else invars,
                    self.outvars if outvars is None else outvars,
                    self.primitive if primitive is None else primitive,
                    self.params if params is None else params)

  def __repr__(self):
    return str(pp_eqn(self, PpContext()).format())


class Jaxpr:
  """A typed first-order program: constvars, invars, equations, outvars."""
  __slots__ = ("constvars", "invars", "outvars", "eqns", "debug_info", "__weakref__")

  def __init__(self, constvars, invars, outvars, eqns, debug_info=None):
    self.constvars = list(constvars)
    self.invars = list(invars)
    self.outvars = list(outvars)
    self.eqns = list(eqns)
    self.debug_info = debug_info

  @property
  def in_avals(self):
    return [v.aval for v in self.invars]

  @property
  def out_avals(self):
    return [v.aval for v in self.outvars]

  def replace(self, **kw):
    args = dict(constvars=self.constvars, invars=self.invars, outvars=self.outvars,
                eqns=self.eqns, debug_info=self.debug_info)
    args.update(kw)
    return Jaxpr(**args)

  def pretty_print(self, width: int = 80) -> str:
    return pp_toplevel_jaxpr(self).format(width)

  def __str__(self):
    return self.pretty_print()

  __repr__ = __str__


class ClosedJaxpr:
  """A jaxpr together with the values of its constvars (what ``make_jaxpr``
  returns)."""
  __slots__ = ("jaxpr", "consts", "__weakref__")

  def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any]):
    assert len(consts) == len(jaxpr.constvars)
    self.jaxpr = jaxpr
    self.consts = list(consts)

  @property
  def in_avals(self):
    return self.jaxpr.in_avals

  @property
  def out_avals(self):
    return self.jaxpr.out_avals

  @property
  def eqns(self):
    return self.jaxpr.eqns

  @property
  def literals(self):
    return self.consts

  def map_jaxpr(self, f: Callable[[Jaxpr], Jaxpr]) -> "ClosedJaxpr":
    return ClosedJaxpr(f(self.jaxpr), self.consts)

  def pretty_print(self, width: int = 80) -> str:
    return self.jaxpr.pretty_print(width)

  def __str__(self):
    return self.pretty_print()

  __repr__ = __str__


# ------------------------------------------------------------------ checking
class JaxprTypeError(TypeError):
  """A jaxpr is ill-typed (a variable used before definition, a type mismatch)."""


def _avals_match(a: ShapedArray, b: ShapedArray) -> bool:
  return a.shape == b.shape and a.dtype == b.dtype


def _check_consts(closed: ClosedJaxpr) -> None:
  for v, c in zip(closed.jaxpr.constvars, closed.consts):
    aval = get_aval(c)
    if not _avals_match(v.aval, aval):
      raise JaxprTypeError(f"constvar {v} typed {v.aval.str_short()} holds a constant of "
                           f"type {aval.str_short()}")


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
  """Type-check a jaxpr: every variable defined once before use, every
  equation's output types equal its primitive's abstract evaluation, and a
  closed jaxpr's constants typed as its constvars."""
  if isinstance(jaxpr, ClosedJaxpr):
    _check_consts(jaxpr)
    jaxpr = jaxpr.jaxpr
  defined: set[Var] = set()

  def define(v: Var, where: str):
    if isinstance(v, DropVar):
      return
    if v in defined:
      raise JaxprTypeError(f"Variable {v} defined twice ({where})")
    defined.add(v)

  def read(a, where: str):
    if isinstance(a, Literal):
      return
    if a not in defined:
      raise JaxprTypeError(f"Variable {a} used before it is defined ({where})")

  for v in jaxpr.constvars:
    define(v, "constvar")
  for v in jaxpr.invars:
    define(v, "invar")
  for i, eqn in enumerate(jaxpr.eqns):
    where = f"equation {i}: {eqn.primitive.name}"
    for a in eqn.invars:
      read(a, where)
    # A primitive binding names for its sub-programs (shard_map's mesh axes)
    # says so with ``sub_jaxpr_env(params)``, a context to check them in.
    sub_env = getattr(eqn.primitive, "sub_jaxpr_env", None)
    with sub_env(eqn.params) if sub_env is not None else contextlib.nullcontext():
      for sub in jaxprs_in_params(eqn.params):
        check_jaxpr(sub)
    abstract_eval = eqn.primitive.abstract_eval
    if abstract_eval is not None:
      out_avals = abstract_eval(*(a.aval for a in eqn.invars), **eqn.params)
      if len(out_avals) != len(eqn.outvars):
        raise JaxprTypeError(
            f"{where}: {len(eqn.outvars)} outputs bound, primitive gives {len(out_avals)}")
      for v, a in zip(eqn.outvars, out_avals):
        if not _avals_match(v.aval, a):
          raise JaxprTypeError(
              f"{where}: output typed {v.aval.str_short()} but the primitive "
              f"produces {a.str_short()}")
    for v in eqn.outvars:
      define(v, where)
  for a in jaxpr.outvars:
    read(a, "outvars")


def check_transformed(jaxpr: Jaxpr | ClosedJaxpr, transformation: str) -> None:
  """``check_jaxpr`` on what ``transformation`` built, when ``jax_enable_checks``
  is on (the test suite turns it on): an ill-typed jaxpr fails where it is
  made, naming the transformation, instead of later in whatever runs it."""
  if not config.jax_enable_checks:
    return
  try:
    check_jaxpr(jaxpr)
  except JaxprTypeError as err:
    raise JaxprTypeError(f"{transformation} built an ill-typed jaxpr: {err}\n{jaxpr}") from None


# ------------------------------------------------------------- effects
_jaxpr_effects: "weakref.WeakKeyDictionary[Jaxpr, frozenset]" = weakref.WeakKeyDictionary()


def eqn_effects(eqn: JaxprEqn) -> frozenset:
  """The side effects of an equation: its primitive's, or those of the
  sub-jaxprs a higher-order primitive holds."""
  rule = eqn.primitive.effects
  if rule is not None:
    return rule(**eqn.params)
  subs = jaxprs_in_params(eqn.params)
  if not subs:
    return frozenset()
  return frozenset().union(*(jaxpr_effects(j) for j in subs))


def jaxpr_effects(jaxpr: Jaxpr | ClosedJaxpr) -> frozenset:
  """Every side effect of ``jaxpr``'s equations (cached per jaxpr)."""
  if isinstance(jaxpr, ClosedJaxpr):
    jaxpr = jaxpr.jaxpr
  hit = _jaxpr_effects.get(jaxpr)
  if hit is None:
    hit = frozenset().union(*(eqn_effects(e) for e in jaxpr.eqns)) if jaxpr.eqns else frozenset()
    _jaxpr_effects[jaxpr] = hit
  return hit


# ----------------------------------------------------------- dead code
def live_eqns(eqns, outvars) -> list:
  """The equations some of ``outvars`` depend on, and those with side
  effects (a print whose result nobody reads still prints), in order."""
  live = {a for a in outvars if isinstance(a, Var)}
  kept = []
  for eqn in reversed(eqns):
    if any(v in live for v in eqn.outvars) or eqn_effects(eqn):
      kept.append(eqn)
      live.update(a for a in eqn.invars if isinstance(a, Var))
  kept.reverse()
  return kept


def dce_jaxpr(jaxpr: Jaxpr, used_outputs=None) -> Jaxpr:
  """``jaxpr`` without dead equations (and without the outputs
  ``used_outputs`` marks False); ``jaxpr`` itself when nothing is dropped."""
  outvars = jaxpr.outvars if used_outputs is None else [
      a for a, u in zip(jaxpr.outvars, used_outputs) if u]
  kept = live_eqns(jaxpr.eqns, outvars)
  if len(kept) == len(jaxpr.eqns) and len(outvars) == len(jaxpr.outvars):
    return jaxpr
  pruned = jaxpr.replace(outvars=outvars, eqns=kept)
  check_transformed(pruned, "dce_jaxpr")
  return pruned


def jaxprs_in_params(params: dict) -> list[Jaxpr]:
  """Sub-jaxprs held by a higher-order primitive's parameters."""
  out = []
  for v in params.values():
    vs = v if isinstance(v, tuple) else (v,)
    for x in vs:
      if isinstance(x, ClosedJaxpr):
        out.append(x.jaxpr)
      elif isinstance(x, Jaxpr):
        out.append(x)
  return out


# ------------------------------------------------------------------ printing
def _alpha_name(n: int) -> str:
  s = ""
  while not s or n:
    n, i = divmod(n, 26)
    s = chr(97 + i) + s
  return s


class PpContext:
  """Globally unique variable names across nested jaxprs, assigned in printing
  order; shared sub-jaxprs are printed once at the top."""

  def __init__(self):
    self.names: dict[Var, str] = {}
    self.shared_jaxprs: dict[int, str] = {}
    self.shared_names: set[str] = set()
    self._counter = 0

  def name(self, v: Var) -> str:
    n = self.names.get(v)
    if n is None:
      while True:
        n = _alpha_name(self._counter)
        self._counter += 1
        if n not in self.shared_names:
          break
      self.names[v] = n
    return n

  def suggest_same_names(self, for_vars, like_vars) -> None:
    """Give inner-jaxpr variables the names of the outer atoms they alias."""
    if len(for_vars) != len(like_vars):
      return
    used = set()
    for f, l in zip(for_vars, like_vars):
      if (isinstance(l, Var) and l not in used and isinstance(f, Var)
          and not isinstance(f, DropVar) and f not in self.names):
        used.add(l)
        self.names[f] = self.name(l)


def pp_atom(a, ctx: PpContext) -> str:
  if isinstance(a, Literal):
    return a.pretty()
  if isinstance(a, DropVar):
    return "_"
  return ctx.name(a)


def pp_vars(vs, ctx: PpContext, *, separator: str = "", print_shapes: bool = False) -> Doc:
  docs = [text(pp_atom(v, ctx) + (":" + v.aval.str_short() if print_shapes else ""))
          for v in vs]
  return nest(2, group(join(text(separator) + group(brk()), docs)))


def _pp_param_value(v: Any, ctx: PpContext) -> Doc:
  if isinstance(v, tuple) and v and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in v):
    return pp_jaxprs([j.jaxpr if isinstance(j, ClosedJaxpr) else j for j in v], ctx)
  if isinstance(v, ClosedJaxpr):
    return pp_jaxpr(v.jaxpr, ctx)
  if isinstance(v, Jaxpr):
    return pp_jaxpr(v, ctx)
  if isinstance(v, frozenset):
    return text("frozenset({" + ", ".join(repr(e) for e in sorted(v)) + "})")
  s = re.sub(r" at 0x([0-9a-fA-F]+)", lambda m: " at 0x" + "X" * len(m.group(1)), str(v))
  return text(s)


def pp_kv_pairs(items, ctx: PpContext) -> Doc:
  if not items:
    return nil
  pairs = [text(f"{k}=") + _pp_param_value(v, ctx) for k, v in items]
  return group(concat([
      nest(2, concat([text("["), brk(""), join(brk(), pairs)])),
      brk(""), text("]")]))


def pp_eqn(eqn: JaxprEqn, ctx: PpContext, params: dict | None = None,
           use_rule: bool = True) -> Doc:
  """An equation as ``c:f32[] = mul b 2.0:f32[]``. A primitive's ``pp_rule``
  may hide or reorder parameters and calls back here with ``params``."""
  if use_rule and params is None and eqn.primitive.pp_rule is not None:
    return eqn.primitive.pp_rule(eqn, ctx)
  if params is None:
    items = [(k, eqn.params[k]) for k in sorted(eqn.params)]
  else:  # a rule's chosen parameters, in the rule's order
    items = list(params.items())
  lhs = pp_vars(eqn.outvars, ctx, print_shapes=True)
  rhs = [text(eqn.primitive.name), pp_kv_pairs(items, ctx),
         text(" ") + pp_vars(eqn.invars, ctx)]
  if eqn.outvars:
    return concat([lhs, text(" = "), *rhs])
  return concat(rhs)


def _pp_skeleton(jaxpr: Jaxpr, ctx: PpContext) -> Doc:
  constvars = pp_vars(jaxpr.constvars, ctx, print_shapes=True)
  invars = pp_vars(jaxpr.invars, ctx, print_shapes=True)
  eqns = join(brk("; "), [pp_eqn(e, ctx) for e in jaxpr.eqns])
  outvars = concat([text("("), pp_vars(jaxpr.outvars, ctx, separator=","),
                    text(")" if len(jaxpr.outvars) != 1 else ",)")])
  return group(nest(2, concat([
      text("{ "), text("lambda "), constvars, text("; "), invars,
      text(". "), text("let"), nest(2, brk() + eqns), brk(),
      text("in "), outvars])) + text(" }"))


def pp_jaxpr(jaxpr: Jaxpr, ctx: PpContext) -> Doc:
  name = ctx.shared_jaxprs.get(id(jaxpr))
  if name is not None:
    return text(name)
  return _pp_skeleton(jaxpr, ctx)


def pp_jaxprs(jaxprs, ctx: PpContext) -> Doc:
  return group(concat([
      nest(2, concat([text("("), brk(""),
                      join(brk(), [pp_jaxpr(j, ctx) for j in jaxprs])])),
      brk(""), text(")")]))


def pp_toplevel_jaxpr(top: Jaxpr) -> Doc:
  """The whole printout: sub-jaxprs used more than once (or longer than ten
  equations) are printed first as ``let name = { ... } in``."""
  ctx = PpContext()
  # Results of top-level equations that nothing uses print as ``_`` (as JAX).
  used = {a for a in top.outvars if isinstance(a, Var)}
  for eqn in reversed(top.eqns):
    for v in eqn.outvars:
      if v not in used:
        ctx.names[v] = "_"
    used.update(a for a in eqn.invars if isinstance(a, Var))
  counts: Counter = Counter()
  by_id: dict[int, Jaxpr] = {}
  names: dict[int, str] = {}
  queue = deque([top])
  while queue:
    j = queue.popleft()
    by_id[id(j)] = j
    counts[id(j)] += 1
    if j is not top and len(j.eqns) > 10:
      counts[id(j)] += 1
    for eqn in j.eqns:
      name = eqn.params.get("name")
      subs = jaxprs_in_params(eqn.params)
      if isinstance(name, str):
        for s in subs:
          names.setdefault(id(s), name.strip("<>"))
      queue.extend(subs)
  name_counts: Counter = Counter()
  shared = []
  for jid, c in counts.items():
    if c == 1 or jid == id(top):
      continue
    name = names.get(jid, "jaxpr")
    if name_counts[name] > 0:
      n = name_counts[name]
      name_counts[name] += 1
      name = f"{name}{n}"
    name_counts[name] += 1
    ctx.shared_names.add(name)
    shared.append((name, by_id[jid]))
  for name, j in shared:
    ctx.shared_jaxprs[id(j)] = name
  docs = []
  for name, j in shared:
    docs.append(concat([text("let "), text(name), text(" = "),
                        _pp_skeleton(j, ctx), text(" in"), brk()]))
  docs.append(pp_jaxpr(top, ctx))
  return concat(docs)
