"""Tokens: ``create_token_p`` and ``after_all_p``, JAX's values that order
side effects (XLA's tokens). A token carries no data; its type is
``core.abstract_token`` (printed ``Tok``), stored and lowered as an empty
boolean array because IREE cannot carry ``!stablehlo.token``: a module that
passes a token through ``main`` fails with "util.return op has 1 operands,
but enclosing function-like op returns 2", and ``stablehlo.create_token`` or
``stablehlo.after_all`` with a token result fails to legalise (measured with
the IREE compiler openjax uses). Programs compiled by openjax run their
effects in program order, so the token's ordering role needs no data."""
from __future__ import annotations

import numpy as np

from openjax._src.core import AbstractToken, Primitive, abstract_token
from openjax._src.core.sharding_rules import replicated_rule

__all__ = ["after_all", "after_all_p", "create_token", "create_token_p"]

_NO_DATA = np.zeros((0,), np.bool_)


def _token_value():
  return np.zeros((0,), np.bool_)


# ---------------------------------------------------------------- create_token
create_token_p = Primitive("create_token", kind="nondifferentiable")


def create_token(_=None):
  """A new token, with no preconditions for sequencing effects. The argument
  is ignored (JAX keeps it for backward compatibility)."""
  return create_token_p.bind1()


@create_token_p.def_impl
def _create_token_impl():
  return [_token_value()]


@create_token_p.def_abstract_eval
def _create_token_abstract_eval():
  return [abstract_token]


create_token_p.def_sharding_rule(replicated_rule)
create_token_p.mark_not_applicable(
    "batch", "no operands: create_token is never batched (vmap only batches equations with "
    "batched operands)")


@create_token_p.def_lower
def _create_token_lower(ctx):
  return [ctx.constant(_NO_DATA)]


# ------------------------------------------------------------------- after_all
after_all_p = Primitive("after_all", kind="nondifferentiable")


def after_all(*operands):
  """Merge tokens: the result is ordered after every operand token."""
  return after_all_p.bind1(*operands)


@after_all_p.def_impl
def _after_all_impl(*tokens):
  return [_token_value()]


@after_all_p.def_abstract_eval
def _after_all_abstract_eval(*avals):
  if any(type(a) is not AbstractToken for a in avals):
    raise TypeError("Arguments to after_all must be tokens, got "
                    f"{', '.join(a.str_short() for a in avals)}; make tokens with "
                    "lax.create_token() or take them from another after_all.")
  return [abstract_token]


after_all_p.def_sharding_rule(replicated_rule)


@after_all_p.def_batch
def _after_all_batch(vals, dims):
  # Tokens have no batch dimension: vmap sees them only as unbatched values.
  if any(d is not None for d in dims):
    raise ValueError("after_all: a token cannot be batched (vmap mapped over a token); "
                     "pass tokens with in_axes=None.")
  return [after_all_p.bind1(*vals)], [None]


@after_all_p.def_lower
def _after_all_lower(ctx, *tokens):
  return [ctx.constant(_NO_DATA)]
