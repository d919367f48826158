"""Eager ``x[idx]`` with integer index arrays (NumPy, or Arrays) among
Python ints, slices, None and Ellipsis: NumPy's advanced indexing of the
value with the indices wrapped and clamped (``numpy/index_plans.
_eager_numpy_take``). The same values, shapes, dtypes and weak types as the
gather a traced ``x[idx]`` runs, out-of-bounds reads clamped."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.numpy import index_plans

A = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5) * 0.5 - 7.0
I2 = np.array([2, 0])
IOOB = np.array([[5, -1], [-7, 1]])     # wrapped, then clamped
U8 = np.array([3, 1, 250], np.uint8)

INDICES = [
    I2, (I2,), (slice(None), I2), (Ellipsis, I2), (I2, slice(1, 3)), (I2, I2), (I2, 1, I2),
    (I2, slice(None), I2), (None, I2, None), (IOOB,), (slice(None), IOOB), (1, IOOB, U8[:2]),
    (np.array(2),), (np.array([], np.int32),), (slice(None, None, -1), I2, slice(4, 0, -2)),
    (IOOB[:, :, None], I2, np.array([[0, 4]])), (-1, U8), (np.int64(0) + I2, Ellipsis, None),
    (7, I2), (I2.astype(np.int8), -9),
]


def _traced(idx):
  return jax.jit(lambda v: v[idx])


def _same(got, want):
  assert got.shape == want.shape and got.dtype == want.dtype
  assert got.weak_type == want.weak_type
  np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@pytest.mark.parametrize("idx", INDICES, ids=[repr(i).replace("\n", "") for i in INDICES])
def test_integer_array_indices_match_the_gather(idx):
  x = jnp.asarray(A)
  got = x[idx]
  _same(got, _traced(idx)(x))
  with pytest.raises(ValueError):
    np.asarray(got).flat[0:1] = 0 if got.size else np.empty(0)   # read-only


def test_array_indices_and_numpy_oracle():
  x = jnp.asarray(A)
  i = jnp.asarray(np.array([[1, -1], [0, 2]]))
  got = x[i, :, jnp.asarray(np.array([4, 0]))]
  want = A[np.array([[1, 2], [0, 2]]), :, np.array([4, 0])]
  np.testing.assert_array_equal(np.asarray(got), want)
  _same(got, jax.jit(lambda v, a, b: v[a, :, b])(x, i, jnp.asarray(np.array([4, 0]))))


def test_the_numpy_path_serves_integer_arrays(monkeypatch):
  calls = []
  made = index_plans._eager_numpy_take

  def counting(*args):
    out = made(*args)
    calls.append(out is not None)
    return out
  monkeypatch.setattr(index_plans, "_eager_numpy_take", counting)
  x = jnp.asarray(A)
  x[I2, 1:3]
  x[A > 0]                    # a mask: the general path
  x[jnp.asarray(I2), None]
  assert calls == [True, False, True]


def test_indices_that_do_not_broadcast_raise_the_general_paths_error():
  x = jnp.asarray(A)
  with pytest.raises(ValueError, match="Incompatible shapes") as eager:
    x[I2, np.array([0, 1, 2])]
  with pytest.raises(ValueError) as traced:
    jax.jit(lambda v: v[I2, np.array([0, 1, 2])])(x)
  assert str(eager.value) == str(traced.value)


def test_weak_types_dtypes_and_devices():
  w = jax.lax.broadcast(jax.jit(lambda: 2.5)(), (4, 3))
  assert w.weak_type
  _same(w[I2], _traced(I2)(w))
  for dt in [np.int8, np.uint16, np.bool_, np.complex64, jnp.bfloat16]:
    x = jnp.asarray((A * 3).astype(dt))
    _same(x[I2, :, IOOB], _traced((I2, slice(None), np.array(IOOB)))(x))
  device = jax.devices()[0]
  c = jax.device_put(jnp.asarray(A), device)
  out = c[I2]
  assert out.committed and out.devices() == {device}
  assert not jnp.asarray(A)[I2].committed


def test_traced_indexing_still_gathers():
  x = jnp.asarray(A)
  jaxpr = jax.make_jaxpr(lambda v: v[I2, 1:3])(x)
  assert "gather" in {e.primitive.name for e in jaxpr.jaxpr.eqns}
