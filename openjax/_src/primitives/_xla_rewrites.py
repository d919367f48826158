"""XLA's algebraic rewrites that change a jitted function's bits, applied to
the jaxpr a jit runs (interpreted or lowered), never to the one users see.

- ``x / c`` with a float32/float64 constant ``c`` (a literal: a Python
  scalar, ``jnp.mean``'s count) is ``x * (1 / c)``: XLA's simplifier
  multiplies by the reciprocal (measured in JAX 0.10.2: ``jit(lambda x: x /
  1000.0)`` equals ``x * 0.001`` on all of 300 values and a true division on
  132). Both operands constant fold to a true division, so are kept.
- ``contract=True``: a float32/float64 product whose every use is an
  ``add``/``sub`` (and not a result) is fused into each of them as one
  fused multiply-add, as XLA's fusions are compiled (measured: ``a*b + c``,
  ``c - a*b``, ``x**2 + c``, ``c - 0.01*x``, a product shared by two sums;
  in ``a*b + c*d`` the first operand's product; equal products merged
  first). The interpreter evaluates it with an emulated fused multiply-add;
  the lowering emits a product per use, which LLVM contracts (IREE leaves a
  product with two uses alone). Sums (``reduce_sum``) are not fused with
  their operands' products when they have windows (over 32 terms: XLA
  sums a materialized operand); shorter ones fuse it (``xla_fma_sum``: a
  chain of fused multiply-adds, measured on (50, 3), (50, 20), (20, 50)).
"""
from __future__ import annotations

import weakref

import numpy as np

from openjax._src.core import ClosedJaxpr, Jaxpr, Literal, Primitive, ShapedArray, Var
from openjax._src.primitives import _elementwise_lowering as _L
from openjax._src.primitives import _reduce_lowering as _lw
from openjax._src.primitives import _xla_numerics
from openjax._src.primitives import _xla_orders as _xo
from openjax._src.primitives import _xla_orders_lowering as _xol
from openjax._src.primitives._util import broadcasting_shape
from openjax._src.primitives.elementwise import _RECIPROCAL_DTYPES, mul_p

_CACHES = {False: weakref.WeakKeyDictionary(), True: weakref.WeakKeyDictionary()}

# ------------------------------------------------------------------ fma
# ``a * b + c`` rounded once, with the product and/or addend negated: what an
# XLA fusion computes for a product feeding an add or a subtract. Only the
# interpreter evaluates it (the jaxprs users see and transform never hold it).
fma_p = Primitive("xla_fma")


@fma_p.def_impl
def _fma_impl(a, b, c, *, negate_product: bool, negate_addend: bool):
  a, b, c = np.broadcast_arrays(*(np.asarray(v) for v in (a, b, c)))
  out = _xla_numerics.fma(np.negative(a) if negate_product else a, b,
                          np.negative(c) if negate_addend else c)
  return [np.asarray(out, np.result_type(a, b, c))]


@fma_p.def_abstract_eval
def _fma_abstract_eval(a, b, c, *, negate_product: bool, negate_addend: bool):
  return [ShapedArray(broadcasting_shape("xla_fma", [a, b, c]), c.dtype)]


@fma_p.def_lower
def _fma_lower(ctx, a, b, c, *, negate_product: bool, negate_addend: bool):
  # A product feeding an add: LLVM contracts the pair, as XLA's does.
  out = ctx.aval_type(ctx.avals_out[0])
  a, b, c = _L.operands_to_out(ctx, [a, b, c])
  p = ctx.op("stablehlo.multiply", [a, b], out)
  if negate_product:
    p = ctx.op("stablehlo.negate", [p], out)
  if negate_addend:
    c = ctx.op("stablehlo.negate", [c], out)
  return [ctx.op("stablehlo.add", [p, c], out)]


for _slot in ("jvp", "transpose", "batch"):
  fma_p.mark_not_applicable(_slot, "the interpreter's fused multiply-add of XLA's fusions "
                            "only runs jaxprs already transformed")


# ``sum(a * b, axes)`` as XLA fuses a product into a short sum (at most 32
# terms, no windows): one fused multiply-add per term, in order.
fma_sum_p = Primitive("xla_fma_sum")


