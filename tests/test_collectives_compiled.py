"""Collectives in compiled per-device programs: with the ``iree`` executor
each device runs its program compiled, split at the collectives, which meet
the other devices through the rendezvous in ``runtime/collectives``. Every
collective over 1, 2, 4 and 8 devices against NumPy, programs whose
collectives sit inside a jitted function or a loop, and the failure paths:
a device whose program fails makes every participant raise (no hang), and a
peer that never arrives raises after the deadline."""
import threading
import time

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.control import shard_map, shard_map_plan
from openjax._src.runtime.collectives import CollectiveError, MeshRendezvous
from tests.test_pmap import CASES, _bcast, _cases, cpu_devices


@pytest.fixture
def compiled():
  jax.config.update("openjax_executor", "iree")
  try:
    yield
  finally:
    jax.config.update("openjax_executor", "interpreter")


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_every_collective_compiled(compiled, n):
  with cpu_devices(n):
    for case in CASES:
      f, x, ref = _cases(n)[case]
      # compiled work before and after the collective
      out = jax.pmap(lambda v: f(v + v) + 1, axis_name="i")(x)
      expected = ref(x + x) + 1
      np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5,
                                 err_msg=case)


def test_segments_are_compiled_calls(compiled):
  # The program splits at its collective: two compiled calls per device.
  with cpu_devices(2):
    f = jax.pmap(lambda v: jnp.exp(lax.psum(jnp.sin(v), "i")) + 1, axis_name="i")
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(np.asarray(f(x)), _bcast(np.exp(np.sin(x).sum(0)) + 1, 2),
                               rtol=1e-5)
    plans = [p for p in list(shard_map_plan.plans.values())]
    kinds = [[s[0] for s in p.steps] for p in plans]
    assert ["call", "allreduce", "call"] in kinds
    # a pytree's psums meet the other devices once
    g = jax.pmap(lambda v: lax.psum((v * 2, v + 1, jnp.sin(v)), "i"), axis_name="i")
    a, b, c = g(x)
    np.testing.assert_allclose(np.asarray(c), _bcast(np.sin(x).sum(0), 2), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(b), _bcast((x + 1).sum(0), 2), rtol=1e-5)
    steps = [s for p in list(shard_map_plan.plans.values()) for s in p.steps
             if s[0] == "allreduce"]
    assert max(len(s[3]) for s in steps) == 3


def test_collective_inside_jit_and_loop_compiled(compiled):
  with cpu_devices(2):
    inner = jax.jit(lambda v: lax.psum(v * 2, "i"))

    def body(v):
      def step(c, _):
        return lax.pmax(c + v, "i"), None
      c, _ = lax.scan(step, v, None, length=3)
      return inner(v) + c
    x = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    out = jax.pmap(body, axis_name="i")(x)
    c = x.copy()
    for _ in range(3):
      c = np.broadcast_to((c + x).max(0), x.shape)
    np.testing.assert_allclose(np.asarray(out), _bcast(2 * x.sum(0), 2) + c, rtol=1e-6)


def test_train_step_compiled_matches_interpreted():
  def step(w, x):
    g = jax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w)
    return w - 0.1 * lax.pmean(g, "d")
  with cpu_devices(2):
    w = np.ones((2, 4, 3), np.float32) * 0.1
    x = np.random.default_rng(0).standard_normal((2, 5, 4)).astype(np.float32)
    f = jax.pmap(step, axis_name="d")
    interpreted = np.asarray(f(w, x))
    jax.config.update("openjax_executor", "iree")
    try:
      got = np.asarray(jax.pmap(step, axis_name="d")(w, x))
    finally:
      jax.config.update("openjax_executor", "interpreter")
    np.testing.assert_allclose(got, interpreted, rtol=1e-5, atol=1e-6)


