"""Several CPU devices: JAX's device API and strings, placement (committed
arrays, ``default_device``), one execution stream per device on a shared
worker pool, and 20 devices on 2 cores.

The number of devices is fixed when they are first listed, so each test runs
its program in a fresh interpreter with ``XLA_FLAGS`` or
``jax_num_cpu_devices`` set. Concurrency is tested deterministically: a held
stream (its next call waits on a timepoint the test signals) must not stop
another device's calls, and programs on different devices meet at a barrier
inside the compiled code (they can only pass it if all are in flight at
once).
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# JAX 0.10.2 with XLA_FLAGS=--xla_force_host_platform_device_count=4:
#   repr(jax.devices()), [str(d) for d in jax.devices()],
#   [(d.platform, d.device_kind, d.process_index, d.host_id, d.local_hardware_id, d.task_id)]
JAX_REPR_4 = "[CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2), CpuDevice(id=3)]"
JAX_STR_4 = ["cpu:0", "cpu:1", "cpu:2", "cpu:3"]
JAX_FIELDS_4 = [["cpu", "cpu", 0, 0, i, 0] for i in range(4)]
# d.client: (platform, platform_version, process_index(), device_count())
JAX_CLIENT_4 = ["cpu", "cpu", 0, 4]
# [(repr(m), str(m), m.kind) for m in jax.devices()[3].addressable_memories()]
JAX_MEMORIES_3 = [
    ["CPU_DEVICE_9", "CpuDeviceMemory(id=9, process_index=0, client=cpu)", "device"],
    ["PINNED_HOST_10", "PinnedHostMemory(id=10, process_index=0, client=cpu)", "pinned_host"],
    ["UNPINNED_HOST_11", "UnpinnedHostMemorySpace(id=11, process_index=0, client=cpu)",
     "unpinned_host"]]
# jax.devices()[0].memory("hbm")
JAX_MEMORY_ERROR = (
    "INVALID_ARGUMENT: Could not find memory addressable by device cpu. Device cpu can address "
    "the following memory kinds: device, pinned_host, unpinned_host. Got memory kind: hbm")
# jax.default_device(1)
JAX_DEFAULT_DEVICE_ERROR = (
    "jax.default_device must be passed either a Device object (e.g. `jax.devices('cpu')[0]`) "
    "or a platform name string like 'cpu' or 'gpu', got: 1")
# jax.jit(add)(x on device 2, y on device 3): the message's start
JAX_INCOMPATIBLE = "Received incompatible devices for jitted computation. Got argument"


def run(code: str, n: int | None = None, how: str = "xla_flags", compiled: bool = False,
        timeout: float = 240) -> str:
  """Run ``code`` (after ``import openjax as jax`` etc.) in a fresh
  interpreter with ``n`` CPU devices; returns its stdout."""
  env = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "JAX_NUM_CPU_DEVICES")}
  env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
  prelude = "import numpy as np\nimport openjax as jax\nimport openjax.numpy as jnp\n"
  if n is not None and how == "xla_flags":
    env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n}"
  elif n is not None:
    prelude += f"jax.config.update('jax_num_cpu_devices', {n})\n"
  if compiled:
    env["OPENJAX_EXECUTOR"] = "iree"
    env["OPENJAX_TIERED_COMPILATION"] = "0"
  out = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                       capture_output=True, text=True, env=env, timeout=timeout, cwd=ROOT)
  assert out.returncode == 0, out.stderr[-4000:]
  return out.stdout


LISTING = """
    import json
    ds = jax.devices()
    d = ds[-1]
    print(json.dumps(dict(
        repr=repr(ds), str=[str(x) for x in ds], ids=[x.id for x in ds],
        fields=[(x.platform, x.device_kind, x.process_index, x.host_id, x.local_hardware_id,
                 x.task_id) for x in ds],
        client=(d.client.platform, d.client.platform_version, d.client.process_index(),
                d.client.device_count()),
        counts=(jax.device_count(), jax.local_device_count(), jax.process_index(),
                jax.process_count()),
        local=repr(jax.local_devices()), cpu=repr(jax.devices("cpu")),
        same=(jax.devices()[-1] is d and jax.devices()[-1] == d
              and hash(jax.devices()[-1]) == hash(d)),
        distinct=len(set(ds)) == len(ds) and (len(ds) == 1 or ds[0] != ds[1]),
        other_process=jax.local_devices(process_index=1),
        backend=jax.default_backend(), stats=d.memory_stats(),
        memories=[(repr(m), str(m), m.kind) for m in d.addressable_memories()],
        default_memory=d.default_memory() is d.memory("device")
                       and d.memory("device").addressable_by_devices() == [d])))
