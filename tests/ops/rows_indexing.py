"""Op-table rows for the indexing family: ``lax.dynamic_slice`` & co.,
``lax.gather`` and the scatters (against loop-by-loop references of XLA's
semantics, below), NumPy indexing ``x[idx]``, ``x.at[idx]`` updates and the
``jnp`` index functions (``take``, ``nonzero``, ``choose``, ...)."""
import ml_dtypes
import numpy as np

import openjax.numpy as jnp
from openjax import lax
from tests.ops.harness import OpRow

F16, F32, I8, I32, U8, U32, BOOL = (np.float16, np.float32, np.int8, np.int32, np.uint8,
                                    np.uint32, np.bool_)
BF16 = ml_dtypes.bfloat16
GDN, SDN = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers


def _arr(shape, dtype=F32):
  def make(rng):
    dt = np.dtype(dtype)
    if dt == np.bool_:
      return rng.random(shape) > 0.5
    if dt.kind in "iu":
      return rng.integers(0 if dt.kind == "u" else -9, 10, size=shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)
  return make


def _ints(shape, lo, hi, dtype=I32):
  return lambda rng: rng.integers(lo, hi, size=shape).astype(dtype)


def _const(value, dtype=I32):
  return lambda rng: np.asarray(value, dtype)


def _args(*makers):
  return lambda rng: tuple(m(rng) for m in makers)


# --------------------------------------------- references for XLA semantics
def _window_shape_gather(dn, slice_sizes):
  return [s for d, s in enumerate(slice_sizes)
          if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]


def ref_gather(operand, indices, dn, slice_sizes, mode="clip", fill_value=None):
  """XLA Gather, one output element at a time."""
  operand, indices = np.asarray(operand), np.asarray(indices)
  rank = operand.ndim
  window = _window_shape_gather(dn, slice_sizes)
  batch = list(indices.shape[:-1])
  out_rank = len(batch) + len(window)
  out_shape, bi, wi = [], iter(batch), iter(window)
  for i in range(out_rank):
    out_shape.append(next(wi) if i in dn.offset_dims else next(bi))
  out = np.zeros(out_shape, operand.dtype)
  batch_dims = [i for i in range(out_rank) if i not in dn.offset_dims]
  for o in np.ndindex(*out_shape):
    g = tuple(o[i] for i in batch_dims)
    vec = indices[g]
    start = [0] * rank
    for k, d in enumerate(dn.start_index_map):
      start[d] = int(vec[k])
    for od, idim in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
      start[od] = g[idim]
    oob = any(not 0 <= start[d] <= operand.shape[d] - slice_sizes[d]
              for d in dn.start_index_map)
    start = [min(max(s, 0), operand.shape[d] - slice_sizes[d]) for d, s in enumerate(start)]
    offs = iter(o[i] for i in dn.offset_dims)
    pos = [start[d] + (next(offs) if d not in dn.collapsed_slice_dims
                       and d not in dn.operand_batching_dims else 0) for d in range(rank)]
    out[o] = fill_value if (mode == "fill" and oob) else operand[tuple(pos)]
  return out


def ref_scatter(operand, indices, updates, dn, combine, mode="drop"):
  """XLA Scatter, one update element at a time (windows wholly out of bounds
  are dropped unless ``mode='clip'``)."""
  out = np.array(operand, copy=True)
  indices, updates = np.asarray(indices), np.asarray(updates)
  rank = out.ndim
  wshape, pos = [], 0
  for d in range(rank):
    if d in dn.inserted_window_dims or d in dn.operand_batching_dims:
      wshape.append(1)
    else:
      wshape.append(updates.shape[dn.update_window_dims[pos]])
      pos += 1
  scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
  for u in np.ndindex(*updates.shape):
    g = tuple(u[d] for d in scatter_dims)
    vec = indices[g]
    start = [0] * rank
    for k, d in enumerate(dn.scatter_dims_to_operand_dims):
      start[d] = int(vec[k])
    for od, idim in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
      start[od] = g[idim]
    if mode == "clip":
      start = [min(max(s, 0), out.shape[d] - wshape[d]) for d, s in enumerate(start)]
    elif any(not 0 <= start[d] <= out.shape[d] - wshape[d]
             for d in dn.scatter_dims_to_operand_dims):
      continue
    w = iter(u[d] for d in dn.update_window_dims)
    p = tuple(start[d] + (0 if d in dn.inserted_window_dims or d in dn.operand_batching_dims
                          else next(w)) for d in range(rank))
    out[p] = combine(out[p], updates[u])
  return out


def _replace(old, new):
  return new


# dimension numbers used by several rows
_ROWS_DN = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
_POINT_DN = GDN(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
_WINDOW_DN = GDN(offset_dims=(0, 2, 3), collapsed_slice_dims=(), start_index_map=(1, 2))
_BATCH_DN = GDN(offset_dims=(2,), collapsed_slice_dims=(1,), start_index_map=(1,),
                operand_batching_dims=(0,), start_indices_batching_dims=(1,))
_S_ROWS = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
              scatter_dims_to_operand_dims=(0,))
