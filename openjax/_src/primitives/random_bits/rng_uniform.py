"""``rng_uniform_p``: XLA's stateful uniform generator (``lax.rng_uniform``),
which JAX keeps for niche uses and whose numbers JAX calls implementation
defined. Use ``jax.random`` for reproducible numbers.

What openjax gives: values uniform in ``[a, b)`` (integers: ``a <= v < b``)
of ``a``'s dtype, new ones at every call. Eager calls (and interpreted jaxprs)
draw from one process-wide NumPy PCG64 stream seeded with 0 at import;
compiled programs call the host to draw from the same stream
(``control/rng_uniform_lowering.py``), so eager, interpreted and compiled
calls continue one sequence. (IREE's ``stablehlo.rng`` is no generator: for
float32 it returns the same evenly spaced ramp, 0.0, 0.257, 0.514, 0.771, on
every call, and it rejects integer bounds.) When ``b <= a`` the result is
``a``.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules import replicated_rule
from openjax._src.primitives.base.ad_util import defjvp_zero
from openjax._src.primitives.base.batch_util import axis_size, bdim_at_front
from openjax._src.primitives.base.convert import _convert_element_type
from openjax._src.primitives.base.structural import _shape_tuple, broadcast_in_dim
from openjax._src.primitives.elementwise.arithmetic import add, floor, mul, sub
from openjax._src.primitives.elementwise.logic import lt, select

__all__ = ["rng_uniform", "rng_uniform_p"]  # draw_uniform: for the lowering only

# The eager stream (see the module docstring).
_STREAM = np.random.Generator(np.random.PCG64(0))


# ----------------------------------------------------------------- rng_uniform
rng_uniform_p = Primitive("rng_uniform", kind="nondifferentiable")


def rng_uniform(a, b, shape):
  """Stateful PRNG: ``shape`` numbers uniform in ``[a, b)`` (experimental, as
  in JAX; its numbers are implementation defined, ``jax.random`` is the
  reproducible API)."""
  return rng_uniform_p.bind1(a, b, shape=_shape_tuple("rng_uniform", "shape", shape))


def draw_uniform(a, b, *, shape) -> list[np.ndarray]:
  """The next ``shape`` numbers of the process stream in ``[a, b)`` (NumPy
  scalars in and out): the impl, and the host function compiled calls make."""
  dt = np.asarray(a).dtype
  lo, hi = np.asarray(a).item(), np.asarray(b).item()
  if dtypes.kind(dt) in ("i", "u", "b"):
    if hi <= lo:
      return [np.full(shape, lo, dt)]
    return [_STREAM.integers(int(lo), int(hi), size=shape).astype(dt)]
  if not hi > lo:
    return [np.full(shape, lo, dt)]
  u = _STREAM.random(size=shape, dtype=np.float64)
  out = (lo + (hi - lo) * u).astype(dt)
  # Rounding to a narrow dtype may reach ``b``: keep the interval half open.
  return [np.where(out >= np.asarray(hi, dt), np.asarray(lo, dt), out)]


rng_uniform_p.def_impl(draw_uniform)


@rng_uniform_p.def_abstract_eval
def _rng_uniform_abstract_eval(a, b, *, shape):
  if a.dtype != b.dtype:
    raise ValueError(f"Arguments to rng_uniform must have identical dtypes, got {a.dtype} and "
                     f"{b.dtype}. Cast one (e.g. jnp.float32(b)).")
  if a.shape != () or b.shape != ():
    raise ValueError(f"Arguments to rng_uniform must be scalars; got shapes {a.shape} and "
                     f"{b.shape}. Pass the interval's ends as scalars and the result's shape "
                     "as `shape`.")
  if dtypes.kind(a.dtype) == "c":
    raise TypeError(f"rng_uniform: complex bounds ({a.str_short()}) have no order; pass real "
                    "floating-point or integer bounds.")
  return [ShapedArray(shape, a.dtype, a.weak_type and b.weak_type)]


rng_uniform_p.def_sharding_rule(replicated_rule)
defjvp_zero(rng_uniform_p)


@rng_uniform_p.def_batch
def _rng_uniform_batch(vals, dims, *, shape):
  # One draw per batch member in its own bounds: uniform [0, 1) numbers
  # scaled to each member's interval (integers rounded down, kept below b).
  size = axis_size(vals, dims)
  a, b = (bdim_at_front(v, d, size) for v, d in zip(vals, dims))
  dt = get_aval(a).dtype
  out_shape = (size, *shape)
  spread = lambda v: broadcast_in_dim(v, out_shape, (0,))    # noqa: E731
  if dtypes.kind(dt) == "f":
    u = rng_uniform_p.bind1(np.zeros((), dt), np.ones((), dt), shape=out_shape)
    lo, hi = spread(a), spread(b)
    out = add(lo, mul(sub(hi, lo), u))
    return [select(lt(out, hi), out, lo)], [0]
  u = rng_uniform_p.bind1(np.float32(0), np.float32(1), shape=out_shape)
  lo = _convert_element_type(spread(a), np.float32)
  hi = _convert_element_type(spread(b), np.float32)
  out = _convert_element_type(floor(add(lo, mul(sub(hi, lo), u))), dt)
  return [select(lt(out, spread(b)), out, spread(a))], [0]
# The lowering (a host call into the same stream) is set in control/rng_uniform_lowering.py.
