"""Asynchronous dispatch: compiled calls return Arrays before their work is
done; reading a value, ``block_until_ready`` or ``jax.block_until_ready``
waits, and an execution error is raised there; calls on a device run in
order. Determinism comes from holding the device timeline: the next call
waits on a timepoint the test signals (or fails) itself."""
import pathlib
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import openjax as jax
from openjax import lax
from openjax._src.runtime.iree_device import ExecutionError, iree_device
from tests.test_compiler import add, iree_executor, mul, sin

f32 = np.float32


@pytest.fixture(autouse=True, scope="module")
def _iree(tmp_path_factory):
  with iree_executor(tmp_path_factory.getbasetemp() / "openjax_cache"):
    yield


def _hold():
  return iree_device(jax.devices()[0])._hold_for_testing()


square = jax.jit(lambda x: mul(x, x))


def test_results_are_returned_before_the_work_is_done():
  x = np.arange(4, dtype=f32)
  square(x).block_until_ready()         # compiled and loaded
  hold = _hold()
  out = square(x)
  assert isinstance(out, jax.Array)
  assert out.shape == (4,) and out.dtype == f32   # metadata needs no wait
  assert not out.is_ready()
  hold.release()
  assert out.block_until_ready() is out
  assert out.is_ready()
  np.testing.assert_array_equal(np.asarray(out), x * x)


def test_execution_error_is_raised_at_the_sync_point():
  x = np.arange(3, dtype=f32)
  square(x).block_until_ready()
  hold = _hold()
  a = square(x)
  b = square(a)
  hold.fail("injected failure")
  with pytest.raises(ExecutionError, match="injected failure"):
    np.asarray(a)
  with pytest.raises(ExecutionError, match="injected failure"):
    b.block_until_ready()
  with pytest.raises(ExecutionError):
    jax.block_until_ready({"b": b})
  # the device recovers: later calls run normally
  np.testing.assert_array_equal(np.asarray(square(x)), x * x)


def test_block_until_ready_on_pytrees():
  x = np.arange(3, dtype=f32)
  square(x).block_until_ready()
  hold = _hold()
  tree = {"a": square(x), "b": [square(x), None, 3.0], "c": (np.ones(2),)}
  assert not tree["a"].is_ready()
  threading.Timer(0.05, hold.release).start()
  assert jax.block_until_ready(tree) is tree
  assert tree["a"].is_ready() and tree["b"][0].is_ready()


def test_block_until_ready_of_one_array(monkeypatch):
  # One Array skips the tree walk (the common call in timing loops) but still
  # waits, returns the Array itself and raises its computation's error.
  from openjax._src import tree_util
  x = np.arange(3, dtype=f32)
  square(x).block_until_ready()
  monkeypatch.setattr(tree_util, "tree_leaves", lambda *a, **k: pytest.fail("tree walk"))
  hold = _hold()
  out = square(x)
  assert not out.is_ready()
  threading.Timer(0.05, hold.release).start()
  assert jax.block_until_ready(out) is out and out.is_ready()
  hold = _hold()
  bad = square(x)
  hold.fail("injected failure")
  with pytest.raises(ExecutionError, match="injected failure"):
    jax.block_until_ready(bad)
  monkeypatch.undo()
  np.testing.assert_array_equal(np.asarray(square(x)), x * x)


def test_reading_values_waits():
  x = np.arange(3, dtype=f32) + 1
  square(x).block_until_ready()
  for read in (np.asarray, lambda a: a.tolist(), repr, str, lambda a: float(a[0]),
               lambda a: a[1].item()):
    hold = _hold()
    out = square(x)
    threading.Timer(0.02, hold.release).start()
    read(out)
    assert out.is_ready()


def test_calls_run_in_order():
  inc = jax.jit(lambda v, one: add(v, one))
  one = jax.device_put(np.ones(4, f32))
  y = jax.device_put(np.zeros(4, f32))
  for _ in range(100):
    y = inc(y, one)      # each call consumes the previous result, never synced
  np.testing.assert_array_equal(np.asarray(y), np.full(4, 100, f32))
  outs = [jax.jit(lambda v: add(v, v))(np.full(2, i, f32)) for i in range(50)]
  assert [float(o[0]) for o in outs] == [2.0 * i for i in range(50)]


