"""Which tier runs a jitted function once its executable is ready
(api/jit_tiers.py): small programs time the compiled call against the
program evaluator and keep the faster; everything else runs compiled."""
import itertools

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.api import jit_tiers
from openjax._src.api.jit_tiers import CALIBRATION_CALLS, InterpretedExecutable, TierTrial
from openjax._src.config import config
from openjax._src.runtime import compiler
from openjax._src.runtime.executable import Executable


@pytest.fixture
def tiered(tmp_path):
  compiler.clear_memory_cache()
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", True), \
       config.override("jax_compilation_cache_dir", str(tmp_path / "cache")):
    yield
  compiler.clear_memory_cache()


def _ready_entry(f, *args):
  """Call ``f`` until its executable is ready; its cache entry."""
  f(*args)
  (entry,) = f._cache.values()
  if entry.pending is not None:
    entry.pending.result(timeout=300)
  return entry


def _calibrate(f, *args):
  outs = [f(*args) for _ in range(2 * CALIBRATION_CALLS)]
  (entry,) = f._cache.values()
  return entry, outs


def test_small_program_times_both_tiers_then_keeps_one(tiered):
  f = jax.jit(lambda x, y: x * y + 1)
  x = jnp.asarray(2.0, dtype=jnp.float32)
  y = jnp.asarray(3.0, dtype=jnp.float32)
  entry = _ready_entry(f, x, y)
  f(x, y)
  assert type(entry.runner) is TierTrial
  assert not f._fast               # not on the fast path while timing
  entry, outs = _calibrate(f, x, y)
  assert type(entry.runner) in (InterpretedExecutable, Executable)
  for out in outs + [f(x, y), f(x, y)]:
    assert out.dtype == np.float32 and out.shape == () and float(out) == 7.0
  assert f._fast


@pytest.mark.parametrize("interpreted_faster", [True, False])
def test_the_faster_tier_is_kept(tiered, monkeypatch, interpreted_faster):
  # A fake clock: each timed call takes 1 (interpreted) or 2 (compiled)
  # ticks, or the other way round.
  ticks = itertools.count()
  clock_state = {"t": 0.0, "start": True}
  costs = {True: 1.0 if interpreted_faster else 2.0, False: 2.0 if interpreted_faster else 1.0}

  def fake_clock():
    if clock_state["start"]:
      clock_state["start"] = False
      return clock_state["t"]
    clock_state["start"] = True
    turn = next(ticks)
    clock_state["t"] += costs[turn % 2 == 0]   # even turns run interpreted
    return clock_state["t"]

  monkeypatch.setattr(jit_tiers, "_clock", fake_clock)
  f = jax.jit(lambda x: jnp.sin(x) * 2.0 + x)
  x = jnp.arange(4.0)
  entry = _ready_entry(f, x)
  entry, outs = _calibrate(f, x)
  kind = InterpretedExecutable if interpreted_faster else Executable
  assert type(entry.runner) is kind
  expected = np.sin(np.arange(4.0, dtype=np.float32)) * 2 + np.arange(4.0)
  for out in outs + [f(x)]:
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


def _force_interpreted(f, *args):
  entry = _ready_entry(f, *args)
  compiled = entry.executable
  entry.runner = InterpretedExecutable(entry.closed_jaxpr, "f")
  return entry, compiled