@fma_sum_p.def_impl
def _fma_sum_impl(a, b, *, axes):
  return [_xo.ordered_fma_sum(np.asarray(a), np.asarray(b), axes)]


@fma_sum_p.def_abstract_eval
def _fma_sum_abstract_eval(a, b, *, axes):
  shape = broadcasting_shape("xla_fma_sum", [a, b])
  return [ShapedArray(tuple(d for i, d in enumerate(shape) if i not in axes), a.dtype)]


@fma_sum_p.def_lower
def _fma_sum_lower(ctx, a, b, *, axes):
  shape = broadcasting_shape("xla_fma_sum", ctx.avals_in)
  dtype = ctx.avals_out[0].dtype
  a, b = (_L.to_shape(ctx, v, shape) for v in (a, b))
  if _xo.compiled_sum_axis(shape, dtype, axes) is None:   # many outputs: IREE's reduction
    product = ctx.op("stablehlo.multiply", [a, b], ctx.tensor_type(shape, dtype))
    return [_lw.reduce(ctx, product, axes, "add", 0, dtype, ctx.avals_out[0])]
  return [_xol.lower_ordered_fma_sum(ctx, a, b, shape, dtype, axes)]


for _slot in ("jvp", "transpose", "batch"):
  fma_sum_p.mark_not_applicable(_slot, "the interpreter's fused sum of products of XLA's "
                                "fusions only runs jaxprs already transformed")


def _fma_summable(e) -> bool:
  aval = e.invars[0].aval
  return (e.primitive.name == "reduce_sum"
          and _xo.fma_sum_axis(aval.shape, aval.dtype, e.params["axes"]) is not None)


_PRODUCTS = ("mul", "integer_pow", "square")
_SUMS = ("add", "add_any", "sub")


def _factors(eqn):
  """The two factors of a float32/float64 product equation, or None."""
  if np.dtype(eqn.outvars[0].aval.dtype) not in _RECIPROCAL_DTYPES:
    return None
  name = eqn.primitive.name
  if name == "mul" and eqn.params.get("out_dtype") is None:
    return eqn.invars[0], eqn.invars[1]
  if name == "square" or (name == "integer_pow" and eqn.params.get("y") == 2):
    return eqn.invars[0], eqn.invars[0]
  return None


def _operand_key(a):
  if isinstance(a, Literal):
    return ("literal", np.asarray(a.val).tobytes(), str(a.aval))
  return a


def _merge_equal_products(eqns, outvars):
  """Equal products computed once (XLA's common-subexpression elimination
  runs before fusion, so ``(a*b, a*b + c)`` has one product with two uses)."""
  seen: dict = {}
  subst: dict = {}
  out = []
  for e in eqns:
    if subst and any(isinstance(a, Var) and a in subst for a in e.invars):
      e = e.replace(invars=[subst.get(a, a) if isinstance(a, Var) else a for a in e.invars])
    if e.primitive.name in _PRODUCTS:
      key = (e.primitive.name, tuple(_operand_key(a) for a in e.invars),
             tuple(sorted(e.params.items())))
      first = seen.get(key)
      if first is not None:
        subst[e.outvars[0]] = first
        continue
      seen[key] = e.outvars[0]
    out.append(e)
  return out, [subst.get(a, a) if isinstance(a, Var) else a for a in outvars]


