"""Tiered execution (a new jitted function runs through the interpreter while
IREE compiles it in a background thread; a cache hit runs compiled at once)
and inline execution of small executables on the ``local-sync`` device."""
import json
import pathlib
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.api.jit_tiers import CALIBRATION_CALLS
from openjax._src.config import config
from openjax._src.runtime import compiler
from openjax._src.runtime.iree_device import iree_device
from openjax._src.runtime.pipeline import runs_inline

REPO = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture
def tiered(tmp_path):
  compiler.clear_memory_cache()
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", True), \
       config.override("jax_compilation_cache_dir", str(tmp_path / "cache")):
    yield tmp_path / "cache"
  compiler.clear_memory_cache()


def _entry(f):
  (entry,) = f._cache.values()
  return entry


def test_first_call_interprets_while_compiling(tiered):
  x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)

  @jax.jit
  def f(x):
    return jnp.tanh(x * 3.0 + 1.0).sum(axis=0)

  expected = np.tanh(x * 3.0 + 1.0).sum(axis=0)
  first = f(x)
  entry = _entry(f)
  assert entry.executable is not None or entry.pending is not None
  np.testing.assert_allclose(np.asarray(first), expected, rtol=1e-6)
  if entry.pending is not None:
    entry.pending.result(timeout=120)     # the background compile finishes
  second = f(x)
  assert entry.executable is not None and entry.pending is None
  np.testing.assert_allclose(np.asarray(second), expected, rtol=1e-6)
  # Later calls take the fast path (a small program like this one first
  # times both tiers on CALIBRATION_CALLS calls each: tests/test_jit_tiers.py).
  xs = jnp.asarray(x)
  for _ in range(2 * CALIBRATION_CALLS + 1):
    np.testing.assert_allclose(np.asarray(f(xs)), expected, rtol=1e-6)
  assert f._fast


def test_tiered_off_compiles_before_the_first_call(tiered):
  with config.override("openjax_tiered_compilation", False):
    f = jax.jit(lambda x: x * 2.0 + 1.0)
    out = f(np.arange(3, dtype=np.float32))
  assert _entry(f).executable is not None and _entry(f).pending is None
  np.testing.assert_array_equal(np.asarray(out), [1.0, 3.0, 5.0])


def test_donating_functions_compile_at_once(tiered):
  f = jax.jit(lambda x: x + 1.0, donate_argnums=0)
  x = jnp.arange(4.0)
  out = f(x)
  assert _entry(f).executable is not None
  assert x.is_deleted()
  np.testing.assert_array_equal(np.asarray(out), [1.0, 2.0, 3.0, 4.0])


def test_nested_jit_is_interpreted_too_while_compiling(tiered):
  inner = jax.jit(lambda x: jnp.sin(x) * 2.0)
  outer = jax.jit(lambda x: inner(x) + 1.0)
  x = np.arange(5, dtype=np.float32)
  out = outer(x)
  np.testing.assert_allclose(np.asarray(out), np.sin(x) * 2.0 + 1.0, rtol=1e-6)
  pending = _entry(outer).pending
  if pending is not None:
    pending.result(timeout=120)
  np.testing.assert_allclose(np.asarray(outer(x)), np.sin(x) * 2.0 + 1.0, rtol=1e-6)


_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np, openjax as jax, openjax.numpy as jnp
    from openjax._src.runtime import compiler
    jax.config.update("openjax_executor", "iree")
    jax.config.update("openjax_tiered_compilation", True)
    jax.config.update("jax_compilation_cache_dir", sys.argv[1])
    f = jax.jit(lambda x, y: jnp.tanh(x @ y).sum())
    x = np.ones((8, 8), np.float32)
    out = f(x, x)
    (entry,) = f._cache.values()
    ready = entry.executable is not None
    if entry.pending is not None:
      entry.pending.result(timeout=120)
    print(json.dumps({"compiled_at_first_call": ready, "stats": compiler.stats,
                      "out": float(out)}))
