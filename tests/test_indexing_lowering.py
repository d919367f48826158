"""Lowering of the indexing primitives (gather, the scatters, dynamic_slice,
dynamic_update_slice) to StableHLO, and IREE-compiled results against the
eager (NumPy) impl for every mode, batching dimensions, windows, index
dtypes and value dtypes. Each test compiles one module holding many cases."""
import ml_dtypes
import numpy as np
import pytest

import openjax as jax
from openjax import lax
from openjax._src.primitives.index.gather_scatter import scatter_apply_jaxpr

GDN, SDN = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers
G_ROWS = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
G_WINDOWS = GDN(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(1, 0))
G_BATCH = GDN(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
              operand_batching_dims=(0,), start_indices_batching_dims=(0,))
S_ROWS = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
S_WINDOWS = SDN(update_window_dims=(1, 2, 3), inserted_window_dims=(),
                scatter_dims_to_operand_dims=(2, 1))
S_BATCH = SDN(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
              operand_batching_dims=(0,), scatter_indices_batching_dims=(1,))
S_NO_INDEX = SDN(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=())
MODES = ("clip", "fill", "promise_in_bounds")
SCATTERS = (lax.scatter, lax.scatter_add, lax.scatter_sub, lax.scatter_mul, lax.scatter_min,
            lax.scatter_max)
ROW_IDX = np.array([[1], [3], [-1], [4], [1], [0]], np.int32)   # out of bounds and repeated


def _compiled(fn, *args):
  with jax.config.override("openjax_executor", "iree"):
    return jax.jit(fn)(*args)


def _assert_same(compiled, eager):
  for c, e in zip(jax.tree_util.tree_leaves(compiled), jax.tree_util.tree_leaves(eager)):
    c, e = np.asarray(c), np.asarray(e)
    assert c.dtype == e.dtype and c.shape == e.shape
    # bit-exact, so signed zeros and NaN payloads count
    np.testing.assert_array_equal(c.view(np.uint8), e.view(np.uint8))


def _check(fn, *args):
  _assert_same(_compiled(fn, *args), fn(*args))


def _text(fn, *args):
  return jax.jit(fn).lower(*args).as_text()


# ------------------------------------------------------------------ text
def test_lowered_text_has_the_ops():
  x = np.zeros((4, 3), np.float32)
  u = np.ones((6, 3), np.float32)
  clip = _text(lambda x, i: lax.gather(x, i, G_ROWS, (1, 3), mode="clip"), x, ROW_IDX)
  assert "stablehlo.gather" in clip and "stablehlo.clamp" in clip
  assert "stablehlo.select" not in clip
  fill = _text(lambda x, i: lax.gather(x, i, G_ROWS, (1, 3), mode="fill"), x, ROW_IDX)
  assert "stablehlo.select" in fill and "0x7FC00000" in fill   # NaN fill
  add = _text(lambda x, i, u: lax.scatter_add(x, i, u, S_ROWS), x, ROW_IDX, u)
  assert "stablehlo.scatter" in add and "stablehlo.add" in add
  assert "unique_indices = false" in add   # dropped windows land on clamped indices
  ds = _text(lambda x, i: lax.dynamic_slice_p.bind1(x, i, i, slice_sizes=(2, 2)), x, np.int32(1))
  assert "stablehlo.dynamic_slice" in ds
  dus = _text(lambda x, u, i: lax.dynamic_update_slice_p.bind1(x, u, i, i), x, u[:2, :2],
              np.int32(1))
  assert "stablehlo.dynamic_update_slice" in dus


# ---------------------------------------------------------------- gather
def test_gather_modes_windows_batching_compiled():
  rng = np.random.default_rng(0)
  x = rng.standard_normal((5, 4)).astype(np.float32)
  xi = rng.integers(-50, 50, (5, 4)).astype(np.int16)
  win_idx = np.array([[0, 0], [3, 2], [-1, 7], [1, 1]], np.int32)
  bat_idx = np.array([[[0], [3]], [[4], [-2]], [[1], [1]], [[2], [9]], [[0], [0]]], np.int32)

  def f(x, xi, rows, win, bat):
    out = []
    for m in MODES:
      out.append(lax.gather(x, rows, G_ROWS, (1, 4), mode=m))
      out.append(lax.gather(x, win, G_WINDOWS, (3, 2), mode=m))
      out.append(lax.gather(x, bat, G_BATCH, (1, 1), mode=m))
    out.append(lax.gather(xi, rows, G_ROWS, (1, 4), mode="fill", fill_value=-7))
    return out
  _check(f, x, xi, ROW_IDX, win_idx, bat_idx)


