"""``x.at[i].apply(f)`` and ``lax.scatter_apply`` eagerly: the combiner traced
once per function (numpy/index_update.py ``_apply_scatter_op``) and applied
by rank on vectors (primitives/index/scatter_apply.py), against a Python loop
that applies ``f`` at every index in order, bit for bit: repeated, negative
and out-of-bounds indices, every layout (elements, rows, two index columns,
one window, batched indices under vmap), modes, dtypes with wrapping and
rounding, combiners that do not run on vectors, and the trace cache's keys."""
import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core.avals import ShapedArray
from openjax._src.core.trace import make_plan
from openjax._src.numpy import index_update
from openjax._src.primitives.index import gather_scatter, scatter_apply


def _same_bits(got, want) -> None:
  got, want = np.asarray(got), np.ascontiguousarray(want)
  assert got.dtype == want.dtype and got.shape == want.shape
  np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


def _loop_apply(x, index, f, mode=None):
  """``f`` applied at each index of ``index`` (an int array along axis 0 or
  a tuple of them), in order, one element (row) at a time, the result cast
  to ``x``'s dtype each time: what JAX's scatter_apply computes."""
  out = np.array(x, copy=True)
  cols = index if isinstance(index, tuple) else (index,)
  cols = np.broadcast_arrays(*[np.asarray(c) for c in cols])
  shape = out.shape
  for pos in zip(*[c.reshape(-1).tolist() for c in cols]):
    where = []
    skip = False
    for d, p in enumerate(pos):
      if p < 0:
        p += shape[d]
      if mode == "clip":
        p = min(max(p, 0), shape[d] - 1)
      elif not 0 <= p < shape[d]:
        skip = True
      where.append(p)
    if skip:
      continue
    where = tuple(where)
    with np.errstate(all="ignore"):
      out[where] = np.asarray(f(out[where])).astype(out.dtype)
  return out


def _affine(v):
  return v * 3 + 1


_DTYPES = [np.int32, np.int8, np.uint8, np.float32, np.float16, ml_dtypes.bfloat16,
           np.complex64]


