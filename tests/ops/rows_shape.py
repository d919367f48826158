"""Op-table rows for the shape family: the lax shape primitives and the
jnp functions that reshape, join, split and pad arrays."""
import numpy as np

import openjax.numpy as jnp
from openjax import lax
from tests.ops.harness import OpRow


def _arr(shape, dtype=np.float32):
  def make(rng):
    if np.dtype(dtype) == np.bool_:
      return rng.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
      return rng.integers(-5, 6, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)
  return make


def _args(*makers):
  return lambda rng: tuple(m(rng) for m in makers)


F32, I32, BOOL = np.float32, np.int32, np.bool_


def _np_lax_pad(x, v, config):
  # NumPy reference for lax.pad: interior dilation, then edges (negative cuts).
  for ax, (lo, hi, interior) in enumerate(config):
    n = x.shape[ax]
    if interior and n:
      shape = list(x.shape)
      shape[ax] = n + (n - 1) * interior
      out = np.full(shape, v, x.dtype)
      idx = [slice(None)] * x.ndim
      idx[ax] = slice(None, None, interior + 1)
      out[tuple(idx)] = x
      x = out
    width = [(0, 0)] * x.ndim
    width[ax] = (max(lo, 0), max(hi, 0))
    x = np.pad(x, width, constant_values=v)
    idx = [slice(None)] * x.ndim
    idx[ax] = slice(max(-lo, 0), x.shape[ax] - max(-hi, 0))
    x = x[tuple(idx)]
  return x


