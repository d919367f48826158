"""Matrix products of a scan's inputs computed before the loop.

A scan body such as an RNN cell, ``tanh(x @ Wx + h @ Wh + b)``, multiplies
each step's slice of ``xs`` by a loop-invariant matrix: a product that does
not depend on the carry. Compiled as written, every trip runs it as a small
product (32x256 @ 256x256: IREE dispatches, a kernel too small to reach
GEMM speed); the same products over all trips are one large product of the
stacked inputs (6400x256 @ 256x256), which runs at full speed, on every
core, before the loop. ``hoist_scan_products`` moves the part of a scan's
body that depends only on ``xs`` and constants and ends in a
``dot_general`` out of the loop: that part, mapped over the trips
(``batch_jaxpr``), runs before the scan, and its results enter the loop as
extra ``xs``. It is applied to the jaxpr a program is lowered from only
(``make_jaxpr`` and the interpreter see the scan as traced). The products
compute the same sums (a different kernel may order them differently: the
floating-point tolerance of DESIGN decision 12).

Measured (AVX2, 2 cores, jaxbench scan_rnn: 200 trips of a 32x256 state):
see ``HOIST_MAX_BYTES``' comment and benchmarks/README.md.
"""
from __future__ import annotations

from openjax._src.core import ClosedJaxpr, Jaxpr, Literal, check_transformed, eqn_effects
from openjax._src.core import jaxprs_in_params
from openjax._src.interpreters.batching import batch_jaxpr
from openjax._src.interpreters.fold_constants import NOT_PURE_VALUES

#: Most bytes the hoisted values of one scan may take over all its trips
#: (they are held for the whole loop instead of one trip at a time).
HOIST_MAX_BYTES = 1 << 27



def _nbytes(aval) -> int:
  n = aval.dtype.itemsize
  for d in aval.shape:
    n *= d
  return n


def _movable(eqn) -> bool:
  return (eqn.primitive.name not in NOT_PURE_VALUES and not eqn_effects(eqn)
          and not jaxprs_in_params(eqn.params))


def _split(eqn):
  """(the hoisted program over one trip, its operands' batch dims, its
  operands as the scan's outer atoms, the body without the hoisted
  equations reading their results as extra xs) for a scan equation, or None
  when nothing is worth moving."""
  p = eqn.params
  body_closed = p["jaxpr"]
  body = body_closed.jaxpr
  nc, nk, length = p["num_consts"], p["num_carry"], p["length"]
  consts_in = body.invars[:nc]
  xs_in = body.invars[nc + nk:]
  if length < 2 or not xs_in:
    return None
  # Each body value: "c" (constants only), "x" (a trip's xs, no carry) or
  # "k" (reads the carry, or comes from an equation that must stay).
  kind = {v: "c" for v in (*body.constvars, *consts_in)}
  kind.update((v, "x") for v in xs_in)
  kind.update((v, "k") for v in body.invars[nc:nc + nk])
  eqn_kind = []
  for e in body.eqns:
    ks = {kind[a] for a in e.invars if type(a) is not Literal}
    k = "k" if "k" in ks or not _movable(e) else "x" if "x" in ks else "c"
    eqn_kind.append(k)
    kind.update((v, k) for v in e.outvars)
  # What is worth moving: the x-products and the equations they read
  # (backwards from each product, through non-carry equations).
  needed, hoisted = set(), [False] * len(body.eqns)
  for i in range(len(body.eqns) - 1, -1, -1):
    e = body.eqns[i]
    if eqn_kind[i] == "k":
      continue
    is_product = e.primitive.name == "dot_general" and eqn_kind[i] == "x"
    if is_product or any(v in needed for v in e.outvars):
      hoisted[i] = True
      needed.update(a for a in e.invars if type(a) is not Literal)
  if not any(h and k == "x" for h, k in zip(hoisted, eqn_kind)):
    return None
  # Values the remaining body reads from moved x-equations become new xs;
  # constant equations also stay in the body (recomputed there, cheap).
  moved = [i for i, h in enumerate(hoisted) if h and eqn_kind[i] == "x"]
  moved_set = set(moved)
  reads = set()
  for i, e in enumerate(body.eqns):
    if i not in moved_set:
      reads.update(a for a in e.invars if type(a) is not Literal)
  reads.update(a for a in body.outvars if type(a) is not Literal)
  given = [v for i in moved for v in body.eqns[i].outvars if v in reads]
  if not given or sum(_nbytes(v.aval) for v in given) * length > HOIST_MAX_BYTES:
    return None
  # The hoisted program over one trip: its inputs are the xs slices and
  # constant operands it reads; body constants stay its constants.
  sub_eqns = [e for i, e in enumerate(body.eqns) if hoisted[i]]
  used = {a for e in sub_eqns for a in e.invars if type(a) is not Literal}
  const_idx = {v: j for j, v in enumerate(body.constvars)}
  sub_constvars = [v for v in body.constvars if v in used]
  sub_in = [v for v in (*consts_in, *xs_in) if v in used]
  outer = dict(zip(body.invars, eqn.invars))
  sub = Jaxpr(sub_constvars, sub_in, given, sub_eqns)
  sub_closed = ClosedJaxpr(sub, [body_closed.consts[const_idx[v]] for v in sub_constvars])
  xs_set = set(xs_in)
  in_dims = [0 if v in xs_set else None for v in sub_in]
  rest = body.replace(invars=[*body.invars, *given],
                      eqns=[e for i, e in enumerate(body.eqns) if i not in moved_set])
  return sub_closed, in_dims, [outer[v] for v in sub_in], rest


