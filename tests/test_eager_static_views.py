"""An eager ``x[idx]`` with a static index (Python ints, slices, None,
Ellipsis) after its first call: one NumPy basic index of the value
(``numpy/index_plans._EAGER_VIEWS``), the result the slice, rev, squeeze and
expand_dims primitives give: NumPy's values, the operand's dtype and weak
type, its device when committed, read-only."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.numpy import index_plans

A = np.arange(2 * 5 * 6, dtype=np.float32).reshape(2, 5, 6)

INDICES = [
    0, -1, 1, (1, 2), (-1, -5, -6), (slice(None), 1), (Ellipsis, 2), (None, Ellipsis),
    (None, 0, None, slice(1, 4)), slice(None, None, -1), (slice(None), slice(None, None, -2)),
    (0, slice(4, 0, -1), slice(5, None, -3)), (slice(1, 1),), (0, slice(3, 1)),
    (slice(None), slice(None, None, 2), slice(1, None, 4)), (Ellipsis, None),
    (1, Ellipsis, slice(-2, None)), (slice(-100, 100), 3), (0, slice(None, None, -7)),
    (slice(None), None, slice(2, 5, 2), -2),
]


def _check(x, a, idx):
  got = x[idx]
  want = a[idx]
  assert got.shape == want.shape and got.dtype == x.dtype
  assert got.weak_type == x.weak_type
  np.testing.assert_array_equal(np.asarray(got), want)
  return got


@pytest.mark.parametrize("idx", INDICES, ids=[repr(i) for i in INDICES])
def test_static_index_views_match_numpy(idx):
  index_plans._EAGER_VIEWS.clear()
  x = jnp.asarray(A)
  first = _check(x, A, idx)          # the primitives
  assert index_plans._EAGER_VIEWS or first is x   # (x[...]: the Array itself)
  again = _check(x, A, idx)          # the view
  assert again.aval == first.aval
  with pytest.raises(ValueError):
    np.asarray(again).flat[0] = -1   # read-only, as every Array
  np.testing.assert_array_equal(np.asarray(x), A)


def test_random_static_indices_against_numpy():
  rng = np.random.default_rng(0)
  x = jnp.asarray(A)
  for _ in range(300):
    idx, axis = [], 0
    while axis < A.ndim and rng.integers(0, 4):
      d = A.shape[axis]
      kind = rng.integers(0, 3)
      if kind == 0:
        idx.append(int(rng.integers(-d, d)))
      elif kind == 1:
        lo, hi = (int(v) if v != d + 9 else None for v in rng.integers(-d - 2, d + 10, 2))
        step = int(rng.choice([-3, -2, -1, 1, 2, 3]))
        idx.append(slice(lo, hi, step))
      else:
        idx.append(None)
        continue
      axis += 1
    idx = tuple(idx)
    for _ in range(2):   # the primitives, then the view
      _check(x, A, idx)


def test_out_of_bounds_ints_give_the_first_calls_result():
  x = jnp.asarray(A)
  for idx in [5, (0, 7), (Ellipsis, -9), (None, 2, 0)]:
    first = np.asarray(x[idx])
    np.testing.assert_array_equal(np.asarray(x[idx]), first)


def test_dtypes_and_weak_types():
  for a in [A.astype(np.int8), A > 3, (A + 1j * A).astype(np.complex64)]:
    x = jnp.asarray(a)
    for _ in range(2):
      _check(x, a, (1, slice(None, None, -2)))
  weak = jax.lax.broadcast(jax.jit(lambda: 1.5)(), (4, 3))
  assert weak.weak_type
  for _ in range(2):
    _check(weak, np.full((4, 3), 1.5, np.float32), (None, 1, slice(None, None, -1)))


def test_committed_operands_keep_their_device():
  device = jax.devices()[0]
  x = jax.device_put(jnp.asarray(A), device)
  for _ in range(2):
    got = x[1, :, 2]
    assert got.committed and got.devices() == {device}
    np.testing.assert_array_equal(np.asarray(got), A[1, :, 2])
  y = jnp.asarray(A)
  for _ in range(2):
    assert not y[1, :, 2].committed


def test_deleted_operand_raises():
  x = jnp.asarray(A) + 0
  x[0]
  x[0]
  x.delete()
  with pytest.raises(RuntimeError, match="deleted"):
    x[0]


def test_traced_indexing_is_unchanged():
  x = jnp.asarray(A)
  x[1, ::-1]
  jaxpr = jax.make_jaxpr(lambda v: v[1, ::-1])(x)
  assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["slice", "rev", "squeeze"]
  np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v[1, ::-1])(x)), A[1, ::-1])
