"""Op-table rows for custom derivatives and checkpointing: ``stop_gradient``,
``custom_jvp_call``, ``custom_vjp_call``, ``remat2`` and ``name``.

``custom_lin`` (the linearised custom_vjp) cannot run eagerly by design
(forward mode of a custom_vjp raises); tests/test_custom_derivatives.py
covers it."""
import numpy as np

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax.ad_checkpoint import checkpoint_name
from tests.ops.harness import OpRow

F32 = np.float32


def _arrs(*shapes, dtype=F32):
  return lambda rng: tuple(rng.standard_normal(s).astype(dtype) for s in shapes)


@jax.custom_jvp
def _log1pexp(x):
  return jnp.log(1. + jnp.exp(x))


@_log1pexp.defjvp
def _log1pexp_jvp(primals, tangents):
  x, = primals
  t, = tangents
  return _log1pexp(x), t * (1. - 1. / (1. + jnp.exp(x)))


@jax.custom_jvp
def _scaled(x, y):
  return jnp.sin(x) * y


_scaled.defjvps(lambda t, ans, x, y: jnp.cos(x) * t * y, lambda t, ans, x, y: jnp.sin(x) * t)


@jax.custom_vjp
def _sin_mul(x, y):
  return jnp.sin(x) * y


def _sin_mul_fwd(x, y):
  return _sin_mul(x, y), (jnp.cos(x), jnp.sin(x), y)


def _sin_mul_bwd(res, g):
  cos_x, sin_x, y = res
  return (cos_x * g * y, sin_x * g)


_sin_mul.defvjp(_sin_mul_fwd, _sin_mul_bwd)


def _log1pexp_ref(x):
  return np.log1p(np.exp(x))


ROWS = [
    OpRow("stop_gradient_f32", lax.stop_gradient, _arrs((3, 4)), ref=lambda x: x),
    OpRow("stop_gradient_i32", lax.stop_gradient,
          lambda rng: (rng.integers(-5, 5, (4,)).astype(np.int32),), ref=lambda x: x),
    OpRow("custom_jvp_log1pexp", _log1pexp, _arrs((5,)), ref=_log1pexp_ref, grad=True),
    OpRow("custom_jvp_defjvps", _scaled, _arrs((3,), (3,)),
          ref=lambda x, y: np.sin(x) * y, grad=True),
    OpRow("custom_vjp_sin_mul", _sin_mul, _arrs((2, 3), (2, 3)),
          ref=lambda x, y: np.sin(x) * y),
    OpRow("checkpoint_sin_mul", jax.checkpoint(lambda x, y: jnp.sin(jnp.sin(x)) * y),
          _arrs((4,), (4,)), ref=lambda x, y: np.sin(np.sin(x)) * y, grad=True),
    OpRow("checkpoint_dots_policy",
          jax.checkpoint(lambda x, y: jnp.tanh(x @ y), policy=jax.checkpoint_policies.dots_saveable),
          _arrs((2, 3), (3, 4)), ref=lambda x, y: np.tanh(x @ y), grad=True, atol=1e-5),
    OpRow("checkpoint_name", lambda x: checkpoint_name(jnp.sin(x), "s"), _arrs((3,)),
          ref=np.sin, grad=True),
]
