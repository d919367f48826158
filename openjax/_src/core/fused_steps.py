"""Fused kernel steps of a ``Program``: a few equation patterns of library
programs whose NumPy kernels take several passes over a large operand where
one NumPy call gives the same bits. ``fused_steps(program)`` finds them; the
program's kernel steps then run the fused kernel at the pattern's last
equation and drop the others (their results feed nothing else). The jaxpr is
unchanged: ``make_jaxpr`` and compiled calls see JAX's equations.

* ``reduce_max(select_n(ne(x, x), x, broadcast(-inf)))`` (``nanmax``'s NaNs
  replaced by the identity, then the max): ``np.fmax.reduce(x, initial=-inf)``
  (NaN-ignoring; -inf where all are NaN, as the select gives; NumPy's
  nanmax bits, which of +-0 may differ from the select's max); likewise
  ``reduce_min`` with ``+inf`` and ``np.fmin``. 1e6 float32: ~1.5 -> ~0.3 ms.
* ``min(hi, max(lo, x))`` of 0-d bounds (``jnp.clip``): ``np.clip(x, lo,
  hi)`` (see ``_clip``); 1e6 float32 ~2-3 -> ~0.75 ms (loaded machine).
* ``reduce_and(ne(x, x))`` (all NaN): NaN of ``np.fmax.reduce(x)`` (one
  pass, no bool array).
* ``reduce_sum(convert_element_type(b, int))`` of a bool ``b`` (a count):
  ``np.count_nonzero(b)`` cast to the sum's integer type (the same wrapped
  count), or along some axes the sum of ``b``'s bytes in that type. When
  ``b`` is ``ne(y, 0)`` (``count_nonzero``'s comparison; for bool ``y``
  ``ne(y, False)`` is ``y``), ``np.count_nonzero(y)`` (NumPy counts NaN as
  nonzero, as ``ne(NaN, 0)``). 1e6 bool: ~430 -> ~50 us.
* ``reduce_sum(convert(less(broadcast(a), broadcast(v))), axes=(0,))``, the
  count of a 1-D ``a``'s elements before each ``v`` in the sort order
  (``searchsorted``'s compare-all count: ``lt``/``le`` of integers, or of
  floats the NaN-largest forms ``not(le(v, a) | ne(a, a))`` and ``le(a, v) |
  ne(v, v)``): ``np.searchsorted(np.sort(a), v)`` (NumPy sorts and searches
  NaN last with -0.0 == 0.0: the same counts, for any ``a``), O((n + m)
  log n) with no n x m arrays; the kernel reads two operands. Measured on a
  loaded machine: 7 x 6 elements 29-48 -> 12-14 us, 126 x 1944
  (method='compare_all') 929-997 -> 149-163 us.
* ``jnp.gcd``'s ``while`` loop (Euclid's steps on unsigned integers until
  every divisor is 0): ``np.gcd`` (see ``_euclid_loop``).
"""
from __future__ import annotations

import numpy as np

from openjax._src.core.fused_templates import match_templates
from openjax._src.core.jaxpr import Literal

__all__ = ["add_pattern", "fused_releases", "fused_steps", "set_key_argsort",
           "SORTED_COUNT_DTYPES"]

# dtypes whose np.fmax/np.fmin reductions are vectorised (float16's ran at
# ~3x np.maximum's time: not fused, nor the bfloat16 family, whose kernels go
# through float32)
_FLOATS = frozenset(np.dtype(t) for t in (np.float32, np.float64))
_COUNTS = frozenset(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8,
                                          np.uint16, np.uint32, np.uint64))
_CHOOSERS = {"reduce_max": (np.fmax, -np.inf), "reduce_min": (np.fmin, np.inf)}


def fused_releases(fused: dict, reads: list, live: set) -> tuple[dict, dict]:
  """(owner, held) of ``fused_steps``' result for a program whose equation
  k reads slots ``reads[k]``: ``owner`` maps each dropped equation to its
  fused step, which releases what the dropped one would have; ``held`` maps
  each slot a fused step reads to the last fused step reading it (its
  pattern's first steps must not release it). Adds to ``live`` the fused
  steps whose returned results (``out_steps``) a live step needs."""
  owner = {j: k for k, (_, _, gone, _) in fused.items() for j in gone}
  held: dict = {}
  for k, (_, operands, _, _) in fused.items():
    for j, i in operands:
      held[reads[j][i]] = max(k, held.get(reads[j][i], -1))
  live |= {k for k, (_, _, _, out_steps) in fused.items()
           if out_steps and live.intersection(j for j, _ in out_steps)}
  return owner, held


