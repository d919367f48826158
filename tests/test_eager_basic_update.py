"""Eager ``x.at[idx].set/add/subtract/multiply/min/max(y)`` at a basic
static index (in-bounds Python ints, slices, None, Ellipsis): a copy with the
indexed view assigned or combined by the NumPy ufunc
(``numpy/index_update._eager_basic_update``). The values are NumPy's, the
same as the jitted scatter's; out-of-bounds ints drop the write as the
scatter does; dtypes, weak types and devices are x's."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.numpy import index_update

A = np.arange(2 * 5 * 6, dtype=np.float32).reshape(2, 5, 6) - 20.5

OPS = {
    "set": (lambda r, y: r.set(y), lambda t, y: t.__setitem__(Ellipsis, y)),
    "add": (lambda r, y: r.add(y), lambda t, y: np.add(t, y, out=t)),
    "multiply": (lambda r, y: r.multiply(y), lambda t, y: np.multiply(t, y, out=t)),
    "min": (lambda r, y: r.min(y), lambda t, y: np.minimum(t, y, out=t)),
    "max": (lambda r, y: r.max(y), lambda t, y: np.maximum(t, y, out=t)),
}
if hasattr(jnp.zeros(1).at[0], "subtract"):
  OPS["subtract"] = (lambda r, y: r.subtract(y), lambda t, y: np.subtract(t, y, out=t))

INDICES = [0, -1, (1, 2), (1, 2, 3), (-1, -5, -6), (slice(None), 1), (Ellipsis, 2),
           (None, 0, slice(1, 4)), slice(None, None, -1), (0, slice(4, 0, -2), slice(5, None, -3)),
           (slice(1, 1),), (slice(-100, 100), 3), (Ellipsis, None, 1)]


def _numpy_update(a, idx, y, op):
  out = a.copy()
  index = idx if type(idx) is tuple else (idx,)
  if Ellipsis not in index:
    index = index + (Ellipsis,)
  OPS[op][1](out[index], y)
  return out


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("idx", INDICES, ids=[repr(i) for i in INDICES])
def test_basic_updates_match_numpy_and_the_jitted_scatter(op, idx):
  x = jnp.asarray(A)
  y = np.float32(3.25)
  got = OPS[op][0](x.at[idx], y)
  want = _numpy_update(A, idx, y, op)
  assert got.dtype == np.float32 and got.shape == A.shape and not got.weak_type
  np.testing.assert_array_equal(np.asarray(got), want)
  jitted = jax.jit(lambda v, u: OPS[op][0](v.at[idx], u))(x, jnp.asarray(y))
  np.testing.assert_array_equal(np.asarray(jitted), want)
  np.testing.assert_array_equal(np.asarray(x), A)   # x unchanged
  with pytest.raises(ValueError):
    np.asarray(got).flat[0] = 0


def test_the_fast_path_serves_basic_indices(monkeypatch):
  calls = []
  made = index_update._eager_basic_update

  def counting(*args):
    out = made(*args)
    calls.append(out is not None)
    return out
  monkeypatch.setattr(index_update, "_eager_basic_update", counting)
  x = jnp.asarray(A)
  x.at[1, 2].set(5.0)
  x.at[:, 1].multiply(2.0)
  x.at[jnp.asarray([0, 1])].add(1.0)   # an index array: the scatter
  assert calls == [True, True, False]


def test_broadcast_updates():
  x = jnp.asarray(A)
  row = np.arange(6, dtype=np.float32)
  np.testing.assert_array_equal(np.asarray(x.at[1, 2:4].add(row)),
                                _numpy_update(A, (1, slice(2, 4)), row, "add"))
  col = np.arange(5, dtype=np.float32)[:, None]
  np.testing.assert_array_equal(np.asarray(x.at[0].set(col)),
                                _numpy_update(A, 0, col, "set"))
  with pytest.raises(ValueError):
    x.at[0].set(np.ones((3, 6), np.float32))          # does not broadcast to (5, 6)
  with pytest.raises(ValueError):
    x.at[0, 0].set(np.ones((1, 1, 6), np.float32))    # more dimensions than the view


def test_out_of_bounds_ints_drop_the_write():
  x = jnp.asarray(A)
  for idx in [2, (0, 5), (Ellipsis, 6), (-3,), (1, -6, 9)]:
    np.testing.assert_array_equal(np.asarray(x.at[idx].set(7.0)), A)
    np.testing.assert_array_equal(np.asarray(x.at[idx].add(7.0)), A)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.float16,
                                   np.float64, np.complex64, np.bool_, jnp.bfloat16])
def test_dtypes(dtype):
  a = (np.arange(24).reshape(4, 6) * 37 % 250).astype(dtype)
  x = jnp.asarray(a)
  y = np.asarray(True if dtype == np.bool_ else 100, dtype)
  ops = ["set"] if dtype in (np.bool_, jnp.bfloat16) else ["set", "add", "multiply"]
  if np.dtype(dtype).kind in "iuf":
    ops += ["min", "max"]
  for op in ops:
    with np.errstate(all="ignore"):
      want = _numpy_update(a, (1, slice(0, 6, 2)), y, op)   # integer wrap-around
    got = OPS[op][0](x.at[1, ::2], y)
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(np.asarray(got), want)
    jitted = jax.jit(lambda v: OPS[op][0](v.at[1, ::2], y))(x)
    np.testing.assert_array_equal(np.asarray(jitted), want)


def test_nan_in_min_and_max():
  a = np.array([1.0, np.nan, 3.0, -0.0], np.float32)
  x = jnp.asarray(a)
  for op, ufunc in [("min", np.minimum), ("max", np.maximum)]:
    for y in [np.float32(np.nan), np.float32(2.0), np.float32(0.0)]:
      got = OPS[op][0](x.at[1:], y)
      want = a.copy()
      want[1:] = ufunc(a[1:], y)
      np.testing.assert_array_equal(np.asarray(got), want)
      np.testing.assert_array_equal(
          np.asarray(jax.jit(lambda v: OPS[op][0](v.at[1:], y))(x)), want)


def test_python_scalars_weak_types_and_devices():
  w = jax.lax.broadcast(jax.jit(lambda: 1.5)(), (3, 4))
  assert w.weak_type
  got = w.at[0, 1].add(2)
  assert got.weak_type and got.dtype == np.float32 and float(got[0, 1]) == 3.5
  n = jnp.asarray(np.arange(6, dtype=np.int32))
  assert n.at[2].set(2**31 - 1).dtype == np.int32
  device = jax.devices()[0]
  c = jax.device_put(jnp.asarray(A), device)
  out = c.at[0, 0].set(9.0)
  assert out.committed and out.devices() == {device}
  assert not jnp.asarray(A).at[0, 0].set(9.0).committed


def test_an_unsafe_cast_keeps_the_general_path():
  n = jnp.asarray(np.arange(6, dtype=np.int32))
  with pytest.warns(FutureWarning, match="cannot safely cast"):
    out = n.at[1].set(2.5)
  assert out.dtype == np.int32 and int(out[1]) == 2


def test_against_the_compiled_scatter():
  from openjax._src.config import config
  x = jnp.asarray(A)
  n = jnp.asarray(np.arange(30, dtype=np.int8).reshape(5, 6) * 9)
  with config.override("openjax_tiered_compilation", False):
    for op in ["set", "add", "max"]:
      for v, idx, y in [(x, (1, slice(4, 0, -2), slice(None)), np.float32(np.nan)),
                        (n, (Ellipsis, 2), np.int8(100))]:
        want = jax.jit(lambda u: OPS[op][0](u.at[idx], y))(v)
        got = OPS[op][0](v.at[idx], y)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
