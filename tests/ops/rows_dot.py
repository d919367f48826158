"""Op-table rows for the dot family: ``lax.dot_general`` and the matrix
products, diagonals, triangles and ``einsum`` of ``jax.numpy``."""
import ml_dtypes
import numpy as np

import openjax.numpy as jnp
from openjax import lax
from tests.ops.harness import OpRow

F16, F32, I8, I32, U8, BOOL, C64 = (np.float16, np.float32, np.int8, np.int32, np.uint8,
                                    np.bool_, np.complex64)
BF16 = ml_dtypes.bfloat16


def _arr(shape, dtype=F32):
  def make(rng):
    dt = np.dtype(dtype)
    if dt == np.bool_:
      return rng.random(shape) > 0.5
    if dt.kind in "iu":
      return rng.integers(0 if dt.kind == "u" else -5, 6, size=shape).astype(dt)
    if dt.kind == "c":
      return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)
  return make


def _args(*makers):
  return lambda rng: tuple(m(rng) for m in makers)


def _via32(fn, out=None):
  """A reference for narrow floats: compute in float32, round to ``out`` (or
  the inputs' dtype)."""
  def ref(*xs):
    dt = np.dtype(out) if out is not None else xs[0].dtype
    return np.asarray(fn(*(np.asarray(x, np.float32) for x in xs))).astype(dt)
  return ref


MM = (((1,), (0,)), ((), ()))  # plain matrix-matrix dimension numbers


def _dg(dims, **kw):
  return lambda x, y: lax.dot_general(x, y, dims, **kw)


