"""``jax.fwd_and_bwd``: a function's forward and backward passes as two
functions, so a jitted backward pass compiles once and is reused (``jax.vjp``
of a jitted function returns a new closure each time, which ``jit`` retraces)."""
from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

from openjax._src.api.autodiff import vjp
from openjax._src.api.jit import jit

__all__ = ["fwd_and_bwd"]


def fwd_and_bwd(fun: Callable, argnums: int | Sequence[int], has_aux: bool = False,
                jitted: bool = True) -> tuple[Callable, Callable]:
  """``fwd(*args) -> (out, residuals[, aux])`` and ``bwd(residuals, cotangent)``
  -> the cotangents of the arguments in ``argnums`` (one value for an int)."""
  if not callable(fun):
    raise TypeError(f"fwd_and_bwd: expected a callable, got {fun!r}")
  single = isinstance(argnums, int)
  positions = (operator.index(argnums),) if single else tuple(
      operator.index(a) for a in argnums)

  def fwd(*args, **kwargs):
    for p in positions:
      if not -len(args) <= p < len(args):
        raise ValueError(f"fwd_and_bwd: argnums {positions} out of range for {len(args)} "
                         "positional arguments")

    def with_diff_args(*diff):
      full = list(args)
      for p, value in zip(positions, diff):
        full[p] = value
      return fun(*full, **kwargs)
    return vjp(with_diff_args, *(args[p] for p in positions), has_aux=has_aux)

  def bwd(f_vjp, cotangent):
    grads = f_vjp(cotangent)
    return grads[0] if single else grads

  if jitted:
    return jit(fwd), jit(bwd)
  return fwd, bwd
