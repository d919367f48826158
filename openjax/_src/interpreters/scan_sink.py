"""Products a scan sums into a carry, computed after the loop as one product.

The gradient of a scan over a loop-invariant matrix accumulates its
cotangent in a carry: each trip of the transposed RNN cell adds
``h_t^T @ dh_t`` (a 256x256 product contracting the 32-row batch) to the
matrix's cotangent. Compiled as written, every trip runs that product alone:
a small-K kernel that writes its whole output each trip (jaxbench
scan_rnn/grad, 2 workers: 57.5 and 19.9 ms of a 207 ms call in the two
weight-gradient dispatches). The sum over trips of ``a_t . b_t`` is one
product of the stacked operands contracting the trips as well
(``A . B`` over (trip, batch): 256x6400 @ 6400x256), which runs at GEMM
speed after the loop. ``sink_scan_accumulations`` rewrites a carry ``c``
whose trip computes ``c + T(dot_general(a, b))`` (``T``: transposes and
reshapes, linear maps that commute with the sum; the carry read by nothing
else): the body passes ``c`` through, stacks ``a`` and ``b`` as extra
outputs (an operand that is a trip's ``xs`` slice is the stacked ``xs``
itself), and after the loop ``c_final = c_init + T(dot_general(A, B))``.
It is applied to the jaxpr a program is lowered from only, as
``scan_hoist``. The sum's order differs (the floating-point tolerance of
DESIGN decision 12).
"""
from __future__ import annotations

from collections import Counter

from openjax._src.core import ClosedJaxpr, Literal, Var, check_transformed
from openjax._src.interpreters.scan_hoist import HOIST_MAX_BYTES, _nbytes

_ADDS = ("add", "add_any")
_LINEAR = ("transpose", "reshape")