def fused_steps(eqns: list, out_vars: list) -> dict:
  """{index of a pattern's last equation: (kernel, operands, dropped,
  out_steps)}: the fused kernel, which reads operand i of equation k for
  each (k, i) of ``operands``, the indices of the equations it makes
  unneeded (all before it), and ``out_steps``: None when the kernel
  returns the last equation's one result, else ``(j, r)`` for each result
  it returns, in order: result r of equation j (``fused_templates``' frexp,
  ``add_pattern``'s argsort)."""
  producer, uses = {}, {}
  for k, eqn in enumerate(eqns):
    for v in eqn.outvars:
      producer[v] = k
    for a in eqn.invars:
      if type(a) is not Literal:
        uses[a] = uses.get(a, 0) + 1
  for a in out_vars:
    if type(a) is not Literal:
      uses[a] = uses.get(a, 0) + 2   # never an intermediate to drop

  def only_use(v, name: str):
    """The equation making ``v`` when it is ``name``'s and ``v`` has no
    other reader, else None."""
    if type(v) is Literal or uses.get(v) != 1 or v not in producer:
      return None
    k = producer[v]
    return k if eqns[k].primitive.name == name and len(eqns[k].outvars) == 1 else None

  fused, dropped = {}, set()
  for k, eqn in enumerate(eqns):
    name = eqn.primitive.name
    if name in _CHOOSERS:
      found = _nan_chooser(eqn, eqns, only_use)
    elif name == "reduce_sum":
      found = (_sorted_count(eqn, eqns, only_use, uses, producer)
               or _count(eqn, eqns, only_use))
    elif name == "reduce_and":
      found = _all_nan(eqn, eqns, only_use)
    elif name == "min":
      found = _clip(k, eqn, eqns, only_use)
    elif name == "while":
      found = _euclid_loop(k, eqn, uses)
    elif name in _ADDED:
      found = _added_pattern(k, eqn, eqns, only_use, uses)
    else:
      continue
    if found is not None and not (found[2] & dropped):
      kernel, operands, gone, *out_steps = found
      fused[k] = (kernel, operands, gone, out_steps[0] if out_steps else None)
      dropped |= gone
  for k, entry in match_templates(eqns, producer, out_vars).items():
    if k not in fused and k not in dropped and not (entry[2] & dropped):
      kernel, operands, gone, out_steps = entry
      fused[k] = (kernel, operands, gone,
                  None if out_steps is None else tuple((j, 0) for j in out_steps))
      dropped |= entry[2]
  return fused


def _reduced_from(eqn, name: str, only_use):
  """(the equation making the reduction ``eqn``'s operand, its axes) when
  that equation is ``name``'s with no other reader and the reduction runs
  over at least one axis, none of them empty; else None."""
  operand, = eqn.invars
  axes = tuple(eqn.params["axes"])
  k = only_use(operand, name)
  if k is None or not axes or 0 in (operand.aval.shape[a] for a in axes):
    return None
  return k, axes


def _nan_chooser(eqn, eqns, only_use):
  found = _reduced_from(eqn, "select_n", only_use)
  if found is None:
    return None
  k_sel, axes = found
  which, x, filler = eqns[k_sel].invars
  if type(x) is Literal or x.aval.dtype not in _FLOATS:
    return None
  k_ne, k_fill = only_use(which, "ne"), only_use(filler, "broadcast_in_dim")
  if k_ne is None or k_fill is None or tuple(eqns[k_ne].invars) != (x, x):
    return None
  value = eqns[k_fill].invars[0]
  ufunc, identity = _CHOOSERS[eqn.primitive.name]
  if type(value) is not Literal or np.ndim(value.val) or value.val != identity:
    return None
  dt = x.aval.dtype

  def kernel(v):
    return np.asarray(ufunc.reduce(v, axis=axes, initial=identity), dt)
  return kernel, ((k_sel, 1),), {k_sel, k_ne, k_fill}