def _hoisted(eqn, consts: list, constvars: list):
  """(equations before the scan, the new scan equation) or None; constants
  of the mapped program are appended to ``constvars``/``consts``."""
  got = _split(eqn)
  if got is None:
    return None
  sub_closed, in_dims, operands, rest = got
  length = eqn.params["length"]
  try:
    batched, _ = batch_jaxpr(sub_closed, in_dims, length)
  except Exception:  # noqa: BLE001 - a primitive without a batching rule: keep the loop
    return None
  b = batched.jaxpr
  subst = dict(zip(b.invars, operands))
  for v, c in zip(b.constvars, batched.consts):
    constvars.append(v)
    consts.append(c)
  pre = [e.replace(invars=[subst.get(a, a) if type(a) is not Literal else a
                           for a in e.invars]) for e in b.eqns]
  stacked = [subst.get(a, a) if type(a) is not Literal else a for a in b.outvars]
  body_closed = eqn.params["jaxpr"]
  check_transformed(rest, "hoist_scan_products")
  params = dict(eqn.params, jaxpr=ClosedJaxpr(rest, body_closed.consts))
  return pre, eqn.replace(invars=[*eqn.invars, *stacked], params=params)


def hoist_scan_products(closed: ClosedJaxpr) -> ClosedJaxpr:
  """``closed`` with the input-only products of its top-level scans
  computed before their loops (see the module docstring)."""
  jaxpr = closed.jaxpr
  if not any(e.primitive.name == "scan" for e in jaxpr.eqns):
    return closed
  consts, constvars = list(closed.consts), list(jaxpr.constvars)
  eqns, changed = [], False
  for eqn in jaxpr.eqns:
    got = _hoisted(eqn, consts, constvars) if eqn.primitive.name == "scan" else None
    if got is None:
      eqns.append(eqn)
      continue
    pre, scan_eqn = got
    eqns += pre
    eqns.append(scan_eqn)
    changed = True
  if not changed:
    return closed
  out = jaxpr.replace(constvars=constvars, eqns=eqns)
  check_transformed(out, "hoist_scan_products")
  return ClosedJaxpr(out, consts)


__all__ = ["hoist_scan_products", "HOIST_MAX_BYTES"]
