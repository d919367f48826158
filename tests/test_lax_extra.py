"""The jax.lax names added with issue 17: behaviour and printed jaxprs as in
JAX 0.10.2 (expected strings and values taken from JAX; the larger cases run
tests/libs/lax_extra_program.py, written against JAX, under ``alias_jax``)."""
import importlib.util
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src import alias
from openjax._src.primitives.sort.approx_top_k import approx_top_k_output_size


def test_stack_and_unstack_print_as_jax():
  assert str(jax.make_jaxpr(lambda x: lax.stack([x, x], 1))(jnp.ones(2))) == (
      "{ lambda ; a:f32[2]. let b:f32[2,2] = stack[axis=1] a a in (b,) }")
  assert str(jax.make_jaxpr(lambda x: lax.unstack(x, 1))(jnp.ones((2, 3)))) == (
      "{ lambda ; a:f32[2,3]. let\n    b:f32[2] c:f32[2] d:f32[2] = unstack[axis=1] a\n"
      "  in (b, c, d) }")


def test_stack_unstack_grads_and_errors():
  assert float(jax.grad(lambda x: lax.stack([x, 2 * x]).sum())(1.0)) == 3.0
  np.testing.assert_array_equal(jax.grad(lambda x: lax.unstack(x)[1] * 3)(jnp.ones(2)), [0, 3])
  with pytest.raises(TypeError, match=r"same shape and dtype.*f32\[2\].*f32\[3\]"):
    lax.stack([jnp.ones(2), jnp.ones(3)])
  with pytest.raises(ValueError, match="empty sequence"):
    lax.stack([])


def test_unstack_of_size_one_axis_transposes():
  g = jax.grad(lambda x: lax.unstack(x, 0)[0].sum())(jnp.ones((1, 3)))
  np.testing.assert_array_equal(g, np.ones((1, 3)))


def test_optimization_barrier_is_identity_on_pytrees():
  out = lax.optimization_barrier((1.0, {"a": jnp.arange(3)}))
  assert float(out[0]) == 1.0 and out[1]["a"].dtype == jnp.int32
  assert str(jax.make_jaxpr(lax.optimization_barrier)(jnp.ones(2))) == (
      "{ lambda ; a:f32[2]. let b:f32[2] = optimization_barrier a in (b,) }")
  assert float(jax.grad(lambda x: lax.optimization_barrier(x) * 2)(1.0)) == 2.0
  np.testing.assert_array_equal(
      jax.vmap(lambda x: lax.optimization_barrier(x) + 1)(jnp.arange(3.0)), [1, 2, 3])


def test_stage_lifts_into_the_trace():
  assert str(jax.make_jaxpr(lax.stage)(1.0)) == "{ lambda ; a:f32[]. let  in (a,) }"
  staged = lax.stage(3.0)
  assert isinstance(staged, jax.Array) and staged.weak_type
  assert not lax.stage(np.ones(2, np.float32)).weak_type


def test_small_helpers_match_jax():
  np.testing.assert_array_equal(lax.shape_as_value((2, 3)), [2, 3])
  assert lax.shape_as_value(()).shape == (0,) and lax.shape_as_value(()).dtype == jnp.int32
  assert lax.dtype(1.0) == np.float32 and lax.dtype(3) == np.int32
  assert lax.dtype(jnp.ones(2, jnp.float16)) == np.float16
  empty = lax.empty((2, 3), jnp.float32)
  assert empty.shape == (2, 3) and empty.dtype == jnp.float32
  assert lax.empty(4, jnp.int32).shape == (4,)
  assert lax.dce_sink(jnp.ones(3)) is None
  b = lax.broadcast_like(2.0, jnp.zeros((2, 3), jnp.int32))
  assert b.shape == (2, 3) and b.dtype == jnp.float32 and b.weak_type
  with pytest.raises(ValueError, match="cannot broadcast an array of rank 2"):
    lax.broadcast_like(jnp.ones((2, 2)), jnp.ones(3))


def test_type_names():
  assert [int(a) for a in lax.RandomAlgorithm] == [0, 1, 2]
  assert str(lax.RandomAlgorithm.RNG_PHILOX) == "RNG_PHILOX"
  dn = lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
  assert dn.lhs_ragged_dimensions == (0,)


def test_composite_computes_its_decomposition_under_its_name():
  mul = lax.composite(lambda x, *, n: x * n, name="my.mul")
  np.testing.assert_array_equal(mul(jnp.ones(2), n=3), [3, 3])
  assert "name=my.mul" in str(jax.make_jaxpr(lambda x: mul(x, n=3))(jnp.ones(2)))
  np.testing.assert_array_equal(jax.jit(lambda x: mul(x, n=2))(jnp.arange(3.0)), [0, 2, 4])
  with pytest.raises(TypeError, match="must be a static Python value"):
    mul(jnp.ones(2), n=jnp.ones(2))