def _count(eqn, eqns, only_use):
  converted, = eqn.invars
  axes = tuple(eqn.params["axes"])
  k_conv = only_use(converted, "convert_element_type")
  dt = converted.aval.dtype
  if k_conv is None or dt not in _COUNTS:
    return None
  flags, = eqns[k_conv].invars
  if type(flags) is Literal or flags.aval.dtype != np.bool_:
    return None
  gone, operand = {k_conv}, ((k_conv, 0),)
  k_ne = only_use(flags, "ne")
  if k_ne is not None:
    y, zero = eqns[k_ne].invars
    if (type(y) is not Literal and type(zero) is Literal and not np.ndim(zero.val)
        and zero.val == 0 and y.aval.dtype.kind in "biuf"):
      flags, operand = y, ((k_ne, 0),)
      gone.add(k_ne)
  if sorted(axes) == list(range(len(flags.aval.shape))):
    def kernel(v):
      return np.asarray(np.count_nonzero(v)).astype(dt)
  else:
    # np.count_nonzero along axes is slower than a sum; the flags' bytes
    # summed in the result's type (the same wrapped count) are faster.
    boolean = flags.aval.dtype == np.bool_

    def kernel(v):
      ones = (v if boolean else np.not_equal(v, 0)).view(np.uint8)
      return np.add.reduce(ones, axis=axes, dtype=dt)
  return kernel, operand, gone


def _all_nan(eqn, eqns, only_use):
  found = _reduced_from(eqn, "ne", only_use)
  if found is None:
    return None
  k_ne, axes = found
  x, y = eqns[k_ne].invars
  if x is not y or type(x) is Literal or x.aval.dtype not in _FLOATS:
    return None

  def kernel(v):
    # NaN-ignoring max without an initial value: NaN only where all are NaN
    return np.isnan(np.fmax.reduce(v, axis=axes))
  return kernel, ((k_ne, 0),), {k_ne}


_CLIP_FLOATS = frozenset(np.dtype(t) for t in (np.float32, np.float64))


def _clip(k, eqn, eqns, only_use):
  """``min(hi, max(lo, x))`` of 0-d ``lo``/``hi`` (``jnp.clip``): np.clip's
  one pass (np.maximum/np.minimum against a 0-d operand run a slow loop,
  1e6 float32 ~1.2 ms each), the same bits: ties give x as both of JAX's
  steps give their second operand, a NaN x stays itself; NaN bounds take
  the two steps."""
  hi, m = eqn.invars
  k_max = only_use(m, "max")
  if k_max is None or type(hi) is Literal or hi.aval.shape:
    return None
  lo, x = eqns[k_max].invars
  if (type(lo) is Literal or type(x) is Literal or lo.aval.shape or not x.aval.shape
      or x.aval.dtype not in _CLIP_FLOATS):
    return None

  def kernel(lo_, x_, hi_):
    if lo_ != lo_ or hi_ != hi_:
      return np.minimum(hi_, np.maximum(lo_, x_))
    return np.clip(x_, lo_, hi_)
  return kernel, ((k_max, 0), (k_max, 1), (k, 0)), {k_max}


def _steps_of(closed, n_out: int) -> list | None:
  """``[(primitive name, invars)]`` of a closed sub-jaxpr without constants
  whose outputs are its last ``n_out`` equations' first results, in order;
  None for any other."""
  j = closed.jaxpr
  if closed.consts or j.constvars or len(j.eqns) < n_out:
    return None
  if [e.outvars[0] for e in j.eqns[len(j.eqns) - n_out:]] != list(j.outvars):
    return None
  return [(e.primitive.name, list(e.invars)) for e in j.eqns]