"""


@pytest.mark.parametrize("how", ["xla_flags", "config"])
@pytest.mark.parametrize("n", [1, 2, 4, 8, 20])
def test_device_listing_matches_jax(n, how):
  got = json.loads(run(LISTING, n, how))
  assert got["repr"] == "[" + ", ".join(f"CpuDevice(id={i})" for i in range(n)) + "]"
  assert got["str"] == [f"cpu:{i}" for i in range(n)]
  assert got["ids"] == list(range(n))
  assert got["fields"] == [["cpu", "cpu", 0, 0, i, 0] for i in range(n)]
  assert got["client"] == ["cpu", "cpu", 0, n]
  assert got["counts"] == [n, n, 0, 1]
  assert got["local"] == got["cpu"] == got["repr"]
  assert got["same"] and got["distinct"]
  assert got["other_process"] == [] and got["backend"] == "cpu" and got["stats"] is None
  k = 3 * (n - 1)
  assert [m[0] for m in got["memories"]] == [f"CPU_DEVICE_{k}", f"PINNED_HOST_{k + 1}",
                                             f"UNPINNED_HOST_{k + 2}"]
  assert got["default_memory"]
  if n == 4:
    assert got["repr"] == JAX_REPR_4 and got["str"] == JAX_STR_4
    assert got["fields"] == JAX_FIELDS_4 and got["client"] == JAX_CLIENT_4
    assert got["memories"] == JAX_MEMORIES_3


def test_device_count_changes_keep_device_identity():
  # JAX refuses a change once devices are in use; openjax accepts it (one
  # process, a test suite, runs with several counts) and lists the same
  # Device objects again.
  out = run("""
      jax.config.update("jax_num_cpu_devices", 2)
      d0, d1 = jax.devices()
      jax.config.update("jax_num_cpu_devices", 3)
      assert len(jax.devices()) == 3 and jax.devices()[0] is d0 and jax.devices()[1] is d1
      x = jax.device_put(np.ones(2, np.float32), jax.devices()[2])
      assert (x + 1).devices() == {jax.devices()[2]}
      jax.config.update("jax_num_cpu_devices", -1)     # back to XLA_FLAGS: 4
      assert len(jax.devices()) == 4 and jax.devices()[1] is d1
      print("listed")
      try:
        jax.devices("gpu")
      except RuntimeError as e:
        print(e)
      try:
        jax.devices()[0].memory("hbm")
      except jax.errors.JaxRuntimeError as e:
        print(e)
  """, 4)
  first, second, third = out.strip().splitlines()
  assert first == "listed" and third == JAX_MEMORY_ERROR
  assert second == ("Unknown backend: 'gpu' requested, but no platforms that are instances of "
                    "gpu are present. Platforms present are: cpu")


@pytest.mark.parametrize("compiled", [False, True])
def test_default_device_places_eager_and_jitted_results(compiled):
  out = run("""
      d0, d1, d2, d3 = jax.devices()
      double = jax.jit(lambda x: x * 2)
      base = jnp.arange(3.0)
      with jax.default_device(d2):
        made = [jnp.ones(3), jnp.array([1, 2]), jnp.arange(3) + 1, base + 1,
                double(base), jax.device_put(np.ones(2)), jax.device_put(1.0)]
        for x in made:
          assert x.devices() == {d2}, (x, x.devices())
          assert x.device == d2 and x.sharding.device_set == {d2}
        assert double(base).tolist() == [0.0, 2.0, 4.0]
        with jax.default_device(d1):   # nests
          assert double(base).devices() == {d1}
        assert jnp.zeros(1).devices() == {d2}
      assert double(base).devices() == {d0} and (base + 1).devices() == {d0}
      jax.config.update("jax_default_device", d3)
      assert double(base).devices() == {d3} and jnp.ones(2).devices() == {d3}
      jax.config.update("jax_default_device", "cpu")   # a platform: its first device
      assert jnp.ones(2).devices() == {d0}
      jax.config.update("jax_default_device", None)
      try:
        with jax.default_device(1):
          pass
      except ValueError as e:
        print(e)
  """, 4, compiled=compiled)
  assert out.strip() == JAX_DEFAULT_DEVICE_ERROR


@pytest.mark.parametrize("compiled", [False, True])
def test_computation_placed_on_a_device_stays_there(compiled):
  out = run("""
      ds = jax.devices()
      f = jax.jit(lambda a, b: jnp.sin(a) * b + 1)
      host = np.linspace(0, 1, 6, dtype=np.float32)
      want = np.sin(host) * host + 1
      for d in ds:
        x = jax.device_put(host, d)
        assert x.devices() == {d}
        y = f(x, x)
        assert y.devices() == {d}, (d, y.devices())
        np.testing.assert_allclose(np.asarray(y), want, rtol=1e-6)
        assert (x * 2).devices() == {d} and jnp.sum(x).devices() == {d}
        assert f(x, jnp.ones(6)).devices() == {d}        # uncommitted input follows
        assert jax.jit(lambda a: jnp.zeros(2))(x).devices() == {d}   # output of no input
        if hasattr(y, "_buffer") and y._buffer is not None:   # compiled: ran on d's stream
          assert y._buffer.idev.device is d
      # moving a computed array between devices keeps its value
      y = f(jax.device_put(host, ds[1]), jax.device_put(host, ds[1]))
      z = jax.device_put(y, ds[3])
      assert z.devices() == {ds[3]} and y.devices() == {ds[1]}
      np.testing.assert_allclose(np.asarray(f(z, z)), np.sin(want) * want + 1, rtol=1e-6)
      assert f(z, z).devices() == {ds[3]}
      # an uncommitted array is placed by device_put even on the default device
      u = jnp.ones(2)
      assert jax.device_put(u, ds[0]).devices() == {ds[0]}
      try:
        f(jax.device_put(host, ds[2]), jax.device_put(host, ds[3]))
      except ValueError as e:
        print(e)
      try:
        jax.device_put(host, ds[2]) + jax.device_put(host, ds[3])
      except ValueError as e:
        print(e)
  """, 4, compiled=compiled)
  jit_error, eager_error = out.strip().splitlines()
  for msg in (jit_error, eager_error):
    assert msg.startswith(JAX_INCOMPATIBLE), msg
    assert "with shape float32[6] and with device ids [2] on platform CPU" in msg
    assert "with device ids [3] on platform CPU" in msg
  # jit names its arguments as JAX does (tests/test_sharding_errors_names.py
  # has JAX's whole texts)
  assert "argument a of " in jit_error and "argument b of " in jit_error


def test_streams_of_devices_are_independent():
  # Device 0's stream is held: its call stays pending while device 1's calls
  # run and finish; a value moved from device 0 to device 1 is read there
  # after device 0 computes it, with no wait in the dispatching thread.
  out = run("""
      from openjax._src.runtime.iree_device import iree_device
      d0, d1 = jax.devices()
      f = jax.jit(lambda a: jnp.sin(a) * 2 + 1)
      host = np.arange(8, dtype=np.float32)
      x0, x1 = jax.device_put(host, d0), jax.device_put(host, d1)
      f(x0).block_until_ready(); f(x1).block_until_ready()
      hold = iree_device(d0)._hold_for_testing()
      a = f(x0)
      b = f(x1)
      b.block_until_ready()
      assert not a.is_ready()
      moved = jax.device_put(a, d1)
      c = f(moved)
      assert moved.devices() == {d1} and c.devices() == {d1}
      assert not moved.is_ready() and not c.is_ready()
      hold.release()
      want = np.sin(host) * 2 + 1
      np.testing.assert_allclose(np.asarray(a), want, rtol=1e-6)
      np.testing.assert_allclose(np.asarray(b), want, rtol=1e-6)
      np.testing.assert_allclose(np.asarray(c), np.sin(want) * 2 + 1, rtol=1e-6)
      np.testing.assert_allclose(np.asarray(moved), want, rtol=1e-6)
      # a failure on device 0 is raised where its result is read, also from a
      # call on device 1 that read it; both devices run on afterwards
      hold = iree_device(d0)._hold_for_testing()
      bad = f(x0)
      downstream = f(jax.device_put(bad, d1))
      hold.fail("injected failure")
      for y in (bad, downstream):
        try:
          y.block_until_ready()
          print("no error")
        except Exception as e:
          print(type(e).__name__)
      np.testing.assert_allclose(np.asarray(f(x1)), want, rtol=1e-6)   # d1 recovers
      np.testing.assert_allclose(np.asarray(f(x0)), want, rtol=1e-6)   # d0 recovers
      print("ok")
  """, 2, compiled=True)
  assert out.split() == ["ExecutionError", "ExecutionError", "ok"]


BARRIER = """
    import threading
    import iree.runtime as rt
    from openjax._src.runtime.compiler import compile_module
    from openjax._src.runtime.iree_device import iree_device, vm_instance

    # A program that computes, then calls the host function probe.meet (the
    # async ABI passes it wait and signal fences), then computes again.
    TEXT = '''
    func.func private @probe.meet(tensor<4xf32>)
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = stablehlo.multiply %x, %x : tensor<4xf32>
      func.call @probe.meet(%y) : (tensor<4xf32>) -> ()
      %one = stablehlo.constant dense<1.0> : tensor<4xf32>
      %z = stablehlo.add %y, %one : tensor<4xf32>
      return %z : tensor<4xf32>
    }'''
    _, vmfb = compile_module(TEXT)
    ds = jax.devices()
    barrier = threading.Barrier(len(ds), timeout=60)

    class Probe:
      def __init__(self, iface):
        pass

      def meet(self, ref, wait, signal):
        wait.deref(rt.HalFence).wait()
        barrier.wait()        # passes only when every device's program is here
        signal.deref(rt.HalFence).signal()

    results, errors = {}, []

    def run_on(d):
      try:
        idev = iree_device(d)
        iface = rt.PyModuleInterface("probe", Probe)
        iface.export("meet", "0rrr_v", Probe.meet)
        module = rt.VmModule.copy_buffer(vm_instance(), vmfb)
        context = rt.VmContext(vm_instance(), modules=[idev.hal_module, iface.create(), module])
        args = rt.VmVariantList(3)
        args.push_ref(idev.copy_to_device(np.arange(4, dtype=np.float32) + d.id))
        out, signal = idev.invoke(context, module.lookup_function("main"), args, 1, 1, None)
        signal.wait()
        view = out.get_as_object(0, rt.HalBufferView)
        results[d.id] = view.map().asarray(view.shape, np.dtype(np.float32)).tolist()
      except Exception as e:  # noqa: BLE001 - reported below
        errors.append(repr(e))

    threads = [threading.Thread(target=run_on, args=(d,)) for d in ds]
    for t in threads:
      t.start()
    for t in threads:
      t.join()
    assert not errors, errors
    for d in ds:
      assert results[d.id] == [(i + d.id) ** 2 + 1.0 for i in range(4)], results
    print("ok")
