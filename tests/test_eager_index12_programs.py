"""Eager paths of jnp index functions: ``unravel_index`` and
``ravel_multi_index`` (wrap/clip/ignore) as one library program each
(``eager_program``; unravel_index as a clamp, a wrap and a rem/div per
dimension where the size fits the indices' dtype), ``compress``/``extract``
with ``size`` (host positions and one gather), ``choose`` of an array of
choices (its rows by one unstack), ``take_along_axis`` with host indices:
values and dtypes against NumPy's definitions, eager against jit (the staged
forms), the errors the wrappers keep, and the short jaxpr of unravel_index."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.core import eval_trace
from openjax._src.primitives.shape.shape import slice_p
from openjax._src.primitives.shape.stacking import unstack_p

_INT_DTYPES = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]
_SHAPES = [(3, 4), (2, 3), (5,), (2, 3, 4), (1, 7), (11, 12), (100, 100), (127,)]


def _unravel_ref(i, shape):
  """JAX's out-of-bounds rule: past the end the last element, -size..-1
  wrap, before -size the first element."""
  size = int(np.prod(shape))
  c = np.clip(np.asarray(i).astype(np.int64), -size, size - 1)
  return np.unravel_index(np.where(c < 0, c + size, c), shape)


# sizes that fit the dtype (the short form; the general form: the next test)
_CASES = [(d, s) for d in _INT_DTYPES for s in _SHAPES if np.prod(s) <= np.iinfo(d).max]


@pytest.mark.parametrize("dtype,shape", _CASES, ids=str)
def test_unravel_index_values(dtype, shape):
  info = np.iinfo(dtype)
  rng = np.random.default_rng(len(shape))
  i = rng.integers(max(info.min, -3000), min(info.max, 3000), 60).astype(dtype)
  i = np.concatenate([i, np.array([info.min, info.max, 0, 1], dtype)])
  want = _unravel_ref(i, shape)
  for got in (jnp.unravel_index(jnp.asarray(i), shape),
              jax.jit(lambda a: jnp.unravel_index(a, shape))(jnp.asarray(i))):
    assert len(got) == len(shape)
    for g, w in zip(got, want):
      assert np.asarray(g).dtype == np.dtype(dtype)
      np.testing.assert_array_equal(np.asarray(g), w.astype(dtype))


def test_unravel_index_general_form_and_errors():
  # int8 indices of 128 elements: the size does not fit int8 (the general form)
  i = np.array([0, 5, 127, -1], np.int8)
  got = jnp.unravel_index(jnp.asarray(i), (128,))
  np.testing.assert_array_equal(np.asarray(got[0]), [0, 5, 127, 127])
  np.testing.assert_array_equal(np.asarray(jnp.unravel_index(jnp.arange(3), (0, 3))[1]),
                                np.asarray(jax.jit(lambda a: jnp.unravel_index(a, (0, 3)))(
                                    jnp.arange(3))[1]))
  with pytest.raises(TypeError, match="indices must be integers"):
    jnp.unravel_index(jnp.arange(3.0), (3,))
  with pytest.raises(ValueError, match="shape should be a scalar or 1D"):
    jnp.unravel_index(jnp.arange(3), ((3, 2),))


def test_unravel_index_jaxpr_is_short():
  jaxpr = jax.make_jaxpr(lambda i: jnp.unravel_index(i, (3, 4)))(jnp.arange(5))
  # clamp, lt, add, select, then rem/div/rem: the general form had ~24
  assert len(jaxpr.eqns) <= 8, jaxpr


@pytest.mark.parametrize("mode", ["wrap", "clip", "ignore", "raise"])
@pytest.mark.parametrize("order", ["C", "F"])
def test_ravel_multi_index(mode, order):
  rng = np.random.default_rng(3)
  lo, hi = (0, 3) if mode in ("raise", "ignore") else (-20, 20)
  a = rng.integers(lo, hi, 30).astype(np.int32)
  b = rng.integers(lo, hi, 30).astype(np.int32)
  np_mode = mode if mode != "ignore" else "raise"
  want = np.ravel_multi_index((a, b), (3, 5), mode=np_mode, order=order)
  got = jnp.ravel_multi_index((jnp.asarray(a), jnp.asarray(b)), (3, 5), mode=mode, order=order)
  assert got.dtype == np.int32
  np.testing.assert_array_equal(np.asarray(got), want)
  if mode != "raise":
    jitted = jax.jit(lambda x, y: jnp.ravel_multi_index((x, y), (3, 5), mode=mode, order=order))
    np.testing.assert_array_equal(np.asarray(jitted(a, b)), want)


def test_ravel_multi_index_errors():
  with pytest.raises(ValueError, match="invalid entry"):
    jnp.ravel_multi_index((jnp.array([3]), jnp.array([0])), (3, 5))
  with pytest.raises(ValueError, match="invalid mode"):
    jnp.ravel_multi_index((jnp.array([1]), jnp.array([0])), (3, 5), mode="bad")
  with pytest.raises(ValueError, match="invalid order"):
    jnp.ravel_multi_index((jnp.array([1]), jnp.array([0])), (3, 5), mode="clip", order="K")


@pytest.mark.parametrize("size", [0, 1, 3, 5, 9])
def test_compress_and_extract_with_size(size):
  rng = np.random.default_rng(size)
  c = rng.random(9) > 0.5
  x = rng.random((9, 2)).astype(np.float32)
  kept = x[c]
  want = np.full((size, 2), 7, np.float32)
  want[:min(size, len(kept))] = kept[:size]
  got = jnp.compress(jnp.asarray(c), jnp.asarray(x), axis=0, size=size, fill_value=7)
  np.testing.assert_array_equal(np.asarray(got), want)
  got_t = jnp.compress(jnp.asarray(c), jnp.asarray(x.T), axis=1, size=size, fill_value=7)
  np.testing.assert_array_equal(np.asarray(got_t), want.T)
  jitted = jax.jit(lambda cc, xx: jnp.compress(cc, xx, axis=0, size=size, fill_value=7))
  np.testing.assert_array_equal(np.asarray(jitted(c, x)), want)
  got_e = jnp.extract(jnp.asarray(c), jnp.asarray(x[:, 0]), size=size)
  want_e = np.zeros(size, np.float32)
  want_e[:min(size, len(kept))] = kept[:size, 0]
  np.testing.assert_array_equal(np.asarray(got_e), want_e)
  with pytest.raises(ValueError, match="size must be positive"):
    jnp.compress(jnp.asarray(c), jnp.asarray(x), axis=0, size=10)


@pytest.mark.parametrize("mode", ["clip", "wrap", "raise"])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.bool_], ids=lambda d: np.dtype(d).name)
def test_choose_with_an_array_of_choices(mode, dtype):
  rng = np.random.default_rng(7)
  lo, hi = (0, 26) if mode == "raise" else (-30, 60)
  a = rng.integers(lo, hi, (40,)).astype(np.int32)
  x = (rng.standard_normal((26, 40)) * 5).astype(dtype)
  want = np.choose(a, x, mode=mode)
  eval_trace.clear_cache()
  got = jnp.choose(jnp.asarray(a), jnp.asarray(x), mode=mode)
  assert got.dtype == want.dtype
  np.testing.assert_array_equal(np.asarray(got), want)
  # eagerly the rows come from one unstack, not a slice and a squeeze each
  assert slice_p not in eval_trace._last and unstack_p in eval_trace._last
  if mode != "raise":
    jitted = jax.jit(lambda i, c: jnp.choose(i, c, mode=mode))
    np.testing.assert_array_equal(np.asarray(jitted(a, x)), want)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.uint32, np.int16],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("mode", [None, "clip", "fill"])
def test_take_along_axis_host_indices_match_jit(dtype, mode):
  # host indices: one copy in the index dtype wrapped in place; the traced
  # path converts and selects. uint32 values past int32 read as negatives.
  rng = np.random.default_rng(1)
  info = np.iinfo(dtype)
  x = rng.standard_normal((6, 5)).astype(np.float32)
  i = rng.integers(max(info.min, -10), min(info.max, 10), (4, 5)).astype(dtype)
  i[0, 0], i[1, 1] = info.max, info.min
  for axis, idx in ((0, i), (None, i.ravel())):
    got = jnp.take_along_axis(jnp.asarray(x), idx, axis=axis, mode=mode)
    want = jax.jit(lambda a, j: jnp.take_along_axis(a, j, axis=axis, mode=mode))(x, idx)
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint8, np.bool_, np.float16,
                                   np.complex64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("fill", [0, -3, 7.5, np.nan, True, 300, np.int8(-5)], ids=repr)
def test_compress_host_gather_matches_traced(dtype, fill):
  # eagerly: host positions and one gather with the fill; traced: nonzero's
  # scan, max, gather and select. The same bits, the fill cast the same way.
  rng = np.random.default_rng(5)
  c = rng.random(9) > 0.5
  x = (rng.standard_normal((9, 3)) * 10).astype(dtype)
  with np.errstate(invalid="ignore"):
    for axis, cc, size in ((0, c, 4), (0, c, 9), (1, c[:3], 2), (None, c, 5)):
      got = jnp.compress(jnp.asarray(cc), jnp.asarray(x), axis=axis, size=size, fill_value=fill)
      want = jax.jit(lambda a, b: jnp.compress(a, b, axis=axis, size=size, fill_value=fill))(cc, x)
      assert got.dtype == want.dtype and got.shape == want.shape
      np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8),
                                    np.ascontiguousarray(want).view(np.uint8))