def _euclid_loop(k, eqn, uses):
  """``jnp.gcd``'s loop: ``while any(b != 0): a, b = max(b, a % b),
  min(b, a % b)`` on unsigned integers (JAX's Euclid, every element until
  all are done; the remainder by 0 is the dividend): ``np.gcd(a, b)`` and
  zeros, the same integers. One NumPy call where each trip took ~5 kernel
  calls (10 elements: ~6 trips, 150-230 us interpreted or compiled)."""
  params = eqn.params
  if params["body_nconsts"] or params["cond_nconsts"] or len(eqn.invars) != 2:
    return None
  aval, other = eqn.invars[0].aval, eqn.invars[1].aval
  if aval.dtype.kind != "u" or (other.shape, other.dtype) != (aval.shape, aval.dtype):
    return None
  body = _steps_of(params["body_jaxpr"], 2)
  if body is None or len(body) != 3:
    return None
  m, n = params["body_jaxpr"].jaxpr.invars
  o = params["body_jaxpr"].jaxpr.eqns[0].outvars[0]
  if body != [("rem", [m, n]), ("max", [n, o]), ("min", [n, o])]:
    return None
  cond = _steps_of(params["cond_jaxpr"], 1)
  if cond is None or len(cond) != 2:
    return None
  cond_eqns = params["cond_jaxpr"].jaxpr.eqns
  (ne, (s, zero)), (reduce_or, flags) = cond
  if (ne != "ne" or s is not params["cond_jaxpr"].jaxpr.invars[1] or type(zero) is not Literal
      or np.ndim(zero.val) or zero.val != 0 or reduce_or != "reduce_or"
      or flags != cond_eqns[0].outvars
      or sorted(cond_eqns[1].params["axes"]) != list(range(len(aval.shape)))):
    return None
  both = bool(uses.get(eqn.outvars[1], 0))
  dt = aval.dtype

  def kernel(x, y):
    g = np.asarray(np.gcd(x, y), dt)
    return [g, np.zeros_like(g)] if both else [g]
  return kernel, ((k, 0), (k, 1)), set(), ((k, 0), (k, 1)) if both else ((k, 0),)


# dtypes whose np.sort/np.searchsorted order is the sort order of
# searchsorted's comparisons (not the ml_dtypes floats)
SORTED_COUNT_DTYPES = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64))


def _sorted_count(eqn, eqns, only_use, uses, producer):
  """``searchsorted``'s compare-all count (see the module docstring)."""
  if tuple(eqn.params["axes"]) != (0,):
    return None
  k_conv = only_use(eqn.invars[0], "convert_element_type")
  dt = eqn.invars[0].aval.dtype
  if k_conv is None or dt not in _COUNTS:
    return None
  flags, = eqns[k_conv].invars
  if type(flags) is Literal or flags.aval.dtype != np.bool_:
    return None
  gone = {k_conv}

  def take(v, name):
    k = only_use(v, name)
    if k is not None:
      gone.add(k)
    return k

  k = take(flags, "not")
  if k is not None:                         # left, floats: not(le(v, a) | ne(a, a))
    k_or = take(eqns[k].invars[0], "or")
    if k_or is None:
      return None
    k_le, k_nan = take(eqns[k_or].invars[0], "le"), take(eqns[k_or].invars[1], "ne")
    if k_le is None or k_nan is None:
      return None
    vb, ab = eqns[k_le].invars
    k_cmp = k_le
    if tuple(eqns[k_nan].invars) != (ab, ab):
      return None
    side, floats, reads = "left", True, {ab: 3, vb: 1}
  elif (k := take(flags, "or")) is not None:   # right, floats: le(a, v) | ne(v, v)
    k_le, k_nan = take(eqns[k].invars[0], "le"), take(eqns[k].invars[1], "ne")
    if k_le is None or k_nan is None:
      return None
    ab, vb = eqns[k_le].invars
    k_cmp = k_le
    if tuple(eqns[k_nan].invars) != (vb, vb):
      return None
    side, floats, reads = "right", True, {ab: 1, vb: 3}
  else:                                     # integers: lt(a, v) or le(a, v)
    k_cmp = take(flags, "lt")
    side = "left"
    if k_cmp is None:
      k_cmp, side = take(flags, "le"), "right"
    if k_cmp is None:
      return None
    ab, vb = eqns[k_cmp].invars
    floats, reads = False, {ab: 1, vb: 1}
  if ab is vb or any(type(x) is Literal for x in (ab, vb)):
    return None
  dtype = ab.aval.dtype
  if dtype not in SORTED_COUNT_DTYPES or (dtype.kind == "f") != floats or vb.aval.dtype != dtype:
    return None
  # the two broadcasts, read by the pattern alone: a along axis 0 (none
  # when v is 0-d and a already has the shape), v along the others
  shape = tuple(ab.aval.shape)
  ka, kv = producer.get(ab), producer.get(vb)
  if uses.get(vb) != reads[vb] or not _broadcast(eqns, kv, shape[1:],
                                                  tuple(range(1, len(shape)))):
    return None
  if uses.get(ab) == reads[ab] and _broadcast(eqns, ka, shape[:1], (0,)):
    gone.add(ka)
    a_operand = (ka, 0)
  elif len(shape) == 1 and ab not in (eqns[k].outvars[0] for k in gone):
    a_operand = (k_cmp, list(eqns[k_cmp].invars).index(ab))
  else:
    return None
  gone.add(kv)

  def kernel(a, v):
    # ndarray methods, not numpy's function wrappers (the same sort and
    # search): 10 elements 4.2 -> 2.0 us.
    s = a.copy()
    s.sort()
    if (s.size >= SEARCH_SORTED_KEYS_FROM and v.size >= SEARCH_SORTED_KEYS_MIN
        and _spread(s) and _spread(v.reshape(-1))):
      return _search_in_key_order(s, v, side, dt)
    return s.searchsorted(v, side).astype(dt)
  return kernel, (a_operand, (kv, 0)), gone


