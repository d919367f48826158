"""Eager vmap/grad/vectorize/apply_along_axis of effect-free functions run as
cached programs (api/transform_cache.py); functions that may have an effect
trace every call, as JAX's eager transformations do."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.api import transform_cache
from openjax._src.control import trace_cache


@pytest.fixture(autouse=True)
def _fresh_cache():
  transform_cache.clear()
  yield
  transform_cache.clear()


def _programs() -> int:
  """The programs built (a key seen once runs op by op and builds none)."""
  return sum(1 for value, _ in transform_cache._programs._entries.values()
             if type(value) is not object)


def _np(x):
  return np.asarray(x)


SCALE = 2.0


def _scaled(v):
  return v * SCALE


def test_vmap_values_match_a_python_loop_and_reuse_the_program():
  x = jnp.asarray(np.random.default_rng(0).normal(size=(5, 3)).astype(np.float32))
  w = jnp.asarray(np.arange(3.0, dtype=np.float32))

  def f(v, w):
    return jnp.sin(v) @ w + v.sum()
  want = np.stack([_np(f(x[i], w)) for i in range(5)])
  for _ in range(3):
    np.testing.assert_allclose(_np(jax.vmap(f, in_axes=(0, None))(x, w)), want, rtol=1e-6)
  assert _programs() == 1


def test_grad_of_a_cond_matches_finite_differences():
  x = jnp.asarray(np.array([0.3, -0.2, 0.5], np.float32))

  def loss(x):
    return lax.cond(x.sum() > 0, lambda x: jnp.sin(x) * x, lambda x: jnp.cos(x), x).sum()
  got = [_np(jax.grad(loss)(x)) for _ in range(3)]
  assert _programs() == 1
  xn = _np(x).astype(np.float64)
  want = np.cos(xn) * xn + np.sin(xn)
  for g in got:
    np.testing.assert_allclose(g, want, rtol=1e-5)
    np.testing.assert_array_equal(g, got[0])   # the same bits every call
  # The other branch, through the same program.
  np.testing.assert_allclose(_np(jax.grad(loss)(-x)), np.sin(xn), rtol=1e-5)


def test_value_and_grad_with_aux_and_argnums():
  x, y = jnp.asarray(np.float32(1.5)), jnp.asarray(np.float32(-0.5))

  def f(x, y):
    return x * x * y, {"x": x}
  for _ in range(2):
    (v, aux), (gx, gy) = jax.value_and_grad(f, argnums=(0, 1), has_aux=True)(x, y)
    np.testing.assert_allclose(_np(v), -1.125)
    np.testing.assert_allclose(_np(aux["x"]), 1.5)
    np.testing.assert_allclose([_np(gx), _np(gy)], [-1.5, 2.25])
  assert _programs() == 1


def test_a_rebound_closure_traces_again():
  x = jnp.arange(4.0)

  def make(k):
    return lambda v: v * k
  np.testing.assert_array_equal(_np(jax.vmap(make(2.0))(x)), _np(x) * 2)
  np.testing.assert_array_equal(_np(jax.vmap(make(2.0))(x)), _np(x) * 2)
  assert _programs() == 1   # a fresh closure over the same value: the same program
  for _ in range(2):
    np.testing.assert_array_equal(_np(jax.vmap(make(3.0))(x)), _np(x) * 3)
  assert _programs() == 2
  # A closure cell rebound in place.
  k = 4.0
  f = lambda v: v * k  # noqa: E731
  np.testing.assert_array_equal(_np(jax.grad(lambda v: f(v).sum())(x)), np.full(4, 4.0))
  k = 5.0
  np.testing.assert_array_equal(_np(jax.grad(lambda v: f(v).sum())(x)), np.full(4, 5.0))


def test_a_key_seen_once_builds_no_program():
  # A closure over an array made afresh each call never comes back: it runs
  # op by op, with no trace and no program kept.
  x = jnp.arange(3.0)
  for i in range(4):
    y = x.sum() + i
    np.testing.assert_array_equal(_np(jax.vmap(lambda v: v * y)(x)), _np(x) * (3.0 + i))
  assert _programs() == 0


def test_a_changed_global_traces_again():
  global SCALE
  x = jnp.arange(3.0)
  np.testing.assert_array_equal(_np(jax.vmap(_scaled)(x)), [0.0, 2.0, 4.0])
  old = SCALE
  try:
    SCALE = 10.0
    np.testing.assert_array_equal(_np(jax.vmap(_scaled)(x)), [0.0, 10.0, 20.0])
  finally:
    SCALE = old


def test_a_mutated_numpy_array_or_list_traces_again():
  x = jnp.arange(3.0)
  table = np.array([1.0, 2.0, 3.0], np.float32)
  coefs = [1.0]
  f = lambda v: v * table[0] * coefs[0]  # noqa: E731
  np.testing.assert_array_equal(_np(jax.vmap(f)(x)), [0.0, 1.0, 2.0])
  table[0] = 7.0
  np.testing.assert_array_equal(_np(jax.vmap(f)(x)), [0.0, 7.0, 14.0])
  coefs[0] = 2.0
  np.testing.assert_array_equal(_np(jax.vmap(f)(x)), [0.0, 14.0, 28.0])


@pytest.mark.parametrize("call", [
    lambda f, x: jax.vmap(f)(x),
    lambda f, x: jax.grad(lambda v: f(v).sum())(x),
    lambda f, x: jnp.vectorize(f)(x),
    lambda f, x: jnp.apply_along_axis(f, 0, x),
], ids=["vmap", "grad", "vectorize", "apply_along_axis"])
def test_side_effects_happen_every_call_as_in_jax(call):
  # JAX 0.10.2 traces the function on each of these eager calls: a print or
  # an append runs every call (counts checked against JAX).
  x = jnp.arange(3.0)
  seen = []

  def appends(v):
    seen.append(1)
    return v * 2
  count = 0

  def counts(v):
    nonlocal count
    count += 1
    return v * 2
  for _ in range(3):
    call(appends, x)
    call(counts, x)
  assert len(seen) == 3 and count == 3
  assert _programs() == 0


def test_print_is_an_effect(capsys):
  x = jnp.arange(3.0)

  def f(v):
    print("traced")
    return v + 1
  for _ in range(2):
    jax.vmap(f)(x)
  assert capsys.readouterr().out.count("traced") == 2


def test_effect_free_keys():
  assert trace_cache.pure_fun_key(lambda v: jnp.sin(v) * 2) is not None
  assert trace_cache.pure_fun_key(_scaled) is not None
  assert trace_cache.pure_fun_key(lambda v: print(v)) is None
  assert trace_cache.pure_fun_key(lambda v: np.random.normal()) is None
  assert trace_cache.pure_fun_key(lambda v: jax.debug.print("{}", v)) is None
  # Reached through a call: a global list is keyed by its contents, so each
  # append makes the next call's key another one; the append runs every call.
  _LOG.clear()
  for _ in range(4):
    jax.vmap(lambda v: _appending(v))(jnp.arange(2.0))
  assert len(_LOG) == 4
  holder = type("Holder", (), {})()
  holder.log = []
  assert trace_cache.pure_fun_key(lambda v: holder.log.append(v)) is None


_LOG: list = []


def _appending(v):
  _LOG.append(v)
  return v


def test_python_control_flow_on_values_runs_op_by_op():
  # grad allows ``if`` on values eagerly; the program's trace cannot: the
  # call runs op by op and gives JAX's result.
  def f(x):
    return jnp.sin(x) if x > 0 else x * x
  for _ in range(2):
    np.testing.assert_allclose(_np(jax.grad(f)(jnp.float32(0.5))), np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(_np(jax.grad(f)(jnp.float32(-0.5))), -1.0)


def test_errors_are_the_op_by_op_ones():
  x = jnp.arange(3)
  with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
    jax.grad(lambda v: v.sum())(x)
  with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions"):
    jax.grad(lambda v: v * 2)(jnp.arange(3.0))
  with pytest.raises(ValueError, match="vmap got inconsistent sizes"):
    jax.vmap(lambda a, b: a + b)(jnp.arange(3.0), jnp.arange(4.0))


def test_vectorize_and_apply_along_axis_values():
  rng = np.random.default_rng(1)
  a = rng.normal(size=(2, 3, 4)).astype(np.float32)
  f = lambda v: jnp.sum(v * v) * v[0]  # noqa: E731
  for _ in range(2):
    got = jnp.apply_along_axis(f, 1, jnp.asarray(a))
    np.testing.assert_allclose(_np(got), np.apply_along_axis(
        lambda v: np.sum(v * v) * v[0], 1, a), rtol=1e-5)
  m, v = rng.normal(size=(4, 2, 3)).astype(np.float32), rng.normal(size=3).astype(np.float32)
  matvec = jnp.vectorize(jnp.matmul, signature="(n,m),(m)->(n)")
  for _ in range(2):
    np.testing.assert_allclose(_np(matvec(jnp.asarray(m), jnp.asarray(v))), m @ v, rtol=1e-5)
  assert _programs() == 2
  # Excluded positions given as a set (unhashable): still one program.
  affine = jnp.vectorize(lambda x, c: c[0] * x + c[1], excluded={1})
  coefs = jnp.asarray(np.array([2.0, 1.0], np.float32))
  for _ in range(2):
    np.testing.assert_allclose(_np(affine(jnp.asarray(m[0]), coefs)), 2 * m[0] + 1, rtol=1e-6)
  assert _programs() == 3


def test_vmap_of_collectives_reuses_its_program():
  x = jnp.asarray(np.arange(12.0, dtype=np.float32).reshape(4, 3))
  f = jax.vmap(lambda v: lax.psum(v, "i"), axis_name="i")
  nested = jax.vmap(jax.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="i"), axis_name="j")
  for _ in range(2):
    np.testing.assert_array_equal(_np(f(x)), np.broadcast_to(_np(x).sum(0), (4, 3)))
    np.testing.assert_array_equal(_np(nested(x.reshape(2, 2, 3))),
                                  np.broadcast_to(_np(x).sum(0), (2, 2, 3)))
  assert _programs() == 2


def test_inside_jit_the_transformations_trace_as_usual():
  @jax.jit
  def f(x):
    return jax.vmap(jax.grad(lambda v: jnp.sin(v)))(x)
  np.testing.assert_allclose(_np(f(jnp.arange(3.0))), np.cos(np.arange(3.0)), rtol=1e-6)
  assert _programs() == 0


def test_reduce_with_a_fresh_lambda_reuses_its_trace(monkeypatch):
  from openjax._src.control import _reduce_computation
  traced = []
  trace = _reduce_computation._trace_computation

  def counting(*args):
    traced.append(1)
    return trace(*args)
  monkeypatch.setattr(_reduce_computation, "_trace_computation", counting)
  _reduce_computation._traces.clear()
  x = jnp.asarray(np.arange(12, dtype=np.int32).reshape(4, 3))
  for _ in range(3):
    out = lax.reduce(x, np.int32(1), lambda a, b: a * b, (0,))
    np.testing.assert_array_equal(_np(out), np.multiply.reduce(_np(x), axis=0))
  assert len(traced) == 1
  # A computation that prints traces every call, as in JAX.
  for _ in range(2):
    lax.reduce(x, np.int32(1), lambda a, b: (print(end=""), a * b)[1], (0,))
  assert len(traced) == 3


def test_python_numbers_in_results_stay_python_numbers():
  # JAX's eager calls hand back a Python number that is not computed from
  # the arguments as it is (an unmapped output, an aux value).
  x = jnp.asarray(np.float32(2.0))
  for _ in range(3):
    g, aux = jax.grad(lambda v: (v * v, {"a": 1.0, "b": 3}), has_aux=True)(x)
    assert type(aux["a"]) is float and type(aux["b"]) is int
    np.testing.assert_allclose(_np(g), 4.0)
    y = jax.vmap(lambda v: (v, 2.0), out_axes=(0, None))(jnp.arange(3.0))
    assert type(y[1]) is float


def test_a_closure_over_an_equal_fresh_array_reuses_its_program():
  # ``a.T`` is a new Array every call: keyed by its (small) value, the
  # custom_linear_solve program of the last call is found again.
  rng = np.random.default_rng(0)
  m = rng.standard_normal((3, 3)).astype(np.float32)
  a = jnp.asarray(m @ m.T + 3 * np.eye(3, dtype=np.float32))
  b = jnp.asarray(rng.standard_normal(3).astype(np.float32))

  def solve_with(mat):
    return lambda matvec, v: jnp.linalg.solve(mat, v)

  def run(a, b):
    return lax.custom_linear_solve(lambda x: a @ x, b, solve_with(a),
                                   transpose_solve=solve_with(a.T))
  expected = np.linalg.solve(np.asarray(a, np.float64), np.asarray(b, np.float64))
  for _ in range(3):
    np.testing.assert_allclose(_np(run(a, b)), expected, rtol=1e-5)
  assert _programs() == 1
  a2 = a + 1.0   # other values: another program, the right answer
  np.testing.assert_allclose(_np(run(a2, b)), np.linalg.solve(np.asarray(a2, np.float64),
                                                              np.asarray(b, np.float64)),
                             rtol=1e-5)
  np.testing.assert_allclose(_np(run(a2, b)), np.linalg.solve(np.asarray(a2, np.float64),
                                                              np.asarray(b, np.float64)),
                             rtol=1e-5)
  assert _programs() == 2


@pytest.mark.parametrize("solver", ["cg", "bicgstab", "gmres"])
def test_sparse_solvers_with_function_operators_reuse_their_program(solver):
  rng = np.random.default_rng(1)
  m = rng.standard_normal((5, 5))
  a = jnp.asarray((m @ m.T + 5 * np.eye(5)).astype(np.float32))
  b = jnp.asarray(rng.standard_normal(5).astype(np.float32))
  fn = getattr(jax.scipy.sparse.linalg, solver)
  expected = np.linalg.solve(np.asarray(a, np.float64), np.asarray(b, np.float64))
  for _ in range(3):
    x, _ = fn(lambda v: a @ v, b, tol=1e-6, M=lambda v: v / jnp.diag(a))
    np.testing.assert_allclose(_np(x), expected, rtol=1e-4, atol=1e-4)
  assert _programs() == 1