def test_gather_index_dtypes_compiled():
  x = np.arange(600, dtype=np.float32).reshape(300, 2)
  idx = {np.uint8: [[0], [255], [17]], np.int8: [[-128], [127], [5]],
         np.uint32: [[4294967295], [299], [2]]}
  args = [np.array(v, dt) for dt, v in idx.items()]

  def f(x, *ids):
    return [lax.gather(x, i, G_ROWS, (1, 2), mode=m) for i in ids for m in ("clip", "fill")]
  _check(f, x, *args)


# --------------------------------------------------------------- scatters
@pytest.mark.parametrize("mode", MODES)
def test_scatters_each_mode_compiled(mode):
  rng = np.random.default_rng(1)
  x = rng.standard_normal((5, 3)).astype(np.float32)
  x[0, 0] = -0.0   # kept by dropped windows of scatter-add
  u = rng.standard_normal((6, 3)).astype(np.float32)
  unique_idx = np.array([[1], [3], [-1], [4], [9], [0]], np.int32)

  def f(x, i, iu, u):
    out = [op(x, i, u, S_ROWS, mode=mode) for op in SCATTERS if op is not lax.scatter]
    out.append(lax.scatter(x, iu, u, S_ROWS, mode=mode))   # replace: no repeated index
    out.append(lax.scatter_add(x, iu, u, S_ROWS, mode=mode, unique_indices=True))
    return out
  _check(f, x, ROW_IDX, unique_idx, u)


def test_scatter_windows_batching_and_no_index_compiled():
  rng = np.random.default_rng(2)
  x3 = rng.standard_normal((2, 5, 4)).astype(np.float32)
  win_idx = np.array([[0, 1], [2, 3], [1, 2], [9, 0]], np.int32)
  upd3 = rng.standard_normal((4, 2, 2, 3)).astype(np.float32)
  x2 = rng.standard_normal((2, 4)).astype(np.float32)
  bat_idx = np.array([[[0], [3]], [[1], [-1]], [[3], [3]]], np.int32)
  bat_upd = rng.standard_normal((3, 2)).astype(np.float32)
  x1 = rng.standard_normal((4,)).astype(np.float32)
  no_idx = np.zeros((3, 0), np.int32)
  no_upd = rng.standard_normal((3, 2)).astype(np.float32)

  def f(x3, wi, u3, x2, bi, bu, x1, ni, nu):
    out = []
    for m in MODES:
      out.append(lax.scatter_add(x3, wi, u3, S_WINDOWS, mode=m))
      out.append(lax.scatter_max(x2, bi, bu, S_BATCH, mode=m))
    out.append(lax.scatter(x3, wi[1:], u3[1:], S_WINDOWS, mode="drop"))
    out.append(lax.scatter(x2, bi[1:2], bu[1:2], S_BATCH, mode="drop"))
    out.append(lax.scatter_mul(x1, ni, nu, S_NO_INDEX))
    out.append(lax.scatter_add(x1, ni, nu, S_NO_INDEX))
    return out
  _check(f, x3, win_idx, upd3, x2, bat_idx, bat_upd, x1, no_idx, no_upd)


DTYPES = (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.float16, ml_dtypes.bfloat16,
          np.float32, np.complex64, ml_dtypes.float8_e4m3fn)


def test_scatters_and_gathers_dtypes_compiled():
  rng = np.random.default_rng(3)
  xs = [(rng.standard_normal((4, 3)) * 3).astype(dt) for dt in DTYPES]
  us = [(rng.standard_normal((6, 3)) * 3).astype(dt) for dt in DTYPES]
  idx = ROW_IDX.astype(np.uint8)   # -1 wraps to 255: out of bounds

  def f(i, *vals):
    out = []
    for x, u in zip(vals[:len(DTYPES)], vals[len(DTYPES):]):
      out.append(lax.gather(x, i, G_ROWS, (1, 3), mode="fill"))
      out.append(lax.scatter_add(x, i, u, S_ROWS))   # bf16/fp8 accumulate in f32, as eager
      if x.dtype != np.bool_:
        out.append(lax.scatter_mul(x, i, u, S_ROWS, mode="clip"))
      out.append(lax.scatter_max(x, i, u, S_ROWS))
      out.append(lax.scatter_min(x, i, u, S_ROWS, mode="clip"))
      out.append(lax.scatter(x, i[:4], u[:4], S_ROWS))
    return out
  _check(f, idx, *xs, *us)