def _sinkable(body, nc: int, nk: int):
  """For each carry the body accumulates a product into: (carry index, the
  add equation, the body equations the product replaces besides the add
  and the product (the linear steps after it, outermost first, then
  transposes folded into its operands), the dot_general equation, its
  operands and contracted dims with those transposes folded)."""
  carry_in = body.invars[nc:nc + nk]
  consts = set(body.constvars) | set(body.invars[:nc])
  producer = {}
  for i, e in enumerate(body.eqns):
    for v in e.outvars:
      producer[v] = i
  uses = Counter(a for e in body.eqns for a in e.invars if type(a) is not Literal)
  uses.update(a for a in body.outvars if type(a) is not Literal)
  found = []
  for k in range(nk):
    cin, cout = carry_in[k], body.outvars[k]
    if type(cout) is Literal or cout not in producer or uses[cin] != 1 or uses[cout] != 1:
      continue
    add = body.eqns[producer[cout]]
    if add.primitive.name not in _ADDS or cin not in add.invars or len(add.invars) != 2:
      continue
    cur = add.invars[1] if add.invars[0] is cin else add.invars[0]
    if type(cur) is Literal or cur is cin:
      continue
    chain = []
    while cur in producer and uses[cur] == 1 \
        and body.eqns[producer[cur]].primitive.name in _LINEAR:
      chain.append(body.eqns[producer[cur]])
      cur = chain[-1].invars[0]
    if cur not in producer or uses[cur] != 1:
      continue
    dot = body.eqns[producer[cur]]
    if dot.primitive.name != "dot_general":
      continue
    (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
    if lb or rb or any(type(a) is Literal for a in dot.invars):
      continue
    operands, contracted, folded = [], [], []
    for a, dims in zip(dot.invars, (lc, rc)):
      a, dims, t = _through_transpose(a, dims, body, producer, uses)
      operands.append(a)
      contracted.append(dims)
      folded += t
    if any(a in consts or a is cin for a in operands):
      continue
    found.append((k, add, chain + folded, dot, operands, contracted))
  return found


def _through_transpose(a, dims, body, producer, uses):
  """(operand, its contracted dims, [the transpose]) reading through a
  transpose that only the product reads and that keeps the order of the
  other dims (``x.T @ x`` stacks ``x``, not a transposed copy); else
  (a, dims, [])."""
  if a not in producer or uses[a] != 1:
    return a, dims, []
  e = body.eqns[producer[a]]
  if e.primitive.name != "transpose" or type(e.invars[0]) is Literal:
    return a, dims, []
  perm = e.params["permutation"]
  free = [perm[d] for d in range(len(perm)) if d not in dims]
  if free != sorted(free):
    return a, dims, []
  return e.invars[0], tuple(perm[d] for d in dims), [e]


def _sunk(eqn, used: set):
  """(the new scan equation, the equations after it) or None; ``used``: the
  outer variables read after the scan (a final value nobody reads needs no
  product at all)."""
  p = eqn.params
  body_closed = p["jaxpr"]
  body = body_closed.jaxpr
  nc, nk, length = p["num_consts"], p["num_carry"], p["length"]
  if length < 2:
    return None
  found = _sinkable(body, nc, nk)
  if not found:
    return None
  xs_in = body.invars[nc + nk:]
  outer_xs = dict(zip(xs_in, eqn.invars[nc + nk:]))
  # operands stacked by the loop (xs slices are stacked already)
  read = [f for f in found if eqn.outvars[f[0]] in used]
  stack = list(dict.fromkeys(a for *_, operands, _ in read for a in operands
                             if a not in outer_xs))
  if sum(_nbytes(v.aval) for v in stack) * length > HOIST_MAX_BYTES:
    return None
  stacked = {v: Var(v.aval.update(shape=(length, *v.aval.shape))) for v in stack}
  removed = {id(e) for _, add, chain, dot, *_ in found for e in (add, *chain, dot)}
  outvars = list(body.outvars)
  for k, *_ in found:
    outvars[k] = body.invars[nc + k]     # the carry passes through
  new_body = body.replace(eqns=[e for e in body.eqns if id(e) not in removed],
                          outvars=[*outvars, *stack])
  check_transformed(new_body, "sink_scan_accumulations")
  scan_outs = list(eqn.outvars)
  after = []
  for k, add, chain, dot, operands, (lc, rc) in read:
    final = scan_outs[k]
    scan_outs[k] = passed = Var(final.aval)
    whole = [outer_xs.get(a) or stacked[a] for a in operands]
    dims = (((0, *(c + 1 for c in lc)), (0, *(c + 1 for c in rc))), ((), ()))
    out = Var(dot.outvars[0].aval)
    after.append(dot.replace(invars=whole, outvars=[out],
                             params=dict(dot.params, dimension_numbers=dims)))
    for e in reversed(chain):
      if e.primitive.name == "transpose" and e.outvars[0] in dot.invars:
        continue   # folded into the product's dims
      nxt = Var(e.outvars[0].aval)
      after.append(e.replace(invars=[out, *e.invars[1:]], outvars=[nxt]))
      out = nxt
    cin = body.invars[nc + k]
    operands = [passed, out] if add.invars[0] is cin else [out, passed]
    after.append(add.replace(invars=operands, outvars=[final]))
  params = dict(p, jaxpr=ClosedJaxpr(new_body, body_closed.consts))
  scan = eqn.replace(outvars=[*scan_outs, *stacked.values()], params=params)
  return scan, after


def sink_scan_accumulations(closed: ClosedJaxpr) -> ClosedJaxpr:
  """``closed`` with the products its top-level scans sum into carries
  computed after their loops (see the module docstring)."""
  jaxpr = closed.jaxpr
  if not any(e.primitive.name == "scan" for e in jaxpr.eqns):
    return closed
  used = {a for e in jaxpr.eqns for a in e.invars if type(a) is Var}
  used.update(a for a in jaxpr.outvars if type(a) is Var)
  eqns, changed = [], False
  for eqn in jaxpr.eqns:
    got = _sunk(eqn, used) if eqn.primitive.name == "scan" else None
    if got is None:
      eqns.append(eqn)
      continue
    scan, after = got
    eqns += [scan, *after]
    changed = True
  if not changed:
    return closed
  out = jaxpr.replace(eqns=eqns)
  check_transformed(out, "sink_scan_accumulations")
  return ClosedJaxpr(out, closed.consts)


__all__ = ["sink_scan_accumulations"]