def test_scatter_apply_matches_jax():
  dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                   scatter_dims_to_operand_dims=(0,))
  # JAX 0.10.2: exp applied twice at the repeated index 3.
  out = lax.scatter_apply(jnp.arange(5.0), jnp.array([[1], [3], [3]]), jnp.exp, dn,
                          update_shape=(3,))
  np.testing.assert_allclose(out, [0, 2.7182817, 2, 5.2849133e+08, 4], rtol=1e-6)


# ------------------------------------------------- custom_root / custom_linear_solve
def _newton_sqrt(y):
  def solve(f, x):
    for _ in range(30):
      x = x - f(x) / jax.grad(f)(x)
    return x
  return lax.custom_root(lambda x: x ** 2 - y, 1.0, solve, lambda g, r: r / g(1.0))


def test_custom_root_derivatives_by_the_implicit_function_theorem():
  # JAX 0.10.2: 1.4142135, 0.35355338, 0.28867513, -0.08838836.
  assert float(_newton_sqrt(2.0)) == pytest.approx(1.4142135, rel=1e-6)
  assert float(jax.grad(_newton_sqrt)(2.0)) == pytest.approx(0.35355338, rel=1e-6)
  assert float(jax.jit(jax.grad(_newton_sqrt))(3.0)) == pytest.approx(0.28867513, rel=1e-6)
  assert float(jax.grad(jax.grad(_newton_sqrt))(2.0)) == pytest.approx(-0.08838836, rel=1e-5)
  np.testing.assert_allclose(jax.vmap(_newton_sqrt)(jnp.array([4.0, 9.0])), [2, 3], rtol=1e-6)


def test_custom_root_with_aux_and_pytrees():
  def solve(f, x):
    for _ in range(20):
      x = {"a": x["a"] - f(x)["a"] / (2 * x["a"])}
    return x, jnp.int32(20)

  def root(y):
    return lax.custom_root(lambda x: {"a": x["a"] ** 2 - y}, {"a": jnp.ones(2)}, solve,
                           lambda g, r: {"a": r["a"] / g({"a": jnp.ones(2)})["a"]},
                           has_aux=True)

  (sol, iters) = root(jnp.array([4.0, 16.0]))
  np.testing.assert_allclose(sol["a"], [2, 4], rtol=1e-6)
  assert int(iters) == 20
  g = jax.grad(lambda y: root(y)[0]["a"].sum())(jnp.array([4.0, 16.0]))
  np.testing.assert_allclose(g, [0.25, 0.125], rtol=1e-5)


_A = jnp.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
_B = jnp.array([1.0, 2.0, 3.0])


def _jacobi(a):
  def solve(matvec, b):
    # Unrolled Jacobi iterations: reverse mode goes through transpose_solve instead.
    x = jnp.zeros_like(b)
    for _ in range(60):
      x = x + (b - matvec(x)) / jnp.diag(a)
    return x
  return solve


def _solve(a, b, symmetric=False):
  if symmetric:
    return lax.custom_linear_solve(lambda x: a @ x, b, _jacobi(a), symmetric=True)
  return lax.custom_linear_solve(lambda x: a @ x, b, _jacobi(a),
                                 transpose_solve=lambda vecmat, y: jnp.linalg.solve(a.T, y))


def test_custom_linear_solve_values_and_derivatives_match_jax():
  np.testing.assert_allclose(_solve(_A, _B), [-0.0817285, 0.5965242, 1.4607797], rtol=1e-5)
  _, x_dot = jax.jvp(lambda b: _solve(_A, b), (_B,), (jnp.ones(3),))
  np.testing.assert_allclose(x_dot, [0.12963831, 0.26068577, 0.44152185], rtol=1e-5)
  np.testing.assert_allclose(jax.grad(lambda b: _solve(_A, b).sum())(_B),
                             [0.12963831, 0.26068577, 0.44152182], rtol=1e-5)
  grad_a = jax.grad(lambda a: _solve(a, _B).sum())(_A)
  np.testing.assert_allclose(grad_a[0], [0.01059515, -0.07733239, -0.18937302], rtol=1e-4)
  grad_a_sym = jax.grad(lambda a: _solve(a, _B, symmetric=True).sum())(_A)
  np.testing.assert_allclose(grad_a_sym, grad_a, rtol=1e-4, atol=1e-6)
  jit_grad = jax.jit(jax.grad(lambda a, b: (_solve(a, b) ** 2).sum(), argnums=(0, 1)))(_A, _B)
  np.testing.assert_allclose(jit_grad[0][0], [-0.02702155, 0.19722627, 0.4829714], rtol=1e-4)


