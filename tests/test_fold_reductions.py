"""Reductions of broadcasts and iotas inside jit never make them (issue 19,
item 5): the folded jaxpr, its values against NumPy, interpreted and compiled."""
import time

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.interpreters.fold_reductions import fold_reductions


def _prims(f, *args):
  jaxpr = fold_reductions(jax.make_jaxpr(f)(*args).jaxpr)
  return [e.primitive.name for e in jaxpr.eqns]


def _largest(f, *args) -> int:
  """Elements of the largest value the folded jaxpr makes."""
  jaxpr = fold_reductions(jax.make_jaxpr(f)(*args).jaxpr)
  return max(int(np.prod(v.aval.shape)) for e in jaxpr.eqns for v in e.outvars)


def _both(f, *args):
  """``jit(f)`` interpreted and compiled (no tiering)."""
  interpreted = jax.jit(f)(*args)
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    compiled = jax.jit(f)(*args)
    assert compiled._buffer is not None, "did not run compiled"
  return np.asarray(interpreted), np.asarray(compiled)


def test_sum_of_huge_broadcast_runs_in_milliseconds():
  f = lambda x: jnp.broadcast_to(x, (200000, 200000)).sum()
  assert "broadcast_in_dim" not in _prims(f, 1.0)
  t = time.perf_counter()
  interpreted, compiled = _both(f, 1.0)
  assert time.perf_counter() - t < 30   # compile included; was RESOURCE_EXHAUSTED
  np.testing.assert_allclose(interpreted, 4e10, rtol=1e-6)
  np.testing.assert_allclose(compiled, 4e10, rtol=1e-6)


def test_sum_of_huge_arange_is_its_closed_form():
  f = lambda: jnp.arange(1e10).sum()
  assert _prims(f) == ["broadcast_in_dim"]
  for out in _both(f):
    np.testing.assert_allclose(out, 5e19, rtol=1e-6)   # JAX: 4.9999997e+19
    assert out.dtype == np.float32


def test_int32_iota_sum_wraps_as_the_adds_do():
  f = lambda: jnp.arange(100000, dtype=jnp.int32).sum()
  for out in _both(f):
    assert out == 704982704 and out.dtype == np.int32   # JAX's value


@pytest.mark.parametrize("case", [
    # (name, function, operand): reductions over new, size-1 and kept axes
    ("sum_new_axis", lambda x: jnp.broadcast_to(x, (4, 5, 3)).sum(0), (5, 3)),
    ("sum_size1_axis", lambda x: jnp.broadcast_to(x, (5, 6)).sum(1), (5, 1)),
    ("sum_mixed", lambda x: jnp.broadcast_to(x, (4, 5, 6)).sum((0, 2)), (5, 1)),
    ("sum_all", lambda x: jnp.broadcast_to(x, (4, 5, 6)).sum(), (5, 1)),
    ("mean", lambda x: jnp.broadcast_to(x, (7, 5, 3)).mean((0, 1)), (5, 3)),
    ("max", lambda x: jnp.broadcast_to(x, (4, 5, 6)).max((0, 2)), (5, 1)),
    ("min", lambda x: jnp.broadcast_to(x, (4, 5, 6)).min(0), (5, 6)),
    ("sum_convert", lambda x: jnp.broadcast_to(x, (4, 5)).astype(jnp.int32).sum(0), (5,)),
    ("sum_twice", lambda x: jnp.broadcast_to(x, (4, 5, 6)).sum(0).sum(0), (6,)),
    ("any", lambda x: jnp.broadcast_to(x > 0, (4, 5)).any(0), (5,)),
    ("all", lambda x: jnp.broadcast_to(x > 0, (4, 5)).all(1), (4, 1)),
], ids=lambda c: c[0])
def test_reduction_of_broadcast(case):
  _, f, shape = case
  x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
  assert _largest(f, x) < 4 * x.size   # never the broadcast (>= 4 copies of x)
  expected = np.asarray(f(x))   # eager: the broadcast is made, then reduced
  for out in _both(f, x):
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-6)


def test_int_sum_of_broadcast_wraps():
  f = lambda x: jnp.broadcast_to(x, (70000, 70000)).sum()
  x = np.int32(3)
  expected = np.int32(1815098112)   # 3 * 70000**2 mod 2**32, JAX's value
  for out in _both(f, x):
    assert out == expected and out.dtype == np.int32


@pytest.mark.parametrize("dtype", [np.int32, np.float32])
@pytest.mark.parametrize("axes", [(0,), (1,), (2,), (0, 2), (0, 1, 2)])
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_reduction_of_iota(dtype, axes, op):
  def f():
    return getattr(lax.broadcasted_iota(dtype, (4, 5, 6), 1), op)(axes)
  assert not [p for p in _prims(f) if p.startswith("reduce")]
  assert _largest(f) < 4 * 5 * 6
  expected = getattr(np.broadcast_to(np.arange(5, dtype=dtype)[:, None], (4, 5, 6)), op)(axes)
  expected = expected.astype(dtype)   # NumPy sums int32 in int64
  for out in _both(f):
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


def test_iota_through_float_convert():
  f = lambda: jnp.arange(1000).astype(jnp.float32).sum()
  for out in _both(f):
    assert out == np.float32(499500.0)


def test_empty_and_unfolded_reductions_keep_their_jaxpr():
  f = lambda x: lax.reduce_max(jnp.broadcast_to(x, (0, 3)), (0,))
  closed = jax.make_jaxpr(f)(1.0)
  assert fold_reductions(closed.jaxpr) is closed.jaxpr
  g = lambda x: (x * 2).sum()
  closed = jax.make_jaxpr(g)(np.ones(3, np.float32))
  assert fold_reductions(closed.jaxpr) is closed.jaxpr
  for out in _both(f, 1.0):
    assert out.shape == (3,) and np.all(out == -np.inf)


def test_make_jaxpr_still_prints_the_traced_program():
  # The fold happens where the jaxpr runs; the printed program is the trace.
  text = str(jax.make_jaxpr(lambda x: jnp.broadcast_to(x, (3, 4)).sum())(1.0))
  assert "broadcast_in_dim" in text and "reduce_sum" in text


def test_nested_jit_folds():
  inner = jax.jit(lambda x: jnp.broadcast_to(x, (100000, 100000)).sum())
  for out in _both(lambda x: inner(x) + 1, 2.0):
    np.testing.assert_allclose(out, 2e10 + 1, rtol=1e-6)
