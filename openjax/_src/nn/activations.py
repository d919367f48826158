"""Elementwise activation functions of ``jax.nn``.

Each follows JAX 0.10's definition op for op, including where JAX wraps it in
``jit`` (so the printed jaxprs nest the same way) and where it fixes a
derivative with ``custom_jvp`` (``relu``/``relu6`` have derivative 0 at their
kinks; ``log1mexp`` has a closed-form derivative).
"""
from __future__ import annotations

from functools import partial

import numpy as np

from openjax._src import lax
from openjax._src.api.custom_derivatives import custom_jvp
from openjax._src.api.jit import jit
from openjax._src.core import str_short_of
from openjax._src.nn import jnp
from openjax._src.numpy.eager_programs import eager_program
from openjax._src.numpy.util import canonicalize_axis, ensure_arraylike, promote_args_inexact

__all__ = ["identity", "relu", "relu6", "squareplus", "softplus", "sparse_plus", "soft_sign",
           "sigmoid", "sparse_sigmoid", "silu", "swish", "mish", "log_sigmoid", "elu",
           "leaky_relu", "hard_tanh", "celu", "selu", "gelu", "glu", "hard_sigmoid",
           "hard_silu", "hard_swish", "log1mexp"]


@jit
def identity(x):
  """Identity activation: returns ``x`` unchanged (as an array)."""
  return ensure_arraylike("identity", x)


@custom_jvp
@jit
def relu(x):
  r"""Rectified linear unit: ``max(x, 0)``.

  Its derivative at 0 is taken to be 0 (see "Numerical influence of ReLU'(0)
  on backpropagation", Bertoin et al. 2021).
  """
  return jnp.maximum(x, 0)


# The kink gets derivative 0: a select on x > 0 rather than max's tie rule.
relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


@custom_jvp
@jit
def relu6(x):
  r"""Rectified linear unit capped at 6: ``min(max(x, 0), 6)``.

  Its derivative is 0 at both kinks, ``x = 0`` and ``x = 6``.
  """
  return jnp.minimum(jnp.maximum(x, 0), 6.)


relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


@jit
def squareplus(x, b=4):
  r"""Squareplus activation: ``(x + sqrt(x**2 + b)) / 2`` (arXiv:2112.11687);
  ``b`` sets the smoothness."""
  x, b = ensure_arraylike("squareplus", x, b)
  y = x + jnp.sqrt(jnp.square(x) + b)
  return y / 2


@jit
def softplus(x):
  r"""Softplus activation: ``log(1 + exp(x))``, computed without overflow."""
  return jnp.logaddexp(x, 0)


@jit
def sparse_plus(x):
  r"""Sparse plus: 0 for ``x <= -1``, ``(x + 1)**2 / 4`` for ``-1 < x < 1``
  and ``x`` for ``x >= 1`` (the sparse twin of softplus)."""
  x = ensure_arraylike("sparse_plus", x)
  return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@jit
def soft_sign(x):
  r"""Soft-sign activation: ``x / (|x| + 1)``."""
  x = ensure_arraylike("soft_sign", x)
  return x / (jnp.abs(x) + 1)


# JAX stages sigmoid as jit(inline=True), which leaves only the logistic in the
# jaxpr; calling lax.logistic directly stages exactly that.
def sigmoid(x):
  r"""Sigmoid activation: ``1 / (1 + exp(-x))`` (``lax.logistic``)."""
  return lax.logistic(x)


@jit
def sparse_sigmoid(x):
  r"""Sparse sigmoid: 0 for ``x <= -1``, ``(x + 1) / 2`` for ``-1 < x < 1``
  and 1 for ``x >= 1`` (the derivative of ``sparse_plus``)."""
  return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@jit
def silu(x):
  r"""SiLU (swish) activation: ``x * sigmoid(x)``. ``swish`` is the same function."""
  x = ensure_arraylike("silu", x)
  return x * sigmoid(x)


swish = silu


@jit
def mish(x):
  r"""Mish activation: ``x * tanh(softplus(x))`` (arXiv:1908.08681)."""
  x = ensure_arraylike("mish", x)
  return x * jnp.tanh(softplus(x))