_S_POINT = SDN(update_window_dims=(), inserted_window_dims=(0, 1),
               scatter_dims_to_operand_dims=(0, 1))
_S_WINDOW = SDN(update_window_dims=(1, 2, 3), inserted_window_dims=(),
                scatter_dims_to_operand_dims=(2, 1))
_S_BATCH = SDN(update_window_dims=(), inserted_window_dims=(1,),
               scatter_dims_to_operand_dims=(1,), operand_batching_dims=(0,),
               scatter_indices_batching_dims=(1,))


def _dyn_slice_ref(x, starts, sizes):
  s = [min(max(int(i) + (d if int(i) < 0 else 0), 0), d - z)
       for i, d, z in zip(starts, x.shape, sizes)]
  return x[tuple(slice(a, a + z) for a, z in zip(s, sizes))]


def _dyn_update_ref(x, u, starts):
  s = [min(max(int(i) + (d if int(i) < 0 else 0), 0), d - z)
       for i, d, z in zip(starts, x.shape, u.shape)]
  out = x.copy()
  out[tuple(slice(a, a + z) for a, z in zip(s, u.shape))] = u
  return out


_LAX_ROWS = [
    OpRow("lax.dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
          _args(_arr((4, 5)), _const(1), _const(-2)),
          lambda x, i, j: _dyn_slice_ref(x, (i, j), (2, 3)), grad=True),
    OpRow("lax.dynamic_slice_clamped", lambda x, i: lax.dynamic_slice(x, (i, 7), (3, 2)),
          _args(_arr((4, 5), I32), _const(3)), lambda x, i: _dyn_slice_ref(x, (i, 7), (3, 2))),
    OpRow("lax.dynamic_slice_bf16_u8_index",
          lambda x, i: lax.dynamic_slice(x, (i,), (2,)),
          _args(_arr((5,), BF16), _const(250, U8)), lambda x, i: x[3:5]),
    OpRow("lax.dynamic_slice_in_dim", lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1),
          _args(_arr((3, 4), BOOL), _const(-1)), lambda x, i: x[:, 2:4]),
    OpRow("lax.dynamic_index_in_dim",
          lambda x, i: lax.dynamic_index_in_dim(x, i, 1, keepdims=False),
          _args(_arr((3, 4)), _const(2)), lambda x, i: x[:, 2], grad=True),
    OpRow("lax.dynamic_update_slice",
          lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
          _args(_arr((4, 5)), _arr((2, 2)), _const(3), _const(-1)),
          lambda x, u, i, j: _dyn_update_ref(x, u, (i, j)), grad=True),
    OpRow("lax.dynamic_update_slice_int8",
          lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)),
          _args(_arr((6,), I8), _arr((3,), I8), _const(1)),
          lambda x, u, i: _dyn_update_ref(x, u, (i,))),
    OpRow("lax.dynamic_update_slice_in_dim",
          lambda x, u, i: lax.dynamic_update_slice_in_dim(x, u, i, axis=0),
          _args(_arr((4, 3), F16), _arr((2, 3), F16), _const(-2)),
          lambda x, u, i: _dyn_update_ref(x, u, (-2, 0))),
    OpRow("lax.dynamic_update_index_in_dim",
          lambda x, u, i: lax.dynamic_update_index_in_dim(x, u, i, 1),
          _args(_arr((3, 4), I32), _arr((3,), I32), _const(9)),
          lambda x, u, i: _dyn_update_ref(x, u[:, None], (0, 9))),

    OpRow("lax.gather_rows", lambda x, i: lax.gather(x, i, _ROWS_DN, (1, 4)),
          _args(_arr((5, 4)), _ints((3, 1), 0, 5)),
          lambda x, i: ref_gather(x, i, _ROWS_DN, (1, 4)), grad=True),
    OpRow("lax.gather_points_clip",
          lambda x, i: lax.gather(x, i, _POINT_DN, (1, 1), mode="clip"),
          _args(_arr((3, 4), I32), _ints((2, 3, 2), -2, 6)),
          lambda x, i: ref_gather(x, i, _POINT_DN, (1, 1))),
    OpRow("lax.gather_points_fill",
          lambda x, i: lax.gather(x, i, _POINT_DN, (1, 1), mode="fill"),
          _args(_arr((3, 4)), _ints((5, 2), -2, 6)),
          lambda x, i: ref_gather(x, i, _POINT_DN, (1, 1), "fill", np.nan)),
    OpRow("lax.gather_fill_int_value",
          lambda x, i: lax.gather(x, i, _ROWS_DN, (1, 2), mode="fill", fill_value=-7),
          _args(_arr((4, 2), U8), _ints((3, 1), -1, 6)),
          lambda x, i: ref_gather(x, i, _ROWS_DN, (1, 2), "fill", -7 % 256)),
    OpRow("lax.gather_windows",
          lambda x, i: lax.gather(x, i, _WINDOW_DN, (2, 2, 3)),
          _args(_arr((2, 4, 5), BF16), _ints((3, 2), 0, 4)),
          lambda x, i: ref_gather(x, i, _WINDOW_DN, (2, 2, 3))),
    OpRow("lax.gather_batching_dims",
          lambda x, i: lax.gather(x, i, _BATCH_DN, (1, 1, 3), mode="promise_in_bounds"),
          _args(_arr((2, 4, 3), I8), _ints((3, 2, 1), 0, 4)),
          lambda x, i: ref_gather(x, i, _BATCH_DN, (1, 1, 3))),
    OpRow("lax.gather_bool", lambda x, i: lax.gather(x, i, _ROWS_DN, (1, 3)),
          _args(_arr((4, 3), BOOL), _ints((2, 1), 0, 4, U32)),
          lambda x, i: ref_gather(x, i, _ROWS_DN, (1, 3))),
    OpRow("lax.index_take", lambda x, i, j: lax.index_take(x, (i, j), (0, 2)),
          _args(_arr((3, 2, 4)), _ints((5,), -3, 3), _ints((5,), 0, 4)),
          lambda x, i, j: np.moveaxis(x[i % 3, :, j], 0, 0), grad=True),

    OpRow("lax.scatter", lambda x, i, u: lax.scatter(x, i, u, _S_ROWS),
          _args(_arr((5, 3)), _const([[4], [0], [7]]), _arr((3, 3))),
          lambda x, i, u: ref_scatter(x, i, u, _S_ROWS, _replace), grad=True),
    OpRow("lax.scatter_clip", lambda x, i, u: lax.scatter(x, i, u, _S_POINT, mode="clip"),
          _args(_arr((3, 4), I32), _const([[0, 9], [-3, 1]]), _arr((2,), I32)),
          lambda x, i, u: ref_scatter(x, i, u, _S_POINT, _replace, "clip")),
    OpRow("lax.scatter_add", lambda x, i, u: lax.scatter_add(x, i, u, _S_POINT),
          _args(_arr((3, 4)), _ints((6, 2), -1, 4), _arr((6,))),
          lambda x, i, u: ref_scatter(x, i, u, _S_POINT, np.add), grad=True),
    OpRow("lax.scatter_add_window",
          lambda x, i, u: lax.scatter_add(x, i, u, _S_WINDOW, mode="promise_in_bounds"),
          _args(_arr((2, 5, 4), I32), _const([[0, 1], [2, 3], [1, 2]]), _arr((3, 2, 2, 3), I32)),
          lambda x, i, u: ref_scatter(x, i, u, _S_WINDOW, np.add)),
    OpRow("lax.scatter_add_bool", lambda x, i, u: lax.scatter_add(x, i, u, _S_ROWS),
          _args(_arr((4, 2), BOOL), _ints((5, 1), 0, 4), _arr((5, 2), BOOL)),
          lambda x, i, u: ref_scatter(x, i, u, _S_ROWS, np.logical_or)),
    OpRow("lax.scatter_add_batching", lambda x, i, u: lax.scatter_add(x, i, u, _S_BATCH),
          _args(_arr((2, 4)), _ints((3, 2, 1), 0, 4), _arr((3, 2))),
          lambda x, i, u: ref_scatter(x, i, u, _S_BATCH, np.add), grad=True),
    OpRow("lax.scatter_sub", lambda x, i, u: lax.scatter_sub(x, i, u, _S_POINT),
          _args(_arr((3, 4), I8), _ints((4, 2), 0, 3), _arr((4,), I8)),
          lambda x, i, u: ref_scatter(x, i, u, _S_POINT, np.subtract)),
    OpRow("lax.scatter_mul", lambda x, i, u: lax.scatter_mul(x, i, u, _S_ROWS),
          _args(_arr((4, 2), BF16), _ints((3, 1), 0, 4), _arr((3, 2), BF16)),
          lambda x, i, u: ref_scatter(x.astype(F32), i, u.astype(F32), _S_ROWS,
                                      np.multiply).astype(BF16)),
    OpRow("lax.scatter_min", lambda x, i, u: lax.scatter_min(x, i, u, _S_POINT),
          _args(_arr((3, 3), F16), _ints((5, 2), 0, 3), _arr((5,), F16)),
          lambda x, i, u: ref_scatter(x, i, u, _S_POINT, np.minimum)),
    OpRow("lax.scatter_max", lambda x, i, u: lax.scatter_max(x, i, u, _S_ROWS, mode="clip"),
          _args(_arr((4, 3), U8), _ints((3, 1), -2, 6), _arr((3, 3), U8)),
          lambda x, i, u: ref_scatter(x, i, u, _S_ROWS, np.maximum, "clip")),

    # float32 rows for the derivative columns (repeated and out-of-bounds indices)
    OpRow("lax.gather_fill_f32",
          lambda x, i: lax.gather(x, i, _ROWS_DN, (1, 3), mode="fill", fill_value=0.5),
          _args(_arr((4, 3)), _const([[1], [5], [-1], [3], [1]])),
          lambda x, i: ref_gather(x, i, _ROWS_DN, (1, 3), "fill", 0.5), grad=True),
    OpRow("lax.gather_windows_f32", lambda x, i: lax.gather(x, i, _WINDOW_DN, (2, 2, 3)),
          _args(_arr((2, 4, 5)), _const([[0, 1], [2, 2], [0, 1]])),
          lambda x, i: ref_gather(x, i, _WINDOW_DN, (2, 2, 3)), grad=True),
    OpRow("lax.gather_batching_dims_f32",
          lambda x, i: lax.gather(x, i, _BATCH_DN, (1, 1, 3), mode="clip"),
          _args(_arr((2, 4, 3)), _ints((3, 2, 1), 0, 4)),
          lambda x, i: ref_gather(x, i, _BATCH_DN, (1, 1, 3)), grad=True),
    OpRow("lax.scatter_repeated_windows",
          lambda x, i, u: lax.scatter(x, i, u, _S_WINDOW),
          _args(_arr((2, 5, 4)), _const([[0, 1], [1, 2], [0, 1], [9, 0]]), _arr((4, 2, 2, 3))),
          lambda x, i, u: ref_scatter(x, i, u, _S_WINDOW, _replace), grad=True),
    OpRow("lax.scatter_unique",
          lambda x, i, u: lax.scatter(x, i, u, _S_POINT, unique_indices=True),
          _args(_arr((3, 4)), _const([[0, 1], [2, 3], [1, 1]]), _arr((3,))),
          lambda x, i, u: ref_scatter(x, i, u, _S_POINT, _replace), grad=True),
    OpRow("lax.scatter_add_window_f32", lambda x, i, u: lax.scatter_add(x, i, u, _S_WINDOW),
          _args(_arr((2, 5, 4)), _const([[0, 1], [2, 3], [1, 2]]), _arr((3, 2, 2, 3))),
          lambda x, i, u: ref_scatter(x, i, u, _S_WINDOW, np.add), grad=True),
    OpRow("lax.scatter_sub_f32", lambda x, i, u: lax.scatter_sub(x, i, u, _S_ROWS, mode="clip"),
          _args(_arr((4, 2)), _ints((5, 1), -2, 6), _arr((5, 2))),
          lambda x, i, u: ref_scatter(x, i, u, _S_ROWS, np.subtract, "clip"), grad=True),
    OpRow("lax.scatter_mul_unique",
          lambda x, i, u: lax.scatter_mul(x, i, u, _S_POINT, unique_indices=True),
          _args(_arr((3, 4)), _const([[0, 1], [2, 3], [1, 1]]), _arr((3,))),
          lambda x, i, u: ref_scatter(x, i, u, _S_POINT, np.multiply), grad=True),
    OpRow("lax.scatter_mul_repeated_operand",   # gradients in updates need unique indices
          lambda x, i: lax.scatter_mul(x, i, np.array([[2, -1], [0.5, 3], [-2, 1]], x.dtype),
                                       _S_ROWS),
          _args(_arr((4, 2)), _const([[1], [3], [1]])),
          lambda x, i: ref_scatter(x, i, np.array([[2, -1], [0.5, 3], [-2, 1]], F32), _S_ROWS,
                                   np.multiply), grad=True),
    OpRow("lax.scatter_min_f32", lambda x, i, u: lax.scatter_min(x, i, u, _S_POINT),
          _args(_arr((3, 3)), _ints((6, 2), 0, 3), _arr((6,))),
          lambda x, i, u: ref_scatter(x, i, u, _S_POINT, np.minimum), grad=True),
    OpRow("lax.scatter_max_f32", lambda x, i, u: lax.scatter_max(x, i, u, _S_BATCH),
          _args(_arr((2, 4)), _ints((3, 2, 1), 0, 4), _arr((3, 2))),
          lambda x, i, u: ref_scatter(x, i, u, _S_BATCH, np.maximum), grad=True),
]


