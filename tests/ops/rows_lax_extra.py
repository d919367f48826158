"""Op-table rows for the lax functions added with issue 17: stack/unstack,
optimization_barrier, copy, stage, broadcast_like, empty and scatter_apply."""
import numpy as np

import openjax.lax as lax
import openjax.numpy as jnp
from tests.ops.harness import OpRow

F32, I32 = np.float32, np.int32


def _normal(*shapes, dtype=F32):
  return lambda rng: tuple(rng.standard_normal(s).astype(dtype) for s in shapes)


_SCATTER_DN = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                          scatter_dims_to_operand_dims=(0,))

def _spd(n):
  def make(rng):
    m = rng.standard_normal((n, n)).astype(F32)
    return (m @ m.T + n * np.eye(n, dtype=F32), rng.standard_normal(n).astype(F32))
  return make


def _solve_with(a):
  return lambda matvec, b: jnp.linalg.solve(a, b)


def _linear_solve(a, b):
  return lax.custom_linear_solve(lambda x: a @ x, b, _solve_with(a),
                                 transpose_solve=_solve_with(a.T))


def _cube_root(y):
  # Newton's iterations as the solver; the derivative comes from custom_root.
  def solve(f, x):
    for _ in range(25):
      x = x - f(x) / (3 * x * x)
    return x
  return lax.custom_root(lambda x: x ** 3 - y, jnp.ones_like(y), solve,
                         lambda g, r: r / g(jnp.ones_like(r)))


def _distinct(shape):
  # Distinct values: top-k's choice (and its derivative) is then unambiguous.
  return lambda rng: (rng.permutation(np.prod(shape)).reshape(shape).astype(F32) / 7,)


def _top_k_ref(k, largest):
  def ref(x):
    idx = np.argsort(-x if largest else x, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, idx, -1), idx.astype(I32)
  return ref


def _ragged_ref(a, b):
  out = np.zeros((a.shape[0], b.shape[2]), a.dtype)
  out[:2], out[2:5] = a[:2] @ b[0], a[2:5] @ b[1]
  return out


_SPECIAL = np.array([-0.0, 0.0, np.nan, -np.nan, 1.0, -np.inf, np.inf, 2.5], F32)


def _specials(rng):
  return rng.permutation(_SPECIAL), rng.permutation(_SPECIAL)


def _bits_key(x):
  # IEEE total order of float32 values, as signed integers.
  i = x.view(np.int32)
  return i ^ ((i >> 31) & 0x7FFFFFFF)


def _scaled_dot_ref(a, b, sa, sb):
  return ((a * np.repeat(sa, 4, -1)) @ (b * np.repeat(sb, 4, 0))).astype(F32)


def _rbg_key(rng):
  return (rng.integers(0, 2 ** 32, size=4, dtype=np.uint64).astype(np.uint32),)


def _sink_then_double(x):
  lax.dce_sink((x, lax.neg(x)))
  return lax.add(x, x)