def test_custom_linear_solve_under_vmap():
  bs = jnp.stack([_B, 2 * _B])
  np.testing.assert_allclose(jax.vmap(lambda b: _solve(_A, b))(bs),
                             np.linalg.solve(np.asarray(_A), np.asarray(bs).T).T, rtol=1e-5)
  a_batch = jnp.stack([_A, _A + jnp.eye(3)])
  np.testing.assert_allclose(jax.vmap(lambda a: _solve(a, _B))(a_batch),
                             [np.linalg.solve(a, _B) for a in np.asarray(a_batch)], rtol=1e-5)


def test_custom_linear_solve_reverse_mode_needs_transpose_solve():
  def no_transpose(b):
    return lax.custom_linear_solve(lambda x: _A @ x, b, _jacobi(_A)).sum()
  jax.jvp(no_transpose, (_B,), (_B,))  # forward mode needs no transpose_solve
  with pytest.raises(TypeError, match="transpose_solve required for backwards mode"):
    jax.grad(no_transpose)(_B)


def test_custom_linear_solve_checks_solve_output_structure():
  with pytest.raises(TypeError, match=r"solve\(\) output pytree structure must match b"):
    lax.custom_linear_solve(lambda x: x, _B, lambda mv, b: (b, b))


# ----------------------------------- approx_max_k/min_k, conv patches/local vs JAX
HERE = pathlib.Path(__file__).parent
EXPECTED = np.load(HERE / "data" / "lax_extra.npz")


