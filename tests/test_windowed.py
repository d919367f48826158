"""lax.reduce with computations, the reduce_window family and the
select_and_gather/scatter_add pair: values against loop references, the
exactness of the tree reduction, pytrees, errors, gradients (both modes),
vmap against Python loops, IREE-compiled against eager, and printed jaxprs
against JAX 0.10.2's."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core import ShapedArray, check_jaxpr, program
from openjax._src.control import _reduce_computation
from openjax._src.primitives.reduce.select_and_gather import (
    select_and_gather_add, select_and_scatter_add)
from openjax.test_util import check_grads
from tests.ops.rows_windowed import gather_reference, scatter_reference, window_reference

INT32_MAX = np.int32(np.iinfo(np.int32).max)


def add_pair(a, b):
  return a + b


def argmax_pair(a, b):
  # (value, index) pairs: the larger value, the lower index on ties.
  (av, ai), (bv, bi) = a, b
  pick_b = lax.bitwise_or(lax.gt(bv, av), lax.bitwise_and(lax.eq(bv, av), lax.lt(bi, ai)))
  return lax.select(pick_b, bv, av), lax.select(pick_b, bi, ai)


def matmul_2x2(a, b):
  # 2x2 matrices as 4-tuples: associative, not commutative.
  a00, a01, a10, a11 = a
  b00, b01, b10, b11 = b
  return (a00 * b00 + a01 * b10, a00 * b01 + a01 * b11,
          a10 * b00 + a11 * b10, a10 * b01 + a11 * b11)


def _normal(shape, seed=0, dtype=np.float32):
  return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _primitives(fn, *args):
  return [e.primitive.name for e in jax.make_jaxpr(fn)(*args).jaxpr.eqns]


# Window configurations: (window_dimensions, window_strides, padding,
# base_dilation, window_dilation).
CONFIGS = [
    ((2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1)),
    ((3, 2), (2, 1), ((1, 2), (0, 1)), (1, 1), (1, 1)),
    ((2, 2), (1, 2), ((0, 1), (1, 0)), (2, 1), (1, 1)),
    ((2, 2), (1, 1), ((1, 0), (0, 1)), (1, 1), (2, 1)),
    ((2, 3), (3, 2), ((-1, 2), (2, -1)), (1, 2), (2, 1)),
    ((2, 1), (1, 1), ((0, 0), (0, 0)), (3, 3), (1, 1)),
]
NO_WINDOW_DILATION = [c for c in CONFIGS if c[4] == (1, 1)]


# ------------------------------------------------------------------ lax.reduce
def test_reduce_argmax_pair_picks_first_maximum():
  x = np.array([[1., 5., 5., 2.], [3., -1., 3., 0.], [-2., -3., -1., -1.]], np.float32)
  idx = np.broadcast_to(np.arange(4, dtype=np.int32), x.shape)
  vals, where = lax.reduce((x, idx), (-np.inf, INT32_MAX), argmax_pair, (1,))
  np.testing.assert_array_equal(vals, x.max(1))
  np.testing.assert_array_equal(where, np.argmax(x, 1))
  assert where.dtype == np.int32
  assert "reduce" in _primitives(lambda x, i: lax.reduce((x, i), (-np.inf, INT32_MAX),
                                                          argmax_pair, (1,)), x, idx)


def test_reduce_logaddexp_and_user_lambda():
  x = _normal((4, 9))
  got = lax.reduce(x, -np.inf, jnp.logaddexp, (1,))
  np.testing.assert_allclose(got, np.logaddexp.reduce(x, axis=1), rtol=1e-6)
  got = lax.reduce(x, 0., lambda a, b: a + b, (0, 1))
  np.testing.assert_allclose(got, x.sum(), rtol=1e-5)
  assert _primitives(lambda x: lax.reduce(x, 0., lambda a, b: a + b, (0,)), x) == ["reduce"]


@pytest.mark.parametrize("n", [1, 2, 7, 13, 64])
def test_reduce_is_exact_for_associative_noncommutative_ops(n):
  # Wrapping int32 matrix products form a monoid; an order-preserving tree
  # gives exactly the sequential product (a reordering would not).
  rng = np.random.default_rng(n)
  mats = rng.integers(-1000, 1000, (n, 3, 2, 2)).astype(np.int32)
  ops = tuple(mats[..., i, j] for i in (0, 1) for j in (0, 1))
  got = lax.reduce(ops, tuple(np.int32(v) for v in (1, 0, 0, 1)), matmul_2x2, (0,))
  want = np.broadcast_to(np.eye(2, dtype=np.int32), (3, 2, 2)).copy()
  for k in range(n):
    want = np.matmul(want, mats[k])
  for g, (i, j) in zip(got, [(0, 0), (0, 1), (1, 0), (1, 1)]):
    np.testing.assert_array_equal(g, want[:, i, j])


def test_reduce_integer_monoids_are_exact():
  x = np.random.default_rng(1).integers(-2 ** 20, 2 ** 20, (6, 37)).astype(np.int32)
  np.testing.assert_array_equal(lax.reduce(x, np.int32(1), lambda a, b: a * b, (1,)),
                                np.multiply.reduce(x, axis=1, dtype=np.int32))
  np.testing.assert_array_equal(lax.reduce(x, np.int32(0), lambda a, b: a ^ b, (0, 1)),
                                np.bitwise_xor.reduce(x, axis=None))
  u = x.astype(np.uint8)
  np.testing.assert_array_equal(lax.reduce(u, np.uint8(0), lambda a, b: a + b, (0,)),
                                np.add.reduce(u, axis=0, dtype=np.uint8))


def test_reduce_takes_log_many_whole_array_steps(monkeypatch):
  # Counts the runs of the batched computation's programs, whether the impl
  # (``_run_elementwise``) or a planned tree (runners built once) makes them.
  calls = []
  runner = program.Program.runner

  def counting_runner(self, consts, step_kernel=None):
    run = runner(self, consts, step_kernel)

    def counted(args):
      calls.append(np.shape(args[0]))
      return run(args)
    return counted

  monkeypatch.setattr(program.Program, "runner", counting_runner)
  x = np.arange(1000, dtype=np.int32).reshape(1000, 1)
  # Two equations (a lone ``add`` is NumPy's reduction eagerly: its eval kernel).
  # The first call plans the tree (its check runs it once on zeros); later
  # calls reuse the plan.
  for _ in range(2):
    calls.clear()
    out = lax.reduce(x, np.int32(0), lambda a, b: (a + b) * 1, (0,))
    assert int(out[0]) == 999 * 1000 // 2
  assert len(calls) == 11          # ten halvings of 1000 rows, then the init value
  assert calls[0] == (500,)
  calls.clear()
  xs = [np.arange(1000, dtype=np.int32).reshape(1000, 1)]
  out, = _reduce_computation.tree_reduce_np(jax.make_jaxpr(lambda a, b: (a + b) * 1)(
      np.int32(0), np.int32(0)), xs, [np.int32(0)])
  assert int(out[0]) == 999 * 1000 // 2 and len(calls) == 11


def test_reduce_init_value_is_folded_in_once():
  # XLA's semantics for a non-identity init value: applied once per result.
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  np.testing.assert_array_equal(lax.reduce(x, 1., add_pair, (0,)), x.sum(0) + 1)
  np.testing.assert_array_equal(lax.reduce(np.zeros((0, 2), np.float32), 3., add_pair, (0,)),
                                [3., 3.])
  assert lax.reduce(np.zeros((2, 0), np.float32), 3., add_pair, (0,)).shape == (0,)


def test_reduce_pytrees_and_weak_types():
  x, y = _normal((3, 4)), _normal((3, 4), 1)
  out = lax.reduce({"a": x, "b": y}, {"a": 0., "b": -np.inf},
                   lambda p, q: {"a": p["a"] + q["a"], "b": lax.max(p["b"], q["b"])}, (0,))
  np.testing.assert_allclose(out["a"], x.sum(0), rtol=1e-6)
  np.testing.assert_array_equal(out["b"], y.max(0))
  assert lax.reduce(2., 0., add_pair, ()).weak_type
  assert not lax.reduce(x, 0., add_pair, (0,)).weak_type
  mono = lax.reduce(np.arange(5), 0, lax.add, (0,))
  assert mono.dtype == np.int32 and not mono.weak_type


@pytest.mark.parametrize("computation,init,dtype,primitive", [
    (lax.add, 0, np.float32, "reduce_sum"), (lax.add, 1, np.float32, "reduce"),
    (lax.mul, 1, np.float32, "reduce_prod"), (lax.max, -np.inf, np.float32, "reduce_max"),
    (lax.max, 0., np.float32, "reduce"), (lax.min, np.inf, np.float32, "reduce_min"),
    (lax.max, np.iinfo(np.int32).min, np.int32, "reduce_max"),
    (lax.bitwise_or, 0, np.int32, "reduce_or"), (lax.bitwise_and, -1, np.int32, "reduce_and"),
    (lax.bitwise_xor, 0, np.int32, "reduce_xor"), (add_pair, 0, np.float32, "reduce"),
])
def test_reduce_detects_lax_monoids(computation, init, dtype, primitive):
  x = np.ones((2, 3), dtype)
  init = np.asarray(init, dtype)
  assert primitive in _primitives(lambda x: lax.reduce(x, init, computation, (1,)), x)


def test_reduce_errors():
  x = _normal((3, 4))
  with pytest.raises(ValueError, match="same tree structure as init_values"):
    lax.reduce((x, x), [0., 0.], lambda a, b: a, (0,))
  with pytest.raises(ValueError, match="non-scalar initial value: \\[\\(2,\\)\\]"):
    lax.reduce(x, np.zeros(2, np.float32), add_pair, (0,))
  with pytest.raises(TypeError, match="reduce operand dtypes should match"):
    lax.reduce(x, np.float16(0), add_pair, (0,))
  with pytest.raises(TypeError, match="lax.reduce: the computation must return values of the init"):
    lax.reduce(x, 0., lambda a, b: (a + b).astype(jnp.int32), (0,))
  with pytest.raises(ValueError, match="out-of-bounds"):
    lax.reduce(x, 0., add_pair, (2,))
  with pytest.raises(NotImplementedError, match="can't close over Tracers"):
    jax.jit(lambda x, s: lax.reduce(x, 0., lambda a, b: a + b * s, (0,)))(x, 2.)
  with pytest.raises(NotImplementedError, match="non-zero tangents for initial values"):
    jax.jvp(lambda i: lax.reduce(x, i, add_pair, (0,)), (0.,), (1.,))
  with pytest.raises(NotImplementedError, match="vmap over the init values"):
    jax.vmap(lambda i: lax.reduce(x, i, add_pair, (0,)))(np.zeros(2, np.float32))


# ----------------------------------------------------------- reduce_window
@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_reduce_window_matches_loop_reference(config):
  x = _normal((5, 6))
  for init, op, ref in [(0., lax.add, np.add), (-np.inf, lax.max, np.maximum),
                        (np.inf, lax.min, np.minimum), (1., lax.mul, np.multiply),
                        (0., add_pair, np.add)]:
    got = lax.reduce_window(x, init, op, *config)
    want = window_reference(x, np.float32(init), ref, *config)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert got.dtype == np.float32


def test_reduce_window_ranks_and_dtypes():
  x3 = _normal((3, 4, 5))
  cfg = ((2, 1, 3), (1, 2, 2), ((0, 1), (1, 1), (2, 0)), (1, 2, 1), (2, 1, 1))
  np.testing.assert_allclose(lax.reduce_window(x3, -np.inf, lax.max, *cfg),
                             window_reference(x3, np.float32(-np.inf), np.maximum, *cfg))
  x1 = np.random.default_rng(2).integers(0, 255, 11).astype(np.uint8)
  np.testing.assert_array_equal(
      lax.reduce_window(x1, np.uint8(0), lax.max, (4,), (3,), "SAME"),
      window_reference(x1, np.uint8(0), np.maximum, (4,), (3,), ((1, 2),)))
  s = lax.reduce_window(np.float32(3.), 0., lax.add, (), (), ())
  assert s.shape == () and float(s) == 3.
  empty = lax.reduce_window(_normal((2, 3)), 0., lax.add, (3, 1), (1, 1), "VALID")
  assert empty.shape == (0, 3)


def test_reduce_window_padding_strings():
  x = _normal((5, 7))
  for padding, pads in [("VALID", ((0, 0), (0, 0))), ("SAME", ((0, 1), (1, 1))),
                        ("SAME_LOWER", ((1, 0), (1, 1))), ("same", ((0, 1), (1, 1)))]:
    got = lax.reduce_window(x, 0., lax.add, (2, 3), (2, 2), padding)
    np.testing.assert_array_equal(got, lax.reduce_window(x, 0., lax.add, (2, 3), (2, 2), pads))
  # The dilated window extent decides SAME's padding.
  got = lax.reduce_window(x, 0., lax.add, (2, 2), (1, 1), "SAME", window_dilation=(2, 1))
  assert got.shape == x.shape
  assert lax.reduce_window_shape_tuple((5, 7), (2, 3), (2, 2), ((0, 1), (1, 1))) == (3, 4)
  with pytest.raises(RuntimeError, match="Unrecognized padding type: expected 'VALID', "
                                         "'SAME', or 'SAME_LOWER', got FOO."):
    lax.reduce_window(x, 0., lax.add, (2, 2), (1, 1), "FOO")


def test_reduce_window_variadic_argmax():
  x = _normal((4, 6))
  idx = np.arange(24, dtype=np.int32).reshape(4, 6)
  v, i = lax.reduce_window((x, idx), (-np.inf, INT32_MAX), argmax_pair, (2, 3), (2, 3), "VALID")
  blocks = x.reshape(2, 2, 2, 3).transpose(0, 2, 1, 3).reshape(2, 2, 6)
  np.testing.assert_array_equal(v, blocks.max(-1))
  np.testing.assert_array_equal(x.reshape(-1)[np.asarray(i)], blocks.max(-1))


def test_reduce_window_errors():
  x = _normal((3, 4))
  with pytest.raises(TypeError, match="wrong number of window_dimensions for operand: got "
                                      "operand shape \\(3, 4\\) with window_dimensions \\(2,\\)"):
    lax.reduce_window(x, 0., lax.add, (2,), (1,), "VALID")
  with pytest.raises(TypeError, match="window_dimensions must have every element be strictly "
                                      "positive, got \\(2, 0\\)"):
    lax.reduce_window(x, 0., lax.add, (2, 0), (1, 1), "VALID")
  with pytest.raises(TypeError, match="inconsistent window_strides and window_dimensions"):
    lax.reduce_window(x, 0., lax.add, (2, 2), (1,), "VALID")
  with pytest.raises(TypeError, match="expected init_values to be scalars"):
    lax.reduce_window(x, np.zeros(2, np.float32), add_pair, (2, 2), (1, 1), "VALID")
  with pytest.raises(TypeError, match="inconsistent dtypes for operands and init_values"):
    lax.reduce_window(x, np.int32(0), add_pair, (2, 2), (1, 1), "VALID")
  with pytest.raises(ValueError, match="same tree structure as init_values"):
    lax.reduce_window((x, x), [0., 0.], add_pair, (2, 2), (1, 1), "VALID")
  with pytest.raises(ValueError, match="output must have the same tree structure"):
    lax.reduce_window((x, x), (0., 0.), lambda a, b: [a[0], b[1]], (2, 2), (1, 1), "VALID")
  with pytest.raises(TypeError, match="must have a number dtype, got bool"):
    lax.reduce_window(x > 0, False, lax.add, (2, 2), (1, 1), "VALID")


def test_select_and_gather_scatter_match_references_and_are_adjoint():
  rng = np.random.default_rng(3)
  x, t = _normal((5, 6), 4), _normal((5, 6), 5)
  for cfg in CONFIGS:
    for prim, largest in ((lax.ge_p, True), (lax.le_p, False)):
      got = select_and_gather_add(t, x, prim, *cfg)
      np.testing.assert_array_equal(got, gather_reference(t, x, largest, *cfg))
  for wd, ws, pad in [((2, 2), (1, 1), ((0, 0), (0, 0))), ((3, 2), (2, 1), ((1, 2), (0, 1))),
                      ((2, 3), (2, 2), ((-1, 1), (1, -1)))]:
    s = rng.standard_normal(lax.reduce_window_shape_tuple(x.shape, wd, ws, pad))
    s = s.astype(np.float32)
    for prim, largest in ((lax.ge_p, True), (lax.le_p, False)):
      sc = select_and_scatter_add(s, x, prim, wd, ws, pad)
      if all(lo >= 0 and hi >= 0 for lo, hi in pad):
        np.testing.assert_allclose(sc, scatter_reference(s, x, largest, wd, ws, pad), atol=1e-6)
      ones = (1, 1)
      ga = select_and_gather_add(t, x, prim, wd, ws, pad, ones, ones)
      np.testing.assert_allclose(np.vdot(ga, s), np.vdot(t, sc), rtol=1e-5)


def test_select_and_gather_ties_nans_and_both_window_paths():
  # Ties (the first position wins), -0.0 against 0.0 (a tie) and large
  # windows (the argmax path, over LOOP_WINDOW_SIZE positions) against
  # the by-definition loop; the tangents keep their dtype and bits.
  rng = np.random.default_rng(7)
  x = rng.integers(-2, 3, (6, 7)).astype(np.float32)
  x[0, 0] = -0.
  t = rng.integers(-1000, 1000, (6, 7)).astype(np.int32)
  for cfg in CONFIGS + [((5, 7), (1, 1), ((2, 2), (3, 3)), (2, 2), (1, 1)),
                        ((3, 3), (2, 3), ((1, 1), (0, 2)), (1, 1), (2, 1))]:
    for prim, largest in ((lax.ge_p, True), (lax.le_p, False)):
      got = np.asarray(select_and_gather_add(t, x, prim, *cfg))
      assert got.dtype == np.int32
      np.testing.assert_array_equal(got, gather_reference(t, x, largest, *cfg))
  x3, t3 = _normal((3, 4, 5), 8), _normal((3, 4, 5), 9)
  cfg3 = ((2, 1, 3), (1, 2, 2), ((0, 1), (1, 1), (2, 0)), (1, 2, 1), (2, 1, 1))
  np.testing.assert_array_equal(select_and_gather_add(t3, x3, lax.ge_p, *cfg3),
                                gather_reference(t3, x3, True, *cfg3))
  s = select_and_gather_add(np.float32(2.), np.float32(1.), lax.ge_p, (), (), (), (), ())
  assert s.shape == () and float(s) == 2.


def test_generic_reduce_window_exact_on_larger_inputs():
  # The (window position, window) rows the tree reduction runs on, built one
  # strided copy per position: int32 products wrap exactly as a loop does.
  x = np.random.default_rng(4).integers(-9, 9, (13, 17)).astype(np.int32)
  for cfg in CONFIGS:
    got = lax.reduce_window(x, np.int32(1), lax.mul, *cfg)
    np.testing.assert_array_equal(got, window_reference(x, np.int32(1), np.multiply, *cfg))


# ---------------------------------------------------------------- gradients
@pytest.mark.parametrize("config", CONFIGS, ids=range(len(CONFIGS)))
def test_reduce_window_grads(config):
  x = _normal((4, 5), 6).astype(np.float64)
  with jax.enable_x64():
    for init, op in [(0., lax.add), (1., lax.mul), (0., add_pair), (-np.inf, lax.max),
                     (np.inf, lax.min)]:
      f = lambda x: lax.reduce_window(x, init, op, *config)   # noqa: E731
      chooser = op in (lax.max, lax.min)
      if chooser and config[4] != (1, 1):
        check_grads(f, (x,), order=2, modes=("fwd",), atol=1e-5, rtol=1e-5)
        with pytest.raises(NotImplementedError, match="with window dilation"):
          jax.grad(lambda x: f(x).sum())(x)
      else:
        check_grads(f, (x,), order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_reduce_grads():
  x = _normal((3, 5), 7).astype(np.float64)
  idx = np.broadcast_to(np.arange(5, dtype=np.int32), (3, 5)).copy()
  with jax.enable_x64():
    for f in [lambda x: lax.reduce(x, 1., lambda a, b: a * b, (0,)),
              lambda x: lax.reduce(x, -np.inf, jnp.logaddexp, (0, 1)),
              lambda x: lax.reduce((x, idx), (-np.inf, INT32_MAX), argmax_pair, (1,))[0],
              lambda x: lax.reduce(x, 0., add_pair, ())]:
      check_grads(f, (x,), order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)
    # Grad of a product with a zero: the tree's JVP is exact there.
    z = x.copy()
    z[1, 2] = 0.
    g = jax.grad(lambda z: lax.reduce(z, 1., lambda a, b: a * b, (0, 1)))(z)
    want = np.zeros_like(z)
    want[1, 2] = np.prod(np.delete(z.reshape(-1), 7))
    np.testing.assert_allclose(g, want, rtol=1e-12)


def test_pooling_patterns():
  # flax's max_pool / avg_pool: NHWC windows.
  x = _normal((2, 6, 4, 3), 8).astype(np.float64)

  def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

  def avg_pool(x):
    return lax.reduce_window(x, 0., lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9

  with jax.enable_x64():
    blocks = x.reshape(2, 3, 2, 2, 2, 3)
    np.testing.assert_array_equal(max_pool(x), blocks.max(axis=(2, 4)))
    for pool in (max_pool, avg_pool):
      check_grads(pool, (x,), order=2, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)
      batched = jax.vmap(pool)(x[:, None])
      np.testing.assert_allclose(batched[:, 0], pool(x), rtol=1e-12)
    g = jax.grad(lambda x: max_pool(x).sum())(x)
    # Exactly one 1 per pooled block, at its maximum.
    np.testing.assert_array_equal(g.reshape(2, 3, 2, 2, 2, 3).sum(axis=(2, 4)), 1.)
    np.testing.assert_array_equal(np.asarray(g)[np.asarray(g) != 0], 1.)


# -------------------------------------------------------------------- vmap
def _vmap_cases():
  rng = np.random.default_rng(9)

  def n(*shape):
    return rng.standard_normal(shape).astype(np.float32)

  def perm(*shape):
    return rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.int32)

  return [
      (lambda x: lax.reduce(x, 1., lambda a, b: a * b, (1,)), [n(4, 5)]),
      (lambda x: lax.reduce_window(x, 1., lax.mul, (2, 2), (1, 2), "SAME", (1, 2)), [n(4, 5)]),
      (lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 3), (1, 1), ((1, 0), (0, 1))),
       [n(4, 5)]),
      (lambda x: lax.reduce_window(x, 0., lax.add, (2, 2), (2, 1), "VALID", None, (1, 2)),
       [n(4, 5)]),
      (lambda x, i: lax.reduce((x, i), (-np.inf, INT32_MAX), argmax_pair, (0,)),
       [n(4, 5), perm(4, 5)]),
      (lambda x, i: lax.reduce_window((x, i), (-np.inf, INT32_MAX), argmax_pair, (2, 2),
                                      (1, 1), "VALID"), [n(4, 5), perm(4, 5)]),
      (lambda t, x: select_and_gather_add(t, x, lax.ge_p, (2, 2), (1, 1), ((0, 1), (1, 0)),
                                          (1, 2), (1, 1)), [n(4, 5), n(4, 5)]),
      (lambda s, x: select_and_scatter_add(s, x, lax.le_p, (2, 2), (2, 2),
                                           ((0, 0), (1, 0))), [n(2, 3), n(4, 5)]),
  ]


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap_matches_loop(axis):
  for f, example in _vmap_cases():
    examples = [[a + k if a.dtype == np.float32 else a[::-1] if k % 2 else a for a in example]
                for k in range(3)]
    stacked = [np.stack([ex[j] for ex in examples], axis) for j in range(len(example))]
    got = jax.tree_util.tree_leaves(jax.vmap(f, in_axes=axis, out_axes=0)(*stacked))
    want = [jax.tree_util.tree_leaves(f(*ex)) for ex in examples]
    for j, g in enumerate(got):
      np.testing.assert_allclose(g, np.stack([np.asarray(w[j]) for w in want]), rtol=1e-6)
    # one operand batched, the other not
    if len(example) == 2:
      got = jax.tree_util.tree_leaves(jax.vmap(f, in_axes=(axis, None))(stacked[0], example[1]))
      want = [jax.tree_util.tree_leaves(f(ex[0], example[1])) for ex in examples]
      for j, g in enumerate(got):
        np.testing.assert_allclose(g, np.stack([np.asarray(w[j]) for w in want]), rtol=1e-6)


def test_transformed_jaxprs_type_check():
  x = _normal((4, 5), 14)
  xs = np.stack([x, -x])
  fns = [lambda x: lax.reduce(x, 1., lambda a, b: a * b, (0,)).sum(),
         lambda x: lax.reduce_window(x, 1., lax.mul, (2, 2), (1, 2), "SAME").sum(),
         lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 1), "VALID", (2, 1)).sum(),
         lambda x: lax.reduce_window(x, 0., lax.add, (3, 2), (2, 1), ((1, 0), (0, 1))).sum()]
  for f in fns:
    for transformed, arg in [(jax.grad(f), x), (jax.vmap(jax.grad(f)), xs),
                             (jax.jit(jax.grad(jax.jit(f))), x),
                             (lambda x, f=f: jax.jvp(f, (x,), (x,)), x),
                             (jax.grad(lambda x, f=f: (jax.grad(f)(x) ** 2).sum()), x)]:
      check_jaxpr(jax.make_jaxpr(transformed)(arg).jaxpr)


# ------------------------------------------------------ compiled vs eager
def test_compiled_matches_eager():
  x, t = _normal((6, 7), 12), _normal((6, 7), 13)
  idx = np.arange(42, dtype=np.int32).reshape(6, 7)

  def max_pool_sum(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 2), "SAME").sum()

  def run(x, t, idx):
    outs = [lax.reduce(x, 0., add_pair, (0,)), lax.reduce(x, -np.inf, jnp.logaddexp, (1,)),
            lax.reduce((x, idx), (-np.inf, INT32_MAX), argmax_pair, (1,)),
            lax.reduce(idx, np.int32(1), lambda a, b: a * b, (0,)),
            lax.reduce_window((x, idx), (-np.inf, INT32_MAX), argmax_pair, (3, 2), (1, 2),
                              "SAME")]
    # (The op table's compiled column covers the other window configurations.)
    for cfg in (CONFIGS[1], CONFIGS[4]):
      for init, op in [(0., lax.add), (np.inf, lax.min), (1., lax.mul)]:
        outs.append(lax.reduce_window(x, init, op, *cfg))
      outs.append(select_and_gather_add(t, x, lax.ge_p, *cfg))
    # Small windows are unrolled; more than 32 positions take a variadic
    # reduce_window and a scatter.
    for wd, ws, pad in [((2, 3), (1, 2), ((-1, 1), (1, 2))), ((6, 6), (1, 1), ((0, 1), (0, 0)))]:
      shape = lax.reduce_window_shape_tuple(x.shape, wd, ws, pad)
      src = lax.reshape(t.reshape(-1)[:int(np.prod(shape))], shape)
      outs.append(select_and_scatter_add(src, x, lax.le_p, wd, ws, pad))
      outs.append(select_and_gather_add(t, x, lax.ge_p, wd, ws, pad, (1, 1), (1, 1)))
    outs.append(jax.grad(max_pool_sum)(x))
    outs.append(jax.grad(lambda x: lax.reduce_window(x, 1., lax.mul, (2, 3), (1, 1),
                                                     "VALID").sum())(x))
    outs.append(jax.grad(lambda x: lax.reduce(x, 1., lambda a, b: a * b, (1,)).sum())(x))
    return outs

  eager = run(x, t, idx)
  lowered = jax.jit(run).lower(x, t, idx)
  text = lowered.as_text()
  for op in ("stablehlo.reduce_window", "stablehlo.reduce", "stablehlo.scatter"):
    assert op in text
  compiled = lowered.compile()(x, t, idx)
  for e, c in zip(jax.tree_util.tree_leaves(eager), jax.tree_util.tree_leaves(compiled)):
    assert np.asarray(e).dtype == np.asarray(c).dtype
    np.testing.assert_allclose(np.asarray(c), np.asarray(e), rtol=2e-5, atol=1e-5)


# ------------------------------------------------------------ printed jaxprs
X = np.zeros((3, 4), np.float32)
I = np.zeros((3, 4), np.int32)
GOLDEN_CASES = {
    "reduce_general": (lambda x: lax.reduce(x, 0., add_pair, (0,)), (X,)),
    "reduce_variadic": (lambda x, i: lax.reduce((x, i), (-np.inf, INT32_MAX), argmax_pair,
                                                (1,)), (X, I)),
    "reduce_monoid_sum": (lambda x: lax.reduce(x, 0., lax.add, (0, 1)), (X,)),
    "reduce_window_sum": (lambda x: lax.reduce_window(x, 0., lax.add, (2, 2), (1, 2), "SAME"),
                          (X,)),
    "reduce_window_max": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 1), (1, 1),
                                                      ((1, 0), (0, 2)), (2, 1), (1, 1)), (X,)),
    "reduce_window_min": (lambda x: lax.reduce_window(x, jnp.inf, lax.min, (2, 2), None,
                                                      "VALID", None, (1, 2)), (X,)),
    "reduce_window_generic": (lambda x: lax.reduce_window(x, 1., add_pair, (2, 2), (1, 1),
                                                          "VALID"), (X,)),
    "reduce_window_variadic": (lambda x, i: lax.reduce_window(
        (x, i), (-np.inf, INT32_MAX), argmax_pair, (2, 2), (2, 2), "VALID"), (X, I)),
    "max_pool_jvp": (lambda x: jax.jvp(lambda x: lax.reduce_window(
        x, -jnp.inf, lax.max, (2, 2), (1, 1), "VALID"), (x,), (x,)), (X,)),
    "min_pool_grad": (jax.grad(lambda x: lax.reduce_window(x, jnp.inf, lax.min, (2, 2), (2, 2),
                                                           "SAME").sum()), (X,)),
}

# make_jaxpr's output in JAX 0.10.2 for the same functions.
GOLDEN = {
    "reduce_general": """\
{ lambda ; a:f32[3,4]. let
    b:f32[4] = reduce[
      computation=<function add_pair at 0xXXXXXXXXXXXX>
      dimensions=(0,)
      jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = add c d in (e,) }
    ] a 0.0:f32[]
  in (b,) }""",
    "reduce_variadic": """\
{ lambda ; a:f32[3,4] b:i32[3,4]. let
    c:f32[3] d:i32[3] = reduce[
      computation=<function argmax_pair at 0xXXXXXXXXXXXX>
      dimensions=(1,)
      jaxpr={ lambda ; e:f32[] f:i32[] g:f32[] h:i32[]. let
          i:bool[] = gt g e
          j:bool[] = eq g e
          k:bool[] = lt h f
          l:bool[] = and j k
          m:bool[] = or i l
          n:f32[] = select_n m e g
          o:i32[] = select_n m f h
        in (n, o) }
    ] a b -inf:f32[] 2147483647:i32[]
  in (c, d) }""",
    "reduce_monoid_sum": """\
{ lambda ; a:f32[3,4]. let
    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a
  in (b,) }""",
    "reduce_window_sum": """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,2] = reduce_window_sum[
      base_dilation=(1, 1)
      padding=((0, 1), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(1, 2)
    ] a
  in (b,) }""",
    "reduce_window_max": """\
{ lambda ; a:f32[3,4]. let
    b:f32[5,6] = reduce_window_max[
      base_dilation=(2, 1)
      padding=((1, 0), (0, 2))
      window_dilation=(1, 1)
      window_dimensions=(2, 1)
      window_strides=(1, 1)
    ] a
  in (b,) }""",
    "reduce_window_min": """\
{ lambda ; a:f32[3,4]. let
    b:f32[2,2] = reduce_window_min[
      base_dilation=(1, 1)
      padding=((0, 0), (0, 0))
      window_dilation=(1, 2)
      window_dimensions=(2, 2)
      window_strides=(1, 1)
    ] a
  in (b,) }""",
    "reduce_window_generic": """\
{ lambda ; a:f32[3,4]. let
    b:f32[2,3] = reduce_window[
      base_dilation=(1, 1)
      consts=()
      jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = add c d in (e,) }
      padding=((0, 0), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(1, 1)
    ] a 1.0:f32[]
  in (b,) }""",
    "reduce_window_variadic": """\
{ lambda ; a:f32[3,4] b:i32[3,4]. let
    c:f32[1,2] d:i32[1,2] = reduce_window[
      base_dilation=(1, 1)
      consts=()
      jaxpr={ lambda ; e:f32[] f:i32[] g:f32[] h:i32[]. let
          i:bool[] = gt g e
          j:bool[] = eq g e
          k:bool[] = lt h f
          l:bool[] = and j k
          m:bool[] = or i l
          n:f32[] = select_n m e g
          o:i32[] = select_n m f h
        in (n, o) }
      padding=((0, 0), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(2, 2)
    ] a b -inf:f32[] 2147483647:i32[]
  in (c, d) }""",
    "max_pool_jvp": """\
{ lambda ; a:f32[3,4]. let
    b:f32[2,3] = reduce_window_max[
      base_dilation=(1, 1)
      padding=((0, 0), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(1, 1)
    ] a
    c:f32[2,3] = select_and_gather_add[
      base_dilation=(1, 1)
      padding=((0, 0), (0, 0))
      select_prim=ge
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(1, 1)
    ] a a
  in (b, c) }""",
    "min_pool_grad": """\
{ lambda ; a:f32[3,4]. let
    b:f32[2,2] = reduce_window_min[
      base_dilation=(1, 1)
      padding=((0, 1), (0, 0))
      window_dilation=(1, 1)
      window_dimensions=(2, 2)
      window_strides=(2, 2)
    ] a
    _:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] b
    c:f32[2,2] = broadcast_in_dim 1.0:f32[]
    d:f32[3,4] = select_and_scatter_add[
      padding=((0, 1), (0, 0))
      select_prim=le
      window_dimensions=(2, 2)
      window_strides=(2, 2)
    ] c a
  in (d,) }""",
}


@pytest.mark.parametrize("name", sorted(GOLDEN_CASES))
def test_printed_jaxpr_matches_jax(name):
  fn, args = GOLDEN_CASES[name]
  assert str(jax.make_jaxpr(fn)(*args)) == GOLDEN[name]


def test_monoid_eval_kernels_match_the_impls():
  # The lean kernels of reduce_window_sum/max/min (bookkeeping done once per
  # plan) give the impl's bits and dtypes: padded, dilated, plain windows;
  # float, int, uint8, bool operands; NaN and -0.0 values.
  rng = np.random.default_rng(11)
  f = rng.standard_normal((5, 6)).astype(np.float32)
  f[1, 1], f[2, 3] = np.nan, -0.
  operands = [f, f.astype(np.float16), rng.integers(-9, 9, (5, 6)).astype(np.int32),
              rng.integers(0, 255, (5, 6)).astype(np.uint8), rng.random((5, 6)) > 0.5]
  for prim in (lax.reduce_window_sum_p, lax.reduce_window_max_p, lax.reduce_window_min_p):
    for x in operands:
      if prim is lax.reduce_window_sum_p and x.dtype == np.bool_:
        continue
      for cfg in CONFIGS:
        params = dict(zip(("window_dimensions", "window_strides", "padding", "base_dilation",
                           "window_dilation"), cfg))
        kernel = prim.eval_kernel(ShapedArray(x.shape, x.dtype), **params)
        assert kernel is not None
        want, = prim.impl(x, **params)
        with np.errstate(all="ignore"):
          got = kernel(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