ROWS = [
    OpRow("lax.stage_p", lambda x: lax.stage_p.bind1(x) * 3, _normal((4,)), lambda x: x * 3,
          grad=True),
    OpRow("lax.dce_sink", _sink_then_double, _normal((3,)), lambda x: x * 2, grad=True),
    # Bits as JAX's (tests/test_lax_extra.py); here eager vs jit vs compiled. No
    # vmap column: JAX's batching rule draws the whole batch from the first key,
    # which a per-key loop does not.
    OpRow("lax.rng_bit_generator_threefry",
          lambda k: lax.rng_bit_generator(k, (3, 4), np.uint32,
                                          algorithm=lax.RandomAlgorithm.RNG_THREE_FRY),
          _rbg_key, None, vmap=False),
    OpRow("lax.rng_bit_generator_uint8",
          lambda k: lax.rng_bit_generator(k, (5, 3), np.uint8), _rbg_key, None, vmap=False),
    OpRow("lax.scaled_dot_f32",
          lambda a, b, sa, sb: lax.scaled_dot(a, b, lhs_scale=sa, rhs_scale=sb,
                                              preferred_element_type=np.float32),
          # Second-order float32 finite differences of a four-operand product are
          # noisier than the grad column's 1e-4; test_lax_extra checks the
          # gradients against float64 differences instead.
          lambda rng: tuple(0.5 * a for a in _normal((3, 8), (8, 2), (3, 2), (2, 2))(rng)),
          _scaled_dot_ref, grad=False,
          atol=1e-5, rtol=1e-5),
    OpRow("lax.eq_to_p", lambda x, y: lax.eq_to_p.bind1(x, y), _specials,
          lambda x, y: _bits_key(x) == _bits_key(y)),
    OpRow("lax.le_to_p", lambda x, y: lax.le_to_p.bind1(x, y), _specials,
          lambda x, y: _bits_key(x) <= _bits_key(y)),
    OpRow("lax.lt_to_p", lambda x, y: lax.lt_to_p.bind1(x, y), _specials,
          lambda x, y: _bits_key(x) < _bits_key(y)),
    OpRow("lax.lt_to_p_int32", lambda x, y: lax.lt_to_p.bind1(x, y),
          _normal((5,), (5,), dtype=I32), lambda x, y: x < y),
    OpRow("lax.ragged_dot", lambda a, b: lax.ragged_dot(a, b, np.array([2, 3], I32)),
          _normal((6, 3), (2, 3, 4)), _ragged_ref, grad=True, atol=1e-5, rtol=1e-5),
    OpRow("lax.approx_max_k", lambda x: lax.approx_max_k(x, 3), _distinct((4, 9)),
          _top_k_ref(3, True)),
    # The values alone for the derivative columns (indices are integers).
    OpRow("lax.approx_max_k_values", lambda x: lax.approx_max_k(x, 3)[0], _distinct((4, 9)),
          lambda x: _top_k_ref(3, True)(x)[0], grad=True),
    OpRow("lax.approx_min_k_dim0", lambda x: lax.approx_min_k(x, 2, reduction_dimension=0),
          _distinct((5, 3)),
          lambda x: tuple(np.swapaxes(r, 0, 1) for r in _top_k_ref(2, False)(x.T))),
    OpRow("lax.approx_min_k_dim0_values",
          lambda x: lax.approx_min_k(x, 2, reduction_dimension=0)[0], _distinct((5, 3)),
          lambda x: np.swapaxes(_top_k_ref(2, False)(x.T)[0], 0, 1), grad=True),
    OpRow("lax.conv_general_dilated_patches",
          lambda x: lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID"),
          _normal((1, 2, 3, 3)), None, grad=True),
    OpRow("lax.conv_general_dilated_local",
          lambda x, w: lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2),
                                                      dimension_numbers=("NCHW", "IOHW", "NCHW")),
          _normal((1, 2, 3, 3), (8, 3, 2, 2)), None, grad=True),
    OpRow("lax.custom_linear_solve", _linear_solve, _spd(3),
          lambda a, b: np.linalg.solve(a, b), grad=True, atol=1e-4, rtol=1e-4),
    OpRow("lax.custom_linear_solve_symmetric",
          lambda a, b: lax.custom_linear_solve(lambda x: a @ x, b, _solve_with(a),
                                               symmetric=True),
          _spd(4), lambda a, b: np.linalg.solve(a, b), grad=True, atol=1e-4, rtol=1e-4),
    OpRow("lax.custom_root_cube_root", _cube_root,
          lambda rng: ((np.abs(rng.standard_normal(4)) + 0.5).astype(F32),), np.cbrt,
          grad=True, atol=1e-5, rtol=1e-5),
    OpRow("lax.stack_axis0", lambda a, b, c: lax.stack([a, b, c]), _normal((2, 3), (2, 3), (2, 3)),
          lambda a, b, c: np.stack([a, b, c]), grad=True),
    OpRow("lax.stack_axis_last", lambda a, b: lax.stack([a, b], axis=-1),
          _normal((4,), (4,), dtype=I32), lambda a, b: np.stack([a, b], -1)),
    OpRow("lax.unstack_axis1", lambda x: lax.unstack(x, 1), _normal((2, 3, 2)),
          lambda x: tuple(np.moveaxis(x, 1, 0).copy()), grad=True),
    OpRow("lax.optimization_barrier", lambda x, y: lax.optimization_barrier((x, y * 2)),
          _normal((3,), (2, 2)), lambda x, y: (x, y * 2), grad=True),
    OpRow("lax.copy_p", lambda x: lax.copy_p.bind1(x), _normal((3, 2)), lambda x: x.copy(),
          grad=True),
    OpRow("lax.stage", lambda x: lax.stage(x) * 2, _normal((3,)), lambda x: x * 2, grad=True),
    OpRow("lax.broadcast_like", lambda x, y: lax.broadcast_like(x, y), _normal((3,), (2, 3)),
          lambda x, y: np.broadcast_to(x, y.shape), grad=True),
    OpRow("lax.scatter_apply_exp",
          lambda x: lax.scatter_apply(x, np.array([[1], [3]], I32), lambda v: v * v + 1,
                                      _SCATTER_DN, update_shape=(2,)),
          _normal((5,)), lambda x: np.where(np.isin(np.arange(5), [1, 3]), x * x + 1, x),
          grad=False),
]
