"""Elementwise steps over broadcast values run on one slice of them
(``core/compact_steps.py``): the same bits as the step on the whole value,
less work."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.control.nested_calls import inline_interpreted_calls
from openjax._src.core.compact_steps import COMPACT_MIN_ELEMENTS, compact_shapes
from openjax._src.core.program import program_of

rng = np.random.default_rng(0)


def _program(fn, *args):
  closed = inline_interpreted_calls(jax.make_jaxpr(fn)(*args))
  return closed, program_of(closed.jaxpr)


def _compact_kernels(program) -> int:
  return sum(getattr(s[0], "__qualname__", "").startswith("compact_step_kernel")
             for s in program.kernel_steps)


def _op_by_op(fn, *args):
  # every primitive bound on its own (library calls run their bodies): the
  # kernels on whole arrays
  with jax.disable_jit():
    return np.asarray(fn(*args))


def test_linspace_of_arrays_runs_compact_steps_with_the_same_bits():
  a = jnp.asarray(rng.random((67, 1)).astype(np.float32))
  b = jnp.asarray(rng.random(300).astype(np.float32))
  f = lambda a, b: jnp.linspace(a, b, 5, axis=-1)  # noqa: E731
  _, program = _program(f, a, b)
  # (67, 300, 5): the iota's divisions, the broadcasts' products
  assert _compact_kernels(program) >= 4
  out = np.asarray(f(a, b))
  np.testing.assert_array_equal(out, _op_by_op(f, a, b))
  np.testing.assert_allclose(out, np.linspace(np.asarray(a), np.asarray(b), 5, axis=-1),
                             rtol=1e-6, atol=1e-6)
  np.testing.assert_array_equal(out, np.asarray(jax.jit(f)(a, b)))


def test_shapes_follow_iotas_broadcasts_and_elementwise_steps():
  n = 200

  def f(x, v):
    i = lax.broadcasted_iota(jnp.int32, (n, n, 4), 2)           # varies along 2
    row = lax.broadcast_in_dim(v, (n, n, 4), (0,))               # along 0
    a = i * 3 + 1                                                # (1, 1, 4)
    b = row.astype(jnp.float32) * 2.0                            # (n, 1, 1)
    c = a.astype(jnp.float32) + b                                # (n, 1, 4)
    d = c * x                                                    # x varies everywhere
    e = jnp.sum(c, axis=0)                                       # not elementwise
    return d, e
  x = jnp.ones((n, n, 4), jnp.float32)
  v = jnp.arange(n, dtype=jnp.int32)
  closed = jax.make_jaxpr(f)(x, v)
  shapes = compact_shapes(closed.jaxpr.eqns)
  names = {k: closed.jaxpr.eqns[k].primitive.name for k in shapes}
  got = sorted((names[k], shapes[k]) for k in shapes)
  assert ("add", (n, 1, 4)) in got and ("mul", (n, 1, 1)) in got
  assert ("mul", (1, 1, 4)) in got and ("add", (1, 1, 4)) in got
  assert all(c != (n, n, 4) for _, c in got)   # ``c * x`` runs whole
  out_d, out_e = f(x, v)
  want_c = (np.arange(4) * 3 + 1)[None, None, :] + 2.0 * np.arange(n)[:, None, None]
  np.testing.assert_array_equal(np.asarray(out_d), np.broadcast_to(want_c, (n, n, 4)))
  np.testing.assert_array_equal(np.asarray(out_e), np.broadcast_to(want_c, (n, n, 4)).sum(0))


def test_small_results_and_whole_operands_run_as_they_are():
  small = int(np.sqrt(COMPACT_MIN_ELEMENTS)) // 2
  f = lambda v: lax.broadcast_in_dim(v, (small, small), (0,)) * 2.0  # noqa: E731
  _, program = _program(f, jnp.ones(small, jnp.float32))
  assert _compact_kernels(program) == 0
  # a select of a compact predicate between whole operands varies everywhere
  n = 300
  g = lambda x, y: jnp.where(lax.broadcasted_iota(jnp.int32, (n, n), 1) > 7, x, y)  # noqa: E731
  x, y = (jnp.asarray(rng.random((n, n)).astype(np.float32)) for _ in range(2))
  _, program = _program(g, x, y)
  assert _compact_kernels(program) == 1   # the comparison alone
  np.testing.assert_array_equal(np.asarray(g(x, y)), _op_by_op(g, x, y))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float16, np.bool_])
def test_dtypes_match_the_whole_steps(dtype):
  n = 256

  def f(v, w):
    a = lax.broadcast_in_dim(v, (n, n), (0,))
    b = lax.broadcast_in_dim(w, (n, n), (1,))
    if dtype == np.bool_:
      return jnp.logical_xor(a, True), a & b
    return jnp.maximum(a, 3) * 2 - 1, (a < 5) | (b == 1)
  v = jnp.asarray(rng.integers(0, 9, n).astype(dtype))
  w = jnp.asarray(rng.integers(0, 9, n).astype(dtype))
  _, program = _program(f, v, w)
  assert _compact_kernels(program) >= (1 if dtype == np.bool_ else 4)
  for j, got in enumerate(f(v, w)):
    want = _op_by_op(lambda v, w: f(v, w)[j], v, w)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert np.asarray(got).dtype == want.dtype


def test_a_compact_result_is_an_ordinary_array():
  n = 400
  f = jax.jit(lambda v: lax.broadcast_in_dim(v, (n, n), (1,)) + 1.0)
  v = jnp.asarray(rng.random(n).astype(np.float32))
  out = f(v)   # the interpreted tier: the step's result broadcast back
  want = np.broadcast_to(np.asarray(v) + np.float32(1.0), (n, n))
  np.testing.assert_array_equal(np.asarray(out), want)
  assert not np.asarray(out).flags.writeable
  # it feeds compiled calls, eager operations and the host like any other
  g = jax.jit(lambda a: jnp.sum(a * 2.0, axis=0))
  np.testing.assert_allclose(np.asarray(g(out)), want.sum(0) * 2, rtol=1e-5)
  np.testing.assert_array_equal(np.asarray(out.T), want.T)
  assert out.tolist()[3][5] == float(want[3, 5])


def test_tril_and_triu_keep_numpy_values():
  m = rng.random((500, 300)).astype(np.float32)
  for k in (-3, 0, 4):
    np.testing.assert_array_equal(np.asarray(jnp.tril(m, k)), np.tril(m, k))
    np.testing.assert_array_equal(np.asarray(jnp.triu(m, k)), np.triu(m, k))
