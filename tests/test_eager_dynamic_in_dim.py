"""Eager ``lax.dynamic_slice_in_dim`` / ``dynamic_index_in_dim`` /
``dynamic_update_slice_in_dim`` / ``dynamic_update_index_in_dim`` with a
concrete scalar start (primitives/index/dynamic_slicing.py ``_eager_start``):
the start wrapped (in the index's dtype) and clamped on the host, then a static
``slice`` (or a ``dynamic_update_slice`` of Python-int starts). The results
against the same calls under jit (which stage ``dynamic_slice`` /
``dynamic_update_slice`` and run their impls), bit for bit, with dtypes and
weak types, for every index form and out-of-bounds values; errors kept."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core import eval_trace
from openjax._src.primitives.index.dynamic_slicing import dynamic_slice_p

_VALUES = [0, 2, 4, 5, 7, -1, -5, -6, -300, -301, 299, 300, 1000, -1000]


def _forms(v):
  forms = [v, np.int32(v), np.asarray(v, np.int32), jnp.asarray(np.int32(v)), np.int64(v)]
  if -128 <= v <= 127:
    forms += [np.int8(v), jnp.asarray(np.int8(v))]
  if 0 <= v <= 255:
    forms += [np.uint8(v), jnp.asarray(np.uint8(v))]
  return forms


def _same(got, want):
  assert got.dtype == want.dtype and got.shape == want.shape
  assert got.aval.weak_type == want.aval.weak_type
  np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8),
                                np.ascontiguousarray(want).view(np.uint8))


_X = jnp.asarray(np.random.default_rng(0).standard_normal((5, 300)).astype(np.float32))


@pytest.mark.parametrize("v", _VALUES)
def test_slice_and_index_in_dim_match_jit(v):
  for i in _forms(v):
    for axis, size in [(0, 2), (1, 3), (1, 300), (0, 1), (1, 0)]:
      want = jax.jit(lambda x, j: lax.dynamic_slice_in_dim(x, j, size, axis))(_X, i)
      _same(lax.dynamic_slice_in_dim(_X, i, size, axis), want)
    for axis in (0, 1):
      for keep in (True, False):
        want = jax.jit(lambda x, j: lax.dynamic_index_in_dim(x, j, axis, keep))(_X, i)
        _same(lax.dynamic_index_in_dim(_X, i, axis, keep), want)


@pytest.mark.parametrize("v", _VALUES)
def test_update_in_dim_match_jit(v):
  u = jnp.asarray(np.arange(1500, dtype=np.float32).reshape(5, 300))
  for i in _forms(v):
    for axis in (0, 1):
      part = u[:2] if axis == 0 else u[:, :7]
      row = u[0] if axis == 0 else u[:, 0]
      want = jax.jit(lambda x, p, j: lax.dynamic_update_slice_in_dim(x, p, j, axis))(_X, part, i)
      _same(lax.dynamic_update_slice_in_dim(_X, part, i, axis), want)
      want = jax.jit(lambda x, r, j: lax.dynamic_update_index_in_dim(x, r, j, axis))(_X, row, i)
      _same(lax.dynamic_update_index_in_dim(_X, row, i, axis), want)


def test_eager_concrete_start_is_a_static_slice():
  eval_trace.clear_cache()
  lax.dynamic_index_in_dim(_X, jnp.asarray(np.int32(3)), 1, keepdims=False)
  lax.dynamic_slice_in_dim(_X, -2, 2, 0)
  assert dynamic_slice_p not in eval_trace._last
  jaxpr = jax.make_jaxpr(lambda x, j: lax.dynamic_slice_in_dim(x, j, 2, 1))(_X, 3)
  assert [e.primitive.name for e in jaxpr.eqns] == ["lt", "add", "select_n", "dynamic_slice"]


def test_errors_kept():
  with pytest.raises(ValueError, match="out of bounds"):
    lax.dynamic_slice_in_dim(_X, -1, 2, 0, allow_negative_indices=False)
  with pytest.raises(TypeError):
    lax.dynamic_slice_in_dim(_X, 0, 6, 0)   # larger than the dimension
  with pytest.raises(TypeError):
    lax.dynamic_update_slice_in_dim(_X, jnp.zeros((2, 300), jnp.float16), 1, 0)
  with pytest.raises(TypeError):   # a float start: the general path's error
    lax.dynamic_slice_in_dim(_X, 1.0, 2, 0)