# ------------------------------------------------------------ x[idx] (NumPy)
def _getitem_row(name, idx, shape=(4, 5), dtype=F32, **kw):
  return OpRow(f"getitem.{name}", lambda x: jnp.asarray(x)[idx], _args(_arr(shape, dtype)),
               lambda x: x[idx], **kw)


_GETITEM_ROWS = [
    _getitem_row("int", 1, grad=True),
    _getitem_row("negative_int", (-1, -2), dtype=I32),
    _getitem_row("slice", (slice(1, 3), slice(None, None, 2)), grad=True),
    _getitem_row("negative_step", (slice(None, None, -1), slice(4, 0, -3)), dtype=BF16),
    _getitem_row("none_ellipsis", (None, Ellipsis, 2, None), dtype=BOOL),
    _getitem_row("empty_slice", slice(3, 1), dtype=I8),
    _getitem_row("int_list", ([0, 3, 3, -1],), dtype=F16),
    _getitem_row("int_arrays_separated", (np.array([0, 2]), slice(None), np.array([1, 4])),
                 shape=(3, 4, 5), grad=True),
    _getitem_row("int_arrays_adjacent", (slice(None), np.array([[0], [2]]), np.array([1, 3])),
                 shape=(2, 3, 4), dtype=U8),
    _getitem_row("array_and_strided_slice", (np.array([3, 0]), slice(None, None, -2)), grad=True),
    _getitem_row("bool_mask", np.array([True, False, True, True]), grad=True),
    _getitem_row("bool_mask_2d", np.arange(20).reshape(4, 5) % 3 == 0, dtype=I32),
    _getitem_row("scalar_bool", (True, 1), grad=True),
    OpRow("getitem.traced_int", lambda x, i: jnp.asarray(x)[i], _args(_arr((4, 3)), _const(-1)),
          lambda x, i: x[i], grad=True),
    OpRow("getitem.traced_int_and_slice", lambda x, i: jnp.asarray(x)[1:, i], _args(_arr((4, 3), I32), _const(2)),
          lambda x, i: x[1:, i]),
    OpRow("getitem.traced_index_array", lambda x, i: jnp.asarray(x)[i, 1::2],
          _args(_arr((4, 5)), _ints((2, 3), -4, 4)), lambda x, i: x[i, 1::2], grad=True),
    OpRow("getitem.traced_index_arrays_broadcast", lambda x, i, j: jnp.asarray(x)[:, i, j],
          _args(_arr((2, 3, 4), BOOL), _ints((3, 1), 0, 3), _ints((2,), -4, 4, I8)),
          lambda x, i, j: x[:, i, j]),
    OpRow("getitem.out_of_bounds_clamps", lambda x, i: jnp.asarray(x)[i], _args(_arr((4,)), _const([9, -9])),
          lambda x, i: x[np.clip(np.where(i < 0, i + 4, i), 0, 3)]),
    OpRow("getitem.static_out_of_bounds_clamps", lambda x: jnp.asarray(x)[7], _args(_arr((4,), I32)),
          lambda x: x[3]),
]