def test_failing_device_raises_everywhere_without_hanging(monkeypatch):
  # Device 1's program fails before the psum; device 0, waiting there, must
  # raise at once (the run is aborted), and the caller sees device 1's error.
  real = shard_map._device_runner
  waited = {}

  def runner(closed, device):
    run = real(closed, device)
    if device.id == 1:
      def fail(args):
        time.sleep(0.05)
        raise FloatingPointError("device 1 failed")
      return fail

    def timed(args):
      t0 = time.monotonic()
      try:
        return run(args)
      finally:
        waited[device.id] = time.monotonic() - t0
    return timed
  monkeypatch.setattr(shard_map, "_device_runner", runner)
  with cpu_devices(2):
    with pytest.raises(FloatingPointError, match="device 1 failed"):
      jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(np.zeros((2, 3), np.float32))
  assert waited[0] < 5.0


def test_rendezvous_abort_and_deadline():
  r = MeshRendezvous({"i": 2}, timeout_s=0.2)
  t0 = time.monotonic()
  with pytest.raises(CollectiveError, match="did not arrive within 0.2 s"):
    r.exchange({"i": 0}, ("i",), 1, "psum")
  assert time.monotonic() - t0 < 2.0
  # an abort wakes a waiting member with the failing device's error
  r = MeshRendezvous({"i": 2}, timeout_s=60)
  errors = []

  def wait():
    try:
      r.exchange({"i": 0}, ("i",), 1, "all_gather")
    except CollectiveError as e:
      errors.append(str(e))
  t = threading.Thread(target=wait)
  t.start()
  time.sleep(0.05)
  r.abort("TFRT_CPU_1", ValueError("boom"))
  t.join(5)
  assert not t.is_alive()
  assert errors and "all_gather: the program on TFRT_CPU_1 failed" in errors[0]
  assert "ValueError: boom" in errors[0]


def test_rendezvous_groups_over_two_axes():
  r = MeshRendezvous({"x": 2, "y": 2})
  results = {}

  def member(cx, cy):
    coords = {"x": cx, "y": cy}
    m = r.member(coords, f"d{cx}{cy}")
    results[(cx, cy)] = (m.exchange(("y",), 10 * cx + cy, "psum"),
                         m.exchange(("x", "y"), 10 * cx + cy, "psum"),
                         m.exchange(("x",), 10 * cx + cy, "psum"))
  threads = [threading.Thread(target=member, args=(a, b)) for a in (0, 1) for b in (0, 1)]
  for t in threads:
    t.start()
  for t in threads:
    t.join(5)
  assert results[(1, 0)] == ([10, 11], [0, 1, 10, 11], [0, 10])
  assert results[(0, 1)] == ([0, 1], [0, 1, 10, 11], [1, 11])


def test_axis_index_groups_compiled(compiled):
  with cpu_devices(4):
    x = _cases(4)["psum"][1]
    groups = [[0, 2], [1, 3]]
    out = jax.pmap(lambda v: lax.psum(v * 2, "i", axis_index_groups=groups) + 1,
                   axis_name="i")(x)
    ref = 2 * np.stack([x[0] + x[2], x[1] + x[3], x[0] + x[2], x[1] + x[3]]) + 1
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-5)
    g = jax.pmap(lambda v: lax.all_gather(v, "i", axis_index_groups=groups), axis_name="i")
    np.testing.assert_allclose(np.asarray(g(x))[1], np.stack([x[1], x[3]]), rtol=1e-6)


@pytest.mark.parametrize("executor", ["interpreter", "iree"])
def test_callback_failing_on_one_device_raises_without_hanging(executor):
  # Device 1's program fails (its host callback raises) before the psum that
  # device 0 waits in: the call raises device 1's error, promptly.
  def check(i):
    if int(i) == 1:
      raise RuntimeError("device 1 failed")
    return np.float32(0)

  def body(v):
    bad = jax.pure_callback(check, jax.ShapeDtypeStruct((), np.float32), lax.axis_index("i"))
    return lax.psum(v + bad, "i")
  jax.config.update("openjax_executor", executor)
  try:
    with cpu_devices(2):
      t0 = time.monotonic()
      with pytest.raises(RuntimeError, match="device 1 failed"):
        jax.block_until_ready(jax.pmap(body, axis_name="i")(np.zeros((2, 2), np.float32)))
      assert time.monotonic() - t0 < 60
  finally:
    jax.config.update("openjax_executor", "interpreter")