#: Past the caches, binary searches of keys in random order miss on most of
#: their steps; keys searched in their own sort order walk nearby paths
#: (NumPy's search also narrows from the previous key). Measured, float32
#: sorted array of n, m keys: n=2**16 m=1e6 186 -> 134 ms, n=2**17 m=1e4
#: 2.0 -> 1.1 ms, n=1e6 m=4096 1.17 -> 0.61 ms, n=1e6 m=1e6 362 -> 187 ms;
#: n=1000 m=1e6 89 -> 120 ms (in cache: the argsort costs more).
SEARCH_SORTED_KEYS_FROM = 1 << 16
SEARCH_SORTED_KEYS_MIN = 1 << 12


def _spread(x: np.ndarray) -> bool:
  """Whether 256 evenly spaced elements of ``x`` hold 128 distinct values or
  more. Searches among a few distinct values (keys drawn from a small set, or
  a sorted array of a few values, whose searches end at its few boundaries)
  walk the same paths in any order: ordering the keys costs more than it
  saves (1e6 int32 keys of 60 values into 1e6 sorted elements of 50: 61-66
  ms searched as they come, 86-124 ms ordered)."""
  sample = x[::max(1, x.size // 256)][:256]
  return np.unique(sample).size >= 128


#: The argsort of a 1-D array of search keys (any order among equal keys):
#: NumPy's, until the sort kernels register their packed-key argsort
#: (``set_key_argsort``; 1e6 float32 82 -> 30 ms).
_key_argsort = np.argsort


def set_key_argsort(argsort) -> None:
  """Make ``argsort(keys)`` (1-D keys of the ``SORTED_COUNT_DTYPES``, NaN
  last) the key order of ``_search_in_key_order``."""
  global _key_argsort
  _key_argsort = argsort


def _search_in_key_order(s: np.ndarray, v: np.ndarray, side: str, dt) -> np.ndarray:
  """``s.searchsorted(v, side)`` in ``dt``, the keys searched in their sort
  order (NaN last, as ``searchsorted`` places them): the same counts."""
  flat = v.reshape(-1)
  order = _key_argsort(flat)
  out = np.empty(flat.size, dt)
  out[order] = s.searchsorted(flat[order], side)
  return out.reshape(v.shape)


def _broadcast(eqns, k, operand_shape: tuple, dims: tuple) -> bool:
  """Whether equation ``k`` broadcasts one operand of ``operand_shape`` along ``dims``."""
  if k is None or eqns[k].primitive.name != "broadcast_in_dim" or len(eqns[k].invars) != 1:
    return False
  x, = eqns[k].invars
  return (type(x) is not Literal and tuple(x.aval.shape) == operand_shape
          and tuple(eqns[k].params["broadcast_dimensions"]) == dims)


# ------------------------------------------------- patterns of primitive families
# Finders that primitive families register for their own equations (their
# kernels live with the primitives, above this layer): ``finder(k, eqn, eqns,
# only_use, uses)`` gives None or ``(kernel, operands, dropped)``, optionally
# with ``out_steps`` (see ``fused_steps``), for equation k, one of that primitive's.
# ``uses`` counts each variable's readers (a result nothing reads has none).
_ADDED: dict[str, list] = {}


def add_pattern(name: str, finder) -> None:
  """Register ``finder`` for the equations of the primitive ``name``."""
  _ADDED.setdefault(name, []).append(finder)


def _added_pattern(k, eqn, eqns, only_use, uses):
  for finder in _ADDED[eqn.primitive.name]:
    found = finder(k, eqn, eqns, only_use, uses)
    if found is not None:
      return found
  return None

