"""The gather take kernel's clamping by ``np.take(mode="clip")`` and
``select_n``'s kernel for a broadcast scalar case (``jnp.where(isnan(a),
inf, a)``): the impl's / np.where's bits on edge indices and values."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import openjax.numpy as jnp
from openjax._src.primitives.elementwise import logic
from openjax._src.primitives.index import gather_scatter
from openjax._src.primitives.index.indexing_util import GatherDimensionNumbers, GatherScatterMode
from tests.test_eager_scatter_gather_kernels import _lean_kernel, _same_bits

_INDEX_DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64]
_MODES = [(GatherScatterMode.CLIP, None), (GatherScatterMode.PROMISE_IN_BOUNDS, None),
          (GatherScatterMode.FILL_OR_DROP, None), (GatherScatterMode.FILL_OR_DROP, -0.0)]


def _extreme_indices(idt, n: int) -> np.ndarray:
  """Each index dtype's extremes, negatives, the ends and one past them."""
  info = np.iinfo(idt)
  values = [info.min, -1, 0, 1, n - 1, n, n + 1, info.max, -n]
  return np.array([v for v in values if info.min <= v <= info.max], dtype=idt)


@pytest.mark.parametrize("idt", _INDEX_DTYPES, ids=str)
def test_take_kernel_clamps_extreme_indices_as_the_impl(idt):
  x = np.array([[np.nan, -0.0, 1.5, np.inf, -2.0], [0.0, -np.inf, 3.0, -0.0, 7.0],
                [1.0, 2.0, np.nan, 4.0, 5.0]], np.float32)
  gd = GatherDimensionNumbers
  checked = 0
  for axis, dn, sizes in ((0, gd((1,), (0,), (0,)), (1, 5)), (1, gd((0,), (1,), (1,)), (3, 1))):
    col = _extreme_indices(idt, x.shape[axis])
    for idx in (col[:, None], col.reshape(-1, 1)[:1].reshape(1, 1, 1)):
      for mode, fill in _MODES:
        params = dict(dimension_numbers=dn, slice_sizes=sizes, unique_indices=False,
                      indices_are_sorted=False, mode=mode, fill_value=fill)
        kernel = _lean_kernel(gather_scatter.gather_p, [x, idx], params)
        assert kernel is not None
        _same_bits(kernel(x, idx), gather_scatter.gather_p.impl(x, idx, **params)[0])
        checked += 1
  assert checked == 2 * 2 * 4


def test_take_clamps_eagerly():
  x = jnp.asarray(np.array([-0.0, 1.0, np.nan], np.float32))
  i = np.array([-7, 0, 2, 3, 2**31 - 1], np.int32)
  got = np.asarray(jnp.take(x, i, mode="clip"))
  np.testing.assert_array_equal(got.view(np.uint32),
                                np.asarray(x)[np.clip(i, 0, 2)].view(np.uint32))
  got = np.asarray(jnp.take(x, i, mode="fill", fill_value=-1.0))
  np.testing.assert_array_equal(got, np.array([-1.0, -0.0, np.nan, -1.0, -1.0], np.float32))


_SELECT_DTYPES = [np.dtype(t) for t in (np.float32, np.float16, ml_dtypes.bfloat16, np.int8,
                                        np.uint16, np.int32, np.int64, np.bool_, np.complex64)]


@pytest.mark.parametrize("dt", _SELECT_DTYPES, ids=str)
@pytest.mark.parametrize("ns_per_element", [0.0, 1e9], ids=["blend", "where"])
def test_select_n_broadcast_scalar_case_gives_np_where_bits(dt, ns_per_element, monkeypatch):
  # The probe's threshold forced either way (predicates neither sparse nor dense);
  # sparse, dense, none and all set take the copies.
  monkeypatch.setattr(logic, "_BLEND_NS_PER_ELEMENT", ns_per_element)
  rng = np.random.default_rng(2)
  n = logic._BLEND_MIN_SIZE + 5
  a = (rng.standard_normal(n) * 100).astype(dt)
  if dt.kind in "fc":
    a[:6] = [np.nan, -0.0, np.inf, -np.inf, 0.0, -np.nan]
    scalars = [np.array(v, dt) for v in (np.inf, -0.0, np.nan)]
  else:
    scalars = [np.array(v, dt) for v in (1, 0)]
  random = rng.random(n) < 0.5
  sparse = np.zeros(n, bool)
  sparse[::997] = True
  for value in scalars:
    c = np.broadcast_to(value, (n,))
    for which in (random, sparse, ~sparse, np.zeros(n, bool), np.ones(n, bool)):
      for on_false, on_true in ((a, c), (c, a)):
        kernel = _lean_kernel(logic.select_n_p, [which, on_false, on_true], {})
        got = kernel(which, on_false, on_true)
        _same_bits(got, np.where(which, on_true, on_false))
        assert not np.shares_memory(got, a)
  # 2-D operands and a broadcast scalar of a 2-D shape.
  a2, w2 = a[:n - 5].reshape(-1, 4), random[:n - 5].reshape(-1, 4)
  c2 = np.broadcast_to(scalars[0], a2.shape)
  _same_bits(logic._select2_large(w2, a2, c2), np.where(w2, c2, a2))
  _same_bits(logic._select2_large(w2, c2, a2), np.where(w2, a2, c2))


def test_nanmin_nanmax_of_large_arrays():
  rng = np.random.default_rng(4)
  a = rng.standard_normal(logic._BLEND_MIN_SIZE * 2).astype(np.float32)
  a[::1000] = np.nan
  assert float(jnp.nanmin(a)) == np.nanmin(a)
  assert float(jnp.nanmax(a)) == np.nanmax(a)
  a[:] = np.nan
  assert np.isnan(float(jnp.nanmin(a)))


@pytest.mark.parametrize("dtype", [np.int32, np.float32], ids=str)
def test_one_window_gather_is_a_fresh_copy_in_output_order(dtype):
  """``x[1:, i]`` / ``x[i, 1:]`` with ``i`` of shape (1,): one window, copied
  once (not np.stack) into the output's layout; out of bounds clamps, or
  fills with mode='fill'; the same values under jit."""
  import openjax as jax   # noqa: PLC0415
  x = np.arange(37 * 29).astype(dtype).reshape(37, 29)
  xa = jnp.asarray(x)
  for i in (np.array([2], np.int32), np.array([-1], np.int32), np.array([40], np.int32)):
    ia = jnp.asarray(i)
    want = x[1:, np.clip(np.where(i < 0, i + 29, i), 0, 28)]
    got = xa[1:, ia]
    _same_bits(np.asarray(got), want)
    assert got.shape == (36, 1) and np.asarray(got).flags.c_contiguous
    assert not np.shares_memory(np.asarray(got), np.asarray(xa))
    _same_bits(np.asarray(jax.jit(lambda x, i: x[1:, i])(xa, ia)), want)
    rows = xa[ia, 1:]
    _same_bits(np.asarray(rows), x[np.clip(np.where(i < 0, i + 37, i), 0, 36), 1:])
  filled = xa.at[1:, jnp.asarray(np.array([40], np.int32))].get(mode="fill", fill_value=-7)
  _same_bits(np.asarray(filled), np.full((36, 1), -7, dtype))
