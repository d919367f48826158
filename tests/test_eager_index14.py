"""Session 14's eager ``x.at[]`` shortcuts: a few index vectors replaced one
by one (``scatter_kernels._few_writes``) and bounds-checked from a list,
the scatter bound with parameters made once per plan
(``index_update._bind_params``) and plans of a single index Array found
by its id (``index_plans._ARRAY_INDEX_PLANS``): the impl's bits, jit's
values, the same errors, and the traced path untouched."""
import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.core.avals import ShapedArray
from openjax._src.core.trace import make_plan
from openjax._src.numpy import index_plans, index_update
from openjax._src.primitives.index import gather_scatter, scatter_kernels
from openjax._src.primitives.index.indexing_util import (GatherScatterMode,
                                                         ScatterDimensionNumbers as SD)

_DTYPES = [np.dtype(t) for t in (np.float32, np.float16, ml_dtypes.bfloat16, np.int8,
                                 np.uint8, np.int64, np.bool_, np.complex64)]
_MODES = [GatherScatterMode.FILL_OR_DROP, GatherScatterMode.PROMISE_IN_BOUNDS,
          GatherScatterMode.CLIP]


def _draw(rng, dt, *shape):
  v = rng.standard_normal(shape) * 3
  if dt.kind == "c":
    v = v + 1j * rng.standard_normal(shape)
  v = v > 0 if dt == np.bool_ else v.astype(dt)
  if dt.kind == "f" and v.size:
    v.reshape(-1)[::5] = np.nan
    v.reshape(-1)[1::5] = -0.0
  return v


def _same_bits(got, want):
  want = np.ascontiguousarray(want)
  assert got.dtype == want.dtype and got.shape == want.shape
  np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


def _few_cases(dt, rng):
  """(operand, indices, updates, dnums): at most 8 index vectors on one
  indexed dimension: leading rows, elements, a trailing dimension with batch
  dimensions, repeats (the last write wins), negatives, out of bounds, huge
  unsigned values, broadcast scalars, empty operands and updates."""
  m = _draw(rng, dt, 5, 3)
  cube = _draw(rng, dt, 3, 4, 2)
  return [
      (m, np.array([[4], [0], [4]], np.int32), _draw(rng, dt, 3, 3), SD((1,), (0,), (0,))),
      (m, np.array([[1], [7], [-1], [1]], np.int32), _draw(rng, dt, 4, 3), SD((1,), (0,), (0,))),
      (m, np.array([[2], [2]], np.int8), np.broadcast_to(_draw(rng, dt, 3), (2, 3)),
       SD((1,), (0,), (0,))),
      (_draw(rng, dt, 6), np.array([[5], [0], [5], [-6], [6]], np.int32), _draw(rng, dt, 5),
       SD((), (0,), (0,))),
      (_draw(rng, dt, 6), np.array([[3]], np.uint64), _draw(rng, dt, 1), SD((), (0,), (0,))),
      (_draw(rng, dt, 6), np.array([[2**63 + 1]], np.uint64), _draw(rng, dt, 1),
       SD((), (0,), (0,))),
      (_draw(rng, dt, 6), np.array([[1], [4]], np.int64),
       np.broadcast_to(_draw(rng, dt, 1).reshape(()), (2,)), SD((), (0,), (0,))),
      (cube, np.array([[[3], [0], [3]], [[1], [9], [2]]], np.int16), _draw(rng, dt, 2, 3, 3, 2),
       SD((2, 3), (1,), (1,))),
      (cube, np.array([[1], [1]], np.uint8), _draw(rng, dt, 3, 2, 2), SD((0, 2), (1,), (1,))),
      (_draw(rng, dt, 0, 3), np.array([[0]], np.int32), _draw(rng, dt, 1, 3),
       SD((1,), (0,), (0,))),
      (m, np.zeros((0, 1), np.int32), _draw(rng, dt, 0, 3), SD((1,), (0,), (0,))),
  ]


@pytest.mark.parametrize("dt", _DTYPES, ids=str)
def test_few_writesd_vectors_give_the_impls_bits(dt, monkeypatch):
  calls = []
  real = scatter_kernels._few_writes
  monkeypatch.setattr(scatter_kernels, "_few_writes",
                      lambda *a: calls.append(1) or real(*a))
  rng = np.random.default_rng(14)
  p = gather_scatter.scatter_p
  for operand, indices, updates, dn in _few_cases(dt, rng):
    for mode in _MODES:
      params = dict(dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
                    mode=mode, update_jaxpr=None, update_consts=())
      kernel, lean, *_ = make_plan(p, [ShapedArray(a.shape, a.dtype)
                                       for a in (operand, indices, updates)], params)
      assert lean
      with np.errstate(all="ignore"):
        _same_bits(kernel(operand, indices, updates), p.impl(operand, indices, updates,
                                                             **params)[0])
  assert calls   # the few-vector kernel ran (not CLIP: that clamps on the column)