# --------------------------------------------------------------------- x.at[]
def _np_at(op):
  def ref(x, i, u):
    out = np.array(x, copy=True)
    op.at(out, i, u)
    return out
  return ref


def _np_at_unary(op):
  def ref(x, i):
    out = np.array(x, copy=True)
    op.at(out, i)   # repeated indices apply op repeatedly, as .at[].apply
    return out
  return ref


def _np_apply_affine(x, i):
  """``v * 2 + 1`` at each index in order (a repeated index applies it again):
  NumPy has no vector call for a Python function, so a loop over the indices."""
  out = np.array(x, copy=True)
  with np.errstate(over="ignore"):
    for j in i.tolist():
      out[j] = out[j] * 2 + 1
  return out


def _np_set(x, i, u):
  out = np.array(x, copy=True)
  out[i] = u
  return out


def _np_set_in_bounds(x, i, u):
  """``x[i] = u`` dropping the indices out of bounds (JAX's scatter default)."""
  out = np.array(x, copy=True)
  n = x.shape[0]
  out[i[(i >= -n) & (i < n)]] = u
  return out


_AT_ROWS = [
    OpRow("at.set", lambda x, i, u: jnp.asarray(x).at[i].set(u),
          _args(_arr((5, 3)), _const([4, 0, -1]), _arr((3, 3))),
          lambda x, i, u: _np_set(x, i, u), grad=True),
    OpRow("at.set_scalar_bool", lambda x: jnp.asarray(x).at[1:3, 0].set(True),
          _args(_arr((4, 2), BOOL)), lambda x: _np_set(x, (slice(1, 3), 0), True)),
    OpRow("at.set_drops_out_of_bounds", lambda x, i: jnp.asarray(x).at[i].set(7),
          _args(_arr((4,), I32), _const([1, 4, -5])), lambda x, i: _np_set_in_bounds(x, i, 7)),
    OpRow("at.set_clip", lambda x, i: jnp.asarray(x).at[i].set(7, mode="clip"),
          _args(_arr((4,), I8), _const([9])), lambda x, i: _np_set(x, 3, 7)),
    OpRow("at.add_repeated", lambda x, i, u: jnp.asarray(x).at[i].add(u),
          _args(_arr((5,)), _const([0, 1, 0, 0, -1]), _arr((5,))),
          lambda x, i, u: _np_at(np.add)(x, i % 5, u), grad=True),
    OpRow("at.add_2d_index", lambda x, i, j: jnp.asarray(x).at[i, j].add(1),
          _args(_arr((3, 4), I32), _ints((6,), 0, 3), _ints((6,), 0, 4)),
          lambda x, i, j: _np_at(np.add)(x, (i, j), 1)),
    OpRow("at.add_slice_bf16", lambda x, u: jnp.asarray(x).at[::2].add(u),
          _args(_arr((5, 2), BF16), _arr((2,), BF16)),
          lambda x, u: _np_set(x.astype(F32), slice(None, None, 2),
                               x[::2].astype(F32) + u.astype(F32)).astype(BF16)),
    OpRow("at.subtract", lambda x, i: jnp.asarray(x).at[i].subtract(2.5),
          _args(_arr((4, 2)), _const([1, 1])),
          lambda x, i: _np_at(np.subtract)(x, i, np.float32(2.5)), grad=True),
    OpRow("at.multiply", lambda x, i, u: jnp.asarray(x).at[:, i].multiply(u),
          _args(_arr((2, 4), I32), _const([0, 3]), _arr((2, 2), I32)),
          lambda x, i, u: _np_set(x, (slice(None), i), x[:, i] * u)),
    OpRow("at.divide", lambda x: jnp.asarray(x).at[1].divide(4.0), _args(_arr((3,))),
          lambda x: _np_set(x, 1, x[1] / np.float32(4)), grad=True),
    OpRow("at.power", lambda x: jnp.asarray(x).at[0].power(2), _args(_arr((3,))),
          lambda x: _np_set(x, 0, x[0] ** 2), grad=True),
    OpRow("at.min", lambda x, i, u: jnp.asarray(x).at[i].min(u),
          _args(_arr((4,), U8), _const([2, 2, 0]), _arr((3,), U8)),
          lambda x, i, u: _np_at(np.minimum)(x, i, u)),
    OpRow("at.max_mask", lambda x, u: jnp.asarray(x).at[np.array([True, False, True])].max(u),
          _args(_arr((3, 2), F16), _arr((2,), F16)),
          lambda x, u: _np_set(x, [0, 2], np.maximum(x[[0, 2]], u))),
    OpRow("at.get_fill", lambda x, i: jnp.asarray(x).at[i].get(mode="fill", fill_value=-1),
          _args(_arr((4,)), _const([0, 5, -1, -7])),
          lambda x, i: np.where((i >= -4) & (i < 4), x[np.clip(i, -4, 3)], -1), grad=True),
    OpRow("at.get_clip", lambda x, i: jnp.asarray(x).at[i].get(mode="clip"),
          _args(_arr((3, 2), I32), _const([[5], [-9]])),
          lambda x, i: x[np.array([[2], [0]])]),
    OpRow("at.apply", lambda x, i: jnp.asarray(x).at[i].apply(lambda v: v * 2 + 1),
          _args(_arr((5,), I32), _const([1, 3, 1])), _np_apply_affine),
    OpRow("at.apply_f32", lambda x, i: jnp.asarray(x).at[i].apply(jnp.sin),
          _args(_arr((5,)), _const([4, 0])), lambda x, i: _np_at_unary(np.sin)(x, i)),
    OpRow("at.set_repeated", lambda x, i, u: jnp.asarray(x).at[i].set(u),
          _args(_arr((4, 2)), _const([1, 3, 1, -1]), _arr((4, 2))),
          lambda x, i, u: _np_set(x, i, u), grad=True),
    OpRow("at.set_scalar_f32", lambda x, u: jnp.asarray(x).at[1:, 0].set(u),
          _args(_arr((3, 2)), _arr(())), lambda x, u: _np_set(x, (slice(1, None), 0), u),
          grad=True),
    OpRow("at.multiply_f32", lambda x, i, u: jnp.asarray(x).at[i].multiply(u, unique_indices=True),
          _args(_arr((4, 2)), _const([2, 0]), _arr((2, 2))),
          lambda x, i, u: _np_set(x, i, x[i] * u), grad=True),
    OpRow("at.min_f32", lambda x, i, u: jnp.asarray(x).at[i].min(u),
          _args(_arr((5,)), _const([2, 2, 0, 4]), _arr((4,))),
          lambda x, i, u: _np_at(np.minimum)(x, i, u), grad=True),
    OpRow("at.max_f32", lambda x, i, u: jnp.asarray(x).at[:, i].max(u),
          _args(_arr((2, 4)), _const([3, 1, 3]), _arr((2, 3))),
          lambda x, i, u: _np_at(np.maximum)(x, (slice(None), i), u), grad=True),
    OpRow("at.add_traced_slice_index", lambda x, i, u: jnp.asarray(x).at[i, 1:].add(u),
          _args(_arr((3, 4)), _const(-1), _arr((3,))),
          lambda x, i, u: _np_set(x, (-1, slice(1, None)), x[-1, 1:] + u), grad=True),
]