def test_eager_operations_read_pending_results():
  hold = _hold()
  out = square(np.arange(3, dtype=f32))
  threading.Timer(0.02, hold.release).start()
  np.testing.assert_array_equal(np.asarray(lax.add(out, 1.0)), [1, 2, 5])


def _in_threads(work, n: int) -> None:
  """``work(i)`` for i < n, each in a thread of its own, all joined."""
  ts = [threading.Thread(target=work, args=(i,)) for i in range(n)]
  for t in ts:
    t.start()
  for t in ts:
    t.join()


def test_threads_dispatching_and_reading():
  f = jax.jit(lambda x: sin(x))
  errors = []

  def work(i):
    try:
      v = np.full(5, i, f32)
      outs = [f(v) for _ in range(20)]
      for o in outs:
        np.testing.assert_allclose(np.asarray(o), np.sin(v), rtol=1e-6)
    except Exception as e:  # noqa: BLE001
      errors.append(e)
  _in_threads(work, 4)
  assert not errors


def test_threads_on_the_inline_fast_path():
  # Device Arrays into a compiled tiny program: the inline fast path, whose
  # result list the executable reuses under the device's inline lock.
  f = jax.jit(lambda x, y: add(mul(x, y), y))
  errors = []
  ready = f(np.ones(3, f32), np.ones(3, f32))
  ready.block_until_ready()

  def work(i):
    try:
      x = f(np.full(3, i, f32), np.ones(3, f32))        # (i + 1), on the device
      x.block_until_ready()
      for _ in range(300):
        out = f(x, x)
        np.testing.assert_array_equal(np.asarray(out), np.full(3, (i + 1) * (i + 2), f32))
    except Exception as e:  # noqa: BLE001
      errors.append(e)
  _in_threads(work, 4)
  assert not errors
  runners = [runner for runner, _ in f._fast.values()]
  assert any(getattr(r, "_fast_inline", None) is not None for r in runners), \
      "the calls did not take the inline fast path"


def test_exit_with_work_in_flight(tmp_path):
  script = textwrap.dedent(f"""
      import numpy as np, openjax as jax
      from tests.test_compiler import mul, iree_executor
      with iree_executor({str(tmp_path)!r}):
        f = jax.jit(lambda x: mul(x, x))
        x = f(np.ones(100000, np.float32))
        for _ in range(200):
          x = f(x)        # never synchronised
  """)
  r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                     timeout=300, cwd=str(pathlib.Path(__file__).resolve().parent.parent))
  assert r.returncode == 0, r.stderr
  assert r.stderr == ""


@pytest.mark.parametrize("case", ["no_inputs", "constant_result", "unused_input_zeros"])
def test_programs_reading_no_input_keep_the_timeline_in_order(case):
  # IREE compiles a program none of whose results reads an input to ignore
  # its wait fence and signal once its own work is done: on the device's
  # timeline it signalled t + 1 before the held call signalled t ("semaphore
  # already signaled past t") and calls after it started early.
  x = np.arange(4, dtype=f32)
  detached = {"no_inputs": jax.jit(lambda: lax.iota(np.float32, 4) * 2.0),
              "constant_result": jax.jit(lambda x: np.arange(4, dtype=f32) + 1.0),
              "unused_input_zeros": jax.jit(lambda x: lax.full((3,), 7.0))}[case]
  args = () if case == "no_inputs" else (x,)
  expected = np.asarray(detached(*args))
  square(x).block_until_ready()
  hold = _hold()
  first = square(x)
  middle = detached(*args)
  last = square(first)
  np.testing.assert_array_equal(np.asarray(middle), expected)   # needs no earlier call
  assert not first.is_ready() and not last.is_ready()
  hold.release()
  np.testing.assert_array_equal(np.asarray(last), (x * x) ** 2)
  np.testing.assert_array_equal(np.asarray(first), x * x)
  # the timeline is healthy: later calls run in order
  for _ in range(3):
    np.testing.assert_array_equal(np.asarray(square(detached(*args))), expected * expected)
