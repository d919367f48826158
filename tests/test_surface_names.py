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