def _contract(eqns, outvars):
  """``eqns`` with products fused into the sums that use them."""
  uses: dict = {}
  for e in eqns:
    for a in e.invars:
      if isinstance(a, Var):
        uses.setdefault(a, []).append(e.primitive.name)
  for a in outvars:
    if isinstance(a, Var):
      uses.setdefault(a, []).append(None)
  products = {}
  for e in eqns:
    if e.primitive.name in _PRODUCTS:
      factors = _factors(e)
      v = e.outvars[0]
      if factors is not None and all(u in _SUMS or u == "reduce_sum"
                                     for u in uses.get(v, [None])):
        products[v] = factors
  if not products:
    return eqns
  fused_uses: dict = {}
  out = []
  for e in eqns:
    if (e.primitive.name == "reduce_sum" and isinstance(e.invars[0], Var)
        and e.invars[0] in products and _fma_summable(e)):
      x = e.invars[0]
      fused_uses[x] = fused_uses.get(x, 0) + 1
      e = e.replace(invars=list(products[x]), primitive=fma_sum_p,
                    params={"axes": tuple(e.params["axes"])})
    elif e.primitive.name in _SUMS and e.outvars[0].aval.dtype == e.invars[0].aval.dtype:
      x, y = e.invars
      sub = e.primitive.name == "sub"
      if isinstance(x, Var) and x in products:
        (a, b), c, params = products[x], y, dict(negate_product=False, negate_addend=sub)
        fused_uses[x] = fused_uses.get(x, 0) + 1
        e = e.replace(invars=[a, b, c], primitive=fma_p, params=params)
      elif isinstance(y, Var) and y in products:
        (a, b), c, params = products[y], x, dict(negate_product=sub, negate_addend=False)
        fused_uses[y] = fused_uses.get(y, 0) + 1
        e = e.replace(invars=[a, b, c], primitive=fma_p, params=params)
    out.append(e)
  # Products whose uses were all fused are dead.
  dead = {v for v, n in fused_uses.items() if n == len(uses[v])}
  return [e for e in out if not (e.primitive.name in _PRODUCTS and e.outvars[0] in dead)]



def _reciprocal_literal(c: Literal) -> Literal | None:
  if np.dtype(c.aval.dtype) not in _RECIPROCAL_DTYPES:
    return None
  val = np.asarray(c.val, c.aval.dtype)
  with np.errstate(divide="ignore"):
    return Literal(np.reciprocal(val), c.aval)


def _rewrite_param(value, contract):
  if isinstance(value, ClosedJaxpr):
    inner = rewrite_jaxpr(value.jaxpr, contract)
    return value if inner is value.jaxpr else ClosedJaxpr(inner, value.consts)
  if isinstance(value, Jaxpr):
    return rewrite_jaxpr(value, contract)
  if isinstance(value, tuple) and value and isinstance(value[0], (ClosedJaxpr, Jaxpr)):
    new = tuple(_rewrite_param(v, contract) for v in value)
    return value if all(a is b for a, b in zip(new, value)) else new
  return value


def _rewrite_eqn(eqn, contract):
  if (eqn.primitive.name == "div" and isinstance(eqn.invars[0], Var)
      and isinstance(eqn.invars[1], Literal)):
    recip = _reciprocal_literal(eqn.invars[1])
    if recip is not None:
      return eqn.replace(invars=[eqn.invars[0], recip], primitive=mul_p,
                         params={"out_dtype": None})
  params = {k: _rewrite_param(v, contract) for k, v in eqn.params.items()}
  if any(params[k] is not v for k, v in eqn.params.items()):
    return eqn.replace(params=params)
  return eqn


def rewrite_jaxpr(jaxpr: Jaxpr, contract: bool = False) -> Jaxpr:
  """``jaxpr`` with XLA's rewrites (itself when none applies); cached.
  ``contract``: fuse products into sums (for the interpreter)."""
  cache = _CACHES[contract]
  try:
    out = cache[jaxpr]
  except KeyError:
    eqns, outvars = [_rewrite_eqn(e, contract) for e in jaxpr.eqns], jaxpr.outvars
    if contract:
      eqns, outvars = _merge_equal_products(eqns, outvars)
      eqns = _contract(eqns, outvars)
    changed = (len(eqns) != len(jaxpr.eqns) or any(a is not b for a, b in zip(eqns, jaxpr.eqns))
               or any(a is not b for a, b in zip(outvars, jaxpr.outvars)))
    out = jaxpr.replace(eqns=eqns, outvars=outvars) if changed else None   # None: no cycle
    cache[jaxpr] = out
  return jaxpr if out is None else out


def rewrite_closed(closed: ClosedJaxpr, contract: bool = False) -> ClosedJaxpr:
  jaxpr = rewrite_jaxpr(closed.jaxpr, contract)
  return closed if jaxpr is closed.jaxpr else ClosedJaxpr(jaxpr, closed.consts)