"""


@pytest.mark.parametrize("n", [2, 20])
def test_programs_on_all_devices_are_in_flight_together(n):
  assert run(BARRIER, n).split() == ["ok"]


def test_twenty_devices_on_two_cores():
  # A small computation on each of 20 devices: dispatched to all, then
  # waited for. The worker pool is shared: the process's threads stay few.
  out = run("""
      import json, os, time
      def threads():
        names = [open(f"/proc/self/task/{t}/comm").read().strip()
                 for t in os.listdir("/proc/self/task")]
        return len(names), sum(n.startswith("iree-worker") for n in names)
      before = threads()
      ds = jax.devices()
      f = jax.jit(lambda a: jnp.tanh(a) @ a.T + 1.0)
      xs = [jax.device_put(np.full((64, 64), 0.01 * d.id, np.float32), d) for d in ds]
      f(xs[0]).block_until_ready()             # compiled once
      t0 = time.perf_counter()
      outs = [f(x) for x in xs]
      jax.block_until_ready(outs)
      elapsed = time.perf_counter() - t0
      for d, x, y in zip(ds, xs, outs):
        assert y.devices() == {d}
        h = np.asarray(x)
        np.testing.assert_allclose(np.asarray(y), np.tanh(h) @ h.T + 1.0, rtol=1e-5)
      total, workers = threads()
      print(json.dumps(dict(before=before, total=total, workers=workers, elapsed=elapsed,
                            cores=len(os.sched_getaffinity(0)))))
  """, 20, compiled=True)
  got = json.loads(out)
  cores = got["cores"]
  assert got["workers"] <= cores
  # the main thread, the background compiler, the workers, one proactor
  assert got["total"] <= got["before"][0] + cores + 4, got
  assert got["elapsed"] < 10.0, got


def test_import_and_eager_ops_start_no_device_threads():
  out = run("""
      import os
      def workers():
        return sum(open(f"/proc/self/task/{t}/comm").read().startswith("iree")
                   for t in os.listdir("/proc/self/task"))
      x = jnp.arange(4.0) * 2 + 1
      print(workers(), x.devices() == {jax.devices()[0]})
      jax.jit(lambda a: jnp.sin(a) @ jnp.ones((4, 4)))(x).block_until_ready()
      import time
      deadline = time.monotonic() + 10   # a worker names itself when it first runs
      while not workers() and time.monotonic() < deadline:
        time.sleep(0.05)
      print(workers() > 0)
  """, 8, compiled=True)
  assert out.split() == ["0", "True", "True"]


def test_transfer_to_copies_host_data_and_shares_device_buffers():
  out = run("""
      from openjax._src.core import Array
      from openjax._src.runtime.device_buffer import IreeBuffer, transfer_to
      d0, d1 = jax.devices()
      host = np.arange(6, dtype=np.float32)
      buf = transfer_to(d1, host)
      host[:] = -1                     # copied: later changes are not seen
      x = Array(None, jnp.zeros(6).aval, d1, buf)
      assert x.devices() == {d1} and np.asarray(x).tolist() == list(range(6))
      y = jax.jit(lambda a: a * 3)(x)
      assert y.devices() == {d1} and np.asarray(y).tolist() == [3.0 * i for i in range(6)]
      moved = transfer_to(d0, y._buffer)
      assert isinstance(moved, IreeBuffer) and moved.view is y._buffer.view
      assert moved.shared and y._buffer.shared      # never donated in place
      z = Array(None, y.aval, d0, moved)
      assert np.asarray(jax.jit(lambda a: a + 1)(z)).tolist() == [3.0 * i + 1 for i in range(6)]
      print("ok")
  """, 2, compiled=True)
  assert out.split() == ["ok"]


def test_threads_dispatching_to_their_own_devices():
  # One thread per device, each running jitted and eager code on its device
  # (the pattern a per-device program loop uses): values and placement hold.
  out = run("""
      import threading
      ds = jax.devices()
      f = jax.jit(lambda a, b: jnp.tanh(a @ b) + 1.0)
      errors = []

      def work(d):
        try:
          x = jax.device_put(np.eye(16, dtype=np.float32) * (d.id + 1), d)
          y = x
          for _ in range(30):
            y = f(y, x) * 0.5
          z = (y - 1).sum()
          assert y.devices() == {d} and z.devices() == {d}
          want = np.eye(16, dtype=np.float32) * (d.id + 1)
          h = want
          for _ in range(30):
            h = (np.tanh(h @ want) + 1.0) * 0.5
          np.testing.assert_allclose(np.asarray(y), h, rtol=1e-5, atol=1e-6)
        except Exception as e:  # noqa: BLE001 - reported below
          errors.append(f"{d}: {e!r}")

      threads = [threading.Thread(target=work, args=(d,)) for d in ds]
      for t in threads:
        t.start()
      for t in threads:
        t.join()
      assert not errors, errors
      print("ok")
  """, 8, compiled=True)
  assert out.split() == ["ok"]


def test_jit_device_argument_places_the_computation():
  # Deprecated in JAX 0.10.2 but honoured (warning and all), never ignored.
  out = run("""
      import warnings
      d0, d1, d2, d3 = jax.devices()
      with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = jax.jit(lambda a: a * 2, device=d2)
        g = jax.jit(lambda n, a: a * n, static_argnums=0, backend="cpu")
      assert [w.category for w in caught] == [DeprecationWarning] * 2
      print(caught[0].message)
      y = f(jnp.ones(3))
      assert y.devices() == {d2} and y.committed and y.tolist() == [2.0] * 3
      assert f(jax.device_put(np.ones(3, np.float32), d1)).devices() == {d2}
      z = g(3, jnp.ones(2))
      assert z.devices() == {d0} and z.committed and z.tolist() == [3.0, 3.0]
      assert jax.grad(lambda a: f(a).sum())(jnp.ones(2)).tolist() == [2.0, 2.0]
  """, 4)
  assert out.strip() == (
      "backend and device argument on jit is deprecated. You can use `jax.device_put(..., "
      'jax.local_devices(backend="cpu")[0])` on the inputs to the jitted function to get the '
      "same behavior.")
