"""Small names JAX 0.10.2 has that openjax lacked: jax.errors'
InconclusiveDimensionOperation and JaxprTypeError, jnp.linalg.tensordot."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.core.jaxpr import JaxprTypeError


def test_error_classes():
  assert issubclass(jax.errors.JaxprTypeError, TypeError)
  assert issubclass(jax.errors.InconclusiveDimensionOperation, Exception)
  # The error check_jaxpr and the control-flow type checks raise.
  assert jax.errors.JaxprTypeError is JaxprTypeError


def test_linalg_tensordot_has_the_array_api_signature():
  a, b = jnp.arange(6.0).reshape(2, 3), jnp.arange(12.0).reshape(3, 4)
  np.testing.assert_allclose(jnp.linalg.tensordot(a, b, axes=1), np.tensordot(a, b, 1))
  np.testing.assert_allclose(jnp.linalg.tensordot(a, a), np.tensordot(a, a))
  with pytest.raises(TypeError):
    jnp.linalg.tensordot(a, b, 1)  # JAX: axes is keyword-only


def test_fwd_and_bwd_reuses_one_backward():
  x, w, ct = jnp.arange(4.0).reshape(2, 2), jnp.full((2, 2), 2.0), jnp.ones((2, 2))
  f = lambda x, w: jnp.sin(x @ w)  # noqa: E731
  fwd, bwd = jax.fwd_and_bwd(f, argnums=(0, 1))
  y, residuals = fwd(x, w)
  _, f_vjp = jax.vjp(f, x, w)
  np.testing.assert_allclose(y, f(x, w), rtol=1e-6)
  for got, want in zip(bwd(residuals, ct), f_vjp(ct)):
    np.testing.assert_allclose(got, want, rtol=1e-6)
  y2, residuals2 = fwd(x + 1, w)
  np.testing.assert_allclose(bwd(residuals2, ct)[1], jax.vjp(f, x + 1, w)[1](ct)[1], rtol=1e-6)


def test_fwd_and_bwd_single_argnum_with_aux():
  x, w = jnp.arange(4.0).reshape(2, 2), jnp.full((2, 2), 2.0)
  fwd, bwd = jax.fwd_and_bwd(lambda x, w: (x @ w, x.sum()), argnums=1, has_aux=True,
                             jitted=False)
  y, residuals, aux = fwd(x, w)
  assert float(aux) == 6.0
  np.testing.assert_allclose(bwd(residuals, jnp.ones((2, 2))),
                             np.asarray(x).T @ np.ones((2, 2)))


def test_low_bit_dtypes_promote_as_jax():
  # JAX 0.10.2: int1/uint1 join only themselves (and bool, Python ints);
  # float6s behave as the float8s (int8 -> float6, float32 -> error).
  assert jnp.dtype(jnp.int1) == np.dtype("int1") and jnp.iinfo(jnp.uint1).max == 1
  assert float(jnp.finfo(jnp.float6_e3m2fn).max) == 28.0
  assert jnp.issubdtype(jnp.uint1, jnp.unsignedinteger)
  assert jnp.promote_types(jnp.int1, bool) == jnp.int1
  assert jnp.promote_types(jnp.float6_e2m3fn, jnp.int8) == jnp.float6_e2m3fn
  for a, b in [(jnp.int1, jnp.int8), (jnp.uint1, jnp.float32), (jnp.float6_e2m3fn, jnp.float32)]:
    with pytest.raises(jax.dtypes.TypePromotionError):
      jnp.promote_types(a, b)
  assert jax.dtypes.itemsize_bits(jnp.int1) == 1 and jax.dtypes.itemsize_bits(jnp.float6_e2m3fn) == 6
