"""Calls while a jitted function compiles in the background (tiered
execution): a program of plain steps runs on jit's fast path through the
program evaluator (``jit_tiers.PendingTier``), then moves to its compiled
runner once the compile is done; other programs keep ``eval_jaxpr``."""
import threading

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.api.jit_tiers import PendingTier
from openjax._src.runtime import pipeline
from tests.test_tiered import tiered  # noqa: F401 - the fixture


@pytest.fixture
def held_compiles(tiered, monkeypatch):  # noqa: F811
  """Background compiles wait until the returned event is set."""
  gate = threading.Event()
  real = pipeline.compile_lowered

  def held(lowered, options):
    gate.wait(60)
    return real(lowered, options)
  monkeypatch.setattr(pipeline, "compile_lowered", held)
  yield gate
  gate.set()
  assert pipeline.background.wait_idle(120)


def _runners(f):
  return [runner for runner, _ in f._fast.values()]


def test_plain_program_runs_on_the_fast_path_while_compiling(held_compiles):
  def scale_and_shift(x, y):
    return x * y + 1.0
  f = jax.jit(scale_and_shift)
  x, y = jnp.asarray(np.float32(2.0)), jnp.asarray(np.float32(3.0))
  for _ in range(3):
    assert float(f(x, y)) == 7.0
  (runner,) = _runners(f)
  assert type(runner) is PendingTier
  (entry,) = f._cache.values()
  assert entry.pending is not None and not entry.pending.done()
  held_compiles.set()
  assert pipeline.background.wait_idle(120)
  assert float(f(x, y)) == 7.0     # leaves the fast path, runs through the general path
  assert not any(type(r) is PendingTier for r in _runners(f))
  for _ in range(12):              # the compiled runner (after its tier trial)
    assert float(f(x, y)) == 7.0
  assert entry.executable is not None
  assert not any(type(r) is PendingTier for r in _runners(f))


def test_values_and_dtypes_match_the_compiled_calls(held_compiles):
  def mix(a, b):
    return jnp.tanh(a) * b - jnp.exp(-a), (a > b).astype(jnp.int32)
  f = jax.jit(mix)
  rng = np.random.default_rng(0)
  a = jnp.asarray(rng.standard_normal((5, 3)).astype(np.float32))
  b = jnp.asarray(rng.standard_normal((5, 3)).astype(np.float32))
  while_pending = [f(a, b) for _ in range(3)]
  assert type(_runners(f)[0]) is PendingTier
  held_compiles.set()
  assert pipeline.background.wait_idle(120)
  compiled = jax.jit(mix)(a, b)
  for got in while_pending:
    for g, c in zip(got, compiled):
      assert g.dtype == c.dtype and g.shape == c.shape
      np.testing.assert_allclose(np.asarray(g), np.asarray(c), rtol=2e-6, atol=1e-7)


def test_a_program_with_a_sub_program_keeps_the_general_path(held_compiles):
  def branchy(x):
    return lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
  f = jax.jit(branchy)
  x = jnp.arange(4.0, dtype=jnp.float32)
  for _ in range(3):
    np.testing.assert_array_equal(np.asarray(f(x)), np.arange(4.0) * 2)
  assert not any(type(r) is PendingTier for r in _runners(f))
  (entry,) = f._cache.values()
  assert entry.pending_plain is False    # asked once, not on every call


def test_committed_arguments_keep_their_device(held_compiles):
  dev = jax.devices()[0]
  x = jax.device_put(np.arange(3, dtype=np.float32), dev)

  def plus_one(v):
    return v + 1.0
  f = jax.jit(plus_one)
  for _ in range(3):
    out = f(x)
    np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0, 3.0])
    assert out.devices() == {dev} and out.committed


def test_a_failed_compile_leaves_no_pending_runner(tiered, monkeypatch):  # noqa: F811
  from openjax._src.runtime import compiler

  def broken(text, flags, name):
    raise compiler.CompilationError(f"jit of {name}: simulated failure")
  monkeypatch.setattr(compiler, "_compile_in_process", broken)
  monkeypatch.setattr(compiler, "_compile_in_subprocess", broken)

  def halve(v):
    return v * 0.5
  f = jax.jit(halve)
  x = jnp.arange(4.0, dtype=jnp.float32)
  np.testing.assert_array_equal(np.asarray(f(x)), np.arange(4.0) * 0.5)
  assert pipeline.background.wait_idle(120)
  with pytest.warns(RuntimeWarning, match="compiling it failed"):
    f(x)
  for _ in range(3):
    np.testing.assert_array_equal(np.asarray(f(x)), np.arange(4.0) * 0.5)
  assert not any(type(r) is PendingTier for r in _runners(f))


def test_nested_library_calls_are_inlined_into_the_pending_runner(held_compiles):
  inner = jax.jit(lambda v: jnp.tanh(v) * 2.0)

  def outer(v):
    return jax.nn.log_softmax(inner(v) + 1.0)
  f = jax.jit(outer)
  x = jnp.asarray(np.linspace(-2, 2, 6, dtype=np.float32))
  t = np.tanh(np.linspace(-2, 2, 6, dtype=np.float32)) * 2 + 1
  want = t - np.log(np.sum(np.exp(t - t.max()))) - t.max()
  assert any(e.primitive.name == "jit" for e in jax.make_jaxpr(outer)(x).jaxpr.eqns)
  for _ in range(3):
    np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-5, atol=1e-6)
  assert type(_runners(f)[0]) is PendingTier
