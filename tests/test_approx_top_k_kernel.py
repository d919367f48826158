"""``approx_max_k``/``approx_min_k``'s impl: the k largest (smallest) by a
partition and a sort of those k (``sort_kernels.top_k``) for NumPy dtypes of
up to 32 bits, the same values and indices as its general path (a stable
argsort of whole rows: ties in index order, NaN largest, -0.0 == 0.0)."""
import numpy as np
import pytest

import openjax as jax
from openjax import lax
from openjax._src.primitives.sort import approx_top_k


def _data(shape, dtype, seed):
  rng = np.random.default_rng(seed)
  if np.dtype(dtype).kind == "f":
    x = rng.integers(-20, 20, shape).astype(dtype) / 4   # many ties
    flat = x.reshape(-1)
    flat[rng.integers(0, flat.size, 30)] = np.nan
    flat[rng.integers(0, flat.size, 30)] = -0.0
    flat[rng.integers(0, flat.size, 10)] = np.inf
    flat[rng.integers(0, flat.size, 10)] = -np.inf
    return x
  if np.dtype(dtype).kind == "b":
    return rng.integers(0, 2, shape).astype(bool)
  info = np.iinfo(dtype)
  return rng.integers(max(info.min, -50), min(info.max, 50), shape).astype(dtype)


def _same(got, want):
  assert got.dtype == want.dtype and got.shape == want.shape
  bits = lambda a: np.ascontiguousarray(a).view(np.uint8) if a.dtype.kind == "f" else a  # noqa: E731
  np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8, np.int16,
                                   np.bool_])
@pytest.mark.parametrize("is_max_k", [True, False])
@pytest.mark.parametrize("shape,axis", [((5000,), 0), ((8, 700), 1), ((700, 6), 0),
                                        ((3, 900, 2), 1)])
def test_kernel_matches_the_stable_argsort(dtype, is_max_k, shape, axis):
  x = _data(shape, dtype, seed=len(shape) * 7 + axis)
  for size in (1, 17, shape[axis] // 2 + 3, shape[axis]):
    got = approx_top_k._approx_top_k_impl(
        x, k=size, reduction_dimension=axis, recall_target=0.95, is_max_k=is_max_k,
        reduction_input_size_override=-1, aggregate_to_topk=True)
    want = approx_top_k._approx_top_k_argsort(x, size, axis, is_max_k)
    _same(got[0], want[0])
    _same(got[1], want[1])


def test_values_through_the_public_functions():
  rng = np.random.default_rng(3)
  x = rng.standard_normal((4, 3000)).astype(np.float32)
  vals, idx = lax.approx_max_k(jax.numpy.asarray(x), 50)
  order = np.argsort(-x, axis=-1, kind="stable")[:, :50]
  np.testing.assert_array_equal(np.asarray(idx), order)
  np.testing.assert_array_equal(np.asarray(vals), np.take_along_axis(x, order, -1))
  vals, idx = lax.approx_min_k(jax.numpy.asarray(x), 50, aggregate_to_topk=False)
  size = idx.shape[-1]
  order = np.argsort(x, axis=-1, kind="stable")[:, :size]
  np.testing.assert_array_equal(np.asarray(idx), order)
  np.testing.assert_array_equal(np.asarray(vals), np.take_along_axis(x, order, -1))


def test_numpy_dtypes_take_the_partition_kernel(monkeypatch):
  def whole_row_sort(*args):
    raise AssertionError("sorted whole rows")
  monkeypatch.setattr(approx_top_k, "_approx_top_k_argsort", whole_row_sort)
  x = _data((4, 3000), np.float32, seed=5)
  for is_max_k in (True, False):
    values, idx = approx_top_k._approx_top_k_impl(
        x, k=10, reduction_dimension=1, recall_target=0.95, is_max_k=is_max_k,
        reduction_input_size_override=-1, aggregate_to_topk=True)
    assert values.shape == idx.shape == (4, 10)
