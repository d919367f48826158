"""The lowering of ``rng_uniform_p``: a call into the host that draws from
the eager stream (``primitives/random_bits/rng_uniform.py`` says why not
``stablehlo.rng``). It sits in the control layer because host calls are the
runtime's."""
from __future__ import annotations

import functools

from openjax._src.primitives.random_bits.rng_uniform import draw_uniform, rng_uniform_p
from openjax._src.runtime import host_calls


@rng_uniform_p.def_lower
def _rng_uniform_lower(ctx, a, b, *, shape):
  draw = functools.partial(draw_uniform, shape=shape)
  host = host_calls.register(draw, ctx.avals_in, ctx.avals_out, key=("rng_uniform", shape))
  return ctx.call_import(host.symbol, [a, b], ctx.avals_out)