@pytest.fixture(scope="module")
def program():
  alias.alias_jax()
  try:
    spec = importlib.util.spec_from_file_location("lax_extra_program",
                                                  HERE / "libs" / "lax_extra_program.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
  finally:
    alias.unalias_jax()


@pytest.mark.parametrize("part", ["approx_cases", "conv_cases"])
def test_matches_jax_values(program, part):
  values = getattr(program, part)()
  assert values
  for key, value in values.items():
    value = np.asarray(value)
    assert value.dtype == EXPECTED[key].dtype and value.shape == EXPECTED[key].shape, key
    np.testing.assert_allclose(value, EXPECTED[key], rtol=1e-5, atol=1e-5, err_msg=key)


def test_approx_top_k_prints_as_jax_and_checks_dtype():
  x = jnp.ones((2, 8))
  assert str(jax.make_jaxpr(lambda x: lax.approx_max_k(x, 3))(x)) == (
      "{ lambda ; a:f32[2,8]. let\n    b:f32[2,3] c:i32[2,3] = approx_top_k[\n"
      "      aggregate_to_topk=True\n      is_max_k=True\n      k=3\n      recall_target=0.95\n"
      "      reduction_dimension=-1\n      reduction_input_size_override=-1\n    ] a\n"
      "  in (b, c) }")
  with pytest.raises(ValueError, match="operand must be a floating type"):
    lax.approx_max_k(jnp.array([1, 5, 3]), 2)


@pytest.mark.parametrize("n,rank,k,recall,expected", [
    # XLA's ApproxTopKReductionOutputSize, as JAX 0.10.2 reports it.
    (100, 2, 3, 0.95, 100), (200, 2, 1, 0.95, 128), (1000, 2, 3, 0.95, 256),
    (65536, 1, 10, 0.95, 1024), (100000, 2, 100, 0.99, 12544), (5000, 1, 3, 1.0, 5000)])
def test_approx_top_k_output_size(n, rank, k, recall, expected):
  assert approx_top_k_output_size(n, rank, k, recall, False) == expected


# ---------------------------------------------------- ragged_dot, platform_dependent
def _np_ragged_dot(a, b, sizes):
  out = np.zeros((a.shape[0], b.shape[2]), np.float32)
  start = 0
  for g, size in enumerate(sizes):
    out[start:start + size] = a[start:start + size] @ b[g]
    start += size
  return out


def test_ragged_dot_groups_rows_and_zeroes_the_rest():
  a, b = np.arange(12.0, dtype=np.float32).reshape(4, 3), np.arange(24.0).reshape(2, 3, 4)
  out = lax.ragged_dot(a, b.astype(np.float32), jnp.array([1, 2]))
  # JAX 0.10.2: rows [20 23 26 29], [200 ...], [344 ...], and a zero row.
  np.testing.assert_allclose(out, _np_ragged_dot(a, b, [1, 2]))
  assert float(out[1, 0]) == 200.0 and not np.any(np.asarray(out[3]))


def test_ragged_dot_gradients_match_jax():
  a = jnp.arange(12.0).reshape(4, 3)
  b = jnp.arange(24.0).reshape(2, 3, 4)
  ga, gb = jax.grad(lambda a, b: (lax.ragged_dot(a, b, jnp.array([1, 2])) ** 2).sum(),
                    argnums=(0, 1))(a, b)
  np.testing.assert_allclose(ga[:, 0], [324, 23664, 40764, 0])
  np.testing.assert_allclose(gb[1, 2], [7504, 7960, 8416, 8872])


def test_ragged_dot_general_contracting_and_batch_modes():
  a, b = jnp.arange(12.0).reshape(4, 3), jnp.arange(15.0).reshape(3, 5)
  dn = lax.RaggedDotDimensionNumbers((((1,), (0,)), ((), ())), (1,), ())
  out = lax.ragged_dot_general(a, b, jnp.array([1, 2]), dn)
  assert out.shape == (2, 4, 5)
  np.testing.assert_allclose(out[0], np.asarray(a)[:, :1] @ np.asarray(b)[:1])
  np.testing.assert_allclose(out[1], np.asarray(a)[:, 1:] @ np.asarray(b)[1:])
  a3, b3 = jnp.arange(24.0).reshape(2, 4, 3), jnp.arange(30.0).reshape(2, 3, 5)
  batch = lax.RaggedDotDimensionNumbers((((2,), (1,)), ((0,), (0,))), (0,), ())
  np.testing.assert_allclose(lax.ragged_dot_general(a3, b3, jnp.array([1, 1]), batch),
                             np.einsum("bmk,bkn->bmn", a3, b3))
  contracting = lax.RaggedDotDimensionNumbers((((2,), (1,)), ((0,), (0,))), (2,), ())
  assert lax.ragged_dot_general(a3, b3, jnp.array([1, 2]), contracting).shape == (2, 2, 4, 5)


def test_platform_dependent_picks_the_cpu_branch():
  assert float(lax.platform_dependent(1.0, cpu=lambda x: x * 2, default=lambda x: x * 3)) == 2
  assert float(lax.platform_dependent(1.0, tpu=lambda x: x * 2, default=lambda x: x * 3)) == 3
  assert float(jax.jit(lambda x: lax.platform_dependent(x, cpu=lambda v: v + 1))(1.0)) == 2
  with pytest.raises(NotImplementedError, match="no branch for platform 'cpu'"):
    lax.platform_dependent(1.0, tpu=lambda x: x)


def test_total_order_comparisons_match_jax():
  x = jnp.array([-0.0, 0.0, jnp.nan, -jnp.nan, 1.0, -jnp.inf, jnp.inf], jnp.float32)
  y = jnp.array([0.0, -0.0, jnp.inf, -jnp.inf, jnp.nan, -jnp.nan, 1.0], jnp.float32)
  # JAX 0.10.2 on CPU:
  expected_lt = [True, False, False, True, True, False, False]
  np.testing.assert_array_equal(lax.lt_to_p.bind1(x, y), expected_lt)
  np.testing.assert_array_equal(lax.le_to_p.bind1(x, y), expected_lt)
  np.testing.assert_array_equal(lax.eq_to_p.bind1(x, y), [False] * 7)
  np.testing.assert_array_equal(lax.eq_to_p.bind1(x, x), [True] * 7)
  xb, yb = x.astype(jnp.bfloat16), y.astype(jnp.bfloat16)
  np.testing.assert_array_equal(jax.jit(lax.lt_to_p.bind1)(xb, yb), expected_lt)


def test_scaled_dot_applies_subchannel_scales():
  rng = np.random.default_rng(0)
  a = jnp.asarray(rng.standard_normal((2, 4, 64)), jnp.float8_e4m3fn)
  b = jnp.asarray(rng.standard_normal((2, 64, 3)), jnp.float8_e4m3fn)
  sa = jnp.asarray(2.0 ** rng.integers(-2, 3, (2, 4, 2)), jnp.float8_e8m0fnu)
  sb = jnp.asarray(2.0 ** rng.integers(-2, 3, (2, 2, 3)), jnp.float8_e8m0fnu)
  expected = np.einsum(
      "bmk,bkn->bmn", np.asarray(a, np.float32) * np.repeat(np.asarray(sa, np.float32), 32, -1),
      np.asarray(b, np.float32) * np.repeat(np.asarray(sb, np.float32), 32, 1))
  out = lax.scaled_dot(a, b, lhs_scale=sa, rhs_scale=sb, preferred_element_type=jnp.float32)
  np.testing.assert_allclose(out, expected, rtol=1e-6)
  default = lax.scaled_dot(a, b, lhs_scale=sa, rhs_scale=sb)
  assert default.dtype == jnp.bfloat16  # JAX's default result type
  # JAX 0.10.2: ones(4,64) @ ones(64,2) with scales 2 and 4 -> 512 everywhere.
  np.testing.assert_array_equal(
      lax.scaled_dot(jnp.ones((4, 64)), jnp.ones((64, 2)), lhs_scale=jnp.full((4, 2), 2.0),
                     rhs_scale=jnp.full((2, 2), 4.0)), np.full((4, 2), 512.0))
  with pytest.raises(TypeError, match="0-rank and 1-rank"):
    lax.scaled_dot(jnp.ones(3), jnp.ones(3))
  with pytest.raises(TypeError, match="not a multiple of its scale"):
    lax.scaled_dot(jnp.ones((4, 64)), jnp.ones((64, 2)), lhs_scale=jnp.ones((4, 3)))


def test_scaled_dot_gradients_match_float64_differences():
  rng = np.random.default_rng(0)
  args = [0.5 * rng.standard_normal(s) for s in [(3, 8), (8, 2), (3, 2), (2, 2)]]

  def f64(a, b, sa, sb):
    return (((a * np.repeat(sa, 4, -1)) @ (b * np.repeat(sb, 4, 0))) ** 2).sum()

  grads = jax.grad(lambda *xs: (lax.scaled_dot(*xs[:2], lhs_scale=xs[2], rhs_scale=xs[3],
                                               preferred_element_type=np.float32) ** 2).sum(),
                   argnums=(0, 1, 2, 3))(*(x.astype(np.float32) for x in args))
  eps = 1e-6
  for i, x in enumerate(args):
    numeric = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
      up, down = [list(args), list(args)]
      up[i], down[i] = x.copy(), x.copy()
      up[i][idx] += eps
      down[i][idx] -= eps
      numeric[idx] = (f64(*up) - f64(*down)) / (2 * eps)
    np.testing.assert_allclose(grads[i], numeric, rtol=1e-5, atol=1e-5)


# --------------------------------------------------------------- rng_bit_generator
def test_rng_bit_generator_three_fry_is_jax_bit_for_bit():
  result = subprocess.run(
      [sys.executable, "-m", "openjax", str(HERE / "libs" / "rng_bit_generator_program.py")],
      capture_output=True, text=True, timeout=600)
  assert result.returncode == 0, result.stderr[-3000:]
  assert result.stdout == (HERE / "data" / "rng_bit_generator.txt").read_text()


def test_rng_bit_generator_defaults_batching_and_errors():
  key = jnp.array([1, 2, 3, 4], jnp.uint32)
  new_key, bits = lax.rng_bit_generator(key, (4,))
  # RNG_DEFAULT is Threefry in openjax (JAX's CPU default, Philox, is not implemented).
  np.testing.assert_array_equal(new_key, [1, 2, 5, 4])
  np.testing.assert_array_equal(bits, [1576285164, 2249660814, 740599976, 2425682526])
  # JAX's batching rule: the first key draws for the whole batch.
  keys, batched = jax.vmap(lambda k: lax.rng_bit_generator(
      k, (2,), algorithm=lax.RandomAlgorithm.RNG_THREE_FRY))(jnp.stack([key, key + 1]))
  np.testing.assert_array_equal(keys, [[1, 2, 5, 4], [2, 3, 4, 5]])
  np.testing.assert_array_equal(batched, [[1576285164, 740599976], [2249660814, 2425682526]])
  with pytest.raises(TypeError, match="unsupported dtype int32"):
    lax.rng_bit_generator(key, (2,), jnp.int32)
  with pytest.raises(NotImplementedError, match="RNG_PHILOX is not implemented"):
    lax.rng_bit_generator(key, (2,), algorithm=lax.RandomAlgorithm.RNG_PHILOX)


def test_dce_sink_prints_as_jax():
  assert lax.dce_sink(jnp.ones(2)) is None
  assert str(jax.make_jaxpr(lambda x: (lax.dce_sink(x), x * 2)[1])(jnp.ones(2))) == (
      "{ lambda ; a:f32[2]. let\n    dce_sink[prevent_mlir_dce=False] a\n"
      "    b:f32[2] = mul a 2.0:f32[]\n  in (b,) }")
  np.testing.assert_array_equal(jax.grad(lambda x: (lax.dce_sink(x), (x * 2).sum())[1])(
      jnp.ones(2)), [2, 2])
