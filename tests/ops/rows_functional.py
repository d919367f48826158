"""Op-table rows for the vmap-built ``jax.numpy`` helpers: ``vectorize``
(plain and with gufunc signatures, several outputs, excluded arguments),
``piecewise`` (``lax.switch`` under ``vectorize``), ``apply_along_axis`` and
``apply_over_axes``. NumPy's own versions (Python loops) are the references.

Sample inputs of ``piecewise`` keep clear of the condition boundaries, so the
finite differences of the grad column never straddle a switch between pieces.
"""
import numpy as np

import openjax.numpy as jnp
from tests.ops.harness import OpRow

F32 = np.float32


def _normal(*shapes):
  return lambda rng: tuple(rng.standard_normal(s).astype(F32) for s in shapes)


# ------------------------------------------------------------- vectorize
def _scalar_fn(a, b):
  return a * jnp.sin(b) + b


def _scalar_fn_ref(a, b):
  return a * np.sin(b) + b


_vec_scalar = jnp.vectorize(_scalar_fn)
_vec_scalar_ref = np.vectorize(_scalar_fn_ref)

_vec_matvec = jnp.vectorize(jnp.matmul, signature="(m,n),(n)->(m)")
_vec_matvec_ref = np.vectorize(np.matmul, signature="(m,n),(n)->(m)")

_vec_matmul = jnp.vectorize(jnp.matmul, signature="(m,n),(n,k)->(m,k)")
_vec_matmul_ref = np.vectorize(np.matmul, signature="(m,n),(n,k)->(m,k)")


def _norm_and_cumsum(v):
  return jnp.sum(v * v), jnp.cumsum(v)


def _norm_and_cumsum_ref(v):
  return np.sum(v * v), np.cumsum(v)


_vec_two_out = jnp.vectorize(_norm_and_cumsum, signature="(n)->(),(n)")
_vec_two_out_ref = np.vectorize(_norm_and_cumsum_ref, signature="(n)->(),(n)")


def _affine(a, p):
  return a * p[0] + p[1]


_vec_excluded = jnp.vectorize(_affine, excluded={1})
_vec_excluded_ref = np.vectorize(_affine, excluded={1})


# ------------------------------------------------------------- piecewise
def _away_from_half(shape):
  # |x| in [0.6, 2.1): never within reach of the boundaries at +-0.5.
  def make(rng):
    x = rng.uniform(0.6, 2.1, shape) * rng.choice([-1, 1], shape)
    return (x.astype(F32),)
  return make


def _piecewise3(x):
  return jnp.piecewise(x, [x < -0.5, x > 0.5], [lambda t: t * t, jnp.sin, lambda t: 2 * t])


def _piecewise3_ref(x):
  return np.piecewise(x, [x < -0.5, x > 0.5], [lambda t: t * t, np.sin, lambda t: 2 * t])


def _piecewise_consts(x):
  # The last true condition wins where both hold; constants are cast to x's dtype.
  return jnp.piecewise(x, [x < 2, x > -2], [lambda t: t * 3, 7.5, -1])


def _piecewise_consts_ref(x):
  return np.piecewise(x, [x < 2, x > -2], [lambda t: t * 3, 7.5, -1])


def _piecewise_extra_args(x, a):
  return jnp.piecewise(x, [x < 0.5], [lambda t, s: s * t, lambda t, s: jnp.exp(t) - s], a)


def _piecewise_extra_args_ref(x, a):
  return np.piecewise(x, [x < 0.5], [lambda t, s: s * t, lambda t, s: np.exp(t) - s], a)


def _int_samples(rng):
  return (rng.integers(-4, 5, (3, 4)).astype(np.int32),)


# ------------------------------------------------ apply_along/over_axes
def _outer_head(v):
  return jnp.outer(v, v[:2])


def _apply_outer(a):
  return jnp.apply_along_axis(_outer_head, 0, a)


def _apply_outer_ref(a):
  return np.apply_along_axis(lambda v: np.outer(v, v[:2]), 0, a)


def _apply_scalar(a):
  return jnp.apply_along_axis(lambda v: jnp.sum(v * v) * v[0], 1, a)


def _apply_scalar_ref(a):
  return np.apply_along_axis(lambda v: np.sum(v * v) * v[0], 1, a)


def _over_axes(a):
  return jnp.apply_over_axes(jnp.sum, a, [0, 2])


def _over_axes_ref(a):
  return np.apply_over_axes(np.sum, a, [0, 2])


def _over_axes_cumsum(a):
  return jnp.apply_over_axes(jnp.cumsum, a, [1, -1])


def _over_axes_cumsum_ref(a):
  return np.apply_over_axes(np.cumsum, a, [1, -1])


ROWS = [
    OpRow("vectorize_scalar", _vec_scalar, _normal((2, 3), (3,)), _vec_scalar_ref, grad=True),
    OpRow("vectorize_unit_loop_dims", _vec_scalar, _normal((1, 3, 1), (2, 1, 1, 4)),
          _vec_scalar_ref),
    OpRow("vectorize_matvec", _vec_matvec, _normal((4, 2, 3), (3,)), _vec_matvec_ref,
          grad=True),
    OpRow("vectorize_matmul_bcast", _vec_matmul, _normal((2, 1, 2, 3), (4, 3, 2)),
          _vec_matmul_ref, grad=True),
    OpRow("vectorize_two_outputs", _vec_two_out, _normal((2, 4)), _vec_two_out_ref, grad=True),
    OpRow("vectorize_excluded", _vec_excluded, _normal((2, 3), (2,)), _vec_excluded_ref,
          grad=True),
    OpRow("piecewise", _piecewise3, _away_from_half((2, 5)), _piecewise3_ref, grad=True),
    OpRow("piecewise_consts_int", _piecewise_consts, _int_samples, _piecewise_consts_ref),
    OpRow("piecewise_extra_args", _piecewise_extra_args,
          lambda rng: _away_from_half((6,))(rng) + (np.asarray(rng.standard_normal(), F32),),
          _piecewise_extra_args_ref, grad=True),
    OpRow("apply_along_axis_outer", _apply_outer, _normal((3, 2, 4)), _apply_outer_ref,
          grad=True),
    OpRow("apply_along_axis_scalar", _apply_scalar, _normal((2, 3, 4)), _apply_scalar_ref,
          grad=True),
    OpRow("apply_over_axes_sum", _over_axes, _normal((2, 3, 4)), _over_axes_ref, grad=True),
    OpRow("apply_over_axes_cumsum", _over_axes_cumsum, _normal((2, 3, 4)),
          _over_axes_cumsum_ref, grad=True),
]
