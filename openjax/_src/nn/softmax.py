"""Log-sum-exp reductions and the softmax family of ``jax.nn``: ``logsumexp``
(also ``jax.scipy.special.logsumexp``), ``logmeanexp``, ``softmax``,
``log_softmax``.

All subtract the running maximum before exponentiating (through
``stop_gradient``, so the shift does not enter derivatives) and accept a
``where`` mask; masked-out entries contribute nothing to the sums.
"""
from __future__ import annotations

from functools import partial

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.custom_derivatives import custom_jvp
from openjax._src.api.jit import jit
from openjax._src.config import config, debug_nans
from openjax._src.nn import jnp
from openjax._src.numpy.eager_programs import eager_program
from openjax._src.numpy.reductions import _count, _reduction_dims
from openjax._src.numpy.util import ensure_arraylike, promote_args_inexact

__all__ = ["logsumexp", "logmeanexp", "softmax", "log_softmax"]

# JAX's switch between softmax's two derivative formulations (off by default
# in JAX 0.10: the max-shifted expression is differentiated as written).
if not hasattr(config, "jax_softmax_custom_jvp"):
  config.define("jax_softmax_custom_jvp", False,
                "Use a custom_jvp rule for jax.nn.softmax (JAX's upgrade flag).",
                validator=bool)


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False,
              where=None):
  r"""Log-sum-exp reduction: ``log(sum(b * exp(a), axis))``, computed stably.

  Args:
    a: the input array.
    axis: axis or tuple of axes to reduce (None: all).
    b: optional scaling factors for the exponentials, broadcastable to ``a``;
      entries where ``b == 0`` are excluded (even where ``a`` is inf or NaN).
    keepdims: keep the reduced axes as size-1 dimensions.
    return_sign: also return the sign of the sum; the result is then the log
      of its absolute value. Otherwise a negative sum gives NaN.
    where: boolean mask of the elements to include.

  Returns:
    The result, or ``(result, sign)`` with ``return_sign=True``.
  """
  if where is not None:
    a = jnp.where(where, a, 0)
  if b is not None:
    a, b = promote_args_inexact("logsumexp", a, b)
    # A zero weight removes the term outright: exp(a) may be inf or NaN there.
    a = jnp.where(b != 0, a, -np.inf)
  else:
    a, = promote_args_inexact("logsumexp", a)
  dims = _reduction_dims(a, axis)
  is_complex = dtypes.issubdtype(a.dtype, np.complexfloating)
  amax = jnp.max(jnp.real(a), axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
  # An infinite (or empty, -inf) maximum would make a - amax NaN: shift by 0.
  amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, lax.full_like(amax, 0)))
  amax_with_dims = amax if keepdims else lax.expand_dims(amax, dims)
  exp_a = lax.exp(lax.sub(a, amax_with_dims.astype(a.dtype)))
  if b is not None:
    exp_a = lax.mul(exp_a, b)
  sumexp = jnp.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
  sign = lax.sign(sumexp)
  if return_sign or not is_complex:
    sumexp = jnp.abs(sumexp)
  out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
  if return_sign:
    return out, sign
  if b is not None and not is_complex:
    # The NaN here is the documented answer for a negative sum, not an error.
    with debug_nans(False):
      out = jnp.where(sign < 0, jnp.array(np.nan, dtype=out.dtype), out)
  return out


@partial(jit, static_argnames=("axis", "keepdims"))
def logmeanexp(x, axis=None, where=None, keepdims: bool = False):
  r"""Log-mean-exp: ``logsumexp(x, axis) - log(n)``, ``n`` the number of
  elements reduced (those selected by ``where``, if given)."""
  lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
  count = _count(x, axis, keepdims, where, lse.dtype)
  return lse - jnp.log(count)


@partial(jit, static_argnames=("axis",))
def log_softmax(x, axis=-1, where=None):
  r"""Log-softmax: ``x - logsumexp(x, axis, keepdims=True)``.

  Args:
    x: input array.
    axis: axis or tuple of axes to normalise over (None: all).
    where: elements to include; the others come out as ``-inf``.

  A ``+inf`` input makes the whole slice NaN (``inf - inf``), as in JAX.
  """
  x = ensure_arraylike("log_softmax", x)
  x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
  x_safe = x if where is None else jnp.where(where, x, -np.inf)
  shifted = x_safe - lax.stop_gradient(x_max)
  shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
  result = shifted - shifted_logsumexp
  if where is not None:
    return jnp.where(where, result, -np.inf)
  return result


# Not jitted in JAX: eagerly one cached program, traced inline (JAX's jaxpr).
@eager_program(static_argnames=("axis",))
def softmax(x, axis=-1, where=None):
  r"""Softmax: ``exp(x) / sum(exp(x), axis, keepdims=True)``, so that the
  outputs along ``axis`` are in ``[0, 1]`` and sum to 1.

  Args:
    x: input array.
    axis: axis or tuple of axes to normalise over (None: all).
    where: elements to include; the others come out as 0.

  A ``+inf`` input makes the whole slice NaN (``inf / inf``), as in JAX. With
  ``jax.config.update('jax_softmax_custom_jvp', True)`` the derivative is the
  closed form ``y * (t - sum(y * t))`` instead of that of the expression.
  """
  if config.read("jax_softmax_custom_jvp"):
    return _softmax(x, axis, where)
  return _softmax_plain(x, axis, where)


def _softmax_terms(x, axis, where, initial, shift):
  x_max = jnp.max(x, axis, where=where, initial=initial, keepdims=True)
  x_safe = x if where is None else jnp.where(where, x, initial)
  unnormalized = jnp.exp(x_safe - shift(x_max))
  result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
  if where is not None:
    result = jnp.where(where, result, 0)
  return result


def _softmax_plain(x, axis=-1, where=None, initial=-np.inf):
  return _softmax_terms(x, axis, where, initial, lax.stop_gradient)


@partial(custom_jvp, nondiff_argnums=(1,))
def _softmax(x, axis=-1, where=None, initial=-np.inf):
  return _softmax_terms(x, axis, where, initial, lambda m: m)


@_softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
  (x, where, initial), (x_dot, _, _) = primals, tangents
  y = _softmax(x, axis, where, initial)
  return y, y * (x_dot - jnp.sum(y * x_dot, axis, where=where, keepdims=True))