@pytest.mark.parametrize("p", [gather_scatter.scatter_add_p, gather_scatter.scatter_min_p,
                               gather_scatter.scatter_mul_p], ids=lambda p: p.name)
@pytest.mark.parametrize("dt", [np.dtype(np.float32), np.dtype(np.int8), np.dtype(np.uint8)],
                         ids=str)
def test_few_vectors_bounds_from_a_list_give_the_impls_bits(p, dt):
  rng = np.random.default_rng(3)
  for operand, indices, updates, dn in _few_cases(dt, rng):
    params = dict(dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
                  mode=GatherScatterMode.FILL_OR_DROP, update_jaxpr=None, update_consts=())
    kernel, lean, *_ = make_plan(p, [ShapedArray(a.shape, a.dtype)
                                     for a in (operand, indices, updates)], params)
    assert lean
    with np.errstate(all="ignore"):
      _same_bits(kernel(operand, indices, updates),
                 p.impl(operand, indices, updates, **params)[0])


def test_few_writes_keeps_the_kernel_on_large_rows():
  """A few vectors with long rows: the eval trace checks the kernel at size
  1 and keeps it; values as NumPy's (the last write wins)."""
  x = np.arange(3 * 50_000, dtype=np.float32).reshape(3, 50_000)
  i = np.array([2, 0, 2], np.int32)
  u = np.stack([np.full(50_000, v, np.float32) for v in (7, 8, 9)])
  want = x.copy()
  want[i] = u
  np.testing.assert_array_equal(jnp.asarray(x).at[jnp.asarray(i)].set(jnp.asarray(u)), want)


_OPS = ["set", "add", "subtract", "multiply", "min", "max"]


@pytest.mark.parametrize("op", _OPS)
@pytest.mark.parametrize("mode", [None, "clip", "drop", "promise_in_bounds", "fill"])
def test_direct_bind_gives_jits_values_and_never_the_wrappers(op, mode, monkeypatch):
  def refuse(*a, **k):
    raise AssertionError("the eager path went through the lax wrapper")
  x = jnp.asarray(np.arange(12, dtype=np.float32).reshape(4, 3))
  i = jnp.asarray(np.array([3, -1, 0, 7], np.int32))
  u = jnp.asarray(np.linspace(-2, 2, 12, dtype=np.float32).reshape(4, 3))
  f = lambda x, i, u: getattr(x.at[i], op)(u, mode=mode)
  want = jax.jit(f)(x, i, u)
  monkeypatch.setattr(index_update, "_scatter_by_plan", refuse)
  for _ in range(2):   # the parameters made, then found
    got = f(x, i, u)
    assert got.dtype == want.dtype and got.weak_type == want.weak_type
    np.testing.assert_array_equal(got, want)


def test_direct_bind_keeps_the_unique_and_sorted_flags_and_mode_errors():
  x = jnp.zeros(5, jnp.int32)
  i = jnp.asarray(np.array([1, 3], np.int32))
  jaxpr = jax.make_jaxpr(lambda x, i: x.at[i].add(1, unique_indices=True,
                                                    indices_are_sorted=True))(x, i)
  assert "unique_indices=True" in str(jaxpr) and "indices_are_sorted=True" in str(jaxpr)
  np.testing.assert_array_equal(x.at[i].add(1, unique_indices=True, indices_are_sorted=True),
                                [0, 1, 0, 1, 0])
  for _ in range(2):
    with pytest.raises(ValueError, match='Unknown gather mode "bogus"'):
      x.at[i].set(1, mode="bogus")


def test_plans_of_an_index_array_follow_shape_normalize_and_x64():
  i = jnp.asarray(np.array([-1, 2], np.int32))
  a = jnp.asarray(np.arange(5, dtype=np.int32))
  b = jnp.asarray(np.arange(8, dtype=np.int32))
  for _ in range(2):
    np.testing.assert_array_equal(a.at[i].set(9), [0, 1, 9, 3, 9])
    np.testing.assert_array_equal(b.at[i].set(9), [0, 1, 9, 3, 4, 5, 6, 9])
    # without wrapping, -1 is out of bounds: dropped
    np.testing.assert_array_equal(a.at[i].set(9, wrap_negative_indices=False),
                                  [0, 1, 9, 3, 4])
  assert any(hit[0][0] is i for hit in index_plans._ARRAY_INDEX_PLANS.values())
  with jax.enable_x64(True):
    c = jnp.asarray(np.arange(5, dtype=np.int64))
    out = c.at[i].add(1)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [0, 1, 3, 3, 5])