""")


def _run(cache):
  p = subprocess.run([sys.executable, "-c", _SCRIPT, str(cache)], cwd=str(REPO),
                     capture_output=True, text=True, timeout=300)
  assert p.returncode == 0, p.stderr
  return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_warm_disk_cache_runs_compiled_from_the_first_call(tmp_path):
  cold = _run(tmp_path / "cache")
  assert cold["stats"]["compiles"] == 1
  warm = _run(tmp_path / "cache")
  assert warm["stats"]["compiles"] == 0 and warm["stats"]["disk_hits"] == 1
  assert warm["compiled_at_first_call"]
  assert warm["out"] == pytest.approx(cold["out"]) == pytest.approx(64 * np.tanh(8.0))


# ------------------------------------------------------------ inline calls
def test_small_executables_run_inline_and_large_ones_on_the_task_queue(monkeypatch):
  from openjax._src.runtime import pipeline
  monkeypatch.setattr(pipeline, "cpu_thread_cap", lambda: None)
  small = jax.jit(lambda x, y: x * y + 1).trace(jnp.float32(2), jnp.float32(3)).jaxpr
  big = jax.jit(lambda x: x @ x).trace(jnp.ones((256, 256))).jaxpr
  assert runs_inline(small)
  assert not runs_inline(big)
  monkeypatch.setattr(pipeline, "cpu_thread_cap", lambda: 1)   # one worker: all inline
  assert runs_inline(big)


def test_programs_shorter_than_the_queue_hand_offs_run_inline(monkeypatch):
  # A program whose one-core time (work and bytes) is under a worker wake-up
  # plus a hand-off per equation runs inline: jax.hessian of a 100-d function
  # 31 us inline, 83-110 us on the queue; 64^2 tanh(a @ a) 14 vs 83 us. Large
  # or memory-bound ones keep the queue's second worker.
  from openjax._src.runtime import pipeline
  monkeypatch.setattr(pipeline, "cpu_thread_cap", lambda: None)
  a = jnp.ones((100, 100))
  hessian = jax.jit(jax.hessian(lambda x: 0.5 * x @ (a @ x) + jnp.sum(jnp.tanh(x))))
  assert runs_inline(hessian.trace(jnp.ones(100)).jaxpr)
  assert runs_inline(jax.jit(lambda m: jnp.tanh(m @ m)).trace(jnp.ones((64, 64))).jaxpr)
  assert runs_inline(jax.jit(lambda v: jnp.sum(v * v)).trace(jnp.ones(100_000)).jaxpr)
  assert not runs_inline(jax.jit(lambda m: jnp.tanh(m @ m)).trace(jnp.ones((384, 384))).jaxpr)
  assert not runs_inline(jax.jit(lambda v: jnp.sum(v * v)).trace(jnp.ones(1_000_000)).jaxpr)
  assert not runs_inline(jax.jit(lambda v: jnp.sin(v) * 2 + jnp.exp(-v * v)).trace(
      jnp.ones(100_000)).jaxpr)


def test_inline_programs_run_on_all_devices_at_once(monkeypatch):
  # An inline program that is not tiny runs on a thread per device in an
  # SPMD step, not on each device in turn in the calling thread.
  from openjax._src.runtime import executable
  seen = []
  real = executable._execute_group

  def group(ex, args, devices, members):
    seen.append(tuple(members))
    return real(ex, args, devices, members)
  monkeypatch.setattr(executable, "_execute_group", group)
  jax.config.update("jax_num_cpu_devices", 2)
  jax.config.update("openjax_executor", "iree")
  try:
    w = np.random.default_rng(0).standard_normal((2, 96, 96)).astype(np.float32)
    f = jax.pmap(lambda m: jnp.tanh(m @ m))
    got = np.asarray(f(w))
    np.testing.assert_allclose(got, np.tanh(w @ w), rtol=1e-4, atol=1e-5)
  finally:
    jax.config.update("openjax_executor", "interpreter")
    jax.config.update("jax_num_cpu_devices", -1)
  if executable.host_cores() > 1:
    assert sorted(seen) == [(0,), (1,)]


def test_programs_with_small_loop_trips_run_inline(monkeypatch):
  # IREE's VM waits for each trip's dispatches: on the task queue each one
  # pays a worker wake-up (lax.linalg.qdwh of f32[31,31]: 115 ms vs 5.5 ms
  # inline). Loops with large trips keep the task queue's workers.
  from openjax._src.runtime import pipeline
  monkeypatch.setattr(pipeline, "cpu_thread_cap", lambda: None)
  w = jnp.ones((64, 64))
  small_trips = jax.jit(lambda c: jax.lax.fori_loop(0, 100, lambda i, c: jnp.tanh(c @ w), c))
  big = jnp.ones((256, 256))
  # the same program without the loop at a size where the queue pays
  assert not runs_inline(jax.jit(lambda c: jnp.tanh(c @ big) @ big).trace(big).jaxpr)
  assert runs_inline(small_trips.trace(w).jaxpr)
  large_trips = jax.jit(lambda c: jax.lax.fori_loop(0, 10, lambda i, c: jnp.tanh(c @ big), c))
  assert not runs_inline(large_trips.trace(big).jaxpr)
  scan = jax.jit(lambda c: jax.lax.scan(lambda c, _: (c @ w, None), c, None, length=50)[0])
  assert runs_inline(scan.trace(w).jaxpr)
  x = jnp.asarray(np.random.default_rng(0).standard_normal((31, 31)).astype(np.float32))
  assert runs_inline(jax.jit(jax.lax.linalg.qdwh).trace(x).jaxpr)


def test_inline_calls_wait_for_queued_work():
  # While the task timeline is busy, a small call goes through the queue
  # (in order) instead of running inline on a not-ready input.
  with config.override("openjax_executor", "iree"):
    f = jax.jit(lambda x: x * 2.0 + 1.0)
    x = jnp.float32(3.0)
    f(x).block_until_ready()
    assert next(iter(f._fast.values()))[1].executable.inline
    hold = iree_device(jax.devices()[0])._hold_for_testing()
    y = f(x)          # queued behind the hold
    z = f(y)          # depends on y: must not run before it
    assert not z.is_ready()
    hold.release()
    assert float(z) == 15.0
    # Idle again: inline, ready on return.
    w = f(z)
    assert w.is_ready() and float(w) == 31.0


def test_inline_results_feed_queued_calls():
  with config.override("openjax_executor", "iree"):
    small = jax.jit(lambda x: x + 1.0)
    big = jax.jit(lambda a, s: (a @ a) * s)
    a = jnp.ones((128, 128))
    s = small(jnp.float32(1.0))
    out = big(a, s)
    np.testing.assert_allclose(np.asarray(out), np.full((128, 128), 256.0), rtol=1e-6)


def test_threads_chaining_inline_and_queued_calls():
  import threading
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    small = jax.jit(lambda x: x * 2.0 - 1.0)      # inline
    big = jax.jit(lambda a, s: a @ a * s)         # task queue
    a = jnp.ones((96, 96)) / 96.0
    small(jnp.float32(1.0)).block_until_ready()
    big(a, jnp.float32(1.0)).block_until_ready()
  errors = []

  def work(i):
    try:
      with config.override("openjax_executor", "iree"), \
           config.override("openjax_tiered_compilation", False):
        x = jnp.float32(i + 1.0)
        for _ in range(50):
          x = small(x)              # x -> 2x - 1 keeps 1.0 fixed, doubles others' offset
        m = big(a, small(jnp.float32(1.0)))
      expect = (i + 1.0 - 1.0) * 2.0 ** 50 + 1.0
      assert float(x) == np.float32(expect), (i, float(x), expect)
      np.testing.assert_allclose(np.asarray(m), np.full((96, 96), 1.0 / 96.0), rtol=1e-5)
    except Exception as e:  # noqa: BLE001 - reported below
      errors.append(e)
  threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
  for t in threads:
    t.start()
  for t in threads:
    t.join()
  assert not errors, errors


def test_random_samplers_are_never_tiered(tiered):
  # A first call run by the interpreter would give other last bits than the
  # compiled calls after it: jax.random's jitted samplers always compile.
  key = jax.random.PRNGKey(0)
  first = jax.random.uniform(key, (6,), minval=-0.3, maxval=2.0)
  second = jax.random.uniform(key, (6,), minval=-0.3, maxval=2.0)
  np.testing.assert_array_equal(np.asarray(first).view(np.int32),
                                np.asarray(second).view(np.int32))
  # JAX 0.10.2's bits for this call (compiled, fused multiply-add).
  np.testing.assert_array_equal(
      np.asarray(first).view(np.int32),
      [1072732121, 1073328548, 1055765721, 1061627624, 1065443343, 1034235767])


def test_linalg_runs_lapack_eagerly_and_stages_a_jit_when_traced(tiered):
  # jnp.linalg's functions are jitted as in JAX (a traced call stages a jit),
  # but eagerly they run op by op: LAPACK's results, the same every call.
  a = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], np.float32)
  w1, v1 = jnp.linalg.eigh(a)
  w2, v2 = jnp.linalg.eigh(a)
  w_np, v_np = np.linalg.eigh(a)
  np.testing.assert_array_equal(np.asarray(v1), np.asarray(v2))
  np.testing.assert_array_equal(np.asarray(v1), v_np)
  np.testing.assert_array_equal(np.asarray(w1), w_np)
  jaxpr = jax.make_jaxpr(jnp.linalg.eigh)(a)
  assert jaxpr.jaxpr.eqns[0].primitive.name == "jit"


def test_a_failed_background_compile_keeps_the_calls_interpreted(tiered, monkeypatch, caplog):
  # Its first calls returned results: later calls must not start raising.
  # They keep interpreting, with one warning naming the function and the
  # compiler's first error line; an explicit compile still raises.
  def broken(text, flags, name):
    raise compiler.CompilationError(f"jit of {name}: IREE failed to compile the lowered "
                                    "module:\nerror: source.mlir:3:5: simulated failure\n"
                                    "note: more detail")
  monkeypatch.setattr(compiler, "_compile_in_process", broken)
  monkeypatch.setattr(compiler, "_compile_in_subprocess", broken)   # (the fallback's)

  def scale_shift(x):
    return x * 3.0 - 1.0
  f = jax.jit(scale_shift)
  x = np.arange(3, dtype=np.float32)
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    np.testing.assert_array_equal(np.asarray(f(x)), x * 3.0 - 1.0)   # interpreted
  entry = _entry(f)
  with pytest.raises(compiler.CompilationError):
    entry.pending.result(timeout=60)
  with config.override("jax_log_compiles", True), caplog.at_level("WARNING"), \
       pytest.warns(RuntimeWarning, match=r"jit of scale_shift: compiling it failed \(error: "
                    r"source.mlir:3:5: simulated failure\); its calls keep running interpreted"):
    np.testing.assert_array_equal(np.asarray(f(x)), x * 3.0 - 1.0)
  assert any("simulated failure" in r.getMessage() for r in caplog.records)
  with warnings.catch_warnings():
    warnings.simplefilter("error")   # warned once
    for i in range(3):
      np.testing.assert_array_equal(np.asarray(f(x + i)), (x + i) * 3.0 - 1.0)
  assert entry.executable is None and entry.pending is None
  with pytest.raises(compiler.CompilationError, match="simulated failure"):
    f.lower(x).compile()


_SAMPLERS = {
    "normal": lambda k: jax.random.normal(k, (1000,)),
    "uniform": lambda k: jax.random.uniform(k, (1000,), minval=-0.3, maxval=2.0),
    "gamma": lambda k: jax.random.gamma(k, jnp.linspace(0.2, 6.0, 1000)),
    "exponential": lambda k: jax.random.exponential(k, (1000,)),
}


@pytest.mark.parametrize("name", sorted(_SAMPLERS))
def test_a_random_call_gives_the_same_bits_in_every_tier(tiered, name):
  # A sampler inside a user's jit runs compiled even while the enclosing
  # function's first call is interpreted (jit_p's tiered=False): NumPy's
  # exp/log would give other last bits than IREE's in the compiled calls.
  draw = _SAMPLERS[name]
  key = jax.random.PRNGKey(7)
  eager = np.asarray(draw(key))
  f = jax.jit(draw)
  first = np.asarray(f(key))
  entry = _entry(f)
  assert entry.executable is None and entry.pending is not None   # interpreted
  entry.pending.result(timeout=300)
  later = [np.asarray(f(key)) for _ in range(2)]
  assert entry.executable is not None
  for got in (first, *later):
    np.testing.assert_array_equal(got.view(np.int32), eager.view(np.int32))


def test_background_compile_uses_the_callers_cache_dir(tiered):
  # Config overrides are per thread: the compile thread writes the module
  # into the directory the calling thread's override names.
  def shift_by_seven(x):
    return x + 7.0
  f = jax.jit(shift_by_seven)
  f(np.arange(4, dtype=np.float32))
  _entry(f).pending.result(timeout=120)
  assert list(tiered.glob("*.vmfb")), "the module was not cached in the caller's directory"


def test_wait_idle_returns_when_the_background_compiles_are_done(tiered):
  from openjax._src.runtime.pipeline import background

  def halve_then_add_five(x):
    return x * 0.5 + 5.0
  f = jax.jit(halve_then_add_five)
  f(np.arange(6, dtype=np.float32))
  assert background.wait_idle(120)
  assert _entry(f).pending.done()
  assert background.wait_idle(0)   # nothing queued: at once