@jit
def log_sigmoid(x):
  r"""Log-sigmoid: ``log(sigmoid(x)) = -softplus(-x)``."""
  x = ensure_arraylike("log_sigmoid", x)
  return -softplus(-x)


@jit
def elu(x, alpha=1.0):
  r"""Exponential linear unit: ``x`` for ``x > 0``, ``alpha * (exp(x) - 1)``
  otherwise. ``alpha`` may be a scalar or an array."""
  x = ensure_arraylike("elu", x)
  # expm1 sees only the non-positive inputs, so large x cannot overflow it
  # (an inf there would turn the gradient of the unused branch into NaN).
  return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0., x)))


@jit
def leaky_relu(x, negative_slope=1e-2):
  r"""Leaky ReLU: ``x`` for ``x >= 0``, ``negative_slope * x`` otherwise."""
  x = ensure_arraylike("leaky_relu", x)
  return jnp.where(x >= 0, x, negative_slope * x)


@jit
def hard_tanh(x):
  r"""Hard tanh: ``x`` clipped to ``[-1, 1]``."""
  x = ensure_arraylike("hard_tanh", x)
  return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@jit
def celu(x, alpha=1.0):
  r"""Continuously differentiable ELU: ``x`` for ``x > 0``,
  ``alpha * (exp(x / alpha) - 1)`` otherwise (arXiv:1704.07483)."""
  return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@jit
def selu(x):
  r"""Scaled ELU: ``scale * elu(x, alpha)`` with the self-normalising constants
  ``alpha = 1.6732632...`` and ``scale = 1.0507009...`` (arXiv:1706.02515)."""
  return _SELU_SCALE * elu(x, _SELU_ALPHA)


# JAX does not jit gelu (its jaxpr is the ops themselves): eagerly one cached
# program (~8 steps, 51 -> ~12 us at 10 elements), traced inline.
@eager_program(static_argnames=("approximate",))
def gelu(x, approximate: bool = True):
  r"""Gaussian error linear unit (arXiv:1606.08415).

  ``approximate=False`` computes ``x/2 * erfc(-x/sqrt(2))``; the default
  ``approximate=True`` uses ``x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x**3)))``.
  Integer inputs are promoted to the default float dtype.
  """
  x, = promote_args_inexact("gelu", x)
  dtype = x.dtype
  if approximate:
    # The constants carry x's dtype (not weak), as in JAX.
    sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(dtype)
    cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
    return x * cdf
  sqrt_half = np.sqrt(0.5).astype(dtype)
  return jnp.array(0.5 * x * lax.erfc(-x * sqrt_half), dtype=dtype)


@partial(jit, static_argnames=("axis",))
def glu(x, axis: int = -1):
  r"""Gated linear unit: splits ``x`` in two halves ``a, b`` along ``axis``
  and returns ``a * sigmoid(b)``. The axis size must be even."""
  x = ensure_arraylike("glu", x)
  size = x.shape[canonicalize_axis(axis, x.ndim)]
  if size % 2:
    # AssertionError is what JAX raises here.
    raise AssertionError(
        f"glu: axis {axis} of the input {str_short_of(x)} has size {size}, which is "
        "not divisible by 2 (axis size must be divisible by 2); pass an axis of even size.")
  x1, x2 = jnp.split(x, 2, axis)
  return x1 * sigmoid(x2)


@jit
def hard_sigmoid(x):
  r"""Hard sigmoid: ``relu6(x + 3) / 6``."""
  return relu6(x + 3.) / 6.


@jit
def hard_silu(x):
  r"""Hard SiLU (hard swish): ``x * hard_sigmoid(x)``. ``hard_swish`` is the
  same function."""
  x = ensure_arraylike("hard_silu", x)
  return x * hard_sigmoid(x)


hard_swish = hard_silu


@custom_jvp
@jit
def log1mexp(x):
  r"""``log(1 - exp(-x))`` computed stably (undefined for ``x < 0``).

  Uses ``log(-expm1(-x))`` below ``log 2`` and ``log1p(-exp(-x))`` above
  (Mächler, "Accurately computing log(1 - exp(-|a|))").
  """
  x = ensure_arraylike("log1mexp", x)
  c = jnp.log(2.0)
  return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


# d/dx log(1 - e^-x) = e^-x / (1 - e^-x) = 1 / expm1(x)
log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))
