"""Op-table rows for array creation from operands (``array``, ``*_like``,
``linspace`` & co., ``diag``, ``meshgrid``), selection and comparison
(``where``, ``clip``, ``isclose``, ``array_equal``), casting (``astype``,
``view``, scalar types) and ``round``."""
import ml_dtypes
import numpy as np

import openjax.numpy as jnp
from tests.ops.harness import OpRow


def _arr(shape, dtype=np.float32, lo=-5, hi=6):
  def make(rng):
    dt = np.dtype(dtype)
    if dt == np.bool_:
      return rng.random(shape) > 0.5
    if dt.kind in "iu":
      return rng.integers(max(lo, 0) if dt.kind == "u" else lo, hi, size=shape).astype(dt)
    if dt.kind == "c":
      return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)
  return make


def _pos(shape, dtype=np.float32):
  return lambda rng: (rng.random(shape) + 0.5).astype(dtype)


def _const(value):
  return lambda rng: np.asarray(value)


def _args(*makers):
  return lambda rng: tuple(m(rng) for m in makers)


def _with_nans(shape):
  def make(rng):
    x = rng.standard_normal(shape).astype(np.float32)
    x.flat[::3] = np.nan
    return x
  return make


def _close_pair(rng):
  a = rng.standard_normal((3, 4)).astype(np.float32)
  b = a + np.float32(1e-7) * rng.standard_normal((3, 4)).astype(np.float32)
  b[0, 0] += 1.0
  a[1, 1] = b[1, 1] = np.inf
  a[2, 2] = b[2, 2] = np.nan
  return a, b


def _near_pair(rng):
  a = rng.standard_normal(3).astype(np.float32)
  return a, a + np.float32(1e-7)


def _tiled_pair(rng):
  a = rng.integers(0, 5, (1, 3)).astype(np.int32)
  return a, np.tile(a, (2, 1))


F32, F16, I32, I8, U8, BOOL, C64 = (np.float32, np.float16, np.int32, np.int8, np.uint8,
                                    np.bool_, np.complex64)

