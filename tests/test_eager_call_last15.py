"""The last-call slots of eager library calls (``api/eager_call``): a call
with static keyword or positional arguments runs the last runner only when
those arguments equal the stored ones and the leaves have its kinds."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.api import eager_call


def _x(shape=(3, 4), dtype=np.float32, seed=0):
  return jnp.asarray(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


def test_static_keywords_change_between_calls():
  x = _x()
  xn = np.asarray(x)
  for _ in range(3):
    for axis in (0, 1, -1, 0):
      np.testing.assert_array_equal(jnp.sort(x, axis=axis), np.sort(xn, axis=axis))
      np.testing.assert_array_equal(jnp.argsort(x, axis=axis),
                                    np.argsort(xn, axis=axis, kind="stable"))
    np.testing.assert_array_equal(jnp.sort(x, axis=0, descending=True),
                                  np.sort(xn, axis=0)[::-1])
    np.testing.assert_array_equal(jnp.sort(x, descending=True, axis=0),
                                  np.sort(xn, axis=0)[::-1])
    assert jnp.argsort(x, axis=0, dtype=jnp.int16).dtype == np.int16
    assert jnp.argsort(x, axis=0).dtype == np.int32


def test_static_positional_arguments_change_between_calls():
  x = _x((12,))
  xn = np.asarray(x)
  for _ in range(3):
    for kth in (0, 5, 11, 5, -1):
      got = np.asarray(jnp.partition(x, kth))
      k = kth % 12
      assert got[k] == np.sort(xn)[k]
      assert (got[:k] <= got[k]).all() and (got[k + 1:] >= got[k]).all()


def test_static_positional_of_another_type_takes_the_general_path():
  x = _x((12,))
  jnp.partition(x, 2)
  jnp.partition(x, 2)   # (the first call makes the runner, the second keeps it)
  slot = jnp.partition._eager_fast.get(eager_call._LAST)
  assert slot is not None and slot[4] == (((1, 2),), (0,))
  with pytest.raises(TypeError):   # JAX's error for a float kth, not the stored runner's
    jnp.partition(x, 2.5)
  with pytest.raises(TypeError):
    jnp.partition(_x((10,)), 2.0)
  np.testing.assert_array_equal(jnp.partition(x, 3)[3], np.sort(np.asarray(x))[3])


def test_leaves_of_other_kinds_and_flags_miss_the_slot():
  x, y = _x((3, 4)), _x((4, 3), seed=1)
  assert jnp.sort(x, axis=0).shape == (3, 4)
  assert jnp.sort(y, axis=0).shape == (4, 3)
  np.testing.assert_array_equal(jnp.sort(y.astype(jnp.int32), axis=0),
                                np.sort(np.asarray(y).astype(np.int32), axis=0))
  assert jnp.sort(x, axis=0).dtype == np.float32
  with jax.numpy_dtype_promotion("strict"):   # another state key
    assert jnp.sort(x, axis=0).shape == (3, 4)
  with jax.disable_jit():
    assert jnp.sort(x, axis=0).shape == (3, 4)
  with jax.debug_nans(True):
    with pytest.raises(FloatingPointError):
      jnp.sort(jnp.log(jnp.asarray([-1.0, 2.0])), axis=0)


def test_dynamic_keyword_arguments_are_not_kept():
  x = _x((8,))
  w1, w2 = jnp.ones(8), jnp.arange(8.0)
  i = jnp.asarray(np.arange(8) % 3)
  for _ in range(3):
    np.testing.assert_array_equal(jnp.bincount(i, weights=w1, length=3),
                                  np.bincount(np.arange(8) % 3, np.ones(8), 3))
    np.testing.assert_array_equal(jnp.bincount(i, weights=w2, length=3),
                                  np.bincount(np.arange(8) % 3, np.arange(8.0), 3))
  assert jnp.sort(x, axis=0).shape == (8,)


def test_positional_none_and_arrays_in_its_place():
  a = jnp.asarray(np.array([3.0, 1.0, 2.0, 5.0], np.float32))
  v = jnp.asarray(np.array([0.5, 2.0, 4.0, 6.0], np.float32))
  s = jnp.asarray(np.array([1, 2, 0, 3]))
  an, vn, sn = np.asarray(a), np.asarray(v), np.asarray(s)
  for _ in range(3):
    np.testing.assert_array_equal(jnp.searchsorted(jnp.sort(a), v), np.searchsorted(np.sort(an), vn))
    np.testing.assert_array_equal(jnp.searchsorted(a, v, sorter=s),
                                  np.searchsorted(an, vn, sorter=sn))
    np.testing.assert_array_equal(jnp.searchsorted(jnp.sort(a), v, side="right"),
                                  np.searchsorted(np.sort(an), vn, side="right"))