ROWS = [
    # -------------------------------------------------------- lax.dot_general
    OpRow("lax.dot_general_f32", _dg(MM), _args(_arr((3, 4)), _arr((4, 5))), np.matmul,
          grad=True),
    OpRow("lax.dot_general_batch", _dg((((2,), (1,)), ((0,), (0,)))),
          _args(_arr((2, 3, 4)), _arr((2, 4, 5))), np.matmul, grad=True),
    OpRow("lax.dot_general_permuted", _dg((((1, 2), (3, 0)), ((0,), (1,)))),
          _args(_arr((2, 4, 3)), _arr((3, 2, 5, 4))),
          lambda x, y: np.einsum("bkc,cbnk->bn", x, y), grad=True),
    OpRow("lax.dot_general_outer", _dg((((), ()), ((), ()))),
          _args(_arr((2, 3)), _arr((4,))), lambda x, y: np.multiply.outer(x, y), grad=True),
    OpRow("lax.dot_general_i32", _dg(MM), _args(_arr((3, 4), I32), _arr((4, 2), I32)),
          np.matmul),
    OpRow("lax.dot_general_i8_wraps", _dg(MM),
          _args(lambda r: r.integers(-128, 128, (3, 40)).astype(I8),
                lambda r: r.integers(-128, 128, (40, 2)).astype(I8)),
          lambda x, y: (x.astype(np.int64) @ y.astype(np.int64)).astype(I8)),
    OpRow("lax.dot_general_i8_pref_i32", _dg(MM, preferred_element_type=I32),
          _args(_arr((3, 4), I8), _arr((4, 2), I8)),
          lambda x, y: x.astype(I32) @ y.astype(I32)),
    OpRow("lax.dot_general_u8_pref_f32", _dg(MM, preferred_element_type=F32),
          _args(_arr((3, 4), U8), _arr((4, 2), U8)),
          lambda x, y: x.astype(F32) @ y.astype(F32)),
    OpRow("lax.dot_general_bool", _dg(MM), _args(_arr((3, 4), BOOL), _arr((4, 2), BOOL)),
          lambda x, y: (x.astype(I32) @ y.astype(I32)) > 0),
    OpRow("lax.dot_general_f16", _dg(MM), _args(_arr((3, 8), F16), _arr((8, 2), F16)),
          _via32(np.matmul)),
    OpRow("lax.dot_general_bf16", _dg(MM), _args(_arr((3, 8), BF16), _arr((8, 2), BF16)),
          _via32(np.matmul)),
    OpRow("lax.dot_general_bf16_pref_f32", _dg(MM, preferred_element_type=F32),
          _args(_arr((3, 8), BF16), _arr((8, 2), BF16)), _via32(np.matmul, F32)),
    OpRow("lax.dot_general_c64", _dg(MM), _args(_arr((3, 4), C64), _arr((4, 2), C64)),
          np.matmul, grad=True),
    OpRow("lax.dot_general_mixed_i32_f32", _dg(MM),
          _args(_arr((3, 4), I32), _arr((4, 2))), lambda x, y: x.astype(F32) @ y, grad=True),
    OpRow("lax.dot_general_mixed_f32_c64", _dg(MM),
          _args(_arr((3, 4)), _arr((4, 2), C64)), lambda x, y: x.astype(C64) @ y, grad=True),
    OpRow("lax.dot_general_empty_contract", _dg(MM), _args(_arr((3, 0)), _arr((0, 2))),
          np.matmul, grad=True),
    OpRow("lax.dot_general_precision", _dg(MM, precision=lax.Precision.HIGHEST),
          _args(_arr((3, 4)), _arr((4, 5))), np.matmul, grad=True),
    OpRow("lax.dot_vv", lambda x, y: lax.dot(x, y), _args(_arr((5,)), _arr((5,))), np.dot,
          grad=True),
    OpRow("lax.dot_mv", lambda x, y: lax.dot(x, y, precision="highest"),
          _args(_arr((3, 5)), _arr((5,))), np.dot, grad=True),
    OpRow("lax.batch_matmul", lax.batch_matmul, _args(_arr((2, 3, 4)), _arr((2, 4, 5))),
          np.matmul, grad=True),

    # -------------------------------------------------------------- jnp.matmul
    OpRow("jnp.matmul_2d", jnp.matmul, _args(_arr((3, 4)), _arr((4, 5))), np.matmul, grad=True),
    OpRow("jnp.matmul_vm", jnp.matmul, _args(_arr((4,)), _arr((4, 5))), np.matmul, grad=True),
    OpRow("jnp.matmul_mv", jnp.matmul, _args(_arr((3, 4)), _arr((4,))), np.matmul, grad=True),
    OpRow("jnp.matmul_vv", jnp.matmul, _args(_arr((4,)), _arr((4,))), np.matmul, grad=True),
    OpRow("jnp.matmul_broadcast", jnp.matmul, _args(_arr((2, 1, 3, 4)), _arr((5, 4, 2))),
          np.matmul, grad=True),
    OpRow("jnp.matmul_ones_batch", jnp.matmul, _args(_arr((1, 1, 3, 4)), _arr((1, 4, 2))),
          np.matmul, grad=True),
    OpRow("jnp.matmul_batch_vec", jnp.matmul, _args(_arr((2, 3, 4)), _arr((4,))), np.matmul,
          grad=True),
    OpRow("jnp.matmul_vec_batch", jnp.matmul, _args(_arr((3,)), _arr((2, 3, 4))), np.matmul,
          grad=True),
    OpRow("jnp.matmul_i32", jnp.matmul, _args(_arr((3, 4), I32), _arr((4, 2), I32)),
          np.matmul),
    OpRow("jnp.matmul_bool", jnp.matmul, _args(_arr((3, 4), BOOL), _arr((4, 2), BOOL)),
          np.matmul),
    OpRow("jnp.matmul_i32_f32", jnp.matmul, _args(_arr((3, 4), I32), _arr((4, 2))),
          np.matmul, grad=True),
    OpRow("jnp.matmul_i8_u8", jnp.matmul, _args(_arr((3, 4), I8), _arr((4, 2), U8)),
          np.matmul),
    OpRow("jnp.matmul_f16", jnp.matmul, _args(_arr((3, 8), F16), _arr((8, 2), F16)),
          _via32(np.matmul)),
    OpRow("jnp.matmul_bf16_f32", jnp.matmul, _args(_arr((3, 8), BF16), _arr((8, 2))),
          _via32(np.matmul, F32)),
    OpRow("jnp.matmul_c64", jnp.matmul, _args(_arr((2, 3, 4), C64), _arr((2, 4, 2), C64)),
          np.matmul, grad=True),
    OpRow("jnp.matmul_pref_f32", lambda x, y: jnp.matmul(x, y, preferred_element_type=F32),
          _args(_arr((3, 4), I8), _arr((4, 2), I8)),
          lambda x, y: x.astype(F32) @ y.astype(F32)),
    OpRow("jnp.matmul_operator", lambda x, y: jnp.asarray(x) @ y,
          _args(_arr((3, 4)), _arr((4, 2))), np.matmul, grad=True),

    # ---------------------------------------------------- dot and friends
    OpRow("jnp.dot_2d", jnp.dot, _args(_arr((3, 4)), _arr((4, 2))), np.dot, grad=True),
    OpRow("jnp.dot_nd", jnp.dot, _args(_arr((2, 3, 4)), _arr((5, 4, 2))), np.dot, grad=True),
    OpRow("jnp.dot_nd_vec", jnp.dot, _args(_arr((2, 3, 4)), _arr((4,), I32)), np.dot, grad=True),
    OpRow("jnp.dot_scalar", lambda x: jnp.dot(x, 2.0), _args(_arr((3,), I32)),
          lambda x: x * F32(2.0)),
    OpRow("jnp.dot_bool", jnp.dot, _args(_arr((3, 4), BOOL), _arr((4,), BOOL)), np.dot),
    OpRow("jnp.dot_bf16", jnp.dot, _args(_arr((3, 4), BF16), _arr((4,), BF16)),
          _via32(np.dot)),
    OpRow("jnp.dot_method", lambda x, y: jnp.asarray(x).dot(y),
          _args(_arr((3, 4)), _arr((4,))), np.dot, grad=True),
    OpRow("jnp.vdot_c64", jnp.vdot, _args(_arr((2, 3), C64), _arr((6,), C64)),
          lambda x, y: np.vdot(x, y), grad=True),
    OpRow("jnp.vdot_i32_f32", jnp.vdot, _args(_arr((2, 3), I32), _arr((3, 2))), np.vdot, grad=True),
    OpRow("jnp.vecdot", jnp.vecdot, _args(_arr((2, 3, 4), C64), _arr((3, 4), C64)),
          lambda x, y: np.sum(np.conj(x) * y, axis=-1), grad=True),
    OpRow("jnp.vecdot_axis0", lambda x, y: jnp.vecdot(x, y, axis=0),
          _args(_arr((3, 2), I32), _arr((3, 1), I32)), lambda x, y: np.sum(x * y, axis=0)),
    OpRow("jnp.matvec", jnp.matvec, _args(_arr((2, 3, 4)), _arr((4,))),
          lambda x, y: np.matmul(x, y), grad=True),
    OpRow("jnp.vecmat", jnp.vecmat, _args(_arr((2, 3), C64), _arr((3, 4), C64)),
          lambda x, y: np.matmul(np.conj(x), y), grad=True),
    OpRow("jnp.inner", jnp.inner, _args(_arr((2, 4)), _arr((3, 4))), np.inner, grad=True),
    OpRow("jnp.inner_scalar", lambda x: jnp.inner(x, 3), _args(_arr((2,), I32)),
          lambda x: np.inner(x, np.int32(3))),
    OpRow("jnp.outer", jnp.outer, _args(_arr((2, 2), I32), _arr((3,))), np.outer, grad=True),
    OpRow("jnp.outer_bool", jnp.outer, _args(_arr((3,), BOOL), _arr((2,), BOOL)), np.outer),
    OpRow("jnp.tensordot_int", jnp.tensordot, _args(_arr((2, 3, 4)), _arr((3, 4, 5))),
          np.tensordot, grad=True),
    OpRow("jnp.tensordot_axes", lambda x, y: jnp.tensordot(x, y, axes=([0, 2], [2, 0])),
          _args(_arr((2, 3, 4), I32), _arr((4, 5, 2), I32)),
          lambda x, y: np.tensordot(x, y, axes=([0, 2], [2, 0]))),
    OpRow("jnp.tensordot_0", lambda x, y: jnp.tensordot(x, y, 0),
          _args(_arr((2,)), _arr((3,))), lambda x, y: np.tensordot(x, y, 0), grad=True),
    OpRow("jnp.kron", jnp.kron, _args(_arr((2, 3), I32), _arr((2, 2), I32)), np.kron),
    OpRow("jnp.kron_ranks", jnp.kron, _args(_arr((3,)), _arr((2, 2), F16)), np.kron, grad=True),
    OpRow("jnp.cross", jnp.cross, _args(_arr((4, 3)), _arr((3,))), np.cross, grad=True),
    OpRow("jnp.cross_axis", lambda x, y: jnp.cross(x, y, axisa=0, axisb=0, axisc=0),
          _args(_arr((3, 2), I32), _arr((3, 2), I32)),
          lambda x, y: np.cross(x, y, axisa=0, axisb=0, axisc=0)),
    OpRow("jnp.cross_2x3", jnp.cross, _args(_arr((2,)), _arr((2, 3))),
          lambda x, y: np.cross(np.concatenate([x, np.zeros(1, x.dtype)]), y), grad=True),
    OpRow("jnp.cross_2d", jnp.cross, _args(_arr((4, 2)), _arr((4, 2))),
          lambda x, y: x[..., 0] * y[..., 1] - x[..., 1] * y[..., 0], grad=True),

    # ----------------------------------------------- diagonals and triangles
    OpRow("jnp.diagonal", jnp.diagonal, _args(_arr((3, 4))), np.diagonal, grad=True),
    OpRow("jnp.diagonal_offset", lambda x: jnp.diagonal(x, 1), _args(_arr((4, 3), I32)),
          lambda x: np.diagonal(x, 1)),
    OpRow("jnp.diagonal_neg_axes", lambda x: jnp.diagonal(x, -1, 2, 0),
          _args(_arr((3, 2, 4), BOOL)), lambda x: np.diagonal(x, -1, 2, 0).copy()),
    OpRow("jnp.diagonal_empty", lambda x: jnp.diagonal(x, 5), _args(_arr((2, 3))),
          lambda x: np.diagonal(x, 5), grad=True),
    OpRow("jnp.diagonal_method", lambda x: jnp.asarray(x).diagonal(offset=-1),
          _args(_arr((3, 3), C64)), lambda x: x.diagonal(offset=-1), grad=True),
    OpRow("jnp.trace", jnp.trace, _args(_arr((3, 4))), np.trace, grad=True),
    OpRow("jnp.trace_i8", lambda x: jnp.trace(x, 1), _args(_arr((3, 4), I8)),
          lambda x: np.trace(x, 1)),
    OpRow("jnp.trace_axes_dtype", lambda x: jnp.trace(x, -1, 2, 1, dtype=F32),
          _args(_arr((2, 3, 3), I32)), lambda x: np.trace(x, -1, 2, 1, dtype=F32)),
    OpRow("jnp.trace_bool", jnp.trace, _args(_arr((3, 3), BOOL)), np.trace),
    OpRow("jnp.trace_method", lambda x: jnp.asarray(x).trace(), _args(_arr((3, 3), F16)),
          _via32(np.trace)),
    OpRow("jnp.trace_traced_offset", lambda x, k: jnp.trace(x, k),
          _args(_arr((3, 4)), lambda r: np.int32(1)), lambda x, k: np.trace(x, int(k)),
          atol=1e-5),
    OpRow("jnp.tril", jnp.tril, _args(_arr((3, 4))), np.tril, grad=True),
    OpRow("jnp.tril_k", lambda x: jnp.tril(x, -1), _args(_arr((2, 3, 4), I32)),
          lambda x: np.tril(x, -1)),
    OpRow("jnp.tril_big_k", lambda x: jnp.tril(x, 10), _args(_arr((3, 3), BOOL)),
          lambda x: np.tril(x, 10)),
    OpRow("jnp.triu", jnp.triu, _args(_arr((4, 3), C64)), np.triu, grad=True),
    OpRow("jnp.triu_k", lambda x: jnp.triu(x, 2), _args(_arr((2, 3, 4), BF16)),
          lambda x: np.triu(x, 2)),
    OpRow("jnp.triu_neg_k", lambda x: jnp.triu(x, -5), _args(_arr((3, 3), I32)),
          lambda x: np.triu(x, -5)),

    # ------------------------------------------------------------------ einsum
    OpRow("jnp.einsum_matmul", lambda x, y: jnp.einsum("ij,jk->ik", x, y),
          _args(_arr((3, 4)), _arr((4, 5))), lambda x, y: np.einsum("ij,jk->ik", x, y), grad=True),
    OpRow("jnp.einsum_implicit", lambda x, y: jnp.einsum("kj,ji", x, y),
          _args(_arr((3, 4)), _arr((4, 5))), lambda x, y: np.einsum("kj,ji", x, y), grad=True),
    OpRow("jnp.einsum_batch", lambda x, y: jnp.einsum("bij,bjk->bki", x, y),
          _args(_arr((2, 3, 4)), _arr((2, 4, 5))),
          lambda x, y: np.einsum("bij,bjk->bki", x, y), grad=True),
    OpRow("jnp.einsum_trace", lambda x: jnp.einsum("ii", x), _args(_arr((4, 4), I32)),
          lambda x: np.einsum("ii", x)),
    OpRow("jnp.einsum_diag", lambda x: jnp.einsum("ii->i", x), _args(_arr((4, 4))),
          lambda x: np.einsum("ii->i", x), grad=True),
    OpRow("jnp.einsum_triple_repeat", lambda x: jnp.einsum("iji->j", x),
          _args(_arr((3, 2, 3))), lambda x: np.einsum("iji->j", x), grad=True),
    OpRow("jnp.einsum_sum", lambda x: jnp.einsum("ij->", x), _args(_arr((3, 4), I8)),
          lambda x: np.einsum("ij->", x).astype(I8)),
    OpRow("jnp.einsum_transpose", lambda x: jnp.einsum("ijk->kij", x),
          _args(_arr((2, 3, 4))), lambda x: np.einsum("ijk->kij", x), grad=True),
    OpRow("jnp.einsum_outer", lambda x, y: jnp.einsum("i,j->ij", x, y),
          _args(_arr((3,), C64), _arr((2,), C64)), lambda x, y: np.einsum("i,j->ij", x, y),
          grad=True),
    OpRow("jnp.einsum_ellipsis", lambda x, y: jnp.einsum("...ij,...jk->...ik", x, y),
          _args(_arr((2, 1, 3, 4)), _arr((5, 4, 2))),
          lambda x, y: np.einsum("...ij,...jk->...ik", x, y), grad=True),
    OpRow("jnp.einsum_chain", lambda x, y, z: jnp.einsum("ij,jk,kl->il", x, y, z),
          _args(_arr((2, 3)), _arr((3, 4)), _arr((4, 5))),
          lambda x, y, z: np.einsum("ij,jk,kl->il", x, y, z), atol=1e-5, grad=True),
    OpRow("jnp.einsum_unoptimized",
          lambda x, y, z: jnp.einsum("ij,jk,kl->il", x, y, z, optimize=False),
          _args(_arr((2, 3), I32), _arr((3, 4), I32), _arr((4, 5), I32)),
          lambda x, y, z: np.einsum("ij,jk,kl->il", x, y, z)),
    OpRow("jnp.einsum_greedy_mixed",
          lambda x, y: jnp.einsum("ijk,jl->ilk", x, y, optimize="greedy"),
          _args(_arr((2, 3, 4), I32), _arr((3, 2))),
          lambda x, y: np.einsum("ijk,jl->ilk", x, y), atol=1e-5, grad=True),
    OpRow("jnp.einsum_unique_and_repeat", lambda x, y: jnp.einsum("iij,jk->k", x, y),
          _args(_arr((3, 3, 2)), _arr((2, 4))), lambda x, y: np.einsum("iij,jk->k", x, y),
          atol=1e-5, grad=True),
    OpRow("jnp.einsum_bool", lambda x, y: jnp.einsum("ij,jk->ik", x, y),
          _args(_arr((3, 4), BOOL), _arr((4, 2), BOOL)),
          lambda x, y: np.einsum("ij,jk->ik", x, y)),
    OpRow("jnp.einsum_bool_sum", lambda x: jnp.einsum("ij->i", x), _args(_arr((3, 4), BOOL)),
          lambda x: np.any(x, axis=1)),
    OpRow("jnp.einsum_f16", lambda x, y: jnp.einsum("ij,j->i", x, y),
          _args(_arr((3, 8), F16), _arr((8,), F16)), _via32(lambda x, y: x @ y)),
    OpRow("jnp.einsum_pref", lambda x, y: jnp.einsum("ij,j", x, y, preferred_element_type=I32),
          _args(_arr((3, 4), I8), _arr((4,), I8)),
          lambda x, y: x.astype(I32) @ y.astype(I32)),
    OpRow("jnp.einsum_interleaved", lambda x, y: jnp.einsum(x, [0, 1], y, [1], [0]),
          _args(_arr((3, 4)), _arr((4,))), lambda x, y: np.einsum(x, [0, 1], y, [1], [0]),
          grad=True),
]