ROWS = [
    # ------------------------------------------------------------ lax level
    OpRow("lax.squeeze", lambda x: lax.squeeze(x, (0, -1)), _args(_arr((1, 3, 1))),
          lambda x: np.squeeze(x, (0, 2))),
    OpRow("lax.squeeze_bool", lambda x: lax.squeeze(x, (1,)), _args(_arr((2, 1), BOOL)),
          lambda x: x[:, 0]),
    OpRow("lax.expand_dims", lambda x: lax.expand_dims(x, (0, -1)), _args(_arr((2, 3), I32)),
          lambda x: x[None, :, :, None]),
    OpRow("lax.transpose", lambda x: lax.transpose(x, (2, 0, 1)), _args(_arr((2, 3, 4))),
          lambda x: np.transpose(x, (2, 0, 1))),
    OpRow("lax.transpose_empty", lambda x: lax.transpose(x, (1, 0)), _args(_arr((0, 3), I32)),
          lambda x: x.T),
    OpRow("lax.rev", lambda x: lax.rev(x, (0, 2)), _args(_arr((2, 3, 4), I32)),
          lambda x: x[::-1, :, ::-1]),
    OpRow("lax.rev_none", lambda x: lax.rev(x, ()), _args(_arr((3,), BOOL)), lambda x: x),
    OpRow("lax.pad", lambda x: lax.pad(x, np.float32(-1), [(1, 2, 1), (-1, 0, 0)]),
          _args(_arr((3, 4))), lambda x: _np_lax_pad(x, -1, [(1, 2, 1), (-1, 0, 0)])),
    OpRow("lax.pad_negative_past_edge",
          lambda x: lax.pad(x, np.int32(7), [(-5, 4, 0)]), _args(_arr((3,), I32)),
          lambda x: _np_lax_pad(x, 7, [(-5, 4, 0)])),
    OpRow("lax.pad_interior_empty", lambda x: lax.pad(x, False, [(1, 1, 2)]),
          _args(_arr((0,), BOOL)), lambda x: np.zeros(2, bool)),
    OpRow("lax.pad_scalar_operand", lambda x, v: lax.pad(x, v, [(0, 1, 3), (2, -2, 1)]),
          _args(_arr((2, 3), I32), lambda rng: np.int32(9)),
          lambda x, v: _np_lax_pad(x, v, [(0, 1, 3), (2, -2, 1)])),
    OpRow("lax.concatenate", lambda x, y: lax.concatenate([x, y, x], 1),
          _args(_arr((2, 3)), _arr((2, 1))), lambda x, y: np.concatenate([x, y, x], 1)),
    OpRow("lax.concatenate_empty", lambda x, y: lax.concatenate([x, y], 0),
          _args(_arr((0, 2), I32), _arr((3, 2), I32)), lambda x, y: np.concatenate([x, y])),
    OpRow("lax.split", lambda x: lax.split(x, (1, 0, 3), axis=-1), _args(_arr((2, 4))),
          lambda x: np.split(x, [1, 1], axis=1)),
    OpRow("lax.tile", lambda x: lax.tile(x, (2, 3)), _args(_arr((2, 3), I32)),
          lambda x: np.tile(x, (2, 3))),
    OpRow("lax.tile_zero", lambda x: lax.tile(x, (0,)), _args(_arr((3,), BOOL)),
          lambda x: np.tile(x, 0)),
    OpRow("lax.slice", lambda x: lax.slice(x, (1, 0), (3, 4)), _args(_arr((4, 5))),
          lambda x: x[1:3, 0:4]),
    OpRow("lax.slice_strides", lambda x: lax.slice(x, (0, 1), (4, 5), (3, 2)),
          _args(_arr((4, 5), I32)), lambda x: x[0:4:3, 1:5:2]),
    OpRow("lax.slice_in_dim", lambda x: lax.slice_in_dim(x, -3, None, 2, axis=1),
          _args(_arr((2, 5))), lambda x: x[:, -3::2]),
    OpRow("lax.index_in_dim", lambda x: lax.index_in_dim(x, -1, 0, keepdims=False),
          _args(_arr((3, 2), I32)), lambda x: x[-1]),
    OpRow("lax.collapse", lambda x: lax.collapse(x, 1), _args(_arr((2, 3, 4))),
          lambda x: x.reshape(2, 12)),
    OpRow("lax.full", lambda: lax.full((2, 3), 1.5), lambda rng: (),
          lambda: np.full((2, 3), 1.5, np.float32)),
    OpRow("lax.full_like", lambda x: lax.full_like(x, 3, shape=(2,)), _args(_arr((4,), I32)),
          lambda x: np.full((2,), 3, np.int32)),

    # ----------------------------------------------------- jnp: reshaping
    OpRow("jnp.reshape", lambda x: jnp.reshape(x, (3, -1)), _args(_arr((2, 6))),
          lambda x: np.reshape(x, (3, -1))),
    OpRow("jnp.reshape_F", lambda x: jnp.reshape(x, (4, 3), order="F"),
          _args(_arr((2, 6), I32)), lambda x: np.reshape(x, (4, 3), order="F")),
    OpRow("jnp.reshape_int_shape", lambda x: jnp.reshape(x, 6), _args(_arr((2, 3), BOOL)),
          lambda x: np.reshape(x, 6)),
    OpRow("jnp.reshape_scalar", lambda x: jnp.reshape(x, (1, 1)), _args(_arr(())),
          lambda x: np.reshape(x, (1, 1))),
    OpRow("jnp.reshape_empty", lambda x: jnp.reshape(x, (2, -1)), _args(_arr((3, 0, 2))),
          lambda x: np.reshape(x, (2, -1))),
    OpRow("method.reshape", lambda x: jnp.ravel(x).reshape(3, 2), _args(_arr((2, 3))),
          lambda x: x.reshape(3, 2)),
    OpRow("method.reshape_tuple", lambda x: jnp.ravel(x).reshape((2, 3), order="F"),
          _args(_arr((6,), I32)), lambda x: x.reshape((2, 3), order="F")),
    OpRow("jnp.ravel", jnp.ravel, _args(_arr((2, 3, 2))), np.ravel),
    OpRow("jnp.ravel_F", lambda x: jnp.ravel(x, order="F"), _args(_arr((2, 3), I32)),
          lambda x: np.ravel(x, order="F")),
    OpRow("method.flatten", lambda x: jnp.squeeze(x).flatten(), _args(_arr((2, 1, 3), BOOL)),
          lambda x: x.flatten()),
    OpRow("jnp.transpose", jnp.transpose, _args(_arr((2, 3, 4))), np.transpose),
    OpRow("jnp.transpose_axes", lambda x: jnp.transpose(x, (-1, 0, 1)),
          _args(_arr((2, 3, 4), I32)), lambda x: np.transpose(x, (2, 0, 1))),
    OpRow("method.transpose", lambda x: jnp.ravel(x).reshape(2, 3).transpose(),
          _args(_arr((6,))), lambda x: x.reshape(2, 3).T),
    OpRow("method.transpose_args", lambda x: jnp.squeeze(x, 0).transpose(1, 0, 2),
          _args(_arr((1, 2, 3, 4))), lambda x: x[0].transpose(1, 0, 2)),
    OpRow("method.transpose_tuple", lambda x: jnp.squeeze(x, 0).transpose((2, 0, 1)),
          _args(_arr((1, 2, 3, 4), I32)), lambda x: x[0].transpose((2, 0, 1))),
    OpRow("property.T", lambda x: jnp.ravel(x).reshape(2, 3).T, _args(_arr((6,))),
          lambda x: x.reshape(2, 3).T),
    OpRow("jnp.permute_dims", lambda x: jnp.permute_dims(x, (1, 0, 2)),
          _args(_arr((2, 3, 4))), lambda x: np.transpose(x, (1, 0, 2))),
    OpRow("jnp.matrix_transpose", jnp.matrix_transpose, _args(_arr((2, 3, 4), I32)),
          lambda x: np.swapaxes(x, -1, -2)),
    OpRow("jnp.moveaxis", lambda x: jnp.moveaxis(x, 0, -1), _args(_arr((2, 3, 4))),
          lambda x: np.moveaxis(x, 0, -1)),
    OpRow("jnp.moveaxis_multi", lambda x: jnp.moveaxis(x, (0, 1), (2, 0)),
          _args(_arr((2, 3, 4), BOOL)), lambda x: np.moveaxis(x, (0, 1), (2, 0))),
    OpRow("jnp.swapaxes", lambda x: jnp.swapaxes(x, 0, -1), _args(_arr((2, 3, 4))),
          lambda x: np.swapaxes(x, 0, -1)),
    OpRow("jnp.rollaxis", lambda x: jnp.rollaxis(x, 2, 0), _args(_arr((2, 3, 4), I32)),
          lambda x: np.rollaxis(x, 2, 0)),
    OpRow("jnp.rollaxis_start", lambda x: jnp.rollaxis(x, 0, 3), _args(_arr((2, 3, 4))),
          lambda x: np.rollaxis(x, 0, 3)),
    OpRow("jnp.expand_dims", lambda x: jnp.expand_dims(x, (0, 2)), _args(_arr((2, 3))),
          lambda x: np.expand_dims(x, (0, 2))),
    OpRow("jnp.expand_dims_neg", lambda x: jnp.expand_dims(x, -1), _args(_arr((), I32)),
          lambda x: np.expand_dims(x, -1)),
    OpRow("jnp.squeeze", jnp.squeeze, _args(_arr((1, 3, 1))), np.squeeze),
    OpRow("jnp.squeeze_axis", lambda x: jnp.squeeze(x, axis=-1), _args(_arr((1, 3, 1), BOOL)),
          lambda x: np.squeeze(x, -1)),
    OpRow("method.squeeze", lambda x: jnp.ravel(x).reshape(1, 2).squeeze(0),
          _args(_arr((2,), I32)), lambda x: x),
    OpRow("jnp.broadcast_to", lambda x: jnp.broadcast_to(x, (2, 3, 4)), _args(_arr((3, 1))),
          lambda x: np.broadcast_to(x, (2, 3, 4))),
    OpRow("jnp.broadcast_to_int", lambda x: jnp.broadcast_to(x, 3), _args(_arr((), I32)),
          lambda x: np.broadcast_to(x, 3)),
    OpRow("jnp.broadcast_arrays", jnp.broadcast_arrays, _args(_arr((3, 1)), _arr((4,), I32)),
          lambda x, y: list(np.broadcast_arrays(x, y))),
    OpRow("jnp.atleast_1d", jnp.atleast_1d, _args(_arr(())), np.atleast_1d),
    OpRow("jnp.atleast_2d", jnp.atleast_2d, _args(_arr((3,), I32)), np.atleast_2d),
    OpRow("jnp.atleast_3d", jnp.atleast_3d, _args(_arr((2, 3))), np.atleast_3d),
    OpRow("jnp.atleast_3d_1d", jnp.atleast_3d, _args(_arr((3,), BOOL)), np.atleast_3d),
    OpRow("jnp.atleast_multi", jnp.atleast_2d, _args(_arr(()), _arr((2, 3), I32)),
          lambda x, y: list(np.atleast_2d(x, y))),

    # --------------------------------------------------------- jnp: flips
    OpRow("jnp.flip", jnp.flip, _args(_arr((2, 3))), np.flip),
    OpRow("jnp.flip_axis", lambda x: jnp.flip(x, -1), _args(_arr((2, 3), I32)),
          lambda x: np.flip(x, -1)),
    OpRow("jnp.flip_tuple", lambda x: jnp.flip(x, (0, 2)), _args(_arr((2, 3, 2), BOOL)),
          lambda x: np.flip(x, (0, 2))),
    OpRow("jnp.fliplr", jnp.fliplr, _args(_arr((2, 3))), np.fliplr),
    OpRow("jnp.flipud", jnp.flipud, _args(_arr((2, 3), I32)), np.flipud),
    OpRow("jnp.rot90", jnp.rot90, _args(_arr((2, 3))), np.rot90),
    OpRow("jnp.rot90_k2", lambda x: jnp.rot90(x, 2), _args(_arr((2, 3), I32)),
          lambda x: np.rot90(x, 2)),
    OpRow("jnp.rot90_k3_axes", lambda x: jnp.rot90(x, -1, axes=(2, 0)),
          _args(_arr((2, 3, 4))), lambda x: np.rot90(x, -1, axes=(2, 0))),
    OpRow("jnp.rot90_k0", lambda x: jnp.rot90(x, 4), _args(_arr((2, 3), BOOL)),
          lambda x: np.rot90(x, 4)),
    OpRow("jnp.roll", lambda x: jnp.roll(x, 2), _args(_arr((2, 3))), lambda x: np.roll(x, 2)),
    OpRow("jnp.roll_axis", lambda x: jnp.roll(x, -1, axis=1), _args(_arr((2, 3), I32)),
          lambda x: np.roll(x, -1, axis=1)),
    OpRow("jnp.roll_tuple", lambda x: jnp.roll(x, (1, 5), axis=(0, -1)),
          _args(_arr((2, 3), BOOL)), lambda x: np.roll(x, (1, 5), axis=(0, -1))),
    OpRow("jnp.roll_empty", lambda x: jnp.roll(x, 3, axis=0), _args(_arr((0, 2))),
          lambda x: np.roll(x, 3, axis=0)),

    # ---------------------------------------------------- jnp: repetition
    OpRow("jnp.tile", lambda x: jnp.tile(x, 2), _args(_arr((2, 3))), lambda x: np.tile(x, 2)),
    OpRow("jnp.tile_more_reps", lambda x: jnp.tile(x, (2, 1, 2)), _args(_arr((3,), I32)),
          lambda x: np.tile(x, (2, 1, 2))),
    OpRow("jnp.tile_scalar", lambda x: jnp.tile(x, (2, 2)), _args(_arr((), BOOL)),
          lambda x: np.tile(x, (2, 2))),
    OpRow("jnp.repeat", lambda x: jnp.repeat(x, 2), _args(_arr((2, 3))),
          lambda x: np.repeat(x, 2)),
    OpRow("jnp.repeat_axis", lambda x: jnp.repeat(x, 3, axis=-1), _args(_arr((2, 3), I32)),
          lambda x: np.repeat(x, 3, axis=-1)),
    OpRow("jnp.repeat_array", lambda x: jnp.repeat(x, np.array([0, 2, 1]), axis=1),
          _args(_arr((2, 3))), lambda x: np.repeat(x, [0, 2, 1], axis=1)),
    OpRow("jnp.repeat_total_length",
          lambda x: jnp.repeat(x, np.array([2, 1, 0, 1]), total_repeat_length=6),
          _args(_arr((4,), I32)), lambda x: np.concatenate([np.repeat(x, [2, 1, 0, 1]),
                                                            x[-1:], x[-1:]])),
    OpRow("jnp.repeat_total_truncates",
          lambda x: jnp.repeat(x, 2, axis=0, total_repeat_length=3),
          _args(_arr((3,), BOOL)), lambda x: np.repeat(x, 2)[:3]),
    OpRow("jnp.repeat_scalar", lambda x: jnp.repeat(x, 3), _args(_arr(())),
          lambda x: np.repeat(x, 3)),
    OpRow("jnp.repeat_zero", lambda x: jnp.repeat(x, 0, axis=0), _args(_arr((3, 2))),
          lambda x: np.repeat(x, 0, axis=0)),
    OpRow("method.repeat", lambda x: jnp.ravel(x).repeat(2), _args(_arr((3,), I32)),
          lambda x: x.repeat(2)),
    OpRow("jnp.resize", lambda x: jnp.resize(x, (3, 4)), _args(_arr((5,))),
          lambda x: np.resize(x, (3, 4))),
    OpRow("jnp.resize_empty", lambda x: jnp.resize(x, (2, 0)), _args(_arr((2, 3), I32)),
          lambda x: np.resize(x, (2, 0))),
]