# --------------------------------------------------------- jnp index functions
def _np_take_along_fill(x, i):
  """take_along_axis along axis 0 with JAX's default out-of-bounds fill (NaN)."""
  n = x.shape[0]
  ok = (i >= -n) & (i < n)
  return np.where(ok, np.take_along_axis(x, np.where(ok, i, 0), axis=0), F32(np.nan))


def _np_take_fill(x, i, axis, fill):
  n = x.shape[axis]
  ok = (i >= -n) & (i < n)
  out = np.take(x, np.where(ok, i, 0), axis=axis).astype(np.result_type(x, F32)
                                                            if fill is np.nan else x.dtype)
  shape = [1] * out.ndim
  shape[axis:axis + i.ndim] = i.shape
  return np.where(ok.reshape(shape), out, fill).astype(x.dtype)


def _static_row(name, fn, make, ref, **kw):
  """A row for a function whose output shape depends on values (it needs
  concrete inputs): the inputs are fixed data closed over, not arguments."""
  data = make(np.random.default_rng(1))
  return OpRow(name, lambda: fn(*data), lambda rng: (), lambda: ref(*data), **kw)


def _nonzero_padded(x, size, fill=0):
  out = []
  for col in np.nonzero(x):
    c = np.full(size, fill, np.int32)
    c[:min(size, col.size)] = col[:size]
    out.append(c)
  return tuple(out)