def test_scatter_apply_update_jaxpr_compiled():
  # .at[].apply's combiner func(old) runs as a map, as often as each element
  # is hit (repeated indices apply it repeatedly); a combiner reading the
  # update is inlined into the scatter's region.
  def trace(f):
    return jax.make_jaxpr(f)(np.float32(0), np.float32(0))
  round_trip = trace(lambda old, _: old.astype(np.int8).astype(np.float32))
  affine = trace(lambda old, _: old * 2 + 1)
  uses_update = trace(lambda old, u: old * 2 - u)
  x = np.array([[1.5, -2.25], [3.75, 4.0], [-5.5, 6.5]], np.float32)
  u = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.float32)
  rep = np.array([[2], [0], [7], [2], [-3], [2]], np.int32)
  uniq = np.array([[2], [0], [7], [-3]], np.int32)

  def f(x, rep, uniq, u):
    zeros = lax.full((6, 2), 0, np.float32)
    out = []
    for m in MODES:
      out.append(scatter_apply_jaxpr(x, rep, zeros, S_ROWS, round_trip, mode=m))
      out.append(scatter_apply_jaxpr(x, rep, zeros, S_ROWS, affine, mode=m))
      out.append(scatter_apply_jaxpr(x, uniq, u, S_ROWS, affine, mode=m, unique_indices=True))
      out.append(scatter_apply_jaxpr(x, uniq, u, S_ROWS, uses_update, mode=m))
    return out
  _check(f, x, rep, uniq, u)
  text = _text(f, x, rep, uniq, u)
  assert "stablehlo.map" in text and "stablehlo.while" in text


# ------------------------------------------------------- dynamic slicing
def test_dynamic_slice_and_update_slice_compiled():
  x = np.arange(20, dtype=np.float32).reshape(4, 5)
  u = -np.ones((2, 3), np.float32)
  starts = [np.array(v, dt) for dt, v in
            [(np.int32, 1), (np.int32, -3), (np.int32, 100), (np.uint8, 255), (np.int8, -128),
             (np.uint32, 4294967295)]]

  def f(x, u, *ss):
    out = []
    for a in ss:
      for b in ss:
        if a.dtype != b.dtype:
          continue
        out.append(lax.dynamic_slice_p.bind1(x, a, b, slice_sizes=(2, 3)))
        out.append(lax.dynamic_update_slice_p.bind1(x, u, a, b))
    return out
  _check(f, x, u, *starts)


# ------------------------------------------- random dimension numbers
def _random_scatter_case(rng):
  """A random valid scatter: operand rank 1-3, maybe a batching dimension,
  indexed dimensions in any order, inserted and windowed dimensions, partial
  windows, updates with window dimensions at random positions."""
  rank = int(rng.integers(1, 4))
  shape = [int(rng.integers(2, 6)) for _ in range(rank)]
  dims = [int(d) for d in rng.permutation(rank)]
  bat = sorted(dims[:int(rng.integers(0, 2))] if rank >= 2 else [])
  rest = dims[len(bat):]
  k = int(rng.integers(0, len(rest) + 1))
  sd = rest[:k]
  inserted = sorted([d for d in sd if rng.random() < 0.5]
                    + [d for d in rest[k:] if rng.random() < 0.2])
  wdims = [d for d in range(rank) if d not in inserted and d not in bat]
  nb = int(rng.integers(1, 3))
  bshape = [int(rng.integers(1, 4)) for _ in range(nb)]
  sib = [int(rng.integers(0, nb))] if bat else []
  if bat:
    bshape[sib[0]] = shape[bat[0]]
  idx = np.stack([rng.integers(-1, shape[d] + 1, size=bshape) for d in sd] or
                 [np.zeros(bshape, np.int64)], -1)[..., :len(sd)].astype(np.int32)
  uwd = sorted(int(p) for p in rng.choice(nb + len(wdims), len(wdims), replace=False))
  sizes, batch = iter(int(rng.integers(1, shape[d] + 1)) for d in wdims), iter(bshape)
  ushape = [next(sizes) if p in uwd else next(batch) for p in range(nb + len(wdims))]
  dn = SDN(update_window_dims=tuple(uwd), inserted_window_dims=tuple(inserted),
           scatter_dims_to_operand_dims=tuple(sd), operand_batching_dims=tuple(bat),
           scatter_indices_batching_dims=tuple(sib))
  args = (rng.standard_normal(shape).astype(np.float32), idx,
          rng.standard_normal(ushape).astype(np.float32))
  return args, dn, SCATTERS[int(rng.integers(1, 6))], MODES[int(rng.integers(3))]


def test_scatter_random_dimension_numbers_compiled():
  # IREE's scatter accepts few layouts; the lowering rewrites the others.
  rng = np.random.default_rng(4)
  cases = [_random_scatter_case(rng) for _ in range(24)]

  def f(*flat):
    return [op(*flat[3 * j:3 * j + 3], dn, mode=m) for j, (_, dn, op, m) in enumerate(cases)]
  flat = [a for args, *_ in cases for a in args]
  compiled, eager = _compiled(f, *flat), f(*flat)
  for c, e in zip(compiled, eager):   # sums and products may round differently
    np.testing.assert_allclose(np.asarray(c), np.asarray(e), rtol=1e-6, atol=1e-6)