def test_a_deleted_index_array_raises_as_before():
  x = jnp.zeros(4)
  i = jnp.asarray(np.array([1, 2], np.int32))
  x.at[i].set(1.0)   # its plan cached
  i.delete()
  with pytest.raises(RuntimeError):
    x.at[i].set(1.0)


def test_the_traced_jaxpr_is_unchanged_by_the_eager_shortcuts():
  x = jnp.zeros((4, 3))
  i = jnp.asarray(np.array([3, 0], np.int32))
  u = jnp.ones((2, 3))
  x.at[i].set(u)   # the eager caches warm
  text = str(jax.make_jaxpr(lambda x, u: x.at[i].set(u))(x, u))
  assert "scatter" in text and "mode=GatherScatterMode.FILL_OR_DROP" in text
  np.testing.assert_array_equal(jax.jit(lambda x, u: x.at[i].set(u))(x, u),
                                x.at[i].set(u))


def test_plans_of_tuple_indices_key_their_arrays_and_static_entries():
  x = jnp.asarray(np.arange(12, dtype=np.int32).reshape(3, 4))
  xn = np.arange(12, dtype=np.int32).reshape(3, 4)
  i = jnp.asarray(np.array([2, 0], np.int32))
  j = jnp.asarray(np.array([1, -1], np.int32))
  k = jnp.asarray(np.array([0, 0], np.int32))
  for _ in range(2):
    for idx, nidx in [((slice(None), i), (slice(None), [2, 0])),
                      ((i, slice(1, None)), ([2, 0], slice(1, None))),
                      ((i, slice(2, None)), ([2, 0], slice(2, None))),
                      ((i, j), ([2, 0], [1, -1])), ((k, j), ([0, 0], [1, -1])),
                      ((i, 1), ([2, 0], 1)), ((1, j), (1, [1, -1])),
                      ((None, i), (None, [2, 0])), ((Ellipsis, j), (Ellipsis, [1, -1]))]:
      want = xn.copy()
      np.maximum.at(want, nidx, 100) if nidx[0] is not None else None
      got = x.at[idx].max(100)
      if nidx[0] is None:
        want = xn.copy()
        want[[2, 0]] = 100
      np.testing.assert_array_equal(got, want, err_msg=str(idx))
  # a scalar bool and the int 1 are different indices
  np.testing.assert_array_equal(x.at[True, i].set(-1), np.where(
      np.isin(np.arange(3), [2, 0])[:, None], -1, xn))
  np.testing.assert_array_equal(x.at[1, i].set(-1)[1], [-1, 5, -1, 7])
  assert sum(type(key) is tuple and len(key) == 2 for key in index_plans._ARRAY_INDEX_PLANS) >= 3


def test_takes_by_an_index_array_follow_mode_fill_shape_and_normalize():
  xn = np.arange(12, dtype=np.float32).reshape(4, 3)
  x, y = jnp.asarray(xn), jnp.asarray(xn[:3])
  i = jnp.asarray(np.array([3, -1, 5, -7], np.int32))
  m = jnp.asarray(np.array([True, False, True, True]))
  s = jnp.asarray(np.int32(-1))   # a dynamic slice: not a gather plan
  for _ in range(2):
    np.testing.assert_array_equal(x[i], xn[[3, 3, 3, 0]])   # clamped
    np.testing.assert_array_equal(y[i], xn[[2, 2, 2, 0]])
    np.testing.assert_array_equal(x.at[i].get(mode="fill", fill_value=-1),
                                  np.where(np.array([1, 1, 0, 0], bool)[:, None],
                                           xn[[3, 3, 0, 0]], -1))
    np.testing.assert_array_equal(x.at[i].get(mode="fill", fill_value=-2.5),
                                  jax.jit(lambda x: x.at[i].get(mode="fill",
                                                                fill_value=-2.5))(x))
    np.testing.assert_array_equal(x.at[i].get(mode="clip"), xn[[3, 3, 3, 0]])
    np.testing.assert_array_equal(x.at[i].get(mode="fill", wrap_negative_indices=False),
                                  jax.jit(lambda x: x.at[i].get(
                                      mode="fill", wrap_negative_indices=False))(x))
    np.testing.assert_array_equal(x[m], xn[[0, 2, 3]])
    np.testing.assert_array_equal(x[s], xn[-1])
  assert any(hit[0] is i for hit in index_plans._ARRAY_TAKE_PLANS.values())
  assert not any(hit[0] is s for hit in index_plans._ARRAY_TAKE_PLANS.values())
  text = str(jax.make_jaxpr(lambda x: x[i])(x))
  assert "gather" in text and "mode=GatherScatterMode.PROMISE_IN_BOUNDS" in text
