"""``jax.scipy.integrate``: ``trapezoid``, the composite trapezoidal rule."""
from __future__ import annotations

from openjax._src.scipy import jnp

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
  """The integral of ``y`` along ``axis`` by the trapezoidal rule, at sample
  points ``x`` (or spacing ``dx``); as ``jnp.trapezoid``."""
  return jnp.trapezoid(y, x, dx, axis)