_FN_ROWS = [
    OpRow("jnp.take", lambda x, i: jnp.take(x, i, axis=1),
          _args(_arr((2, 4)), _ints((3,), -4, 4)), lambda x, i: np.take(x, i, axis=1), grad=True),
    OpRow("jnp.take_flat_fill", lambda x, i: jnp.take(x, i), _args(_arr((2, 3)), _const([[0, 9], [-1, 5]])),
          lambda x, i: _np_take_fill(x.ravel(), i, 0, np.nan)),
    OpRow("jnp.take_fill_value", lambda x, i: jnp.take(x, i, axis=0, fill_value=-3),
          _args(_arr((3, 2), I32), _const([4, 1])), lambda x, i: _np_take_fill(x, i, 0, -3)),
    OpRow("jnp.take_clip", lambda x, i: jnp.take(x, i, axis=-1, mode="clip"),
          _args(_arr((2, 3), U8), _const([7, -2])), lambda x, i: np.take(x, i, 1, mode="clip")),
    OpRow("jnp.take_wrap", lambda x, i: jnp.take(x, i, axis=0, mode="wrap"),
          _args(_arr((3,), BF16), _const([4, -5, 2])), lambda x, i: np.take(x, i, mode="wrap")),
    OpRow("method.take", lambda x, i: jnp.asarray(x).take(i), _args(_arr((2, 2), BOOL), _const([3, 0])),
          lambda x, i: jnp.asarray(x).take(i)),
    OpRow("jnp.take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=1),
          _args(_arr((3, 4)), _ints((3, 2), -4, 4)),
          lambda x, i: np.take_along_axis(x, i % 4, axis=1), grad=True),
    OpRow("jnp.take_along_axis_broadcast", lambda x, i: jnp.take_along_axis(x, i, axis=0),
          _args(_arr((3, 1, 4), I32), _ints((2, 5, 1), 0, 3)),
          lambda x, i: np.take_along_axis(np.broadcast_to(x, (3, 5, 4)),
                                          np.broadcast_to(i, (2, 5, 4)), axis=0)),
    OpRow("jnp.take_along_axis_none", lambda x, i: jnp.take_along_axis(x, i, axis=None),
          _args(_arr((2, 3), F16), _const([5, 0])), lambda x, i: x.ravel()[i]),
    OpRow("jnp.take_along_axis_fill", lambda x, i: jnp.take_along_axis(x, i, axis=0),
          _args(_arr((3,)), _const([1, 3])), lambda x, i: _np_take_along_fill(x, i)),
    _static_row("jnp.nonzero", jnp.nonzero, _args(_arr((3, 4), I32)), np.nonzero,
                out_dtype=I32),
    OpRow("jnp.nonzero_size", lambda x: jnp.nonzero(x, size=5), _args(_arr((2, 3), BOOL)),
          lambda x: _nonzero_padded(x, 5)),
    OpRow("jnp.nonzero_size_fill", lambda x: jnp.nonzero(x, size=8, fill_value=(-1, 9)),
          _args(_arr((3, 2))), lambda x: tuple(np.where(np.arange(8) < np.count_nonzero(x),
                                                        c, f) for c, f in
                                               zip(_nonzero_padded(x, 8), (-1, 9)))),
    OpRow("method.nonzero", lambda x: jnp.asarray(x).nonzero(size=2), _args(_arr((5,), F16)),
          lambda x: _nonzero_padded(x, 2)),
    OpRow("jnp.flatnonzero", lambda x: jnp.flatnonzero(x, size=4), _args(_arr((2, 3), U8)),
          lambda x: _nonzero_padded(x.ravel(), 4)[0]),
    _static_row("jnp.argwhere", jnp.argwhere, _args(_arr((3, 2), BOOL)), np.argwhere,
                out_dtype=I32),
    OpRow("jnp.argwhere_size", lambda x: jnp.argwhere(x, size=3), _args(_arr((2, 3), I32)),
          lambda x: np.stack(_nonzero_padded(x, 3), axis=1)),
    _static_row("jnp.argwhere_scalar", jnp.argwhere, _args(_const(2.0, F32)), np.argwhere,
                out_dtype=I32),
    _static_row("jnp.extract", jnp.extract, _args(_arr((2, 3), BOOL), _arr((2, 3))),
                np.extract),
    OpRow("jnp.extract_size", lambda c, x: jnp.extract(c, x, size=4, fill_value=7),
          _args(_arr((6,), BOOL), _arr((6,), I32)),
          lambda c, x: np.concatenate([x[c], np.full(6, 7, np.int32)])[:4]),
    _static_row("jnp.compress", lambda c, x: jnp.compress(c, x, axis=1),
                _args(_const([True, False, True], BOOL), _arr((2, 4))),
                lambda c, x: np.compress(c, x, axis=1)),
    OpRow("jnp.compress_size", lambda c, x: jnp.compress(c, x, axis=0, size=2),
          _args(_const([0, 1, 1], I32), _arr((3, 2), BF16)),
          lambda c, x: np.compress(c, x, axis=0)),
    _static_row("jnp.choose", lambda a, x, y: jnp.choose(a, [x, y, 5]),
                _args(_ints((2, 3), 0, 3), _arr((2, 3), I32), _arr((3,), I32)),
                lambda a, x, y: np.choose(a, [x, y, 5])),
    OpRow("jnp.choose_wrap", lambda a, x, y: jnp.choose(a, (x, y), mode="wrap"),
          _args(_ints((4,), -3, 5), _arr((4,)), _arr((4,))),
          lambda a, x, y: np.choose(a, (x, y), mode="wrap"), grad=True),
    OpRow("jnp.choose_clip", lambda a, x: jnp.choose(a, x, mode="clip"),
          _args(_ints((3,), -3, 5), _arr((2, 3), U8)),
          lambda a, x: np.choose(a, x, mode="clip")),
    OpRow("jnp.select", lambda c1, c2, x, y: jnp.select([c1, c2], [x, y], default=-1.0),
          _args(_arr((2, 3), BOOL), _arr((3,), BOOL), _arr((2, 3)), _arr((2, 3))),
          lambda c1, c2, x, y: np.select([c1, c2], [x, y], default=-1.0), grad=True),
    OpRow("jnp.select_int", lambda c, x: jnp.select([c > 0], [x]),
          _args(_arr((4,), I32), _arr((4,), I8)),
          lambda c, x: np.select([c > 0], [x]).astype(I8)),
    OpRow("jnp.diag_indices", lambda: jnp.diag_indices(3, 3), lambda rng: (),
          lambda: np.diag_indices(3, 3), out_dtype=I32),
    OpRow("jnp.diag_indices_from", jnp.diag_indices_from, _args(_arr((2, 2))),
          np.diag_indices_from, out_dtype=I32),
    OpRow("jnp.tril_indices", lambda: jnp.tril_indices(3, -1, 4), lambda rng: (),
          lambda: np.tril_indices(3, -1, 4), out_dtype=I32),
    OpRow("jnp.triu_indices", lambda: jnp.triu_indices(4, 1), lambda rng: (),
          lambda: np.triu_indices(4, 1), out_dtype=I32),
    OpRow("jnp.tril_indices_from", lambda x: jnp.tril_indices_from(x, 1), _args(_arr((3, 2))),
          lambda x: np.tril_indices_from(x, 1), out_dtype=I32),
    OpRow("jnp.triu_indices_from", jnp.triu_indices_from, _args(_arr((2, 3), I32)),
          np.triu_indices_from, out_dtype=I32),
    OpRow("jnp.mask_indices", lambda: jnp.mask_indices(3, jnp.triu, 1, size=3),
          lambda rng: (), lambda: np.mask_indices(3, np.triu, 1), out_dtype=I32),
    OpRow("jnp.unravel_index", lambda i: jnp.unravel_index(i, (3, 4)),
          _args(_ints((5,), 0, 12)), lambda i: np.unravel_index(i, (3, 4)), out_dtype=I32),
    OpRow("jnp.unravel_index_out_of_bounds", lambda i: jnp.unravel_index(i, (2, 3)),
          _args(_const([-1, 6, -9, 2])),
          lambda i: (np.array([1, 1, 0, 0], I32), np.array([2, 2, 0, 2], I32))),
    _static_row("jnp.ravel_multi_index", lambda i, j: jnp.ravel_multi_index((i, j), (3, 4)),
                _args(_ints((5,), 0, 3), _ints((5,), 0, 4)),
                lambda i, j: np.ravel_multi_index((i, j), (3, 4)), out_dtype=I32),
    OpRow("jnp.ravel_multi_index_wrap_F",
          lambda i, j: jnp.ravel_multi_index((i, j), (3, 4), mode="wrap", order="F"),
          _args(_ints((5,), -5, 5), _ints((1,), -5, 5)),
          lambda i, j: np.ravel_multi_index((i, j), (3, 4), mode="wrap", order="F"),
          out_dtype=I32),
    OpRow("jnp.ravel_multi_index_clip",
          lambda i, j: jnp.ravel_multi_index((i, j), (3, 4), mode="clip"),
          _args(_ints((4,), -5, 5, I8), _ints((4,), -5, 5)),
          lambda i, j: np.ravel_multi_index((i, j), (3, 4), mode="clip"), out_dtype=I32),
    OpRow("jnp.ix_", lambda a, b: jnp.ix_(a, b), _args(_const([0, 2]), _const([1, 0, 1], U8)),
          np.ix_),
]

ROWS = _LAX_ROWS + _GETITEM_ROWS + _AT_ROWS + _FN_ROWS