@pytest.mark.parametrize("dtype", _DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n_index", [3, 40, 300])
def test_repeated_indices_apply_in_order(dtype, n_index):
  rng = np.random.default_rng(n_index)
  x = (rng.standard_normal(7) * 4).astype(dtype)
  i = rng.integers(-7, 7, n_index)   # many repeats: up to ~n/14 applications a position
  got = jnp.asarray(x).at[i].apply(_affine)
  _same_bits(got, _loop_apply(x, i, _affine))


@pytest.mark.parametrize("mode", [None, "drop", "clip", "promise_in_bounds"])
def test_modes_and_out_of_bounds(mode):
  x = np.arange(6, dtype=np.int32)
  i = np.array([9, -1, 2, 2, -8, 5, 5, 5])
  got = jnp.asarray(x).at[i].apply(_affine, mode=mode)
  _same_bits(got, _loop_apply(x, i, _affine, "clip" if mode == "clip" else None))


def test_layouts_rows_columns_window():
  rng = np.random.default_rng(1)
  x = rng.integers(-5, 5, (5, 4)).astype(np.int32)
  rows = np.array([1, 3, 1, 1, -1])
  _same_bits(jnp.asarray(x).at[rows].apply(_affine),
             _loop_apply(x, rows, lambda r: r * 3 + 1))
  big = rng.integers(-5, 5, (3000, 3)).astype(np.int32)   # rows over _ROWS_MAX elements
  many = rng.integers(0, 3000, 2000)
  _same_bits(jnp.asarray(big).at[many].apply(_affine), _loop_apply(big, many, _affine))
  a, b = np.array([0, 4, 0, 2]), np.array([3, 1, 3, 0])
  _same_bits(jnp.asarray(x).at[a, b].apply(_affine), _loop_apply(x, (a, b), _affine))
  want = x.copy()
  want[:, [2, 0, 2]] = want[:, [2, 0, 2]]   # columns: f twice at column 2
  want[:, 0] = want[:, 0] * 3 + 1
  want[:, 2] = (want[:, 2] * 3 + 1) * 3 + 1
  _same_bits(jnp.asarray(x).at[:, np.array([2, 0, 2])].apply(_affine), want)
  want = x.copy()
  want[1:, 2] = want[1:, 2] * 3 + 1   # one window: the kernel's window layout
  _same_bits(jnp.asarray(x).at[1:, 2].apply(_affine), want)
  want = x.copy()
  want[2] = want[2] * 3 + 1
  _same_bits(jnp.asarray(x).at[2].apply(_affine), want)


def test_batched_indices_under_vmap():
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  idx = np.array([[0, 0], [3, 1], [2, 2]])
  got = jax.vmap(lambda r, i: r.at[i].apply(jnp.sqrt))(jnp.asarray(x), jnp.asarray(idx))
  want = np.stack([_loop_apply(r, i, np.sqrt) for r, i in zip(x, idx)])
  _same_bits(got, want)


def test_wrapping_and_rounding_between_applications():
  # int8 wraps on every application; float16 rounds each result
  x = np.array([100, 3], np.int8)
  i = np.array([0, 0, 0, 1])
  _same_bits(jnp.asarray(x).at[i].apply(lambda v: v * 2 + 1),
             _loop_apply(x, i, lambda v: np.int8(v * np.int8(2) + np.int8(1))))
  h = np.array([0.1, 1.7], np.float16)
  j = np.array([1, 0, 1, 1, 0])
  _same_bits(jnp.asarray(h).at[j].apply(lambda v: v * 1.1),
             _loop_apply(h, j, lambda v: np.float16(v * np.float16(1.1))))
  # a combiner of another dtype: each result cast back (sin of int32)
  k = np.array([1, 2, 3], np.int32)
  _same_bits(jnp.asarray(k).at[np.array([0, 0, 2])].apply(lambda v: (v * 7).astype(jnp.float32) / 2),
             _loop_apply(k, np.array([0, 0, 2]), lambda v: np.float32(v * 7) / np.float32(2)))


def test_combiners_that_do_not_run_on_vectors():
  x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
  i = np.array([3, 1, 3])

  def dot_self(v):   # dot_general of scalars: an outer product on vectors
    return jnp.dot(v, v) + 1

  def via_broadcast(v):   # broadcast_in_dim to (2,) and a sum: a scalar shape fixed
    return jnp.sum(jnp.broadcast_to(v, (2,)))

  for f, ref in [(dot_self, lambda v: v * v + 1), (via_broadcast, lambda v: v + v)]:
    _same_bits(jnp.asarray(x).at[i].apply(f), _loop_apply(x, i, ref))
  _same_bits(jnp.asarray(x).at[i].apply(lambda v: 5.0),
             _loop_apply(x, i, lambda v: np.float32(5)))


def test_closures_and_consts():
  x = np.arange(5, dtype=np.float32)
  table = jnp.asarray(np.float32(2.5))
  i = np.array([0, 4, 4])
  _same_bits(jnp.asarray(x).at[i].apply(lambda v: v * table),
             _loop_apply(x, i, lambda v: v * np.float32(2.5)))
  outs = []
  for scale in (2.0, 3.0):
    outs.append(jnp.asarray(x).at[i].apply(lambda v: v * scale))
  _same_bits(outs[0], _loop_apply(x, i, lambda v: v * np.float32(2)))
  _same_bits(outs[1], _loop_apply(x, i, lambda v: v * np.float32(3)))


def test_trace_cache_keys():
  traces = []

  def make(k):
    def f(v):
      traces.append(k)
      return v + k
    return f

  x = jnp.arange(4, dtype=jnp.int32)
  i = np.array([1, 1])
  for _ in range(3):   # a lambda made anew each trip: traced once
    x.at[i].apply(lambda v: (traces.append("lambda"), v * 2)[1])
  assert traces.count("lambda") == 1
  one, two = make(1), make(2)   # the same code, other closure contents: traced each
  _same_bits(x.at[i].apply(one), np.array([0, 3, 2, 3], np.int32))
  _same_bits(x.at[i].apply(two), np.array([0, 5, 2, 3], np.int32))
  _same_bits(x.at[i].apply(one), np.array([0, 3, 2, 3], np.int32))
  assert traces == ["lambda", 1, 2]
  # other dtypes and flags trace again
  jnp.arange(4.0).at[i].apply(one)
  assert traces == ["lambda", 1, 2, 1]
  with jax.enable_x64(True):
    jnp.arange(4.0).at[i].apply(one)
  assert traces == ["lambda", 1, 2, 1, 1]


def test_eager_plan_is_lean_and_reused():
  x = jnp.arange(6, dtype=jnp.float32)
  op1 = index_update._apply_scatter_op(jnp.sin, np.dtype(np.float32))
  op2 = index_update._apply_scatter_op(jnp.sin, np.dtype(np.float32))
  assert op1 is op2
  closed = op1.__closure__[0].cell_contents
  dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                   scatter_dims_to_operand_dims=(0,))
  params = dict(dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
                mode=gather_scatter.GatherScatterMode.FILL_OR_DROP, update_jaxpr=closed,
                update_consts=())
  avals = [ShapedArray((6,), np.float32), ShapedArray((3, 1), np.int32),
           ShapedArray((3,), np.float32)]
  kernel, lean, *_ = make_plan(gather_scatter.scatter_p, avals, params)
  assert lean
  got = kernel(np.asarray(x), np.array([[5], [0], [5]], np.int32), np.zeros(3, np.float32))
  _same_bits(got, _loop_apply(np.asarray(x), np.array([5, 0, 5]), np.sin))