CASES = [
    ("int_ops", lambda x, y: (x * y - 3) // 2 % 5, lambda: (np.arange(-6, 6, dtype=np.int32),
                                                            np.int32(7))),
    ("bool", lambda x, y: (x > y) & ~(x == 0), lambda: (np.arange(5.0, dtype=np.float32),
                                                        np.float32(2))),
    ("weak_scalar", lambda x: x * 2 + 1, lambda: (3.0,)),
    ("passthrough_and_literal", lambda x, y: (x, 1.5, y + x), lambda: (
        np.ones(3, np.float32), np.arange(3, dtype=np.float32))),
    ("pytree", lambda d: {"s": d["a"].sum(), "m": jnp.maximum(d["a"], d["b"])},
     lambda: ({"a": np.arange(6.0, dtype=np.float32).reshape(2, 3),
               "b": np.full((2, 3), 2.5, np.float32)},)),
    ("reductions_and_shapes", lambda x: (x.T @ x, x.reshape(-1)[::2], jnp.argmax(x, axis=0)),
     lambda: (np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3),)),
    ("transcendental", lambda x: (jnp.exp(x), jnp.log1p(jnp.abs(x)), jnp.tanh(x)),
     lambda: (np.linspace(-3, 3, 16, dtype=np.float32),)),
]


@pytest.mark.parametrize("name,fun,make_args", CASES, ids=[c[0] for c in CASES])
def test_interpreted_tier_gives_the_compiled_results(tiered, name, fun, make_args):
  args = make_args()
  f = jax.jit(fun)
  g = jax.jit(fun)
  entry, _ = _force_interpreted(f, *args)
  entry_g = _ready_entry(g, *args)
  entry_g.runner = entry_g.executable
  got, want = f(*args), g(*args)
  leaves_got, tree_got = jax.tree_util.tree_flatten(got)
  leaves_want, tree_want = jax.tree_util.tree_flatten(want)
  assert tree_got == tree_want
  for a, b in zip(leaves_got, leaves_want):
    assert a.dtype == b.dtype and a.shape == b.shape and a.weak_type == b.weak_type
    if np.issubdtype(a.dtype, np.floating):
      np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6, atol=1e-7)
    else:
      np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
  assert a._buffer is None and b._buffer is not None   # really interpreted vs compiled


def test_large_values_control_flow_and_donation_run_compiled(tiered):
  big = jax.jit(lambda x: x * 2.0)
  entry = _ready_entry(big, jnp.ones(8192))
  big(jnp.ones(8192))
  assert entry.runner is entry.executable

  branchy = jax.jit(lambda x: lax.cond(x > 0, lambda v: v + 1.0, lambda v: v - 1.0, x))
  entry = _ready_entry(branchy, jnp.float32(1))
  branchy(jnp.float32(1))
  assert entry.runner is entry.executable

  looped = jax.jit(lambda x: lax.fori_loop(0, 3, lambda i, v: v * 2.0, x))
  entry = _ready_entry(looped, jnp.float32(1))
  assert float(looped(jnp.float32(1))) == 8.0
  assert entry.runner is entry.executable

  donating = jax.jit(lambda x: x + 1.0, donate_argnums=0)
  out = donating(jnp.arange(3.0))
  (entry,) = donating._cache.values()
  assert entry.runner is entry.executable
  np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0, 3.0])


def test_committed_arguments_give_committed_results(tiered):
  f = jax.jit(lambda x: x * 3.0)
  x = jax.device_put(jnp.arange(3.0), jax.devices()[0])
  _force_interpreted(f, x)
  out = f(x)
  assert out.committed and out.devices() == {jax.devices()[0]}
  np.testing.assert_array_equal(np.asarray(out), [0.0, 3.0, 6.0])
  u = f(jnp.arange(3.0))
  assert not u.committed


def test_debug_nans_checks_the_interpreted_tier(tiered):
  f = jax.jit(lambda x: jnp.log(x) * 2.0)
  _force_interpreted(f, jnp.float32(2.0))
  with config.override("jax_debug_nans", True):
    with pytest.raises(FloatingPointError):
      f(jnp.float32(-1.0))
  assert float(f(jnp.float32(1.0))) == 0.0


def test_tiered_off_runs_compiled_after_an_interpreted_choice(tiered):
  f = jax.jit(lambda x: x + 1.0)
  x = jnp.arange(3.0)
  entry, _ = _force_interpreted(f, x)
  assert f(x)._buffer is None
  with config.override("openjax_tiered_compilation", False):
    out = f(x)
  assert out._buffer is not None
  np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0, 3.0])