ROWS = [
    # ----------------------------------------------------------- array/asarray
    OpRow("jnp.array", jnp.array, _args(_arr((2, 3))), np.array),
    OpRow("jnp.array_int", jnp.array, _args(_arr((4,), I8)), np.array),
    OpRow("jnp.array_dtype", lambda x: jnp.array(x, dtype=jnp.int32), _args(_arr((3,))),
          lambda x: x.astype(np.int32)),
    OpRow("jnp.array_ndmin", lambda x: jnp.array(x, ndmin=3), _args(_arr((2,))),
          lambda x: np.array(x, ndmin=3)),
    OpRow("jnp.array_nested", lambda x, y: jnp.array([[x, y], [y, x]]),
          _args(_arr((3,)), _arr((3,))), lambda x, y: np.array([[x, y], [y, x]])),
    OpRow("jnp.array_mixed_leaves", lambda x: jnp.array([x, 1.5, 2]), _args(_arr((), F32)),
          lambda x: np.array([x, 1.5, 2], np.float32)),
    OpRow("jnp.array_int_leaves_promote", lambda x: jnp.array([x, 2.5]), _args(_arr((), I32)),
          lambda x: np.array([x, 2.5], np.float32)),
    OpRow("jnp.asarray", jnp.asarray, _args(_arr((2, 2), I32)), np.asarray),
    OpRow("jnp.asarray_dtype", lambda x: jnp.asarray(x, jnp.float16), _args(_arr((3,))),
          lambda x: x.astype(np.float16)),
    OpRow("jnp.copy", jnp.copy, _args(_arr((3,), BOOL)), np.copy),
    OpRow("jnp.float32_call", jnp.float32, _args(_arr((3,), I32)),
          lambda x: x.astype(np.float32)),
    OpRow("jnp.int8_call", jnp.int8, _args(_arr((2, 2))), lambda x: x.astype(np.int8)),
    OpRow("jnp.bool_call", jnp.bool_, _args(_arr((4,), I32)), lambda x: jnp.asarray(x).astype(bool)),
    # ----------------------------------------------------------------- *_like
    OpRow("jnp.zeros_like", jnp.zeros_like, _args(_arr((2, 3))), np.zeros_like),
    OpRow("jnp.ones_like_int", jnp.ones_like, _args(_arr((4,), I8)), np.ones_like),
    OpRow("jnp.zeros_like_dtype_shape", lambda x: jnp.zeros_like(x, dtype=jnp.int32, shape=(2,)),
          _args(_arr((3,))), lambda x: np.zeros_like(x, dtype=np.int32, shape=(2,))),
    OpRow("jnp.empty_like", lambda x: jnp.empty_like(x), _args(_arr((3,), BOOL)),
          lambda x: np.zeros_like(x)),
    OpRow("jnp.full_like", lambda x: jnp.full_like(x, 2.5), _args(_arr((2, 2))),
          lambda x: np.full_like(x, 2.5)),
    OpRow("jnp.full_like_int_trunc", lambda x: jnp.full_like(x, 7), _args(_arr((3,), U8)),
          lambda x: np.full_like(x, 7)),
    OpRow("jnp.full_like_array_fill", lambda x, v: jnp.full_like(x, v),
          _args(_arr((2, 3)), _arr((3,), I32)), lambda x, v: np.full_like(x, v)),
    OpRow("jnp.full_like_traced_fill", lambda x, v: jnp.full_like(x, v, shape=(2, 2)),
          _args(_arr((3,)), _arr(())), lambda x, v: np.full((2, 2), v, np.float32)),
    OpRow("jnp.full_array_fill", lambda v: jnp.full((2, 3), v), _args(_arr((3,))),
          lambda v: np.full((2, 3), v)),
    OpRow("jnp.full_scalar_fill", lambda v: jnp.full((2,), v, dtype=jnp.int32),
          _args(_arr((), F32)), lambda v: np.full((2,), v, np.int32)),
    # ----------------------------------------------------------------- spaces
    OpRow("jnp.linspace", lambda a, b: jnp.linspace(a, b, 7), _args(_arr(()), _arr(())),
          lambda a, b: np.linspace(a, b, 7, dtype=np.float32)),
    OpRow("jnp.linspace_arrays_axis", lambda a, b: jnp.linspace(a, b, 5, axis=-1),
          _args(_arr((2, 1)), _arr((3,))), lambda a, b: np.linspace(a, b, 5, axis=-1)),
    OpRow("jnp.linspace_no_endpoint_retstep",
          lambda a, b: jnp.linspace(a, b, 4, endpoint=False, retstep=True),
          _args(_arr((2,)), _arr((2,))),
          lambda a, b: np.linspace(a, b, 4, endpoint=False, retstep=True)),
    OpRow("jnp.linspace_int", lambda a, b: jnp.linspace(a, b, 6, dtype=jnp.int32),
          _args(_const(np.int32(-3)), _const(np.int32(11))),
          lambda a, b: np.linspace(a, b, 6, dtype=np.int32)),
    OpRow("jnp.linspace_num1", lambda a, b: jnp.linspace(a, b, 1), _args(_arr((2,)), _arr(())),
          lambda a, b: np.linspace(a, b, 1)),
    OpRow("jnp.logspace", lambda a, b: jnp.logspace(a, b, 5), _args(_arr(()), _arr(())),
          lambda a, b: np.logspace(a, b, 5, dtype=np.float32), rtol=1e-5),
    OpRow("jnp.logspace_base", lambda a, b: jnp.logspace(a, b, 4, base=2, axis=1),
          _args(_arr((3,)), _arr((3,))), lambda a, b: np.logspace(a, b, 4, base=2, axis=1),
          rtol=1e-5),
    OpRow("jnp.geomspace", lambda a, b: jnp.geomspace(a, b, 5), _args(_pos(()), _pos(())),
          lambda a, b: np.geomspace(a, b, 5), rtol=1e-5),
    OpRow("jnp.geomspace_axis", lambda a, b: jnp.geomspace(a, b, 3, axis=1),
          _args(_pos((2,)), _pos((2,))), lambda a, b: np.geomspace(a, b, 3, axis=1), rtol=1e-5),
    # ------------------------------------------------------ eye / tri / diag
    OpRow("jnp.eye_traced_k", lambda k: jnp.eye(3, 4, k=k), _args(_const(np.int32(1))),
          lambda k: np.eye(3, 4, k=int(k), dtype=np.float32)),
    OpRow("jnp.tri_traced_k", lambda k: jnp.tri(3, 4, k=k, dtype=jnp.int32),
          _args(_const(np.int32(-1))), lambda k: np.tri(3, 4, k=int(k), dtype=np.int32)),
    OpRow("jnp.diag_1d", jnp.diag, _args(_arr((3,))), np.diag),
    OpRow("jnp.diag_1d_k", lambda v: jnp.diag(v, 2), _args(_arr((3,), I32)),
          lambda v: np.diag(v, 2)),
    OpRow("jnp.diag_1d_neg_k", lambda v: jnp.diag(v, -1), _args(_arr((2,))),
          lambda v: np.diag(v, -1)),
    OpRow("jnp.diag_2d", lambda m: jnp.diag(m, 1), _args(_arr((3, 4))),
          lambda m: np.diag(m, 1)),
    OpRow("jnp.diagflat", lambda v: jnp.diagflat(v, -1), _args(_arr((2, 2))),
          lambda v: np.diagflat(v, -1)),
    # ------------------------------------------------------------ grids
    OpRow("jnp.meshgrid", lambda x, y: jnp.meshgrid(x, y), _args(_arr((3,)), _arr((4,), I32)),
          lambda x, y: tuple(np.meshgrid(x, y))),
    OpRow("jnp.meshgrid_ij_sparse",
          lambda x, y, z: jnp.meshgrid(x, y, z, indexing="ij", sparse=True),
          _args(_arr((2,)), _arr((3,)), _arr((4,))),
          lambda x, y, z: tuple(np.meshgrid(x, y, z, indexing="ij", sparse=True))),
    # ---------------------------------------------------------------- where
    OpRow("jnp.where", jnp.where, _args(_arr((2, 3), BOOL), _arr((2, 3)), _arr((3,), I32)),
          np.where),
    OpRow("jnp.where_scalar_cond", jnp.where, _args(_const(True), _arr((2,)), _arr((2,))),
          np.where),
    OpRow("jnp.where_int_cond_weak", lambda c, x: jnp.where(c, x, 0.0),
          _args(_arr((4,), I32), _arr((4,), F16)), lambda c, x: np.where(c, x, np.float16(0))),
    OpRow("jnp.where_one_arg", lambda c: jnp.where(c, size=4, fill_value=-1),
          _args(_arr((5,), BOOL)),
          lambda c: (np.concatenate([np.nonzero(c)[0], [-1] * 4])[:4].astype(np.int32),)),
    # ----------------------------------------------------------------- clip
    OpRow("jnp.clip", lambda x: jnp.clip(x, -0.5, 0.5), _args(_arr((3, 3))),
          lambda x: np.clip(x, -0.5, 0.5)),
    OpRow("jnp.clip_arrays", jnp.clip, _args(_arr((2, 3)), _arr((3,)), _arr((2, 1))),
          lambda x, lo, hi: np.minimum(hi, np.maximum(lo, x))),
    OpRow("jnp.clip_min_only_int", lambda x: jnp.clip(x, min=0), _args(_arr((5,), I32)),
          lambda x: np.clip(x, 0, None)),
    OpRow("jnp.clip_int_float_bound", lambda x: jnp.clip(x, max=1.5), _args(_arr((5,), I8)),
          lambda x: np.minimum(x, 1.5).astype(np.float32)),
    # ----------------------------------------------------------- comparisons
    OpRow("jnp.isclose", jnp.isclose, _close_pair, np.isclose),
    OpRow("jnp.isclose_equal_nan", lambda a, b: jnp.isclose(a, b, equal_nan=True),
          _close_pair, lambda a, b: np.isclose(a, b, equal_nan=True)),
    OpRow("jnp.isclose_int_float", lambda a, b: jnp.isclose(a, b, atol=0.6),
          _args(_arr((4,), I32), _arr((4,))), lambda a, b: np.isclose(a, b, atol=0.6)),
    OpRow("jnp.isclose_complex", jnp.isclose, _args(_arr((3,), C64), _arr((3,), C64)),
          np.isclose),
    OpRow("jnp.allclose", jnp.allclose, _args(_arr((3,)), _arr((3,))),
          lambda a, b: np.bool_(np.allclose(a, b))),
    OpRow("jnp.allclose_true", jnp.allclose, _near_pair,
          lambda a, b: np.bool_(np.allclose(a, b))),
    OpRow("jnp.array_equal", jnp.array_equal, _args(_arr((3,), I32), _arr((3,), I32)),
          lambda a, b: np.bool_(np.array_equal(a, b))),
    OpRow("jnp.array_equal_self_nan", lambda a: jnp.array_equal(a, a, equal_nan=True),
          _args(_with_nans((4,))), lambda a: np.bool_(np.array_equal(a, a, equal_nan=True))),
    OpRow("jnp.array_equal_shape_mismatch", jnp.array_equal, _args(_arr((3,)), _arr((2,))),
          lambda a, b: np.bool_(False)),
    OpRow("jnp.array_equiv", jnp.array_equiv, _args(_arr((1, 3), I32), _arr((2, 3), I32)),
          lambda a, b: np.bool_(np.array_equiv(a, b))),
    OpRow("jnp.array_equiv_bcast_true", jnp.array_equiv, _tiled_pair,
          lambda a, b: np.bool_(np.array_equiv(a, b))),
    # -------------------------------------------------------------- casting
    OpRow("jnp.astype", lambda x: jnp.astype(x, jnp.int8), _args(_arr((3,))),
          lambda x: x.astype(np.int8)),
    OpRow("jnp.astype_bool", lambda x: jnp.asarray(x).astype(bool),
          _args(_arr((4,), I32)),
          lambda x: x.astype(bool)),
    OpRow("jnp.astype_complex_to_bool", lambda x: jnp.astype(x, jnp.bool_),
          _args(lambda rng: np.array([0, 1j, 1, 0], np.complex64)), lambda x: x != 0),
    OpRow("jnp.astype_bfloat16", lambda x: jnp.asarray(x).astype(jnp.bfloat16).astype(jnp.float32),
          _args(_arr((3,))), lambda x: x.astype(ml_dtypes.bfloat16).astype(F32), atol=1e-2, rtol=1e-2),
    OpRow("Array.view_same_size", lambda x: jnp.asarray(x).view(jnp.int32), _args(_arr((2, 3))),
          lambda x: x.view(np.int32)),
    OpRow("Array.view_smaller", lambda x: jnp.asarray(x).view(jnp.uint8), _args(_arr((2, 2))),
          lambda x: x.view(np.uint8)),
    OpRow("Array.view_larger", lambda x: jnp.asarray(x).view(jnp.float32), _args(_arr((3, 8), U8)),
          lambda x: x.view(np.float32)),
    OpRow("Array.view_bool", lambda x: jnp.asarray(x).view(jnp.uint8), _args(_arr((4,), BOOL)),
          lambda x: x.view(np.uint8).copy()),
    OpRow("Array.view_0d", lambda x: jnp.asarray(x).view(jnp.uint32), _args(_arr(())),
          lambda x: x.view(np.uint32)),
    OpRow("Array.view_complex", lambda x: jnp.asarray(x).view(jnp.float32), _args(_arr((2,), C64)),
          lambda x: x.view(np.float32).copy()),
    OpRow("Array.view_to_complex", lambda x: jnp.asarray(x).view(jnp.complex64), _args(_arr((2, 4))),
          lambda x: x.view(np.complex64)),
    # ------------------------------------------------------------- rounding
    OpRow("jnp.round", jnp.round, _args(lambda rng: np.array([0.5, 1.5, 2.5, -0.5, -1.7],
                                                              np.float32)), np.round),
    OpRow("jnp.round_decimals", lambda x: jnp.round(x, 2), _args(_arr((5,))),
          lambda x: np.round(x, 2), atol=1e-6),
    OpRow("jnp.round_f16", lambda x: jnp.round(x, 1), _args(_arr((4,), F16)),
          lambda x: np.round(x.astype(np.float32), 1).astype(np.float16)),
    OpRow("jnp.round_int", lambda x: jnp.round(x, 1), _args(_arr((4,), I32)),
          lambda x: x),
    OpRow("jnp.round_complex", jnp.round, _args(_arr((3,), C64)), np.round),
    OpRow("jnp.around", lambda x: jnp.around(x, 1), _args(_arr((3,))),
          lambda x: np.around(x, 1), atol=1e-6),
    OpRow("Array.round", lambda x: jnp.asarray(x).round(), _args(_arr((3,))), np.round),
]
