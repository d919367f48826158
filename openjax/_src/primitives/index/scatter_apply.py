"""Eager evaluation of a scatter whose combiner is a traced jaxpr
(``x.at[i].apply(f)``, ``lax.scatter_apply``): ``f`` applied at every index
vector, repeated indices applying it repeatedly, in order of occurrence.

The combiner is traced on scalars. Eagerly it runs on vectors: the scalar
jaxpr retyped to vectors of one length (each equation's abstract evaluation
redone on the vector operands), compiled once per length as a program of
NumPy kernels (``program_of(...).runner``). Repeated indices are applied by
rank: the k-th application at each position is one vector call over the
positions repeated at least k times (positions sorted by their count, so
those are a prefix); vector lengths are rounded up to powers of two, so a
call needs at most log2(positions) programs, made once per jaxpr. Where the
retyped jaxpr does not type (a combiner whose parameters fix a scalar shape:
``broadcast_in_dim`` to a shape, a ``dot_general``), the scalar program runs
element by element.
"""
from __future__ import annotations

import weakref

import numpy as np

from openjax._src.config import config
from openjax._src.core import ClosedJaxpr
from openjax._src.core.avals import ShapedArray
from openjax._src.core.jaxpr import DropVar, Jaxpr, JaxprEqn, Literal, Var
from openjax._src.core.program import program_of
from openjax._src.primitives.base.convert import convert_numpy


def _retyped(jaxpr: Jaxpr, n: int) -> Jaxpr:
  """``jaxpr`` (a combiner of scalars) with its inputs vectors of ``n``
  elements: the equations depending on them re-evaluated abstractly on the
  vector types. Raises (TypeError, ValueError) where an equation does not
  type on vectors or gives other than an ``n``-vector."""
  renamed: dict = {}
  varying: set = set()
  invars = []
  for v in jaxpr.invars:
    a = v.aval
    if a.shape != ():
      raise TypeError("a combiner of scalars")
    nv = Var(ShapedArray((n,), a.dtype, a.weak_type))
    renamed[v] = nv
    varying.add(nv)
    invars.append(nv)

  def atom(a):
    return a if type(a) is Literal else renamed.get(a, a)

  eqns = []
  for eqn in jaxpr.eqns:
    ins = [atom(a) for a in eqn.invars]
    if not any(type(a) is not Literal and a in varying for a in ins):
      eqns.append(eqn)   # constant in the inputs: as traced
      continue
    out_avals = eqn.primitive.rule("abstract_eval")(*[a.aval for a in ins], **eqn.params)
    outs = []
    for v, a in zip(eqn.outvars, out_avals):
      if type(a) is not ShapedArray or a.shape != (n,):
        raise ValueError("an equation that does not map elements to elements")
      nv = DropVar(a) if type(v) is DropVar else Var(a)
      renamed[v] = nv
      varying.add(nv)
      outs.append(nv)
    eqns.append(JaxprEqn(ins, outs, eqn.primitive, eqn.params))
  return Jaxpr(jaxpr.constvars, invars, [atom(a) for a in jaxpr.outvars], eqns)


class _Combiner:
  """A combiner jaxpr's runners: the scalar one and one per vector length
  (None where the retyped jaxpr does not type), made for one setting of the
  flags (the runners read the debug flags when made)."""
  __slots__ = ("jaxpr", "consts", "state", "scalar", "vectors", "uses_update", "__weakref__")

  def __init__(self, jaxpr: Jaxpr, consts, state):
    self.jaxpr, self.consts, self.state = jaxpr, list(consts), state
    self.scalar = program_of(jaxpr).runner(self.consts)
    self.vectors: dict = {}
    used = {a for eqn in jaxpr.eqns for a in eqn.invars if type(a) is not Literal}
    used.update(a for a in jaxpr.outvars if type(a) is not Literal)
    self.uses_update = len(jaxpr.invars) > 1 and jaxpr.invars[1] in used

  def vector(self, n: int):
    """The runner of ``n``-vectors, or None."""
    run = self.vectors.get(n, self)
    if run is self:
      try:
        run = program_of(_retyped(self.jaxpr, n)).runner(self.consts)
      except (TypeError, ValueError):
        run = None
      self.vectors[n] = run
    return run


_COMBINERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def combiner(update_jaxpr, update_consts) -> _Combiner:
  """The runners of a scatter's ``update_jaxpr`` (a ClosedJaxpr, or a Jaxpr
  with ``update_consts``), kept per jaxpr object: ``.at[].apply`` passes the
  same traced combiner on every call of the same function."""
  if isinstance(update_jaxpr, ClosedJaxpr):
    owner, jaxpr, consts = update_jaxpr, update_jaxpr.jaxpr, update_jaxpr.consts
  else:
    owner, jaxpr, consts = update_jaxpr, update_jaxpr, update_consts
  state = config.state_key()
  c = _COMBINERS.get(owner)
  if c is None or c.state != state or (owner is jaxpr and (
      len(c.consts) != len(consts) or any(a is not b for a, b in zip(c.consts, consts)))):
    c = _COMBINERS[owner] = _Combiner(jaxpr, consts, state)
  return c


def _pow2(k: int) -> int:
  return 1 << (k - 1).bit_length()


# Up to this many index vectors, their grouping by position is made with
# Python lists (~2 us for a few; NumPy's sorts and searches cost ~1-6 us a
# call on small arrays).
_FEW = 64


def _groups_few(lin: np.ndarray):
  """``_groups``' result for a few index vectors."""
  lst = lin.tolist()
  groups: dict = {}
  for j, p in enumerate(lst):
    g = groups.get(p)
    if g is None:
      groups[p] = [j]
    else:
      g.append(j)
  if len(groups) == len(lst):
    return lin, [1], None, None
  runs = sorted(groups.values(), key=len, reverse=True)   # stable: ties in first-seen order
  counts = [len(g) for g in runs]
  order = [j for g in runs for j in g]
  starts, at = [], 0
  for k in counts:
    starts.append(at)
    at += k
  return np.array([lst[g[0]] for g in runs], lin.dtype), counts, order, starts


def _groups(lin: np.ndarray):
  """``(positions, counts, order, starts)``: the distinct positions of
  ``lin``, the most repeated first, their counts (descending, a list),
  and the occurrences grouped by position in that order, each group in
  order of occurrence (``order[starts[j] + r]`` is position j's (r+1)-th
  occurrence); ``order`` None when no position repeats."""
  n = lin.size
  if n <= _FEW:
    return _groups_few(lin)
  order = np.argsort(lin, kind="stable")
  ordered = lin[order]
  first = np.empty(n, bool)
  first[0] = True
  np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
  starts = np.flatnonzero(first)
  if starts.size == n:
    return lin, [1], None, None
  ends = np.empty_like(starts)
  ends[:-1] = starts[1:]
  ends[-1] = n
  counts = ends - starts
  by_count = np.argsort(-counts, kind="stable")
  starts, counts = starts[by_count], counts[by_count]
  return ordered[starts], counts.tolist(), order, starts


def apply_in_order(c: _Combiner, flat: np.ndarray, lin: np.ndarray, vals: np.ndarray) -> None:
  """``flat[lin[j]] = f(flat[lin[j]], vals[j])`` for j in order (``vals``
  0-d: one update for all), ``f`` the combiner ``c``; each result cast to
  ``flat``'s dtype before the next application."""
  n = lin.size
  if n == 0:
    return
  dtype = flat.dtype
  positions, counts, order, starts = _groups(lin)
  m = positions.size
  size = _pow2(m)
  cur = np.empty(size, dtype)
  cur[:m] = flat[positions]
  cur[m:] = cur[0]   # a valid element in the padding: its results are dropped
  upd = None
  if c.uses_update:
    if not vals.ndim:
      upd = np.full(size, vals, vals.dtype)
    elif order is None:
      upd = np.empty(size, vals.dtype)
      upd[:m] = vals
      upd[m:] = vals[0]
    else:   # the r-th application's updates: vals[order[at + r]]
      grouped = vals[np.asarray(order)]
      at = np.zeros(size, np.int64)
      at[:m] = starts
  k = m
  for r in range(counts[0]):
    while order is not None and counts[k - 1] <= r:   # done positions: a shorter prefix
      k -= 1
    width = min(_pow2(k), size)
    old = cur[:width]
    if upd is not None:
      u = upd[:width]
    elif c.uses_update:
      u = grouped[np.minimum(at[:width] + r, n - 1)]
    else:
      u = old
    run = c.vector(width)
    if run is not None:
      new = run((old, u))[0]
    else:
      new = np.array([np.asarray(c.scalar((o, w))[0]) for o, w in zip(old[:k], u[:k])])
    if new.shape == ():
      new = np.broadcast_to(new, (width,))
    cur[:k] = new[:k] if new.dtype == dtype else convert_numpy(np.asarray(new[:k]), dtype)
  flat[positions] = cur[:m]