ROWS += [
    # ------------------------------------------------ jnp: joining, splits
    OpRow("jnp.concatenate", lambda x, y: jnp.concatenate([x, y], axis=1),
          _args(_arr((2, 3)), _arr((2, 2))), lambda x, y: np.concatenate([x, y], 1)),
    OpRow("jnp.concatenate_promote", lambda x, y: jnp.concatenate((x, y)),
          _args(_arr((2,), I32), _arr((3,), F32)), lambda x, y: np.concatenate([x, y])),
    OpRow("jnp.concatenate_bool_int", lambda x, y: jnp.concatenate((x, y), axis=-1),
          _args(_arr((2, 2), BOOL), _arr((2, 1), I32)),
          lambda x, y: np.concatenate([x, y], -1)),
    OpRow("jnp.concatenate_none", lambda x, y: jnp.concatenate([x, y], axis=None),
          _args(_arr((2, 3)), _arr((4,))), lambda x, y: np.concatenate([x, y], axis=None)),
    OpRow("jnp.concatenate_array", lambda x: jnp.concatenate(x, axis=1),
          _args(_arr((3, 2, 2), I32)), lambda x: np.concatenate(x, axis=1)),
    OpRow("jnp.concatenate_dtype", lambda x, y: jnp.concatenate([x, y], dtype=jnp.int32),
          _args(_arr((2,)), _arr((1,), BOOL)),
          lambda x, y: np.concatenate([x.astype(np.int32), y.astype(np.int32)])),
    OpRow("jnp.concatenate_empty", lambda x, y: jnp.concatenate([x, y]),
          _args(_arr((0, 3)), _arr((1, 3))), lambda x, y: np.concatenate([x, y])),
    OpRow("jnp.concat", lambda x, y: jnp.concat([x, y], axis=0),
          _args(_arr((1, 3), I32), _arr((2, 3), I32)), lambda x, y: np.concatenate([x, y])),
    OpRow("jnp.stack", lambda x, y: jnp.stack([x, y]), _args(_arr((2, 3)), _arr((2, 3))),
          lambda x, y: np.stack([x, y])),
    OpRow("jnp.stack_axis", lambda x, y: jnp.stack((x, y), axis=-1),
          _args(_arr((2,), I32), _arr((2,), BOOL)), lambda x, y: np.stack([x, y], -1)),
    OpRow("jnp.stack_scalars", lambda x, y: jnp.stack([x, y]),
          _args(_arr(()), _arr(())), lambda x, y: np.stack([x, y])),
    OpRow("jnp.stack_array", lambda x: jnp.stack(x, axis=1), _args(_arr((3, 2))),
          lambda x: np.stack(list(x), axis=1)),
    OpRow("jnp.hstack", lambda x, y: jnp.hstack([x, y]), _args(_arr((2, 3)), _arr((2, 1))),
          lambda x, y: np.hstack([x, y])),
    OpRow("jnp.hstack_1d", lambda x, y: jnp.hstack((x, y)), _args(_arr((2,), I32), _arr(())),
          lambda x, y: np.hstack([x, y]), out_dtype=np.float32),
    OpRow("jnp.vstack", lambda x, y: jnp.vstack([x, y]), _args(_arr((3,)), _arr((2, 3))),
          lambda x, y: np.vstack([x, y])),
    OpRow("jnp.vstack_array", jnp.vstack, _args(_arr((2, 3), I32)), lambda x: np.vstack(x)),
    OpRow("jnp.dstack", lambda x, y: jnp.dstack([x, y]), _args(_arr((2, 3)), _arr((2, 3))),
          lambda x, y: np.dstack([x, y])),
    OpRow("jnp.column_stack", lambda x, y: jnp.column_stack([x, y]),
          _args(_arr((3,), I32), _arr((3, 2), I32)), lambda x, y: np.column_stack([x, y])),
    OpRow("jnp.split", lambda x: jnp.split(x, 2), _args(_arr((4, 3))), lambda x: np.split(x, 2)),
    OpRow("jnp.split_indices", lambda x: jnp.split(x, [1, 3], axis=-1),
          _args(_arr((2, 5), I32)), lambda x: np.split(x, [1, 3], axis=-1)),
    OpRow("jnp.array_split", lambda x: jnp.array_split(x, 3), _args(_arr((7,), BOOL)),
          lambda x: np.array_split(x, 3)),
    OpRow("jnp.hsplit", lambda x: jnp.hsplit(x, 2), _args(_arr((2, 4))),
          lambda x: np.hsplit(x, 2)),
    OpRow("jnp.hsplit_1d", lambda x: jnp.hsplit(x, [2]), _args(_arr((4,), I32)),
          lambda x: np.hsplit(x, [2])),
    OpRow("jnp.vsplit", lambda x: jnp.vsplit(x, 2), _args(_arr((4, 2))),
          lambda x: np.vsplit(x, 2)),
    OpRow("jnp.dsplit", lambda x: jnp.dsplit(x, np.array([1])), _args(_arr((2, 2, 3), I32)),
          lambda x: np.dsplit(x, [1])),
    OpRow("jnp.unstack", jnp.unstack, _args(_arr((3, 2))), lambda x: list(x)),
    OpRow("jnp.unstack_axis", lambda x: jnp.unstack(x, axis=-1), _args(_arr((2, 3), I32)),
          lambda x: [x[:, i] for i in range(3)]),
    OpRow("jnp.block", lambda a, b: jnp.block([[a, b], [b, a]]),
          _args(_arr((2, 2)), _arr((2, 2))), lambda a, b: np.block([[a, b], [b, a]])),
    OpRow("jnp.block_1d", lambda a, b: jnp.block([a, b, a]), _args(_arr((2,), I32), _arr((3,), I32)),
          lambda a, b: np.block([a, b, a])),
    OpRow("jnp.block_rank", lambda a, b: jnp.block([[a], [b]]),
          _args(_arr((3,)), _arr((2, 3))), lambda a, b: np.block([[a], [b]])),
    OpRow("jnp.append", jnp.append, _args(_arr((2, 2)), _arr((3,))), np.append),
    OpRow("jnp.append_axis", lambda x, y: jnp.append(x, y, axis=0),
          _args(_arr((2, 2), I32), _arr((1, 2), I32)), lambda x, y: np.append(x, y, axis=0)),
    OpRow("jnp.insert", lambda x: jnp.insert(x, 1, 9), _args(_arr((4,), I32)),
          lambda x: np.insert(x, 1, 9)),
    OpRow("jnp.insert_indices", lambda x, v: jnp.insert(x, np.array([3, 0, 3]), v),
          _args(_arr((4,)), _arr((3,))), lambda x, v: np.insert(x, [3, 0, 3], v)),
    OpRow("jnp.insert_axis", lambda x, v: jnp.insert(x, -1, v, axis=1),
          _args(_arr((2, 3)), _arr((2,))), lambda x, v: np.insert(x, -1, v, axis=1)),
    OpRow("jnp.insert_slice", lambda x: jnp.insert(x, slice(0, 2), 0.5, axis=0),
          _args(_arr((3, 2))), lambda x: np.insert(x, slice(0, 2), 0.5, axis=0)),
    OpRow("jnp.delete", lambda x: jnp.delete(x, 1), _args(_arr((4,), I32)),
          lambda x: np.delete(x, 1)),
    OpRow("jnp.delete_array", lambda x: jnp.delete(x, np.array([0, 2]), axis=1),
          _args(_arr((2, 4))), lambda x: np.delete(x, [0, 2], axis=1)),
    OpRow("jnp.delete_slice", lambda x: jnp.delete(x, slice(None, None, 2)),
          _args(_arr((2, 3), BOOL)), lambda x: np.delete(x, slice(None, None, 2))),
    OpRow("jnp.delete_mask", lambda x: jnp.delete(x, np.array([True, False, True]), axis=0),
          _args(_arr((3, 2))), lambda x: np.delete(x, [True, False, True], axis=0)),
    # ------------------------------------------------------------ jnp.pad
    OpRow("jnp.pad", lambda x: jnp.pad(x, 1), _args(_arr((2, 3))), lambda x: np.pad(x, 1)),
    OpRow("jnp.pad_pairs", lambda x: jnp.pad(x, ((1, 0), (2, 3)), constant_values=7),
          _args(_arr((2, 3), I32)), lambda x: np.pad(x, ((1, 0), (2, 3)), constant_values=7)),
    OpRow("jnp.pad_constant_per_axis",
          lambda x: jnp.pad(x, ((1, 2), (2, 1)), constant_values=((1, 2), (3, 4))),
          _args(_arr((2, 3))),
          lambda x: np.pad(x, ((1, 2), (2, 1)), constant_values=((1, 2), (3, 4)))),
    OpRow("jnp.pad_bool", lambda x: jnp.pad(x, (1, 2), constant_values=True),
          _args(_arr((3,), BOOL)), lambda x: np.pad(x, (1, 2), constant_values=True)),
    OpRow("jnp.pad_empty_axis", lambda x: jnp.pad(x, 2), _args(_arr((0, 2))),
          lambda x: np.pad(x, 2)),
    OpRow("jnp.pad_edge", lambda x: jnp.pad(x, ((2, 1), (0, 3)), mode="edge"),
          _args(_arr((2, 3))), lambda x: np.pad(x, ((2, 1), (0, 3)), mode="edge")),
    OpRow("jnp.pad_wrap", lambda x: jnp.pad(x, (4, 2), mode="wrap"), _args(_arr((3,), I32)),
          lambda x: np.pad(x, (4, 2), mode="wrap")),
    OpRow("jnp.pad_reflect", lambda x: jnp.pad(x, ((3, 5), (1, 1)), mode="reflect"),
          _args(_arr((3, 2))), lambda x: np.pad(x, ((3, 5), (1, 1)), mode="reflect")),
    OpRow("jnp.pad_reflect_odd",
          lambda x: jnp.pad(x, (4, 6), mode="reflect", reflect_type="odd"),
          _args(_arr((3,), I32)), lambda x: np.pad(x, (4, 6), mode="reflect", reflect_type="odd")),
    OpRow("jnp.pad_reflect_len1", lambda x: jnp.pad(x, (2, 1), mode="reflect"),
          _args(_arr((1,))), lambda x: np.pad(x, (2, 1), mode="reflect")),
    OpRow("jnp.pad_symmetric", lambda x: jnp.pad(x, ((2, 4), (3, 0)), mode="symmetric"),
          _args(_arr((2, 3), I32)), lambda x: np.pad(x, ((2, 4), (3, 0)), mode="symmetric")),
    OpRow("jnp.pad_symmetric_odd",
          lambda x: jnp.pad(x, (5, 3), mode="symmetric", reflect_type="odd"),
          _args(_arr((3,))), lambda x: np.pad(x, (5, 3), mode="symmetric", reflect_type="odd")),
    OpRow("jnp.pad_linear_ramp",
          lambda x: jnp.pad(x, ((2, 3), (1, 2)), mode="linear_ramp", end_values=((5, -2), (1, 0))),
          _args(_arr((2, 3))),
          lambda x: np.pad(x, ((2, 3), (1, 2)), mode="linear_ramp", end_values=((5, -2), (1, 0)))),
    OpRow("jnp.pad_linear_ramp_int", lambda x: jnp.pad(x, (3, 2), mode="linear_ramp"),
          lambda rng: (np.array([10, 4, -7], np.int32),),
          lambda x: np.pad(x, (3, 2), mode="linear_ramp")),
    # mode="empty" leaves the padding unspecified: compare the interior only.
    OpRow("jnp.pad_empty_mode", lambda x: lax.slice_in_dim(jnp.pad(x, (1, 2), mode="empty"), 1, 4),
          _args(_arr((3,))), lambda x: x),
    OpRow("jnp.pad_callable",
          lambda x: jnp.pad(x, 2, mode=lambda v, w, ax, kw: lax.pad(
              lax.slice_in_dim(v, w[0], v.shape[0] - w[1]), np.float32(ax + 1),
              [(w[0], w[1], 0)])),
          _args(_arr((2, 2))),
          lambda x: np.pad(x, 2, mode=_np_pad_callable)),
]


def _np_pad_callable(vector, width, axis, kwargs):
  vector[:width[0]] = axis + 1
  if width[1]:
    vector[-width[1]:] = axis + 1