def test_combiner_runners_made_once_per_width():
  f = lambda v: v - 1  # noqa: E731
  closed = index_update._apply_scatter_op(f, np.dtype(np.int32)).__closure__[0].cell_contents
  c = scatter_apply.combiner(closed, ())
  assert scatter_apply.combiner(closed, ()) is c
  flat = np.zeros(100, np.int32)
  lin = np.r_[np.zeros(50, np.int64), np.arange(100)]   # position 0: 51 times
  scatter_apply.apply_in_order(c, flat, lin, np.zeros((), np.int32))
  assert flat[0] == -51 and (flat[1:] == -1).all()
  assert sorted(c.vectors) == [1, 128]


def test_lax_scatter_apply_eager_and_jit():
  x = np.arange(8, dtype=np.float32).reshape(4, 2)
  i = np.array([[3], [0], [3]], np.int32)
  dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                   scatter_dims_to_operand_dims=(0,))
  f = lambda v: v * 0.5 + 2  # noqa: E731
  want = _loop_apply(x, i[:, 0], lambda r: r * np.float32(0.5) + np.float32(2))
  _same_bits(lax.scatter_apply(jnp.asarray(x), i, f, dn, update_shape=(3, 2)), want)
  np.testing.assert_allclose(
      jax.jit(lambda a: lax.scatter_apply(a, i, f, dn, update_shape=(3, 2)))(x), want)
  np.testing.assert_allclose(jax.jit(lambda a: a.at[i[:, 0]].apply(f))(jnp.asarray(x)), want)


def test_combiner_with_effects_runs_in_the_impl(capsys):
  seen = []

  def noisy(v):
    jax.debug.callback(lambda a: seen.append(np.asarray(a).copy()), v)
    return v + 1

  x = jnp.arange(4, dtype=jnp.int32)
  got = x.at[np.array([1, 1, 3])].apply(noisy)
  _same_bits(got, np.array([0, 3, 2, 4], np.int32))
  # the callback saw the applied values only (no plan-time sample of zeros)
  assert sorted(int(v) for a in seen for v in np.atleast_1d(a)) == [1, 2, 3]
